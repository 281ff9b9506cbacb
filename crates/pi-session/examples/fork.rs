//! Fork a session: a second cursor on the same file, a named branch that survives reopening,
//! and a copy of one branch into a new session file (`fork_to`, pi's `createBranchedSession`).
//! Run it with `cargo run -p pi-session --example fork`.
#![allow(clippy::print_stdout, reason = "an example prints what it shows")]

use std::path::Path;

use pi_session::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    print!("{}", play(dir.path())?);
    Ok(())
}

fn last_text(session: &Session) -> Result<String, Error> {
    let context = session.context(&ProjectOptions::default())?;
    Ok(context.last().map(|m| m.text()).unwrap_or_default())
}

/// Forks a session three ways in `dir` and reports.
pub fn play(dir: &Path) -> Result<String, Error> {
    let mut main = Session::new(dir, "anthropic:claude-sonnet-4-5", "/work/app");
    let question = main.append(user("Name the new module.", UserOptions::new()))?;
    // A named branch: its first append saves the name in the file.
    let mut side = main.fork_named("alternative");
    main.append_reply(&Reply {
        text: "parser".into(),
        ..Reply::default()
    })?;
    side.append_reply(&Reply {
        text: "reader".into(),
        ..Reply::default()
    })?;
    main.set_label(question.id().unwrap_or_default(), Some("naming"))?;

    let mut out = format!(
        "main says {:?}, the alternative {:?}\n",
        last_text(&main)?,
        last_text(&side)?
    );

    // Reopening restores the named branch.
    let path = main.path().unwrap_or_default();
    let reopened = Session::open(&path, "anthropic:claude-sonnet-4-5")?.session;
    let alternative = reopened.checkout("alternative")?;
    out.push_str(&format!(
        "after reopening: branches {:?}, the alternative says {:?}\n",
        reopened.branch_names(),
        last_text(&alternative)?
    ));

    // A new file holding only the alternative branch (and the label on it).
    let copy = alternative.fork_to(dir.join("forks"), None)?;
    out.push_str(&format!(
        "forked: same context {}, parent is the source {}, label kept {:?}\n",
        copy.context(&ProjectOptions::default())?
            == alternative.context(&ProjectOptions::default())?,
        copy.header().and_then(|h| h.parent_session).as_deref()
            == std::path::absolute(&path)
                .ok()
                .as_deref()
                .and_then(Path::to_str),
        copy.label(question.id().unwrap_or_default())?
    ));
    Ok(out)
}
