//! `pi-session tree`: the entries of a session as a tree.

use std::path::PathBuf;

use clap::Args;
use pi_session::tree::{Dialect, LeafSelector, RenderOptions, SessionView};
use serde_json::Value;

use crate::describe::describe;
use crate::failure::{EXIT_OK, Outcome};
use crate::input;
use crate::output::{Out, warn};

/// Arguments of `tree`.
#[derive(Debug, Args)]
pub struct TreeArgs {
    /// The session file (default: the most recent session of the current directory).
    pub file: Option<PathBuf>,
    /// Print {"leafId", "branchIds", "tips", "labels"} as JSON instead of a drawing.
    #[arg(long)]
    pub json: bool,
    /// Fold linear runs longer than this many entries in the drawing.
    #[arg(long, value_name = "N", default_value_t = RenderOptions::default().fold_runs_longer_than)]
    pub fold: usize,
}

/// Runs `tree`.
pub fn run(args: TreeArgs) -> Outcome {
    let loaded = input::load(input::resolve(args.file)?)?;
    let view = SessionView::new(&loaded.file);
    for diagnostic in view.index().branch_for(&LeafSelector::Default).diagnostics {
        warn(&input::tree_diagnostic_line(&loaded, &diagnostic));
    }
    let mut out = Out::new();
    if args.json {
        out.json(&view.tree_json()?)?;
    } else {
        let dialect = view.detect_dialect()?;
        let title = view.name(dialect)?;
        out.line(&heading(
            &loaded.file,
            dialect,
            title.as_deref(),
            view.index().tips().len(),
        ))?;
        let entry = |position: usize| source_value(&loaded.file, position);
        let drawing = view.render(
            &|position| entry(position).map_or_else(String::new, |v| describe(&v)),
            RenderOptions {
                fold_runs_longer_than: args.fold,
            },
        )?;
        out.text(&drawing)?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

fn source_value(file: &pi_session::store::SessionFile, position: usize) -> Option<Value> {
    use pi_session::tree::EntrySource as _;
    file.entry_value(position).ok()
}

/// `session <id> · pi · "title" · N entries · M tips`.
fn heading(
    file: &pi_session::store::SessionFile,
    dialect: Dialect,
    title: Option<&str>,
    tips: usize,
) -> String {
    let id = file.header().map_or("(no header)", |h| h.id.as_str());
    let mut line = format!("session {id} · {}", dialect.as_str());
    if let Some(title) = title.filter(|t| !t.is_empty()) {
        line.push_str(&format!(" · {title:?}"));
    }
    let entries = if file.len() == 1 { "entry" } else { "entries" };
    let tip_word = if tips == 1 { "tip" } else { "tips" };
    line.push_str(&format!(" · {} {entries} · {tips} {tip_word}", file.len()));
    line
}
