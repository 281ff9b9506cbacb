//! `kill -9` of a writer process in the middle of an append loop against the real Redis server
//! (`PI_SESSION_TEST_REDIS`; skipped with a notice without one, required in CI): every
//! acknowledged entry is there, at most the in-flight line is missing (Redis runs each append
//! script whole or not at all, and drops a request whose client died half-way through sending
//! it), the session opens without damage, and the next append starts on a new line.

use crate::common::{acked_id, entry, entry_ids, redis_store};
use crate::crashes::rounds;
use pi_session_store::{RedisOptions, RedisStore, Store, WriterOptions, new_header};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const CHILD_ENV: &str = "PI_SESSION_STORE_TEST_REDIS_CRASH_CHILD";
const CHILD_TEST: &str = "redis_crashes::child_appends_to_redis_until_killed";
const PATH: &str = "/home/u/.omp/agent/sessions/--w--/2026-01-01T00-00-00-000Z_kill.jsonl";

/// In a child process: resume the session in the Redis named by the environment (`URL\nPREFIX`)
/// and append until killed, printing `ACK <id>` after each append returns. Bodies grow up to
/// ~256 KiB so that a kill often lands while a request is still being sent.
#[test]
fn child_appends_to_redis_until_killed() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (url, prefix) = spec.split_once('\n').unwrap();
    let options = RedisOptions {
        prefix: prefix.to_owned(),
        ..RedisOptions::default()
    };
    let store = Store::keyed(RedisStore::connect(url, options).unwrap());
    let (mut writer, _, _) = store
        .open_for_append(Path::new(PATH), WriterOptions::default())
        .unwrap();
    let mut out = std::io::stdout().lock();
    for i in 0usize.. {
        let body = "x".repeat((i * 7919) % (256 * 1024));
        let written = writer
            .append(entry(
                "custom",
                &[("customType", json!("kill")), ("data", json!(body))],
            ))
            .unwrap();
        use std::io::Write as _;
        writeln!(out, "ACK {}", written.id().unwrap()).unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn kill_9_during_redis_appends_tears_nothing_and_the_next_append_starts_a_new_line() {
    let Some((store, prefix)) = redis_store() else {
        return;
    };
    let url = std::env::var("PI_SESSION_TEST_REDIS").unwrap();
    let mut writer = store.create_at(Path::new(PATH), new_header("/w"), WriterOptions::default());
    writer.append(entry("label", &[])).unwrap();
    drop(writer);
    let exe = std::env::current_exe().unwrap();
    let mut acked = Vec::new();
    for round in 0..rounds(4) {
        let mut child = Command::new(&exe)
            .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, format!("{url}\n{prefix}"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Kill after a varying number of acknowledged appends, while the next is in flight.
        let wanted = 3 + (round * 5) % 17;
        let mut seen = 0;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(id) = acked_id(&line) {
                acked.push(id.to_owned());
                seen += 1;
                if seen == wanted {
                    break;
                }
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(seen, wanted, "round {round}: the child stopped early");
        // The child went on appending until the kill landed: what it acknowledged meanwhile is
        // still in the pipe (each ACK line is one write, well under PIPE_BUF, so none is torn).
        for line in lines {
            if let Some(id) = acked_id(&line.unwrap()) {
                acked.push(id.to_owned());
            }
        }

        let (session, diagnostics) = store.open(Path::new(PATH)).unwrap();
        assert!(diagnostics.is_empty(), "round {round}: {diagnostics:?}");
        let ids = entry_ids(&session);
        for id in &acked {
            assert!(ids.contains(id.as_str()), "round {round}: {id} is lost");
        }
        // At most the in-flight append landed beyond what was acknowledged.
        assert!(
            session.len() <= 1 + acked.len() + round + 1,
            "round {round}: {} entries for {} acknowledged",
            session.len(),
            acked.len()
        );
        let (mut writer, _, _) = store
            .open_for_append(Path::new(PATH), WriterOptions::default())
            .unwrap();
        let written = writer.append(entry("label", &[])).unwrap();
        drop(writer);
        let (session, diagnostics) = store.open(Path::new(PATH)).unwrap();
        assert!(
            diagnostics.is_empty(),
            "round {round} after: {diagnostics:?}"
        );
        assert_eq!(
            session.entry(session.len() - 1).unwrap(),
            written,
            "round {round}: the next append reads back whole, on its own line"
        );
        // The resumed writer's label counts as an entry beyond the acknowledged ones.
        acked.push(written.id().unwrap().to_owned());
    }
}
