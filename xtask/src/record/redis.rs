//! omp keeping its sessions in Redis, recorded for `cargo xtask golden` (which needs neither
//! Redis nor node): starts a private `redis-server` (no persistence, on a free port of
//! 127.0.0.1), runs `xtask/recorder/redis-record.mjs` under the pinned bun — omp 18.2.3's own
//! `RedisSessionStorage` and `SessionManager` write and title sessions, then the script dumps
//! the keyspace and omp's answers — and stops the server. Writes `fixtures/redis/omp/`
//! (`keyspace.json`, `expected.json`).
//!
//! omp mints session ids, times and mtimes, so a re-recording is not byte-identical: `--check`
//! records (proving the recorder still runs) but does not compare bytes. Without `redis-server`
//! the step is skipped with a notice and the committed recording stays.

use super::{Scratch, replace_recorded_files};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` child on 127.0.0.1, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Result<Option<Self>, String> {
        if Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_err()
        {
            return Ok(None);
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("could not find a free port: {e}"))?
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("could not start redis-server: {e}"))?;
        let server = Self {
            child,
            url: format!("redis://127.0.0.1:{port}/0"),
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!("redis-server did not listen on port {port}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Some(server))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Best effort: the server is our child and holds nothing (no persistence).
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Records omp's Redis sessions into `fixtures/redis/omp/` (see the module docs).
pub(super) fn record(
    recorder: &Path,
    scratch: &Scratch,
    fixtures: &Path,
    check: bool,
) -> Result<(), String> {
    let Some(server) = Server::start()? else {
        eprintln!(
            "xtask: redis-server is not installed; omp's Redis sessions were not re-recorded"
        );
        return Ok(());
    };
    let out = scratch.fresh_dir("out-redis")?;
    let home = scratch.fresh_dir("home-redis")?;
    let bun = recorder.join("node_modules").join(".bin").join("bun");
    eprintln!(
        "xtask: recording omp's Redis sessions with {}",
        bun.display()
    );
    let status = Command::new(&bun)
        .current_dir(recorder)
        .args([
            "--no-install",
            "redis-record.mjs",
            &server.url,
            "omp:sessions:",
        ])
        .arg(&out)
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", home.join("agent"))
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("could not start {}: {e}", bun.display()))?;
    drop(server);
    if !status.success() {
        return Err(format!(
            "the Redis recorder failed ({status}); its output is above"
        ));
    }
    if check {
        eprintln!("xtask: omp's Redis sessions recorded (ids and times are omp's: not compared)");
        return Ok(());
    }
    let target = fixtures.join("redis").join("omp");
    std::fs::create_dir_all(&target)
        .map_err(|e| format!("could not create {}: {e}", target.display()))?;
    replace_recorded_files(&out, &target)
}
