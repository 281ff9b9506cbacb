//! The file I/O a [`SessionWriter`](crate::SessionWriter) does, behind a small trait.
//!
//! [`RealFs`] (the default, a zero-sized type: every call is a direct `std::fs` call after
//! monomorphisation) is the operating system's file system. Tests plug in a simulated one
//! ([`SessionWriter::create_in`](crate::SessionWriter::create_in),
//! [`SessionWriter::open_for_append_in`](crate::SessionWriter::open_for_append_in)) that records
//! every write and sync and can crash at each of them; see `tests/crash_sim/` in this crate.
//!
//! What goes through the trait is what decides what a crash leaves on disk: creating, writing,
//! syncing, truncating, linking and removing session files. The two lock files (the writer's
//! sidecar and omp's publish lock) are not data and stay on the real file system, beside the
//! path the writer is given.

use crate::diagnostic::Diagnostic;
use crate::error::StoreError;
use crate::session_file::SessionFile;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Which file a handle or path refers to (device and inode on Unix; both 0 elsewhere, where only
/// size changes are detected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileIdentity {
    /// The device the file lives on.
    pub device: u64,
    /// The file's inode on that device.
    pub inode: u64,
}

/// A file's size and identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// Size in bytes.
    pub len: u64,
    /// Which file it is.
    pub identity: FileIdentity,
}

/// The file-system calls a session writer makes (see the module documentation).
///
/// Errors are plain [`io::Error`]s with the kinds `std::fs` gives (`NotFound`, `AlreadyExists`,
/// `UnexpectedEof` from the exact reads); the writer turns them into [`StoreError`]s.
pub trait Vfs: fmt::Debug + Clone + Send {
    /// An open session file.
    type File: VfsFile;

    /// Creates `path` exclusively (`AlreadyExists` if it exists), open for reading and
    /// appending.
    fn create_new(&self, path: &Path) -> io::Result<Self::File>;
    /// Opens an existing file for reading and appending.
    fn open_append(&self, path: &Path) -> io::Result<Self::File>;
    /// The size and identity of the file `path` names now.
    fn metadata(&self, path: &Path) -> io::Result<FileMeta>;
    /// Fills `buf` from `path` at `offset` (`UnexpectedEof` when the file is shorter).
    fn read_exact_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes `bytes` at `offset` of the existing file `path` (in place, not appending).
    fn write_at(&self, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// Makes `link` a second name of `original` (`AlreadyExists` if `link` exists).
    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()>;
    /// Removes the name `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Creates `dir` and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Makes the names in `dir` durable (fsync of the directory).
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Reads the whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// Opens the session at `path` (see [`crate::open`]). The default reads the whole file and
    /// parses it with [`crate::open_bytes`]; [`RealFs`] streams it with [`crate::open`].
    fn open_session(&self, path: &Path) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
        let bytes = self
            .read(path)
            .map_err(|e| StoreError::io("could not read", path, e))?;
        Ok(crate::open::open_bytes(bytes))
    }
}

/// An open session file of a [`Vfs`].
pub trait VfsFile: fmt::Debug + Send {
    /// Appends all of `bytes` (the file was opened for appending).
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Puts the file's data on stable storage (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Cuts the file to `len` bytes.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// The size and identity of this file.
    fn metadata(&self) -> io::Result<FileMeta>;
    /// Fills `buf` from `offset` (`UnexpectedEof` when the file is shorter).
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
}

/// The operating system's file system (`std::fs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RealFs;

impl Vfs for RealFs {
    type File = File;

    fn create_new(&self, path: &Path) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .open(path)
    }

    fn open_append(&self, path: &Path) -> io::Result<File> {
        OpenOptions::new().read(true).append(true).open(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        std::fs::metadata(path).map(|m| meta(&m))
    }

    fn read_exact_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        VfsFile::read_exact_at(&File::open(path)?, offset, buf)
    }

    fn write_at(&self, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()> {
        // A separate handle: `O_APPEND` would append instead.
        let mut file = OpenOptions::new().write(true).open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(bytes)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        std::fs::hard_link(original, link)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    #[cfg(unix)]
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    #[cfg(not(unix))]
    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        // Directories cannot be opened for syncing on this platform; the file's own sync
        // suffices.
        Ok(())
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn open_session(&self, path: &Path) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
        crate::open::open(path)
    }
}

impl VfsFile for File {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all(bytes)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }

    fn metadata(&self) -> io::Result<FileMeta> {
        File::metadata(self).map(|m| meta(&m))
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut reader = self;
        reader.seek(SeekFrom::Start(offset))?;
        reader.read_exact(buf)
    }
}

#[cfg(unix)]
fn meta(metadata: &std::fs::Metadata) -> FileMeta {
    use std::os::unix::fs::MetadataExt;
    FileMeta {
        len: metadata.len(),
        identity: FileIdentity {
            device: metadata.dev(),
            inode: metadata.ino(),
        },
    }
}

#[cfg(not(unix))]
fn meta(metadata: &std::fs::Metadata) -> FileMeta {
    FileMeta {
        len: metadata.len(),
        identity: FileIdentity::default(),
    }
}
