//! `pi-session cat`: every line of a session through the typed model, as JSONL.

use std::path::PathBuf;

use clap::Args;
use pi_session::store::Severity;
use pi_session::types::to_js_string;

use crate::failure::{EXIT_DAMAGED, EXIT_OK, Failure, Outcome};
use crate::input;
use crate::output::{Out, warn};

// Arguments of `cat` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
#[command(
    after_help = "Version 1 and 2 files come out migrated to version 3, as pi reads them. \
    Damaged lines are reported on stderr. Exit status: 0, or 1 when a line could not be read as \
    an entry, 2 when the file cannot be read."
)]
pub struct CatArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file (default: the most recent session of the current directory).
    pub file: Option<PathBuf>,
}

/// Entries read at a time.
const CHUNK: usize = 4096;

/// Runs `cat`: the title slot, the header and each entry, re-serialised from their typed form
/// (version 1 and 2 files come out migrated). Damaged lines are reported on stderr; the exit
/// code is 1 when a line could not be read as an entry.
pub fn run(args: CatArgs) -> Outcome {
    let read = input::read_session_from(&args.store, args.file)?;
    let session = &read.session;
    let mut damaged = read
        .diagnostics
        .iter()
        .any(|d| d.severity() == Severity::Error);
    let mut out = Out::new();
    let serialise = |what: &str, e: pi_session::types::JsonError| {
        Failure::new(format!("could not write the {what}: {e}"))
    };
    if let Some(slot) = session.title_slot() {
        out.line(&to_js_string(&slot).map_err(|e| serialise("title slot", e))?)?;
    }
    if let Some(header) = session.header() {
        out.line(&to_js_string(&header).map_err(|e| serialise("header", e))?)?;
    }
    let mut write = |entry: &pi_session::types::Entry| -> Result<(), Failure> {
        out.line(&to_js_string(entry).map_err(|e| serialise("entry", e))?)?;
        Ok(())
    };
    // A chunk of entries read in one batch (on every core); a chunk holding an entry the typed
    // model cannot read, entry by entry, so that each such entry is reported and the others
    // printed.
    let positions: Vec<usize> = (0..session.len()).collect();
    for chunk in positions.chunks(CHUNK) {
        if let Ok(entries) = session.entries_at(chunk) {
            entries.iter().try_for_each(&mut write)?;
            continue;
        }
        for &position in chunk {
            match session.entry_at(position) {
                Ok(entry) => write(&entry)?,
                Err(error) => {
                    warn(&format!("{}: {error}", read.path.display()));
                    damaged = true;
                }
            }
        }
    }
    out.flush()?;
    Ok(if damaged { EXIT_DAMAGED } else { EXIT_OK })
}
