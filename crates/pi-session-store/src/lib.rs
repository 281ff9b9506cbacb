//! pi-session-store: the append-only JSONL store for omp and pi session files.
//!
//! Job: read a session file into a header plus an index of entries (envelopes parsed, bodies
//! read on demand), append entries to a file the way omp and pi write them, keep one writer per
//! file, and find sessions on disk.
//!
//! Guarantees:
//! - [`open`] never writes to the file and never fails on content: damage comes back as
//!   [`Diagnostic`]s naming line, byte offset and what happened (only I/O is an error). Version 1
//!   and 2 files are migrated in memory exactly as pi does, with deterministic ids.
//! - [`SessionWriter::append`] writes one line per entry, serialised exactly as JavaScript's
//!   `JSON.stringify` would (via `pi-session-types`), never onto a torn line, and returns the
//!   entry as it reads back from the bytes written.
//! - A new file appears whole: slot, header and first entry are written to a hidden temporary
//!   file and hard-linked into place, so no reader, resuming writer or crash sees it empty.
//! - One owner per file: the writer holds an advisory lock on `.<name>.pi-session.lock` from its
//!   first append until it is dropped ([`StoreError::Locked`] for a second writer, at once or
//!   after [`WriterOptions::busy_timeout`]); the sidecar is deleted on close.
//! - Writers can wait: with a busy timeout, a writer waits for the lock and for omp's publish
//!   lock, and catches up on foreign appends by reading only the bytes appended since.
//! - Safe beside a running omp: every write takes omp's own publish lock, the `.<name>.lock` file
//!   ([`publish_lock_path`]; created exclusively, `<pid>:<ms>` inside — from a writer's second
//!   write on, by hard-linking a file of its own that holds the record, which it deletes when
//!   closed —, stolen only from a dead
//!   pid or, if malformed, after 500 ms; [`StoreError::PublishLockTimeout`] after 500 ms of
//!   waiting), and first checks that the file still has the size and identity this writer last
//!   saw; a foreign append or rewrite gives [`StoreError::Conflict`] and writes nothing (open the
//!   file again with [`SessionWriter::open_for_append`]). omp's outer OS-level gate
//!   (`.<name>.lock.os`) is not reproduced; omp takes the lock file inside it.
//! - Memory stays bounded: files are streamed in chunks (parsed on worker threads, a bounded number
//!   in flight); only envelopes are kept, bodies are re-read by byte range when asked for.
//!
//! Must not: rewrite or migrate files on disk, interpret entries beyond their envelope (trees,
//! branches and context are `pi-session-tree`'s job), or define JSON rules of its own (those are
//! `pi-session-types`').
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use pi_session_store::{SessionWriter, WriterOptions, new_header, open};
//! use pi_session_types::{Entry, JsonMap};
//!
//! let dir = tempfile::tempdir()?;
//! let mut writer = SessionWriter::create(dir.path(), new_header("/work/project"), WriterOptions::default());
//! assert!(!writer.path().unwrap().exists(), "nothing is written before the first append");
//!
//! let mut label = JsonMap::new();
//! label.insert("type".into(), "label".into());
//! label.insert("targetId".into(), "x".into());
//! let written = writer.append(Entry::from_map(label))?;
//! assert_eq!(written.id().map(str::len), Some(8));
//!
//! let (session, diagnostics) = open(writer.path().unwrap())?;
//! assert!(diagnostics.is_empty());
//! assert_eq!(session.entry(0)?, written);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod diagnostic;
mod discover;
mod entry_table;
mod error;
mod framing;
mod fused;
mod keyed;
mod lock;
mod migrate;
mod open;
pub mod paths;
mod publish_lock;
mod repair;
mod scoped;
mod session_file;
pub mod vfs;
mod writer;

pub use diagnostic::{DIAGNOSTICS_PER_KIND, Diagnostic, DiagnosticKind, Severity};
pub use discover::{
    HEADER_SCAN_LIMIT, ListProblem, SessionListing, latest, list, list_all, newest_first,
    read_listing, read_listing_with_head,
};
pub use entry_table::{EntryTable, KindQuery, named_parent};
pub use error::{StoreError, why_migrate};
pub use framing::SharedBytes;
#[cfg(feature = "redis")]
pub use keyed::{
    APPEND_IF_SCRIPT, APPEND_SCRIPT, DEFAULT_PREFIX, RedisOptions, RedisStore, UPDATE_TITLE_SCRIPT,
    WRITE_FULL_SCRIPT,
};
pub use keyed::{
    Expected, KeyedEntry, KeyedStore, LIST_HEAD_BYTES, MemoryStore, RANGE_BYTES, RedisValue, Store,
    TitleMeta, Windows as KeyedWindows, read_windows as read_keyed_windows,
    read_windows_of as read_keyed_windows_of,
};
pub use lock::{RewriteLock, lock_path};
pub use migrate::CURRENT_VERSION;
pub use open::{OpenOptions, may_open_on_threads, open, open_bytes, open_bytes_with, open_with};
pub use publish_lock::{PUBLISH_LOCK_POLL, PUBLISH_LOCK_WAIT, publish_lock_path};
pub use repair::{
    Repair, RepairAction, RepairChange, RepairedFile, backup_path, repair, repair_file,
    repair_file_waiting,
};
pub use scoped::{StarterCore, wake_another_core};
pub use session_file::{IndexEntry, IndexEnvelope, SessionFile};
pub use writer::{
    Durability, SessionWriter, Stamps, SystemStamps, TitleWrite, WriterOptions, new_header,
    new_header_with,
};
