//! The types benchmark's worker: `cargo run --release -p pi-session-types --example types_bench
//! -- [--runs N] <file.jsonl>...` (default: every file of `../shared/corpus/real`).
//!
//! Measures, over all lines of the given files (best of `runs` passes, default 5):
//! `parse_envelope` (the store's hot path), `parse_line` (full typed view), a plain
//! `serde_json::Value` parse for reference, and `to_js_vec` of every typed line.
//! Prints one JSON object on stdout (throughput in MB of input per second).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a benchmark tool"
)]

use pi_session_types::{parse_envelope, parse_line, to_js_vec};
use std::path::PathBuf;
use std::time::Instant;

fn best_of(runs: usize, mut pass: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::INFINITY;
    let mut count = 0;
    for _ in 0..runs {
        let start = Instant::now();
        count = std::hint::black_box(pass());
        best = best.min(start.elapsed().as_secs_f64());
    }
    (best, count)
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 5;
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        runs = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .expect("--runs N");
        args.drain(i..i + 2);
    }
    let mut files: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
    if files.is_empty() {
        let dir = pi_session_test_support::corpus_dir("real")
            .unwrap_or_else(|| panic!("no corpus; pass files explicitly"));
        files = pi_session_test_support::files_ending_with(&dir, ".jsonl");
    }
    let mut data = Vec::new();
    for file in &files {
        data.extend(std::fs::read(file).unwrap());
        if !data.ends_with(b"\n") {
            data.push(b'\n');
        }
    }
    let lines: Vec<&[u8]> = data
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let megabytes = data.len() as f64 / 1e6;

    let (envelope_s, envelopes) = best_of(runs, || {
        lines.iter().filter(|l| parse_envelope(l).is_ok()).count()
    });
    let (parse_s, parsed_ok) = best_of(runs, || {
        let mut ok = 0;
        for line in &lines {
            if let Ok(parsed) = parse_line(line) {
                std::hint::black_box(parsed);
                ok += 1;
            }
        }
        ok
    });
    let (value_s, _) = best_of(runs, || {
        lines
            .iter()
            .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
            .count()
    });
    let typed: Vec<_> = lines.iter().filter_map(|l| parse_line(l).ok()).collect();
    let (write_s, written) = best_of(runs, || {
        typed
            .iter()
            .map(|p| to_js_vec(&p.value).unwrap().len())
            .sum()
    });
    let report = serde_json::json!({
        "bench": "types",
        "files": files.len(),
        "bytes": data.len(),
        "lines": lines.len(),
        "lines_ok": parsed_ok,
        "envelopes_ok": envelopes,
        "runs": runs,
        "parse_envelope_mb_s": megabytes / envelope_s,
        "parse_line_mb_s": megabytes / parse_s,
        "serde_json_value_mb_s": megabytes / value_s,
        "to_js_vec_mb_s": written as f64 / 1e6 / write_s,
    });
    println!("{report}");
}
