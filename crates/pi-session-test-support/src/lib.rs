//! Test support shared by every crate's tests and by `cargo xtask golden`, so each rule about
//! test data is written once:
//!
//! - **Where things are**: [`workspace_root`], [`fixtures_dir`], and [`corpus_dir`], the real
//!   sessions in `../shared` (not part of the repository), which prints one `SKIPPED:` line and
//!   gives `None` when absent, so a corpus test skips visibly instead of passing silently.
//! - **Listing**: [`files_ending_with`] (one folder, sorted), [`jsonl_files`] (recursive,
//!   sorted), [`fixture_files`], [`recordings`] (the `*.expected.json` of a folder) and
//!   [`scenario_name`].
//! - **Reading recordings** written by JavaScript's `JSON.stringify`: [`parse_js_json`] and
//!   [`read_recording`] read them as our store reads session lines, losslessly: a lone UTF-16
//!   surrogate escape becomes its carrier code point U+10F800+k, which our JSON writer turns
//!   back into the same escape (`pi_session_types::line::replace_lone_surrogate_escapes`).
//! - **Comparing**: [`js_equal`], equality as JavaScript sees parsed JSON (numbers by value, keys
//!   in any order).
//!
//! - **Random trees**: [`random_trees`], proptest generators of session trees with every
//!   damage the resolver meets (cycles, missing parents, duplicate ids, compactions).
//! - **Servers**: [`tls_redis::TlsRedis`], a throwaway TLS `redis-server` for `rediss://`.
//!
//! It is a dev-dependency of the library crates (and a dependency of xtask) only: nothing here
//! reaches a published crate.

#![deny(missing_docs)]

pub mod random_trees;
pub mod tls_redis;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Recorded scenarios whose session file the recorder wrote by hand instead of through the
/// implementation's API (`fixtures/README.md`): they carry no mark of the implementation that
/// read them, so dialect detection cannot know it (a pi-written file read by omp, say).
pub const HAND_WRITTEN_SCENARIOS: [&str; 7] = [
    "v1-format",
    "v2-format",
    "damaged-lines",
    "orphans-and-duplicates",
    "usage-without-cost",
    "pi-written-file",
    "parent-cycle",
];

/// The workspace root (the folder holding the root `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.join("../..")
        .canonicalize()
        .unwrap_or_else(|_| here.join("../.."))
}

/// `fixtures/` of the workspace.
pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("fixtures")
}

/// `../shared/corpus/<kind>` (`real` or `foreign`), the real sessions kept beside the
/// repository. When absent, prints `SKIPPED: …` (so the test output says what was not checked)
/// and gives `None`: a corpus test returns early then.
#[allow(
    clippy::print_stdout,
    reason = "the skip notice goes where the test harness shows a test's output"
)]
pub fn corpus_dir(kind: &str) -> Option<PathBuf> {
    let dir = workspace_root().join("../shared/corpus").join(kind);
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "SKIPPED: corpus not found at {} (it is not part of the repository); \
             the tests that need it check nothing",
            dir.display()
        );
        None
    }
}

/// The files directly in `dir` whose names end with `suffix`, sorted by path (empty when `dir`
/// cannot be read).
pub fn files_ending_with(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = listing
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_file() && path.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

/// Every `*.jsonl` file under `dir`, in sub-folders too, sorted by path.
pub fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(listing) = std::fs::read_dir(&folder) else {
            continue;
        };
        for path in listing.flatten().map(|entry| entry.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every session file we have: the fixtures' `*.jsonl`, then the real and foreign corpus's
/// (when present; [`corpus_dir`] prints the skip notice otherwise).
pub fn fixture_and_corpus_files() -> Vec<PathBuf> {
    let mut files = jsonl_files(&fixtures_dir());
    for kind in ["real", "foreign"] {
        files.extend(
            corpus_dir(kind)
                .map(|dir| jsonl_files(&dir))
                .unwrap_or_default(),
        );
    }
    files
}

/// The files of `fixtures/<folder>` whose names end with `suffix`, sorted by path.
pub fn fixture_files(folder: &str, suffix: &str) -> Vec<PathBuf> {
    files_ending_with(&fixtures_dir().join(folder), suffix)
}

/// The recordings of a folder: its `*.expected.json` files, sorted by name (an error when the
/// folder cannot be read, so a missing folder is reported rather than checked as empty).
pub fn recordings(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    Ok(files_ending_with(dir, ".expected.json"))
}

/// The scenario a recording is of: its file name without `.expected.json`.
pub fn scenario_name(recording: &Path) -> String {
    let name = recording
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("?");
    name.strip_suffix(".expected.json")
        .unwrap_or(name)
        .to_owned()
}

/// Parses JSON written by `JSON.stringify`.
///
/// JavaScript strings may hold lone UTF-16 surrogates, which `JSON.stringify` writes as
/// `\udXXX` escapes; serde_json (like any UTF-8 reader) cannot represent them. Our store reads a
/// lone surrogate escape in a session line as its carrier code point U+10F800+k
/// (`pi_session_types::js::carrier_of`), and so does this: nothing is lost, since
/// `pi_session_types::json` writes the carrier back as the same escape.
pub fn parse_js_json(text: &str) -> Result<Value, String> {
    match serde_json::from_str(text) {
        Ok(value) => Ok(value),
        Err(first) => serde_json::from_str(
            &pi_session_types::line::replace_lone_surrogate_escapes(text),
        )
        .map_err(|_| format!("not JSON: {first}")),
    }
}

/// Reads and parses a recording (see [`parse_js_json`]); the error names the file.
pub fn read_recording(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_js_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// JSON equality as JavaScript sees parsed values: numbers compare by value (`0` and `0.0` are
/// the same number), object keys in any order.
pub fn js_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| js_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| js_equal(v, w)))
        }
        _ => a == b,
    }
}

/// One step of SplitMix64, the small deterministic random source the simulators and generators
/// share: advances `state` and returns the next 64 random bits. Same seed, same sequence, on
/// every platform.
///
/// ```
/// let mut state = 1;
/// let first = pi_session_test_support::splitmix64(&mut state);
/// let mut again = 1;
/// assert_eq!(pi_session_test_support::splitmix64(&mut again), first);
/// assert_ne!(pi_session_test_support::splitmix64(&mut state), first);
/// ```
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether `program` can be run (`program --version` starts). When it cannot, a test that
/// needs it (`for_what`) is skipped with a printed `SKIPPED:` notice, except under `CI=true`,
/// where `.ci/run` installs it: there this fails the test.
#[allow(
    clippy::print_stdout,
    reason = "the skip notice goes where the test harness shows a test's output"
)]
pub fn have_program(program: &str, for_what: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{program} is missing: .ci/run installs it"
        );
        println!("SKIPPED: no {program} for {for_what}");
    }
    found
}

/// The text of a pi v3 session whose entries each follow the one before (a linear branch), for
/// tests that need a long one: [`push`](Self::push) each entry's `type` and body, then
/// [`into_text`](Self::into_text).
///
/// ```
/// let mut session = pi_session_test_support::LinearSession::new();
/// session.push("m0", r#""model_change","provider":"p","modelId":"m""#);
/// session.push("u1", r#""message","message":{"role":"user","content":"hi"}"#);
/// let text = session.into_text();
/// assert_eq!(text.lines().count(), 3);
/// assert!(text.lines().nth(2).unwrap().contains(r#""id":"u1","parentId":"m0""#));
/// ```
#[derive(Debug, Clone)]
pub struct LinearSession {
    text: String,
    parent: String,
}

impl LinearSession {
    /// The header line (`{"type":"session","version":3,…}`) alone.
    pub fn new() -> Self {
        let mut text = String::from(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
        );
        text.push('\n');
        LinearSession {
            text,
            parent: "null".to_owned(),
        }
    }

    /// Adds the entry `id`, the child of the last one: `body` is its JSON after `"type":` (the
    /// type's string, then its own members), followed by its id, parent id and timestamp.
    pub fn push(&mut self, id: &str, body: &str) {
        let parent = &self.parent;
        self.text.push_str(&format!(
            r#"{{"type":{body},"id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z"}}"#
        ));
        self.text.push('\n');
        self.parent = format!("\"{id}\"");
    }

    /// The session's text, one line per entry.
    pub fn into_text(self) -> String {
        self.text
    }
}

impl Default for LinearSession {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes `dir/s.jsonl`, a session with pi 1.6's marks: a system message with `sections`, then
/// a user message (`long`) that a `context_edit` replaces with `replacement` (JSON text: an
/// object such as `{"content":"short"}`, or `null`). Returns the file's path.
pub fn write_pi16_session(dir: &Path, replacement: &str) -> std::io::Result<PathBuf> {
    let file = dir.join("s.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#.to_owned(),
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"system","content":"prompt","sections":{"env":"x"},"timestamp":1}}"#.to_owned(),
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"long","timestamp":2}}"#.to_owned(),
        format!(
            r#"{{"type":"context_edit","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","targetId":"b","replacement":{replacement}}}"#
        ),
    ];
    std::fs::write(&file, lines.join("\n") + "\n")?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn js_equal_compares_numbers_by_value_and_keys_in_any_order() {
        assert!(js_equal(
            &json!({"a": 0, "b": [1.0]}),
            &json!({"b": [1], "a": 0.0})
        ));
        assert!(!js_equal(&json!({"a": 0}), &json!({"a": 0, "b": null})));
        assert!(!js_equal(&json!([1, 2]), &json!([2, 1])));
    }

    #[test]
    fn lone_surrogates_become_carriers_and_pairs_stay() {
        let text = r#"["\ud83d\ude00","\ud83d","x\ude00y","\\ud83d","\ud83d\ud83d\ude00"]"#;
        let value = parse_js_json(text).unwrap();
        assert_eq!(
            value,
            json!([
                "😀",
                "\u{10F83D}",
                "x\u{10FE00}y",
                "\\ud83d",
                "\u{10F83D}😀"
            ])
        );
        // Written back, the escapes are the ones JavaScript wrote (the pair as its character).
        assert_eq!(
            pi_session_types::json::to_js_string(&value).unwrap(),
            r#"["😀","\ud83d","x\ude00y","\\ud83d","\ud83d😀"]"#
        );
        assert!(parse_js_json("{").is_err());
    }

    #[test]
    fn scenario_names_drop_the_suffix() {
        assert_eq!(
            scenario_name(Path::new("x/tool-calls.expected.json")),
            "tool-calls"
        );
    }
}
