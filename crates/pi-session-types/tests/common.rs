//! Helpers shared by the test modules.

use std::path::{Path, PathBuf};

/// The workspace root (two levels above this crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The real-session corpus directory, `None` (with a printed notice) when absent.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = workspace_root().join("../shared/corpus/real");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "NOTICE: corpus {} absent; corpus checks skipped",
            dir.display()
        );
        None
    }
}

/// Every `*.jsonl` file under `dir`, recursively, sorted.
pub fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&d) else {
            continue;
        };
        for item in read.flatten() {
            let path = item.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The physical lines of a file's bytes (split on `\n`; a final empty piece is dropped).
pub fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let mut pieces: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    if pieces.last().is_some_and(|l| l.is_empty()) {
        pieces.pop();
    }
    pieces
}

/// Rewrites every run of `\uXXXX` escapes through std's UTF-16 decoder, so unpaired
/// surrogates become U+FFFD (an oracle independent of the crate's own repair).
pub fn decode_surrogates_independently(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'u') {
            let mut units = Vec::new();
            while bytes.get(i) == Some(&b'\\') && bytes.get(i + 1) == Some(&b'u') {
                units.push(u16::from_str_radix(&text[i + 2..i + 6], 16).unwrap());
                i += 6;
            }
            for c in char::decode_utf16(units) {
                let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                match c {
                    '"' | '\\' => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                    c => out.push(c),
                }
            }
        } else if bytes[i] == b'\\' {
            out.push_str(&text[i..i + 2]);
            i += 2;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}
