//! `pi-session append`, `fork` and `migrate`: each writes in the file's dialect, prints the
//! written entry with `--json`, and the result reads back as predicted (`context`, `tree`).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::{json, root, run};

/// A copy of `fixtures/<name>` in a new temporary folder.
pub(crate) fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let from = root().join("fixtures").join(name);
    let to = dir.path().join(Path::new(name).file_name().unwrap());
    std::fs::copy(from, &to).unwrap();
    (dir, to)
}

pub(crate) fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn append_writes_each_entry_in_the_files_dialect() {
    for (fixture, dialect) in [
        ("pi/tool-calls.jsonl", "pi"),
        ("omp/tool-calls.jsonl", "omp"),
    ] {
        let (_dir, file) = copy(fixture);
        let out = run(&["append", s(&file), "--model", "openai/gpt-5", "--json"]);
        assert_eq!(out.code, 0, "{out}");
        let entry = json(&out);
        assert_eq!(entry["type"], "model_change");
        let context = json(&run(&["context", s(&file)]));
        if dialect == "pi" {
            assert_eq!(entry["provider"], "openai", "{out}");
            assert_eq!(entry["modelId"], "gpt-5");
            assert_eq!(
                context["model"],
                json!({"provider": "openai", "modelId": "gpt-5"})
            );
        } else {
            assert_eq!(entry["model"], "openai/gpt-5", "{out}");
            assert_eq!(context["models"]["default"], "openai/gpt-5");
        }
        let thinking = json(&run(&["append", s(&file), "--thinking", "high", "--json"]));
        assert_eq!(thinking["thinkingLevel"], "high");
        let target = entry["id"].as_str().unwrap();
        let label = json(&run(&[
            "append",
            s(&file),
            "--label",
            target,
            "mine",
            "--json",
        ]));
        assert_eq!(label["targetId"], target);
        let tree = json(&run(&["tree", s(&file), "--json"]));
        assert_eq!(tree["labels"][target], "mine");
        run(&["append", s(&file), "--unlabel", target]);
        let tree = json(&run(&["tree", s(&file), "--json"]));
        assert!(tree["labels"].get(target).is_none(), "{tree}");
        let name = json(&run(&["append", s(&file), "--name", "Renamed", "--json"]));
        assert_eq!(
            name["type"],
            if dialect == "pi" {
                "session_info"
            } else {
                "title_change"
            }
        );
        let drawing = run(&["tree", s(&file)]);
        assert!(
            drawing
                .stdout
                .lines()
                .next()
                .unwrap()
                .contains("\"Renamed\""),
            "{drawing}"
        );
        let custom = json(&run(&[
            "append",
            s(&file),
            "--custom",
            "host.state",
            r#"{"n":1}"#,
            "--json",
        ]));
        assert_eq!(custom["data"], json!({"n": 1}));
        let png = file.with_file_name("pic.png");
        std::fs::write(&png, [0x89, b'P', b'N', b'G']).unwrap();
        let args = vec![
            "append",
            s(&file),
            "--user",
            "look",
            "--image",
            s(&png),
            "--json",
        ];
        let user = json(&run(&args));
        assert_eq!(user["message"]["role"], "user");
        assert_eq!(user["message"]["content"][2]["type"], "image", "{user}");
        let context = json(&run(&["context", s(&file)]));
        let last = context["messages"].as_array().unwrap().last().unwrap();
        assert_eq!(last["content"][0]["text"], "look", "{dialect}");
    }
}

#[test]
fn dialect_overrides_the_files_own() {
    let (_dir, file) = copy("pi/tool-calls.jsonl");
    let out = run(&[
        "append",
        s(&file),
        "--model",
        "openai/gpt-5",
        "--dialect",
        "omp",
        "--json",
    ]);
    assert_eq!(json(&out)["model"], "openai/gpt-5", "{out}");
}

#[test]
fn bad_appends_fail_with_what_to_do() {
    let (_dir, file) = copy("pi/tool-calls.jsonl");
    let out = run(&["append", s(&file), "--label", "nope", "x"]);
    assert_eq!(out.code, 2, "{out}");
    assert!(
        out.stderr
            .contains("no entry of this session has id \"nope\""),
        "{out}"
    );
    let out = run(&["append", s(&file), "--model", "gpt-5"]);
    out.assert_says(2, "PROVIDER/ID");
    let out = run(&["append", s(&file)]);
    assert_eq!(out.code, 2, "{out}");
    let out = run(&["append", s(&file), "--custom", "t", "{not json"]);
    out.assert_says(2, "not JSON");
}

#[test]
fn a_version_1_file_is_migrated_then_appended_to() {
    let (_dir, file) = copy("invalid/v1-migration.jsonl");
    let before = json(&run(&["context", s(&file)]));
    let out = run(&["append", s(&file), "--user", "hi"]);
    out.assert_says(2, "pi-session migrate");
    let out = run(&["migrate", s(&file), "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let migrated = json(&out);
    let backup = PathBuf::from(migrated["backup"].as_str().unwrap());
    assert!(backup.exists());
    assert_eq!(json(&run(&["context", s(&file)])), before);
    let out = run(&["append", s(&file), "--user", "hi", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let out = run(&["migrate", s(&file), "--json"]);
    assert_eq!(json(&out)["backup"], serde_json::Value::Null);
}

#[test]
fn fork_gives_the_context_at_that_entry() {
    for fixture in [
        "pi/branch-summaries.jsonl",
        "omp/branch-summaries.jsonl",
        "pi/compaction-kept-missing.jsonl",
    ] {
        let (dir, file) = copy(fixture);
        let tree = json(&run(&["tree", s(&file), "--json"]));
        let tips: Vec<&str> = tree["tips"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t.as_str())
            .collect();
        for at in tips {
            let to = dir.path().join(format!("forks-{at}"));
            let out = run(&["fork", s(&file), "--at", at, "--to", s(&to), "--json"]);
            assert_eq!(out.code, 0, "{out}");
            let forked = json(&out);
            let path = forked["path"].as_str().unwrap();
            assert_eq!(
                forked["header"]["parentSession"],
                s(&std::path::absolute(&file).unwrap()),
            );
            for format in ["agent", "llm", "req-llm"] {
                let source = json(&run(&[
                    "context",
                    s(&file),
                    "--leaf",
                    at,
                    "--format",
                    format,
                ]));
                let fork = json(&run(&["context", path, "--format", format]));
                assert_eq!(fork, source, "{fixture} at {at} ({format})");
            }
        }
    }
}

#[test]
fn tree_json_reports_no_leaf_when_the_last_line_has_no_id_as_pi_and_omp_do() {
    let file = "fixtures/leaf/last-line-without-id.jsonl";
    let tree = json(&run(&["tree", file, "--json"]));
    let context = json(&run(&["context", file]));
    for implementation in ["pi", "pi16", "omp"] {
        let recorded: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root().join(format!(
                "fixtures/leaf/{implementation}/last-line-without-id.expected.json"
            )))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            recorded["leafId"],
            serde_json::Value::Null,
            "{implementation}"
        );
        assert_eq!(tree["leafId"], recorded["leafId"], "{implementation}");
        assert_eq!(tree["branchIds"], recorded["branchIds"], "{implementation}");
        // buildSessionContext, given no leaf id, still starts from the last entry.
        let messages = &recorded["contexts"][0]["agent"]["messages"];
        assert_eq!(
            context["messages"].as_array().unwrap().len(),
            messages.as_array().map_or(usize::MAX, Vec::len),
            "{implementation}: {}",
            recorded["contexts"]
        );
    }
}

/// Resumes `file` with the store's writer and appends a label: the writer (and its lock) stays
/// open until dropped, as another process writing the session would.
fn another_writer(file: &Path) -> (pi_session::store::SessionWriter, String) {
    use pi_session::store::{SessionWriter, WriterOptions};
    let (mut writer, _, _) =
        SessionWriter::open_for_append(file, WriterOptions::default()).unwrap();
    let label = json!({"type": "label", "targetId": "x", "label": "x"});
    let written = writer
        .append(pi_session::types::Entry::from_map(
            label.as_object().unwrap().clone(),
        ))
        .unwrap();
    (writer, written.id().unwrap().to_owned())
}

#[test]
fn append_waits_for_another_writer_then_continues_after_its_entries() {
    let (_dir, file) = copy("pi/tool-calls.jsonl");
    // Busy for longer than --wait: a clear error, nothing written.
    let (writer, _) = another_writer(&file);
    let before = std::fs::read(&file).unwrap();
    let refused = run(&["append", s(&file), "--user", "hi", "--wait", "0.2"]);
    assert_ne!(refused.code, 0, "{refused}");
    assert!(
        refused.stderr.contains("being written by another process")
            && refused.stderr.contains("--wait SECONDS"),
        "{refused}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
    drop(writer);

    // By default it waits (a few seconds) for the writer to close, and builds on its entries.
    let (writer, last) = another_writer(&file);
    let closer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        drop(writer);
    });
    let waited = run(&["append", s(&file), "--user", "hi", "--json"]);
    closer.join().unwrap();
    assert_eq!(waited.code, 0, "{waited}");
    assert_eq!(json(&waited)["parentId"], json!(last));
}

/// Holds `session`'s writer lock and omp's publish lock (as another writer does) until the
/// returned handle is dropped.
fn hold_locks(session: &Path) -> pi_session::store::RewriteLock {
    pi_session::store::RewriteLock::acquire(session, None).unwrap()
}

/// Runs `args` while another process holds `locked`'s locks for half a second.
fn run_while_locked_briefly(locked: &Path, args: &[&str]) -> crate::common::Output {
    let held = hold_locks(locked);
    let closer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(500));
        drop(held);
    });
    let out = run(args);
    closer.join().unwrap();
    out
}

#[test]
fn migrate_waits_for_another_writer_like_append() {
    let (_dir, file) = copy("invalid/v1-migration.jsonl");
    let before = std::fs::read(&file).unwrap();
    let held = hold_locks(&file);
    let refused = run(&["migrate", s(&file), "--wait", "0.2"]);
    assert_ne!(refused.code, 0, "{refused}");
    assert!(refused.stderr.contains("--wait SECONDS"), "{refused}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
    drop(held);
    // By default it waits (a few seconds) for the writer to let go, then migrates.
    let waited = run_while_locked_briefly(&file, &["migrate", s(&file), "--json"]);
    assert_eq!(waited.code, 0, "{waited}");
    assert!(json(&waited)["backup"].is_string(), "{waited}");
}

#[test]
fn fork_waits_for_the_new_sessions_locks_like_append() {
    let (dir, file) = copy("pi/tool-calls.jsonl");
    let target = dir.path().join("fork.jsonl");
    let held = hold_locks(&target);
    let refused = run(&["fork", s(&file), "--to", s(&target), "--wait", "0.2"]);
    assert_ne!(refused.code, 0, "{refused}");
    assert!(refused.stderr.contains("--wait SECONDS"), "{refused}");
    assert!(!target.exists());
    drop(held);
    let waited = run_while_locked_briefly(&target, &["fork", s(&file), "--to", s(&target)]);
    assert_eq!(waited.code, 0, "{waited}");
    assert_eq!(
        json(&run(&["context", s(&target)]))["messages"],
        json(&run(&["context", s(&file)]))["messages"]
    );
}
