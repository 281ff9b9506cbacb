//! `pi-session check`: validate session files and folders of them.

use std::path::{Path, PathBuf};

use clap::Args;
use pi_session::Session;
use pi_session::store::{self, Diagnostic, Severity, Store};
use pi_session::tree::DiagnosticKind;
use serde::Serialize;
use serde_json::json;

use crate::failure::{EXIT_DAMAGED, EXIT_FAILED, EXIT_OK, Failure, Outcome};
use crate::output::Out;
use crate::progress::Progress;

/// How deep `check` goes into folders.
const MAX_DEPTH: usize = 16;

// Arguments of `check` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
#[command(
    after_help = "Exit status: 0 when every file is clean (notes such as \"migrated in memory\" \
    do not count), 1 when a file is damaged, 2 when a file cannot be read."
)]
pub struct CheckArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// Session files, or folders to search for `*.jsonl` files (recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Print one JSON report instead of `file:line:offset: message` lines.
    #[arg(long)]
    pub json: bool,
}

/// What `check` concluded about one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
enum Status {
    /// Nothing wrong (informational notes only, e.g. migrated in memory).
    Clean,
    /// Readable, with damaged or suspicious lines.
    Damaged,
    /// Could not be read at all.
    Unreadable,
}

impl Status {
    fn exit_code(self) -> u8 {
        match self {
            Self::Clean => EXIT_OK,
            Self::Damaged => EXIT_DAMAGED,
            Self::Unreadable => EXIT_FAILED,
        }
    }
}

/// One finding, for `--json`.
#[derive(Debug, Serialize)]
struct Finding {
    line: u64,
    offset: u64,
    severity: &'static str,
    kind: String,
    message: String,
}

/// The report on one file.
#[derive(Debug, Serialize)]
struct FileReport {
    path: PathBuf,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    diagnostics: Vec<Finding>,
    /// Diagnostics left out beyond the first few of each kind (each `omitted` finding says
    /// how many of which kind).
    omitted: u64,
}

/// Runs `check`. Exit 0: every file clean; 1: some file damaged; 2: some file unreadable.
pub fn run(args: CheckArgs) -> Outcome {
    // Files in argument order (a folder's files sorted in its place), and whether each exists.
    let mut targets: Vec<(PathBuf, bool)> = Vec::new();
    let store = args.store.open()?;
    for path in &args.paths {
        if !args.store.is_files() {
            // A keyed store has no folders to search: each PATH names a session.
            targets.push((path.clone(), true));
        } else if path.is_dir() {
            let mut files = Vec::new();
            collect(path, 0, &mut files)
                .map_err(|e| Failure::new(format!("could not search {}: {e}", path.display())))?;
            targets.extend(files.into_iter().map(|file| (file, true)));
        } else {
            targets.push((path.clone(), path.exists()));
        }
    }
    let progress = Progress::new(targets.len(), "checking");
    let mut out = Out::new();
    let mut reports = Vec::new();
    let count = targets.len();
    for (at, (path, exists)) in targets.into_iter().enumerate() {
        progress.step(&path.display().to_string());
        let report = if exists {
            let (report, session) = check_file(&store, &path);
            // The last file's session is left to the process's end; the others are dropped
            // here, so a folder of many files holds one at a time.
            if at + 1 == count {
                super::leave_to_exit(session);
            }
            report
        } else {
            FileReport {
                path,
                status: Status::Unreadable,
                error: Some("no such file or folder".to_owned()),
                diagnostics: Vec::new(),
                omitted: 0,
            }
        };
        if !args.json {
            progress.suspend(|| print_report(&mut out, &report))?;
        }
        reports.push(report);
    }
    progress.finish();
    let worst = reports
        .iter()
        .map(|r| r.status)
        .max()
        .unwrap_or(Status::Clean);
    let count = |status: Status| reports.iter().filter(|r| r.status == status).count();
    if args.json {
        out.json(&json!({
            "files": reports,
            "clean": count(Status::Clean),
            "damaged": count(Status::Damaged),
            "unreadable": count(Status::Unreadable),
        }))?;
    } else {
        out.line(&format!(
            "checked {} file{}: {} clean, {} damaged, {} unreadable",
            reports.len(),
            if reports.len() == 1 { "" } else { "s" },
            count(Status::Clean),
            count(Status::Damaged),
            count(Status::Unreadable)
        ))?;
    }
    out.flush()?;
    Ok(worst.exit_code())
}

/// Adds the `*.jsonl` files under `dir` (sorted, symlinked folders not followed).
fn collect(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut items: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    items.sort_by_key(std::fs::DirEntry::path);
    for item in items {
        let kind = item.file_type()?;
        let path = item.path();
        if kind.is_dir() && depth < MAX_DEPTH {
            collect(&path, depth + 1, files)?;
        } else if !kind.is_dir() && path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
    Ok(())
}

/// The report on the file at `path`, and the session read (none when it could not be read).
fn check_file(store: &Store, path: &Path) -> (FileReport, Option<Session>) {
    let (session, opened) = match Session::read_in(store, path, "unknown:unknown") {
        Ok(read) => read,
        Err(error) => {
            let report = FileReport {
                path: path.to_path_buf(),
                status: Status::Unreadable,
                error: Some(pi_session::error_chain(&error)),
                diagnostics: Vec::new(),
                omitted: 0,
            };
            return (report, None);
        }
    };
    let diagnostics = crate::input::file_diagnostics(opened);
    let mut findings: Vec<Finding> = diagnostics.iter().map(finding).collect();
    let omitted = diagnostics
        .iter()
        .map(|d| match d.kind {
            store::DiagnosticKind::Omitted { count, .. } => count,
            _ => 0,
        })
        .sum();
    let mut damaged = diagnostics
        .iter()
        .any(|d| d.severity() >= Severity::Warning);
    // Parent cycles are the resolver's finding (the store sees ids, not paths).
    for diagnostic in session.tree_diagnostics() {
        if diagnostic.tree().map(|d| d.kind) != Some(DiagnosticKind::Cycle) {
            continue;
        }
        findings.push(Finding {
            line: diagnostic.line().unwrap_or(0),
            offset: diagnostic.byte_offset().unwrap_or(0),
            severity: "warning",
            kind: diagnostic.name().to_owned(),
            message: diagnostic.message().to_owned(),
        });
        damaged = true;
    }
    let report = FileReport {
        path: path.to_path_buf(),
        status: if damaged {
            Status::Damaged
        } else {
            Status::Clean
        },
        error: None,
        diagnostics: findings,
        omitted,
    };
    (report, Some(session))
}

fn finding(diagnostic: &Diagnostic) -> Finding {
    Finding {
        line: diagnostic.line,
        offset: diagnostic.byte_offset,
        severity: match diagnostic.severity() {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        },
        kind: diagnostic.kind.name().to_owned(),
        message: diagnostic.message.clone(),
    }
}

fn print_report(out: &mut Out, report: &FileReport) -> Result<(), Failure> {
    if report.error.is_some() {
        return out.line(&human_error(report));
    }
    for finding in &report.diagnostics {
        out.line(&format!(
            "{}:{}:{}: {}",
            report.path.display(),
            finding.line,
            finding.offset,
            finding.message
        ))?;
    }
    Ok(())
}

fn human_error(report: &FileReport) -> String {
    format!(
        "{}: unreadable: {}",
        report.path.display(),
        report.error.as_deref().unwrap_or_default()
    )
}
