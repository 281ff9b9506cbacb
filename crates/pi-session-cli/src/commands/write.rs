//! What the write commands (`append`, `fork`) share: opening a session for writing in the
//! file's dialect (or the one `--dialect` names) and printing what was written.

use std::path::Path;

use clap::ValueEnum;
use pi_session::store::{Severity, Store};
use pi_session::tree::Dialect;
use pi_session::types::{Entry, to_js_string};
use pi_session::{ErrorKind, Session};
use serde_json::Value;

use crate::failure::Failure;
use crate::output::{Out, warn};

/// `--dialect` of the write commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WriteDialect {
    /// The file's own (omp's title slot, header keys and entry shapes; else pi).
    Auto,
    /// pi 0.73's shapes.
    Pi,
    /// pi 1.6's shapes (those of pi 0.73 for every entry these commands write).
    Pi16,
    /// omp 18's shapes.
    Omp,
}

impl WriteDialect {
    /// The dialect to write in, `None` for the file's own.
    pub fn chosen(self) -> Option<Dialect> {
        match self {
            Self::Auto => None,
            Self::Pi => Some(Dialect::PI),
            Self::Pi16 => Some(Dialect::PI16),
            Self::Omp => Some(Dialect::OMP),
        }
    }
}

/// How long the write commands wait for a session another process is writing, by default
/// (`--wait SECONDS`).
pub const DEFAULT_WAIT_SECONDS: f64 = 5.0;

/// `--wait SECONDS` as a busy timeout: `None` (fail at once) for 0, and for a value that is no
/// duration (clap has checked it is a number).
pub fn busy_timeout(seconds: f64) -> Option<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|d| !d.is_zero())
}

/// The model a session opened by a write command assumes when its branch names none (only
/// used for the first `model_change` of a new session, which these commands never write).
pub const UNKNOWN_MODEL: &str = "unknown:unknown";

/// Opens `path` for writing: its diagnostics on stderr, the dialect set.
#[allow(
    dead_code,
    reason = "for commands without --store (other branches call it)"
)]
pub fn open(path: &Path, dialect: WriteDialect) -> Result<Session, Failure> {
    open_in(&Store::Files, path, dialect)
}

/// [`open`] from `store` (`--store`, see [`crate::store_args`]).
pub fn open_in(store: &Store, path: &Path, dialect: WriteDialect) -> Result<Session, Failure> {
    if matches!(store, Store::Files) && !path.exists() {
        return Err(Failure::new(format!(
            "{} does not exist; name an existing session file",
            path.display()
        )));
    }
    let opened = Session::open_in(store, path, UNKNOWN_MODEL)?;
    for diagnostic in &opened.diagnostics {
        if diagnostic.severity() >= Severity::Warning {
            warn(&crate::input::session_diagnostic_line(path, diagnostic));
        }
    }
    let mut session = opened.session;
    if let Some(dialect) = dialect.chosen() {
        session.set_dialect(dialect);
    }
    Ok(session)
}

/// A failed write, with the command that gets past it where there is one.
pub fn failure(error: &pi_session::Error, path: &Path) -> Failure {
    let hint = match error.kind() {
        ErrorKind::NeedsMigration => format!(
            "\n`pi-session migrate {0}` rewrites it as version 3; `pi-session fork {0}` continues it in a new file",
            path.display()
        ),
        ErrorKind::NotASession => format!(
            "\n`pi-session fork {}` continues it in a new file with a header",
            path.display()
        ),
        ErrorKind::Busy => "\n`--wait SECONDS` waits longer for the other writer".to_owned(),
        _ => String::new(),
    };
    Failure::new(format!("{}{hint}", pi_session::error_chain(error)))
}

/// Prints an entry written: its JSON (as it reads back from the file) with `--json`, else one
/// line for a person.
pub fn print_entry(out: &mut Out, entry: &Entry, json: bool, path: &Path) -> Result<(), Failure> {
    if json {
        let text = to_js_string(entry)
            .map_err(|e| Failure::new(format!("could not write the entry as JSON: {e}")))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| Failure::new(format!("could not write the entry as JSON: {e}")))?;
        out.json(&value)
    } else {
        out.line(&format!(
            "appended {} {} to {}",
            entry.kind(),
            entry.id().unwrap_or("(no id)"),
            path.display()
        ))
    }
}
