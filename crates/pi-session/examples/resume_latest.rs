//! Resume the most recent session of a project, as `omp -c` does, and continue it.
//!
//! Finds the project's session folders for a home directory without reading the process
//! environment (`ProjectFolders::with_home`; a real host uses `ProjectFolders::for_cwd`), opens
//! the latest session there, appends a turn in the file's own dialect, and prints what the
//! model would be sent. Run it with `cargo run -p pi-session --example resume_latest`.
#![allow(clippy::print_stdout, reason = "an example prints what it shows")]

use std::path::Path;

use pi_session::ProjectFolders;
use pi_session::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let home = tempfile::tempdir()?;
    print!("{}", play(home.path())?);
    Ok(())
}

/// Writes an earlier session under `home`, resumes it and reports.
pub fn play(home: &Path) -> Result<String, Error> {
    let project = home.join("work/app");
    let folders = ProjectFolders::with_home(home, &project);
    let pi_folder = folders.pi.clone().unwrap_or_default();

    // Yesterday's session, written by some host into pi's folder for the project.
    let mut earlier = Session::new(&pi_folder, "anthropic:claude-sonnet-4-5", "/work/app");
    earlier.append(user("Where is the config loaded?", UserOptions::new()))?;
    earlier.append_reply(&Reply {
        text: "In src/config.rs.".into(),
        ..Reply::default()
    })?;
    earlier.set_name("Config questions")?;
    drop(earlier);

    let mut out = String::new();
    let Some(path) = folders.latest()? else {
        out.push_str("no session to resume\n");
        return Ok(out);
    };
    let opened = Session::open(&path, "anthropic:claude-sonnet-4-5")?;
    for diagnostic in &opened.diagnostics {
        out.push_str(&format!("warning: {diagnostic}\n"));
    }
    let mut session = opened.session;
    out.push_str(&format!(
        "resumed {:?} ({}), model {}\n",
        session.name()?.unwrap_or_default(),
        session.dialect().as_str(),
        session.model()
    ));
    session.append(user("And where is it validated?", UserOptions::new()))?;
    session.append_reply(&Reply {
        text: "In Config::validate.".into(),
        ..Reply::default()
    })?;
    let options = ProjectOptions {
        dialect: session.dialect(),
        ..ProjectOptions::default()
    };
    let (agent, _) = session.project(Format::Agent, &options)?;
    for message in agent["messages"].as_array().into_iter().flatten() {
        let text = message["content"]
            .as_array()
            .and_then(|parts| parts.iter().find_map(|p| p["text"].as_str()))
            .or_else(|| message["content"].as_str())
            .unwrap_or_default();
        out.push_str(&format!(
            "{}: {text}\n",
            message["role"].as_str().unwrap_or("?")
        ));
    }
    Ok(out)
}
