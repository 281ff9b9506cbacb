//! The differential recordings (the tree crate's `tests/differential.rs`, the context crate's
//! pi 1.6 `convertToLlm` test): what each implementation's own `buildSessionContext` returns for
//! session trees given as values rather than files, and pi 1.6's `convertToLlm` for a list of
//! messages. `xtask/recorder/differential.mjs` runs the real functions; this module owns the
//! inputs, which are the committed files themselves (the cases stay, each `expected` answer is
//! recorded again), and writes them back in the bytes they were committed with:
//!
//! | file | runtime | cases | written as |
//! |---|---|---|---|
//! | `tree/tests/data/omp-differential.json` | bun | random trees (a third malformed) | compact, no final newline |
//! | `tree/tests/data/pi-differential.json` | node | random trees (a third malformed) | compact, no final newline |
//! | `tree/tests/data/pi16-differential.json` | node | crafted per 1.6 rule | indented by one space, final newline |
//! | `context/tests/data/pi16_llm.expected.json` | node | `pi16_llm.input.json` | compact, final newline |
//!
//! The random trees were generated once by a seeded generator (formerly
//! `tree/tests/data/probe/gen.py`); they are data now, like a scenario's session file. A new case
//! is added by appending it to `cases` (without `expected`) and running `cargo xtask record`.

use std::fs;
use std::path::Path;

use serde::Serialize as _;
use serde_json::Value;

use super::{Implementation, Scratch, run_recorder};

/// How a recording file is laid out on disk (the bytes must stay as committed).
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// `JSON.stringify(value)` without a final newline.
    Compact,
    /// `JSON.stringify(value, null, 1)` and a final newline.
    Indented,
}

/// One `{"about", "cases": [{…, "expected"}]}` file.
struct CasesFile {
    implementation: Implementation,
    path: &'static str,
    layout: Layout,
}

const CASES: [CasesFile; 3] = [
    CasesFile {
        implementation: Implementation::Omp,
        path: "crates/pi-session-tree/tests/data/omp-differential.json",
        layout: Layout::Compact,
    },
    CasesFile {
        implementation: Implementation::Pi,
        path: "crates/pi-session-tree/tests/data/pi-differential.json",
        layout: Layout::Compact,
    },
    CasesFile {
        implementation: Implementation::Pi16,
        path: "crates/pi-session-tree/tests/data/pi16-differential.json",
        layout: Layout::Indented,
    },
];

/// omp resolves image frames from this folder (relative to the workspace root).
const OMP_BLOBS: &str = "crates/pi-session-tree/tests/data/blobs";
/// pi 1.6's `convertToLlm`: the input messages and the recorded answer.
const PI16_LLM_INPUT: &str = "crates/pi-session-context/tests/data/pi16_llm.input.json";
const PI16_LLM_EXPECTED: &str = "crates/pi-session-context/tests/data/pi16_llm.expected.json";

/// Re-records every differential file of the selected implementations; with `check`, compares
/// instead of writing and fails on any differing byte.
pub(super) fn record(
    recorder: &Path,
    scratch: &Scratch,
    root: &Path,
    implementations: &[Implementation],
    check: bool,
) -> Result<(), String> {
    let mut differences = Vec::new();
    for file in CASES
        .iter()
        .filter(|f| implementations.contains(&f.implementation))
    {
        let path = root.join(file.path);
        let fresh = record_cases(recorder, scratch, root, file, &path)?;
        settle(&path, &fresh, check, &mut differences)?;
    }
    if implementations.contains(&Implementation::Pi16) {
        let out = scratch.fresh_dir("differential-pi16-llm")?.join("llm.json");
        run_recorder(
            recorder,
            scratch,
            Implementation::Pi16,
            "differential.mjs",
            &[
                "llm".as_ref(),
                root.join(PI16_LLM_INPUT).as_os_str(),
                out.as_os_str(),
            ],
        )?;
        let mut fresh = super::read(&out)?;
        fresh.push(b'\n');
        settle(
            &root.join(PI16_LLM_EXPECTED),
            &fresh,
            check,
            &mut differences,
        )?;
    }
    if differences.is_empty() {
        return Ok(());
    }
    Err(format!(
        "re-recorded differential files differ from the committed ones:\n  {}\nRun `cargo xtask record` and review the diff if the change is intended.",
        differences.join("\n  ")
    ))
}

/// Runs the implementation over the file's cases and returns the file's new bytes.
fn record_cases(
    recorder: &Path,
    scratch: &Scratch,
    root: &Path,
    file: &CasesFile,
    path: &Path,
) -> Result<Vec<u8>, String> {
    let mut committed = read_json(path)?;
    let out = scratch
        .fresh_dir(&format!("differential-{}", file.implementation.name()))?
        .join("answers.json");
    let blobs = root.join(OMP_BLOBS);
    let mut args = vec!["context".as_ref(), path.as_os_str(), out.as_os_str()];
    if file.implementation == Implementation::Omp {
        args.push(blobs.as_os_str());
    }
    run_recorder(
        recorder,
        scratch,
        file.implementation,
        "differential.mjs",
        &args,
    )?;
    let answers = read_json(&out)?;
    let (Some(cases), Some(answers)) = (
        committed.get_mut("cases").and_then(Value::as_array_mut),
        answers.as_array(),
    ) else {
        return Err(format!(
            "{}: expected {{\"cases\": [...]}} and one answer per case",
            path.display()
        ));
    };
    if cases.len() != answers.len() {
        return Err(format!(
            "{}: {} cases but {} answers",
            path.display(),
            cases.len(),
            answers.len()
        ));
    }
    for (case, answer) in cases.iter_mut().zip(answers) {
        if let Some(case) = case.as_object_mut() {
            // Replacing keeps the key's place; a new case gets it last.
            case.insert("expected".to_owned(), answer.clone());
        }
    }
    write_layout(&committed, file.layout)
}

fn write_layout(value: &Value, layout: Layout) -> Result<Vec<u8>, String> {
    match layout {
        Layout::Compact => serde_json::to_vec(value).map_err(|e| e.to_string()),
        Layout::Indented => {
            let mut out = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
            let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
            value
                .serialize(&mut serializer)
                .map_err(|e| e.to_string())?;
            out.push(b'\n');
            Ok(out)
        }
    }
}

fn read_json(path: &Path) -> Result<Value, String> {
    serde_json::from_slice(&super::read(path)?)
        .map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// Writes `fresh` to `path`, or with `check` notes whether it differs.
fn settle(
    path: &Path,
    fresh: &[u8],
    check: bool,
    differences: &mut Vec<String>,
) -> Result<(), String> {
    if check {
        if fs::read(path).ok().as_deref() == Some(fresh) {
            eprintln!("xtask: {} re-recorded byte for byte", path.display());
        } else {
            differences.push(path.display().to_string());
        }
        return Ok(());
    }
    fs::write(path, fresh).map_err(|e| format!("could not write {}: {e}", path.display()))?;
    println!("differential: {}", path.display());
    Ok(())
}
