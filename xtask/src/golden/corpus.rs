//! The real corpus (`../shared/corpus/real/*.jsonl`, relative to the workspace root; never
//! copied into the repository): every file opens, what we find in it matches the snapshot
//! pinned in `xtask/golden-snapshots/corpus/<file stem>.txt`, and the default branch projects
//! into every output format for both dialects.
//!
//! A snapshot holds the store's diagnostics (`file:line:offset: message`), the tree's
//! diagnostics for the default branch, and the size of each projection, so that a change in
//! what we read from a real file shows up as a reviewable text diff. `--bless` rewrites the
//! snapshots (and deletes those whose corpus file is gone); read the diff before committing.

use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use pi_session_context::projection::{Format, ProjectOptions, project};
use pi_session_store::SessionFile;
use pi_session_tree::{ContextOptions, Dialect, LeafSelector, SessionView};
use pi_session_types::to_js_string;
use serde_json::Value;

use super::report::{Outcome, Report, Row};

const GROUP: &str = "corpus";

/// The formats `context --format` offers, as (check name, format); `agent` is the tree's
/// `buildSessionContext`, the others go through `project`.
const FORMATS: [(&str, Option<Format>); 5] = [
    ("agent", None),
    ("llm", Some(Format::Llm)),
    ("req-llm", Some(Format::ReqLlm)),
    ("openai", Some(Format::OpenAi)),
    ("anthropic", Some(Format::Anthropic)),
];

/// Checks the corpus next to the workspace, if present.
pub fn check(
    report: &mut Report,
    root: &Path,
    bless: bool,
    only: Option<&str>,
) -> Result<(), String> {
    let corpus = root.join("../shared/corpus/real");
    let snapshots = root.join("xtask/golden-snapshots/corpus");
    let Ok(files) = corpus_files(&corpus) else {
        report.notice(format!(
            "the real corpus ({}) is absent; corpus checks skipped",
            corpus.display()
        ));
        return Ok(());
    };
    for file in &files {
        let stem = stem(file);
        if only.is_some_and(|only| !stem.contains(only)) {
            continue;
        }
        let mut row = Row::new(GROUP, stem.clone());
        if let Some(actual) = check_file(report, &mut row, file) {
            let snapshot = snapshots.join(format!("{stem}.txt"));
            check_snapshot(report, &mut row, &snapshot, &actual, bless)?;
        }
        report.push_row(row);
    }
    if only.is_none() {
        remove_orphans(report, &snapshots, &files, bless)?;
    }
    Ok(())
}

fn corpus_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::read_dir(dir)?;
    Ok(pi_session_test_support::files_ending_with(dir, ".jsonl"))
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Opens `file` and projects it; returns the snapshot text (`None` when it did not open).
fn check_file(report: &mut Report, row: &mut Row, file: &Path) -> Option<String> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (session, diagnostics) = match pi_session_store::open(file) {
        Ok(opened) => opened,
        Err(error) => {
            report.record(row, "open", "", Outcome::Fail(format!("      {error}\n")));
            return None;
        }
    };
    report.record(row, "open", "", Outcome::Pass);
    let view = SessionView::new(&session);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# {name}: what `cargo xtask golden` reads (rewrite with `cargo xtask golden --bless`)"
    );
    let detected = view
        .detect_dialect()
        .map_or_else(|e| format!("error: {e}"), |d| d.as_str().to_owned());
    let header = if session.header().is_some() {
        "yes"
    } else {
        "no"
    };
    let _ = writeln!(
        text,
        "entries: {}, header: {header}, version: {}, detected dialect: {detected}, leaf: {}",
        session.len(),
        session.file_version(),
        session.leaf_id().unwrap_or("none")
    );
    let _ = writeln!(text, "store diagnostics: {}", diagnostics.len());
    for d in &diagnostics {
        let _ = writeln!(text, "{name}:{}:{}: {}", d.line, d.byte_offset, d.message);
    }
    for dialect in [Dialect::PI, Dialect::OMP] {
        project_all(report, row, &view, dialect, &mut text);
    }
    Some(text)
}

/// Builds the default branch's context in every format for `dialect`, recording one check per
/// format and appending the sizes (and the tree's diagnostics) to the snapshot text.
fn project_all(
    report: &mut Report,
    row: &mut Row,
    view: &SessionView<'_, SessionFile>,
    dialect: Dialect,
    text: &mut String,
) {
    let what = dialect.as_str();
    let branch = match view.branch_entries(&LeafSelector::Default) {
        Ok((_, entries)) => entries,
        Err(error) => {
            report.record(
                row,
                "agent",
                what,
                Outcome::Fail(format!("      reading the branch failed: {error}\n")),
            );
            return;
        }
    };
    let _ = writeln!(text, "as {what}: branch of {} entries", branch.len());
    let mut sizes = Vec::new();
    for (check, format) in FORMATS {
        let attempt = catch_unwind(AssertUnwindSafe(|| match format {
            None => view
                .context(&LeafSelector::Default, dialect, &ContextOptions::default())
                .map(|resolved| {
                    let diagnostics: Vec<String> = resolved
                        .diagnostics
                        .iter()
                        .map(ToString::to_string)
                        .collect();
                    (resolved.context.to_value(), diagnostics)
                })
                .map_err(|e| e.to_string()),
            Some(format) => {
                let options = ProjectOptions {
                    dialect,
                    ..ProjectOptions::default()
                };
                Ok((project(&branch, format, &options).0, Vec::new()))
            }
        }));
        let outcome = match attempt {
            Err(panic) => Err(format!("panicked: {}", panic_text(panic.as_ref()))),
            Ok(Err(error)) => Err(error),
            Ok(Ok((value, diagnostics))) => {
                if check == "agent" {
                    let _ = writeln!(text, "  tree diagnostics: {}", diagnostics.len());
                    for d in diagnostics {
                        let _ = writeln!(text, "  tree: {d}");
                    }
                }
                messages_in(&value)
                    .ok_or_else(|| format!("unexpected output shape: {}", shape(&value)))
                    .and_then(|count| {
                        to_js_string(&value)
                            .map_err(|e| format!("cannot be written as JSON: {e}"))?;
                        Ok(count)
                    })
            }
        };
        match outcome {
            Ok(count) => {
                sizes.push(format!("{check} {count}"));
                report.record(row, check, what, Outcome::Pass);
            }
            Err(reason) => {
                sizes.push(format!("{check} FAILED"));
                report.record(row, check, what, Outcome::Fail(format!("      {reason}\n")));
            }
        }
    }
    let _ = writeln!(text, "  messages: {}", sizes.join(", "));
}

/// The number of messages of a projection: the array itself, or its `messages` array.
fn messages_in(value: &Value) -> Option<usize> {
    match value {
        Value::Array(items) => Some(items.len()),
        Value::Object(map) => map.get("messages").and_then(Value::as_array).map(Vec::len),
        _ => None,
    }
}

fn shape(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object without `messages`",
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_owned())
}

fn check_snapshot(
    report: &mut Report,
    row: &mut Row,
    snapshot: &Path,
    actual: &str,
    bless: bool,
) -> Result<(), String> {
    let pinned = std::fs::read_to_string(snapshot).ok();
    if pinned.as_deref() == Some(actual) {
        report.record(row, "snapshot", "", Outcome::Pass);
        return Ok(());
    }
    if bless {
        write_snapshot(snapshot, actual)?;
        eprintln!("xtask: blessed {}", snapshot.display());
        report.record(row, "snapshot", "", Outcome::Pass);
        return Ok(());
    }
    let text = match pinned {
        None => format!(
            "      no snapshot at {}; run `cargo xtask golden --bless` and review it\n",
            snapshot.display()
        ),
        Some(pinned) => format!(
            "{}      (if the change is intended: `cargo xtask golden --bless`, then review the diff)\n",
            line_diff(&pinned, actual)
        ),
    };
    report.record(row, "snapshot", "", Outcome::Fail(text));
    Ok(())
}

fn write_snapshot(path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The first lines that differ between the pinned snapshot and ours.
fn line_diff(pinned: &str, actual: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (pinned.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    let mut shown = 0;
    for i in 0..old.len().max(new.len()) {
        let (a, b) = (old.get(i), new.get(i));
        if a == b {
            continue;
        }
        if shown == 4 {
            let _ = writeln!(out, "      … more lines differ");
            break;
        }
        shown += 1;
        let _ = writeln!(out, "      line {}:", i + 1);
        let _ = writeln!(out, "        pinned: {}", a.copied().unwrap_or("(absent)"));
        let _ = writeln!(out, "        ours:   {}", b.copied().unwrap_or("(absent)"));
    }
    out
}

/// Snapshots whose corpus file is gone: a failure, or deleted with `--bless`.
fn remove_orphans(
    report: &mut Report,
    snapshots: &Path,
    files: &[PathBuf],
    bless: bool,
) -> Result<(), String> {
    let Ok(listing) = std::fs::read_dir(snapshots) else {
        return Ok(());
    };
    let stems: Vec<String> = files.iter().map(|f| stem(f)).collect();
    for path in listing.filter_map(|e| e.ok().map(|e| e.path())) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(snapshot_stem) = name.strip_suffix(".txt") else {
            continue;
        };
        if stems.iter().any(|s| s == snapshot_stem) {
            continue;
        }
        let mut row = Row::new(GROUP, snapshot_stem);
        if bless {
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
            eprintln!(
                "xtask: removed {} (its corpus file is gone)",
                path.display()
            );
        } else {
            let text = format!(
                "      {} has no corpus file any more; `--bless` removes it\n",
                path.display()
            );
            report.record(&mut row, "snapshot", "", Outcome::Fail(text));
            report.push_row(row);
        }
    }
    Ok(())
}
