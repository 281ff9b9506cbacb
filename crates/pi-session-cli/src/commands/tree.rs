//! `pi-session tree`: the entries of a session as a tree.

use std::path::PathBuf;

use clap::Args;
use pi_session::Session;

use crate::describe::describe;
use crate::draw::{FOLD_RUNS_LONGER_THAN, draw};
use crate::failure::{EXIT_OK, Outcome};
use crate::input;
use crate::output::{Out, warn};

// Arguments of `tree` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct TreeArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file (default: the most recent session of the current directory).
    pub file: Option<PathBuf>,
    /// Print {"leafId", "branchIds", "tips", "labels"} as JSON instead of a drawing.
    #[arg(long)]
    pub json: bool,
    /// Fold linear runs longer than this many entries in the drawing.
    #[arg(long, value_name = "N", default_value_t = FOLD_RUNS_LONGER_THAN)]
    pub fold: usize,
}

/// Runs `tree`: everything it shows comes from the facade's [`Session`].
pub fn run(args: TreeArgs) -> Outcome {
    let (path, session) = input::open_session_from(&args.store, args.file)?;
    for diagnostic in session.tree_diagnostics() {
        warn(&input::session_diagnostic_line(&path, &diagnostic));
    }
    let mut out = Out::new();
    if args.json {
        out.json(&session.tree_json()?)?;
    } else {
        let title = session.name()?;
        out.line(&heading(&session, title.as_deref()))?;
        let labels = session.labels()?;
        let tree = session.tree();
        let describe_entry = |at: usize| {
            tree.entry(at)
                .ok()
                .and_then(|entry| serde_json::to_value(entry).ok())
                .map_or_else(String::new, |value| describe(&value))
        };
        let drawing = draw(tree.index(), &labels, &describe_entry, args.fold);
        drop(tree);
        out.text(&drawing)?;
    }
    out.flush()?;
    super::leave_to_exit(session);
    Ok(EXIT_OK)
}

/// `session <id> · pi · "title" · N entries · M tips`.
fn heading(session: &Session, title: Option<&str>) -> String {
    let id = session
        .header()
        .map_or_else(|| "(no header)".to_owned(), |h| h.id);
    let mut line = format!("session {id} · {}", session.dialect().as_str());
    if let Some(title) = title.filter(|t| !t.is_empty()) {
        line.push_str(&format!(" · {title:?}"));
    }
    let (count, tips) = (session.len(), session.tips().len());
    let entries = if count == 1 { "entry" } else { "entries" };
    let tip_word = if tips == 1 { "tip" } else { "tips" };
    line.push_str(&format!(" · {count} {entries} · {tips} {tip_word}"));
    line
}
