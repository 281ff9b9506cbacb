//! `pi-session ls --foreign claude|codex` and `pi-session import FILE --from claude|codex`, on the
//! hand-written transcripts of `fixtures/foreign/` laid out in a scratch home.

use std::path::Path;

use crate::common::{json, root, run_in};

/// A home with the Claude tour in `~/.claude/projects/` and a Codex rollout in `~/.codex/`.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join(".claude/projects/-home-user-project");
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::copy(
        root().join("fixtures/foreign/claude/tour.jsonl"),
        claude.join("tour.jsonl"),
    )
    .unwrap();
    let codex = home.path().join(".codex/sessions/2026/01/10");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::copy(
        root().join("fixtures/foreign/codex/rollout-events-only.jsonl"),
        codex.join("rollout-events-only.jsonl"),
    )
    .unwrap();
    home
}

fn env(home: &Path) -> [(&'static str, &Path); 1] {
    [("HOME", home)]
}

#[test]
fn ls_foreign_lists_what_omps_picker_lists() {
    let home = home();
    let claude = run_in(
        home.path(),
        &env(home.path()),
        &["ls", "--foreign", "claude", "--json"],
    );
    assert_eq!(claude.code, 0, "{claude}");
    let listed = json(&claude);
    assert_eq!(listed["source"], "claude");
    assert_eq!(listed["sessions"][0]["id"], "tour");
    assert_eq!(listed["sessions"][0]["cwd"], "/home/user/project");

    let codex = run_in(
        home.path(),
        &env(home.path()),
        &["ls", "--foreign", "codex"],
    );
    assert_eq!(codex.code, 0, "{codex}");
    assert!(codex.stdout.contains("(codex): 1 session"), "{codex}");
    assert!(
        codex.stdout.contains("0199aaaa  (no messages)  /srv/app"),
        "{codex}"
    );

    let bad = run_in(
        home.path(),
        &env(home.path()),
        &["ls", "--foreign", "gemini"],
    );
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("expected claude or codex"), "{bad}");
}

#[test]
fn import_prints_the_new_sessions_path_and_reports_damage() {
    let home = home();
    let file = home
        .path()
        .join(".claude/projects/-home-user-project/tour.jsonl");
    let file = file.to_string_lossy();
    let out = home.path().join("out");
    let out_text = out.to_string_lossy();
    let imported = run_in(
        home.path(),
        &env(home.path()),
        &[
            "import", &file, "--from", "claude", "--to", &out_text, "--cwd", ".",
        ],
    );
    assert_eq!(imported.code, 0, "{imported}");
    let path = imported.stdout.trim();
    assert!(
        path.starts_with(&*out_text) && path.ends_with(".jsonl"),
        "{imported}"
    );
    // The tour has a line that is not JSON, one that is not an object and a torn last line.
    assert_eq!(imported.stderr.lines().count(), 3, "{imported}");
    assert!(imported.stderr.contains("tour.jsonl:6:"), "{imported}");

    // The new session is an ordinary omp session: `tree --json` reads it, leaf = the import entry.
    let tree = run_in(home.path(), &env(home.path()), &["tree", path, "--json"]);
    assert_eq!(tree.code, 0, "{tree}");
    let leaf = json(&tree)["leafId"].as_str().unwrap().to_owned();
    let text = std::fs::read_to_string(path).unwrap();
    let last = text.lines().last().unwrap();
    assert!(
        last.contains(&format!("\"id\":\"{leaf}\"")) && last.contains("foreign_session_import")
    );
    // The recorded cwd (/home/user/project) is not a folder here, so --cwd . applied.
    let header: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        header["cwd"],
        home.path()
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .as_ref()
    );

    let described = run_in(
        home.path(),
        &env(home.path()),
        &[
            "import", &file, "--from", "claude", "--to", &out_text, "--json",
        ],
    );
    let value = json(&described);
    assert_eq!(value["title"], "My README tour");
    assert_eq!(value["source"], "claude");
    assert_eq!(value["diagnostics"].as_array().map(Vec::len), Some(3));
}

#[test]
fn import_failures_say_what_to_do() {
    let home = home();
    let missing = run_in(
        home.path(),
        &env(home.path()),
        &["import", "nope.jsonl", "--from", "codex"],
    );
    assert_eq!(missing.code, 2, "{missing}");
    assert!(missing.stderr.contains("could not read"), "{missing}");
    let not_rollout = root().join("fixtures/foreign/codex/not-a-rollout.jsonl");
    let refused = run_in(
        home.path(),
        &env(home.path()),
        &["import", &not_rollout.to_string_lossy(), "--from", "codex"],
    );
    assert_eq!(refused.code, 2, "{refused}");
    assert!(refused.stderr.contains("session_meta"), "{refused}");
    let wrong = run_in(
        home.path(),
        &env(home.path()),
        &[
            "import",
            &not_rollout.to_string_lossy(),
            "--from",
            "claude",
            "--to",
            "x",
        ],
    );
    assert_eq!(
        wrong.code, 0,
        "a Claude import of a Codex file imports what it can: {wrong}"
    );
}
