//! `repair`: a clean copy of a damaged session file, with what changed.
//!
//! Only what the store could not read is touched: a line that is not JSON (a torn fragment left
//! by a crash, garbage) is removed, a line of fused values (a lost newline) is split into one
//! line per value, a byte order mark is removed, and a final line without its newline gets one.
//! Every other line is copied byte for byte (blank lines, CRLF endings, lines the store reports
//! but reads, such as duplicate ids), so the copy opens to the same entries as the original.
//!
//! [`repair_file`] does it in place, safely: under the writer lock (refused while a writer holds
//! it) and omp's publish lock, the clean copy is written beside the file, the original is kept
//! as `FILE.bak` (a hard link, so it is never half written), and the copy is renamed over the
//! file (atomic).

use crate::diagnostic::{DIAGNOSTICS_PER_KIND, Diagnostic};
use crate::error::StoreError;
use crate::framing::{ChunkReader, is_blank};
use crate::fused::split_fused;
use crate::lock::RewriteLock;
use crate::open::open;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// One change [`repair`] made, at a place in the original file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairChange {
    /// 1-based line in the original file.
    pub line: u64,
    /// Byte offset of that line in the original file.
    pub byte_offset: u64,
    /// What was done.
    pub action: RepairAction,
}

/// What [`repair`] did to one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepairAction {
    /// The line was removed: it is not JSON (`torn`: the unterminated last line, an interrupted
    /// write). `bytes` is its length.
    Removed {
        /// Its length in bytes (without the newline).
        bytes: u64,
        /// Whether it was the torn last line.
        torn: bool,
    },
    /// Several fused values were split onto lines of their own.
    Split {
        /// How many values the line held.
        values: usize,
    },
    /// The last line (valid JSON) had no newline; one was added.
    NewlineAdded,
    /// The file started with a UTF-8 byte order mark; it was removed.
    ByteOrderMarkRemoved,
}

impl std::fmt::Display for RepairAction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Removed { bytes, torn: true } => {
                write!(f, "removed the torn last line ({bytes} bytes)")
            }
            Self::Removed { bytes, torn: false } => {
                write!(f, "removed a line that is not JSON ({bytes} bytes)")
            }
            Self::Split { values } => {
                write!(f, "split {values} fused values onto lines of their own")
            }
            Self::NewlineAdded => write!(f, "added the missing final newline"),
            Self::ByteOrderMarkRemoved => write!(f, "removed the byte order mark"),
        }
    }
}

impl std::fmt::Display for RepairChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} (byte {}): {}",
            self.line, self.byte_offset, self.action
        )
    }
}

/// What [`repair`] changed. The first [`DIAGNOSTICS_PER_KIND`] changes are listed; all are
/// counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Repair {
    /// The first changes, in file order.
    pub changes: Vec<RepairChange>,
    /// Lines removed.
    pub removed_lines: u64,
    /// Bytes removed with them.
    pub removed_bytes: u64,
    /// Lines split.
    pub split_lines: u64,
    /// Changes not listed in `changes`.
    pub omitted: u64,
}

impl Repair {
    /// Whether the copy differs from the original.
    pub fn changed(&self) -> bool {
        !self.changes.is_empty()
    }

    fn note(&mut self, line: u64, byte_offset: u64, action: RepairAction) {
        match action {
            RepairAction::Removed { bytes, .. } => {
                self.removed_lines += 1;
                self.removed_bytes += bytes;
            }
            RepairAction::Split { .. } => self.split_lines += 1,
            RepairAction::NewlineAdded | RepairAction::ByteOrderMarkRemoved => {}
        }
        if self.changes.len() < DIAGNOSTICS_PER_KIND {
            self.changes.push(RepairChange {
                line,
                byte_offset,
                action,
            });
        } else {
            self.omitted += 1;
        }
    }
}

/// Copies `input` to `output`, cleaned (see the docs of `repair.rs`), streaming in chunks.
///
/// ```
/// let damaged = b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"a\"}{\"type\":\"b\"}\n{\"type\":\"c\",\"x\n{\"type\":\"d\"}";
/// let mut clean = Vec::new();
/// let repair = pi_session_store::repair(&damaged[..], &mut clean).unwrap();
/// assert_eq!(clean, b"{\"type\":\"session\",\"id\":\"s\"}\n{\"type\":\"a\"}\n{\"type\":\"b\"}\n{\"type\":\"d\"}\n");
/// assert_eq!((repair.split_lines, repair.removed_lines), (1, 1));
/// ```
pub fn repair(input: impl Read, output: &mut impl Write) -> io::Result<Repair> {
    let mut report = Repair::default();
    let mut chunks = ChunkReader::new(input, 1 << 20);
    let mut spare = None;
    let mut first = true;
    while let Some(chunk) = chunks.next_chunk(spare.take())? {
        if first && chunks.had_bom {
            report.note(1, 0, RepairAction::ByteOrderMarkRemoved);
        }
        first = false;
        let bytes = &chunk.bytes;
        for line in &chunk.lines {
            let content = &bytes[line.content.clone()];
            let offset = chunk.base_offset + line.content.start as u64;
            // The line as it was, with its own terminator (`\n` or `\r\n`).
            let mut end = line.content.end;
            if line.terminated {
                while end < bytes.len() && bytes[end] != b'\n' {
                    end += 1;
                }
                end = (end + 1).min(bytes.len());
            }
            let whole = &bytes[line.content.start..end];
            if is_blank(content) || is_json(content) {
                output.write_all(whole)?;
                if !line.terminated && !is_blank(content) {
                    output.write_all(b"\n")?;
                    report.note(line.number, offset, RepairAction::NewlineAdded);
                }
                continue;
            }
            match split_fused(content) {
                Some(ranges) => {
                    for range in &ranges {
                        output.write_all(&content[range.clone()])?;
                        output.write_all(b"\n")?;
                    }
                    let values = ranges.len();
                    report.note(line.number, offset, RepairAction::Split { values });
                }
                None => report.note(
                    line.number,
                    offset,
                    RepairAction::Removed {
                        bytes: content.len() as u64,
                        torn: !line.terminated,
                    },
                ),
            }
        }
        spare = Some(chunk.bytes.into_spare());
    }
    Ok(report)
}

/// Whether `line` is exactly one JSON value.
fn is_json(line: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

/// What [`repair_file`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairedFile {
    /// The changes (nothing was written when there are none).
    pub repair: Repair,
    /// Where the original was kept (`None` when nothing changed).
    pub backup: Option<PathBuf>,
    /// What the store reports about the repaired file: what is left is what repair does not
    /// change, such as duplicate ids (both entries are kept; lookups find the later one).
    pub diagnostics: Vec<Diagnostic>,
}

/// The backup path for `path`: `FILE.bak`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".bak");
    PathBuf::from(name)
}

/// Repairs the session file at `path` in place (see the docs of `repair.rs`).
///
/// Refuses with [`StoreError::Locked`] while a writer holds the file, and with
/// [`StoreError::AlreadyExists`] when `FILE.bak` exists (move it away first). A file that
/// needs no change is not touched. The file's permissions are kept.
pub fn repair_file(path: impl AsRef<Path>) -> Result<RepairedFile, StoreError> {
    repair_file_waiting(path, None)
}

/// [`repair_file`] that waits up to `busy_timeout` for a writer to close the session (and for
/// omp's publish lock) before refusing with [`StoreError::Locked`], as
/// [`WriterOptions::busy_timeout`](crate::WriterOptions::busy_timeout) does for writers.
pub fn repair_file_waiting(
    path: impl AsRef<Path>,
    busy_timeout: Option<std::time::Duration>,
) -> Result<RepairedFile, StoreError> {
    let path = path.as_ref();
    let _locks = RewriteLock::acquire(path, busy_timeout)?;
    let original = File::open(path).map_err(|e| StoreError::io("could not open", path, e))?;
    let metadata = original
        .metadata()
        .map_err(|e| StoreError::io("could not read the metadata of", path, e))?;
    if !metadata.is_file() {
        return Err(StoreError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let temp = path.with_file_name(format!(
        ".{}.repair.{}.tmp",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        std::process::id()
    ));
    let result = write_repaired(&original, &temp, metadata.permissions());
    let repair = match result {
        Ok(repair) => repair,
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            return Err(StoreError::io(
                "could not write the repaired copy",
                &temp,
                e,
            ));
        }
    };
    if !repair.changed() {
        let _ = std::fs::remove_file(&temp);
        let (_, diagnostics) = open(path)?;
        return Ok(RepairedFile {
            repair,
            backup: None,
            diagnostics,
        });
    }
    let backup = backup_path(path);
    let replaced = std::fs::hard_link(path, &backup)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::AlreadyExists {
                StoreError::AlreadyExists {
                    path: backup.clone(),
                }
            } else {
                StoreError::io("could not keep the original as", &backup, e)
            }
        })
        .and_then(|()| {
            std::fs::rename(&temp, path).map_err(|e| StoreError::io("could not replace", path, e))
        });
    if let Err(e) = replaced {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Best effort: the rename is done either way.
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    let (_, diagnostics) = open(path)?;
    Ok(RepairedFile {
        repair,
        backup: Some(backup),
        diagnostics,
    })
}

fn write_repaired(
    original: &File,
    temp: &Path,
    permissions: std::fs::Permissions,
) -> io::Result<Repair> {
    let file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    file.set_permissions(permissions)?;
    let mut out = BufWriter::new(file);
    let repair = repair(original, &mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(repair)
}
