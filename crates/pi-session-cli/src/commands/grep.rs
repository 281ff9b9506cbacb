//! `pi-session grep`: search message text across sessions ([`pi_session::search`]), printing
//! the file and line, the entry id, whether the entry is on the leaf's branch, the role and the
//! matching line.

use std::path::PathBuf;

use clap::Args;
use pi_session::{Hit, Pattern, SearchOptions, SearchRole, search};
use serde_json::{Value, json};

use crate::failure::{EXIT_OK, Outcome};
use crate::input::session_files;
use crate::output::{Out, warn};
use crate::progress::Progress;

/// The most characters of a matching line printed in the table (`--json` has it whole).
const SHOWN_CHARS: usize = 200;

// Arguments of `grep` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct GrepArgs {
    /// The text to look for (a regular expression with `--regex`).
    pub pattern: String,
    /// Session files or folders (walked for `*.jsonl`). Default: every session under omp's and
    /// pi's session folders.
    pub dirs: Vec<PathBuf>,
    /// Only messages of this role (`tool`: tool results and bash executions).
    #[arg(long, value_parser = ["user", "assistant", "tool"])]
    pub role: Option<String>,
    /// Read PATTERN as a regular expression (Rust `regex` syntax).
    #[arg(long)]
    pub regex: bool,
    /// Search tool results too.
    #[arg(long)]
    pub tool_results: bool,
    /// Search assistant thinking too.
    #[arg(long)]
    pub thinking: bool,
    /// Print JSON instead of lines.
    #[arg(long)]
    pub json: bool,
}

/// Runs `grep`. Exit 0 whether or not anything matched (as `--json` scripts expect);
/// 2 when it could not search.
pub fn run(args: GrepArgs) -> Outcome {
    let pattern = Pattern::new(&args.pattern, args.regex)?;
    let options = SearchOptions {
        role: args.role.as_deref().and_then(SearchRole::parse),
        tool_results: args.tool_results,
        thinking: args.thinking,
    };
    let files = session_files(&args.dirs)?;
    let progress = Progress::new(files.len(), "searching");
    let results = search(&files, &pattern, &options, &|path| {
        progress.step(&path.display().to_string());
    });
    progress.finish();
    let mut hits: Vec<&Hit> = Vec::new();
    let mut damaged = 0;
    for (path, result) in &results {
        match result {
            Ok(found) => {
                hits.extend(&found.hits);
                damaged += found.damaged_lines;
            }
            Err(error) => warn(&format!("{}: skipped: {error}", path.display())),
        }
    }
    let mut out = Out::new();
    if args.json {
        out.json(&json!({
            "files": files.len(),
            "damagedLines": damaged,
            "hits": hits.iter().map(|h| hit_json(h)).collect::<Vec<Value>>(),
        }))?;
    } else {
        for hit in &hits {
            out.line(&hit_line(hit))?;
        }
    }
    out.flush()?;
    if damaged > 0 && !args.json {
        warn(&format!(
            "pi-session: {damaged} damaged line{} not searched (`pi-session check` shows them)",
            if damaged == 1 { "" } else { "s" }
        ));
    }
    Ok(EXIT_OK)
}

fn hit_json(hit: &Hit) -> Value {
    json!({
        "path": hit.path,
        "line": hit.line,
        "session": hit.session,
        "entryId": hit.entry_id,
        "onBranch": hit.on_branch,
        "role": hit.role,
        "field": hit.field,
        "text": hit.text,
    })
}

/// `path:line: entry-id branch role: text` (`off-branch` for entries off the leaf's branch).
fn hit_line(hit: &Hit) -> String {
    let text: String = hit.text.chars().take(SHOWN_CHARS).collect();
    let field = match hit.field {
        "thinking" => " (thinking)",
        _ => "",
    };
    format!(
        "{}:{}: {} {} {}{field}: {text}",
        hit.path.display(),
        hit.line,
        hit.entry_id.as_deref().unwrap_or("-"),
        if hit.on_branch {
            "branch"
        } else {
            "off-branch"
        },
        hit.role,
    )
}
