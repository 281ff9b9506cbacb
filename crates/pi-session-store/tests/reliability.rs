//! Reliability under crashes and concurrency: a new file never appears without its header,
//! a closed writer leaves nothing behind, writers wait for each other and catch up on what
//! others appended.

use crate::common::entry;
use pi_session_store::{
    SessionWriter, StoreError, WriterOptions, lock_path, new_header, open, publish_lock_path,
};
use serde_json::json;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Sets its flag when dropped, also while unwinding.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// A reader polls the folder while sessions are created in it: every session file it ever
/// sees already holds its header and first entry (a crash at any moment leaves no less).
#[test]
fn a_new_session_file_never_appears_without_its_header() {
    const SESSIONS: usize = 1_500;
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let (seen, headerless) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let (mut seen, mut headerless) = (0usize, Vec::new());
            while !stop.load(Ordering::Relaxed) {
                for item in std::fs::read_dir(dir.path()).unwrap() {
                    let path = item.unwrap().path();
                    if path.extension().is_none_or(|e| e != "jsonl") {
                        continue;
                    }
                    if let Ok(bytes) = std::fs::read(&path) {
                        seen += 1;
                        if !bytes.starts_with(br#"{"type":"session""#) || !bytes.ends_with(b"\n") {
                            headerless.push(bytes.len());
                        }
                    }
                }
            }
            (seen, headerless)
        });
        // Stops the reader however the writing ends: a panic below would otherwise leave the
        // scope waiting for the reader forever (a hang instead of the failure).
        let _stop_reader = StopOnDrop(&stop);
        for i in 0..SESSIONS {
            let path = dir.path().join(format!("s{i}.jsonl"));
            let mut writer =
                SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
            writer.append(entry("label", &[])).unwrap();
            if i % 100 == 99 {
                // Keep the folder small so the reader looks at new files often.
                for old in i - 99..=i {
                    std::fs::remove_file(dir.path().join(format!("s{old}.jsonl"))).unwrap();
                }
            }
        }
        drop(_stop_reader);
        reader.join().unwrap()
    });
    assert!(seen > 0, "the reader never saw a session");
    assert!(
        headerless.is_empty(),
        "{} of {seen} reads saw a file without its header (sizes {:?})",
        headerless.len(),
        &headerless[..headerless.len().min(10)]
    );
}

#[test]
fn a_failed_create_leaves_the_existing_file_alone_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, b"theirs\n").unwrap();
    let mut writer = SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
    assert!(matches!(
        writer.append(entry("label", &[])),
        Err(StoreError::AlreadyExists { .. })
    ));
    drop(writer);
    assert_eq!(std::fs::read(&path).unwrap(), b"theirs\n");
    assert_eq!(folder(dir.path()), ["s.jsonl"]);
}

/// Names in a folder, sorted.
fn folder(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_closed_writer_leaves_no_lock_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut writer = SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
    writer.append(entry("label", &[])).unwrap();
    assert!(lock_path(&path).exists(), "held while the writer is open");
    drop(writer);
    assert_eq!(folder(dir.path()), ["s.jsonl"]);

    let (mut resumed, _, _) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    resumed.append(entry("label", &[])).unwrap();
    drop(resumed);
    assert_eq!(folder(dir.path()), ["s.jsonl"]);

    // A sidecar left by a crashed writer is taken over, and removed on close.
    std::fs::write(lock_path(&path), b"").unwrap();
    let (mut resumed, _, _) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    resumed.append(entry("label", &[])).unwrap();
    drop(resumed);
    assert_eq!(folder(dir.path()), ["s.jsonl"]);
}

/// The session that `writers` writers, each appending `each` entries with a busy timeout,
/// leave behind (one entry to start with).
fn concurrent_appends(writers: usize, each: usize) -> std::path::PathBuf {
    let dir = tempfile::tempdir().unwrap().keep();
    let path = dir.join("s.jsonl");
    let mut first = SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
    first.append(entry("label", &[])).unwrap();
    drop(first);
    let options = waiting(Duration::from_secs(60));
    std::thread::scope(|scope| {
        for w in 0..writers {
            let path = &path;
            scope.spawn(move || {
                let (mut writer, _, _) = SessionWriter::open_for_append(path, options).unwrap();
                for i in 0..each {
                    writer
                        .append(entry(
                            "custom",
                            &[("customType", json!(w)), ("data", json!(i))],
                        ))
                        .unwrap();
                }
            });
        }
    });
    path
}

#[test]
fn writers_with_a_busy_timeout_wait_for_each_other_and_continue_one_chain() {
    // 4 × 150 normally; 4 × 2,200 in `cargo xtask soak`.
    let each = crate::crashes::rounds(15) * 10;
    let path = concurrent_appends(4, each);
    let (session, diagnostics) = open(&path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(session.len(), 1 + 4 * each);
    // Each writer followed the file's tip, so the session is one chain.
    let entries = session.entries().unwrap();
    for pair in entries.windows(2) {
        assert_eq!(
            pair[1].parent_id(),
            pair[0].id(),
            "a fork at {:?}",
            pair[1].id()
        );
    }
    assert_eq!(folder(path.parent().unwrap()), ["s.jsonl"]);
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

/// Options that wait up to `timeout` for a busy session.
fn waiting(timeout: Duration) -> WriterOptions {
    WriterOptions {
        busy_timeout: Some(timeout),
        ..WriterOptions::default()
    }
}

/// Appends `text` as pi does: no lock, straight to the end of the file.
fn append_raw(path: &std::path::Path, text: &str) {
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

#[test]
fn a_writer_with_a_busy_timeout_catches_up_on_a_foreign_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let options = waiting(Duration::from_secs(5));
    let mut writer = SessionWriter::create_at(&path, new_header("/w"), options);
    let first = writer.append(entry("label", &[])).unwrap();
    // pi appends without any lock.
    let foreign = format!(
        "{{\"type\":\"label\",\"id\":\"f0000001\",\"parentId\":{:?},\"timestamp\":\"2026-01-01T00:00:00.000Z\"}}\n",
        first.id().unwrap()
    );
    append_raw(&path, &foreign);
    let next = writer.append(entry("label", &[])).unwrap();
    assert_eq!(
        next.parent_id(),
        Some("f0000001"),
        "the leaf followed the file's tip"
    );
    assert_eq!(writer.len(), 3);
    let (session, diagnostics) = open(&path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(session.len(), 3);

    // Without a timeout the same append is refused, as before.
    let (mut strict, _, _) = {
        drop(writer);
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap()
    };
    strict.append(entry("label", &[])).unwrap();
    append_raw(&path, &foreign.replace("f0000001", "f0000002"));
    assert!(matches!(
        strict.append(entry("label", &[])),
        Err(StoreError::Conflict { .. })
    ));
}

#[test]
fn a_busy_timeout_waits_for_omps_publish_lock_beyond_its_500_ms() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let options = waiting(Duration::from_secs(10));
    let mut writer = SessionWriter::create_at(&path, new_header("/w"), options);
    writer.append(entry("label", &[])).unwrap();
    // A live holder (this process) keeps omp's lock for 900 ms.
    let lock = publish_lock_path(&path);
    std::fs::write(&lock, format!("{}:0\n", std::process::id())).unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(900));
        std::fs::remove_file(lock).unwrap();
    });
    writer.append(entry("label", &[])).unwrap();
    release.join().unwrap();
    assert_eq!(open(&path).unwrap().0.len(), 2);
}

/// A file of many damaged lines keeps only the first few diagnostics of each kind in full and
/// counts the rest, so its report stays small however big the damage.
#[test]
fn diagnostics_are_bounded_per_kind_and_count_what_was_left_out() {
    use pi_session_store::{DIAGNOSTICS_PER_KIND, DiagnosticKind, Severity, open_bytes};
    const DAMAGED: usize = 100_000;
    let mut bytes = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_vec();
    bytes.push(b'\n');
    for _ in 0..DAMAGED {
        bytes.extend_from_slice(b"{}\n");
    }
    bytes.extend_from_slice(b"not json\n");
    let (session, diagnostics) = open_bytes(bytes);
    assert_eq!(session.len(), 0);
    assert_eq!(
        diagnostics.len(),
        DIAGNOSTICS_PER_KIND + 2,
        "kept, omitted, not_json"
    );
    assert!(
        diagnostics[..DIAGNOSTICS_PER_KIND]
            .iter()
            .all(|d| d.kind.name() == "no_type")
    );
    assert_eq!(
        diagnostics[DIAGNOSTICS_PER_KIND - 1].line,
        1 + DIAGNOSTICS_PER_KIND as u64
    );
    let omitted = &diagnostics[DIAGNOSTICS_PER_KIND];
    assert_eq!(
        omitted.kind,
        DiagnosticKind::Omitted {
            of: "no_type",
            count: (DAMAGED - DIAGNOSTICS_PER_KIND) as u64,
            severity: Severity::Error,
        }
    );
    assert_eq!(
        omitted.line,
        2 + DIAGNOSTICS_PER_KIND as u64,
        "at the first one left out"
    );
    assert_eq!(
        diagnostics[DIAGNOSTICS_PER_KIND + 1].kind.name(),
        "not_json"
    );
}

/// Many short-lived writers take and release the lock (and delete the sidecar) over and over:
/// never two at once (the session stays one chain with every entry), and nothing is left.
#[test]
fn short_lived_writers_never_hold_the_lock_together() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut first = SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
    first.append(entry("label", &[])).unwrap();
    drop(first);
    let options = waiting(Duration::from_secs(60));
    let cycles = crate::crashes::rounds(40);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..cycles {
                    let (mut writer, _, _) =
                        SessionWriter::open_for_append(&path, options).unwrap();
                    writer.append(entry("label", &[])).unwrap();
                }
            });
        }
    });
    let (session, diagnostics) = open(&path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(session.len(), 1 + 4 * cycles);
    let entries = session.entries().unwrap();
    for pair in entries.windows(2) {
        assert_eq!(pair[1].parent_id(), pair[0].id());
    }
    assert_eq!(folder(dir.path()), ["s.jsonl"]);
}
