//! Listing sessions from the first bytes of each file.

use pi_session_store::{DiagnosticKind, HEADER_SCAN_LIMIT, latest, list};
use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

fn header(id: &str, extra: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"{extra}}}"#
    )
}

fn write(dir: &Path, name: &str, text: &str, age_secs: u64) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let when = SystemTime::now() - Duration::from_secs(age_secs);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[test]
fn sessions_are_listed_newest_first_with_titles_from_the_slot_or_header() {
    let dir = tempfile::tempdir().unwrap();
    let entry =
        r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#;
    write(
        dir.path(),
        "old.jsonl",
        &format!("{}\n{entry}\n", header("old", r#","title":"Header title""#)),
        300,
    );
    let slot = pi_session_types::TitleSlot::serialize_fixed(
        "Slot title",
        None,
        "2026-01-02T00:00:00.000Z",
    )
    .unwrap();
    write(
        dir.path(),
        "new.jsonl",
        &format!("{slot}{}\n", header("new", r#","title":"stale""#)),
        10,
    );
    let empty_slot =
        pi_session_types::TitleSlot::serialize_fixed("", None, "2026-01-02T00:00:00.000Z").unwrap();
    write(
        dir.path(),
        "cleared.jsonl",
        &format!("{empty_slot}{}\n", header("cleared", r#","title":"stale""#)),
        100,
    );
    write(dir.path(), "ignored.txt", "not a session", 0);

    let (sessions, problems) = list(dir.path()).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let summary: Vec<(&str, Option<&str>)> = sessions
        .iter()
        .map(|s| (s.id.as_str(), s.title.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            ("new", Some("Slot title")),
            ("cleared", None),
            ("old", Some("Header title"))
        ]
    );
    assert_eq!(sessions[2].cwd.as_deref(), Some("/w"));
    assert_eq!(
        sessions[2].size,
        std::fs::metadata(dir.path().join("old.jsonl"))
            .unwrap()
            .len()
    );
    assert_eq!(
        latest(dir.path()).unwrap().map(|s| s.id),
        Some("new".to_owned())
    );
}

#[test]
fn a_long_header_is_followed_to_its_newline_but_not_past_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let long_cwd = format!(r#","parentSession":"{}""#, "p".repeat(100_000));
    write(
        dir.path(),
        "long.jsonl",
        &format!("{}\n", header("long", &long_cwd)),
        0,
    );
    let huge = format!(
        r#","parentSession":"{}""#,
        "p".repeat(HEADER_SCAN_LIMIT as usize)
    );
    write(
        dir.path(),
        "huge.jsonl",
        &format!("{}\n", header("huge", &huge)),
        0,
    );
    let (sessions, problems) = list(dir.path()).unwrap();
    assert_eq!(
        sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["long"]
    );
    assert_eq!(problems.len(), 1);
    assert!(problems[0].path.ends_with("huge.jsonl"));
    assert_eq!(
        problems[0].diagnostic.kind,
        DiagnosticKind::HeaderNotFound {
            limit: HEADER_SCAN_LIMIT
        }
    );
}

#[test]
fn damaged_lines_before_the_header_are_skipped_but_entries_before_it_disqualify() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "torn-first.jsonl",
        &format!("\n{{broken\n{}\n", header("ok", "")),
        0,
    );
    write(
        dir.path(),
        "entry-first.jsonl",
        &format!("{{\"type\":\"label\"}}\n{}\n", header("no", "")),
        0,
    );
    write(dir.path(), "empty.jsonl", "", 0);
    let (sessions, problems) = list(dir.path()).unwrap();
    assert_eq!(
        sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["ok"]
    );
    let names: Vec<String> = problems
        .iter()
        .map(|p| p.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["empty.jsonl", "entry-first.jsonl"]);
}

#[test]
fn a_missing_folder_lists_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let (sessions, problems) = list(dir.path().join("nope")).unwrap();
    assert!(sessions.is_empty() && problems.is_empty());
    assert_eq!(latest(dir.path().join("nope")).unwrap(), None);
}

#[test]
fn list_all_merges_every_project_folder() {
    let root = tempfile::tempdir().unwrap();
    for (folder, id, age) in [("--a--", "in-a", 50), ("-b", "in-b", 5)] {
        std::fs::create_dir(root.path().join(folder)).unwrap();
        write(
            &root.path().join(folder),
            &format!("{id}.jsonl"),
            &format!("{}\n", header(id, "")),
            age,
        );
    }
    let (sessions, problems) = pi_session_store::list_all(root.path()).unwrap();
    assert!(problems.is_empty());
    assert_eq!(
        sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        ["in-b", "in-a"]
    );
}
