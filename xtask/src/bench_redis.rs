//! `cargo xtask bench redis`: sessions in Redis against the same sessions in files.
//!
//! ```text
//! cargo xtask bench redis [--sizes 5,50,200] [--sessions N] [--runs N]
//! ```
//!
//! Needs a Redis server: `PI_SESSION_TEST_REDIS` (a `redis://` URL, as the tests use) and
//! `redis-cli` to load it. Each run is a fresh process of the release `pi-session` binary:
//!
//! - open + context: `pi-session context FILE` on the generated session of each size (see
//!   `bench context`), and `pi-session context --store URL --prefix P FILE` on the same bytes
//!   stored as omp stores them (`<P>file:FILE`, its mtime in `<P>meta`);
//! - listing: `pi-session ls --store URL --prefix P --json` over `--sessions` (default 10,000)
//!   sessions of `bench ls`'s folder loaded under another prefix, beside `pi-session ls DIR
//!   --json` on the folder itself.
//!
//! Results (median and every run, in ms, Redis's median over the file's, and the load average
//! before and after) go to stdout and `bench-results/redis.json`. The keys are deleted afterwards.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;

use crate::bench::{machine, write_results};
use crate::bench_sessions::{build_cli, generate, load_average, median};
use crate::util::workspace_root;

const USAGE: &str = "usage: cargo xtask bench redis [--sizes 5,50,200] [--sessions N] [--runs N]";

/// Runs `cargo xtask bench redis`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (sizes, sessions, runs) = parse(args)?;
    let url = std::env::var("PI_SESSION_TEST_REDIS").map_err(|_| {
        "bench redis needs a server: start redis-server and set PI_SESSION_TEST_REDIS=redis://127.0.0.1:PORT/0".to_owned()
    })?;
    let root = workspace_root();
    let binary = build_cli(&root)?;
    let load_before = load_average();
    let prefix = format!("pi-session-bench:{}:", std::process::id());
    let mut cases = Vec::new();
    for size in sizes {
        let file = crate::bench_context::generated_session(&root, size)?;
        let key_path = format!("/bench/--w--/session-{size}mb.jsonl");
        load(
            &url,
            &prefix,
            &[(
                key_path.clone(),
                std::fs::read(&file).map_err(|e| e.to_string())?,
            )],
        )?;
        let from_file = time(&binary, &["context", &file.to_string_lossy()], runs)?;
        let from_redis = time(
            &binary,
            &["context", "--store", &url, "--prefix", &prefix, &key_path],
            runs,
        )?;
        cases.push(case(
            format!("open + context, {size} MB"),
            &from_file,
            &from_redis,
        ));
    }
    let dir = root.join(format!("target/bench/sessions-{sessions}"));
    generate(&dir, sessions)?;
    let list_prefix = format!("{prefix}list:");
    let mut files = Vec::new();
    for item in std::fs::read_dir(&dir).map_err(|e| e.to_string())? {
        let path = item.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            files.push((
                format!("/bench/--list--/{name}"),
                std::fs::read(&path).map_err(|e| e.to_string())?,
            ));
        }
    }
    load(&url, &list_prefix, &files)?;
    let from_redis = time(
        &binary,
        &["ls", "--store", &url, "--prefix", &list_prefix, "--json"],
        runs,
    )?;
    let from_files = time(&binary, &["ls", &dir.to_string_lossy(), "--json"], runs)?;
    cases.push(case(
        format!("ls, {} sessions", files.len()),
        &from_files,
        &from_redis,
    ));
    cleanup(&url, &prefix);
    let report = json!({
        "benchmark": "redis",
        "machine": machine(),
        "load_average": {"before": load_before, "after": load_average()},
        "cases": cases,
    });
    write_results(&root, "redis", &report)
}

/// One case: both medians, every run, and Redis's median over the file's.
fn case(name: String, file_ms: &[f64], redis_ms: &[f64]) -> serde_json::Value {
    let (file, redis) = (median(file_ms), median(redis_ms));
    eprintln!(
        "xtask: {name}: file {file:.0} ms, redis {redis:.0} ms (x{:.2})",
        redis / file
    );
    json!({
        "case": name,
        "file_ms": {"median": file, "runs": file_ms},
        "redis_ms": {"median": redis, "runs": redis_ms},
        "redis_over_file": redis / file,
    })
}

fn parse(args: &[String]) -> Result<(Vec<u64>, usize, usize), String> {
    let (mut sizes, mut sessions, mut runs) = (vec![5, 50, 200], 10_000, 3);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = |v: &str| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag} {v:?} is not a number\n{USAGE}"))
        };
        match flag.as_str() {
            "--sizes" => sizes = value.split(',').map(number).collect::<Result<_, _>>()?,
            "--sessions" => sessions = number(value)? as usize,
            "--runs" => runs = number(value)?.max(1) as usize,
            other => return Err(format!("unknown option `{other}`\n{USAGE}")),
        }
    }
    Ok((sizes, sessions, runs))
}

/// Stores each `(path, bytes)` as omp does, through `redis-cli --pipe`.
fn load(url: &str, prefix: &str, sessions: &[(String, Vec<u8>)]) -> Result<(), String> {
    let mut child = Command::new("redis-cli")
        .args(["-u", url, "--pipe"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("could not run redis-cli (install redis-tools): {e}"))?;
    let mut stdin = child.stdin.take().ok_or("redis-cli has no stdin")?;
    let mut resp = Vec::new();
    for (path, bytes) in sessions {
        command(
            &mut resp,
            &[b"SET", format!("{prefix}file:{path}").as_bytes(), bytes],
        );
        command(
            &mut resp,
            &[
                b"HSET",
                format!("{prefix}meta").as_bytes(),
                path.as_bytes(),
                b"1767225600000",
            ],
        );
        if resp.len() > 64 << 20 {
            stdin.write_all(&resp).map_err(|e| e.to_string())?;
            resp.clear();
        }
    }
    stdin.write_all(&resp).map_err(|e| e.to_string())?;
    drop(stdin);
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("redis-cli --pipe failed with {status}"));
    }
    Ok(())
}

fn command(out: &mut Vec<u8>, parts: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", parts.len()).as_bytes());
    for part in parts {
        out.extend_from_slice(format!("${}\r\n", part.len()).as_bytes());
        out.extend_from_slice(part);
        out.extend_from_slice(b"\r\n");
    }
}

fn time(binary: &Path, args: &[&str], runs: usize) -> Result<Vec<f64>, String> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let status = Command::new(binary)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("could not run {}: {e}", binary.display()))?;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        if !status.success() {
            return Err(format!("pi-session {args:?} failed with {status}"));
        }
    }
    Ok(times)
}

/// Deletes the bench's keys (best effort).
fn cleanup(url: &str, prefix: &str) {
    let script =
        "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 1";
    let _ = Command::new("redis-cli")
        .args(["-u", url, "EVAL", script, "0", &format!("{prefix}*")])
        .stdout(Stdio::null())
        .status();
}
