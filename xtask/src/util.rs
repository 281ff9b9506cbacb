//! Small helpers shared by the xtask commands.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root (the folder holding the root `Cargo.toml`).
pub use pi_session_test_support::workspace_root;

/// Runs `command`, inheriting stdio; an error names the command and its exit status.
pub fn run_command(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    eprintln!("xtask: running {shown}");
    let status = command
        .status()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed with {status}"))
    }
}

/// The cargo binary that runs this xtask.
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
}

/// Runs `cargo build ARGS` in `root` and returns the path of the executable named `name` it
/// built, as cargo reports it. Where that is depends on the target folder and on `build.target`
/// (`.cargo/config.toml` builds for `host-tuple`, so binaries land in
/// `target/<target triple>/{debug,release}/`), so no caller spells the path itself.
pub fn build_executable(root: &Path, args: &[&str], name: &str) -> Result<PathBuf, String> {
    let mut command = cargo();
    command
        .current_dir(root)
        .arg("build")
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .stdout(Stdio::piped());
    let shown = format!("{command:?}");
    eprintln!("xtask: running {shown}");
    let output = command
        .output()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{shown} failed with {}", output.status));
    }
    let built = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == name
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from));
    built.ok_or_else(|| format!("{shown} reported no executable named {name}"))
}
