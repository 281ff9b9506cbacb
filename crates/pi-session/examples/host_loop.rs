//! A host's loop: resume a session, then per turn append the user's message, build what the
//! model is sent, and append the reply.
//!
//! `Session::resume` opens the file without typing any entry's body, and
//! `Session::turn_context` keeps what it read and built between turns: each message of the
//! context is an `Arc`, the same allocation from one turn to the next, so a turn costs what it
//! appends, not a copy of the context. Run it with
//! `cargo run -p pi-session --example host_loop`.
#![allow(clippy::print_stdout, reason = "an example prints what it shows")]

use std::path::Path;
use std::sync::Arc;

use pi_session::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    print!("{}", play(dir.path())?);
    Ok(())
}

/// Writes an earlier session into `dir`, resumes it for three turns and reports each turn.
pub fn play(dir: &Path) -> Result<String, Error> {
    // An earlier conversation, written by some host (omp, pi or this crate).
    let mut earlier = Session::new(dir, "anthropic:claude-sonnet-4-5", "/work/app");
    earlier.append(user("Where is the config loaded?", UserOptions::new()))?;
    earlier.append_reply(&Reply {
        text: "In src/config.rs.".into(),
        ..Reply::default()
    })?;
    let path = earlier.path().unwrap_or_default();
    drop(earlier);

    let (mut session, diagnostics) = Session::resume(&path, "anthropic:claude-sonnet-4-5")?;
    let mut out = String::new();
    for diagnostic in &diagnostics {
        out.push_str(&format!("warning: {diagnostic}\n"));
    }
    let questions = [
        "And where is it validated?",
        "Which fields are required?",
        "Thanks.",
    ];
    let mut before: Option<Arc<Vec<Arc<serde_json::Value>>>> = None;
    for (turn, question) in questions.into_iter().enumerate() {
        session.append(user(question, UserOptions::new()))?;
        // What the model is sent this turn, by the rules of the file's own dialect.
        let context = session.turn_context(session.dialect())?;
        // Messages sent on the turn before are the same allocations now: nothing was copied.
        let shared = before.as_ref().map_or(0, |before| {
            before
                .iter()
                .zip(context.llm.iter())
                .filter(|(was, is)| Arc::ptr_eq(was, is))
                .count()
        });
        out.push_str(&format!(
            "turn {}: {} messages sent, {shared} of them shared with the turn before\n",
            turn + 1,
            context.llm.len()
        ));
        before = Some(Arc::clone(&context.llm));
        // A real host sends `context.llm` to its model here and appends what comes back.
        session.append_reply(&Reply {
            text: format!("Answer {}.", turn + 1),
            ..Reply::default()
        })?;
    }
    Ok(out)
}
