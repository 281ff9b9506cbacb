//! `cargo xtask browser`: the real-browser tests of `pi-session export` and `serve` (also run by
//! `cargo xtask test`).
//!
//! They drive the system's Chromium, headless, through node's `puppeteer-core` (pinned in
//! `xtask/browser/package-lock.json`; it downloads no browser). The script,
//! `xtask/browser/test.mjs`, exports fixture sessions and opens each page (console errors,
//! every entry of the branch, branch switching, "what the model saw" against `pi-session
//! context`, search, pictures, a hostile session that must run no script), then lists 1,000
//! generated sessions with `serve` over 127.0.0.1. Screenshots and timings go to
//! `target/browser/`.
//!
//! Without Chromium or node the tests are skipped with a notice, except in CI (`CI=true`), where
//! that is a failure: `.ci/run` installs them.

use std::path::PathBuf;
use std::process::Command;

use crate::bench::target_dir;
use crate::util::{build_executable, run_command, workspace_root};

/// Where Chromium may be: `PI_SESSION_CHROMIUM`, else the Debian package's names.
const CHROMIUM_NAMES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// Runs the browser tests.
pub fn run(_args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let missing = |what: &str| {
        let message = format!(
            "{what}; the browser tests need it (Debian: apt-get install -y {})",
            if what.starts_with("Chromium") {
                "chromium"
            } else {
                "nodejs npm"
            }
        );
        if in_ci {
            Err(message)
        } else {
            eprintln!("xtask: SKIPPED the browser tests: {message}");
            Ok(())
        }
    };
    let Some(chromium) = find_chromium() else {
        return missing("Chromium is not installed");
    };
    if !works(Command::new("node").arg("--version")) {
        return missing("node is not installed");
    }
    let dir = root.join("xtask/browser");
    if !dir.join("node_modules/puppeteer-core").is_dir() {
        eprintln!("xtask: installing puppeteer-core (xtask/browser/package-lock.json)");
        run_command(
            Command::new("npm")
                .current_dir(&dir)
                .args(["ci", "--no-audit", "--no-fund"]),
        )?;
    }
    let binary = build_executable(&root, &["--quiet", "-p", "pi-session-cli"], "pi-session")?;
    run_command(
        Command::new("node")
            .current_dir(&root)
            .arg(dir.join("test.mjs"))
            .arg(&binary)
            .arg(&chromium)
            .arg(target_dir(&root).join("browser")),
    )
}

fn find_chromium() -> Option<PathBuf> {
    if let Some(explicit) = std::env::var_os("PI_SESSION_CHROMIUM") {
        return Some(PathBuf::from(explicit));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| CHROMIUM_NAMES.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

fn works(command: &mut Command) -> bool {
    command.output().is_ok_and(|o| o.status.success())
}
