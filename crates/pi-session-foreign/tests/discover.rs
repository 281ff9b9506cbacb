//! Discovery as omp's picker does it, on laid-out Claude Code and Codex folders; and every real
//! transcript of `../shared/corpus/foreign` imports and reads back clean (skipped with a notice
//! when the corpus is absent).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use pi_session_foreign::{Env, ImportOptions, Source, describe, import, list};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn put(path: &Path, text: &str, secs: u64) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
    let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + secs);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

fn env(home: &Path) -> Env {
    Env::new(home, home, home.join("tmp"))
}

const CLAUDE_USER: &str = r#"{"type":"user","uuid":"u1","parentUuid":null,"cwd":"/from/transcript","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#;

#[test]
fn claude_sessions_are_found_with_history_and_project_folders() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let root = home.join(".claude");
    // history.jsonl: first prompt, count and cwd of session "a".
    put(
        &root.join("history.jsonl"),
        concat!(
            r#"{"display":"second  prompt","timestamp":2000,"project":"/from/history","sessionId":"a"}"#,
            "\n",
            r#"{"display":" first\nprompt ","timestamp":1000,"sessionId":"a"}"#,
            "\n",
            r#"{"display":"ignored","timestamp":0,"sessionId":"a"}"#,
            "\n",
        ),
        0,
    );
    // ~/.claude.json registers a project whose path has a dash.
    put(
        &home.join(".claude.json"),
        r#"{"projects":{"/home/u/my-app":{},"relative":{}}}"#,
        0,
    );
    put(
        &root.join("projects/-home-u-my-app/a.jsonl"),
        CLAUDE_USER,
        10,
    );
    put(
        &root.join("projects/-home-u-my-app/b.jsonl"),
        r#"{"type":"summary"}"#,
        30,
    );
    put(&root.join("projects/-srv-x/c.jsonl"), CLAUDE_USER, 20);
    put(
        &root.join(".projects/-srv-y/agent-1.jsonl"),
        r#"{"type":"summary"}"#,
        5,
    );
    put(
        &root.join("projects/-srv-x/c/subagents/agent-2.jsonl"),
        CLAUDE_USER,
        40,
    );
    put(&root.join("projects/-srv-x/notes.txt"), "", 50);

    let sessions = list(Source::Claude, &env(home));
    let got: Vec<_> = sessions
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.cwd.as_str(),
                s.first_message.as_deref(),
                s.message_count,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("b", "/home/u/my-app", None, None),
            ("c", "/from/transcript", None, None),
            ("a", "/from/history", Some("first prompt"), Some(2)),
            ("agent-1", "/srv/y", None, None),
        ]
    );
    assert_eq!(sessions[2].created_ms, 1000.0);
    assert_eq!(sessions[2].modified_ms, 1_767_225_610_000.0);

    // CLAUDE_CONFIG_DIR moves the whole store (and its .claude.json) elsewhere.
    let other = home.join("elsewhere");
    put(&other.join("projects/-p/z.jsonl"), CLAUDE_USER, 0);
    let moved = env(home).with_var("CLAUDE_CONFIG_DIR", " elsewhere ");
    let ids: Vec<_> = list(Source::Claude, &moved)
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["z"]);
}

#[test]
fn codex_rollouts_need_a_leading_session_meta_with_a_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let root = home.join(".codex");
    let meta = |id: &str, cwd: &str| {
        format!(
            r#"{{"type":"session_meta","payload":{{"id":"{id}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"{cwd}"}}}}"#
        )
    };
    put(
        &root.join("sessions/2026/01/01/rollout-a.jsonl"),
        &meta("a", "/w/a"),
        10,
    );
    put(
        &root.join("archived_sessions/rollout-b.jsonl"),
        &format!("not json\n{}", meta("b", "/w/b")),
        20,
    );
    put(&root.join(".sessions/rollout-c.jsonl"), &meta("c", ""), 30);
    put(
        &root.join("sessions/rollout-d.jsonl"),
        &format!(
            "{}\n{}",
            r#"{"type":"event_msg","payload":{}}"#,
            meta("d", "/w/d")
        ),
        40,
    );
    put(
        &root.join("session_index.jsonl"),
        r#"{"id":"a","thread_name":"Thread A","updated_at":"2026-02-01T00:00:00.000Z"}"#,
        0,
    );
    let sessions = list(Source::Codex, &env(home));
    let got: Vec<_> = sessions
        .iter()
        .map(|s| (s.id.as_str(), s.cwd.as_str(), s.title.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![("a", "/w/a", Some("Thread A")), ("b", "/w/b", None)]
    );
    assert_eq!(sessions[0].modified_ms, 1_769_904_000_000.0);
    assert_eq!(sessions[0].created_ms, 1_767_225_600_000.0);

    let refused = describe(
        Source::Codex,
        &env(home),
        &root.join("sessions/rollout-d.jsonl"),
    );
    assert!(refused.unwrap_err().to_string().contains("session_meta"));
    let missing = describe(Source::Claude, &env(home), Path::new("nope.jsonl"));
    assert!(missing.unwrap_err().to_string().contains("could not read"));
}

#[test]
fn import_uses_the_fallback_cwd_only_when_the_recorded_one_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let file = home.join(".claude/projects/-x/s.jsonl");
    put(&file, CLAUDE_USER, 0);
    let env = env(home);
    let info = describe(Source::Claude, &env, &file).unwrap();
    let options = |fallback: &Path| ImportOptions {
        fallback_cwd: Some(fallback.to_path_buf()),
        session_dir: Some(home.join("out")),
        blobs_dir: Some(home.join("blobs")),
        ..ImportOptions::default()
    };
    let imported = import(&info, &env, options(Path::new("here/.."))).unwrap();
    assert_eq!(imported.cwd, home.to_string_lossy());
    assert_eq!(imported.entry_count, 2);
    let text = fs::read_to_string(&imported.path).unwrap();
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .contains(&format!("\"cwd\":\"{}\"", home.display()))
    );
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains(r#""customType":"foreign_session_import""#)
    );

    // An existing recorded cwd stays.
    let existing = home.join("proj");
    fs::create_dir_all(&existing).unwrap();
    let text = CLAUDE_USER.replace("/from/transcript", &existing.to_string_lossy());
    put(&file, &text, 0);
    let imported = import(&info, &env, options(Path::new("/elsewhere"))).unwrap();
    assert_eq!(imported.cwd, existing.to_string_lossy());
    // Without --to, the session goes to omp's folder for its cwd.
    let default = import(&info, &env, ImportOptions::default()).unwrap();
    assert!(
        default
            .path
            .starts_with(home.join(".omp/agent/sessions/-proj")),
        "{}",
        default.path.display()
    );
}

fn corpus() -> Option<PathBuf> {
    pi_session_test_support::corpus_dir("foreign")
}

#[test]
fn every_corpus_transcript_imports_and_reads_back_clean() {
    let Some(corpus) = corpus() else { return };
    let mut imported_count = 0;
    for source in [Source::Claude, Source::Codex] {
        let mut files: Vec<PathBuf> = fs::read_dir(corpus.join(source.as_str()))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            let dir = tempfile::tempdir().unwrap();
            let env = env(dir.path());
            let info = describe(source, &env, &file).unwrap();
            let options = ImportOptions {
                session_dir: Some(dir.path().join("out")),
                blobs_dir: Some(dir.path().join("blobs")),
                ..ImportOptions::default()
            };
            let imported = import(&info, &env, options).unwrap();
            let (session, diagnostics) = pi_session_store::open(&imported.path).unwrap();
            assert!(
                diagnostics.is_empty(),
                "{}: {diagnostics:?}",
                file.display()
            );
            assert_eq!(session.len(), imported.entry_count, "{}", file.display());
            assert!(imported.entry_count > 1, "{}", file.display());
            imported_count += 1;
        }
    }
    assert!(imported_count >= 2);
}

#[test]
fn codex_state_index_is_listed_when_it_has_rows() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let root = home.join(".codex");
    fs::create_dir_all(&root).unwrap();
    let schema = "CREATE TABLE threads (id TEXT, rollout_path TEXT, created_at INTEGER, updated_at INTEGER, cwd TEXT, title TEXT, first_user_message TEXT)";
    // An older, empty index, and the newest one with rows (one unusable: no cwd).
    rusqlite::Connection::open(root.join("state_2.sqlite"))
        .unwrap()
        .execute(schema, [])
        .unwrap();
    let newest = rusqlite::Connection::open(root.join("state_10.sqlite")).unwrap();
    newest.execute(schema, []).unwrap();
    newest
        .execute(
            "INSERT INTO threads VALUES ('t1', 'sessions/r1.jsonl', 1767225600, 1767225700, '/w', 'Indexed', 'first'),
                                       ('t2', '/abs/r2.jsonl', NULL, 1767225800000, '/v', NULL, NULL),
                                       ('t3', 'x.jsonl', 1, 2, NULL, NULL, NULL)",
            [],
        )
        .unwrap();
    drop(newest);
    let sessions = list(Source::Codex, &env(home));
    let got: Vec<_> = sessions
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.path.clone(),
                s.title.as_deref(),
                s.first_message.as_deref(),
                s.created_ms,
                s.modified_ms,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "t2",
                PathBuf::from("/abs/r2.jsonl"),
                None,
                None,
                1_767_225_800_000.0,
                1_767_225_800_000.0
            ),
            (
                "t1",
                root.join("sessions/r1.jsonl"),
                Some("Indexed"),
                Some("first"),
                1_767_225_600_000.0,
                1_767_225_700_000.0
            ),
        ]
    );
    // An index with no rows leaves the rollouts to be listed.
    fs::remove_file(root.join("state_10.sqlite")).unwrap();
    put(
        &root.join("sessions/rollout-x.jsonl"),
        r#"{"type":"session_meta","payload":{"id":"x","cwd":"/x"}}"#,
        0,
    );
    let ids: Vec<_> = list(Source::Codex, &env(home))
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(ids, ["x"]);
}
