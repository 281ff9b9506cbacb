//! The storage seam: where session bytes live.
//!
//! A session is a byte string (the JSONL file) under a path. The file system keeps it in a file
//! and is served by the rest of this crate unchanged ([`Store::Files`]); other backends keep it
//! under a key ([`Store::Keyed`]): in memory ([`MemoryStore`]) or in Redis the way omp's
//! `RedisSessionStorage` does (`RedisStore`, feature `redis`). Every backend gives the same
//! guarantees, because they are kept here once, above the backend:
//!
//! - [`Store::open`] never writes; damage is a [`Diagnostic`] with line and byte offset.
//! - A writer ([`Store::resume`], [`Store::create_at`]) appends only if the session still has the
//!   length and last bytes it last saw ([`KeyedStore::append_if`], atomic in the backend), so an
//!   entry never fuses onto a torn tail and a foreign append or rewrite is a
//!   [`StoreError::Conflict`]; a new session appears whole (slot, header and first entry in one
//!   write that refuses to overwrite).
//! - Titles are kept the way omp keeps them beside the bytes (omp's title hash): reads overlay
//!   that title onto the 256-byte slot, as omp's `readText` does.
//!
//! A [`KeyedStore`] is session-level and small: length, byte ranges, append-if-unchanged,
//! replace-if-length, a listing of paths with sizes, times and titles, and title get/set.

mod memory;
#[cfg(feature = "redis")]
mod redis;
mod target;

pub use memory::{MemoryStore, RedisValue};
#[cfg(feature = "redis")]
pub use redis::{
    APPEND_IF_SCRIPT, APPEND_SCRIPT, DEFAULT_PREFIX, RedisOptions, RedisStore, UPDATE_TITLE_SCRIPT,
    WRITE_FULL_SCRIPT,
};
pub(crate) use target::KeyedTarget;

use crate::diagnostic::Diagnostic;
use crate::discover::{ListProblem, SessionListing, listing_from};
use crate::error::StoreError;
use crate::framing::SharedBytes;
use crate::open::{OpenOptions, index_stream};
use crate::session_file::{SessionFile, Source};
use crate::writer::{SessionWriter, WriterOptions};
use pi_session_types::header::TITLE_SLOT_BYTES;
use pi_session_types::{SessionHeader, TitleSlot, TitleSource};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Bytes read per range request when a whole session is read (so a big session never comes back
/// in one reply).
pub const RANGE_BYTES: u64 = 4 << 20;

/// How many bytes of a session's start a keyed listing reads: omp's picker window
/// (`SESSION_LIST_PREFIX_BYTES`).
pub const LIST_HEAD_BYTES: u64 = 4096;

/// How many of the last bytes an append checks are unchanged (with the length).
pub(crate) const TAIL_BYTES: u64 = 32;

/// omp's title metadata beside a session (`{"title","source","updatedAt"}` in its title hash).
///
/// Written and read through the same serde names (one spelling for each key): reading is
/// omp's lenient `decodeTitleMeta`, so a `title` that is not a string and an unknown `source`
/// are dropped rather than refused.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TitleMeta {
    /// The title (`None`: absent; omp writes `""` for a slot without a title).
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "string_or_none"
    )]
    pub title: Option<String>,
    /// `"auto"` or `"user"`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "source_or_none"
    )]
    pub source: Option<TitleSource>,
    /// When the title was set (ISO 8601).
    #[serde(rename = "updatedAt")]
    pub updated_at: String,
}

/// A title read as `decodeTitleMeta` does: a string, or nothing.
fn string_or_none<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    let value: serde_json::Value = serde::Deserialize::deserialize(deserializer)?;
    Ok(value.as_str().map(str::to_owned))
}

/// A source read as `decodeTitleMeta` does: `auto`, `user`, or nothing.
fn source_or_none<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<TitleSource>, D::Error> {
    let value: serde_json::Value = serde::Deserialize::deserialize(deserializer)?;
    Ok(serde::Deserialize::deserialize(value).ok())
}

impl TitleMeta {
    /// The JSON omp stores (`JSON.stringify({title, source, updatedAt})`, absent keys left out).
    pub fn to_json(&self) -> Result<String, StoreError> {
        pi_session_types::to_js_string(self).map_err(|e| StoreError::Serialize {
            what: "title",
            detail: e.to_string(),
        })
    }

    /// omp's `decodeTitleMeta`: an object with a string `updatedAt`; a `title` that is not a
    /// string and a `source` other than `auto`/`user` are dropped. Anything else is `None`.
    pub fn from_json(raw: &str) -> Option<Self> {
        // Parsed as a value first: JSON.parse keeps a repeated key's last value, and only an
        // object is a record (serde would also take an array for a struct).
        let value: serde_json::Value = serde_json::from_str(raw).ok()?;
        if !value.is_object() {
            return None;
        }
        serde::Deserialize::deserialize(value).ok()
    }

    /// The meta omp derives from a slot (`titleUpdateFromSlot`).
    pub fn from_slot(slot: &TitleSlot) -> Self {
        Self {
            title: Some(slot.title.clone()),
            source: slot.source,
            updated_at: slot.updated_at.clone(),
        }
    }

    /// The 256-byte slot line omp's reads overlay (`serializeTitleSlot`).
    pub fn slot_bytes(&self) -> Result<Vec<u8>, StoreError> {
        TitleSlot::serialize_fixed(
            self.title.as_deref().unwrap_or_default(),
            self.source,
            &self.updated_at,
        )
        .map(String::into_bytes)
        .map_err(|e| StoreError::Serialize {
            what: "title slot",
            detail: e.to_string(),
        })
    }
}

/// One session of a keyed store as its index knows it (omp's `SessionStorageIndexEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedEntry {
    /// The session path (omp's file path; the key without the prefix).
    pub path: String,
    /// Length of the stored bytes.
    pub size: u64,
    /// Modification time in ms since the epoch (omp's meta hash; now when missing).
    pub mtime_ms: u64,
    /// The title from the title hash, when it decodes.
    pub title: Option<TitleMeta>,
}

/// What an append or replace expects to find, so it never lands on bytes it has not seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The length the value must have (`None`: the key must not exist).
    pub len: Option<u64>,
    /// The value's last bytes (at most 32), which must be unchanged too (empty: not checked).
    pub tail: Vec<u8>,
}

/// A backend that keeps sessions under keys: byte strings, a modification time and omp's title
/// metadata per path. Implementations must make [`append_if`](Self::append_if) and
/// [`replace_if`](Self::replace_if) atomic (check and write in one step).
///
/// Errors from the backend are [`StoreError::Io`] naming the path and the store (never a
/// password); a failed check is [`StoreError::Conflict`].
pub trait KeyedStore: Send + Sync + fmt::Debug {
    /// Where the sessions are, for messages (a Redis URL with its password masked, and prefix).
    fn describe(&self) -> String;
    /// Length and mtime of `path`, `None` when there is no such session.
    fn stat(&self, path: &str) -> Result<Option<KeyedEntry>, StoreError>;
    /// Bytes `start..start+len` of `path` as stored (no title overlay); shorter at the end.
    fn read_range(&self, path: &str, start: u64, len: u64) -> Result<Vec<u8>, StoreError>;
    /// Appends `bytes` if the value still matches `expected`; returns the new length.
    fn append_if(&self, path: &str, expected: &Expected, bytes: &[u8]) -> Result<u64, StoreError>;
    /// Replaces the value with `bytes` (omp's `writeFull`), setting or clearing the title
    /// metadata, if its length is `expected.len` (`None`: only if the key does not exist).
    fn replace_if(
        &self,
        path: &str,
        expected: Option<u64>,
        bytes: &[u8],
        title: Option<&TitleMeta>,
    ) -> Result<(), StoreError>;
    /// The title metadata of `path`, when present and decodable.
    fn title(&self, path: &str) -> Result<Option<TitleMeta>, StoreError>;
    /// Sets the title metadata of `path` (omp's `updateSessionTitle`; touches the mtime).
    fn set_title(&self, path: &str, title: &TitleMeta) -> Result<(), StoreError>;
    /// Every session path with its size, mtime and title (omp's `loadIndex`).
    fn list(&self) -> Result<Vec<KeyedEntry>, StoreError>;
    /// The first `head` bytes of each of `paths` as stored, in order (one round trip where the
    /// backend can).
    fn heads(&self, paths: &[&str], head: u64) -> Result<Vec<Vec<u8>>, StoreError> {
        let ranges: Vec<(&str, u64, u64)> = paths.iter().map(|p| (*p, 0, head)).collect();
        self.read_ranges(&ranges)
    }
    /// Byte ranges `(path, start, len)` of any sessions, in order, each as
    /// [`read_range`](Self::read_range) gives it (one round trip where the backend can).
    fn read_ranges(&self, ranges: &[(&str, u64, u64)]) -> Result<Vec<Vec<u8>>, StoreError> {
        ranges
            .iter()
            .map(|(path, start, len)| self.read_range(path, *start, *len))
            .collect()
    }
    /// The title metadata of each of `paths`, in order (one round trip where the backend can).
    fn titles(&self, paths: &[&str]) -> Result<Vec<Option<TitleMeta>>, StoreError> {
        paths.iter().map(|p| self.title(p)).collect()
    }
}

/// Where sessions are kept: files (the default) or a [`KeyedStore`].
#[derive(Debug, Clone, Default)]
pub enum Store {
    /// Files on disk, read and written by this crate's file code ([`crate::open`],
    /// [`SessionWriter`]).
    #[default]
    Files,
    /// A keyed backend (memory, Redis).
    Keyed(Arc<dyn KeyedStore>),
}

impl Store {
    /// A keyed store.
    pub fn keyed(store: impl KeyedStore + 'static) -> Self {
        Self::Keyed(Arc::new(store))
    }

    /// Where the sessions are, for messages (no secrets).
    pub fn describe(&self) -> String {
        match self {
            Self::Files => "the file system".to_owned(),
            Self::Keyed(store) => store.describe(),
        }
    }

    /// Opens a session for reading (see [`crate::open`]): never writes.
    pub fn open(&self, path: &Path) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
        self.open_with(path, &OpenOptions::default())
    }

    /// [`open`](Self::open) with explicit [`OpenOptions`].
    pub fn open_with(
        &self,
        path: &Path,
        options: &OpenOptions,
    ) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
        match self {
            Self::Files => crate::open::open_with(path, options),
            Self::Keyed(store) => open_keyed(store, &key_of(path), options),
        }
    }

    /// A writer that appends to the opened `session` (see [`SessionWriter::resume`]).
    pub fn resume(
        &self,
        path: &Path,
        session: &SessionFile,
        options: WriterOptions,
    ) -> Result<SessionWriter, StoreError> {
        match self {
            Self::Files => SessionWriter::resume(path, session, options),
            Self::Keyed(store) => {
                let key = key_of(path);
                let expected = Expected {
                    len: Some(session.byte_len()),
                    tail: tail_of(store.as_ref(), &key, session.byte_len())?,
                };
                let target = KeyedTarget::existing(Arc::clone(store), key, expected);
                SessionWriter::resume_keyed(path, session, options, target)
            }
        }
    }

    /// Opens and resumes in one step (see [`SessionWriter::open_for_append`]).
    pub fn open_for_append(
        &self,
        path: &Path,
        options: WriterOptions,
    ) -> Result<(SessionWriter, SessionFile, Vec<Diagnostic>), StoreError> {
        let (session, diagnostics) = self.open(path)?;
        let writer = self.resume(path, &session, options)?;
        Ok((writer, session, diagnostics))
    }

    /// A new session at `path` (see [`SessionWriter::create_at`]); writes nothing until the first
    /// append, which fails with [`StoreError::AlreadyExists`] if the path is taken by then.
    pub fn create_at(
        &self,
        path: &Path,
        header: SessionHeader,
        options: WriterOptions,
    ) -> SessionWriter {
        match self {
            Self::Files => SessionWriter::create_at(path, header, options),
            Self::Keyed(store) => {
                let target = KeyedTarget::new(Arc::clone(store), key_of(path));
                SessionWriter::create_keyed(path, header, options, target)
            }
        }
    }

    /// Lists the sessions: for files, those directly in `dir` ([`crate::list`]); for a keyed
    /// store, every `*.jsonl` path (directly in `dir` when given, as omp's `listFilesSync`),
    /// described from its first 4 KiB with the title hash overlaid, as omp's picker reads it.
    pub fn list(
        &self,
        dir: Option<&Path>,
    ) -> Result<(Vec<SessionListing>, Vec<ListProblem>), StoreError> {
        match (self, dir) {
            (Self::Files, Some(dir)) => crate::discover::list(dir),
            (Self::Files, None) => Ok((Vec::new(), Vec::new())),
            (Self::Keyed(store), dir) => list_keyed(store.as_ref(), dir),
        }
    }
}

/// The key path of a session path (omp's paths are plain strings).
fn key_of(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn not_found(store: &dyn KeyedStore, path: &str) -> StoreError {
    StoreError::io(
        "could not open",
        path,
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no session with this path in {}", store.describe()),
        ),
    )
}

/// The last (at most [`TAIL_BYTES`]) bytes of the first `len` bytes of `path`.
pub(crate) fn tail_of(store: &dyn KeyedStore, path: &str, len: u64) -> Result<Vec<u8>, StoreError> {
    let start = len.saturating_sub(TAIL_BYTES);
    store.read_range(path, start, len - start)
}

/// A whole session read in [`RANGE_BYTES`] ranges, as a byte stream for the file framing
/// ([`crate::open`]'s chunk reader and parser), with the title hash overlaid on the slot.
///
/// The stream stops at the length the session had when it was opened (`stat`), so a session
/// another host appends to meanwhile reads as it stood. Each range is kept as it streams by
/// (the opened session's entries are read back from memory: a range request per entry would
/// cost a round trip each), in one allocation the session then owns. A backend error ends the stream with an I/O error and is kept in
/// [`failure`](Self::failure), to be reported as it was.
struct RangeStream<'a> {
    store: &'a dyn KeyedStore,
    path: &'a str,
    title: Option<TitleMeta>,
    /// The session's bytes, allocated once at the size it had and filled range by range (the
    /// opened session keeps this allocation, so a big session is in memory once, not twice).
    kept: Vec<u8>,
    /// The session's length when the stream began (what `kept` is allocated for).
    size: usize,
    /// How much of `kept` is read.
    filled: usize,
    /// How much of `kept` the reader has handed out.
    served: usize,
    failure: Option<StoreError>,
}

impl<'a> RangeStream<'a> {
    fn new(store: &'a dyn KeyedStore, path: &'a str) -> Result<Self, StoreError> {
        let Some(stat) = store.stat(path)? else {
            return Err(not_found(store, path));
        };
        let size = usize::try_from(stat.size).map_err(|_| {
            StoreError::io(
                "could not read",
                path,
                std::io::Error::other("the session is larger than this machine can address"),
            )
        })?;
        Ok(Self {
            store,
            path,
            title: store.title(path)?,
            // One allocation of the final size, filled as the ranges arrive.
            kept: Vec::with_capacity(size),
            size,
            filled: 0,
            served: 0,
            failure: None,
        })
    }

    /// The session's length when the stream began.
    fn size(&self) -> u64 {
        self.size as u64
    }

    /// Reads the next range into `kept`; `false` at the end.
    fn fill(&mut self) -> Result<bool, StoreError> {
        let at = self.filled;
        let want = (RANGE_BYTES as usize).min(self.size - at);
        if want == 0 {
            return Ok(false);
        }
        let mut range = self.store.read_range(self.path, at as u64, want as u64)?;
        // A value that shrank meanwhile ends the stream where it ends.
        range.truncate(want);
        if range.is_empty() {
            return Ok(false);
        }
        if at == 0
            && let Some(title) = &self.title
        {
            overlay_slot(&mut range, title)?;
        }
        self.kept.extend_from_slice(&range);
        self.filled += range.len();
        Ok(true)
    }

    /// The bytes read, for the opened session.
    fn take_bytes(&mut self) -> SharedBytes {
        SharedBytes::new(std::mem::take(&mut self.kept))
    }
}

impl std::io::Read for RangeStream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.served == self.filled {
            match self.fill() {
                Ok(true) => {}
                Ok(false) => return Ok(0),
                Err(error) => {
                    let shown = error.to_string();
                    self.failure = Some(error);
                    return Err(std::io::Error::other(shown));
                }
            }
        }
        let n = buf.len().min(self.filled - self.served);
        buf[..n].copy_from_slice(&self.kept[self.served..self.served + n]);
        self.served += n;
        Ok(n)
    }
}

/// omp's `overlayTitleSlotContent` / `overlayTitleSlotPrefix`: the title's 256-byte slot
/// replaces the first bytes (all of them when the value is shorter; the length never changes
/// here, so byte offsets stay those of the stored value).
pub(crate) fn overlay_slot(bytes: &mut [u8], title: &TitleMeta) -> Result<(), StoreError> {
    let slot = title.slot_bytes()?;
    let n = bytes.len().min(slot.len()).min(TITLE_SLOT_BYTES);
    bytes[..n].copy_from_slice(&slot[..n]);
    Ok(())
}

fn open_keyed(
    store: &Arc<dyn KeyedStore>,
    path: &str,
    options: &OpenOptions,
) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
    let mut stream = RangeStream::new(store.as_ref(), path)?;
    let size = stream.size();
    let indexed = index_stream(&mut stream, size, options, |stream| Source::Memory {
        path: Some(PathBuf::from(path)),
        bytes: stream.take_bytes(),
    });
    indexed.map_err(|e| match stream.failure.take() {
        Some(failure) => failure,
        None => StoreError::io("could not read", path, e),
    })
}

fn list_keyed(
    store: &dyn KeyedStore,
    dir: Option<&Path>,
) -> Result<(Vec<SessionListing>, Vec<ListProblem>), StoreError> {
    let prefix = dir.map(|d| {
        let d = key_of(d);
        if d.ends_with('/') { d } else { format!("{d}/") }
    });
    let entries: Vec<KeyedEntry> = store
        .list()?
        .into_iter()
        .filter(|e| e.path.ends_with(".jsonl"))
        .filter(|e| match &prefix {
            Some(prefix) => e
                .path
                .strip_prefix(prefix.as_str())
                .is_some_and(|name| !name.contains('/') && !name.contains('\\')),
            None => true,
        })
        .collect();
    let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    let heads = store.heads(&paths, LIST_HEAD_BYTES)?;
    let mut sessions = Vec::new();
    let mut problems = Vec::new();
    for (entry, mut head) in entries.iter().zip(heads) {
        if let Some(title) = &entry.title {
            overlay_slot(&mut head, title)?;
        }
        let modified = SystemTime::UNIX_EPOCH + Duration::from_millis(entry.mtime_ms);
        let path = PathBuf::from(&entry.path);
        match listing_from(&path, &head[..], LIST_HEAD_BYTES, modified, entry.size) {
            Ok(Ok(listing)) => sessions.push(listing),
            Ok(Err(diagnostic)) => problems.push(ListProblem { path, diagnostic }),
            Err(error) => return Err(error),
        }
    }
    sessions.sort_by(crate::discover::newest_first);
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((sessions, problems))
}

/// The next modification time: now in ms, or one past the last one given (omp's
/// `#allocMtimeMs`, so every mutation has its own).
pub(crate) fn next_mtime(last: &std::sync::atomic::AtomicU64) -> u64 {
    use std::sync::atomic::Ordering;
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut previous = last.load(Ordering::Relaxed);
    loop {
        let next = if now > previous { now } else { previous + 1 };
        match last.compare_exchange_weak(previous, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => previous = seen,
        }
    }
}

/// A session's prefix window and, when the session is longer than both windows, its tail.
pub type Windows = (Vec<u8>, Option<Vec<u8>>);

/// The first `prefix` and last `tail` bytes of a session of `size` bytes in a keyed store, as
/// omp reads them (title overlaid on the prefix): the whole session and `None` when it fits in
/// both windows. Only these ranges are read.
pub fn read_windows(
    store: &dyn KeyedStore,
    path: &Path,
    size: u64,
    prefix: u64,
    tail: u64,
) -> Result<Windows, StoreError> {
    let mut windows = read_windows_of(store, &[(path, size)], prefix, tail)?;
    windows.pop().ok_or_else(|| not_found(store, &key_of(path)))
}

/// [`read_windows`] for several sessions `(path, size)` at once, in order: their titles in one
/// request and all their ranges in another where the backend can (Redis: `HMGET` and one
/// pipeline of `GETRANGE`s), instead of three round trips per session.
pub fn read_windows_of(
    store: &dyn KeyedStore,
    sessions: &[(&Path, u64)],
    prefix: u64,
    tail: u64,
) -> Result<Vec<Windows>, StoreError> {
    let keys: Vec<String> = sessions.iter().map(|(path, _)| key_of(path)).collect();
    let paths: Vec<&str> = keys.iter().map(String::as_str).collect();
    let titles = store.titles(&paths)?;
    let whole = |size: u64| size <= prefix + tail;
    let mut ranges = Vec::with_capacity(2 * sessions.len());
    for (path, (_, size)) in paths.iter().zip(sessions) {
        if whole(*size) {
            ranges.push((*path, 0, prefix + tail));
        } else {
            ranges.push((*path, 0, prefix));
            ranges.push((*path, size - tail, tail));
        }
    }
    let mut read = store.read_ranges(&ranges)?.into_iter();
    let mut windows = Vec::with_capacity(sessions.len());
    for ((_, size), title) in sessions.iter().zip(titles) {
        let mut head = read.next().unwrap_or_default();
        if let Some(title) = &title {
            overlay_slot(&mut head, title)?;
        }
        let end = if whole(*size) {
            None
        } else {
            Some(read.next().unwrap_or_default())
        };
        windows.push((head, end));
    }
    Ok(windows)
}
