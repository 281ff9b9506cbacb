//! `SessionFile::values_for`: the batch JSON read agrees with the typed path (`entry` then
//! `serde_json::to_value`) on every fixture and corpus file, from memory and from disk, in any
//! order; keys keep the file's order except in migrated files, which come out exactly as typed.

use crate::common::{corpus_dir, invalid_fixtures_dir, jsonl_files};
use pi_session_store::{OpenOptions, SessionFile, StoreError, open, open_with};
use pi_session_types::JsonValue;
use std::path::{Path, PathBuf};

/// Every `*.jsonl` under the workspace's fixtures, plus the corpus when present.
fn session_files() -> Vec<PathBuf> {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files = Vec::new();
    for dir in ["omp", "pi", "pi16", "context", "ours/pi"] {
        files.extend(jsonl_files(&fixtures.join(dir)));
    }
    files.extend(jsonl_files(&invalid_fixtures_dir()));
    if let Some(dir) = corpus_dir() {
        files.extend(jsonl_files(&dir));
    }
    files
}

/// Forces the re-read-by-offset source even for small files.
fn open_from_disk(path: &Path) -> SessionFile {
    let options = OpenOptions {
        keep_in_memory_up_to: 0,
        ..OpenOptions::default()
    };
    open_with(path, &options).unwrap().0
}

fn text(value: &JsonValue) -> String {
    serde_json::to_string(value).unwrap()
}

/// The line as `JSON.parse` reads it (repairs as the store's own `entry` does).
fn as_written(session: &SessionFile, index: usize) -> JsonValue {
    let raw = session.raw(index).unwrap();
    let lossy = String::from_utf8_lossy(&raw);
    serde_json::from_str(&pi_session_types::line::replace_lone_surrogate_escapes(
        &lossy,
    ))
    .unwrap()
}

/// Compares every entry of `session`; `reorder` also reads them in reverse with repeats.
fn check_file(path: &Path, session: &SessionFile, reorder: bool) -> usize {
    let all: Vec<usize> = (0..session.len()).collect();
    let typed: Vec<JsonValue> = all
        .iter()
        .map(|&i| serde_json::to_value(session.entry(i).unwrap()).unwrap())
        .collect();
    let values = session.values_for(&all).unwrap();
    assert_eq!(values.len(), all.len());
    for (index, (value, typed)) in values.iter().zip(&typed).enumerate() {
        let at = format!("{} entry {index}", path.display());
        assert_eq!(
            value, typed,
            "{at}: same keys and values as the typed entry"
        );
        if session.is_migrated() {
            assert_eq!(
                text(value),
                text(typed),
                "{at}: migrated entries exactly as typed"
            );
        } else {
            assert_eq!(
                text(value),
                text(&as_written(session, index)),
                "{at}: keys in file order"
            );
        }
    }
    if !reorder {
        return all.len();
    }
    // Any order, with repeats: each slot gets its own entry.
    let mut shuffled: Vec<usize> = all.iter().rev().copied().collect();
    shuffled.extend(all.iter().step_by(3));
    let again = session.values_for(&shuffled).unwrap();
    for (slot, &index) in shuffled.iter().enumerate() {
        assert_eq!(
            text(&again[slot]),
            text(&values[index]),
            "{}",
            path.display()
        );
    }
    all.len()
}

#[test]
fn values_for_agrees_with_the_typed_entries_from_memory_and_from_disk() {
    let files = session_files();
    assert!(files.len() > 100, "fixtures found: {}", files.len());
    let (mut entries, mut migrated) = (0, 0);
    for path in &files {
        let (in_memory, _) = open(path).unwrap();
        // Large files once only: debug builds are slow.
        let small = std::fs::metadata(path).unwrap().len() < 1 << 20;
        entries += check_file(path, &in_memory, small);
        if small {
            entries += check_file(path, &open_from_disk(path), true);
        }
        migrated += usize::from(in_memory.is_migrated());
    }
    assert!(migrated >= 2, "v1 and v2 fixtures are among the files");
    println!(
        "values_for: {} files, {entries} entries compared",
        files.len()
    );
}

#[test]
fn values_for_keeps_the_file_key_order_that_typing_would_change() {
    let line = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","timestamp":1,"steering":true}}"#;
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let (session, _) = pi_session_store::open_bytes(format!("{header}\n{line}\n").into_bytes());
    let value = session.values_for(&[0]).unwrap().remove(0);
    assert_eq!(text(&value), line);
    let typed = serde_json::to_value(session.entry(0).unwrap()).unwrap();
    assert_eq!(value, typed, "only the key order differs");
    assert_ne!(text(&typed), line, "typing writes the schema's key order");
}

#[test]
fn values_for_repairs_lone_surrogates_and_bad_utf8_like_entry() {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let mut bytes = format!("{header}\n").into_bytes();
    bytes.extend_from_slice(br#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"\ud83d!"}"#);
    bytes.push(b'\n');
    bytes.extend_from_slice(br#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"caf"#);
    bytes.extend_from_slice(&[0xE9, b'"', b'}', b'\n']);
    let (session, _) = pi_session_store::open_bytes(bytes);
    assert_eq!(session.len(), 2);
    let values = session.values_for(&[0, 1]).unwrap();
    // The lone surrogate is carried (U+D83D as U+10F83D) and written back as it was.
    assert_eq!(values[0]["label"], "\u{10F83D}!");
    assert_eq!(
        pi_session_types::to_js_string(&values[0]).unwrap(),
        r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"\ud83d!"}"#
    );
    assert_eq!(values[1]["label"], "caf\u{fffd}");
    for (index, value) in values.iter().enumerate() {
        let typed = serde_json::to_value(session.entry(index).unwrap()).unwrap();
        assert_eq!(text(value), text(&typed));
    }
}

#[test]
fn values_for_reports_a_missing_index_and_a_rewritten_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let label = |id: &str| {
        format!(
            r#"{{"type":"label","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"l"}}"#
        )
    };
    std::fs::write(
        &path,
        format!("{header}\n{}\n{}\n", label("aaaa"), label("bbbb")),
    )
    .unwrap();
    let session = open_from_disk(&path);
    assert!(matches!(
        session.values_for(&[0, 7]),
        Err(StoreError::NoSuchEntry { index: 7, len: 2 })
    ));
    // Same length, different id: the line no longer holds the indexed entry.
    std::fs::write(
        &path,
        format!("{header}\n{}\n{}\n", label("aaaa"), label("cccc")),
    )
    .unwrap();
    assert!(matches!(
        session.values_for(&[1]),
        Err(StoreError::Changed { line: 3, .. })
    ));
    // Shorter: the range is past the end of the file.
    std::fs::write(&path, format!("{header}\n")).unwrap();
    assert!(matches!(
        session.values_for(&[0]),
        Err(StoreError::Changed { line: 2, .. })
    ));
}

#[test]
fn a_batch_large_enough_for_threads_gives_the_same_values_and_the_first_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let label = |n: usize, tag: char| {
        let text: String = std::iter::repeat_n(tag, 2000).collect();
        format!(
            r#"{{"type":"label","id":"{n:08}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","label":"{text}","targetId":"x"}}"#
        )
    };
    let write = |tag_of: &dyn Fn(usize) -> char| {
        let mut text = format!("{header}\n");
        for n in 0..3000 {
            text.push_str(&label(n, tag_of(n)));
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
    };
    write(&|_| 'a');
    let session = open_from_disk(&path);
    let all: Vec<usize> = (0..session.len()).collect();
    let values = session.values_for(&all).unwrap();
    assert_eq!(values.len(), 3000);
    for (index, value) in values.iter().enumerate() {
        assert_eq!(text(value), label(index, 'a'), "entry {index}");
    }
    let reversed: Vec<usize> = all.iter().rev().copied().collect();
    let again = session.values_for(&reversed).unwrap();
    assert_eq!(text(&again[0]), label(2999, 'a'));
    // Two lines rewritten in place (same length, other ids): the error names the earlier line,
    // whichever worker reads it.
    let mut bytes = std::fs::read(&path).unwrap();
    for n in [2500usize, 700] {
        let id = format!(r#""id":"{n:08}""#);
        let at = memchr::memmem::find(&bytes, id.as_bytes()).unwrap();
        bytes[at + 6] = b'x';
    }
    std::fs::write(&path, bytes).unwrap();
    assert!(matches!(
        session.values_for(&reversed),
        Err(StoreError::Changed { line: 702, .. })
    ));
}

#[test]
fn code_points_of_the_carrier_range_are_reported_not_silently_changed() {
    // U+10FFFD (raw) and U+10F800 (as an escaped pair) are what lone surrogates are carried as:
    // once read they cannot be told apart, so open says so (a warning) on that line.
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let raw = "{\"type\":\"label\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"targetId\":\"x\",\"label\":\"\u{10FFFD}\"}";
    let escaped = r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"\udbfe\udc00"}"#;
    let lone = r#"{"type":"label","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"\udc00"}"#;
    let (session, diagnostics) =
        pi_session_store::open_bytes(format!("{header}\n{raw}\n{escaped}\n{lone}\n").into_bytes());
    assert_eq!(session.len(), 3);
    let found: Vec<_> = diagnostics
        .iter()
        .map(|d| (d.line, d.kind.name(), d.severity()))
        .collect();
    use pi_session_store::Severity::{Info, Warning};
    assert_eq!(
        found,
        [
            (2, "ambiguous_private_use", Warning),
            (3, "ambiguous_private_use", Warning),
            (4, "lone_surrogate", Info),
        ]
    );
}

/// A session that keeps its file open reads its lines through that handle: the file renamed
/// away after the call, the lines are still read (and the same as before); one that does not
/// keep it opens the path for each batch, and finds nothing there.
#[test]
fn a_kept_file_is_read_through_its_handle_not_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let label = r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"one"}"#;
    std::fs::write(&path, format!("{header}\n{label}\n")).unwrap();
    let session = open_from_disk(&path);
    let mut kept = session.clone();
    kept.keep_open().unwrap();
    let lines = |session: &SessionFile| session.map_raw(&[0], |_, _, raw| raw.to_vec());
    assert_eq!(lines(&kept).unwrap(), [label.as_bytes()]);
    std::fs::rename(&path, dir.path().join("moved.jsonl")).unwrap();
    assert_eq!(lines(&kept).unwrap(), [label.as_bytes()]);
    assert!(matches!(lines(&session), Err(StoreError::Io { .. })));
    // An entry read alone goes through the handle too.
    assert_eq!(kept.raw(0).unwrap(), label.as_bytes());
    assert_eq!(kept.entry(0).unwrap().id(), Some("a"));
    assert!(matches!(session.raw(0), Err(StoreError::Io { .. })));
}
