//! Running the binary and describing what it did.

use std::fmt;
use std::path::Path;

/// The workspace root: commands run there, so fixture paths in outputs read `fixtures/...`.
pub use pi_session_test_support::{fixture_files, js_equal, workspace_root as root};

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

impl Output {
    /// Asserts that the run exited with `code` and said `needle` on stderr.
    pub fn assert_says(&self, code: i32, needle: &str) {
        assert_eq!(self.code, code, "{self}");
        assert!(self.stderr.contains(needle), "{self}");
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
    pi_session_test_support::parse_js_json(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{output}"))
}

/// Parses JSON written by `JSON.stringify` (lone surrogate escapes kept, carried as
/// U+10F800+k, as the store reads them).
pub fn parse_js_json(text: &str) -> serde_json::Value {
    pi_session_test_support::parse_js_json(text).unwrap()
}

/// The snapshot name of a run, after what it shows: the command line, with fixture paths
/// relative to `fixtures/` and every run of other characters than letters, digits and `-` as
/// one `_` (`stats fixtures/cli/mixed/good.jsonl --json` → `stats_cli_mixed_good_json`;
/// leading dashes of flags dropped). One
/// snapshot per fixture and flag set, found by name rather than by its place in a list.
pub fn snapshot_name(args: &[&str]) -> String {
    let line = args
        .iter()
        .map(|arg| {
            let arg = arg.strip_prefix("fixtures/").unwrap_or(arg);
            arg.strip_suffix(".jsonl")
                .unwrap_or(arg)
                .trim_start_matches('-')
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut name = String::new();
    for c in line.chars() {
        if c.is_ascii_alphanumeric() || c == '-' {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
    }
    name.trim_end_matches('_').to_owned()
}
