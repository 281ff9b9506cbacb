//! The single-writer lock: an advisory exclusive lock (fs4) on a hidden sidecar file.
//!
//! Why a sidecar and not the session file itself: on Windows a file lock is mandatory for the
//! locked byte range, so locking the session file would stop readers; on every platform a sidecar
//! keeps readers lock-free. The sidecar `.<file name>.pi-session.lock` sits beside the session
//! only while a writer holds it. Neither pi nor omp uses this name, so it does not interfere with
//! omp's own `.<name>.lock` publish lock, which the writer takes as well, briefly, around each
//! write (see `publish_lock`).
//!
//! # Removing the sidecar safely
//!
//! The holder deletes the sidecar on close, *while still holding the lock*. Deleting a lock file
//! races with a process that opened the old file just before and locks it just after: it would
//! hold a lock on a file no longer at the path, while a third process creates a new sidecar and
//! locks that. So a taker, after locking, checks that the path still names the file it locked
//! (same device and inode); if not, it drops that handle and tries again. A holder only deletes
//! the path while it holds the lock on the file the path names, so at most one process ever
//! holds the lock on the file at the path. A crash leaves the (unlocked) sidecar behind; the next
//! writer takes it over and deletes it on close.

use crate::error::StoreError;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An exclusive writer lock, held until dropped; dropping it deletes the sidecar.
#[derive(Debug)]
pub(crate) struct WriterLock {
    /// The sidecar; the OS releases the lock when the handle closes (after the delete in drop).
    file: File,
    path: PathBuf,
}

/// The sidecar lock path for a session file.
pub fn lock_path(session: &Path) -> PathBuf {
    let name = session
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    session.with_file_name(format!(".{name}.pi-session.lock"))
}

/// The pause between two tries while waiting for a lock (doubling from 1 ms up to this).
const MAX_POLL: Duration = Duration::from_millis(20);

/// Retries `attempt` until it gives `Some`, with a growing pause, for at most `timeout`
/// (`None`: one try). The last failure is `give_up`'s.
pub(crate) fn wait_for<T>(
    timeout: Option<Duration>,
    mut attempt: impl FnMut() -> Result<Option<T>, StoreError>,
    give_up: impl FnOnce() -> StoreError,
) -> Result<T, StoreError> {
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(value) = attempt()? {
            return Ok(value);
        }
        match deadline {
            Some(deadline) if Instant::now() < deadline => {
                let left = deadline.saturating_duration_since(Instant::now());
                std::thread::sleep(pause.min(left));
                pause = (pause * 2).min(MAX_POLL);
            }
            _ => return Err(give_up()),
        }
    }
}

impl WriterLock {
    /// Takes the lock, waiting up to `timeout` for another holder to let go (`None`: no wait);
    /// a holder still there then gives [`StoreError::Locked`].
    pub fn acquire(session: &Path, timeout: Option<Duration>) -> Result<Self, StoreError> {
        let lock = lock_path(session);
        wait_for(
            timeout,
            || Self::try_once(&lock),
            || StoreError::Locked {
                session: session.to_path_buf(),
                lock: lock.clone(),
            },
        )
    }

    fn try_once(lock: &Path) -> Result<Option<Self>, StoreError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock)
            .map_err(|e| StoreError::io("could not create the lock file", lock, e))?;
        match fs4::FileExt::try_lock(&file) {
            Ok(()) if still_named(&file, lock) => Ok(Some(Self {
                file,
                path: lock.to_path_buf(),
            })),
            // The holder we waited for deleted the file we locked: try the path again.
            Ok(()) => Ok(None),
            Err(fs4::TryLockError::WouldBlock) => Ok(None),
            Err(fs4::TryLockError::Error(e)) => Err(StoreError::io("could not lock", lock, e)),
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Still locked here: nobody else can be between "locked" and "checked the path".
        // A failure leaves an unlocked sidecar, which the next writer takes over.
        if still_named(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Both locks a whole-file rewrite holds (the store's [`crate::repair_file`], the facade's
/// migration): the writer lock, so no writer of ours appends meanwhile, and omp's publish lock,
/// so omp does not either. Released (and their files deleted) when dropped.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let session = dir.path().join("s.jsonl");
/// std::fs::write(&session, "{\"type\":\"session\",\"id\":\"s\",\"version\":3}\n").unwrap();
/// let held = pi_session_store::RewriteLock::acquire(&session, None).unwrap();
/// let second = pi_session_store::RewriteLock::acquire(&session, None).unwrap_err();
/// assert!(matches!(second, pi_session_store::StoreError::Locked { .. }));
/// drop(held);
/// assert!(pi_session_store::RewriteLock::acquire(&session, None).is_ok());
/// ```
#[derive(Debug)]
pub struct RewriteLock {
    // Field order is drop order: the publish lock goes first, as a writer releases it.
    _publishing: crate::publish_lock::PublishLock,
    _writer: WriterLock,
}

impl RewriteLock {
    /// Takes the writer lock of `session` (waiting up to `busy_timeout`; `None`: refused at
    /// once with [`StoreError::Locked`] while a writer holds it), then omp's publish lock
    /// (waiting as a writer does: [`StoreError::PublishLockTimeout`]).
    pub fn acquire(session: &Path, busy_timeout: Option<Duration>) -> Result<Self, StoreError> {
        let writer = WriterLock::acquire(session, busy_timeout)?;
        let publishing = crate::publish_lock::PublishLock::acquire(session, busy_timeout)?;
        Ok(Self {
            _publishing: publishing,
            _writer: writer,
        })
    }
}

/// Whether `path` names the file `file` has open.
#[cfg(unix)]
fn still_named(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(ours), Ok(named)) => (ours.dev(), ours.ino()) == (named.dev(), named.ino()),
        _ => false,
    }
}

/// Elsewhere a locked file cannot be deleted by anyone else anyway (Windows refuses to delete
/// an open file unless it was opened for sharing deletes), so the path still names it.
#[cfg(not(unix))]
fn still_named(_file: &File, path: &Path) -> bool {
    path.exists()
}
