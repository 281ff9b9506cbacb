//! `pi-session migrate`: rewrite a version 1 or 2 session file as version 3, as pi does.

use std::path::PathBuf;

use clap::Args;
use pi_session::Session;
use serde_json::json;

use crate::failure::{EXIT_OK, Outcome};
use crate::output::Out;

// Arguments of `migrate` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
#[command(
    after_help = "Rewrites FILE as pi does when it opens an old file (version 1 entries get ids; \
    lines that are not entries are dropped), keeps the file as it was in FILE.bak, and replaces \
    FILE atomically. A version 3 file is left as it is."
)]
pub struct MigrateArgs {
    /// The session file.
    pub file: PathBuf,
    /// Print {"path", "backup"} as JSON (`backup` null: nothing to do).
    #[arg(long)]
    pub json: bool,
    /// How long to wait for another process writing the session (0: refuse at once).
    #[arg(long, value_name = "SECONDS", default_value_t = super::write::DEFAULT_WAIT_SECONDS)]
    pub wait: f64,
}

/// Runs `migrate`.
pub fn run(args: MigrateArgs) -> Outcome {
    let waiting = super::write::busy_timeout(args.wait);
    let migrated = Session::migrate_waiting(&args.file, waiting)
        .map_err(|e| super::write::failure(&e, &args.file))?;
    let mut out = Out::new();
    let backup = migrated.backup.as_ref().map(|b| b.display().to_string());
    if args.json {
        out.json(&json!({"path": migrated.path.display().to_string(), "backup": backup}))?;
    } else {
        match backup {
            Some(backup) => out.line(&format!(
                "migrated {} to version 3 (the old file is {backup})",
                migrated.path.display()
            ))?,
            None => out.line(&format!(
                "{} is version 3 already; nothing to do",
                migrated.path.display()
            ))?,
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}
