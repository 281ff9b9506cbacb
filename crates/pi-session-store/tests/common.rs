//! Helpers shared by the test modules.

use pi_session_store::{Diagnostic, SessionFile};
use pi_session_types::{Entry, JsonMap, JsonValue, to_js_string};
use std::path::{Path, PathBuf};

/// The real recorded sessions, or `None` (with a printed notice) when they are not present.
pub fn corpus_dir() -> Option<PathBuf> {
    pi_session_test_support::corpus_dir("real")
}

/// The hand-written damaged files.
pub fn invalid_fixtures_dir() -> PathBuf {
    pi_session_test_support::fixtures_dir().join("invalid")
}

/// `*.jsonl` files directly in `dir`, sorted by name.
pub fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    pi_session_test_support::files_ending_with(dir, ".jsonl")
}

/// One diagnostic per line, as `Display` prints them.
pub fn render_diagnostics(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| format!("{:?} {d}\n", d.severity()))
        .collect()
}

/// A readable dump of a session: header, slot, diagnostics and every entry as written JSON.
pub fn render_session(session: &SessionFile, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    match session.header() {
        Some(h) => out.push_str(&format!(
            "header (line {:?}): {}\n",
            session.header_line(),
            to_js_string(h).unwrap()
        )),
        None => out.push_str("header: none\n"),
    }
    out.push_str(&format!(
        "file version: {}, migrated: {}\n",
        session.file_version(),
        session.is_migrated()
    ));
    out.push_str(&format!("leaf: {:?}\n", session.leaf_id()));
    out.push_str("diagnostics:\n");
    out.push_str(&render_diagnostics(diagnostics));
    out.push_str(&format!("entries ({}):\n", session.len()));
    for (i, at) in session.index().iter().enumerate() {
        let entry = session.entry(i).unwrap();
        out.push_str(&format!(
            "line {} @{}+{}: {}\n",
            at.line,
            at.byte_offset,
            at.byte_len,
            to_js_string(&entry).unwrap()
        ));
    }
    out
}

/// An entry of `kind` with the given extra fields (types it the way the store would read it).
pub fn entry(kind: &str, fields: &[(&str, JsonValue)]) -> Entry {
    let mut map = JsonMap::new();
    map.insert("type".into(), kind.into());
    for (key, value) in fields {
        map.insert((*key).to_owned(), value.clone());
    }
    Entry::from_map(map)
}

/// A Redis store under a fresh prefix on the test server (`PI_SESSION_TEST_REDIS`, a
/// `redis://` URL; `.ci/run` starts one), or `None` with a printed notice when there is none.
/// With `CI=true` a missing server fails the test instead: CI must run these.
pub fn redis_store() -> Option<(pi_session_store::Store, String)> {
    let Ok(url) = std::env::var("PI_SESSION_TEST_REDIS") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "PI_SESSION_TEST_REDIS is not set: .ci/run starts redis-server and sets it"
        );
        println!(
            "SKIPPED: no Redis test server (set PI_SESSION_TEST_REDIS=redis://127.0.0.1:PORT/0)"
        );
        return None;
    };
    let prefix = format!("pi-session-test:{}:", uuid::Uuid::new_v4().simple());
    let options = pi_session_store::RedisOptions {
        prefix: prefix.clone(),
        ..Default::default()
    };
    let store = pi_session_store::RedisStore::connect(&url, options)
        .unwrap_or_else(|e| panic!("PI_SESSION_TEST_REDIS={url}: {e}"));
    Some((pi_session_store::Store::keyed(store), prefix))
}

/// The ids of every entry `session` holds.
pub fn entry_ids(session: &SessionFile) -> std::collections::HashSet<&str> {
    session
        .index()
        .iter()
        .filter_map(|e| e.envelope.id())
        .collect()
}

/// The id a crash test's child acknowledged on this line of its stdout (`ACK <id>`), if any.
/// libtest prints `test <name> ... ` before a test's first output, so the child's first `ACK`
/// shares that line: it is found anywhere in the line, not only at its start.
pub fn acked_id(line: &str) -> Option<&str> {
    line.find("ACK ").map(|at| &line[at + "ACK ".len()..])
}
