//! `pi-session usage`: input, output, cache tokens and cost across sessions, per day, week,
//! month, session, model or project, and in total ([`pi_session::usage_report`]: every entry of
//! every file counted once, as `stats` counts one file).

use std::path::PathBuf;

use clap::Args;
use pi_session::tree::{UsageBreakdown, UsageSums};
use pi_session::{GroupBy, UsageOptions, UsageReport, parse_report_date, usage_report_with};
use serde_json::{Value, json};

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input::session_files;
use crate::output::{Out, warn};
use crate::progress::Progress;

// Arguments of `usage` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Session files or folders (walked for `*.jsonl`). Default: every session under omp's and
    /// pi's session folders.
    pub dirs: Vec<PathBuf>,
    /// Group by day, week (starting Monday), month (all UTC), session, model or project.
    #[arg(long, value_parser = ["day", "week", "month", "session", "model", "project"])]
    pub by: Option<String>,
    /// Count only calls at or after this date (`YYYY-MM-DD`, UTC, or an ISO 8601 time).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Count only calls up to this date, inclusive (`YYYY-MM-DD`, UTC, or an ISO 8601 time).
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `usage`.
pub fn run(args: UsageArgs) -> Outcome {
    let date = |text: &Option<String>, flag: &str, end: bool| -> Result<Option<i64>, Failure> {
        text.as_deref()
            .map(|t| {
                parse_report_date(t, end).ok_or_else(|| {
                    Failure::new(format!(
                        "{flag} {t}: not a date; give YYYY-MM-DD or an ISO 8601 time"
                    ))
                })
            })
            .transpose()
    };
    let options = UsageOptions {
        by: args.by.as_deref().and_then(GroupBy::parse),
        since: date(&args.since, "--since", false)?,
        until: date(&args.until, "--until", true)?,
    };
    let files = session_files(&args.dirs)?;
    let progress = Progress::new(files.len(), "usage");
    let report = usage_report_with(&files, &options, &|path| {
        progress.step(&path.display().to_string());
    });
    progress.finish();
    for (path, error) in &report.unreadable {
        warn(&format!("{}: skipped: {error}", path.display()));
    }
    let mut out = Out::new();
    if args.json {
        out.json(&to_json(&report, &options))?;
    } else {
        out.text(&to_table(&report, &options))?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// One group's (or the total's) numbers for JSON: the sums of all three parts, and the parts.
fn sums_json(usage: &UsageBreakdown) -> Value {
    let all = usage.total();
    json!({
        "calls": all.count,
        "input": all.input,
        "output": all.output,
        "cacheRead": all.cache_read,
        "cacheWrite": all.cache_write,
        "totalTokens": all.total_tokens,
        "cost": all.cost_total,
        "parts": usage,
    })
}

fn to_json(report: &UsageReport, options: &UsageOptions) -> Value {
    let groups: Vec<Value> = report
        .groups
        .iter()
        .map(|(key, usage)| {
            let mut value = sums_json(usage);
            value["key"] = json!(key);
            value
        })
        .collect();
    json!({
        "by": options.by.map(GroupBy::as_str),
        "files": report.files,
        "skippedFiles": report.unreadable.len(),
        "damagedLines": report.damaged_lines,
        "groups": groups,
        "total": sums_json(&report.total),
    })
}

fn to_table(report: &UsageReport, options: &UsageOptions) -> String {
    let heading = options.by.map_or("", GroupBy::as_str);
    let mut rows = vec![[
        heading.to_owned(),
        "calls".to_owned(),
        "input".to_owned(),
        "output".to_owned(),
        "cache read".to_owned(),
        "cache write".to_owned(),
        "total tokens".to_owned(),
        "cost".to_owned(),
    ]];
    let row = |key: &str, sums: &UsageSums| {
        [
            key.to_owned(),
            sums.count.to_string(),
            tokens(sums.input),
            tokens(sums.output),
            tokens(sums.cache_read),
            tokens(sums.cache_write),
            tokens(sums.total_tokens),
            format!("${:.4}", sums.cost_total),
        ]
    };
    for (key, usage) in &report.groups {
        rows.push(row(key, &usage.total()));
    }
    rows.push(row("total", &report.total.total()));
    let widths: Vec<usize> = (0..8)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut text = String::new();
    for (i, cells) in rows.iter().enumerate() {
        if i + 1 == rows.len() && !report.groups.is_empty() {
            text.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * 7));
            text.push('\n');
        }
        let line: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, &w))| {
                if c == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        text.push_str(line.join("  ").trim_end());
        text.push('\n');
    }
    text.push_str(&format!(
        "{} file{}{}{}\n",
        report.files,
        if report.files == 1 { "" } else { "s" },
        if report.unreadable.is_empty() {
            String::new()
        } else {
            format!(", {} skipped (unreadable)", report.unreadable.len())
        },
        if report.damaged_lines == 0 {
            String::new()
        } else {
            format!(
                ", {} damaged line{} not counted (`pi-session check` shows them)",
                report.damaged_lines,
                if report.damaged_lines == 1 { "" } else { "s" }
            )
        }
    ));
    text
}

/// A token count with thousands separators (`1,234,567`).
fn tokens(value: f64) -> String {
    let whole = format!("{:.0}", value);
    let (sign, digits) = whole
        .strip_prefix('-')
        .map_or(("", whole.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}
