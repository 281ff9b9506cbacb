//! Handling the facade's errors by kind: what a host does for each, and how to print one
//! (the message, then its source, each fact once). Run it with
//! `cargo run -p pi-session --example error_handling`.
#![allow(clippy::print_stdout, reason = "an example prints what it shows")]

use std::path::Path;

use pi_session::prelude::*;
use pi_session::{ErrorKind, error_chain};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    print!("{}", play(dir.path())?);
    Ok(())
}

/// What a host does about a failed append.
fn advice(error: &Error) -> &'static str {
    match error.kind() {
        ErrorKind::Busy => "another process is writing: retry later",
        ErrorKind::Conflict => "the file changed: reopen it and retry",
        ErrorKind::NeedsMigration => "migrate the file (Session::migrate), or fork_to a new one",
        ErrorKind::NotASession => "fork_to a new file to continue",
        ErrorKind::Io | ErrorKind::NotAFile => "check the path",
        _ => "a bug in the host: fix the call",
    }
}

/// One line about an outcome: `ok`, or the error's kind and what to do about it.
fn outcome<T>(result: Result<T, Error>) -> String {
    match result {
        Ok(_) => "ok".to_owned(),
        Err(error) => format!("{:?}: {}", error.kind(), advice(&error)),
    }
}

/// Provokes the common failures in `dir` and reports what happened.
pub fn play(dir: &Path) -> Result<String, Box<dyn std::error::Error>> {
    let mut out = String::new();

    let missing = Session::open(dir.join("missing.jsonl"), "anthropic:claude-x");
    if let Err(error) = &missing {
        let printed = error_chain(error);
        out.push_str(&format!(
            "printed with its source, the path appears {} time(s)\n",
            printed.matches("missing.jsonl").count()
        ));
    }
    out.push_str(&format!("{}\n", outcome(missing)));

    // A second writer on the same file while the first is alive.
    let mut first = Session::new(dir, "anthropic:claude-x", "/w");
    first.append(user("one", UserOptions::new()))?;
    let path = first.path().unwrap_or_default();
    let mut second = Session::open(&path, "anthropic:claude-x")?.session;
    let busy = second.append(user("two", UserOptions::new()));
    out.push_str(&format!("{}\n", outcome(busy)));

    // The first writer goes on; the second one's view is stale once the first is gone.
    first.append(user("three", UserOptions::new()))?;
    drop(first);
    let conflict = second.append(user("four", UserOptions::new()));
    out.push_str(&format!("{}\n", outcome(conflict)));
    let mut fresh = Session::open(&path, "anthropic:claude-x")?.session;
    fresh.append(user("four", UserOptions::new()))?;
    out.push_str(&format!(
        "after reopening: {} entries\n",
        fresh.entries()?.len()
    ));

    // An old (version 1) file: readable, not appendable until migrated.
    let old = dir.join("old.jsonl");
    std::fs::write(
        &old,
        "{\"type\":\"session\",\"id\":\"v1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n\
         {\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}}\n",
    )?;
    let mut session = Session::open(&old, "anthropic:claude-x")?.session;
    let refused = session.append(user("more", UserOptions::new()));
    out.push_str(&format!("{}\n", outcome(refused)));
    Session::migrate(&old)?;
    let mut session = Session::open(&old, "anthropic:claude-x")?.session;
    session.append(user("more", UserOptions::new()))?;
    out.push_str(&format!(
        "migrated and appended: {} entries\n",
        session.entries()?.len()
    ));
    Ok(out)
}
