//! `pi-session stats`: counts, branches, compactions, usage totals and context size.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use pi_session::tree::{LeafSelector, Totals, UsageBreakdown};
use pi_session::types::view::EntryRef;
use pi_session::{ContextStats, from_pi_model};
use serde_json::{Value, json};

use crate::failure::{EXIT_OK, Outcome};
use crate::input;
use crate::output::Out;

// Arguments of `stats` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file (default: the most recent session of the current directory).
    pub file: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Everything `stats` reports.
struct Report {
    id: Option<String>,
    dialect: &'static str,
    title: Option<String>,
    entries: usize,
    by_type: BTreeMap<String, usize>,
    tips: usize,
    leaf: Option<String>,
    branch_len: usize,
    compactions: usize,
    compactions_on_branch: usize,
    model: Option<String>,
    totals: Totals,
    usage: UsageBreakdown,
    context: ContextStats,
    diagnostics: usize,
}

/// Runs `stats`: the file is opened once, for reading, through the facade
/// ([`pi_session::Session::read_in`]).
pub fn run(args: StatsArgs) -> Outcome {
    let read = input::read_session_from(&args.store, args.file)?;
    let session = &read.session;
    let dialect = session.dialect();
    // Streamed: the branch's bodies are read a chunk at a time, never held together.
    let (branch, tally, usage) = session.branch_tally_and_usage(&LeafSelector::Default)?;
    let leaf_entry = match branch.positions.last() {
        Some(&last) => session.values_at(&[last])?.pop(),
        None => None,
    };
    let by_type = session.count_by_type();
    let model = tally.model().map(|m| from_pi_model(&m));
    let context = super::manage::file_stats(session)?;
    let report = Report {
        id: session.header().map(|h| h.id),
        dialect: dialect.as_str(),
        title: session.name()?,
        entries: session.len(),
        // A count by entry type, not a field.
        compactions: by_type.get("compaction").copied().unwrap_or(0),
        by_type,
        tips: session.tips().len(),
        leaf: leaf_entry
            .as_ref()
            .and_then(|e| EntryRef::new(e).id())
            .map(str::to_owned),
        branch_len: branch.positions.len(),
        compactions_on_branch: tally.compactions,
        model,
        totals: tally.totals,
        usage,
        context,
        diagnostics: read.diagnostics.len(),
    };
    let mut out = Out::new();
    if args.json {
        out.json(&to_json(&report))?;
    } else {
        out.text(&to_text(&report))?;
    }
    out.flush()?;
    super::leave_to_exit(read);
    Ok(EXIT_OK)
}

fn to_json(report: &Report) -> Value {
    json!({
        "id": report.id,
        "dialect": report.dialect,
        "title": report.title,
        "entries": {"total": report.entries, "byType": report.by_type},
        "branches": {"tips": report.tips, "leafId": report.leaf, "branchLength": report.branch_len},
        "compactions": {"total": report.compactions, "onBranch": report.compactions_on_branch},
        "model": report.model,
        "totals": report.totals,
        "usage": report.usage,
        "context": super::manage::stats_json(&report.context),
        "diagnostics": report.diagnostics,
    })
}

fn to_text(report: &Report) -> String {
    let types: Vec<String> = report
        .by_type
        .iter()
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    let c = &report.context;
    let all = report.usage.total();
    let mut lines = vec![
        format!(
            "session      {} ({})",
            report.id.as_deref().unwrap_or("(no header)"),
            report.dialect
        ),
        format!(
            "title        {}",
            report
                .title
                .as_deref()
                .filter(|t| !t.is_empty())
                .unwrap_or("(untitled)")
        ),
        format!("entries      {} ({})", report.entries, types.join(", ")),
        format!(
            "branches     {} tip{}; leaf {} with {} entries on its branch",
            report.tips,
            if report.tips == 1 { "" } else { "s" },
            report.leaf.as_deref().unwrap_or("(none)"),
            report.branch_len
        ),
        format!(
            "compactions  {} ({} on the branch)",
            report.compactions, report.compactions_on_branch
        ),
        format!(
            "model        {}",
            report.model.as_deref().unwrap_or("(none named)")
        ),
        format!(
            "branch usage {} tokens, {} output, ${:.4}",
            report.totals.tokens, report.totals.output, report.totals.cost
        ),
        format!(
            "file usage   {} tokens, ${:.4} ({}, {}, {})",
            all.total_tokens,
            all.cost_total,
            counted(report.usage.assistant.count, "assistant turn"),
            counted(report.usage.nested_tools.count, "nested tool call"),
            counted(report.usage.side_calls.count, "side call")
        ),
    ];
    lines.extend(super::manage::stats_lines(c, super::manage::colour()));
    if report.diagnostics > 0 {
        lines.push(format!(
            "diagnostics  {} (run `pi-session check` to see them)",
            report.diagnostics
        ));
    }
    lines.join("\n") + "\n"
}

/// `1 side call`, `2 side calls`.
fn counted(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
