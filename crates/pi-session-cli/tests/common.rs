//! Running the binary and describing what it did.

use std::fmt;
use std::path::{Path, PathBuf};

/// The workspace root: commands run there, so fixture paths in outputs read `fixtures/...`.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The files of `fixtures/<folder>` whose names end with `suffix`, sorted by path.
pub fn fixture_files(folder: &str, suffix: &str) -> Vec<PathBuf> {
    let dir = root().join("fixtures").join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    files.sort();
    files
}

/// What one run printed and returned.
pub struct Output {
    pub args: Vec<String>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "$ pi-session {}", self.args.join(" "))?;
        writeln!(f, "exit: {}", self.code)?;
        writeln!(f, "--- stdout")?;
        f.write_str(&self.stdout)?;
        writeln!(f, "--- stderr")?;
        f.write_str(&self.stderr)
    }
}

/// Variables that would make the command look at the user's own sessions or change its output.
const ENV_TO_CLEAR: [&str; 9] = [
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "PI_CONFIG_DIR",
    "OMP_PROFILE",
    "PI_PROFILE",
    "COLUMNS",
    "NO_COLOR",
];

/// Runs `pi-session args` in the workspace root.
pub fn run(args: &[&str]) -> Output {
    run_in(&root(), &[], args)
}

/// Runs `pi-session args` in `dir` with extra environment variables.
pub fn run_in(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("pi-session").unwrap();
    command.current_dir(dir).args(args);
    for name in ENV_TO_CLEAR {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    Output {
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The run's stdout as JSON.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{output}"))
}

/// Parses JSON written by `JSON.stringify`, which may hold lone UTF-16 surrogate escapes
/// (`"\ud83d"`) that serde_json rejects: those become U+FFFD, as the store reads them.
pub fn parse_js_json(text: &str) -> serde_json::Value {
    serde_json::from_str(&pi_session::types::line::replace_lone_surrogate_escapes(
        text,
    ))
    .unwrap()
}

/// JSON equality as JavaScript sees parsed values: numbers compare by value.
pub fn js_equal(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
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
