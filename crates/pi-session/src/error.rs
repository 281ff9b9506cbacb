//! The facade's one error type.
//!
//! This crate follows jiff's "one error type" pattern: [`Error`] is opaque, cheap to clone (an
//! `Arc` inside), answers [`Error::kind`] and a few `is_*` predicates, and keeps the lower crate's
//! precise error as its [`source`](std::error::Error::source). Hosts match on the kind; people
//! read the message, which always says what went wrong and what to do.

use std::fmt;
use std::sync::Arc;

use pi_session_store::StoreError;
use pi_session_tree::{EntryReadError, TreeError};

/// What kind of failure an [`Error`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing a file or folder failed (the operating system said no).
    Io,
    /// Another process holds the session's writer lock.
    Locked,
    /// The file is not a session: it has no `type:"session"` header.
    NotASession,
    /// An entry id that the session does not hold.
    UnknownEntry,
    /// The file changed on disk since it was opened.
    Changed,
    /// An argument the API cannot use (e.g. an entry type reserved for the header).
    InvalidInput,
    /// A session file pi would rewrite when it opens it (version 1); it cannot be appended to.
    NeedsMigration,
}

/// The facade's error: opaque, cheap to clone, with a [`kind`](Error::kind).
///
/// ```
/// let err = pi_session::Session::open("/no/such/file.jsonl", "anthropic:claude-x").unwrap_err();
/// assert!(err.is_io());
/// assert!(err.to_string().contains("/no/such/file.jsonl"));
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

    /// Another process is writing the session ([`ErrorKind::Locked`]).
    pub fn is_locked(&self) -> bool {
        self.kind() == ErrorKind::Locked
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
}

impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        let kind = match &error {
            StoreError::Io { .. } => ErrorKind::Io,
            StoreError::Locked { .. } => ErrorKind::Locked,
            StoreError::Changed { .. } => ErrorKind::Changed,
            StoreError::NoHeader { .. } => ErrorKind::NotASession,
            StoreError::UnknownId { .. } => ErrorKind::UnknownEntry,
            StoreError::NeedsMigration { .. } => ErrorKind::NeedsMigration,
            _ => ErrorKind::InvalidInput,
        };
        Self::new(kind, error.to_string(), Some(Box::new(error)))
    }
}

impl From<TreeError> for Error {
    fn from(error: TreeError) -> Self {
        let kind = match &error {
            TreeError::EntryNotFound(_) => ErrorKind::UnknownEntry,
        };
        Self::new(kind, error.to_string(), Some(Box::new(error)))
    }
}

impl From<EntryReadError> for Error {
    fn from(error: EntryReadError) -> Self {
        match error {
            EntryReadError::Store(store) => store.into(),
            other => Self::new(
                ErrorKind::InvalidInput,
                other.to_string(),
                Some(Box::new(other)),
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
