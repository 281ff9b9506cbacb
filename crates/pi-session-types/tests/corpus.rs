//! Every line of every real session file (and of fixtures/) survives parse -> typed -> write
//! with the same JSON value; the damaged lines listed in the corpus summary fail as NotJson.

use crate::common::{corpus_dir, jsonl_files, lines, workspace_root};
use pi_session_types::{LineError, ParseWarning, json::to_js_string, parse_envelope, parse_line};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Default)]
struct Tally {
    lines: usize,
    byte_identical: usize,
    failures: BTreeSet<(String, usize)>,
    problems: Vec<String>,
}

fn check_file(path: &Path, tally: &mut Tally) {
    let bytes = std::fs::read(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    for (index, line) in lines(&bytes).into_iter().enumerate() {
        let number = index + 1;
        let parsed = match parse_line(line) {
            Ok(parsed) => parsed,
            Err(error) => {
                assert!(
                    matches!(error, LineError::NotJson { .. }),
                    "{name}:{number}: unexpected error {error}"
                );
                // The fast path must agree on the classification.
                assert!(
                    matches!(parse_envelope(line), Err(LineError::NotJson { .. })),
                    "{name}:{number}: envelope disagrees"
                );
                tally.failures.insert((name.clone(), number));
                continue;
            }
        };
        tally.lines += 1;
        for warning in &parsed.warnings {
            if matches!(warning, ParseWarning::Untyped { .. }) {
                tally.problems.push(format!("{name}:{number}: {warning}"));
            }
        }
        let written = to_js_string(&parsed.value).unwrap();
        let original: Value = serde_json::from_slice(line).unwrap();
        let reread: Value = serde_json::from_str(&written).unwrap();
        if original != reread {
            tally
                .problems
                .push(format!("{name}:{number}: value changed on write\n  was {original}\n  now {reread}"));
        }
        if written.as_bytes() == line {
            tally.byte_identical += 1;
        }
        let envelope = parse_envelope(line).unwrap();
        assert_eq!(envelope.kind, parsed.value.kind(), "{name}:{number}: envelope kind");
        if let Some(entry) = parsed.value.as_entry() {
            assert_eq!(envelope.id.as_deref(), entry.id(), "{name}:{number}: envelope id");
            assert_eq!(envelope.parent_id.as_deref(), entry.parent_id(), "{name}:{number}: parent");
            assert_eq!(envelope.timestamp.as_deref(), entry.timestamp(), "{name}:{number}: ts");
        }
    }
}

/// The damaged lines the corpus summary lists, as (file, line).
fn expected_failures(dir: &Path) -> BTreeSet<(String, usize)> {
    let summary: Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let mut out = BTreeSet::new();
    for file in summary["files"].as_array().unwrap() {
        let name = file["file"].as_str().unwrap().to_string();
        for failure in file["parse_failures"].as_array().into_iter().flatten() {
            out.insert((name.clone(), failure["line"].as_u64().unwrap() as usize));
        }
    }
    out
}

#[test]
fn corpus_and_fixtures_round_trip_losslessly() {
    let mut tally = Tally::default();
    let mut expected = BTreeSet::new();
    if let Some(dir) = corpus_dir() {
        expected = expected_failures(&dir);
        assert!(!expected.is_empty(), "summary.json lists the damaged lines");
        for path in jsonl_files(&dir) {
            check_file(&path, &mut tally);
        }
    }
    let fixtures = workspace_root().join("fixtures");
    let fixture_files = jsonl_files(&fixtures);
    for path in &fixture_files {
        check_file(path, &mut tally);
    }
    println!(
        "checked {} lines ({} byte-identical on write) in corpus + {} fixture files; {} damaged lines failed as expected",
        tally.lines,
        tally.byte_identical,
        fixture_files.len(),
        tally.failures.len()
    );
    assert!(tally.problems.is_empty(), "{} problems:\n{}", tally.problems.len(), tally.problems.join("\n"));
    assert_eq!(tally.failures, expected, "exactly the damaged lines fail");
}
