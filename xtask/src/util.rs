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

/// The cargo binary that runs this xtask, without the variables `cargo run` set for xtask
/// itself ([`set_for_xtask`]). Inherited, they reach the build scripts of the cargo started
/// here, and cargo reruns a build script when a variable it watches changed: ring's watches
/// `CARGO_MANIFEST_DIR` and `CARGO_PKG_*`, so a build from `cargo xtask` and one from the shell
/// took turns rebuilding ring and every crate above it (~2 minutes each time).
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_for_xtask) {
            command.env_remove(name);
        }
    }
    command
}

/// Whether `name` is one of the variables cargo sets for the crate it runs (the manifest, the
/// package's metadata, the crate and binary names), not one the caller set.
fn set_for_xtask(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || matches!(
            name,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
        )
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

/// Every file below `dir`, as paths relative to it, sorted; a folder is entered only when
/// `enter` says so of its path (relative to `dir`). An error names what could not be listed.
pub fn files_below(dir: &Path, enter: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let absolute = dir.join(&relative);
        let entries = std::fs::read_dir(&absolute)
            .map_err(|error| format!("could not list {}: {error}", absolute.display()))?;
        for entry in entries {
            let entry =
                entry.map_err(|error| format!("could not list {}: {error}", absolute.display()))?;
            let child = relative.join(entry.file_name());
            let kind = entry
                .file_type()
                .map_err(|error| format!("could not stat {}: {error}", child.display()))?;
            if kind.is_dir() {
                if enter(&child) {
                    pending.push(child);
                }
            } else {
                files.push(child);
            }
        }
    }
    files.sort();
    Ok(files)
}
