//! Reading attached PDFs, confined to a workspace root.
//!
//! rho keeps only a PDF's path in the session and reads the bytes when it
//! builds a request. The projection asks a [`DocumentSource`] for them, so it
//! stays pure and testable; [`WorkspaceDocuments`] is the file-system source.
//!
//! # Confinement
//!
//! [`WorkspaceDocuments`] never reads outside its root. It opens the root once
//! per request as a directory *capability* ([`cap_std::fs::Dir`]) and opens the
//! document beneath it in the same step that resolves it (on Linux through
//! `openat2` with `RESOLVE_BENEATH`, elsewhere by a walk that opens one
//! component at a time without following symlinks out). It never checks a path
//! and then opens it again by name, so swapping a directory for a symlink
//! between a check and a read cannot send a file from outside: there is no
//! such gap. Size and bytes both come from the one open handle.
//!
//! A path with a `..` component, an absolute path outside the root, a symlink
//! that leads outside the root (or any absolute symlink), and anything that is
//! not a regular file are treated exactly like a file that is gone.
//!
//! # Which root
//!
//! The CLI's default root is the session header's `cwd`, and the header is
//! *data*: whoever wrote the session file chose it. That is right when you
//! project your own sessions on your own machine. A host that projects a
//! session it did not write (uploaded, shared, downloaded) must pass its own
//! root (`--root` on the CLI), one that holds only what it is willing to send
//! to a model provider.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File};

/// The magic bytes every PDF starts with; only such files are sent as PDFs.
pub const PDF_MAGIC: &[u8] = b"%PDF-";

/// Whether `bytes` start like a PDF (`%PDF-`).
pub fn is_pdf(bytes: &[u8]) -> bool {
    bytes.starts_with(PDF_MAGIC)
}

/// Where the projection gets attached documents from.
pub trait DocumentSource {
    /// The size in bytes of the document at `path` (as written in the
    /// session), or `None` when it cannot be read (gone, or not allowed).
    fn size(&self, path: &str) -> Option<u64>;
    /// The bytes of the document at `path`, or `None` when it cannot be read.
    fn read(&self, path: &str) -> Option<Vec<u8>>;
}

/// A source with no documents at all (every PDF is "no longer at" its path).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoDocuments;

impl DocumentSource for NoDocuments {
    fn size(&self, _path: &str) -> Option<u64> {
        None
    }
    fn read(&self, _path: &str) -> Option<Vec<u8>> {
        None
    }
}

/// Reads documents from the file system, only from beneath `root`.
///
/// Relative paths are taken relative to the root. Absolute paths are
/// accepted only when they lie lexically inside the root (as given, or as
/// resolved); they are then opened relative to it like any other. Symlinks
/// are followed only while they stay beneath the root. See the
/// [module docs](self) for how the root is chosen.
///
/// ```
/// use pi_session_context::documents::{DocumentSource, WorkspaceDocuments};
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.pdf"), b"%PDF-1.4").unwrap();
/// let docs = WorkspaceDocuments::new(dir.path());
/// assert_eq!(docs.size("a.pdf"), Some(8));
/// assert_eq!(docs.size("../a.pdf"), None);
/// ```
#[derive(Debug, Clone)]
pub struct WorkspaceDocuments {
    root: PathBuf,
}

impl WorkspaceDocuments {
    /// A source confined to `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        WorkspaceDocuments { root: root.into() }
    }

    /// The root this source reads from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` relative to the root, or `None` when it cannot lie beneath it
    /// (empty, a `..` component, a Windows prefix, an absolute path outside).
    /// Purely lexical: the open beneath the root does the real confinement.
    pub fn relative(&self, path: &str) -> Option<PathBuf> {
        if path.is_empty() {
            return None;
        }
        let candidate = Path::new(path);
        if candidate
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
        {
            return None;
        }
        let relative = if candidate.is_absolute() {
            match candidate.strip_prefix(&self.root) {
                Ok(rest) => rest.to_path_buf(),
                Err(_) => {
                    let resolved = std::fs::canonicalize(&self.root).ok()?;
                    candidate.strip_prefix(resolved).ok()?.to_path_buf()
                }
            }
        } else {
            candidate.to_path_buf()
        };
        let relative: PathBuf = relative
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        (!relative.as_os_str().is_empty()).then_some(relative)
    }

    /// Opens `path` beneath the root: a regular file, or `None`.
    fn open(&self, path: &str) -> Option<File> {
        let relative = self.relative(path)?;
        let root = Dir::open_ambient_dir(&self.root, ambient_authority()).ok()?;
        let file = root.open(relative).ok()?;
        file.metadata().ok()?.is_file().then_some(file)
    }
}

impl DocumentSource for WorkspaceDocuments {
    fn size(&self, path: &str) -> Option<u64> {
        self.open(path)?.metadata().ok().map(|m| m.len())
    }

    fn read(&self, path: &str) -> Option<Vec<u8>> {
        let mut bytes = Vec::new();
        self.open(path)?.read_to_end(&mut bytes).ok()?;
        Some(bytes)
    }
}
