//! `cargo xtask test`: the README's test command. Runs every test the project has.

use crate::util::{cargo, run_command, workspace_root};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask test
  every test the project has, in order: cargo fmt --check, cargo clippy (warnings denied),
  rustdoc (warnings denied), the Markdown files' code blocks and links, cargo test --workspace
  (and its doctests), cargo deny check (when installed), the golden checks, the real-browser
  tests; no arguments
";

/// Runs the tidy checks (`cargo fmt --check`, `cargo clippy -D warnings`, the public docs with
/// rustdoc's warnings denied, the Markdown files), then
/// `cargo test --workspace`, then `cargo deny check` when installed, then the golden checks,
/// then the real-browser tests.
pub fn run(args: &[String]) -> Result<(), String> {
    match args.first().map(String::as_str) {
        None => {}
        Some("help" | "--help" | "-h") => {
            print!("{USAGE}");
            return Ok(());
        }
        Some(other) => {
            return Err(format!(
                "`cargo xtask test` takes no arguments (got `{other}`)\n\n{USAGE}"
            ));
        }
    }
    let root = workspace_root();
    tidy(&root)?;
    run_command(
        cargo()
            .current_dir(&root)
            .args(["test", "--workspace", "--all-targets"]),
    )?;
    run_command(
        cargo()
            .current_dir(&root)
            .args(["test", "--workspace", "--doc"]),
    )?;
    deny(&root)?;
    crate::golden::run(&[])?;
    crate::browser::run(&[])
}

/// Style holds without anyone checking it by hand (rust-analyzer's tidy habit): formatting,
/// clippy's warnings, rustdoc's (a public doc's link to nothing, or to a private item, is
/// broken on docs.rs) and the Markdown files' code blocks and relative links
/// ([`crate::markdown`]) fail the test command like a failing test does.
fn tidy(root: &std::path::Path) -> Result<(), String> {
    run_command(cargo().current_dir(root).args(["fmt", "--all", "--check"]))
        .map_err(|e| format!("{e}\n(run `cargo fmt --all` to fix the formatting)"))?;
    run_command(cargo().current_dir(root).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run_command(
        cargo()
            .current_dir(root)
            .env("RUSTDOCFLAGS", "-D warnings")
            .args(["doc", "--workspace", "--no-deps"]),
    )
    .map_err(|e| format!("{e}\n(the public docs have a broken link or another rustdoc warning)"))?;
    crate::markdown::check(root)
}

fn deny(root: &std::path::Path) -> Result<(), String> {
    let installed = Command::new("cargo-deny")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        eprintln!(
            "xtask: cargo-deny is not installed; skipping `cargo deny check` (install: cargo install cargo-deny --locked)"
        );
        return Ok(());
    }
    // Advisories need the RustSec database from GitHub, which this project's machines cannot
    // reach; bans, licenses and sources are checked offline.
    run_command(
        cargo()
            .current_dir(root)
            .args(["deny", "check", "bans", "licenses", "sources"]),
    )
}
