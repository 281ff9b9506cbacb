//! The facade's one error type.
//!
//! This crate follows jiff's "one error type" pattern: [`Error`] is opaque, cheap to clone (an
//! `Arc` inside), answers [`Error::kind`] and a few `is_*` predicates. The message says, in the
//! facade's words, what went wrong and what to do; it never repeats its
//! [`source`](std::error::Error::source), which is set only where there is a deeper cause to
//! report (the operating system's error for [`ErrorKind::Io`]). Print the message and then the
//! source chain, as `anyhow`'s `{:#}` does, and every fact appears once.

use std::fmt;
use std::sync::Arc;

use pi_session_store::StoreError;
use pi_session_tree::{EntryReadError, TreeError};

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing a file or folder failed (the operating system said no; the source is
    /// its error).
    Io,
    /// Another process is writing the session: it holds the session's writer lock, or omp's
    /// publish lock stayed held for the whole wait. Retry later, or close the other writer.
    Busy,
    /// The file changed on disk since this session read it (another process appended to it or
    /// rewrote it); nothing was written. Reopen it with [`Session::open`](crate::Session::open)
    /// and retry.
    Conflict,
    /// The path names a folder, device or pipe, not a session file.
    NotAFile,
    /// The file is not a session that can be appended to: it has no `type:"session"` header.
    NotASession,
    /// An entry id that the session does not hold.
    UnknownEntry,
    /// A line already read no longer holds the same bytes (the file was rewritten), or cannot be
    /// read as an entry.
    Changed,
    /// An argument the API cannot use (e.g. an entry type reserved for the header).
    InvalidInput,
    /// A version 1 or 2 session file: pi and omp rewrite it as version 3 when they open it (and
    /// pi gives a version 1 file's entries new ids), so nothing can be appended to it.
    /// [`Session::migrate`](crate::Session::migrate) or
    /// [`Session::fork_to`](crate::Session::fork_to) make a file that can.
    NeedsMigration,
    /// The file to create exists already.
    AlreadyExists,
}

/// The facade's error: opaque, cheap to clone, with a [`kind`](Error::kind).
///
/// ```
/// let err = pi_session::Session::open("/no/such/file.jsonl", "anthropic:claude-x").unwrap_err();
/// assert!(err.is_io());
/// assert!(err.to_string().contains("/no/such/file.jsonl"));
/// // The OS error is the source, not part of the message.
/// let os = std::error::Error::source(&err).unwrap().to_string();
/// assert!(!err.to_string().contains(&os));
/// ```
#[derive(Clone)]
pub struct Error {
    inner: Arc<Inner>,
}

struct Inner {
    kind: ErrorKind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl Error {
    fn new(
        kind: ErrorKind,
        message: String,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                kind,
                message,
                source,
            }),
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// Reading or writing failed ([`ErrorKind::Io`]).
    pub fn is_io(&self) -> bool {
        self.kind() == ErrorKind::Io
    }

    /// Another process is writing the session ([`ErrorKind::Busy`]).
    pub fn is_busy(&self) -> bool {
        self.kind() == ErrorKind::Busy
    }

    /// The file changed under this session ([`ErrorKind::Conflict`]): reopen and retry.
    pub fn is_conflict(&self) -> bool {
        self.kind() == ErrorKind::Conflict
    }

    /// The file has no session header ([`ErrorKind::NotASession`]).
    pub fn is_not_a_session(&self) -> bool {
        self.kind() == ErrorKind::NotASession
    }

    /// An entry id that the session does not hold ([`ErrorKind::UnknownEntry`]).
    pub fn is_unknown_entry(&self) -> bool {
        self.kind() == ErrorKind::UnknownEntry
    }

    pub(crate) fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message.into(), None)
    }

    /// An entry a read was asked for and did not give back: a bug of the reader's, not the
    /// file's (the one message for every read that checks it).
    pub(crate) fn entry_not_read() -> Self {
        Self::invalid_input("an entry was not read (a bug)")
    }

    fn unknown_entry(id: &str) -> Self {
        Self::new(
            ErrorKind::UnknownEntry,
            format!(
                "no entry of this session has id {id:?}; use the id of one of its entries (Session::entries lists them)"
            ),
            None,
        )
    }

    pub(crate) fn io(message: impl Into<String>, source: std::io::Error) -> Self {
        Self::new(ErrorKind::Io, message.into(), Some(Box::new(source)))
    }
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        use ErrorKind as K;
        let (kind, message) = match error {
            StoreError::Io {
                action,
                path,
                source,
            } => {
                return Self::io(format!("{action} {}", path.display()), source);
            }
            StoreError::Locked { session, lock } => (
                K::Busy,
                format!(
                    "{} is being written by another process (its lock {} is held): close that session, or keep reading this one without appending",
                    session.display(),
                    lock.display()
                ),
            ),
            StoreError::PublishLockTimeout {
                session,
                lock,
                holder,
            } => (
                K::Busy,
                format!(
                    "{} is being written right now by another process such as omp (its publish lock {} is held by {holder}, as pid:ms): retry later; if no process is writing it, delete {}",
                    session.display(),
                    lock.display(),
                    lock.display()
                ),
            ),
            StoreError::Conflict { path, .. } => (
                K::Conflict,
                format!(
                    "{} changed since this session read it (another process appended to it or rewrote it); nothing was written: open it again with Session::open and retry",
                    path.display()
                ),
            ),
            StoreError::Changed { path, line } => (
                K::Changed,
                format!(
                    "{} was rewritten since it was opened (line {line} no longer holds the entry read there): open it again with Session::open",
                    path.display()
                ),
            ),
            StoreError::BadEntry { path, line, detail } => (
                K::Changed,
                format!(
                    "line {line} of {} cannot be read as an entry ({detail}): open the file again with Session::open, which reports damaged lines as diagnostics",
                    path.display()
                ),
            ),
            StoreError::NoSuchEntry { index, len } => (
                K::InvalidInput,
                format!("entry position {index} is past the end of the session ({len} entries)"),
            ),
            StoreError::Serialize { what, detail } => (
                K::InvalidInput,
                format!(
                    "the {what} cannot be written as JSON ({detail}); build entries with the builders of this crate or from JSON objects with string keys"
                ),
            ),
            StoreError::NeedsMigration { path, version } => (
                K::NeedsMigration,
                format!(
                    "{} is a version {version} session: {}; call Session::migrate to rewrite it as version 3 (a .bak copy is kept), or Session::fork_to to continue in a new file",
                    path.display(),
                    pi_session_store::why_migrate(version)
                ),
            ),
            StoreError::AlreadyExists { path } => (
                K::AlreadyExists,
                format!(
                    "{} exists already; pick another path, or open it with Session::open",
                    path.display()
                ),
            ),
            StoreError::NoHeader { path } => (
                K::NotASession,
                format!(
                    "{} has no session header, so appended entries would belong to no session; read it with Session::open, or continue it in a new file with Session::fork_to",
                    path.display()
                ),
            ),
            StoreError::NotAFile { path } => (
                K::NotAFile,
                format!(
                    "{} is not a regular file (a folder, a device or a pipe); name a session's .jsonl file",
                    path.display()
                ),
            ),
            StoreError::UnknownId { id } => return Self::unknown_entry(&id),
            StoreError::ReservedType { kind } => (
                K::InvalidInput,
                format!(
                    "an entry cannot have type {kind:?}: that type is reserved for the header and omp's title slot"
                ),
            ),
            StoreError::InMemory { action } => (
                K::InvalidInput,
                format!(
                    "this session lives in memory only and has no file to {action}; create it in a folder with Session::new to have one"
                ),
            ),
        };
        Self::new(kind, message, None)
    }
}

impl From<TreeError> for Error {
    fn from(error: TreeError) -> Self {
        match error {
            TreeError::EntryNotFound(id) => Self::unknown_entry(&id),
        }
    }
}

impl From<EntryReadError> for Error {
    fn from(error: EntryReadError) -> Self {
        match error {
            EntryReadError::Store(store) => store.into(),
            EntryReadError::Json(json) => Self::new(
                ErrorKind::Changed,
                "an entry read from the file cannot be turned back into JSON (please report this with the line concerned)".to_owned(),
                Some(Box::new(json)),
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.inner.kind)
            .field("message", &self.inner.message)
            .field("source", &self.inner.source)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// `Result` with the facade's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error and its sources, `: `-joined (what the CLI prints).
///
/// ```
/// let err = pi_session::Session::open("/no/such/file.jsonl", "x").unwrap_err();
/// let line = pi_session::error_chain(&err);
/// assert!(line.starts_with("could not"));
/// assert!(line.matches("/no/such/file.jsonl").count() == 1);
/// ```
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut line = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        line.push_str(": ");
        line.push_str(&cause.to_string());
        source = cause.source();
    }
    line
}
