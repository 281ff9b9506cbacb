//! `cargo xtask bench ls` and `cargo xtask bench usage`: commands across many sessions.
//!
//! ```text
//! cargo xtask bench ls    [--sessions N] [--runs N]
//! cargo xtask bench usage [--sessions N] [--runs N]
//! ```
//!
//! Both generate (once, reused while the count matches) a folder of `--sessions` pi session
//! files (default 10,000) under `target/bench/sessions-N/`: most of a few KiB with 4 to 40
//! messages, one in fifty named with `session_info`, one in a hundred of about 1 MiB (bigger
//! than the summary windows). Each run is a fresh process of the release `pi-session` binary,
//! timed from start to exit with its output discarded:
//!
//! - `ls`: `pi-session ls DIR --json`, side by side with pi 0.73.1's `SessionManager.list`
//!   (node) and omp 18.2.3's (bun) on the same folder (`xtask/recorder/bench-list.mjs`, timed
//!   in-process, so the runtime's start-up is not counted against them). The report also says
//!   how many sessions each listed and how many of pi's name / first message / message count
//!   ours agree with (message counts only where ours read the whole file).
//! - `usage`: `pi-session usage DIR --json` (every line of every file is read), side by side
//!   with pi 0.73.1 parsing every file (`parseSessionEntries`) and summing its assistant turns'
//!   usage; the report says whether the two totals agree.
//!
//! The machine's load average (1, 5, 15 minutes) is recorded before and after: on a shared
//! machine the ratio between the columns of one run is the figure to read.
//!
//! Results (median and every run, in ms) go to stdout and `bench-results/{ls,usage}.json`.
//! `PI_NODE_MODULES` points the pi side at another `node_modules` holding pi 0.73.1;
//! `PI_SESSION_BENCH_BIN` at an already built release `pi-session`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::bench::{machine, worker_output_json, write_results};
use crate::util::{build_executable, workspace_root};

const USAGE: &str = "usage: cargo xtask bench ls|usage [--sessions N] [--runs N]";

/// Runs `cargo xtask bench ls` (`usage == false`) or `bench usage`.
pub fn run(which: &str, args: &[String]) -> Result<(), String> {
    let (sessions, runs) = parse(args)?;
    let root = workspace_root();
    let dir = root.join(format!("target/bench/sessions-{sessions}"));
    generate(&dir, sessions)?;
    let binary = build_cli(&root)?;
    let (command, name): (Vec<&str>, &str) = match which {
        "ls" => (vec!["ls"], "ls"),
        _ => (vec!["usage"], "usage"),
    };
    let load_before = load_average();
    let mut ours = Vec::new();
    let mut last_stdout = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let output = Command::new(&binary)
            .args(&command)
            .arg(&dir)
            .arg("--json")
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("could not run {}: {e}", binary.display()))?;
        ours.push(start.elapsed().as_secs_f64() * 1000.0);
        if !output.status.success() {
            return Err(format!("pi-session {name} failed with {}", output.status));
        }
        last_stdout = output.stdout;
    }
    let mut report = json!({
        "benchmark": name,
        "machine": machine(),
        "sessions": sessions,
        "folder_mb": folder_mb(&dir),
        "ours_ms": {"median": median(&ours), "runs": ours},
    });
    let theirs = |runner: &str, imp: &str| js_side(&root, runner, imp, which, &dir, runs);
    if which == "ls" {
        let listed: Value = serde_json::from_slice(&last_stdout)
            .map_err(|e| format!("pi-session ls printed no JSON: {e}"))?;
        report["pi"] = pi_list(&theirs("node", "pi")?, &listed);
        let omp = theirs("bun", "omp")?;
        report["omp"] = json!({
            "runtime": omp["runtime"],
            "ms": {"median": median(&times_of(&omp)), "runs": omp["times"]},
            "sessions_listed": omp["sessions"].as_array().map_or(0, Vec::len),
        });
    } else {
        let totals: Value = serde_json::from_slice(&last_stdout)
            .map_err(|e| format!("pi-session usage printed no JSON: {e}"))?;
        report["total"] = totals["total"].clone();
        let pi = theirs("node", "pi")?;
        let ours = &totals["total"]["parts"]["assistant"];
        let same = |mine: &str, their: &str| ours[mine].as_f64() == pi["total"][their].as_f64();
        let close = (ours["costTotal"].as_f64().unwrap_or(f64::NAN)
            - pi["total"]["cost"].as_f64().unwrap_or(f64::NAN))
        .abs()
            < 1e-6;
        report["pi"] = json!({
            "runtime": pi["runtime"],
            "ms": {"median": median(&times_of(&pi)), "runs": pi["times"]},
            "total": pi["total"],
            "agree": same("count", "calls") && same("input", "input") && same("output", "output")
                && same("cacheRead", "cacheRead") && same("cacheWrite", "cacheWrite") && close,
        });
    }
    report["load_average"] = json!({"before": load_before, "after": load_average()});
    write_results(&root, name, &report)
}

/// The machine's load average (1, 5 and 15 minutes) from `/proc/loadavg`, where there is one.
pub(crate) fn load_average() -> Value {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            let figures: Vec<f64> = text
                .split_whitespace()
                .take(3)
                .filter_map(|f| f.parse().ok())
                .collect();
            json!(figures)
        })
        .unwrap_or(Value::Null)
}

/// `bench-list.mjs IMPL MODE DIR RUNS` under `runner` (`node` from PATH, or the pinned `bun`),
/// with `HOME` in a scratch folder so that nothing of the user's agents is read or written.
fn js_side(
    root: &Path,
    runner: &str,
    imp: &str,
    which: &str,
    dir: &Path,
    runs: usize,
) -> Result<Value, String> {
    let recorder = root.join("xtask/recorder");
    let program = match runner {
        "bun" => recorder.join("node_modules/.bin/bun"),
        other => PathBuf::from(other),
    };
    let mode = if which == "ls" { "list" } else { "usage" };
    let home = root.join("target/bench/home");
    std::fs::create_dir_all(&home)
        .map_err(|e| format!("could not create {}: {e}", home.display()))?;
    worker_output_json(
        Command::new(program)
            .current_dir(&recorder)
            .env("HOME", &home)
            .arg(recorder.join("bench-list.mjs"))
            .args([imp, mode])
            .arg(dir)
            .arg(runs.to_string()),
        &format!(
            "{imp}'s {mode} ({runner}; the pinned packages must be installed: cargo xtask record)"
        ),
    )
}

fn times_of(side: &Value) -> Vec<f64> {
    side["times"]
        .as_array()
        .map(|t| t.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

fn parse(args: &[String]) -> Result<(usize, usize), String> {
    let (mut sessions, mut runs) = (10_000, 5);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .and_then(|v| v.parse::<usize>().ok())
            .ok_or_else(|| format!("{arg} needs a number\n{USAGE}"))?;
        match arg.as_str() {
            "--sessions" => sessions = value.max(1),
            "--runs" => runs = value.max(1),
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        }
    }
    Ok((sessions, runs))
}

/// Builds the release `pi-session` binary and returns its path (`PI_SESSION_BENCH_BIN` names an
/// already built one instead, e.g. on a busy machine).
pub(crate) fn build_cli(root: &Path) -> Result<PathBuf, String> {
    if let Some(binary) = std::env::var_os("PI_SESSION_BENCH_BIN") {
        return Ok(PathBuf::from(binary));
    }
    build_executable(
        root,
        &["--quiet", "--release", "--package", "pi-session-cli"],
        "pi-session",
    )
}

/// pi's `SessionManager.list` (as `bench-list.mjs` printed it), and how far it agrees with ours.
fn pi_list(pi: &Value, ours: &Value) -> Value {
    let times = times_of(pi);
    let ours_by_path: std::collections::HashMap<&str, &Value> = ours["folders"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["sessions"].as_array().into_iter().flatten())
        .filter_map(|s| Some((s["path"].as_str()?, s)))
        .collect();
    let pi_sessions = pi["sessions"].as_array().cloned().unwrap_or_default();
    let (mut names, mut firsts, mut counts, mut exact) = (0, 0, 0, 0);
    for theirs in &pi_sessions {
        let Some(mine) = theirs["path"].as_str().and_then(|p| ours_by_path.get(p)) else {
            continue;
        };
        names += usize::from(mine["name"] == theirs["name"]);
        let first = mine["firstMessage"].as_str().unwrap_or("(no messages)");
        firsts += usize::from(theirs["firstMessage"] == first);
        if mine["messageCountExact"] == true {
            exact += 1;
            counts += usize::from(mine["messageCount"] == theirs["messageCount"]);
        }
    }
    json!({
        "runtime": pi["runtime"],
        "ms": {"median": median(&times), "runs": times},
        "sessions_listed": {"pi": pi_sessions.len(), "ours": ours_by_path.len()},
        "agree": {
            "name": names,
            "first_message": firsts,
            "message_count": counts,
            "of_exact_counts": exact,
        },
    })
}

pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

fn folder_mb(dir: &Path) -> f64 {
    let bytes: u64 = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    (bytes as f64 / 1_048_576.0 * 10.0).round() / 10.0
}

/// A deterministic pseudo-random sequence (xorshift), so every run generates the same folder.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Writes `count` pi sessions into `dir`, unless a marker says it already holds them.
pub(crate) fn generate(dir: &Path, count: usize) -> Result<(), String> {
    let marker = dir.join(".generated");
    if marker.exists() {
        return Ok(());
    }
    eprintln!("xtask: generating {count} sessions in {}", dir.display());
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let words = [
        "fix",
        "the",
        "build",
        "session",
        "tree",
        "branch",
        "why",
        "does",
        "parser",
        "fail",
        "refactor",
        "module",
        "add",
        "tests",
        "for",
        "compaction",
        "usage",
        "cost",
        "model",
    ];
    let base_ms: u64 = 1_767_225_600_000; // 2026-01-01
    for n in 0..count {
        let start = base_ms + n as u64 * 600_000;
        let id = format!("0190{n:08x}-bench-7000-8000-{n:012x}");
        let mut text = json_line(&json!({"type":"session","version":3,"id":id,
            "timestamp":iso(start),"cwd":format!("/work/project-{}", n % 7)}));
        let big = n % 100 == 99;
        let messages = if big { 900 } else { 4 + rng.below(37) };
        let mut parent: Option<String> = None;
        for m in 0..messages {
            let at = start + m * 1000;
            let entry_id = format!("{:08x}", (n as u64) << 16 | m);
            let sentence: Vec<&str> = (0..8 + rng.below(40))
                .map(|_| words[rng.below(words.len() as u64) as usize])
                .collect();
            let mut body = sentence.join(" ");
            if big {
                body = body.repeat(12);
            }
            let message = if m % 2 == 0 {
                json!({"role":"user","content":[{"type":"text","text":body}],"timestamp":at})
            } else {
                let input = 500 + rng.below(5000);
                let output = 50 + rng.below(800);
                json!({"role":"assistant","content":[{"type":"text","text":body}],
                    "api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",
                    "usage":{"input":input,"output":output,"cacheRead":0,"cacheWrite":0,
                        "totalTokens":input+output,"cost":{"input":input as f64 * 3e-6,
                        "output":output as f64 * 1.5e-5,"cacheRead":0,"cacheWrite":0,
                        "total":input as f64 * 3e-6 + output as f64 * 1.5e-5}},
                    "stopReason":"stop","timestamp":at})
            };
            text += &json_line(&json!({"type":"message","id":entry_id,"parentId":parent,
                "timestamp":iso(at),"message":message}));
            if m == 2 && n % 50 == 0 {
                let info_id = format!("{:08x}", (n as u64) << 16 | 0xffff);
                text += &json_line(&json!({"type":"session_info","id":info_id,
                    "parentId":entry_id,"timestamp":iso(at),"name":format!("Session {n}")}));
                parent = Some(info_id);
                continue;
            }
            parent = Some(entry_id);
        }
        let path = dir.join(format!("{n:05}_{id}.jsonl"));
        std::fs::write(&path, text)
            .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    }
    std::fs::write(&marker, count.to_string()).map_err(|e| e.to_string())
}

fn json_line(value: &Value) -> String {
    format!("{value}\n")
}

fn iso(ms: u64) -> String {
    pi_session_types::js::iso_from_ms(i64::try_from(ms).unwrap_or(i64::MAX))
}
