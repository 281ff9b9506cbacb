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
//! escaping it and writing the page, as a person running the command does).
//!
//! Then `serve`'s list (the issue's "a folder of 1,000 sessions lists in under a second"):
//! `pi-session serve --port 0` over the `bench ls` generator's folder of 1,000 sessions
//! (`target/bench/sessions-1000/`), with `HOME` in a scratch folder so only that folder is
//! listed. Timed over 127.0.0.1, each request to the end of its body: the list page `/` (the
//! rows the page shows at once: name, first message, size, messages, model, status), cold
//! (the first request, every file read) and warm (cached), then `/api/sessions` (the details
//! the page fills in after: entries and cost, every file read whole) cold and warm.
//!
//! Results: the medians and every run's wall time, the input and page sizes, the serve timings
//! and the load average, in `bench-results/export.json`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::bench::{machine, write_results};
use crate::bench_context::{generated_session, size_and_runs};
use crate::bench_sessions::{build_cli, generate, load_average, median};
use crate::util::workspace_root;

const DEFAULT_SIZE_MB: u64 = 50;
const DEFAULT_RUNS: usize = 5;

/// Runs `cargo xtask bench export`.
pub fn run(args: &[String]) -> Result<(), String> {
    let (size_mb, runs) = size_and_runs(args, "export", DEFAULT_SIZE_MB, DEFAULT_RUNS)?;
    let root = workspace_root();
    let session = generated_session(&root, size_mb)?;
    let binary = build_cli(&root)?;
    let load_before = load_average();
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
    let median_ms = median(&times);
    let serve = serve_list(&root, &binary, runs)?;
    let size = |path: &Path| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let report = json!({
        "benchmark": "export",
        "file": session.file_name().map(|n| n.to_string_lossy().into_owned()),
        "file_bytes": size(&session),
        "page_bytes": size(&page),
        "runs": runs,
        "median_ms": median_ms,
        "run_ms": times,
        "target_ms": 1000,
        "serve_list_1000": serve,
        "machine": machine(),
        "load_average": {"before": load_before, "after": load_average()},
    });
    write_results(&root, "export", &report)
}

/// Sessions in `serve`'s list benchmark.
const SERVE_SESSIONS: usize = 1000;

/// `serve` over a folder of [`SERVE_SESSIONS`]: the list page and the details, cold and warm.
fn serve_list(root: &Path, binary: &Path, runs: usize) -> Result<Value, String> {
    let dir = root.join(format!("target/bench/sessions-{SERVE_SESSIONS}"));
    generate(&dir, SERVE_SESSIONS)?;
    let home = root.join("target/bench/home");
    std::fs::create_dir_all(&home)
        .map_err(|e| format!("could not create {}: {e}", home.display()))?;
    let (mut page_ms, mut page_cold, mut details_ms, mut details_cold) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut rows = 0;
    for _ in 0..runs {
        let mut server = Command::new(binary);
        // Only the generated folder: no agent's folder from the environment.
        for (key, _) in std::env::vars_os() {
            let name = key.to_string_lossy().into_owned();
            if ["PI_", "OMP_", "XDG_"].iter().any(|p| name.starts_with(*p)) {
                server.env_remove(&key);
            }
        }
        let mut server = server
            .args(["serve", "--port", "0"])
            .arg(&dir)
            .env("HOME", &home)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("could not start {} serve: {e}", binary.display()))?;
        let timed = (|| {
            // Kept open while serve runs, so its later lines never meet a closed pipe.
            let (address, _stdout) = served_address(server.stdout.take())?;
            let (cold, _) = timed_get(&address, "/")?;
            let (warm, _) = timed_get(&address, "/")?;
            let (details, body) = timed_get(&address, "/api/sessions")?;
            let (details_warm, _) = timed_get(&address, "/api/sessions")?;
            let listed: Value = serde_json::from_slice(&body)
                .map_err(|e| format!("/api/sessions gave no JSON: {e}"))?;
            Ok::<_, String>((cold, warm, details, details_warm, listed))
        })();
        let _ = server.kill();
        let _ = server.wait();
        let (cold, warm, details, details_warm, listed) = timed?;
        rows = listed["sessions"].as_array().map_or(0, Vec::len);
        page_cold.push(cold);
        page_ms.push(warm);
        details_cold.push(details);
        details_ms.push(details_warm);
    }
    if rows != SERVE_SESSIONS {
        return Err(format!("serve listed {rows} sessions of {SERVE_SESSIONS}"));
    }
    eprintln!(
        "xtask: bench export: serve lists {SERVE_SESSIONS} sessions in {:.0} ms cold, {:.0} ms warm",
        median(&page_cold),
        median(&page_ms)
    );
    Ok(json!({
        "sessions": rows,
        "list_page_cold_ms": {"median": median(&page_cold), "runs": page_cold},
        "list_page_warm_ms": {"median": median(&page_ms), "runs": page_ms},
        "details_cold_ms": {"median": median(&details_cold), "runs": details_cold},
        "details_warm_ms": {"median": median(&details_ms), "runs": details_ms},
        "target_ms": 1000,
    }))
}

/// The `host:port` `serve` prints on its first line (`serving http://127.0.0.1:N/ …`), and the
/// rest of its output (to keep open while it runs).
fn served_address(stdout: Option<ChildStdout>) -> Result<(String, BufReader<ChildStdout>), String> {
    let mut reader = BufReader::new(stdout.ok_or("serve has no stdout")?);
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .map_err(|e| format!("could not read serve's address: {e}"))?;
    let address = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .map(str::to_owned)
        .ok_or_else(|| format!("serve printed no address: {line}"))?;
    Ok((address, reader))
}

/// One `GET` over HTTP/1.1 (`Connection: close`), timed from connecting to the end of the body;
/// the body, after a check that the status is 200.
fn timed_get(address: &str, target: &str) -> Result<(f64, Vec<u8>), String> {
    let started = Instant::now();
    let mut stream =
        TcpStream::connect(address).map_err(|e| format!("could not connect to {address}: {e}"))?;
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("could not ask {address}{target}: {e}"))?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| format!("could not read {address}{target}: {e}"))?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    if !response.starts_with(b"HTTP/1.1 200") {
        return Err(format!(
            "{target} answered {}",
            String::from_utf8_lossy(&response[..response.len().min(200)])
        ));
    }
    let body = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(Vec::new(), |at| response[at + 4..].to_vec());
    Ok((elapsed, body))
}
