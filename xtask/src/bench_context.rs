//! `cargo xtask bench context`: how long, how much memory and how many allocations projecting
//! the context of a large session takes.
//!
//! ```text
//! cargo xtask bench context [--size-mb N] [--runs N]
//! ```
//!
//! The session is the store benchmark's: written by the store's own generator
//! (`cargo run --release -p pi-session-store --example store_bench -- generate FILE MB`, default
//! 200 MB) into `target/bench/`, and reused while its size fits. The measuring runs in a release
//! build of xtask in a child process (`bench context --worker FILE RUNS`), so its peak RSS is
//! that of the measurement alone. For two leaves (the default leaf, whose branch is the whole
//! file, and the entry in the middle of the file, whose branch is half of it) and both dialects
//! it times each step and counts its allocations:
//!
//! 1. `open`: the store reads the file into envelopes (no body is parsed);
//! 2. `index`: the tree index from those envelopes;
//! 3. `branch`: the branch walk and reading the bodies on it (and only those);
//! 4. `agent_context`: the dialect's `buildSessionContext`;
//! 5. `llm`: the dialect's `convertToLlm`;
//! 6. `req_llm`: rho's req_llm projection of the branch.
//!
//! Results (medians over the runs, plus every run's total) are JSON on stdout and in
//! `bench-results/context.json`: per case the entry count, `bodies_read` (the bodies read: those
//! on the branch, as `open` parses envelopes only), the message counts, each step's median time,
//! allocation count and allocated bytes (of the last run), and the worker's peak RSS.
//!
//! Unlike the store benchmark, whose worker is an example of the store crate, the worker here
//! is xtask itself: the counting allocator is xtask's, and the crates measured stay free of it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use mimalloc::MiMalloc;
use pi_session_context::llm_messages;
use pi_session_context::projection::{Format, ProjectOptions, project};
use pi_session_tree::{ContextOptions, Dialect, LeafSelector, SessionView, agent_context};
use serde_json::{Value, json};
use stats_alloc::{Region, StatsAlloc};

use crate::bench::{cargo_run_release, machine, worker_output_json, write_results};
use crate::util::workspace_root;

/// Counts every allocation of the xtask process (a few atomic additions per allocation; the
/// other commands do not notice). `stats_alloc` holds the one `unsafe impl GlobalAlloc`. The
/// allocator under the count is the CLI's (mimalloc), so that the workers' in-process figures
/// (`bench compare`'s open + context, the host loop) are the CLI's work without its process.
#[global_allocator]
static ALLOCATOR: StatsAlloc<MiMalloc> = StatsAlloc::new(MiMalloc);

const DEFAULT_SIZE_MB: u64 = 200;
const DEFAULT_RUNS: usize = 3;

/// Runs `cargo xtask bench context`.
pub fn run(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("--worker") {
        let [file, runs, leaf, dialect] = args
            .get(1..5)
            .and_then(|a| <&[String; 4]>::try_from(a).ok())
            .ok_or("usage: bench context --worker FILE RUNS default|middle pi|omp")?;
        let runs = runs.parse().map_err(|_| "RUNS must be a number")?;
        let dialect = Dialect::parse(dialect).ok_or("the dialect must be pi, pi16 or omp")?;
        println!(
            "{}",
            measure_case(Path::new(file), runs, leaf == "middle", dialect)?
        );
        return Ok(());
    }
    let (size_mb, runs) = size_and_runs(args, "context", DEFAULT_SIZE_MB, DEFAULT_RUNS)?;
    let root = workspace_root();
    let session = generated_session(&root, size_mb)?;
    let file_bytes = std::fs::metadata(&session)
        .map_err(|e| format!("{}: {e}", session.display()))?
        .len();
    eprintln!(
        "xtask: measuring context projection of {} ({runs} runs per case, release build)",
        session.display()
    );
    let mut cases = Vec::new();
    for leaf in ["default", "middle"] {
        for dialect in ["pi", "omp"] {
            cases.push(run_worker(&root, &session, runs, leaf, dialect)?);
        }
    }
    let mut result = json!({
        "benchmark": "context",
        "file": session.file_name().map(|n| n.to_string_lossy().into_owned()),
        "file_bytes": file_bytes,
        "runs": runs,
        "steps": STEPS,
        "cases": cases,
    });
    result["machine"] = machine();
    write_results(&root, "context", &result)
}

/// One case in its own release-built process, so that its peak RSS is its own.
fn run_worker(
    root: &Path,
    session: &Path,
    runs: usize,
    leaf: &str,
    dialect: &str,
) -> Result<Value, String> {
    eprintln!("xtask: bench context: {leaf} leaf, {dialect}");
    worker_output_json(
        cargo_run_release(root, "xtask")
            .args(["--", "bench", "context", "--worker"])
            .arg(session)
            .args([runs.to_string().as_str(), leaf, dialect]),
        "the benchmark worker",
    )
}

/// `[--size-mb N] [--runs N]` of `cargo xtask bench <name>` (context, export), with defaults.
pub(crate) fn size_and_runs(
    args: &[String],
    name: &str,
    default_size_mb: u64,
    default_runs: usize,
) -> Result<(u64, usize), String> {
    let (mut size_mb, mut runs) = (default_size_mb, default_runs);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or(format!("{name} needs a number"))
        };
        match arg.as_str() {
            "--size-mb" => size_mb = value("--size-mb")?.max(1),
            "--runs" => runs = usize::try_from(value("--runs")?.max(1)).unwrap_or(default_runs),
            other => {
                return Err(format!(
                    "unknown argument `{other}`\nusage: cargo xtask bench {name} [--size-mb N] [--runs N]"
                ));
            }
        }
    }
    Ok((size_mb, runs))
}

/// The benchmark session of `size_mb`, generated by the store benchmark's generator unless a
/// file of that size is already there (the generator is deterministic).
pub(crate) fn generated_session(root: &Path, size_mb: u64) -> Result<PathBuf, String> {
    let dir = root.join("target").join("bench");
    let file = dir.join(format!("session-{size_mb}mb.jsonl"));
    let wanted = size_mb << 20;
    let present = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    if present >= wanted && present < wanted + (4 << 20) {
        return Ok(file);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    eprintln!("xtask: generating the {size_mb} MB benchmark session with the store's generator");
    let status = cargo_run_release(root, "pi-session-store")
        .args(["--example", "store_bench", "--", "generate"])
        .arg(&file)
        .arg(size_mb.to_string())
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("could not start the store benchmark's generator: {e}"))?;
    if status.success() {
        Ok(file)
    } else {
        Err(format!("generating {} failed ({status})", file.display()))
    }
}

/// Allocation counts of one step.
#[derive(Debug, Clone, Copy, Default)]
struct Allocations {
    count: usize,
    bytes: usize,
}

/// One timed step: milliseconds and allocations.
#[derive(Debug, Clone, Copy, Default)]
struct Step {
    ms: f64,
    allocations: Allocations,
}

/// Runs `work`, timing it and counting its allocations.
fn step<T>(work: impl FnOnce() -> T) -> (T, Step) {
    let region = Region::new(&ALLOCATOR);
    let started = Instant::now();
    let value = work();
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let stats = region.change();
    let allocations = Allocations {
        count: stats.allocations + stats.reallocations,
        bytes: stats.bytes_allocated + stats.bytes_reallocated.max(0) as usize,
    };
    (value, Step { ms, allocations })
}

const STEPS: [&str; 6] = ["open", "index", "branch", "agent_context", "llm", "req_llm"];

/// What one run of one case measured, step by step (in [`STEPS`] order).
#[derive(Debug, Default)]
struct Run {
    steps: Vec<Step>,
    entries: usize,
    branch_entries: usize,
    agent_messages: usize,
    llm_messages: usize,
    req_llm_messages: usize,
}

fn measure_case(file: &Path, runs: usize, middle: bool, dialect: Dialect) -> Result<Value, String> {
    let measured: Vec<Run> = (0..runs)
        .map(|_| run_once(file, dialect, middle))
        .collect::<Result<_, _>>()?;
    let mut case = summarise(
        if middle { "middle" } else { "default" },
        dialect,
        &measured,
    );
    case["peak_rss_mb"] = json!(peak_rss_mb());
    Ok(case)
}

fn run_once(file: &Path, dialect: Dialect, middle: bool) -> Result<Run, String> {
    let mut run = Run::default();
    let (opened, open) = step(|| pi_session_store::open(file));
    let (session, _diagnostics) = opened.map_err(|e| e.to_string())?;
    run.entries = session.len();
    let (view, index) = step(|| SessionView::new(&session));
    let leaf = if middle {
        let at = session.len() / 2;
        LeafSelector::Id(
            view.index()
                .node(at)
                .and_then(|n| n.id)
                .map(str::to_owned)
                .ok_or("the middle entry has no id")?,
        )
    } else {
        LeafSelector::Default
    };
    let (walked, branch) = step(|| view.branch_entries(&leaf));
    let (_, entries) = walked.map_err(|e| e.to_string())?;
    run.branch_entries = entries.len();
    let ((context, _), agent) =
        step(|| agent_context(&entries, dialect, &ContextOptions::default()));
    run.agent_messages = context.messages().len();
    let (llm, convert) = step(|| llm_messages(context.messages(), dialect));
    run.llm_messages = llm.len();
    drop(llm);
    let options = ProjectOptions {
        dialect,
        ..ProjectOptions::default()
    };
    let ((req_llm, _), projection) = step(|| project(&entries, Format::ReqLlm, &options));
    run.req_llm_messages = req_llm.as_array().map_or(0, Vec::len);
    run.steps = vec![open, index, branch, agent, convert, projection];
    Ok(run)
}

fn summarise(leaf: &str, dialect: Dialect, runs: &[Run]) -> Value {
    let mut steps = serde_json::Map::new();
    for (i, name) in STEPS.iter().enumerate() {
        let times: Vec<f64> = runs.iter().map(|r| r.steps[i].ms).collect();
        let allocations = runs
            .last()
            .map(|r| r.steps[i].allocations)
            .unwrap_or_default();
        steps.insert(
            (*name).to_owned(),
            json!({"ms_median": median(times), "allocations": allocations.count, "allocated_bytes": allocations.bytes}),
        );
    }
    let totals: Vec<f64> = runs
        .iter()
        .map(|r| r.steps.iter().map(|s| s.ms).sum())
        .collect();
    let first = runs.first();
    json!({
        "leaf": leaf,
        "dialect": dialect.as_str(),
        "entries": first.map_or(0, |r| r.entries),
        "branch_entries": first.map_or(0, |r| r.branch_entries),
        "bodies_read": first.map_or(0, |r| r.branch_entries),
        "agent_messages": first.map_or(0, |r| r.agent_messages),
        "llm_messages": first.map_or(0, |r| r.llm_messages),
        "req_llm_messages": first.map_or(0, |r| r.req_llm_messages),
        "total_ms_runs": totals,
        "total_ms_median": median(totals.clone()),
        "steps": steps,
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Peak resident memory of this process in MiB (`VmHWM`; 0 where /proc is absent).
pub(crate) fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}
