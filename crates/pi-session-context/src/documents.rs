//! Reading attached PDFs, confined to a workspace root.
//!
//! rho keeps only a PDF's path in the session and reads the bytes when it
//! builds a request. The projection asks a [`DocumentSource`] for them, so it
//! stays pure and testable; [`WorkspaceDocuments`] is the file-system source.
//! It never reads outside its root: a path with a `..` component, an
//! absolute path outside the root, or a path whose symlinks lead outside it
//! is treated exactly like a file that is gone.

use std::fs;
use std::path::{Component, Path, PathBuf};

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

/// Reads documents from the file system, only from inside `root`.
///
/// Relative paths are taken relative to the root. Absolute paths are
/// accepted only when they lie inside the root. After resolving symlinks
/// the file must still lie inside the (resolved) root, and be a regular file.
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

    /// The real path of `path` if it is a regular file inside the root.
    pub fn resolve(&self, path: &str) -> Option<PathBuf> {
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
        let root = fs::canonicalize(&self.root).ok()?;
        let joined = if candidate.is_absolute() {
            // Lexically inside the root (as given, or as resolved)?
            if !(candidate.starts_with(&self.root) || candidate.starts_with(&root)) {
                return None;
            }
            candidate.to_path_buf()
        } else {
            root.join(candidate)
        };
        let real = fs::canonicalize(joined).ok()?;
        if !real.starts_with(&root) {
            return None;
        }
        let meta = fs::metadata(&real).ok()?;
        meta.is_file().then_some(real)
    }
}

impl DocumentSource for WorkspaceDocuments {
    fn size(&self, path: &str) -> Option<u64> {
        let real = self.resolve(path)?;
        fs::metadata(real).ok().map(|m| m.len())
    }

    fn read(&self, path: &str) -> Option<Vec<u8>> {
        let real = self.resolve(path)?;
        fs::read(real).ok()
    }
}
