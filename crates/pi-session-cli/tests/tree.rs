//! `pi-session tree`: the JSON equals what the real implementations report; drawings are
//! snapshotted.

use crate::common::{fixture_files, js_equal, json, parse_js_json, run, snapshot_name};

#[test]
fn tree_json_equals_the_recordings() {
    let mut checked = 0;
    for folder in ["pi", "omp"] {
        for path in fixture_files(folder, ".expected.json") {
            let expected = parse_js_json(&std::fs::read_to_string(path).unwrap());
            // A v1 file has no ids: pi makes random ones on open, the store makes them from
            // byte offsets (the same on every open), so only their shape can agree.
            if expected.get("openError").is_some() || expected["scenario"] == "v1-format" {
                continue;
            }
            let file = format!("fixtures/{folder}/{}", expected["file"].as_str().unwrap());
            let out = run(&["tree", &file, "--json"]);
            assert_eq!(out.code, 0, "{out}");
            let got = json(&out);
            for key in ["leafId", "branchIds", "tips", "labels"] {
                assert!(
                    js_equal(&got[key], &expected[key]),
                    "{file} {key}: {} vs {}",
                    got[key],
                    expected[key]
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 70, "{checked}");
}

#[test]
fn drawings() {
    let files = [
        "fixtures/cli/mixed/good.jsonl",
        "fixtures/cli/mixed/nested/omp-session.jsonl",
        "fixtures/omp/branches-leaf-not-last.jsonl",
        "fixtures/omp/labels.jsonl",
        "fixtures/omp/parent-cycle.jsonl",
        "fixtures/pi/compactions-several.jsonl",
        "fixtures/pi/session-name.jsonl",
    ];
    for file in files {
        let out = run(&["tree", file]);
        assert_eq!(out.code, 0, "{out}");
        let name = format!(
            "tree_{}",
            file.trim_start_matches("fixtures/")
                .replace(['/', '.'], "_")
        );
        insta::assert_snapshot!(name, out.to_string());
    }
    let folded = run(&["tree", "fixtures/pi/long-tool-output.jsonl", "--fold", "2"]);
    insta::assert_snapshot!("tree_folded", folded.to_string());
}

#[test]
fn bad_input() {
    let cases: [&[&str]; 4] = [
        &["tree", "fixtures/cli/missing.jsonl"],
        &["tree", "fixtures/cli/mixed/binary.jsonl"],
        &["tree", "fixtures/cli/mixed/empty.jsonl", "--json"],
        &["tree", "fixtures/cli/mixed/notes.jsonl"],
    ];
    for args in cases {
        let out = run(args);
        insta::assert_snapshot!(snapshot_name(args), out.to_string());
    }
}
