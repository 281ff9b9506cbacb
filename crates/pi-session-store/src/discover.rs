//! Discovery: list the sessions in a folder by reading only the start of each file.
//!
//! A listing reads the title slot and the header, which normally sit in the first few KB: lines
//! are read through a 4 KiB buffer, and a header line longer than that is followed to its newline
//! but never past [`HEADER_SCAN_LIMIT`] bytes (pi 1.6 scans 1 MiB; pi 0.73 only 512 bytes, which
//! hides sessions whose header is long). Whole files are never read.

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::error::StoreError;
use pi_session_types::{ParsedLine, parse_line};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The most bytes a listing reads from one file while looking for its header.
pub const HEADER_SCAN_LIMIT: u64 = 1 << 20;

/// One session found on disk, described from its first lines and the file's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionListing {
    /// The file.
    pub path: PathBuf,
    /// The header's session id.
    pub id: String,
    /// The title: a valid title slot's (an empty slot title means none), else the header's.
    pub title: Option<String>,
    /// `"auto"` or `"user"`, from the slot if there is one, else from the header.
    pub title_source: Option<String>,
    /// The header's working directory.
    pub cwd: Option<String>,
    /// The header's creation time (ISO 8601, as written).
    pub created: Option<String>,
    /// The header's `parentSession` (a path or a session id).
    pub parent_session: Option<String>,
    /// The header's version (1 when absent).
    pub version: u64,
    /// The file's modification time.
    pub modified: SystemTime,
    /// The file's size in bytes.
    pub size: u64,
}

/// A `.jsonl` file that a listing skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListProblem {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with its first lines, or why it could not be read (line 0).
    pub diagnostic: Diagnostic,
}

/// Lists the sessions (`*.jsonl` files with a session header) directly inside `dir`, most
/// recently modified first (then newest header timestamp, then path, both descending, as omp
/// sorts). Files that are not sessions come back as [`ListProblem`]s. A missing folder lists as
/// empty; only an unreadable folder is an error.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.jsonl"), "{\"type\":\"session\",\"version\":3,\"id\":\"s-a\",\"cwd\":\"/w\"}\n")?;
/// std::fs::write(dir.path().join("notes.jsonl"), "{\"hello\":1}\n")?;
/// let (sessions, skipped) = pi_session_store::list(dir.path())?;
/// assert_eq!(sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["s-a"]);
/// assert_eq!(skipped.len(), 1);
/// # Ok(()) }
/// ```
pub fn list(dir: impl AsRef<Path>) -> Result<(Vec<SessionListing>, Vec<ListProblem>), StoreError> {
    let dir = dir.as_ref();
    let reader = match std::fs::read_dir(dir) {
        Ok(reader) => reader,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), Vec::new())),
        Err(e) => return Err(StoreError::io("could not list", dir, e)),
    };
    let mut sessions = Vec::new();
    let mut problems = Vec::new();
    for item in reader {
        let item = item.map_err(|e| StoreError::io("could not list", dir, e))?;
        let path = item.path();
        if path.extension().is_none_or(|ext| ext != "jsonl") || !path.is_file() {
            continue;
        }
        match read_listing(&path) {
            Ok(Ok(listing)) => sessions.push(listing),
            Ok(Err(diagnostic)) => problems.push(ListProblem { path, diagnostic }),
            // A file that vanished or cannot be read between read_dir and open: skip it, say why.
            Err(error) => problems.push(ListProblem {
                path,
                diagnostic: io_diagnostic(&error),
            }),
        }
    }
    sort_newest_first(&mut sessions);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((sessions, problems))
}

/// Lists the sessions of every project folder directly under a sessions root (pi's `listAll`,
/// omp's `*/*.jsonl`), merged and sorted as [`list`] sorts. Files directly in the root are
/// included too.
pub fn list_all(
    root: impl AsRef<Path>,
) -> Result<(Vec<SessionListing>, Vec<ListProblem>), StoreError> {
    let root = root.as_ref();
    let (mut sessions, mut problems) = list(root)?;
    let folders = match std::fs::read_dir(root) {
        Ok(reader) => reader,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((sessions, problems)),
        Err(e) => return Err(StoreError::io("could not list", root, e)),
    };
    for item in folders {
        let path = item
            .map_err(|e| StoreError::io("could not list", root, e))?
            .path();
        if path.is_dir() {
            let (more, more_problems) = list(&path)?;
            sessions.extend(more);
            problems.extend(more_problems);
        }
    }
    sort_newest_first(&mut sessions);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((sessions, problems))
}

fn sort_newest_first(sessions: &mut [SessionListing]) {
    sessions.sort_by(newest_first);
}

/// The order of a listing: most recently modified first, then newest header timestamp, then
/// path, both descending (as omp sorts).
pub fn newest_first(a: &SessionListing, b: &SessionListing) -> std::cmp::Ordering {
    b.modified
        .cmp(&a.modified)
        .then_with(|| b.created.cmp(&a.created))
        .then_with(|| b.path.cmp(&a.path))
}

/// The most recently modified session in `dir` (see [`list`]), or `None`.
pub fn latest(dir: impl AsRef<Path>) -> Result<Option<SessionListing>, StoreError> {
    Ok(list(dir)?.0.into_iter().next())
}

/// Describes one session file from its first lines: `Ok(Err(..))` when it is not a session.
pub fn read_listing(
    path: impl AsRef<Path>,
) -> Result<Result<SessionListing, Diagnostic>, StoreError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| StoreError::io("could not open", path, e))?;
    let metadata = file
        .metadata()
        .map_err(|e| StoreError::io("could not read the metadata of", path, e))?;
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    listing_from(path, file, HEADER_SCAN_LIMIT, modified, metadata.len())
}

/// [`read_listing`] from a file's first bytes already read (`head`), given its modification
/// time and size: one read of the file serves the listing and what else the caller wants from
/// its start (e.g. a summary's prefix window). When `head` ends before a header is found and is
/// not the whole file (`head.len() < size`), the file at `path` is read as [`read_listing`] reads
/// it, so the answer is always the one [`read_listing`] gives.
pub fn read_listing_with_head(
    path: impl AsRef<Path>,
    head: &[u8],
    modified: SystemTime,
    size: u64,
) -> Result<Result<SessionListing, Diagnostic>, StoreError> {
    let path = path.as_ref();
    match listing_from(path, head, HEADER_SCAN_LIMIT, modified, size)? {
        Err(_) if (head.len() as u64) < size.min(HEADER_SCAN_LIMIT) => read_listing(path),
        found => Ok(found),
    }
}

/// Describes a session from the first `limit` bytes of `bytes` (a file, or a head read from a
/// keyed store), given its modification time and size: `Ok(Err(..))` when it is not a session.
pub(crate) fn listing_from(
    path: &Path,
    bytes: impl Read,
    limit: u64,
    modified: SystemTime,
    size: u64,
) -> Result<Result<SessionListing, Diagnostic>, StoreError> {
    let mut reader = BufReader::with_capacity(4096, bytes.take(limit));
    let mut line = Vec::new();
    let mut slot: Option<(String, Option<String>)> = None;
    let (mut number, mut offset) = (0u64, 0u64);
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| StoreError::io("could not read", path, e))?;
        number += 1;
        let at = offset;
        offset += read as u64;
        if read == 0 || (!line.ends_with(b"\n") && offset >= limit) {
            return Ok(Err(Diagnostic::new(
                number,
                at,
                DiagnosticKind::HeaderNotFound { limit },
            )));
        }
        let content = line
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .filter(|_| at == 0)
            .unwrap_or(&line);
        if crate::framing::is_blank(content) {
            continue;
        }
        match parse_line(content).map(|p| p.value) {
            Ok(ParsedLine::TitleSlot(s)) if number == 1 => {
                slot = Some((s.title, s.source.map(|s| s.as_str().to_owned())));
            }
            Ok(ParsedLine::Header(header)) => {
                let (title, title_source) = match slot {
                    Some((title, source)) => ((!title.is_empty()).then_some(title), source),
                    None => (header.title.clone(), header.title_source.clone()),
                };
                return Ok(Ok(SessionListing {
                    path: path.to_path_buf(),
                    version: header.version_or_1(),
                    id: header.id,
                    title,
                    title_source,
                    cwd: header.cwd,
                    created: header.timestamp.map(|t| t.as_str().to_owned()),
                    parent_session: header.parent_session,
                    modified,
                    size,
                }));
            }
            // Damaged lines before the header are skipped, as pi 1.6 does.
            Err(_) => {}
            Ok(other) => {
                let detail = format!(
                    "the first entry (type {:?}) comes before any session header",
                    other.kind()
                );
                return Ok(Err(Diagnostic::new(
                    number,
                    at,
                    DiagnosticKind::InvalidHeader { detail },
                )));
            }
        }
    }
}

fn io_diagnostic(error: &StoreError) -> Diagnostic {
    Diagnostic::new(
        0,
        0,
        DiagnosticKind::Unreadable {
            detail: error.to_string(),
        },
    )
}
