//! `pi-session repair`: a clean copy that reads to the same context, the original kept.

use std::path::Path;

use crate::common::{fixture_files, run};
use pi_session::store::{SessionWriter, WriterOptions};

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

/// Resumes `file` and appends a label through the store's writer, which stays open.
fn resumed_with_a_label(file: &Path) -> SessionWriter {
    let (mut writer, _, _) =
        SessionWriter::open_for_append(file, WriterOptions::default()).unwrap();
    let label = serde_json::json!({"type": "label", "targetId": "x", "label": "x"});
    writer
        .append(pi_session::types::Entry::from_map(
            label.as_object().unwrap().clone(),
        ))
        .unwrap();
    writer
}

/// `context` of `file` in each format that does not need the workspace: exit code and stdout.
fn contexts(file: &Path) -> Vec<(i32, String)> {
    let file = file.to_str().unwrap();
    ["agent", "llm"]
        .iter()
        .map(|format| {
            let out = run(&["context", file, "--format", format]);
            (out.code, out.stdout)
        })
        .collect()
}

#[test]
fn repair_keeps_the_context_of_every_damaged_fixture_and_the_original() {
    for fixture in fixture_files("invalid", ".jsonl") {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::copy(&fixture, &file).unwrap();
        let original = std::fs::read(&file).unwrap();
        let before = contexts(&file);
        let repaired = run(&["repair", file.to_str().unwrap()]);
        assert_eq!(repaired.code, 0, "{}\n{repaired}", fixture.display());
        assert_eq!(
            contexts(&file),
            before,
            "{}: the context changed",
            fixture.display()
        );
        let backup = dir.path().join("s.jsonl.bak");
        if repaired.stdout.contains("needs no repair") {
            assert!(!backup.exists());
            assert_eq!(std::fs::read(&file).unwrap(), original);
        } else {
            assert_eq!(
                std::fs::read(&backup).unwrap(),
                original,
                "{}",
                fixture.display()
            );
        }
        // Repairing again changes nothing.
        let again = run(&["repair", file.to_str().unwrap()]);
        assert!(
            again.stdout.contains("needs no repair"),
            "{}\n{again}",
            fixture.display()
        );
    }
}

/// A crash leaves a torn fragment; the next append starts on a new line, so the fragment ends
/// up in the middle, where `check` calls the file damaged forever. `repair` removes it.
#[test]
fn a_torn_fragment_in_the_middle_is_removed_and_check_is_clean_again() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let first = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
    let torn = r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.0"#;
    std::fs::write(&file, format!("{HEADER}\n{first}\n{torn}")).unwrap();
    drop(resumed_with_a_label(&file));
    let path = file.to_str().unwrap();
    assert_eq!(run(&["check", path]).code, 1, "damaged before");
    let before = contexts(&file);

    let repaired = run(&["repair", path]);
    assert_eq!(repaired.code, 0, "{repaired}");
    assert!(
        repaired
            .stdout
            .contains(":3:229: removed a line that is not JSON (78 bytes)"),
        "{repaired}"
    );
    let checked = run(&["check", path]);
    assert_eq!(checked.code, 0, "clean after: {checked}");
    assert_eq!(contexts(&file), before);
    let json = crate::common::json(&run(&["repair", path, "--json"]));
    assert_eq!(json["changed"], false);
}

#[test]
fn repair_refuses_while_a_writer_holds_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, format!("{HEADER}\nnot json\n")).unwrap();
    let writer = resumed_with_a_label(&file);
    let held = std::fs::read(&file).unwrap();
    let refused = run(&["repair", file.to_str().unwrap(), "--wait", "0.2"]);
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains("a writer has this session open"),
        "{refused}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), held);
    assert!(!dir.path().join("s.jsonl.bak").exists());
    drop(writer);
    assert_eq!(run(&["repair", file.to_str().unwrap()]).code, 0);
}

#[test]
fn repair_waits_for_a_writer_to_close_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, format!("{HEADER}\nnot json\n")).unwrap();
    let writer = resumed_with_a_label(&file);
    let closer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        drop(writer);
    });
    let repaired = run(&["repair", file.to_str().unwrap()]);
    closer.join().unwrap();
    assert_eq!(repaired.code, 0, "{repaired}");
    assert!(dir.path().join("s.jsonl.bak").exists());
}
