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
    let bytes = text.as_bytes();
    let hex = |at: usize| {
        text.get(at..at + 4)
            .and_then(|digits| u16::from_str_radix(digits, 16).ok())
    };
    let mut out = String::with_capacity(text.len());
    let (mut i, mut last) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let unit = hex(i + 2).unwrap_or(0);
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        let pairs = is_high
            && bytes.get(i + 6) == Some(&b'\\')
            && bytes.get(i + 7) == Some(&b'u')
            && hex(i + 8).is_some_and(|next| (0xDC00..0xE000).contains(&next));
        if pairs {
            i += 12;
        } else if is_high || is_low {
            out.push_str(&text[last..i]);
            out.push_str("\\ufffd");
            i += 6;
            last = i;
        } else {
            i += 6;
        }
    }
    out.push_str(&text[last..]);
    serde_json::from_str(&out).unwrap()
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
