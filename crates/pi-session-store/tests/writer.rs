//! Appending: rho's write timing, ids and parents, read-back, torn tails, durability, title slot,
//! resuming, in-memory sessions, and failures that leave the session unchanged.

use crate::common::entry;
use pi_session_store::{
    Durability, SessionWriter, StoreError, TitleWrite, WriterOptions, new_header, open,
};
use pi_session_types::{Entry, JsonValue, TitleSource};
use proptest::prelude::*;
use serde_json::json;
use std::io::Write;
use std::path::Path;

fn label(target: &str) -> Entry {
    entry(
        "label",
        &[("targetId", json!(target)), ("label", json!("l"))],
    )
}

fn is_iso_ms_utc(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z'
        && b.iter()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16, 19, 23].contains(&i) || c.is_ascii_digit())
}

#[test]
fn nothing_is_written_until_the_first_append_which_creates_dirs_header_and_entry() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a").join("b");
    let mut writer = SessionWriter::create(&nested, new_header("/w"), WriterOptions::default());
    assert!(!nested.exists());
    assert!(!writer.is_written());
    let first = writer.append(label("x")).unwrap();
    let second = writer.append(label("y")).unwrap();
    let text = std::fs::read_to_string(writer.path().unwrap()).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.starts_with(r#"{"type":"session","version":3,"id":""#));
    assert!(text.ends_with('\n'));

    let id = first.id().unwrap();
    assert_eq!(id.len(), 8);
    assert!(
        id.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    );
    assert_eq!(first.parent_id(), None);
    assert_eq!(second.parent_id(), Some(id));
    assert!(
        is_iso_ms_utc(first.timestamp().unwrap()),
        "{:?}",
        first.timestamp()
    );
    assert!(text.lines().nth(1).unwrap().contains(r#""parentId":null"#));
    assert_eq!(writer.leaf_id(), second.id());
}

#[test]
fn append_overrides_envelope_fields_the_caller_set() {
    let mut writer = SessionWriter::in_memory(new_header("/w"));
    let mut e = label("x");
    e.set_envelope(
        "caller-id".into(),
        Some("caller-parent".into()),
        "1999-01-01T00:00:00.000Z".into(),
    );
    let written = writer.append(e).unwrap();
    assert_ne!(written.id(), Some("caller-id"));
    assert_eq!(written.parent_id(), None);
    assert_ne!(written.timestamp(), Some("1999-01-01T00:00:00.000Z"));
}

#[test]
fn reserved_types_are_refused_and_change_nothing() {
    let mut writer = SessionWriter::in_memory(new_header("/w"));
    for kind in ["session", "title"] {
        assert!(matches!(
            writer.append(entry(kind, &[])),
            Err(StoreError::ReservedType { .. })
        ));
    }
    assert!(writer.is_empty() && !writer.is_written());
}

#[test]
fn a_failed_first_append_leaves_the_session_empty_and_a_retry_works() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("sessions");
    std::fs::write(&blocker, "a file where the folder should be").unwrap();
    let mut writer = SessionWriter::create(
        blocker.join("p"),
        new_header("/w"),
        WriterOptions::default(),
    );
    let error = writer.append(label("x")).unwrap_err();
    assert!(matches!(error, StoreError::Io { .. }), "{error}");
    assert!(
        error.to_string().contains("could not create the directory"),
        "{error}"
    );
    assert_eq!(
        (writer.len(), writer.leaf_id(), writer.is_written()),
        (0, None, false)
    );

    std::fs::remove_file(&blocker).unwrap();
    let written = writer.append(label("y")).unwrap();
    assert_eq!(
        written.parent_id(),
        None,
        "the failed entry is not part of the session"
    );
    let (session, diagnostics) = open(writer.path().unwrap()).unwrap();
    assert!(diagnostics.is_empty());
    assert_eq!(session.entries().unwrap(), vec![written]);
}

#[test]
fn creating_over_an_existing_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, "precious\n").unwrap();
    let mut writer = SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
    assert!(matches!(
        writer.append(label("x")),
        Err(StoreError::AlreadyExists { .. })
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious\n");
}

#[test]
fn every_durability_gives_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut contents = Vec::new();
    for durability in [Durability::Buffered, Durability::Flush, Durability::Fsync] {
        let path = dir.path().join(format!("{durability:?}.jsonl"));
        let options = WriterOptions {
            durability,
            ..WriterOptions::default()
        };
        let mut writer = SessionWriter::create_at(&path, new_header("/w"), options);
        let written: Vec<Entry> = (0..20)
            .map(|i| writer.append(label(&i.to_string())).unwrap())
            .collect();
        writer.flush().unwrap();
        let (session, diagnostics) = open(&path).unwrap();
        assert!(diagnostics.is_empty(), "{durability:?}");
        assert_eq!(session.entries().unwrap(), written, "{durability:?}");
        contents.push(session.len());
    }
    assert_eq!(contents, vec![20, 20, 20]);
}

#[test]
fn buffered_lines_reach_the_file_when_the_writer_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let options = WriterOptions {
        durability: Durability::Buffered,
        ..WriterOptions::default()
    };
    let mut writer = SessionWriter::create_at(&path, new_header("/w"), options);
    writer.append(label("x")).unwrap();
    drop(writer);
    assert_eq!(open(&path).unwrap().0.len(), 1);
}

#[test]
fn in_memory_sessions_have_the_same_api_and_no_file() {
    let mut writer = SessionWriter::in_memory(new_header("/w"));
    assert_eq!(writer.path(), None);
    let before = writer.session().unwrap().0;
    assert!(before.header().is_some() && before.is_empty());
    let a = writer.append(label("x")).unwrap();
    let b = writer.append(label("y")).unwrap();
    writer.set_leaf(a.id()).unwrap();
    let c = writer.append(label("z")).unwrap();
    assert_eq!(c.parent_id(), a.id());
    assert!(matches!(
        writer.set_leaf(Some("nope")),
        Err(StoreError::UnknownId { .. })
    ));
    let (session, diagnostics) = writer.session().unwrap();
    assert!(diagnostics.is_empty());
    assert_eq!(session.entries().unwrap(), vec![a, b, c]);
    assert_eq!(
        writer.set_title(Some("T"), None).unwrap(),
        TitleWrite::InMemoryOnly
    );
}

#[test]
fn the_title_slot_is_written_first_and_rewritten_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let options = WriterOptions {
        title_slot: true,
        ..WriterOptions::default()
    };
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), options);
    assert_eq!(
        writer
            .set_title(Some("First"), Some(TitleSource::Auto))
            .unwrap(),
        TitleWrite::AtCreation
    );
    writer.append(label("x")).unwrap();
    let path = writer.path().unwrap().to_path_buf();
    let before = std::fs::read(&path).unwrap();
    assert_eq!(
        before.iter().position(|&b| b == b'\n'),
        Some(255),
        "the slot is exactly 256 bytes"
    );
    assert_eq!(open(&path).unwrap().0.title(), Some("First"));

    let long = "é".repeat(300);
    assert_eq!(
        writer
            .set_title(Some(&long), Some(TitleSource::User))
            .unwrap(),
        TitleWrite::Slot
    );
    let after = std::fs::read(&path).unwrap();
    assert_eq!(
        after.len(),
        before.len(),
        "only the slot's 256 bytes change"
    );
    assert_eq!(after[256..], before[256..]);
    let (session, diagnostics) = open(&path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let title = session.title().unwrap();
    assert!(
        long.starts_with(title) && title.len() < long.len(),
        "cut to fit the slot"
    );
    assert_eq!(
        session.header().unwrap().title_source.as_deref(),
        Some("user")
    );

    writer.append(label("y")).unwrap();
    assert_eq!(writer.set_title(None, None).unwrap(), TitleWrite::Slot);
    let (session, _) = open(&path).unwrap();
    assert_eq!((session.title(), session.len()), (None, 2));
}

#[test]
fn a_resumed_session_continues_from_its_last_entry_and_keeps_ids_unique() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    let first: Vec<Entry> = (0..5)
        .map(|i| writer.append(label(&i.to_string())).unwrap())
        .collect();
    let path = writer.path().unwrap().to_path_buf();
    drop(writer);

    let (mut resumed, session, _) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    assert_eq!(session.len(), 5);
    assert_eq!(resumed.leaf_id(), first[4].id());
    let next = resumed.append(label("5")).unwrap();
    assert_eq!(next.parent_id(), first[4].id());
    let (reopened, diagnostics) = open(&path).unwrap();
    assert!(diagnostics.is_empty());
    assert_eq!(reopened.len(), 6);
}

#[test]
fn resuming_needs_a_header_and_refuses_versions_1_and_2() {
    let dir = tempfile::tempdir().unwrap();
    let headless = dir.path().join("headless.jsonl");
    std::fs::write(
        &headless,
        "{\"type\":\"label\",\"id\":\"a\",\"parentId\":null}\n",
    )
    .unwrap();
    assert!(matches!(
        SessionWriter::open_for_append(&headless, WriterOptions::default()),
        Err(StoreError::NoHeader { .. })
    ));
    let v1 = dir.path().join("v1.jsonl");
    std::fs::write(&v1, "{\"type\":\"session\",\"id\":\"s\"}\n").unwrap();
    let error = SessionWriter::open_for_append(&v1, WriterOptions::default()).unwrap_err();
    assert!(
        matches!(error, StoreError::NeedsMigration { version: 1, .. }),
        "{error}"
    );
    let v2 = dir.path().join("v2.jsonl");
    std::fs::write(&v2, "{\"type\":\"session\",\"id\":\"s\",\"version\":2}\n").unwrap();
    let error = SessionWriter::open_for_append(&v2, WriterOptions::default()).unwrap_err();
    assert!(
        matches!(error, StoreError::NeedsMigration { version: 2, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("version 2 file"), "{error}");
}

#[test]
fn after_a_torn_tail_the_next_append_starts_on_a_new_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    let kept = writer.append(label("x")).unwrap();
    let path = writer.path().unwrap().to_path_buf();
    drop(writer);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"type":"label","id":"torn"#)
        .unwrap();

    let (mut resumed, _, diagnostics) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    assert_eq!(diagnostics.len(), 1);
    let next = resumed.append(label("y")).unwrap();
    assert_eq!(
        next.parent_id(),
        kept.id(),
        "the torn fragment never became the leaf"
    );
    let (session, diagnostics) = open(&path).unwrap();
    assert_eq!(session.entries().unwrap(), vec![kept, next]);
    assert_eq!(
        diagnostics.len(),
        1,
        "the fragment is now a complete, damaged line: {diagnostics:?}"
    );
    assert_eq!(diagnostics[0].line, 3);
}

/// Random JSON values: nested objects and arrays of strings (any Unicode), integers and floats.
fn json_value() -> impl Strategy<Value = JsonValue> {
    let leaf = prop_oneof![
        any::<String>().prop_map(JsonValue::from),
        any::<i64>().prop_map(JsonValue::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(JsonValue::from),
        any::<bool>().prop_map(JsonValue::from),
        Just(JsonValue::Null),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(JsonValue::from),
            prop::collection::vec(("[a-z0-9]{1,6}", inner), 0..4)
                .prop_map(|pairs| JsonValue::Object(pairs.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Step {
    Append {
        kind: &'static str,
        value: JsonValue,
        text: String,
    },
    ResetLeaf,
    TearTail(Vec<u8>),
    Reopen,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (prop::sample::select(vec!["custom", "label", "message", "future_kind", "custom_message"]), json_value(), any::<String>())
            .prop_map(|(kind, value, text)| Step::Append { kind, value, text }),
        1 => Just(Step::ResetLeaf),
        1 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 1..40).prop_map(Step::TearTail),
        1 => Just(Step::Reopen),
    ]
}

fn build(kind: &str, value: JsonValue, text: String) -> Entry {
    match kind {
        "message" => entry(
            "message",
            &[(
                "message",
                json!({"role":"user","content":text,"timestamp":1}),
            )],
        ),
        "label" => entry("label", &[("targetId", json!(text)), ("label", value)]),
        "custom_message" => entry(
            "custom_message",
            &[
                ("customType", json!("t")),
                ("content", json!(text)),
                ("details", value),
            ],
        ),
        other => entry(other, &[("customType", json!(text)), ("data", value)]),
    }
}

/// Resumes the file; a leaf reset before the reopen is not on disk (as in pi), so redo it.
fn resume_keeping_a_reset_leaf(
    path: &Path,
    leaf: Option<Option<String>>,
) -> Result<SessionWriter, TestCaseError> {
    let (mut writer, session, _) =
        SessionWriter::open_for_append(path, WriterOptions::default()).unwrap();
    prop_assert_eq!(writer.leaf_id(), session.leaf_id());
    if let Some(None) = leaf {
        writer.set_leaf(None).unwrap();
    }
    Ok(writer)
}

fn run_steps(path: &Path, steps: Vec<Step>) -> Result<(), TestCaseError> {
    let mut writer = SessionWriter::create_at(path, new_header("/w"), WriterOptions::default());
    let mut written: Vec<Entry> = Vec::new();
    for step in steps {
        match step {
            Step::Append { kind, value, text } => {
                written.push(writer.append(build(kind, value, text)).unwrap())
            }
            Step::ResetLeaf => writer.set_leaf(None).unwrap(),
            Step::TearTail(_) | Step::Reopen if !writer.is_written() => {}
            Step::TearTail(bytes) => {
                let leaf = writer.leaf_id().map(str::to_owned);
                drop(writer);
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(path)
                    .unwrap()
                    .write_all(&bytes)
                    .unwrap();
                writer = resume_keeping_a_reset_leaf(path, Some(leaf))?;
            }
            Step::Reopen => {
                let leaf = writer.leaf_id().map(str::to_owned);
                drop(writer);
                writer = resume_keeping_a_reset_leaf(path, Some(leaf))?;
            }
        }
    }
    drop(writer);
    if written.is_empty() {
        prop_assert!(!path.exists());
        return Ok(());
    }
    let (session, _) = open(path).unwrap();
    prop_assert_eq!(session.entries().unwrap(), written);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn append_then_reopen_gives_identical_entries(steps in prop::collection::vec(step(), 0..24)) {
        let dir = tempfile::tempdir().unwrap();
        run_steps(&dir.path().join("s.jsonl"), steps)?;
    }
}

const FSIZE_CHILD_ENV: &str = "PI_SESSION_STORE_TEST_FSIZE_CHILD";
const FSIZE_CHILD_TEST: &str =
    "writer::a_write_that_fails_half_way_is_cut_off_and_not_part_of_the_session";

/// Appends ~1 KB entries under a file-size limit until one fails (in the child process).
fn append_until_the_disk_is_full(path: &str) {
    let mut writer = SessionWriter::create_at(path, new_header("/w"), WriterOptions::default());
    let mut written = Vec::new();
    let error = loop {
        assert!(written.len() < 1000, "the file size limit was not applied");
        match writer.append(entry("custom", &[("data", json!("x".repeat(1000)))])) {
            Ok(e) => written.push(e),
            Err(error) => break error,
        }
    };
    assert!(matches!(error, StoreError::Io { .. }), "{error}");
    assert_eq!(
        writer.len(),
        written.len(),
        "the failed entry is not in the session"
    );
    assert_eq!(writer.leaf_id(), written.last().and_then(Entry::id));
    let (session, diagnostics) = open(path).unwrap();
    assert!(
        diagnostics.is_empty(),
        "the partial line was cut off again: {diagnostics:?}"
    );
    assert_eq!(session.entries().unwrap(), written);
    println!("CHILD_OK {}", written.len());
}

/// A write that fails half-way (the file-size limit, EFBIG, standing in for a full disk) returns
/// an error, leaves no partial line, and the session in memory does not include the entry.
#[cfg(unix)]
#[test]
fn a_write_that_fails_half_way_is_cut_off_and_not_part_of_the_session() {
    if let Ok(path) = std::env::var(FSIZE_CHILD_ENV) {
        append_until_the_disk_is_full(&path);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    // `ulimit -f 16` allows 8 or 16 KiB depending on the shell; ignoring SIGXFSZ turns the
    // signal into an EFBIG error from write(2).
    let script = format!(
        "trap '' XFSZ; ulimit -f 16; exec \"$0\" --exact {FSIZE_CHILD_TEST} --nocapture --test-threads=1"
    );
    let output = std::process::Command::new("sh")
        .args(["-c", &script])
        .arg(std::env::current_exe().unwrap())
        .env(FSIZE_CHILD_ENV, &path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    let count: usize = stdout
        .split("CHILD_OK ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        count >= 4,
        "some appends succeed before the limit: {stdout}"
    );
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(
        size <= 16 * 1024,
        "the partial line was removed: {size} bytes"
    );
}

/// Always the same time and the same id: a writer must still keep ids unique.
#[derive(Debug)]
struct Stuck;

impl pi_session_store::Stamps for Stuck {
    fn now(&mut self) -> pi_session_types::IsoTimestamp {
        "2026-01-01T00:00:00.000Z".into()
    }
    fn entry_id(&mut self) -> String {
        "deadbeef".into()
    }
}

#[test]
fn injected_stamps_make_output_deterministic_and_ids_stay_unique() {
    let header = pi_session_store::new_header_with("/w", "fixed-id", "2026-01-01T00:00:00.000Z");
    let dir = tempfile::tempdir().unwrap();
    let mut writer =
        SessionWriter::create(dir.path(), header, WriterOptions::default()).with_stamps(Stuck);
    let first = writer.append(label("x")).unwrap();
    let second = writer.append(label("y")).unwrap();
    assert_eq!(first.id(), Some("deadbeef"));
    assert_eq!(first.timestamp(), Some("2026-01-01T00:00:00.000Z"));
    let fallback = second.id().unwrap();
    assert_eq!(
        fallback.len(),
        36,
        "after 100 collisions a full UUID, as pi does: {fallback}"
    );
    let name = writer
        .path()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(name, "2026-01-01T00-00-00-000Z_fixed-id.jsonl");
    let text = std::fs::read_to_string(writer.path().unwrap()).unwrap();
    assert_eq!(
        text.lines().nth(1).unwrap(),
        r#"{"type":"label","id":"deadbeef","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"l"}"#
    );
}

#[test]
fn replicated_appends_keep_ids_parents_and_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut header = new_header("/w");
    header.extra.insert("title".into(), json!("T"));
    let mut writer = SessionWriter::create(
        dir.path(),
        header,
        WriterOptions {
            title_slot: true,
            ..WriterOptions::default()
        },
    )
    .with_slot_title(
        Some("T"),
        Some(TitleSource::Auto),
        "2026-01-01T00:00:00.000Z",
    );
    let map = |value: JsonValue| value.as_object().unwrap().clone();
    let first = json!({"type": "custom", "customType": "x", "id": "a", "parentId": null, "timestamp": "2026-01-01T00:00:00.000Z"});
    writer.append_replicated(map(first)).unwrap();
    let unknown_parent = json!({"type": "custom", "id": "b", "parentId": "zz", "timestamp": "t"});
    assert!(matches!(
        writer.append_replicated(map(unknown_parent)),
        Err(StoreError::UnknownId { .. })
    ));
    let duplicate = json!({"type": "custom", "id": "a", "parentId": null, "timestamp": "t"});
    assert!(writer.append_replicated(map(duplicate)).is_err());
    let reserved = json!({"type": "session", "id": "c", "parentId": null});
    assert!(writer.append_replicated(map(reserved)).is_err());
    let child =
        json!({"type": "label", "id": "b", "parentId": "a", "timestamp": "t", "targetId": "a"});
    writer.append_replicated(map(child)).unwrap();
    assert_eq!(writer.leaf_id(), Some("b"));
    let text = std::fs::read_to_string(writer.path().unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(r#"{"type":"title","v":1,"title":"T","source":"auto","updatedAt":"2026-01-01T00:00:00.000Z""#), "{}", lines[0]);
    assert!(lines[1].ends_with(r#","title":"T"}"#), "{}", lines[1]);
    assert_eq!(
        &lines[2..],
        [
            r#"{"type":"custom","customType":"x","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#,
            r#"{"type":"label","id":"b","parentId":"a","timestamp":"t","targetId":"a"}"#,
        ]
    );
    let (session, diagnostics) = open(writer.path().unwrap()).unwrap();
    assert_eq!(
        (
            session.len(),
            session.title_slot().map(|s| s.title.as_str())
        ),
        (2, Some("T"))
    );
    assert!(diagnostics.iter().all(|d| !matches!(
        d.kind,
        pi_session_store::DiagnosticKind::ParentNotFound { .. }
    )));
}

#[test]
fn a_lone_surrogate_a_host_appends_is_written_as_javascript_writes_it() {
    // A host cut "😀" in two as JavaScript's `slice` does; the high half is carried as
    // U+10F83D and goes to disk as `\ud83d`, and reads back as the same string.
    let dir = tempfile::tempdir().unwrap();
    let half = pi_session_types::js::slice("a😀", 0, 2);
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    let appended = writer
        .append(entry(
            "label",
            &[("targetId", json!("x")), ("label", json!(half))],
        ))
        .unwrap();
    let path = writer.path().unwrap().to_owned();
    drop(writer);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#""label":"a\ud83d""#), "{text}");
    let (session, diagnostics) = open(&path).unwrap();
    let back = session.entry(0).unwrap();
    assert_eq!(back, appended);
    let label = serde_json::to_value(&back).unwrap()["label"].clone();
    assert_eq!(label, json!("a\u{10F83D}"));
    // Read back, the file is a note (a lone surrogate), not damage.
    assert!(
        diagnostics
            .iter()
            .all(|d| d.severity() == pi_session_store::Severity::Info),
        "{diagnostics:?}"
    );
}

#[test]
fn a_resumed_writer_knows_the_files_ids_and_those_it_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut first = SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
    let a = first.append(label("a")).unwrap();
    let b = first.append(label("b")).unwrap();
    drop(first);
    let (mut writer, _, _) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    assert!(writer.contains_id(a.id().unwrap()) && writer.contains_id(b.id().unwrap()));
    assert!(!writer.contains_id("nope"));
    writer.set_leaf(a.id()).unwrap();
    let c = writer.append(label("c")).unwrap();
    assert_eq!(c.parent_id(), a.id());
    assert!(writer.contains_id(c.id().unwrap()));
    writer.set_leaf(c.id()).unwrap();
    assert!(matches!(
        writer.set_leaf(Some("nope")),
        Err(StoreError::UnknownId { .. })
    ));
    let ids = [a.id(), b.id(), c.id()];
    assert!(ids.iter().all(|id| id.is_some()));
    assert_eq!(
        ids.iter().collect::<std::collections::HashSet<_>>().len(),
        3,
        "fresh ids avoid the file's"
    );
}
