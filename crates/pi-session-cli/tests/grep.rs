//! `pi-session grep`: every occurrence in a fixture folder, including fused and recovered lines
//! and omp's title slot, and nothing in a damaged line that was skipped.

use serde_json::Value;

use crate::common::{json, root, run};

/// `(file name, entry id or "-", field)` of every hit, in output order.
fn hits(args: &[&str]) -> Vec<(String, String, String)> {
    let mut all = vec!["grep"];
    all.extend_from_slice(args);
    all.extend(["fixtures/cli/grep", "--json"]);
    let out = json(&run(&all));
    out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let file = h["path"].as_str().unwrap().rsplit('/').next().unwrap();
            let id = h["entryId"].as_str().unwrap_or("-");
            (
                file.to_owned(),
                id.to_owned(),
                h["field"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn ids(found: &[(String, String, String)]) -> Vec<&str> {
    found.iter().map(|(_, id, _)| id.as_str()).collect()
}

#[test]
fn finds_every_occurrence_and_nothing_in_damaged_lines() {
    let everything = hits(&["needle", "--thinking", "--tool-results"]);
    // Every occurrence in the bytes of the folder, less the one on the damaged line (d1).
    let mut expected = 0;
    for name in ["omp.jsonl", "pi.jsonl"] {
        let bytes = std::fs::read(root().join("fixtures/cli/grep").join(name)).unwrap();
        for line in bytes.split(|&b| b == b'\n') {
            let count = line.windows(6).filter(|w| w == b"needle").count();
            if !line.windows(14).any(|w| w == b"damaged needle") {
                expected += count;
            }
        }
    }
    assert_eq!(everything.len(), expected, "{everything:?}");
    assert_eq!(
        ids(&everything),
        ["-", "u1", "a1", "u2", "f1", "f2", "t1", "r1"]
    );
    assert_eq!(
        everything[0],
        ("omp.jsonl".into(), "-".into(), "title".into())
    );
    assert!(!ids(&everything).contains(&"d1"));
    // Without the flags, thinking and tool results are left out.
    assert_eq!(ids(&hits(&["needle"])), ["-", "u1", "u2", "f1", "f2", "r1"]);
    assert_eq!(ids(&hits(&["needle", "--role", "tool"])), ["t1"]);
    assert_eq!(
        ids(&hits(&["needle", "--role", "assistant", "--thinking"])),
        ["a1", "f2"]
    );
    // A regular expression finds the same; so does a pattern the raw-byte filter cannot use
    // (U+FFFD, what the invalid byte of r1 reads as).
    assert_eq!(hits(&["ne+dle", "--regex"]), hits(&["needle"]));
    assert_eq!(ids(&hits(&["\u{fffd}"])), ["r1"]);
    assert!(hits(&["damaged"]).is_empty());
}

#[test]
fn reports_the_branch_the_line_and_the_text() {
    let out = run(&["grep", "needle", "fixtures/cli/grep", "--json"]);
    assert_eq!(out.code, 0, "{out}");
    let found = json(&out);
    assert_eq!(found["damagedLines"], 1);
    let by_id = |id: &str| -> Value {
        found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["entryId"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_id("u2")["onBranch"], false);
    assert_eq!(by_id("f2")["onBranch"], true);
    assert_eq!(by_id("f2")["line"], 5);
    assert_eq!(by_id("u1")["text"], "find the needle here");
    assert_eq!(by_id("u1")["session"], "grep-pi");
    let text = run(&["grep", "needle", "fixtures/cli/grep"]);
    insta::assert_snapshot!("grep_needle", text.to_string());
    let bad = run(&["grep", "(", "--regex", "fixtures/cli/grep"]);
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("bad regular expression"), "{bad}");
}
