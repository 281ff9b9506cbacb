//! Finding and opening the session a command works on.

use std::path::{Path, PathBuf};

use pi_session::store::{self, Diagnostic, SessionFile, Store};
use pi_session::{ProjectFolders, Session, latest_for_cwd};

use crate::failure::Failure;
use crate::output::warn;
use crate::store_args::StoreArgs;

/// A session file opened for reading, with what the store found wrong in it.
pub struct Loaded {
    /// The file.
    pub path: PathBuf,
    /// The opened session (header and index; bodies read on demand).
    pub file: SessionFile,
    /// Damaged or unusual lines.
    pub diagnostics: Vec<Diagnostic>,
}

/// The file named on the command line, or the most recent session of the current directory
/// (omp's folder first, then pi's, like `omp -c`, then the Rust agent's
/// `~/.rho/sessions/<project hash>`, as `ls` lists them).
pub fn resolve(file: Option<PathBuf>) -> Result<PathBuf, Failure> {
    if let Some(file) = file {
        return Ok(file);
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(format!("could not read the current directory: {e}")))?;
    if let Some(path) = latest_for_cwd(&cwd)? {
        return Ok(path);
    }
    let home = pi_session::store::paths::home_dir();
    if let Some(home) = &home
        && let Some(path) = pi_session::find_latest_session(home, &cwd)?
    {
        return Ok(path);
    }
    let folders = ProjectFolders::for_cwd(&cwd);
    let mut message = format!("no session found for {}; looked in:", cwd.display());
    let rho = home.map(|home| pi_session::rho_session_dir(&home, &cwd));
    for folder in folders.all().into_iter().chain(rho.as_deref()) {
        message.push_str(&format!("\n  {}", folder.display()));
    }
    if folders.all().is_empty() {
        message.push_str("\n  (no omp or pi folder: HOME is not set)");
    }
    message.push_str("\nname a session file: pi-session <command> FILE");
    Err(Failure::new(message))
}

/// Opens `path` read-only and prints its warnings on stderr. Fails for I/O problems and for a
/// file with neither a header nor entries; other damage is only reported.
#[allow(
    dead_code,
    reason = "for commands without --store (other branches call it)"
)]
pub fn load(path: PathBuf) -> Result<Loaded, Failure> {
    load_in(&Store::Files, path)
}

/// [`load`] from the store `--store` names ([`StoreArgs`]): FILE, or for files the most recent
/// session of the current directory ([`resolve`]); a keyed store needs FILE.
pub fn load_from(args: &StoreArgs, file: Option<PathBuf>) -> Result<Loaded, Failure> {
    let store = args.open()?;
    load_in(&store, resolve_in(&store, file)?)
}

/// [`open_session`] from the store `--store` names, FILE resolved as [`load_from`] does.
pub fn open_session_from(
    args: &StoreArgs,
    file: Option<PathBuf>,
) -> Result<(PathBuf, Session), Failure> {
    let store = args.open()?;
    let path = resolve_in(&store, file)?;
    let session = open_session_in(&store, &path)?;
    Ok((path, session))
}

/// [`resolve`] for `store`: a keyed store has no "current directory" session, so FILE is needed.
pub fn resolve_in(store: &Store, file: Option<PathBuf>) -> Result<PathBuf, Failure> {
    match (store, file) {
        (Store::Files, file) => resolve(file),
        (_, Some(file)) => Ok(file),
        (_, None) => Err(Failure::new(format!(
            "name the session: with --store, FILE is its path as omp names it (`pi-session ls --store URL` lists them in {})",
            store.describe()
        ))),
    }
}

/// [`load`] from `store`.
pub fn load_in(store: &Store, path: PathBuf) -> Result<Loaded, Failure> {
    if matches!(store, Store::Files) {
        refuse_folder(&path)?;
    }
    let (file, diagnostics) = store.open(&path)?;
    let loaded = Loaded {
        path,
        file,
        diagnostics,
    };
    warn_diagnostics(&loaded);
    if loaded.file.header().is_none() && loaded.file.is_empty() {
        return Err(not_a_session(&loaded.path));
    }
    Ok(loaded)
}

/// Opens `path` as a facade [`Session`] for reading and prints the store's warnings on stderr,
/// as [`load`] does. Fails for I/O problems and for a file with neither a header nor entries.
#[allow(
    dead_code,
    reason = "for commands without --store (other branches call it)"
)]
pub fn open_session(path: &Path) -> Result<Session, Failure> {
    open_session_in(&Store::Files, path)
}

/// [`open_session`] from `store`.
pub fn open_session_in(store: &Store, path: &Path) -> Result<Session, Failure> {
    Ok(read_session_in(store, path)?.session)
}

/// A session opened for reading ([`Session::read_in`]), with what was wrong with the file.
pub struct ReadSession {
    /// The file.
    pub path: PathBuf,
    /// The session (its cursor at the file's last entry with an id).
    pub session: Session,
    /// What the store found in the file (damaged or unusual lines, notes).
    pub diagnostics: Vec<Diagnostic>,
}

/// [`read_session_in`] from the store `--store` names, FILE resolved as [`load_from`] does.
pub fn read_session_from(args: &StoreArgs, file: Option<PathBuf>) -> Result<ReadSession, Failure> {
    let store = args.open()?;
    let path = resolve_in(&store, file)?;
    read_session_in(&store, &path)
}

/// The store's diagnostics among those a facade open returns (the resolver's, walking the
/// branch, are asked for apart: [`Session::tree_diagnostics`]).
pub fn file_diagnostics(diagnostics: Vec<pi_session::Diagnostic>) -> Vec<Diagnostic> {
    diagnostics
        .into_iter()
        .filter_map(|d| d.file().cloned())
        .collect()
}

/// Opens `path` in `store` for reading ([`Session::read_in`]) and prints the store's warnings
/// on stderr. Fails for I/O problems and for a file with neither a header nor entries.
pub fn read_session_in(store: &Store, path: &Path) -> Result<ReadSession, Failure> {
    if matches!(store, Store::Files) {
        refuse_folder(path)?;
    }
    let (session, diagnostics) = Session::read_in(store, path, "unknown:unknown")?;
    let diagnostics = file_diagnostics(diagnostics);
    for diagnostic in &diagnostics {
        if diagnostic.severity() >= store::Severity::Warning {
            warn(&diagnostic_line(path, diagnostic));
        }
    }
    if session.header().is_none() && session.is_empty() {
        return Err(not_a_session(path));
    }
    Ok(ReadSession {
        path: path.to_path_buf(),
        session,
        diagnostics,
    })
}

/// A facade diagnostic as `file:line:offset: message` (the place in the file), or
/// `file: message`.
pub fn session_diagnostic_line(path: &Path, diagnostic: &pi_session::Diagnostic) -> String {
    match (diagnostic.line(), diagnostic.byte_offset()) {
        (Some(line), Some(offset)) => {
            format!(
                "{}:{line}:{offset}: {}",
                path.display(),
                diagnostic.message()
            )
        }
        _ => format!("{}: {diagnostic}", path.display()),
    }
}

fn refuse_folder(path: &Path) -> Result<(), Failure> {
    if path.is_dir() {
        return Err(Failure::new(format!(
            "{} is a folder; name a session file in it (`pi-session ls {}` lists them)",
            path.display(),
            path.display()
        )));
    }
    Ok(())
}

fn not_a_session(path: &Path) -> Failure {
    Failure::new(format!(
        "{} is not a session: it has neither a session header nor entries (`pi-session check {}` says what it holds)",
        path.display(),
        path.display()
    ))
}

/// The diagnostic as `file:line:offset: message`.
pub fn diagnostic_line(path: &Path, diagnostic: &Diagnostic) -> String {
    format!(
        "{}:{}:{}: {}",
        path.display(),
        diagnostic.line,
        diagnostic.byte_offset,
        diagnostic.message
    )
}

/// Prints the store's warnings and errors on stderr (notes such as "migrated in memory" are
/// left to `check`).
fn warn_diagnostics(loaded: &Loaded) {
    for diagnostic in loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity() >= store::Severity::Warning)
    {
        warn(&diagnostic_line(&loaded.path, diagnostic));
    }
}

/// Where omp's blobs are for a session file: `--blobs`, else the library's rule
/// ([`pi_session::blob_dir`]).
pub fn blob_dir(explicit: Option<PathBuf>, session: &Path) -> Option<PathBuf> {
    explicit.or_else(|| pi_session::blob_dir(session))
}

/// The session files of a cross-session command: every `*.jsonl` under the paths given, or by
/// default under omp's and pi's session roots (the ones that exist). An error when none of the
/// default roots exists, saying where it looked.
pub fn session_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    if !paths.is_empty() {
        return Ok(pi_session::session_files_under(paths)?);
    }
    let roots = pi_session::session_roots_from_env();
    let existing: Vec<PathBuf> = roots
        .iter()
        .filter(|(_, root)| root.is_dir())
        .map(|(_, root)| root.clone())
        .collect();
    if existing.is_empty() {
        let mut message = "no omp or pi session folder found; looked in:".to_owned();
        for (kind, root) in &roots {
            message.push_str(&format!("\n  {} ({kind})", root.display()));
        }
        message.push_str("\nname folders of sessions: pi-session <command> DIR...");
        return Err(Failure::new(message));
    }
    Ok(pi_session::session_files_under(&existing)?)
}
