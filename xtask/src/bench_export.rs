//! `cargo xtask bench export`: how long `pi-session export` takes to turn a large session into
//! its HTML page.
//!
//! ```text
//! cargo xtask bench export [--size-mb N] [--runs N]
//! ```
//!
//! The session is the context benchmark's generated file (`target/bench/session-<N>mb.jsonl`,
//! default 50 MB: the issue's "a 50 MB session exports in well under a second"). The release
//! `pi-session` binary is built, then run `--runs` times (default 5) as a fresh process each
//! (so every run pays for reading the file, parsing every entry, building the view model,
//! escaping it and writing the page, as a person running the command does). Results: the median
//! and every run's wall time, the input and page sizes, in `bench-results/export.json`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::json;

use crate::bench::{machine, write_results};
use crate::bench_context::{generated_session, size_and_runs};
use crate::util::{cargo, workspace_root};

const DEFAULT_SIZE_MB: u64 = 50;
const DEFAULT_RUNS: usize = 5;

/// Runs `cargo xtask bench export`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (size_mb, runs) = size_and_runs(args, "export", DEFAULT_SIZE_MB, DEFAULT_RUNS)?;
    let root = workspace_root();
    let session = generated_session(&root, size_mb)?;
    let status = cargo()
        .current_dir(&root)
        .args(["build", "--quiet", "--release", "-p", "pi-session-cli"])
        .status()
        .map_err(|e| format!("could not build the release pi-session: {e}"))?;
    if !status.success() {
        return Err(format!("building the release pi-session failed ({status})"));
    }
    let binary = root.join("target/release/pi-session");
    let page = root.join("target/bench/export.html");
    let mut times = Vec::new();
    for run in 0..runs {
        let started = Instant::now();
        let output = Command::new(&binary)
            .arg("export")
            .arg(&session)
            .arg("-o")
            .arg(&page)
            .output()
            .map_err(|e| format!("could not start {}: {e}", binary.display()))?;
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        if !output.status.success() {
            return Err(format!(
                "pi-session export failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        eprintln!("xtask: bench export run {}: {elapsed:.0} ms", run + 1);
        times.push(elapsed);
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or_default();
    let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let report = json!({
        "benchmark": "export",
        "file": session.file_name().map(|n| n.to_string_lossy().into_owned()),
        "file_bytes": size(&session),
        "page_bytes": size(&page),
        "runs": runs,
        "median_ms": median,
        "run_ms": times,
        "target_ms": 1000,
        "machine": machine(),
    });
    write_results(&root, "export", &report)
}
