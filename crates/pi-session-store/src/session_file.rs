//! [`SessionFile`]: an opened session, as an index of envelopes whose bodies are read on demand.

use crate::entry_table::EntryTable;
use crate::error::StoreError;
use crate::framing::{CACHE_LINE, SharedBytes, aligned_lead};
use crate::migrate::{Migration, Ordinal, patch_v1, patch_v2};
use crate::open::display_path;
use pi_session_types::{
    Entry, Envelope, JsonValue, Parsed, ParsedLine, SessionHeader, TitleSlot, parse_line,
};
use std::borrow::Cow;
use std::cell::Cell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where an opened session's bytes live.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// Held in memory (small files, ephemeral sessions, [`crate::open_bytes`]).
    Memory {
        /// The file it was read from, if any.
        path: Option<PathBuf>,
        /// The whole content.
        bytes: SharedBytes,
    },
    /// Re-read from the file by offset (large files).
    File(PathBuf),
}

/// One entry of the index: where its line is and its envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// 1-based physical line number.
    pub line: u64,
    /// Byte offset of the entry's first byte in the file.
    pub byte_offset: u64,
    /// Length of the entry's JSON in bytes (without the line terminator).
    pub byte_len: u64,
    /// `type`, `id`, `parentId`, `timestamp` (for v1 files: the migrated id and parent).
    pub envelope: IndexEnvelope,
}

/// An entry's envelope as the index keeps it: `type`, `id`, `parentId` and `timestamp`, each
/// as [`pi_session_types::parse_envelope`] reads it, back to back in one allocation (an
/// [`Envelope`] holds four, and is more than twice the size). What repairs reading them took
/// is reported as diagnostics when the file is opened.
///
/// ```
/// use pi_session_store::IndexEnvelope;
/// let envelope = IndexEnvelope::new("message", Some("a1"), None, Some("2026-01-01T00:00:00.000Z"));
/// assert_eq!((envelope.kind(), envelope.id(), envelope.parent_id()), ("message", Some("a1"), None));
/// assert_eq!(envelope.timestamp(), Some("2026-01-01T00:00:00.000Z"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct IndexEnvelope {
    /// `type`, then `id`, `parentId` and `timestamp` when present.
    text: Box<str>,
    /// Where `type`, `id`, `parentId` and `timestamp` end in `text`.
    ends: [usize; 4],
    /// Whether `id`, `parentId` and `timestamp` are present (as strings).
    present: [bool; 3],
    /// `type` as the entry table keeps it ([`crate::entry_table::kind_code`]), worked out where
    /// the envelope is made (on the open's threads), not again when the table is built.
    kind_code: u8,
}

impl IndexEnvelope {
    /// An envelope of these four fields.
    pub fn new(
        kind: &str,
        id: Option<&str>,
        parent_id: Option<&str>,
        timestamp: Option<&str>,
    ) -> Self {
        let parts = [Some(kind), id, parent_id, timestamp];
        let mut text = String::with_capacity(parts.iter().flatten().map(|part| part.len()).sum());
        let mut ends = [0; 4];
        for (end, part) in ends.iter_mut().zip(parts) {
            text.push_str(part.unwrap_or_default());
            *end = text.len();
        }
        Self {
            text: text.into_boxed_str(),
            ends,
            present: [id.is_some(), parent_id.is_some(), timestamp.is_some()],
            kind_code: crate::entry_table::kind_code(kind),
        }
    }

    /// `type` as the entry table keeps it.
    pub(crate) fn kind_code(&self) -> u8 {
        self.kind_code
    }

    /// Field `at` (0: `type`, 1: `id`, 2: `parentId`, 3: `timestamp`).
    fn part(&self, at: usize) -> &str {
        let start = at.checked_sub(1).map_or(0, |before| self.ends[before]);
        self.text.get(start..self.ends[at]).unwrap_or_default()
    }

    fn optional(&self, at: usize) -> Option<&str> {
        self.present[at - 1].then(|| self.part(at))
    }

    /// `type`: `"title"` for omp's slot, `"session"` for the header, else an entry type.
    pub fn kind(&self) -> &str {
        self.part(0)
    }

    /// `id` when it is a string.
    pub fn id(&self) -> Option<&str> {
        self.optional(1)
    }

    /// Whether `id` is a string: [`Self::id`]`.is_some()`, without finding where it is.
    pub fn has_id(&self) -> bool {
        self.present[0]
    }

    /// `parentId` when it is a string (`None` for `null`, absent, or another JSON type).
    pub fn parent_id(&self) -> Option<&str> {
        self.optional(2)
    }

    /// `timestamp` when it is a string.
    pub fn timestamp(&self) -> Option<&str> {
        self.optional(3)
    }

    /// The same envelope with another `id` and `parentId` (a version 1 file's migrated ones).
    pub(crate) fn with_ids(&self, id: Option<&str>, parent_id: Option<&str>) -> Self {
        Self::new(self.kind(), id, parent_id, self.timestamp())
    }
}

impl From<&Envelope> for IndexEnvelope {
    fn from(envelope: &Envelope) -> Self {
        Self::new(
            &envelope.kind,
            envelope.id.as_deref(),
            envelope.parent_id.as_deref(),
            envelope.timestamp.as_deref(),
        )
    }
}

impl std::fmt::Debug for IndexEnvelope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexEnvelope")
            .field("kind", &self.kind())
            .field("id", &self.id())
            .field("parent_id", &self.parent_id())
            .field("timestamp", &self.timestamp())
            .finish()
    }
}

/// An opened session: header, title slot, and an index of every entry in file order.
///
/// Entry bodies are parsed only when asked for ([`entry`](Self::entry),
/// [`entries_for`](Self::entries_for)). Small files are held in memory; larger ones are re-read by
/// byte range (each call opens the file briefly; no handle is kept unless asked,
/// [`keep_open`](Self::keep_open), so the file can be renamed or deleted by others meanwhile).
/// If the file was rewritten in the meantime, reading an entry gives [`StoreError::Changed`]
/// instead of wrong data.
#[derive(Debug, Clone)]
pub struct SessionFile {
    pub(crate) source: Source,
    pub(crate) header: Option<SessionHeader>,
    pub(crate) header_line: Option<u64>,
    pub(crate) title_slot: Option<TitleSlot>,
    /// The index and its lookups, shared with a tree index built over it.
    pub(crate) table: Arc<EntryTable>,
    pub(crate) migration: Migration,
    pub(crate) file_version: u64,
    pub(crate) byte_len: u64,
    pub(crate) ends_with_newline: bool,
    /// [`OpenOptions::threads`](crate::OpenOptions::threads) it was opened with (0: the
    /// machine's), the most threads a batch read starts.
    pub(crate) read_threads: usize,
    /// The file, kept open for the reads ([`SessionFile::keep_open`]); `None`: each call
    /// opens it.
    pub(crate) kept_file: Option<Arc<File>>,
}

impl SessionFile {
    pub(crate) fn empty() -> Self {
        let source = Source::Memory {
            path: None,
            bytes: SharedBytes::default(),
        };
        Self {
            source,
            header: None,
            header_line: None,
            title_slot: None,
            table: Arc::default(),
            migration: Migration::None,
            file_version: crate::migrate::CURRENT_VERSION,
            byte_len: 0,
            ends_with_newline: true,
            read_threads: 0,
            kept_file: None,
        }
    }

    /// The file this session was read from (`None` for bytes opened with [`crate::open_bytes`]).
    pub fn path(&self) -> Option<&Path> {
        match &self.source {
            Source::Memory { path, .. } => path.as_deref(),
            Source::File(path) => Some(path),
        }
    }

    /// The header, with a valid omp title slot folded in (its title wins; an empty slot title
    /// removes `title`; its source sets or removes `titleSource`), and `version` 3 for a migrated
    /// file. `None` when the file has none.
    pub fn header(&self) -> Option<&SessionHeader> {
        self.header.as_ref()
    }

    /// The line the header is on.
    pub fn header_line(&self) -> Option<u64> {
        self.header_line
    }

    /// omp's title slot (line 1), when the file has a valid one.
    pub fn title_slot(&self) -> Option<&TitleSlot> {
        self.title_slot.as_ref()
    }

    /// The session title: the header's `title` after folding in the title slot.
    pub fn title(&self) -> Option<&str> {
        self.header.as_ref().and_then(|h| h.title.as_deref())
    }

    /// The version the file declares (1 when its header has none; 3 when there is no header).
    /// Entries are always served migrated to version 3, and [`header`](Self::header) then says
    /// version 3 too, as pi's `getHeader()` does after migrating.
    pub fn file_version(&self) -> u64 {
        self.file_version
    }

    /// Whether entries are migrated in memory (the file is version 1 or 2).
    #[inline]
    pub fn is_migrated(&self) -> bool {
        self.migration != Migration::None
    }

    /// Number of entries (header, title slot and damaged lines excluded).
    #[inline]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when the session has no entries.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The index: every entry's line, offset, length and envelope, in file order.
    pub fn index(&self) -> &[IndexEntry] {
        self.table.entries()
    }

    /// The index with its lookups (id → position, parent links), shared: a tree index built
    /// over it (`pi_session_tree::TreeIndex::from_table`) keeps this one instead of copying
    /// the envelopes or hashing the ids again.
    pub fn table(&self) -> &Arc<EntryTable> {
        &self.table
    }

    /// The position of the entry with this id (the later one when ids repeat, as pi and omp do).
    pub fn position_of(&self, id: &str) -> Option<usize> {
        self.table.position_of(id)
    }

    /// The id of the last entry (in file order) that has one: the leaf when the file is loaded,
    /// as pi and omp define it.
    pub fn leaf_id(&self) -> Option<&str> {
        self.index().iter().rev().find_map(|e| e.envelope.id())
    }

    /// Size of the file (or bytes) when it was opened.
    pub fn byte_len(&self) -> u64 {
        self.byte_len
    }

    /// Whether the content ended with `\n` (an empty file counts as ending with one). When it
    /// does not, the next append starts with a newline.
    pub fn ends_with_newline(&self) -> bool {
        self.ends_with_newline
    }

    /// Reads and types the entry at `index` (in file order), migrated to version 3.
    pub fn entry(&self, index: usize) -> Result<Entry, StoreError> {
        self.entry_with_warnings(index).map(|parsed| parsed.value)
    }

    /// [`entry`](Self::entry) plus the warnings raised while typing it (e.g. a known entry type
    /// whose fields did not match and is kept as JSON).
    pub fn entry_with_warnings(&self, index: usize) -> Result<Parsed<Entry>, StoreError> {
        let mut reader = self.range_reader();
        self.materialise(index, &mut reader)
    }

    /// Reads the entries at `indices` (any order; each read by offset), migrated to version 3.
    pub fn entries_for(&self, indices: &[usize]) -> Result<Vec<Entry>, StoreError> {
        self.collect_in_file_order(indices, |index, at, bytes| {
            self.materialise_bytes(index, at, bytes).map(|p| p.value)
        })
    }

    /// The entries at `indices` (any order, repeats allowed) as JSON objects, in the order
    /// asked, the way JavaScript's `JSON.parse` reads the line: keys in file order, nothing
    /// typed. Lines are read as [`entry`](Self::entry) reads them (invalid UTF-8 as U+FFFD, lone
    /// surrogate escapes as their carriers U+10F800+k, which the JSON writer turns back into the
    /// same escapes); every entry of a version 1 or 2 file (migrated in
    /// memory) is exactly `serde_json::to_value(self.entry(i)?)`. A line that no longer holds
    /// the indexed entry gives the same error as [`entry`](Self::entry).
    ///
    /// The lines are read in one pass in file order through one reused buffer and parsed
    /// straight to JSON: the batch read for a tree or context layer that works on JSON values
    /// (e.g. one branch of a large file). Unlike `serde_json::to_value` of a typed [`Entry`],
    /// which writes the keys of typed objects in the schema's order, the keys keep the order the
    /// file has, as omp and pi see them.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"one"}"#, "\n",
    ///     r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"two"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// let values = session.values_for(&[1, 0])?;
    /// assert_eq!(values[0]["label"], "two");
    /// assert_eq!(values[1], serde_json::to_value(session.entry(0)?)?);
    /// # Ok(()) }
    /// ```
    pub fn values_for(&self, indices: &[usize]) -> Result<Vec<JsonValue>, StoreError> {
        self.collect_in_file_order(indices, |index, at, bytes| self.value_of(index, at, bytes))
    }

    /// [`values_for`](Self::values_for) of only those `indices` whose line `keep` accepts,
    /// given its index entry and its exact bytes in the file, with the index of each: a scan
    /// that can tell from the raw bytes that a line holds nothing for it (e.g. no `"usage"`
    /// key) never parses it. The lines are read in one pass in file order, as `values_for`
    /// reads them; lines not kept are not parsed and so give no error.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"one"}"#, "\n",
    ///     r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"two"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// let kept = session.values_where(&[0, 1], |_, raw| raw.ends_with(br#""two"}"#))?;
    /// assert_eq!(kept.len(), 1);
    /// assert_eq!((kept[0].0, &kept[0].1["label"]), (1, &serde_json::json!("two")));
    /// # Ok(()) }
    /// ```
    pub fn values_where(
        &self,
        indices: &[usize],
        keep: impl Fn(&IndexEntry, &[u8]) -> bool + Sync,
    ) -> Result<Vec<(usize, JsonValue)>, StoreError> {
        self.read_kept(indices, keep, |index, at, bytes| {
            self.value_of(index, at, bytes)
        })
    }

    /// [`values_where`](Self::values_where), with each `message` line kept read as the keys
    /// `keys` names of the entry and of its message
    /// ([`pi_session_types::shallow::entry_with_message_keys`]: every other value skipped,
    /// never built), for a reader that looks at a few keys of the messages. A line is read so
    /// only where `values_for` would serve it parsed as it is (a file that needs no
    /// migration, the line holding the entry indexed there); any other line, and every entry
    /// of another type, is read whole.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use pi_session_types::shallow::Keys;
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"long"}}"#, "\n",
    ///     r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"a","label":"one"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// let keys = Keys { entry: &["type", "id", "message"], message: &["role"], blocks: &[] };
    /// let read = session.values_where_cut(&[0, 1], |_, _| true, &keys)?;
    /// assert_eq!(read[0].1, serde_json::json!({"type": "message", "id": "a", "message": {"role": "user"}}));
    /// assert_eq!(read[1].1["label"], "one");
    /// # Ok(()) }
    /// ```
    pub fn values_where_cut(
        &self,
        indices: &[usize],
        keep: impl Fn(&IndexEntry, &[u8]) -> bool + Sync,
        keys: &pi_session_types::shallow::Keys,
    ) -> Result<Vec<(usize, JsonValue)>, StoreError> {
        self.read_kept(indices, keep, |index, at, bytes| {
            let cut = (self.migration == Migration::None && at.envelope.kind() == "message")
                .then(|| pi_session_types::shallow::entry_with_message_keys(bytes, keys))
                .flatten()
                .map(|(value, _)| value)
                .filter(|value| {
                    let view = pi_session_types::view::EntryRef::new(value);
                    view.is("message") && view.id() == at.envelope.id()
                });
            match cut {
                Some(value) => Ok(value),
                None => self.value_of(index, at, bytes),
            }
        })
    }

    /// [`values_where_cut`](Self::values_where_cut) of the lines that may hold what a reader
    /// looks for: `may_hold` (given an entry's type and what is known of its line's keys, it
    /// says `false` only for a line that surely holds nothing for the reader) is asked first of
    /// the key filter the open kept of each line ([`key_filter`](Self::key_filter)), and a line
    /// it refuses so is not even read; then of the bytes of each line read.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use pi_session_types::needle::{KeyNeedle, LineKeys};
    /// use pi_session_types::shallow::Keys;
    /// static LABEL: KeyNeedle = KeyNeedle::new("label", br#""label""#);
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"label"}}"#, "\n",
    ///     r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"a","label":"one"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// let keys = Keys { entry: &["type", "id", "message"], message: &["role"], blocks: &[] };
    /// let read = session.values_that_may_hold(&[0, 1], |_, line| line.may_hold(&LABEL), &keys)?;
    /// assert_eq!(read.len(), 1);
    /// assert_eq!((read[0].0, &read[0].1["label"]), (1, &serde_json::json!("one")));
    /// # Ok(()) }
    /// ```
    pub fn values_that_may_hold(
        &self,
        indices: &[usize],
        may_hold: impl Fn(&str, pi_session_types::needle::LineKeys<'_>) -> bool + Sync,
        keys: &pi_session_types::shallow::Keys,
    ) -> Result<Vec<(usize, JsonValue)>, StoreError> {
        use pi_session_types::needle::LineKeys;
        let index = self.index();
        let read: Vec<usize> = indices
            .iter()
            .copied()
            .filter(|&at| {
                index.get(at).is_none_or(|entry| {
                    may_hold(
                        entry.envelope.kind(),
                        LineKeys::Filtered(self.key_filter(at)),
                    )
                })
            })
            .collect();
        self.values_where_cut(
            &read,
            |at, line| may_hold(at.envelope.kind(), LineKeys::Written(line)),
            keys,
        )
    }

    /// The lines of `indices` that `keep` accepts, each read by `read` (given its index, its
    /// index entry and its bytes), with their indices, in the order asked: the one walk of
    /// [`values_where`](Self::values_where) and [`values_where_cut`](Self::values_where_cut).
    fn read_kept(
        &self,
        indices: &[usize],
        keep: impl Fn(&IndexEntry, &[u8]) -> bool + Sync,
        read: impl Fn(usize, &IndexEntry, &[u8]) -> Result<JsonValue, StoreError> + Sync,
    ) -> Result<Vec<(usize, JsonValue)>, StoreError> {
        let kept = self.collect_in_file_order(indices, |index, at, bytes| {
            if !keep(at, bytes) {
                return Ok(None);
            }
            read(index, at, bytes).map(|value| Some((index, value)))
        })?;
        Ok(kept.into_iter().flatten().collect())
    }

    /// One line as [`values_for`](Self::values_for) reads it.
    fn value_of(
        &self,
        index: usize,
        at: &IndexEntry,
        bytes: &[u8],
    ) -> Result<JsonValue, StoreError> {
        if let Some(value) = self.value_as_parsed(at, bytes) {
            return Ok(value);
        }
        let entry = self.materialise_bytes(index, at, bytes)?.value;
        serde_json::to_value(&entry).map_err(|e| StoreError::BadEntry {
            path: display_path(self.path()),
            line: at.line,
            detail: format!("the typed entry could not be turned into JSON: {e}"),
        })
    }

    /// The line parsed straight to JSON (repaired as [`parse_line`] repairs it), when the file
    /// needs no migration and the line still holds the entry indexed there; `None` sends it down the typed
    /// path, which migrates it or says what is wrong.
    fn value_as_parsed(&self, at: &IndexEntry, bytes: &[u8]) -> Option<JsonValue> {
        let kind = at.envelope.kind();
        // A migrated file is served exactly as `entry` serves it; a `title` or `session` line
        // may be typed as a slot or header, which is not an entry.
        if self.migration != Migration::None || kind == "title" || kind == "session" {
            return None;
        }
        let parsed = match pi_session_types::value_read::from_slice(bytes) {
            Ok(value) => value,
            Err(_) => serde_json::from_str(&repaired(bytes)?).ok()?,
        };
        let JsonValue::Object(object) = parsed else {
            return None;
        };
        let view = pi_session_types::view::EntryRef::new(&object);
        let same_entry = view.is(kind) && view.id() == at.envelope.id();
        same_entry.then_some(JsonValue::Object(object))
    }

    /// Reads every entry in file order. For large files prefer [`entries_for`](Self::entries_for)
    /// with the indices you need (e.g. one branch).
    pub fn entries(&self) -> Result<Vec<Entry>, StoreError> {
        let all: Vec<usize> = (0..self.len()).collect();
        self.entries_for(&all)
    }

    /// Whether the line of each entry at `indices` (in the order asked) holds one of `needles`
    /// byte for byte: a filter that reads the lines (in file order, through one reused buffer per
    /// worker) but parses and keeps none of them, for a caller that needs a body only when a
    /// key can be in it.
    ///
    /// ```
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"one"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// assert_eq!(session.lines_containing(&[0, 0], &[b"\"one\"".as_slice()]).unwrap(), [true, true]);
    /// assert_eq!(session.lines_containing(&[0], &[b"\"two\"".as_slice(), b"three"]).unwrap(), [false]);
    /// ```
    pub fn lines_containing(
        &self,
        indices: &[usize],
        needles: &[&[u8]],
    ) -> Result<Vec<bool>, StoreError> {
        let finders: Vec<memchr::memmem::Finder<'_>> =
            needles.iter().map(memchr::memmem::Finder::new).collect();
        self.collect_in_file_order(indices, |_, _, bytes| {
            Ok(finders.iter().any(|f| f.find(bytes).is_some()))
        })
    }

    /// Whether the line of each entry at `indices` (in the order asked) may hold the key
    /// `key` (decoded, as a JSON object has it) at any depth: `false` means the entry surely
    /// holds no such key, `true` means it may. Answered from the key filter the open kept for
    /// each line ([`KeyFilter`](pi_session_types::envelope_scan::KeyFilter), a few bits a
    /// line from the one scan it already made): nothing is read again. A line the open's scan
    /// was not sure of, a key written with an escape, an index out of range and every entry of
    /// a migrated file (version 1 or 2: its entries are not its lines) say `true`.
    ///
    /// ```
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi","attachments":[]}}"#, "\n",
    ///     r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"a","label":"attachments"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// assert_eq!(session.may_hold_key(&[0, 1, 0], "attachments"), [true, false, true]);
    /// ```
    pub fn may_hold_key(&self, indices: &[usize], key: &str) -> Vec<bool> {
        // The key's bits worked out once, not at each entry (a model's search asks this of
        // every message of a branch).
        let wanted = pi_session_types::envelope_scan::KeyFilter::wanting(key);
        if self.is_migrated() {
            return vec![true; indices.len()];
        }
        indices
            .iter()
            .map(|&index| self.table.key_filter(index).may_hold_all(wanted))
            .collect()
    }

    /// The key filter the open kept of the line of the entry at `index` (the keys it may hold,
    /// [`may_hold_key`](Self::may_hold_key)): [`KeyFilter::ANY`] for a line the open's scan
    /// was not sure of, an index out of range and every entry of a migrated file.
    ///
    /// [`KeyFilter::ANY`]: pi_session_types::envelope_scan::KeyFilter::ANY
    #[inline]
    pub fn key_filter(&self, index: usize) -> pi_session_types::envelope_scan::KeyFilter {
        if self.is_migrated() {
            return pi_session_types::envelope_scan::KeyFilter::ANY;
        }
        self.table.key_filter(index)
    }

    /// What the open's scan proved of the strings of the line of the entry at `index`, the
    /// bytes [`map_raw`](Self::map_raw) hands out for it: [`Strings::Stringified`] when each
    /// is spelled as `JSON.stringify` spells it and no whitespace lies between the line's
    /// tokens ([`Scanned::stringify_spelled`]), so a check of that spelling can step over
    /// them ([`pi_session_types::json::is_js_canonical_given`]); [`Strings::Unknown`] for a
    /// line the scan was not sure of or found spelled otherwise, an index out of range and
    /// every entry of a migrated file. A file is append-only: a line the open scanned is not
    /// expected to change under it.
    ///
    /// ```
    /// use pi_session_types::json::Strings;
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"content":"a\nb"}}"#, "\n",
    ///     r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"content":"\u00e9"}}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// assert_eq!(session.strings(0), Strings::Stringified);
    /// assert_eq!(session.strings(1), Strings::Unknown); // `JSON.stringify` writes `é`
    /// assert_eq!(session.strings(2), Strings::Unknown); // no such entry
    /// ```
    ///
    /// [`Strings::Stringified`]: pi_session_types::json::Strings::Stringified
    /// [`Strings::Unknown`]: pi_session_types::json::Strings::Unknown
    /// [`Scanned::stringify_spelled`]: pi_session_types::envelope_scan::Scanned::stringify_spelled
    #[inline]
    pub fn strings(&self, index: usize) -> pi_session_types::json::Strings {
        if self.is_migrated() {
            return pi_session_types::json::Strings::Unknown;
        }
        self.table.strings(index)
    }

    /// Where the open's scan found the value of the top-level `message` of the line of the entry
    /// at `index`, and its id's text, as offsets into the bytes [`map_raw`](Self::map_raw)
    /// hands out for it: when the scan was sure of the line and found it laid out as pi and omp
    /// write a `message` entry ([`Scanned::message_at`]). `None` otherwise, for an index out of
    /// range and for every entry of a migrated file. A reader tells that the line it reads is
    /// still the one scanned with [`MessageAt::holds`].
    ///
    /// [`Scanned::message_at`]: pi_session_types::envelope_scan::Scanned::message_at
    /// [`MessageAt::holds`]: pi_session_types::envelope_scan::MessageAt::holds
    ///
    /// ```
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"}}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// let line = text.lines().nth(1).unwrap();
    /// let at = session.message_at(0).unwrap();
    /// assert_eq!(&line[at.message()..], r#"{"role":"user"}}"#);
    /// assert!(at.holds(line.as_bytes(), "a"));
    /// assert_eq!(session.message_at(1), None); // no such entry
    /// ```
    #[inline]
    pub fn message_at(&self, index: usize) -> Option<pi_session_types::envelope_scan::MessageAt> {
        if self.is_migrated() {
            return None;
        }
        self.table.message_at(index)
    }

    /// Hands the exact bytes of the entry at each of `indices` (any order, repeats allowed),
    /// with its index and index entry, to `convert`, and returns what it gives in the order
    /// asked: one pass over the lines in file order (on a few threads for a large request), as
    /// [`values_for`](Self::values_for) reads them, parsing nothing. For a caller that can use
    /// a line as written, e.g. copy it into a page.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"one"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// assert_eq!(session.map_raw(&[0], |_, _, raw| raw.len())?, [text.lines().nth(1).unwrap().len()]);
    /// # Ok(()) }
    /// ```
    pub fn map_raw<T: Send>(
        &self,
        indices: &[usize],
        convert: impl Fn(usize, &IndexEntry, &[u8]) -> T + Sync,
    ) -> Result<Vec<T>, StoreError> {
        self.collect_in_file_order(indices, |index, at, bytes| Ok(convert(index, at, bytes)))
    }

    /// [`map_raw`](Self::map_raw), each line handed out with the shared bytes it lies in, when
    /// it lies in some: the file the session holds in memory ([`Self::held_bytes`]), or, for a
    /// file re-read by byte range, the window of lines it was read in, when the lines asked for
    /// fill at least half of it. A caller that keeps a part of a line (a message it sends as
    /// written) may keep its range of those bytes instead of a copy; a line handed out with
    /// `None` (read alone, or in a window mostly of lines not asked for) is to be copied. The
    /// windows come from a few buffers a thread, used again once every range kept of one is
    /// dropped: the ranges kept are meant to live as long as the caller's answer is being made.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"one"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// let held = session.map_raw_held(&[0], |_, _, raw, held| {
    ///     held.is_some_and(|bytes| bytes.as_ptr_range().contains(&raw.as_ptr()))
    /// })?;
    /// assert_eq!(held, [true]);
    /// # Ok(()) }
    /// ```
    pub fn map_raw_held<T: Send>(
        &self,
        indices: &[usize],
        convert: impl Fn(usize, &IndexEntry, &[u8], Option<&SharedBytes>) -> T + Sync,
    ) -> Result<Vec<T>, StoreError> {
        self.collect_in_file_order_held(indices, true, |index, at, bytes, held| {
            Ok(convert(index, at, bytes, held))
        })
    }

    /// The whole file as this session holds it in memory (a small file, or bytes opened with
    /// [`crate::open_bytes`]); `None` for a file re-read by byte range. The lines
    /// [`Self::map_raw`] hands out of a file held so lie in these bytes: a reader that keeps a
    /// line's part may keep its range of them instead of a copy.
    pub fn held_bytes(&self) -> Option<&SharedBytes> {
        match &self.source {
            Source::Memory { bytes, .. } => Some(bytes),
            Source::File(_) => None,
        }
    }

    /// The exact bytes of the entry at `index` as they are in the file.
    pub fn raw(&self, index: usize) -> Result<Vec<u8>, StoreError> {
        let at = self.index_entry(index)?;
        self.range_reader().read(at).map(Cow::into_owned)
    }

    /// The most threads a batch read of this file reads on
    /// ([`OpenOptions::threads`](crate::OpenOptions::threads) as the open resolved it; left
    /// at 0 for a file too small to be read on threads, the machine's count, read from the
    /// cgroup files when asked: a caller that reads on threads of its own asks it only for a
    /// large read).
    ///
    /// ```
    /// let (session, _) = pi_session_store::open_bytes(Vec::new());
    /// assert!(session.read_threads() >= 1);
    /// ```
    pub fn read_threads(&self) -> usize {
        match self.read_threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_READ_THREADS)),
            chosen => chosen,
        }
    }

    /// Sets the most threads a batch read of this file reads on (as
    /// [`OpenOptions::threads`](crate::OpenOptions::threads) sets it at the open; 0: the
    /// machine's count): 1 for a copy read by a caller that reads parts on threads of its own,
    /// so that each part is read on the thread that asks for it.
    ///
    /// ```
    /// let (mut session, _) = pi_session_store::open_bytes(Vec::new());
    /// session.set_read_threads(1);
    /// assert_eq!(session.read_threads(), 1);
    /// ```
    pub fn set_read_threads(&mut self, threads: usize) {
        self.read_threads = threads;
    }

    /// Keeps the file open for this session's reads ([`map_raw`](Self::map_raw), [`entry`](Self::entry)
    /// and the like), shared by its clones, until they are all dropped: for a caller that
    /// reads many batches (a context read a part at a time opened the file for each of its
    /// parts). Otherwise each call opens the file and no handle is kept between calls. A
    /// session held in memory has nothing to keep, and neither does a platform without
    /// positioned reads (neither Unix nor Windows: its threads would share a file position).
    /// An error (the file is gone) keeps nothing: the reads then open it each and say why
    /// they cannot.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let (mut session, _) = pi_session_store::open_bytes(Vec::new());
    /// session.keep_open()?;
    /// # Ok(()) }
    /// ```
    pub fn keep_open(&mut self) -> Result<(), StoreError> {
        if !cfg!(any(unix, windows)) {
            return Ok(());
        }
        if let (Source::File(path), None) = (&self.source, &self.kept_file) {
            let file = File::open(path).map_err(|e| StoreError::io("could not open", path, e))?;
            self.kept_file = Some(Arc::new(file));
        }
        Ok(())
    }

    fn index_entry(&self, index: usize) -> Result<&IndexEntry, StoreError> {
        self.index()
            .get(index)
            .ok_or_else(|| StoreError::NoSuchEntry {
                index,
                len: self.len(),
            })
    }

    fn range_reader(&self) -> RangeReader<'_> {
        RangeReader {
            source: &self.source,
            kept: self.kept_file.as_deref(),
            file: None,
        }
    }

    /// Reads the lines of `indices` in file order (each line once per request, through one
    /// reused buffer per worker), turns each into a `T` with `convert`, and returns them in the
    /// order asked. Every index is checked before anything is read. A large request is split
    /// into runs of consecutive lines of about equal size, converted on a few threads; an error
    /// is the one the first failing line in file order gives, as on one thread.
    fn collect_in_file_order<T: Send>(
        &self,
        indices: &[usize],
        convert: impl Fn(usize, &IndexEntry, &[u8]) -> Result<T, StoreError> + Sync,
    ) -> Result<Vec<T>, StoreError> {
        self.collect_in_file_order_held(indices, false, |index, at, bytes, _| {
            convert(index, at, bytes)
        })
    }

    /// [`Self::collect_in_file_order`], each line handed out with the shared bytes it lies in
    /// when `shared` asks for them ([`Self::map_raw_held`]).
    fn collect_in_file_order_held<T: Send>(
        &self,
        indices: &[usize],
        shared: bool,
        convert: impl Fn(usize, &IndexEntry, &[u8], Option<&SharedBytes>) -> Result<T, StoreError>
        + Sync,
    ) -> Result<Vec<T>, StoreError> {
        for &index in indices {
            self.index_entry(index)?;
        }
        let mut order: Vec<usize> = (0..indices.len()).collect();
        let sorted = indices.is_sorted();
        if !sorted {
            order.sort_by_key(|&slot| indices[slot]);
        }
        let runs = self.runs_for_threads(indices, &order);
        let converted: Vec<Result<Vec<T>, StoreError>> = if runs.len() <= 1 {
            vec![self.convert_run(indices, &order, shared, &convert)]
        } else {
            // The first run is converted on this thread, the others on threads started for
            // them, off this thread's core.
            crate::scoped::map_here_and_off_core(&runs, |run| {
                self.convert_run(indices, run, shared, &convert)
            })
        };
        if sorted {
            // The runs in the order asked: their values one after the other.
            let mut runs = converted.into_iter();
            let mut values = runs.next().transpose()?.unwrap_or_default();
            for run in runs {
                values.append(&mut run?);
            }
            return Ok(values);
        }
        let mut values = Vec::with_capacity(indices.len());
        let mut slots: Vec<Option<T>> = Vec::new();
        slots.resize_with(indices.len(), || None);
        for (run, values) in runs.iter().zip(converted) {
            for (&slot, value) in run.iter().zip(values?) {
                slots[slot] = Some(value);
            }
        }
        values.extend(slots.into_iter().flatten());
        Ok(values)
    }

    /// `order` (slots of `indices`, in file order) cut into one run per worker thread: a single
    /// run for small requests, else up to [`MAX_READ_THREADS`] runs of about equal byte size.
    fn runs_for_threads<'o>(&self, indices: &[usize], order: &'o [usize]) -> Vec<&'o [usize]> {
        let bytes_of = |slot: &usize| self.index()[indices[*slot]].byte_len;
        let total: u64 = order.iter().map(bytes_of).sum();
        if total < PARALLEL_READ_MIN_BYTES {
            return vec![order];
        }
        // Asked only for a large request: the machine's count is read from the cgroup files.
        let threads = self.read_threads();
        if threads <= 1 {
            return vec![order];
        }
        let share = total.div_ceil(threads as u64);
        let mut runs = Vec::with_capacity(threads);
        let (mut start, mut filled) = (0, 0);
        for (at, slot) in order.iter().enumerate() {
            filled += bytes_of(slot);
            if filled >= share && runs.len() + 1 < threads {
                runs.push(&order[start..=at]);
                (start, filled) = (at + 1, 0);
            }
        }
        if start < order.len() {
            runs.push(&order[start..]);
        }
        runs
    }

    /// Converts the lines of one run (slots of `indices`, in file order) on this thread: borrowed
    /// from a session held in memory, else read in windows ([`read_windows`]).
    fn convert_run<T>(
        &self,
        indices: &[usize],
        run: &[usize],
        shared: bool,
        convert: &impl Fn(usize, &IndexEntry, &[u8], Option<&SharedBytes>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut values = Vec::with_capacity(run.len());
        let mut lines = Vec::with_capacity(run.len());
        for &slot in run {
            let index = indices[slot];
            lines.push((index, self.index_entry(index)?));
        }
        let path = match &self.source {
            Source::Memory { bytes, .. } => {
                let held = shared.then_some(bytes);
                let mut reader = self.range_reader();
                for (index, at) in lines {
                    values.push(convert(index, at, &reader.read(at)?, held)?);
                }
                return Ok(values);
            }
            Source::File(path) => path,
        };
        let kept = self.kept_file.as_deref();
        let mut opened = None;
        read_windows(
            &lines,
            shared,
            |at, into| {
                let file = kept_or_open(kept, &mut opened, path)?;
                crate::framing::read_into(into, |rest, before| {
                    read_at(file, rest, at.saturating_add(before as u64))
                })
                .map_err(|e| StoreError::io("could not read", path, e))
            },
            |(index, at), bytes, held| match bytes {
                Some(bytes) => {
                    values.push(convert(*index, at, bytes, held)?);
                    Ok(())
                }
                None => Err(StoreError::Changed {
                    path: path.clone(),
                    line: at.line,
                }),
            },
        )?;
        Ok(values)
    }

    fn materialise(
        &self,
        index: usize,
        reader: &mut RangeReader<'_>,
    ) -> Result<Parsed<Entry>, StoreError> {
        let at = self.index_entry(index)?;
        let bytes = reader.read(at)?;
        self.materialise_bytes(index, at, &bytes)
    }

    /// Types the line `bytes` of the entry at `index` (whose index entry is `at`), checks it is
    /// still the entry indexed there, and migrates it.
    fn materialise_bytes(
        &self,
        index: usize,
        at: &IndexEntry,
        bytes: &[u8],
    ) -> Result<Parsed<Entry>, StoreError> {
        let bad = |detail: String| StoreError::BadEntry {
            path: display_path(self.path()),
            line: at.line,
            detail,
        };
        let parsed = parse_line(bytes).map_err(|e| bad(e.to_string()))?;
        let changed = || StoreError::Changed {
            path: display_path(self.path()),
            line: at.line,
        };
        let ParsedLine::Entry(entry) = parsed.value else {
            return Err(changed());
        };
        let same_id = self.migration.is_v1() || entry.id() == at.envelope.id();
        if entry.kind() != at.envelope.kind() || !same_id {
            return Err(changed());
        }
        let entry = match &self.migration {
            Migration::None => entry,
            Migration::FromV2 if entry.kind() != "message" => entry,
            Migration::FromV2 => migrate_entry(entry, patch_v2).map_err(bad)?,
            Migration::FromV1 { ordinals } => migrate_entry(entry, |object| {
                let id = at.envelope.id().unwrap_or_default();
                patch_v1(object, id, at.envelope.parent_id(), &|k| {
                    self.v1_target(ordinals, index, k)
                });
                patch_v2(object);
            })
            .map_err(bad)?,
        };
        Ok(Parsed {
            value: entry,
            warnings: parsed.warnings,
        })
    }

    /// The id pi's v1 migration gives `firstKeptEntryId` for index `k` of its parsed array, seen
    /// from the entry at `current`: an earlier (or the same) entry has its migrated id by then; a
    /// later entry has no id yet in a v1 file, and the header has none.
    fn v1_target(&self, ordinals: &[Ordinal], current: usize, k: u64) -> Option<String> {
        let ordinal = ordinals.get(usize::try_from(k).ok()?)?;
        match ordinal {
            Ordinal::Entry(target) if *target <= current => {
                self.index()[*target].envelope.id().map(str::to_owned)
            }
            _ => None,
        }
    }
}

/// Serialises a typed entry to a JSON object, lets `patch` edit it, and types it again.
fn migrate_entry(
    entry: Entry,
    patch: impl FnOnce(&mut pi_session_types::JsonMap),
) -> Result<Entry, String> {
    let value =
        serde_json::to_value(&entry).map_err(|e| format!("could not migrate the entry: {e}"))?;
    let JsonValue::Object(mut object) = value else {
        return Err("the entry did not serialise to a JSON object".to_owned());
    };
    patch(&mut object);
    Ok(Entry::from_map(object))
}

/// Batch reads smaller than this (in bytes of lines) are converted on the calling thread.
const PARALLEL_READ_MIN_BYTES: u64 = 1 << 20;

/// At most this many threads convert one batch read (as many as the machine has, up to this).
const MAX_READ_THREADS: usize = 4;

/// The most bytes one read of [`read_windows`] takes in (a longer line is read alone): large
/// enough that consecutive lines of a branch come in a few big reads, small enough to be
/// nothing next to the entries read.
const WINDOW_BYTES: u64 = 256 * 1024;

/// The largest gap between two lines that [`read_windows`] reads through rather than reading
/// the two apart: a read costs about as much as copying this many bytes more.
const WINDOW_GAP_BYTES: u64 = 16 * 1024;

/// Reads the lines `lines` (in file order) in windows and hands each line's bytes to `line`
/// (`None`: the file ended before the line did, it changed since it was opened). A window is
/// one read (`read(offset, into)`: fills `into` from `offset`, less only at the end of the
/// file) of consecutive lines up to [`WINDOW_BYTES`], where the gap between two of them is at
/// most [`WINDOW_GAP_BYTES`]: lines far apart are read apart, each exactly, never the 256 KiB
/// around them. One buffer serves every window: the thread's, kept between calls
/// ([`WINDOW_BUFFER`]). With `shared`, a window whose lines fill at least half of it is read
/// into a buffer of its own, shared ([`SharedWindows`]), and its lines are handed out with it.
fn read_windows<L>(
    lines: &[(L, &IndexEntry)],
    shared: bool,
    read: impl FnMut(u64, &mut [u8]) -> Result<usize, StoreError>,
    line: impl FnMut(&(L, &IndexEntry), Option<&[u8]>, Option<&SharedBytes>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut buffer = WINDOW_BUFFER.with(Cell::take);
    let read = read_windows_into(&mut buffer, lines, shared, read, line);
    // Kept for the thread's next call unless a window of long lines grew it past the usual.
    if buffer.len() <= KEPT_WINDOW_BUFFER {
        WINDOW_BUFFER.with(|kept| kept.set(buffer));
    }
    read
}

thread_local! {
    /// The buffer of [`read_windows`], kept between the calls of a thread: a branch read a
    /// part at a time calls it once a part, and a new buffer would be zeroed every time (the
    /// 100k chain's `context`: ~28M instructions of `memset`). What it holds past a call is
    /// never read: each window is read over it before its lines are handed out.
    static WINDOW_BUFFER: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The largest [`WINDOW_BUFFER`] kept between calls: a window of [`WINDOW_BYTES`].
const KEPT_WINDOW_BUFFER: usize = WINDOW_BYTES as usize + CACHE_LINE;

/// The shared buffers [`read_windows`] reads windows into (`shared`), a few kept by each
/// thread between its windows and used again once nobody else holds one (every line's range
/// kept of it dropped): a window of fresh memory is pages to fault in and zero (a 256 KiB
/// window: 64 of them), and the lines of a part are most often dropped soon after they are
/// read (a context's part once it is sent).
struct SharedWindows;

thread_local! {
    /// The buffers [`SharedWindows`] keeps on this thread.
    static SHARED_WINDOWS: Cell<Vec<SharedBytes>> = const { Cell::new(Vec::new()) };
}

impl SharedWindows {
    /// The most buffers a thread keeps.
    const KEPT: usize = 6;

    /// A buffer of at least `room` bytes (what it held before is left in it: read over).
    fn take(room: usize) -> Vec<u8> {
        let mut kept = SHARED_WINDOWS.with(Cell::take);
        let free = kept
            .iter()
            .position(|bytes| Arc::strong_count(bytes) == 1 && Arc::weak_count(bytes) == 0);
        let buffer = free.and_then(|at| Arc::try_unwrap(kept.swap_remove(at)).ok());
        SHARED_WINDOWS.with(|slot| slot.set(kept));
        let mut buffer = buffer.unwrap_or_default();
        if buffer.len() < room {
            buffer.resize(room, 0);
        }
        buffer
    }

    /// `buffer` shared, kept for this thread's later windows when it is of the usual size and
    /// the thread keeps fewer than [`Self::KEPT`].
    fn share(buffer: Vec<u8>) -> SharedBytes {
        let shared = Arc::new(buffer);
        if shared.len() <= KEPT_WINDOW_BUFFER {
            let mut kept = SHARED_WINDOWS.with(Cell::take);
            if kept.len() < Self::KEPT {
                kept.push(SharedBytes::clone(&shared));
            }
            SHARED_WINDOWS.with(|slot| slot.set(kept));
        }
        shared
    }
}

/// [`read_windows`] through `buffer`.
fn read_windows_into<L>(
    buffer: &mut Vec<u8>,
    lines: &[(L, &IndexEntry)],
    shared: bool,
    mut read: impl FnMut(u64, &mut [u8]) -> Result<usize, StoreError>,
    mut line: impl FnMut(
        &(L, &IndexEntry),
        Option<&[u8]>,
        Option<&SharedBytes>,
    ) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let end_of = |at: &IndexEntry| at.byte_offset.saturating_add(at.byte_len);
    let mut first = 0;
    while let Some(&(_, head)) = lines.get(first) {
        let start = head.byte_offset;
        let mut stop = end_of(head);
        let mut last = first + 1;
        while let Some(&(_, next)) = lines.get(last) {
            let fits = next.byte_offset >= start
                && next.byte_offset <= stop.saturating_add(WINDOW_GAP_BYTES)
                && end_of(next) - start <= WINDOW_BYTES;
            if !fits {
                break;
            }
            stop = stop.max(end_of(next));
            last += 1;
        }
        let len = usize::try_from(stop - start).unwrap_or(usize::MAX);
        let room = len.saturating_add(CACHE_LINE);
        // Shared when asked and the lines asked for fill at least half of the window.
        let dense = || {
            let wanted: u64 = lines[first..last].iter().map(|(_, at)| at.byte_len).sum();
            wanted.saturating_mul(2) >= stop - start
        };
        let mut own = (shared && dense()).then(|| SharedWindows::take(room));
        let into = match &mut own {
            Some(own) => own,
            None => {
                if buffer.len() < room {
                    buffer.resize(room, 0);
                }
                &mut *buffer
            }
        };
        // Read where each byte sits in a cache line as in the page cache: the kernel's copy
        // is several times faster so.
        let lead = aligned_lead(into, start);
        let filled = read(start, &mut into[lead..lead + len])?;
        let own = own.map(SharedWindows::share);
        let window = match &own {
            Some(own) => &own[lead..lead + filled],
            None => &buffer[lead..lead + filled],
        };
        for entry in &lines[first..last] {
            let (_, at) = entry;
            let from = usize::try_from(at.byte_offset - start).unwrap_or(usize::MAX);
            let to = from.saturating_add(usize::try_from(at.byte_len).unwrap_or(usize::MAX));
            line(entry, window.get(from..to), own.as_ref())?;
        }
        first = last;
    }
    Ok(())
}

/// The file a read goes through: the one the session keeps open (`kept`,
/// [`SessionFile::keep_open`]), else the one in `slot`, opened from `path` the first time it is
/// asked for.
fn kept_or_open<'f>(
    kept: Option<&'f File>,
    slot: &'f mut Option<File>,
    path: &Path,
) -> Result<&'f File, StoreError> {
    if let Some(file) = kept {
        return Ok(file);
    }
    match slot {
        Some(file) => Ok(file),
        slot => {
            Ok(slot
                .insert(File::open(path).map_err(|e| StoreError::io("could not open", path, e))?))
        }
    }
}

/// Fills what it can of `into` from byte `at` of `file` in one call (fewer bytes only at the
/// end of the file): by position on Unix and Windows (a handle the threads share is read
/// where each asks), else by seeking first ([`SessionFile::keep_open`] keeps no handle there).
fn read_at(file: &File, into: &mut [u8], at: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_at(into, at)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        file.seek_read(into, at)
    }
    #[cfg(not(any(unix, windows)))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(at))?;
        file.read(into)
    }
}

/// Reads byte ranges from a session's source: through the file the session keeps open
/// ([`SessionFile::keep_open`]), else opening it at most once per reader.
struct RangeReader<'a> {
    source: &'a Source,
    kept: Option<&'a File>,
    file: Option<File>,
}

impl<'a> RangeReader<'a> {
    /// The bytes of `at`'s range; a file now too short for it gives [`StoreError::Changed`].
    fn read(&mut self, at: &IndexEntry) -> Result<Cow<'a, [u8]>, StoreError> {
        let len = usize::try_from(at.byte_len).unwrap_or(usize::MAX);
        match self.source {
            Source::Memory { bytes, path } => {
                let start = usize::try_from(at.byte_offset).unwrap_or(usize::MAX);
                let end = start.saturating_add(len);
                bytes
                    .get(start..end)
                    .map(Cow::Borrowed)
                    .ok_or_else(|| StoreError::Changed {
                        path: display_path(path.as_deref()),
                        line: at.line,
                    })
            }
            Source::File(path) => {
                let file = kept_or_open(self.kept, &mut self.file, path)?;
                let mut buf = vec![0; len];
                let filled = crate::framing::read_into(&mut buf, |rest, before| {
                    read_at(file, rest, at.byte_offset.saturating_add(before as u64))
                })
                .map_err(|e| StoreError::io("could not read", path, e))?;
                if filled < len {
                    return Err(StoreError::Changed {
                        path: path.clone(),
                        line: at.line,
                    });
                }
                Ok(Cow::Owned(buf))
            }
        }
    }
}

/// The text [`parse_line`] reads a line as when serde_json rejects its bytes: invalid UTF-8
/// replaced by U+FFFD, then lone surrogate escapes rewritten to their carriers' escaped pairs
/// (`pi_session_types::line::replace_lone_surrogate_escapes`). `None` when neither
/// applies (the line is damaged in some other way).
fn repaired(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let fixed_utf8 = matches!(text, Cow::Owned(_));
    match pi_session_types::line::replace_lone_surrogate_escapes(&text) {
        Cow::Owned(rewritten) => Some(rewritten),
        Cow::Borrowed(_) if fixed_utf8 => Some(text.into_owned()),
        Cow::Borrowed(_) => None,
    }
}

#[cfg(test)]
mod window_tests {
    use super::{IndexEntry, IndexEnvelope, WINDOW_BYTES, WINDOW_GAP_BYTES, read_windows};
    use crate::error::StoreError;
    use crate::framing::CACHE_LINE;

    fn line(number: u64, byte_offset: u64, byte_len: u64) -> IndexEntry {
        IndexEntry {
            line: number,
            byte_offset,
            byte_len,
            envelope: IndexEnvelope::new("label", Some("a"), None, None),
        }
    }

    /// What each line got: its bytes, or `None` (past the end of the file).
    type Got = Vec<Option<Vec<u8>>>;

    /// The reads `read_windows` makes over `file` for `lines` (offset, length), and the bytes
    /// each line got.
    fn windows(file: &[u8], lines: &[IndexEntry]) -> (Vec<(u64, usize)>, Got) {
        let lines: Vec<(usize, &IndexEntry)> = lines.iter().enumerate().collect();
        let (mut reads, mut got) = (Vec::new(), Vec::new());
        read_windows(
            &lines,
            false,
            |at, into| {
                reads.push((at, into.len()));
                assert_eq!(
                    into.as_ptr().addr() % CACHE_LINE,
                    at as usize % CACHE_LINE,
                    "a read lands where its bytes sit in a cache line ({at})"
                );
                let rest = file.get(at as usize..).unwrap_or_default();
                let n = rest.len().min(into.len());
                into[..n].copy_from_slice(&rest[..n]);
                Ok(n)
            },
            |_, bytes, _| {
                got.push(bytes.map(<[u8]>::to_vec));
                Ok::<(), StoreError>(())
            },
        )
        .unwrap();
        (reads, got)
    }

    #[test]
    fn lines_close_together_come_in_one_read_and_lines_far_apart_each_in_their_own() {
        let file: Vec<u8> = (0..(3 * WINDOW_BYTES) as usize)
            .map(|at| (at % 251) as u8)
            .collect();
        let gap = WINDOW_GAP_BYTES;
        let lines = [
            line(1, 10, 5),
            line(2, 20, 5),
            // Within the gap of the one before: the same read.
            line(3, 25 + gap, 100),
            // Further: a read of its own, exactly its bytes.
            line(4, 126 + 2 * gap, 7),
            // A line longer than a window: alone.
            line(5, 200 + 2 * gap, WINDOW_BYTES + 1),
            line(6, 201 + 2 * gap + WINDOW_BYTES, 3),
        ];
        let (reads, got) = windows(&file, &lines);
        assert_eq!(
            reads,
            [
                (10, (gap + 115) as usize),
                (126 + 2 * gap, 7),
                (200 + 2 * gap, (WINDOW_BYTES + 1) as usize),
                (201 + 2 * gap + WINDOW_BYTES, 3),
            ]
        );
        for (at, bytes) in lines.iter().zip(got) {
            let range = at.byte_offset as usize..(at.byte_offset + at.byte_len) as usize;
            assert_eq!(bytes.as_deref(), Some(&file[range]));
        }
    }

    #[test]
    fn a_buffer_kept_from_a_longer_read_hands_out_nothing_of_it() {
        // The thread's buffer keeps the first read's bytes; the second read, of a shorter
        // file, fills less of it, and a line past that end gets nothing of what is left.
        let (_, got) = windows(&[b'x'; 2000], &[line(1, 0, 1500)]);
        assert_eq!(got, [Some(vec![b'x'; 1500])]);
        let (_, got) = windows(&[b'y'; 500], &[line(1, 0, 400), line(2, 400, 300)]);
        assert_eq!(got, [Some(vec![b'y'; 400]), None]);
    }

    #[test]
    fn a_window_stops_at_its_size_and_lines_past_the_end_of_the_file_get_nothing() {
        let file = vec![b'x'; 1000];
        let lines: Vec<IndexEntry> = (0..6).map(|at| line(at + 1, at * 300, 200)).collect();
        let (reads, got) = windows(&file, &lines);
        assert_eq!(reads, [(0, 1700)]);
        let sizes: Vec<Option<usize>> = got
            .iter()
            .map(|bytes| bytes.as_ref().map(Vec::len))
            .collect();
        assert_eq!(sizes, [Some(200), Some(200), Some(200), None, None, None]);
        let many: Vec<IndexEntry> = (0..3)
            .map(|at| line(at + 1, at * WINDOW_BYTES / 2, WINDOW_BYTES / 2))
            .collect();
        let (reads, _) = windows(&vec![0; 2 * WINDOW_BYTES as usize], &many);
        assert_eq!(
            reads,
            [
                (0, WINDOW_BYTES as usize),
                (WINDOW_BYTES, (WINDOW_BYTES / 2) as usize)
            ]
        );
    }

    #[test]
    fn a_window_mostly_of_the_lines_asked_for_is_handed_out_shared() {
        let file: Vec<u8> = (0..(2 * WINDOW_BYTES) as usize)
            .map(|at| (at % 251) as u8)
            .collect();
        // Back to back: the window is theirs. Two short lines a gap apart: one window, mostly
        // of bytes nobody asked for, read into the thread's buffer and copied by the caller.
        let dense = [line(1, 0, 100), line(2, 100, 100)];
        let sparse = [line(3, 1000, 10), line(4, 1000 + WINDOW_GAP_BYTES, 10)];
        for (lines, shared) in [(&dense, true), (&sparse, false)] {
            let lines: Vec<(usize, &IndexEntry)> = lines.iter().enumerate().collect();
            let mut held = Vec::new();
            read_windows(
                &lines,
                true,
                |at, into| {
                    let rest = file.get(at as usize..).unwrap_or_default();
                    let n = rest.len().min(into.len());
                    into[..n].copy_from_slice(&rest[..n]);
                    Ok(n)
                },
                |(_, at), bytes, shared| {
                    let bytes = bytes.unwrap();
                    let start = at.byte_offset as usize;
                    assert_eq!(bytes, &file[start..start + at.byte_len as usize]);
                    held.push(shared.map(|all| all.as_ptr_range().contains(&bytes.as_ptr())));
                    Ok::<(), StoreError>(())
                },
            )
            .unwrap();
            assert_eq!(held, [shared.then_some(true); 2], "{lines:?}");
        }
    }
}
