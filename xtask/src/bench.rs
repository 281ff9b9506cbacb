//! `cargo xtask bench [store|types|context|all] [options]`: run the benchmarks, print JSON, and write
//! the results to `bench-results/<name>.json`.
//!
//! xtask itself runs as a debug build (the `cargo xtask` alias), so it only orchestrates: each
//! benchmark's worker is an example of the crate it measures, built with `--release` and run as
//! a separate process per measurement, so peak memory (`VmHWM`) belongs to that measurement
//! alone.
//!
//! `bench types` lives in `bench_types.rs`, `bench context` in `bench_context.rs`, `bench export`
//! in `bench_export.rs`; `bench all` runs store, then types, then context, then export (the
//! options given apply to store only).
//!
//! `bench store` (worker: `crates/pi-session-store/examples/store_bench.rs`):
//! generates a session of `--size-mb` MiB (default 200; `--large`: 1024) in a temporary folder,
//! opens it `--runs` times (default 5; median reported), and times `--appends` appends (default
//! 2000) to a fresh file and to the big one. Then: the index's memory per entry for a 100,000-entry
//! chain (and for the big file, in `open`), peak memory for a million damaged `{}` lines against a
//! clean file of the same size, and 4 writers × 2,000 appends to one session with a busy timeout.
//! Targets: open under 250 ms, peak RSS under 100 MB, append time flat as the file grows, index
//! under 1 KB per entry, the 8,000 concurrent appends within 10 s.

use crate::util::{build_executable, cargo, workspace_root};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

const STORE_USAGE: &str =
    "usage: cargo xtask bench store [--size-mb N | --large] [--runs N] [--appends N]";

/// Runs `cargo xtask bench`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (which, rest) = match args.split_first() {
        Some((first, rest)) if !first.starts_with("--") => (first.as_str(), rest),
        _ => ("all", args),
    };
    match which {
        "store" => store(rest),
        "types" => crate::bench_types::run(rest),
        "context" => crate::bench_context::run(rest),
        "compare" => crate::bench_compare::run(rest),
        "export" => crate::bench_export::run(rest),
        "ls" | "usage" => crate::bench_sessions::run(which, rest),
        "budget" => crate::bench_budget::run(rest),
        "redis" => crate::bench_redis::run(rest),
        "all" => store(rest)
            .and_then(|()| crate::bench_types::run(&[]))
            .and_then(|()| crate::bench_context::run(&[]))
            .and_then(|()| crate::bench_export::run(&[])),
        other => Err(format!(
            "unknown benchmark `{other}` (store, types, context, compare, export, ls, usage, budget, redis or all)"
        )),
    }
}

/// Options of `bench store`.
struct StoreOptions {
    size_mb: u64,
    runs: u64,
    appends: u64,
}

fn parse_store_options(args: &[String]) -> Result<StoreOptions, String> {
    let mut options = StoreOptions {
        size_mb: 200,
        runs: 5,
        appends: 2000,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let text = args
                .next()
                .ok_or_else(|| format!("{name} needs a number\n{STORE_USAGE}"))?;
            text.parse()
                .map_err(|_| format!("{name} needs a number, not `{text}`\n{STORE_USAGE}"))
        };
        match arg.as_str() {
            "--size-mb" => options.size_mb = value("--size-mb")?,
            "--runs" => options.runs = value("--runs")?.max(1),
            "--appends" => options.appends = value("--appends")?.max(1),
            "--large" => options.size_mb = 1024,
            other => return Err(format!("unknown option `{other}`\n{STORE_USAGE}")),
        }
    }
    Ok(options)
}

/// Builds the store bench's worker (`store_bench`, release) and returns its path.
pub(crate) fn store_worker(root: &Path) -> Result<PathBuf, String> {
    build_executable(
        root,
        &[
            "--release",
            "-p",
            "pi-session-store",
            "--example",
            "store_bench",
        ],
        "store_bench",
    )
}

fn store(args: &[String]) -> Result<(), String> {
    let options = parse_store_options(args)?;
    let root = workspace_root();
    let worker = store_worker(&root)?;

    let scratch = std::env::temp_dir().join(format!("pi-session-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("could not create {}: {e}", scratch.display()))?;
    let session = scratch.join("bench.jsonl");
    let session_arg = session.to_string_lossy().into_owned();
    let result = (|| {
        let generated = run_worker(
            &worker,
            &["generate", &session_arg, &options.size_mb.to_string()],
        )?;
        let opened = run_worker(&worker, &["open", &session_arg, &options.runs.to_string()])?;
        let appended = run_worker(
            &worker,
            &["append", &session_arg, &options.appends.to_string()],
        )?;
        let file = |name: &str| scratch.join(name).to_string_lossy().into_owned();
        let chain = run_worker(&worker, &["chain", &file("chain.jsonl"), "100000"])?;
        let damaged = run_worker(&worker, &["damaged", &file("damaged.jsonl"), "1000000"])?;
        let damaged_bytes = damaged.get("bytes").and_then(Value::as_u64).unwrap_or(0);
        let clean = run_worker(
            &worker,
            &["clean", &file("clean.jsonl"), &damaged_bytes.to_string()],
        )?;
        let writers = run_worker(&worker, &["writers", &file("writers.jsonl"), "4", "2000"])?;
        let extra = json!({"chain": chain, "damaged": damaged, "clean": clean, "writers": writers});
        Ok::<_, String>((generated, opened, appended, extra))
    })();
    // The scratch folder holds hundreds of MB: always remove it.
    let _ = std::fs::remove_dir_all(&scratch);
    let (generated, opened, appended, extra) = result?;

    let number = |v: &Value, key: &str| v.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN);
    let open_ms = number(&opened, "open_ms_median");
    let rss = number(&opened, "peak_rss_mb");
    let ratio = number(&appended, "late_over_early_p50");
    let report = json!({
        "bench": "store",
        "machine": { "cores": std::thread::available_parallelism().map_or(1, |n| n.get()), "os": std::env::consts::OS },
        "size_mb": options.size_mb,
        "generate": generated,
        "open": opened,
        "append": appended,
        "index_100k_chain": extra["chain"],
        "damaged_million_lines": extra["damaged"],
        "clean_same_bytes": extra["clean"],
        "writers_4x2000": extra["writers"],
        "targets": {
            "open_ms_under": 250, "open_ok": open_ms < 250.0,
            "peak_rss_mb_under": 100, "rss_ok": rss < 100.0,
            "append_late_over_early_p50_under": 1.5, "append_flat_ok": ratio < 1.5,
            "index_bytes_per_entry_under": 1024,
            "index_ok": number(&extra["chain"], "index_bytes_per_entry") < 1024.0
                && number(&opened, "index_bytes_per_entry") < 1024.0,
            "writers_seconds_under": 10, "writers_ok": number(&extra["writers"], "seconds") < 10.0,
        },
    });
    write_results(&root, "store", &report)
}

/// Prints `report` as pretty JSON and writes it to `bench-results/<name>.json`.
pub(crate) fn write_results(root: &Path, name: &str, report: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    let out_dir = root.join("bench-results");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("could not create {}: {e}", out_dir.display()))?;
    let out = out_dir.join(format!("{name}.json"));
    std::fs::write(&out, format!("{text}\n"))
        .map_err(|e| format!("could not write {}: {e}", out.display()))?;
    println!("{text}");
    eprintln!("xtask: wrote {}", out.display());
    Ok(())
}

/// Runs the worker with `args` and parses the one JSON object it prints.
fn run_worker(worker: &Path, args: &[&str]) -> Result<Value, String> {
    let what = format!("{} {}", worker.display(), args.join(" "));
    eprintln!("xtask: running {what}");
    worker_output_json(Command::new(worker).args(args), &what)
}

/// Runs a benchmark worker process (`what` names it in errors) and parses the one JSON object
/// it prints on stdout; a failed run is an error carrying its stderr.
pub(crate) fn worker_output_json(worker: &mut Command, what: &str) -> Result<Value, String> {
    let output = worker
        .output()
        .map_err(|e| format!("could not start {what}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what} failed with {}:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| {
        format!(
            "{what} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// `cargo run --quiet --release --package <package>`, from the workspace root; the caller adds
/// the target (`--example`, `--`) and its arguments.
pub(crate) fn cargo_run_release(root: &Path, package: &str) -> Command {
    let mut command = cargo();
    command
        .current_dir(root)
        .args(["run", "--quiet", "--release", "--package", package]);
    command
}

/// The machine a result was measured on: CPU count, OS, architecture and rustc version.
pub(crate) fn machine() -> Value {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let rustc = Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    json!({"cpus": cpus, "os": std::env::consts::OS, "arch": std::env::consts::ARCH, "rustc": rustc})
}

/// Cargo's target folder: `CARGO_TARGET_DIR` when set, else `<workspace>/target`.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => root.join(dir),
        None => root.join("target"),
    }
}
