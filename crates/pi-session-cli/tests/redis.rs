//! Sessions in Redis, side by side with the real omp: omp 18.2.3's own `RedisSessionStorage`
//! and `SessionManager` (under bun, `xtask/recorder/redis-omp.mjs`) and this CLI (`--store`)
//! read and write the same keys on a live server.
//!
//! Needs a Redis server (`PI_SESSION_TEST_REDIS=redis://127.0.0.1:PORT/0`; `.ci/run` starts
//! one, and with `CI=true` its absence fails these tests) and the recorder's node_modules (bun
//! and omp; without them each test prints SKIPPED).

use crate::common::{js_equal, json, root, run};
use pi_session::store::{RedisOptions, RedisStore, Store, StoreError, WriterOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

struct Omp {
    bun: PathBuf,
    script: PathBuf,
    url: String,
    prefix: String,
    home: tempfile::TempDir,
}

impl Omp {
    /// The server and omp, under a fresh key prefix; `None` (with a notice) when either is
    /// missing outside CI.
    fn find() -> Option<Self> {
        let ci = std::env::var("CI").as_deref() == Ok("true");
        let Ok(url) = std::env::var("PI_SESSION_TEST_REDIS") else {
            assert!(
                !ci,
                "PI_SESSION_TEST_REDIS is not set: .ci/run starts redis-server and sets it"
            );
            println!(
                "SKIPPED: no Redis test server (set PI_SESSION_TEST_REDIS=redis://127.0.0.1:PORT/0)"
            );
            return None;
        };
        let recorder = root().join("xtask/recorder");
        let bun = recorder.join("node_modules/.bin/bun");
        if !bun.is_file()
            || !recorder
                .join("node_modules/@oh-my-pi/pi-coding-agent")
                .is_dir()
        {
            println!(
                "SKIPPED: omp Redis interop needs bun and omp in {}",
                recorder.display()
            );
            return None;
        }
        static N: AtomicU32 = AtomicU32::new(0);
        let prefix = format!(
            "pi-session-cli-test:{}:{}:",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        Some(Self {
            bun,
            script: recorder.join("redis-omp.mjs"),
            url,
            prefix,
            home: tempfile::tempdir().unwrap(),
        })
    }

    /// Runs an omp command of redis-omp.mjs; its JSON.
    fn run(&self, args: &[&str]) -> Value {
        let output = Command::new(&self.bun)
            .arg("--no-install")
            .arg(&self.script)
            .arg(&self.url)
            .arg(&self.prefix)
            .args(args)
            // omp keeps pins and history under HOME: a fresh one per test.
            .env("HOME", self.home.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "omp {args:?} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
            .unwrap_or_else(|e| panic!("omp {args:?} printed no JSON ({e}): {stdout}"))
    }

    /// Runs `pi-session COMMAND --store URL --prefix P ARGS...`.
    fn ours(&self, command: &str, args: &[&str]) -> crate::common::Output {
        let mut all = vec![command, "--store", &self.url, "--prefix", &self.prefix];
        all.extend_from_slice(args);
        run(&all)
    }

    fn store(&self) -> Store {
        let options = RedisOptions {
            prefix: self.prefix.clone(),
            ..RedisOptions::default()
        };
        Store::keyed(RedisStore::connect(&self.url, options).unwrap())
    }

    /// omp writes a session of `turns` turns titled `title` in DIR; its path.
    fn write(&self, turns: &str, title: &str) -> (String, Value) {
        let written = self.run(&["write", DIR, "/work/project", turns, title]);
        (written["path"].as_str().unwrap().to_owned(), written)
    }
}

const DIR: &str = "/home/u/.omp/agent/sessions/--work-project--";

/// Our `context` (the whole `SessionContext`) against omp's `buildSessionContext().messages`.
fn assert_same_context(ours: &Value, omp: &Value) {
    let ours = &ours["messages"];
    assert!(
        js_equal(ours, omp),
        "our context:\n{ours:#}\nomp's:\n{omp:#}"
    );
}

#[test]
fn omp_writes_and_titles_we_read_the_same_context_and_list_it_as_its_picker_does() {
    let Some(omp) = Omp::find() else { return };
    let (path, written) = omp.write("3", "Redis title");
    let context = omp.ours("context", &[&path]);
    assert_eq!(context.code, 0, "{context}");
    assert_same_context(&json(&context), &written["context"]);

    let check = omp.ours("check", &[&path]);
    assert_eq!(check.code, 0, "{check}");

    let (other, _) = omp.write("1", "");
    let listed = omp.ours("ls", &[DIR, "--json"]);
    assert_eq!(listed.code, 0, "{listed}");
    let ours: Vec<(String, Value)> = json(&listed)["folders"][0]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap().to_owned(), s["title"].clone()))
        .collect();
    let picker = omp.run(&["list", DIR]);
    let theirs: Vec<(String, Value)> = picker["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["path"].as_str().unwrap().to_owned(), s["title"].clone()))
        .collect();
    assert_eq!(
        ours, theirs,
        "ls --store lists what omp's picker lists, in its order"
    );
    assert!(ours.iter().any(|(p, t)| *p == path && t == "Redis title"));
    assert!(ours.iter().any(|(p, _)| *p == other));
}

#[test]
fn we_append_and_title_and_omp_resumes_with_the_context_we_predict() {
    let Some(omp) = Omp::find() else { return };
    let (path, _) = omp.write("1", "");
    let appended = omp.ours("append", &[&path, "--user", "from the Rust host", "--json"]);
    assert_eq!(appended.code, 0, "{appended}");
    let named = omp.ours("append", &[&path, "--name", "Named in Rust"]);
    assert_eq!(named.code, 0, "{named}");

    let predicted = json(&omp.ours("context", &[&path]));
    let resumed = omp.run(&["resume", &path]);
    assert_same_context(&predicted, &resumed["context"]);
    assert_eq!(resumed["title"], "Named in Rust");
    assert!(
        predicted.to_string().contains("from the Rust host"),
        "{predicted}"
    );
}

#[test]
fn omp_and_we_append_concurrently_and_nothing_is_lost_or_fused() {
    let Some(omp) = Omp::find() else { return };
    let (path, _) = omp.write("1", "");
    let store = omp.store();
    let before = store.open(Path::new(&path)).unwrap().0.len();

    const EACH: usize = 200;
    let theirs = std::thread::scope(|scope| {
        let omp_side = scope.spawn(|| omp.run(&["append", &path, &EACH.to_string(), "omp"]));
        let options = WriterOptions {
            busy_timeout: Some(Duration::from_secs(10)),
            title_slot: true,
            ..WriterOptions::default()
        };
        let (mut writer, _, _) = store.open_for_append(Path::new(&path), options).unwrap();
        for i in 0..EACH {
            let entry = pi_session::user(&format!("rust {i}"), pi_session::UserOptions::new());
            writer.append(entry).unwrap();
        }
        omp_side.join().unwrap()
    });
    assert_eq!(theirs["appended"], EACH);

    let (session, diagnostics) = store.open(Path::new(&path)).unwrap();
    assert!(
        diagnostics.is_empty(),
        "no torn or fused line: {diagnostics:?}"
    );
    assert_eq!(
        session.len(),
        before + 2 * EACH,
        "every entry of both writers is there"
    );
    let text: String = session
        .entries()
        .unwrap()
        .iter()
        .map(|e| pi_session::types::to_js_string(e).unwrap())
        .collect();
    for i in 0..EACH {
        assert!(text.contains(&format!("\"rust {i}\"")), "rust {i} lost");
        assert!(text.contains(&format!("\"omp {i}\"")), "omp {i} lost");
    }
    let resumed = omp.run(&["resume", &path]);
    assert_eq!(
        resumed["entries"],
        session.len(),
        "omp reads every entry back"
    );
}

#[test]
fn an_omp_rewrite_under_our_writer_is_a_conflict() {
    let Some(omp) = Omp::find() else { return };
    let (path, _) = omp.write("1", "");
    let store = omp.store();
    let (mut writer, _, _) = store
        .open_for_append(Path::new(&path), WriterOptions::default())
        .unwrap();
    let entry = || pi_session::user("after the rewrite", pi_session::UserOptions::new());
    writer.append(entry()).unwrap();
    omp.run(&["rewrite", &path]);
    let before = store.open(Path::new(&path)).unwrap().0.byte_len();
    let err = writer.append(entry()).unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert_eq!(
        store.open(Path::new(&path)).unwrap().0.byte_len(),
        before,
        "nothing written"
    );
}

#[test]
fn fork_to_another_key_and_export_read_from_the_store() {
    let Some(omp) = Omp::find() else { return };
    let (path, written) = omp.write("2", "Forked");
    let to = format!("{DIR}/fork.jsonl");
    let fork = omp.ours("fork", &[&path, "--to", &to, "--json"]);
    assert_eq!(fork.code, 0, "{fork}");
    assert_eq!(json(&fork)["path"], to.as_str());
    let resumed = omp.run(&["resume", &to]);
    assert!(
        js_equal(&resumed["context"], &written["context"]),
        "omp reads the fork as the original"
    );
    for command in ["tree", "cat", "stats"] {
        let output = omp.ours(command, &[&to]);
        assert_eq!(output.code, 0, "{command}: {output}");
    }
    let page = tempfile::tempdir().unwrap();
    let out = page.path().join("page.html");
    let export = omp.ours("export", &[&path, "--output", out.to_str().unwrap()]);
    assert_eq!(export.code, 0, "{export}");
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("omp answer 1")
    );
}

#[test]
fn bad_store_urls_say_what_to_do_and_never_print_the_password() {
    let output = run(&[
        "cat",
        "--store",
        "redis://u:hunter2@127.0.0.1:1/0",
        "/x.jsonl",
    ]);
    assert_eq!(output.code, 2, "{output}");
    assert!(!output.stderr.contains("hunter2"), "{output}");
    assert!(
        output.stderr.contains("redis://u:***@127.0.0.1:1/0"),
        "{output}"
    );
    let tls = run(&["ls", "--store", "rediss://u:hunter2@127.0.0.1:1/0"]);
    assert_eq!(tls.code, 2, "{tls}");
    assert!(!tls.stderr.contains("hunter2"), "{tls}");
    assert!(tls.stderr.contains("rediss://u:***@127.0.0.1:1/0"), "{tls}");
    // With TLS built in (the default) the URL is taken and nothing answers there; without, the
    // error names the feature to build with.
    let why = if cfg!(feature = "redis-tls") {
        "is the server running"
    } else {
        "`redis-tls`"
    };
    assert!(tls.stderr.contains(why), "{tls}");
    let prefix_alone = run(&["ls", "--prefix", "p:"]);
    assert_eq!(prefix_alone.code, 2);
    assert!(prefix_alone.stderr.contains("--store"), "{prefix_alone}");
}

#[test]
fn rediss_trusts_the_system_roots_and_ssl_cert_file() {
    let Some(server) = pi_session_test_support::tls_redis::TlsRedis::start() else {
        return;
    };
    let url = format!("rediss://127.0.0.1:{}/0", server.port);
    // The server is this test's alone: an empty keyspace.
    let ls = ["ls", "--store", &url, "--json"];
    // The test CA is in no system store: refused, saying why.
    let untrusted = run(&ls);
    assert_eq!(untrusted.code, 2, "{untrusted}");
    assert!(
        untrusted.stderr.to_lowercase().contains("certificate"),
        "{untrusted}"
    );
    // SSL_CERT_FILE names the roots to trust instead.
    let trusted = crate::common::run_in(&root(), &[("SSL_CERT_FILE", &server.ca)], &ls);
    assert_eq!(trusted.code, 0, "{trusted}");
    assert!(!json(&trusted).is_null(), "{trusted}");
}
