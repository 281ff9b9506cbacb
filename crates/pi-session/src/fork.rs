//! New files from a session: [`Session::fork_to`] (pi's `createBranchedSession`, omp's
//! equivalent) and [`Session::migrate`] (pi's rewrite of a version 1 or 2 file).
//!
//! Both copy entries with their own ids and timestamps ([`SessionWriter::append_verbatim`]), so
//! every reference (`firstKeptEntryId`, `targetId`, `fromId`, `parentId`) still names the same
//! entry in the new file.

use std::path::{Path, PathBuf};

use pi_session_store::{RewriteLock, SessionWriter, Store, WriterOptions, backup_path, new_header};
use pi_session_tree::plan_fork;
use pi_session_types::{Entry, JsonNumber, JsonValue, SessionHeader};

use crate::error::{Error, Result};
use crate::session::Session;

/// What [`Session::migrate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The file, now version 3.
    pub path: PathBuf,
    /// The copy of the file as it was (`None`: it was version 3 already; nothing was written).
    pub backup: Option<PathBuf>,
}

impl Session {
    /// Copies the branch ending at `at` (this cursor's leaf for `None`) into a new session file,
    /// as pi's `createBranchedSession` does: a new header (new id, this session's `cwd`,
    /// `parentSession` naming this file), the branch's entries with their ids and timestamps
    /// (labels left out of the chain), then one `label` entry for each label in effect on the
    /// branch. pi and omp rebuild the same context from the new file as from this one at `at`.
    ///
    /// `to` is a folder (the file is named as pi names new sessions in it) or a `.jsonl` path
    /// that must not exist yet. The new file is written in this session's dialect (with omp's
    /// title slot and title for omp). Works for every file [`Session::open`] reads, including
    /// those it cannot append to (version 1 or 2, headerless): this is their way to continue.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{ProjectOptions, Session, UserOptions, user};
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut session = Session::new(dir.path(), "anthropic:claude-x", "/w");
    /// let first = session.append(user("one", UserOptions::new()))?;
    /// session.append(user("two", UserOptions::new()))?;
    /// let fork = session.fork_to(dir.path().join("forks"), first.id())?;
    /// assert_eq!(fork.branch()?.len(), 2); // the model change, then "one"
    /// assert_eq!(fork.header().unwrap().parent_session, session.path().map(|p| p.display().to_string()));
    /// # Ok(()) }
    /// ```
    pub fn fork_to(&self, to: impl AsRef<Path>, at: Option<&str>) -> Result<Session> {
        let cwd = self.cwd().unwrap_or_default();
        self.fork_to_with(to, at, new_header(cwd))
    }

    /// [`fork_to`](Self::fork_to) with the new file's header given (its id, time, `cwd`, ...),
    /// e.g. for reproducible files. `parentSession` is set to this file unless the header names
    /// one; omp's title is copied unless it has one. The label entries the fork adds get ids
    /// derived from the header's id, so the same header gives the same bytes.
    pub fn fork_to_with(
        &self,
        to: impl AsRef<Path>,
        at: Option<&str>,
        header: SessionHeader,
    ) -> Result<Session> {
        self.fork_into(&Store::Files, to.as_ref(), at, header)
    }

    /// [`fork_to`](Self::fork_to) into `store` (files, memory, Redis): `to` is a folder or a
    /// `.jsonl` path as the store names sessions (for Redis, omp's path of the new session).
    pub fn fork_to_in(
        &self,
        store: &Store,
        to: impl AsRef<Path>,
        at: Option<&str>,
    ) -> Result<Session> {
        let cwd = self.cwd().unwrap_or_default();
        self.fork_into(store, to.as_ref(), at, new_header(cwd))
    }

    fn fork_into(
        &self,
        store: &Store,
        to: &Path,
        at: Option<&str>,
        mut header: SessionHeader,
    ) -> Result<Session> {
        let (planned, header, dialect, busy_timeout) = {
            let mut log = self.log();
            let leaf = match at {
                Some(id) => Some(id.to_owned()),
                None => self.leaf_in(&log),
            };
            let Some(leaf) = leaf else {
                return Err(Error::invalid_input(
                    "there is nothing to fork: the session has no entries yet; append first, or name an entry",
                ));
            };
            let at = log.index.position_of(&leaf).ok_or_else(|| {
                Error::from(pi_session_store::StoreError::UnknownId { id: leaf.clone() })
            })?;
            let path = log.index.branch(at).positions;
            let labels: Vec<usize> = log.index.positions_of_kind("label").collect();
            let path = path
                .into_iter()
                .map(|p| log.value(p))
                .collect::<Result<Vec<_>>>()?;
            let labels = labels
                .into_iter()
                .map(|p| log.value(p))
                .collect::<Result<Vec<_>>>()?;
            let mut ids = LabelIds::new(&header.id);
            let mut new_id = |taken: &std::collections::HashSet<String>| ids.next(taken);
            let planned = plan_fork(&path, &labels, &mut new_id);
            let source = log.writer.header().cloned();
            if header.parent_session.is_none() {
                header.parent_session =
                    log.writer.path().map(|p| absolute(p).display().to_string());
            }
            if log.dialect.has_title_slot()
                && header.title.is_none()
                && let Some(source) = &source
            {
                header.title.clone_from(&source.title);
                header.title_source.clone_from(&source.title_source);
            }
            (planned, header, log.dialect, log.busy_timeout)
        };
        let options = WriterOptions {
            title_slot: dialect.has_title_slot(),
            busy_timeout,
            ..WriterOptions::default()
        };
        let target = if is_session_path(to) {
            to.to_path_buf()
        } else {
            let timestamp = header
                .timestamp
                .as_ref()
                .map_or_else(String::new, |t| t.as_str().to_owned());
            to.join(pi_session_store::paths::session_file_name(
                &timestamp, &header.id,
            ))
        };
        let mut writer = store.create_at(&target, header, options);
        for value in planned {
            let JsonValue::Object(map) = value else {
                continue;
            };
            writer.append_verbatim(Entry::from_map(map))?;
        }
        writer.flush()?;
        let path = writer.path().map(Path::to_path_buf).ok_or_else(|| {
            Error::invalid_input("the fork has no file: name a folder or a .jsonl path")
        })?;
        drop(writer);
        let (mut opened, _) = Session::resume_in(store, &path, &self.model)?;
        opened.set_dialect(dialect);
        Ok(opened)
    }

    /// Rewrites a version 1 or 2 session file as version 3, as pi does when it opens one: the
    /// entries as the store migrates them in memory (v1 ids and `firstKeptEntryId`, v2's
    /// `hookMessage` role renamed), lines that are not entries dropped. The file as it was is
    /// kept beside it as `<file>.bak` (refused if that exists), and the new file replaces it
    /// atomically (written to a temporary file in the same folder with the file's permissions,
    /// synced, renamed).
    ///
    /// It holds the session's writer lock and omp's publish lock the whole time, as a writer
    /// does: refused with [`ErrorKind::Busy`](crate::ErrorKind::Busy) while another writer (a
    /// `Session` that appended, `pi-session append`, omp) holds either, and with
    /// [`ErrorKind::Conflict`](crate::ErrorKind::Conflict) if the file changes meanwhile (pi
    /// takes no lock).
    ///
    /// After it, [`Session::open`] appends to the file. A version 3 file is left as it is.
    pub fn migrate(path: impl AsRef<Path>) -> Result<Migrated> {
        Self::migrate_waiting(path, None)
    }

    /// [`migrate`](Self::migrate), waiting up to `busy_timeout` for another writer to let go of
    /// the session's lock and omp's publish lock (as [`Session::set_busy_timeout`] makes
    /// appends wait); `None` refuses at once, as `migrate` does.
    pub fn migrate_waiting(
        path: impl AsRef<Path>,
        busy_timeout: Option<std::time::Duration>,
    ) -> Result<Migrated> {
        let path = path.as_ref();
        let _locks = RewriteLock::acquire(path, busy_timeout)?;
        let (file, _) = pi_session_store::open(path)?;
        let Some(mut header) = file.header().cloned() else {
            return Err(pi_session_store::StoreError::NoHeader {
                path: path.to_path_buf(),
            }
            .into());
        };
        if file.file_version() >= pi_session_store::CURRENT_VERSION {
            return Ok(Migrated {
                path: path.to_path_buf(),
                backup: None,
            });
        }
        header.version = Some(JsonNumber::from(pi_session_store::CURRENT_VERSION));
        let backup = backup_path(path);
        if backup.exists() {
            return Err(Error::from(pi_session_store::StoreError::AlreadyExists {
                path: backup,
            }));
        }
        let temp = sibling(path, ".migrating");
        let _ = std::fs::remove_file(&temp);
        let written = write_migrated(&file, &temp, header);
        let result = written.and_then(|()| replace(path, &temp, &backup, file.byte_len()));
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result.map(|()| Migrated {
            path: path.to_path_buf(),
            backup: Some(backup),
        })
    }
}

/// Writes every entry of `file`, as migrated in memory, under `header` to `temp`, with the
/// permissions of the file migrated.
fn write_migrated(
    file: &pi_session_store::SessionFile,
    temp: &Path,
    header: SessionHeader,
) -> Result<()> {
    let mut writer = SessionWriter::create_at(temp, header, WriterOptions::default());
    let positions: Vec<usize> = (0..file.len()).collect();
    for entry in file.entries_for(&positions)? {
        writer.append_verbatim(entry)?;
    }
    writer.flush()?;
    drop(writer);
    if let Some(source) = file.path()
        && let Ok(metadata) = std::fs::metadata(source)
    {
        std::fs::set_permissions(temp, metadata.permissions()).map_err(|e| {
            Error::io(
                format!("could not set the permissions of {}", temp.display()),
                e,
            )
        })?;
    }
    Ok(())
}

/// Keeps `path` as `backup` (a hard link: never half written), then puts `temp` in its place,
/// if `path` is still `len` bytes. The caller holds both locks.
fn replace(path: &Path, temp: &Path, backup: &Path, len: u64) -> Result<()> {
    let io = |what: &str, p: &Path, e| Error::io(format!("{what} {}", p.display()), e);
    std::fs::File::open(temp)
        .and_then(|f| f.sync_all())
        .map_err(|e| io("could not sync", temp, e))?;
    let now = std::fs::metadata(path).map_err(|e| io("could not read", path, e))?;
    if now.len() != len {
        return Err(Error::from(pi_session_store::StoreError::Conflict {
            path: path.to_path_buf(),
            expected: len,
            actual: Some(now.len()),
            replaced: false,
        }));
    }
    std::fs::hard_link(path, backup).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Error::from(pi_session_store::StoreError::AlreadyExists {
                path: backup.to_path_buf(),
            })
        } else {
            io("could not keep the original as", backup, e)
        }
    })?;
    std::fs::rename(temp, path).map_err(|e| io("could not replace", path, e))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Best effort: the rename is done either way.
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

/// `<dir>/.<name><suffix>` (hidden).
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}{suffix}"))
}

/// A path that names a session file rather than a folder: it ends in `.jsonl` and is not an
/// existing folder.
fn is_session_path(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl") && !path.is_dir()
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Ids for the label entries a fork adds: 8 lowercase hex digits (as pi's `generateId`), not
/// in the fork yet, drawn from a sequence seeded by the new header's id.
struct LabelIds {
    state: u64,
}

impl LabelIds {
    fn new(seed: &str) -> Self {
        let state = seed.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Self { state }
    }

    fn next(&mut self, taken: &std::collections::HashSet<String>) -> String {
        loop {
            // splitmix64
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let id = format!("{:08x}", (z ^ (z >> 31)) >> 32);
            if !taken.contains(&id) {
                return id;
            }
        }
    }
}
