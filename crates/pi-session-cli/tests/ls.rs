//! `pi-session ls`, and the commands' default file: the latest session of the current
//! directory (omp's folder, else pi's, else the Rust agent's `~/.rho/sessions/<project hash>`).

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::common::{json, root, run, run_in, snapshot_name};

/// Copies `fixture` to `to` and sets its modification time `secs` after 2026-01-01.
fn place(fixture: &str, to: &Path, secs: u64) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(root().join(fixture), to).unwrap();
    let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + secs);
    File::options()
        .write(true)
        .open(to)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// A home folder with a project whose omp and pi folders hold sessions.
fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let home_path = home.path().canonicalize().unwrap();
    std::fs::create_dir_all(home_path.join("proj")).unwrap();
    let omp = home_path.join(".omp/agent/sessions/-proj");
    place("fixtures/omp/linear-chat.jsonl", &omp.join("old.jsonl"), 10);
    place("fixtures/omp/labels.jsonl", &omp.join("new.jsonl"), 20);
    let pi_name = format!(
        "--{}--",
        home_path
            .join("proj")
            .to_string_lossy()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    place(
        "fixtures/pi/session-name.jsonl",
        &home_path
            .join(".pi/agent/sessions")
            .join(pi_name)
            .join("pi.jsonl"),
        30,
    );
    // The Rust agent's layout: ~/.rho/sessions/<first 16 hex of SHA-256 of the project root>.
    let rho = pi_session::rho_session_dir(&home_path, &home_path.join("proj"));
    place(
        "fixtures/pi/tool-calls.jsonl",
        &rho.join("1767225640_rho.jsonl"),
        40,
    );
    home
}

/// Replaces the temporary home folder with `~` so snapshots do not change between runs.
fn redact(text: &str, home: &Path) -> String {
    let home = home.canonicalize().unwrap();
    let hash = pi_session::rho_project_hash(&home.join("proj"));
    let text = text.replace(&hash, "<project hash>");
    let home = home.to_string_lossy().into_owned();
    // pi names a project folder after the whole path: `/tmp/x/proj` → `--tmp-x-proj--`.
    let encoded = home.trim_start_matches('/').replace('/', "-");
    text.replace(&home, "~").replace(&encoded, "<home>")
}

#[test]
fn the_default_file_is_the_latest_omp_session_of_the_project() {
    let home = home();
    let proj = home.path().join("proj");
    let env = [("HOME", home.path())];
    let out = run_in(&proj, &env, &["tree", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(
        json(&out)["leafId"],
        "6171686d",
        "labels.jsonl is the newest omp session: {out}"
    );
    // Without omp sessions, pi's folder is next.
    std::fs::remove_dir_all(home.path().join(".omp")).unwrap();
    let out = run_in(&proj, &env, &["stats", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    assert_eq!(json(&out)["id"], "019bc0e2-1280-742b-aef1-672c816ad307");
    // Without either, the Rust agent's layout (~/.rho/sessions/<project hash>) is next.
    std::fs::remove_dir_all(home.path().join(".pi")).unwrap();
    let out = run_in(&proj, &env, &["stats", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let tool_calls = json(&run(&["stats", "fixtures/pi/tool-calls.jsonl", "--json"]));
    assert_eq!(json(&out)["id"], tool_calls["id"], "{out}");
    // Without any, every command says where it looked.
    std::fs::remove_dir_all(home.path().join(".rho")).unwrap();
    for command in ["context", "tree", "cat", "stats"] {
        let out = run_in(&proj, &env, &[command]);
        assert_eq!(out.code, 2, "{out}");
        assert!(out.stdout.is_empty());
        insta::assert_snapshot!(
            format!("latest_none_{command}"),
            redact(&out.to_string(), home.path())
        );
    }
}

#[test]
fn listings() {
    let home = home();
    let proj = home.path().join("proj");
    let env = [("HOME", home.path())];
    let default = run_in(&proj, &env, &["ls"]);
    assert_eq!(default.code, 0, "{default}");
    insta::assert_snapshot!("ls_default", redact(&default.to_string(), home.path()));
    let root_listing = run_in(&proj, &env, &["ls", "../.omp/agent/sessions"]);
    insta::assert_snapshot!(
        "ls_sessions_root",
        redact(&root_listing.to_string(), home.path())
    );
    let listing = json(&run_in(&proj, &env, &["ls", "--json"]));
    let folders = listing["folders"].as_array().unwrap();
    assert_eq!(folders.len(), 3);
    assert_eq!(folders[0]["kind"], "omp");
    assert_eq!(folders[2]["kind"], "rho");
    assert_eq!(
        folders[2]["sessions"][0]["path"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next(),
        Some("1767225640_rho.jsonl"),
        "{listing}"
    );
    assert_eq!(
        folders[2]["path"].as_str().unwrap().rsplit('/').next(),
        Some(pi_session::rho_project_hash(&proj).as_str())
    );
    let omp_ids: Vec<&str> = folders[0]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        omp_ids,
        [
            "019bc0e2-1280-7c3d-afaa-e0cca1d1fb5b",
            "019bc0e2-1280-72bb-bc44-eb739a77b9a5"
        ],
        "newest first"
    );
    assert_eq!(
        folders[0]["sessions"][0]["modified"],
        "2026-01-01T00:00:20.000Z"
    );
}

#[test]
fn bad_folders() {
    let cases: [&[&str]; 3] = [
        &["ls", "fixtures/cli/none"],
        &["ls", "fixtures/cli/mixed/good.jsonl"],
        &["ls", "fixtures/cli/mixed", "--json"],
    ];
    for args in cases {
        let out = run(args);
        let text = out.to_string();
        // Modification times of checked-out files vary: keep the shape, not the time.
        let text: String = text
            .lines()
            .map(|line| {
                if line.starts_with("  20") && line.len() > 21 {
                    format!("  [time]{}", &line[21..])
                } else {
                    line.to_owned()
                }
            })
            .map(|line| {
                if line.contains("\"modified\"") {
                    "      \"modified\": [time],".to_owned()
                } else {
                    line
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        insta::assert_snapshot!(snapshot_name(args), text);
    }
}
