//! Every line of every real session file (and of fixtures/) survives parse -> typed -> write
//! with the same JSON value; the damaged lines listed in the corpus summary fail as NotJson.

use crate::common::{corpus_dir, jsonl_files, lines, workspace_root};
use pi_session_types::{
    Entry, LineError, ParseWarning, json::to_js_string, parse_envelope, parse_line,
};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Default)]
struct Tally {
    lines: usize,
    byte_identical: usize,
    repaired: usize,
    failures: BTreeSet<(String, usize)>,
    problems: Vec<String>,
}

/// `js_written`: the file comes from a real JavaScript writer (the corpus), so its canonical
/// lines must be reproduced byte for byte; hand-written fixtures are only checked by value.
fn check_file(path: &Path, js_written: bool, tally: &mut Tally) {
    let bytes = std::fs::read(path).unwrap();
    let file_name = path.file_name().unwrap().to_string_lossy().to_string();
    let name = if js_written {
        file_name
    } else {
        format!("fixtures/{file_name}")
    };
    for (index, line) in lines(&bytes).into_iter().enumerate() {
        let number = index + 1;
        let parsed = match parse_line(line) {
            Ok(parsed) => parsed,
            Err(error) => {
                assert_eq!(
                    kind_of(&error),
                    kind_of(&oracle(line)),
                    "{name}:{number}: wrong error"
                );
                // The fast path must agree on the classification.
                assert_eq!(
                    parse_envelope(line),
                    Err(error),
                    "{name}:{number}: envelope disagrees"
                );
                tally.failures.insert((name.clone(), number));
                continue;
            }
        };
        tally.lines += 1;
        for warning in &parsed.warnings {
            // Real files must be fully typed; hand-made fixtures may hold invalid objects on purpose.
            if js_written && matches!(warning, ParseWarning::Untyped { .. }) {
                tally.problems.push(format!("{name}:{number}: {warning}"));
            }
        }
        let written = to_js_string(&parsed.value).unwrap();
        let original: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(_) => {
                // JavaScript wrote a lone surrogate escape: the typed view must say so and match
                // an independent reading (std's UTF-16 decoder, lone surrogates carried).
                let utf8_ok = std::str::from_utf8(line).is_ok();
                let expected_warning = |w: &ParseWarning| match w {
                    ParseWarning::LoneSurrogateReplaced { .. } => utf8_ok,
                    ParseWarning::InvalidUtf8Replaced => !utf8_ok,
                    _ => false,
                };
                assert!(
                    parsed.warnings.iter().any(expected_warning),
                    "{name}:{number}: repaired without the right warning: {:?}",
                    parsed.warnings
                );
                tally.repaired += 1;
                serde_json::from_str(&crate::common::decode_surrogates_independently(
                    &String::from_utf8_lossy(line),
                ))
                .unwrap()
            }
        };
        // Lone surrogates are written back as the escapes JavaScript wrote (serde_json alone
        // cannot read those).
        let reread: Value = serde_json::from_str(
            &pi_session_types::line::replace_lone_surrogate_escapes(&written),
        )
        .unwrap();
        if original != reread {
            tally.problems.push(format!(
                "{name}:{number}: value changed on write\n  was {original}\n  now {reread}"
            ));
        }
        if written.as_bytes() == line {
            tally.byte_identical += 1;
        } else if js_written && to_js_string(&original).unwrap().as_bytes() == line {
            // The line is in JavaScript's canonical form (so a JS writer made it): the typed
            // write must then reproduce it byte for byte (key order, numbers, escapes).
            tally.problems.push(format!(
                "{name}:{number}: typed write differs from a JS-canonical line\n  was {}\n  now {written}",
                String::from_utf8_lossy(line)
            ));
        }
        // The one-pass typing and the fallback-keeping typing agree. (Headers and title-slot
        // candidates are typed by parse_line itself, not by Entry.)
        if let (Some(entry), Ok(Value::Object(map))) = (
            parsed.value.as_entry(),
            serde_json::from_slice::<Value>(line),
        ) && !matches!(entry.kind(), "session" | "title")
        {
            assert_eq!(
                &Entry::from_map(map),
                entry,
                "{name}:{number}: typing paths differ"
            );
        }
        let envelope = parse_envelope(line).unwrap();
        assert_eq!(
            envelope.kind,
            parsed.value.kind(),
            "{name}:{number}: envelope kind"
        );
        if let Some(entry) = parsed.value.as_entry() {
            assert_eq!(
                envelope.id.as_deref(),
                entry.id(),
                "{name}:{number}: envelope id"
            );
            assert_eq!(
                envelope.parent_id.as_deref(),
                entry.parent_id(),
                "{name}:{number}: parent"
            );
            assert_eq!(
                envelope.timestamp.as_deref(),
                entry.timestamp(),
                "{name}:{number}: ts"
            );
        }
    }
}

/// The error a line must give, decided independently with serde_json's `Value`.
fn oracle(line: &[u8]) -> LineError {
    if line.iter().all(u8::is_ascii_whitespace) {
        return LineError::Blank;
    }
    match serde_json::from_slice::<Value>(line) {
        Err(_) => LineError::NotJson {
            message: String::new(),
            column: 0,
        },
        Ok(Value::Object(map)) => match map.get("type") {
            None => LineError::MissingType,
            Some(Value::String(_)) => panic!("a valid line was rejected"),
            Some(other) => LineError::TypeNotString {
                found: type_name(other),
            },
        },
        Ok(other) => LineError::NotAnObject {
            found: type_name(&other),
        },
    }
}

/// The error without serde_json's message and column (which the oracle cannot predict).
fn kind_of(error: &LineError) -> String {
    match error {
        LineError::NotJson { .. } => "NotJson".to_string(),
        other => format!("{other:?}"),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
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
            check_file(&path, true, &mut tally);
        }
    }
    let fixtures = workspace_root().join("fixtures");
    let fixture_files = jsonl_files(&fixtures);
    for path in &fixture_files {
        check_file(path, false, &mut tally);
    }
    println!(
        "checked {} lines ({} byte-identical on write, {} repaired: lone surrogates / invalid UTF-8) in corpus + {} fixture files; {} damaged lines failed as expected",
        tally.lines,
        tally.byte_identical,
        tally.repaired,
        fixture_files.len(),
        tally.failures.len()
    );
    assert!(
        tally.problems.is_empty(),
        "{} problems:\n{}",
        tally.problems.len(),
        tally.problems.join("\n")
    );
    let corpus_failures: BTreeSet<_> = tally
        .failures
        .iter()
        .filter(|(file, _)| !file.starts_with("fixtures/"))
        .cloned()
        .collect();
    assert_eq!(
        corpus_failures, expected,
        "exactly the damaged corpus lines fail"
    );
}
