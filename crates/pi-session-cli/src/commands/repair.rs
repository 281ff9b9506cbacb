//! `pi-session repair FILE`: replace a damaged session file with a clean copy, keeping the
//! original as `FILE.bak`.
//!
//! The rules (what is removed, split or kept) are the store's (`pi_session_store::repair`);
//! this module only runs it and reports.

use std::path::PathBuf;

use clap::Args;
use pi_session::store::{self, RepairedFile, StoreError};
use serde_json::json;

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::output::Out;

// Arguments of `repair` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
#[command(
    after_help = "Removes torn fragments and lines that are not JSON, splits fused lines, and \
    keeps every other line byte for byte; duplicate ids are reported, not changed. The original \
    is kept as FILE.bak and the file is replaced atomically. Refused while a writer holds the \
    session. Exit status: 0 done (or nothing to do), 2 refused or failed."
)]
pub struct RepairArgs {
    /// The session file to repair.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print one JSON report.
    #[arg(long)]
    pub json: bool,
    /// How long to wait for a writer to close the session (0: refuse at once).
    #[arg(long, value_name = "SECONDS", default_value_t = super::write::DEFAULT_WAIT_SECONDS)]
    pub wait: f64,
}

/// Runs `repair`.
pub fn run(args: RepairArgs) -> Outcome {
    let waiting = super::write::busy_timeout(args.wait);
    let repaired =
        store::repair_file_waiting(&args.file, waiting).map_err(|error| match error {
            StoreError::Locked { .. } => Failure::new(format!(
                "{error}; a writer has this session open: close it (or let it finish), then repair \
             (--wait SECONDS to wait longer)"
            )),
            StoreError::AlreadyExists { path } => Failure::new(format!(
                "{} already exists (an earlier backup): move it away, then run repair again",
                path.display()
            )),
            other => Failure::from(other),
        })?;
    let mut out = Out::new();
    if args.json {
        out.json(&report_json(&args, &repaired))?;
    } else {
        print_human(&mut out, &args, &repaired)?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

fn duplicate_ids(repaired: &RepairedFile) -> impl Iterator<Item = &store::Diagnostic> {
    repaired
        .diagnostics
        .iter()
        .filter(|d| matches!(d.kind, store::DiagnosticKind::DuplicateId { .. }))
}

fn report_json(args: &RepairArgs, repaired: &RepairedFile) -> serde_json::Value {
    let repair = &repaired.repair;
    json!({
        "path": args.file,
        "changed": repair.changed(),
        "backup": repaired.backup,
        "removed_lines": repair.removed_lines,
        "removed_bytes": repair.removed_bytes,
        "split_lines": repair.split_lines,
        "changes": repair.changes.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "omitted": repair.omitted,
        "duplicate_ids": duplicate_ids(repaired).map(ToString::to_string).collect::<Vec<_>>(),
        "remaining": repaired.diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

fn print_human(out: &mut Out, args: &RepairArgs, repaired: &RepairedFile) -> Result<(), Failure> {
    let path = args.file.display();
    let repair = &repaired.repair;
    for change in &repair.changes {
        out.line(&format!(
            "{path}:{}:{}: {}",
            change.line, change.byte_offset, change.action
        ))?;
    }
    if repair.omitted > 0 {
        out.line(&format!("{path}: and {} more changes", repair.omitted))?;
    }
    for duplicate in duplicate_ids(repaired) {
        out.line(&format!(
            "{path}:{}:{}: {} (left as it is)",
            duplicate.line, duplicate.byte_offset, duplicate.message
        ))?;
    }
    match &repaired.backup {
        Some(backup) => out.line(&format!(
            "repaired {path}: {} line{} removed ({} bytes), {} fused line{} split; the original is {}",
            repair.removed_lines,
            if repair.removed_lines == 1 { "" } else { "s" },
            repair.removed_bytes,
            repair.split_lines,
            if repair.split_lines == 1 { "" } else { "s" },
            backup.display()
        )),
        None => out.line(&format!("{path} needs no repair; it was not changed")),
    }
}
