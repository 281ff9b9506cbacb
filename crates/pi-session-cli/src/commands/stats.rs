//! `pi-session stats`: counts, branches, compactions, usage totals and context size.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use pi_session::store::SessionFile;
use pi_session::tree::{LeafSelector, SessionView, Totals, UsageBreakdown};
use pi_session::{ContextStats, from_pi_model};
use serde_json::{Value, json};

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input;
use crate::output::Out;

/// Arguments of `stats`.
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

/// Runs `stats`.
pub fn run(args: StatsArgs) -> Outcome {
    let loaded = input::load_from(&args.store, args.file)?;
    let view = SessionView::new(&loaded.file);
    let index = view.index();
    let dialect = view.detect_dialect()?;
    // Streamed: the branch's bodies are read a chunk at a time, never held together.
    let (branch, tally) = view.branch_tally(&LeafSelector::Default)?;
    let usage = file_usage(&view)?;
    let mut by_type = BTreeMap::new();
    for node in index.nodes() {
        *by_type.entry(node.kind.clone()).or_insert(0) += 1;
    }
    let model = tally.model().map(|m| from_pi_model(&m));
    let context = super::manage::file_stats(&args.store.open()?, &loaded.path)?;
    let report = Report {
        id: loaded.file.header().map(|h| h.id.clone()),
        dialect: dialect.as_str(),
        title: view.name(dialect)?,
        entries: index.len(),
        by_type,
        tips: index.tips().len(),
        leaf: branch
            .positions
            .last()
            .and_then(|&p| index.node(p))
            .and_then(|n| n.id.clone()),
        branch_len: branch.positions.len(),
        compactions: index
            .nodes()
            .iter()
            .filter(|n| n.kind == "compaction")
            .count(),
        compactions_on_branch: tally.compactions,
        model,
        totals: tally.totals,
        usage,
        context,
        diagnostics: loaded.diagnostics.len(),
    };
    let mut out = Out::new();
    if args.json {
        out.json(&to_json(&report))?;
    } else {
        out.text(&to_text(&report))?;
    }
    out.flush()?;
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
        "context": report.context,
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

/// Entries read at a time for the file's usage, so that memory stays bounded by the branch.
const USAGE_CHUNK: usize = 4096;

/// The usage of every entry of the file, read a chunk at a time (the same sums as reading the
/// whole file at once).
fn file_usage(view: &SessionView<'_, SessionFile>) -> Result<UsageBreakdown, Failure> {
    let all: Vec<usize> = (0..view.index().len()).collect();
    let mut usage = UsageBreakdown::default();
    for chunk in all.chunks(USAGE_CHUNK) {
        usage.add_entries(&view.load(chunk)?);
    }
    Ok(usage)
}
