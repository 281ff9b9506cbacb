//! `pi-session fork`: copy a branch of a session into a new session file.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::write::{WriteDialect, failure, open_in};
use crate::failure::{EXIT_OK, Outcome};
use crate::output::Out;

// Arguments of `fork` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
#[command(
    after_help = "Writes a new session file (pi's createBranchedSession): a new header with \
    parentSession naming FILE, the entries of the branch ending at --at with their ids and \
    timestamps, and the labels in effect on it. pi and omp rebuild the same context from it as \
    from FILE at that entry. Works for files `append` refuses (version 1 or 2, no header)."
)]
pub struct ForkArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file.
    pub file: PathBuf,
    /// The entry whose branch to copy (default: the file's last entry).
    #[arg(long, value_name = "ID")]
    pub at: Option<String>,
    /// The folder for the new file (default: FILE's folder), or a new `.jsonl` path.
    #[arg(long, value_name = "DIR")]
    pub to: Option<PathBuf>,
    /// Whose shapes to write (default: the file's own).
    #[arg(long, value_enum, default_value_t = WriteDialect::Auto)]
    pub dialect: WriteDialect,
    /// Print {"path", "header"} of the new file as JSON.
    #[arg(long)]
    pub json: bool,
    /// How long to wait for another process holding the new session's locks (0: fail at once).
    #[arg(long, value_name = "SECONDS", default_value_t = super::write::DEFAULT_WAIT_SECONDS)]
    pub wait: f64,
}

/// Runs `fork`.
pub fn run(args: ForkArgs) -> Outcome {
    let store = args.store.open()?;
    let mut session = open_in(&store, &args.file, args.dialect)?;
    session.set_busy_timeout(super::write::busy_timeout(args.wait));
    let to = args.to.clone().unwrap_or_else(|| {
        args.file
            .parent()
            .map_or_else(|| PathBuf::from("."), PathBuf::from)
    });
    let fork = session
        .fork_to_in(&store, &to, args.at.as_deref())
        .map_err(|e| failure(&e, &args.file))?;
    let path = fork.path().unwrap_or_default();
    let mut out = Out::new();
    if args.json {
        let header = serde_json::to_value(fork.header()).unwrap_or_default();
        out.json(&json!({"path": path.display().to_string(), "header": header}))?;
    } else {
        out.line(&format!(
            "forked {} entries into {}",
            fork.entries()?.len(),
            path.display()
        ))?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
