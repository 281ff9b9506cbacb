//! Helpers shared by the test modules.

pub use pi_session_test_support::{jsonl_files, workspace_root};

/// The real-session corpus directory, `None` (with a printed notice) when absent.
pub fn corpus_dir() -> Option<std::path::PathBuf> {
    pi_session_test_support::corpus_dir("real")
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
/// surrogate U+D800+k becomes its carrier U+10F800+k (an oracle independent of the crate's own
/// repair).
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
                let c = c.unwrap_or_else(|e| {
                    char::from_u32(0x10_F800 + u32::from(e.unpaired_surrogate()) - 0xD800).unwrap()
                });
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
