//! `pi-session cat`: every line through the typed model.

use crate::common::{fixture_files, root, run, snapshot_name};

#[test]
fn every_fixture_line_comes_back_as_json() {
    for folder in ["pi", "omp", "cli/mixed"] {
        for path in fixture_files(folder, ".jsonl") {
            let name = path.file_name().unwrap().to_string_lossy();
            let file = format!("fixtures/{folder}/{name}");
            let out = run(&["cat", &file]);
            if out.code == 2 {
                assert!(
                    out.stdout.is_empty() && out.stderr.contains("is not a session"),
                    "{out}"
                );
                continue;
            }
            let lines: Vec<&str> = out.stdout.lines().collect();
            for line in &lines {
                // Lone surrogates come back as the escapes pi and omp wrote (`\ud83d`).
                let value = crate::common::parse_js_json(line);
                assert!(
                    value.get("type").is_some_and(serde_json::Value::is_string),
                    "{file}: {line}"
                );
            }
            assert!(
                out.code == 0 || (out.code == 1 && !out.stderr.is_empty()),
                "{out}"
            );
            assert!(!lines.is_empty(), "{out}");
        }
    }
}

#[test]
fn outputs() {
    let cases: [&[&str]; 6] = [
        &["cat", "fixtures/cli/mixed/good.jsonl"],
        &["cat", "fixtures/cli/mixed/nested/omp-session.jsonl"],
        &["cat", "fixtures/pi/v1-format.jsonl"],
        &["cat", "fixtures/invalid/torn-last-line.jsonl"],
        &["cat", "fixtures/cli/mixed/binary.jsonl"],
        &["cat", "fixtures/cli/mixed/empty.jsonl"],
    ];
    for args in cases {
        insta::assert_snapshot!(snapshot_name(args), run(args).to_string());
    }
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pi-session"))
        .current_dir(root())
        .args(["cat", "fixtures/omp/long-tool-output.jsonl"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.code() == Some(0), "{output:?}");
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
