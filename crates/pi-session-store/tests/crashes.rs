//! Real crashes and faults, in child processes: `kill -9` in the middle of appends, and a disk
//! that fills up (`ulimit -f`). The file always opens, no line is fused or torn by an append,
//! every acknowledged entry is there, and a resumed writer continues cleanly.
//!
//! The normal test run does a few rounds; `cargo xtask soak` runs many (`PI_SESSION_SOAK_ROUNDS`).

use crate::common::{acked_id, entry, entry_ids};
use pi_session_store::{Durability, SessionWriter, WriterOptions, new_header, open};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const CHILD_ENV: &str = "PI_SESSION_STORE_TEST_CRASH_CHILD";
const CHILD_TEST: &str = "crashes::child_appends_until_stopped";

/// Rounds to run: a few normally, many under `cargo xtask soak`.
pub fn rounds(normal: usize) -> usize {
    std::env::var("PI_SESSION_SOAK_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(normal)
}

/// In a child process: resume the session named in the environment and append until killed or
/// until an append fails, printing `ACK <id>` after each append returns (and `FAILED <error>`).
#[test]
fn child_appends_until_stopped() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (path, durability) = spec.split_once('\n').unwrap();
    let durability = match durability {
        "fsync" => Durability::Fsync,
        _ => Durability::Flush,
    };
    let options = WriterOptions {
        durability,
        ..WriterOptions::default()
    };
    let (mut writer, _, _) = SessionWriter::open_for_append(path, options).unwrap();
    let mut out = std::io::stdout().lock();
    for i in 0u64.. {
        let body = "x".repeat((i as usize * 37) % 900);
        match writer.append(entry(
            "custom",
            &[("customType", json!("crash")), ("data", json!(body))],
        )) {
            Ok(written) => {
                use std::io::Write as _;
                writeln!(out, "ACK {}", written.id().unwrap()).unwrap();
                out.flush().unwrap();
            }
            Err(error) => {
                use std::io::Write as _;
                writeln!(out, "FAILED {error}").unwrap();
                out.flush().unwrap();
                return;
            }
        }
    }
}

fn child(path: &Path, durability: &str, shell_prefix: Option<&str>) -> std::process::Child {
    let exe = std::env::current_exe().unwrap();
    let mut command = match shell_prefix {
        Some(prefix) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("{prefix}; exec \"$0\" \"$@\""))
                .arg(exe);
            c
        }
        None => Command::new(exe),
    };
    command
        .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{}\n{durability}", path.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A session with one entry, ready to be resumed by children.
fn new_session(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("s.jsonl");
    let mut writer = SessionWriter::create_at(&path, new_header("/w"), WriterOptions::default());
    writer.append(entry("label", &[])).unwrap();
    path
}

/// The file opens with no damage, holds every acknowledged id, and a resumed writer appends
/// cleanly after it.
fn assert_sound(path: &Path, acked: &[String], round: usize) {
    let (session, diagnostics) = open(path).unwrap();
    // A killed append never leaves half a line: one write per line, cut back on error.
    assert!(diagnostics.is_empty(), "round {round}: {diagnostics:?}");
    let ids = entry_ids(&session);
    for id in acked {
        assert!(
            ids.contains(id.as_str()),
            "round {round}: acknowledged {id} is lost"
        );
    }
    let (mut writer, _, _) =
        SessionWriter::open_for_append(path, WriterOptions::default()).unwrap();
    let written = writer.append(entry("label", &[])).unwrap();
    drop(writer);
    let (session, diagnostics) = open(path).unwrap();
    assert!(
        diagnostics.is_empty(),
        "round {round} after resume: {diagnostics:?}"
    );
    assert_eq!(session.entry(session.len() - 1).unwrap(), written);
}

#[test]
fn kill_9_during_appends_loses_no_acknowledged_entry_and_resumes_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = new_session(dir.path());
    let mut acked_all = Vec::new();
    for round in 0..rounds(6) {
        let durability = if round % 2 == 0 { "flush" } else { "fsync" };
        let mut child = child(&path, durability, None);
        let stdout = BufReader::new(child.stdout.take().unwrap());
        // Kill after a varying number of acknowledged appends (mid-append, as often as not).
        let wanted = 5 + (round * 7) % 40;
        for line in stdout.lines() {
            let line = line.unwrap();
            if let Some(id) = acked_id(&line) {
                acked_all.push(id.to_owned());
                if acked_all.len() % wanted == 0 {
                    break;
                }
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_sound(&path, &acked_all, round);
    }
}

#[cfg(unix)]
#[test]
fn a_full_disk_fails_the_append_and_leaves_the_file_sound() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..rounds(2) {
        let path = new_session(dir.path());
        // File size limit: `ulimit -f` (512- or 1024-byte blocks); SIGXFSZ ignored, so the
        // write fails with EFBIG as on a full disk.
        let limit = 40 + round * 13;
        let mut child = child(
            &path,
            "flush",
            Some(&format!("trap '' XFSZ; ulimit -f {limit}")),
        );
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut acked = Vec::new();
        let mut failed = None;
        for line in stdout.lines() {
            let line = line.unwrap();
            if let Some(id) = acked_id(&line) {
                acked.push(id.to_owned());
            } else if let Some(error) = line.strip_prefix("FAILED ") {
                failed = Some(error.to_owned());
            }
        }
        child.wait().unwrap();
        let failed = failed.expect("the append past the limit fails");
        assert!(
            failed.contains("could not append"),
            "round {round}: {failed}"
        );
        assert!(!acked.is_empty());
        assert_sound(&path, &acked, round);
        std::fs::remove_file(&path).unwrap();
    }
}
