//! Small helpers shared by the xtask commands.

use std::process::Command;

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
