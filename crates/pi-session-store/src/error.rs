//! The store's one error type. Only I/O, locking and misuse are errors; damaged content is a
//! [`Diagnostic`](crate::Diagnostic), never an error.

use std::io;
use std::path::PathBuf;

/// Why a store operation failed. Every message names the file and says what to do.
///
/// Not `#[non_exhaustive]`: the facade matches every variant, so a new one must be given a
/// facade kind where it is added.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading, writing, creating or syncing a file or directory failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What the store was doing, e.g. "could not read".
        action: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Another writer holds the session's lock.
    #[error(
        "session {session} is being written by another process (lock file {lock} is held); close that session first, or open this one read-only with `open`"
    )]
    Locked {
        /// The session file.
        session: PathBuf,
        /// The lock file that is held.
        lock: PathBuf,
    },
    /// omp's publish lock (`.<name>.lock`) stayed held by another process for the whole wait
    /// (500 ms): a writer such as omp is appending to this session right now.
    #[error(
        "could not take the publish lock {lock} of {session} within 500 ms (held by {holder}, as `<pid>:<ms>`): another process (such as omp) is writing this session; retry later, and if no process is writing it, delete {lock}"
    )]
    PublishLockTimeout {
        /// The session file.
        session: PathBuf,
        /// omp's lock file, `.<name>.lock`.
        lock: PathBuf,
        /// The lock file's content, trimmed (`unknown` if it could not be read).
        holder: String,
    },
    /// The file is no longer what this writer last wrote or read: another process appended to
    /// it, rewrote it, or removed it. Nothing was written.
    #[error(
        "{path} changed under this writer (expected {expected} bytes, found {}): another process wrote to it; nothing was written. Open it again with `open_for_append` to see its new entries, then append",
        describe_found(*.actual, *.replaced)
    )]
    Conflict {
        /// The session file.
        path: PathBuf,
        /// The size this writer last wrote or read.
        expected: u64,
        /// The size found (`None`: the file is gone).
        actual: Option<u64>,
        /// The path now names a different file (it was replaced, e.g. by a rewrite).
        replaced: bool,
    },
    /// The file changed under us: the bytes at an indexed offset are no longer that entry.
    #[error(
        "{path} changed since it was opened (line {line} no longer holds the entry that was indexed there); open it again"
    )]
    Changed {
        /// The session file.
        path: PathBuf,
        /// The line whose bytes differ.
        line: u64,
    },
    /// An indexed line could not be turned into an entry when materialised.
    #[error("line {line} of {path} could not be read as an entry: {detail}")]
    BadEntry {
        /// The session file (or `<memory>`).
        path: PathBuf,
        /// The line concerned.
        line: u64,
        /// What went wrong.
        detail: String,
    },
    /// An entry index past the end of the session.
    #[error("entry index {index} is out of range: the session has {len} entries")]
    NoSuchEntry {
        /// The index asked for.
        index: usize,
        /// The number of entries.
        len: usize,
    },
    /// Serialising an entry or header to JSON failed (e.g. a map with non-string keys).
    #[error("could not serialise the {what} to JSON: {detail}")]
    Serialize {
        /// "entry", "header" or "title slot".
        what: &'static str,
        /// The serialiser's explanation.
        detail: String,
    },
    /// Appending to a file that pi and omp rewrite as version 3 when they open it (version 1:
    /// no ids, so pi mints new ones; version 2: roles renamed).
    #[error(
        "{path} is a version {version} session: {}; migrate it to version 3 first, or continue it in a new session (e.g. a fork)",
        why_migrate(*.version)
    )]
    NeedsMigration {
        /// The session file.
        path: PathBuf,
        /// The version in its header.
        version: u64,
    },
    /// The file to create already exists.
    #[error("{path} already exists; pick another session id or open it with `open_for_append`")]
    AlreadyExists {
        /// The file concerned.
        path: PathBuf,
    },
    /// A file named for resuming has no session header, so appended entries would be orphans.
    #[error(
        "{path} has no session header; it cannot be appended to (open it read-only with `open`)"
    )]
    NoHeader {
        /// The session file.
        path: PathBuf,
    },
    /// The path names a directory, device or pipe, not a regular file.
    #[error("{path} is not a regular file; a session is a .jsonl file")]
    NotAFile {
        /// The path concerned.
        path: PathBuf,
    },
    /// `set_leaf` named an id that no entry of the session has.
    #[error(
        "no entry of this session has id {id:?}; pick the id of an existing entry (or None for a new root)"
    )]
    UnknownId {
        /// The id asked for.
        id: String,
    },
    /// An append of an entry whose `type` is reserved for the header or the title slot.
    #[error(
        "an entry cannot have type {kind:?}: that type is reserved for the header and the title slot"
    )]
    ReservedType {
        /// The reserved type.
        kind: String,
    },
    /// A file operation on a session that lives in memory only.
    #[error("the session lives in memory only; it has no file to {action}")]
    InMemory {
        /// What was attempted.
        action: &'static str,
    },
}

impl StoreError {
    /// Shorthand for [`StoreError::Io`].
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Why a file of `version` takes no appends until migrated (one sentence, no full stop).
pub fn why_migrate(version: u64) -> &'static str {
    if version < 2 {
        "pi gives every entry of a version 1 file a new id when it opens it, so entries appended now would be orphaned"
    } else {
        "pi and omp rewrite a version 2 file as version 3 when they open it, which would race with appends"
    }
}

fn describe_found(actual: Option<u64>, replaced: bool) -> String {
    match (actual, replaced) {
        (None, _) => "no file".to_owned(),
        (Some(size), false) => format!("{size} bytes"),
        (Some(size), true) => format!("a different file of {size} bytes"),
    }
}
