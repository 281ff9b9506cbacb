//! The single-writer lock: an advisory exclusive lock (fs4) on a hidden sidecar file.
//!
//! Why a sidecar and not the session file itself: on Windows a file lock is mandatory for the
//! locked byte range, so locking the session file would stop readers; on every platform a sidecar
//! keeps readers lock-free. The sidecar `.<file name>.pi-session.lock` sits beside the session. It
//! is never deleted (deleting a lock file races with a process about to lock it); the operating
//! system releases the lock when the holder exits, even on a crash. Neither pi nor omp uses this
//! name, so it does not interfere with omp's own `.<name>.lock` publish lock, which the writer
//! takes as well, briefly, around each write (see `publish_lock`).

use crate::error::StoreError;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// An exclusive writer lock, held until dropped.
#[derive(Debug)]
pub(crate) struct WriterLock {
    // Held only for its lock; the OS releases it when the handle closes.
    _file: File,
}

/// The sidecar lock path for a session file.
pub fn lock_path(session: &Path) -> PathBuf {
    let name = session
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    session.with_file_name(format!(".{name}.pi-session.lock"))
}

impl WriterLock {
    /// Takes the lock without waiting; another holder gives [`StoreError::Locked`].
    pub fn try_acquire(session: &Path) -> Result<Self, StoreError> {
        let lock = lock_path(session);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock)
            .map_err(|e| StoreError::io("could not create the lock file", &lock, e))?;
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => Ok(Self { _file: file }),
            Err(fs4::TryLockError::WouldBlock) => Err(StoreError::Locked {
                session: session.to_path_buf(),
                lock,
            }),
            Err(fs4::TryLockError::Error(e)) => Err(StoreError::io("could not lock", lock, e)),
        }
    }
}
