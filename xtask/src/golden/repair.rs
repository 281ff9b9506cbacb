//! Repaired files as the real omp and pi read them (`fixtures/repair/`): each damaged session
//! `<name>.jsonl` sits beside `<name>.repaired.jsonl`, the store's `repair` of it, and
//! `cargo xtask record` records what every implementation returns for both
//! (`fixtures/repair/<impl>/`).
//!
//! - `repaired-bytes`: our `repair` of the damaged file gives exactly the committed copy.
//! - `ours-same`: our context of the repaired copy equals our context of the damaged file.
//! - `same-context`: per implementation, the recorded context of the repaired copy (the whole
//!   `buildSessionContext()` and `convertToLlm` at the leaf) equals the damaged file's: pi and
//!   omp resume the repaired file as they resumed the damaged one. Except for fused lines
//!   ([`RESTORED`]): pi and omp drop a line of fused values (`JSON.parse` fails), and with it
//!   the entries' place on the branch, so the damaged file resumes with less; our store splits
//!   the values, and so does repair, after which pi and omp resume the whole branch, as we read
//!   it (reported as skipped with that reason; the recordings show it).
//! - Our reading of every file against each recording is checked as any recording is
//!   ([`super::recorded`]), except the damaged files of [`RESTORED`], which we read on purpose
//!   with more than pi and omp.

use std::path::Path;

use serde_json::Value;

use super::compare::parse_recording;
use super::recorded;
use super::redis::outcome as compared;
use super::report::{Outcome, Report, Row};

/// Damaged fixtures whose repair restores entries pi and omp lose (fused lines).
const RESTORED: [&str; 1] = ["fused"];

/// The implementations that read the repair fixtures (pi-dialect files: all three).
const READERS: [&str; 3] = ["omp", "pi", "pi16"];

/// Checks `fixtures/repair/`.
pub fn check(report: &mut Report, fixtures: &Path, only: Option<&str>) -> Result<(), String> {
    let dir = fixtures.join("repair");
    let mut damaged: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|name| {
            let stem = name.strip_suffix(".jsonl")?;
            (!stem.ends_with(".repaired")).then(|| stem.to_owned())
        })
        .collect();
    damaged.sort();
    for name in damaged {
        if only.is_some_and(|only| !name.contains(only)) {
            continue;
        }
        let mut row = Row::new("repair", name.clone());
        let committed = std::fs::read(dir.join(format!("{name}.repaired.jsonl")));
        let ours = std::fs::read(dir.join(format!("{name}.jsonl"))).and_then(|bytes| {
            let mut out = Vec::new();
            pi_session_store::repair(&bytes[..], &mut out).map(|_| out)
        });
        let outcome = match (ours, committed) {
            (Ok(ours), Ok(committed)) if ours == committed => Outcome::Pass,
            (Ok(_), Ok(_)) => Outcome::Fail(format!(
                "      our repair of {name}.jsonl differs from {name}.repaired.jsonl\n"
            )),
            (Err(e), _) | (_, Err(e)) => Outcome::Fail(format!("      {e}\n")),
        };
        report.record(&mut row, "repaired-bytes", "", outcome);
        let ours_same = match (
            our_context(&dir.join(format!("{name}.jsonl"))),
            our_context(&dir.join(format!("{name}.repaired.jsonl"))),
        ) {
            (Ok(before), Ok(after)) => compared(&before, &after),
            (Err(e), _) | (_, Err(e)) => Outcome::Fail(format!("      {e}\n")),
        };
        report.record(&mut row, "ours-same", "", ours_same);
        for reader in READERS {
            let recordings = dir.join(reader);
            let read = |file: &str| -> Result<Value, String> {
                let path = recordings.join(format!("{file}.expected.json"));
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                parse_recording(&text)
            };
            let outcome = match (read(&name), read(&format!("{name}.repaired"))) {
                (Ok(before), Ok(after)) => match same_contexts(&before, &after) {
                    Outcome::Fail(_) if RESTORED.contains(&name.as_str()) => {
                        Outcome::Skip(format!(
                            "{reader} drops the fused line of {name}.jsonl and resumes with less; it resumes the repaired copy with the whole branch, as we read both"
                        ))
                    }
                    outcome => outcome,
                },
                (Err(e), _) | (_, Err(e)) => {
                    Outcome::Fail(format!("      {e}; run `cargo xtask record`\n"))
                }
            };
            report.record(&mut row, "same-context", reader, outcome);
        }
        report.push_row(row);
    }
    for reader in READERS {
        let recordings = pi_session_test_support::recordings(&dir.join(reader))?;
        for file in recordings {
            let scenario = pi_session_test_support::scenario_name(&file);
            if RESTORED.contains(&scenario.as_str())
                || only.is_some_and(|only| !scenario.contains(only))
            {
                continue;
            }
            let mut row = Row::new(format!("repair/{reader}"), scenario);
            recorded::check_recording(report, &mut row, &file, &dir);
            report.push_row(row);
        }
    }
    Ok(())
}

/// Our agent context (the file's dialect) of the session file at `path`, as JSON.
fn our_context(path: &Path) -> Result<Value, String> {
    let (file, _) = pi_session_store::open(path).map_err(|e| e.to_string())?;
    let view = pi_session_tree::SessionView::new(&file);
    let dialect = view.detect_dialect().map_err(|e| e.to_string())?;
    let options = pi_session_tree::ContextOptions { blobs: None };
    let resolved = view
        .context(&pi_session_tree::LeafSelector::Default, dialect, &options)
        .map_err(|e| e.to_string())?;
    serde_json::to_value(resolved.context).map_err(|e| e.to_string())
}

/// The recorded contexts of the default leaf (`agent` and `llm`), damaged against repaired.
fn same_contexts(before: &Value, after: &Value) -> Outcome {
    let leaf = |recording: &Value| -> Value {
        let contexts = recording["contexts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        contexts
            .into_iter()
            .next()
            .map(|c| serde_json::json!({"agent": c["agent"], "llm": c["llm"]}))
            .unwrap_or(Value::Null)
    };
    let (before, after) = (leaf(before), leaf(after));
    if before.is_null() {
        return Outcome::Fail("      the recording holds no context\n".to_owned());
    }
    compared(&before, &after)
}
