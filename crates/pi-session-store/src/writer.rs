//! [`SessionWriter`]: appends entries to a session, rho's way (nothing is written until the first
//! append), one line per entry, serialised exactly as JavaScript's `JSON.stringify` would.

use crate::diagnostic::Diagnostic;
use crate::entry_table::EntryTable;
use crate::error::StoreError;
use crate::keyed::{KeyedTarget, TitleMeta as KeyedTitle};
use crate::lock::WriterLock;
use crate::open::open_bytes;
use crate::paths::session_file_name;
use crate::publish_lock::{Claims, PublishLock};
use crate::session_file::SessionFile;
use crate::vfs::{FileIdentity, RealFs, Vfs, VfsFile};
use pi_session_types::{
    Entry, IsoTimestamp, JsonMap, JsonNumber, ParsedLine, SessionHeader, TitleSlot, TitleSource,
    parse_envelope, parse_line, to_js_vec,
};
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How hard each append works to put the line on stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Lines collect in a buffer and reach the file on [`SessionWriter::flush`], when the buffer
    /// fills, or on drop. Fastest; a write error (or a [`StoreError::Conflict`] or
    /// [`StoreError::PublishLockTimeout`]) may surface on a later call, and entries appended
    /// since the last flush are lost if the process dies.
    Buffered,
    /// Each append hands its line to the operating system before returning (what pi and omp
    /// do): safe against a crash of this process, not against power loss.
    #[default]
    Flush,
    /// Each append also fsyncs the file, and creating a file fsyncs its directory: safe
    /// against power loss, and much slower.
    Fsync,
}

/// Choices for a [`SessionWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriterOptions {
    /// See [`Durability`]; default [`Durability::Flush`].
    pub durability: Durability,
    /// Write omp's 256-byte title slot as line 1 of a new file and keep it current (rewritten in
    /// place) when the title changes. Off by default: pi cannot read a file that starts with a
    /// slot; omp reads both.
    pub title_slot: bool,
    /// How long a write waits for a busy session (as SQLite's `busy_timeout`); `None` (the
    /// default) fails at once with [`StoreError::Locked`].
    ///
    /// With a timeout, the writer waits up to it for another writer's lock (and for omp's
    /// publish lock, beyond omp's own 500 ms), and a file that others *appended* to since this
    /// writer last looked is caught up on instead of failing with [`StoreError::Conflict`]:
    /// only the bytes appended since are read (see [`SessionWriter::catch_up`]). A file that
    /// was replaced (another inode, as omp's rewrites do) or shrank still gives `Conflict`:
    /// open it again. [`Durability::Buffered`] lines already collected are not rebuilt, so
    /// there a foreign append still gives `Conflict`.
    pub busy_timeout: Option<Duration>,
}

/// Where a title change went (see [`SessionWriter::set_title`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TitleWrite {
    /// The file's title slot was rewritten in place.
    Slot,
    /// Nothing is on disk yet; the title will be in the header (and slot) the first append writes.
    AtCreation,
    /// The file has no slot, so only the in-memory header changed (the store never rewrites a
    /// header line); record the change with an entry (omp: `title_change`, pi: `session_info`).
    InMemoryOnly,
}

/// Where a writer gets the time and fresh entry ids. The default, [`SystemStamps`], uses the
/// clock and random UUIDs; tests and golden files plug in a deterministic source with
/// [`SessionWriter::with_stamps`].
///
/// ```
/// use pi_session_store::{SessionWriter, Stamps, new_header_with};
/// use pi_session_types::IsoTimestamp;
///
/// #[derive(Debug, Default)]
/// struct Counter(u32);
/// impl Stamps for Counter {
///     fn now(&mut self) -> IsoTimestamp {
///         IsoTimestamp::new("2026-01-01T00:00:00.000Z")
///     }
///     fn entry_id(&mut self) -> String {
///         self.0 += 1;
///         format!("{:08x}", self.0)
///     }
/// }
///
/// let header = new_header_with("/w", "session-1", "2026-01-01T00:00:00.000Z");
/// let mut writer = SessionWriter::in_memory(header).with_stamps(Counter::default());
/// let label = pi_session_types::Entry::from_map(serde_json::from_str(r#"{"type":"label"}"#).unwrap());
/// let written = writer.append(label).unwrap();
/// assert_eq!((written.id(), written.timestamp()), (Some("00000001"), Some("2026-01-01T00:00:00.000Z")));
/// ```
pub trait Stamps: Send + std::fmt::Debug {
    /// The current time: entry `timestamp`s and the title slot's `updatedAt`.
    fn now(&mut self) -> IsoTimestamp;
    /// A candidate entry id; the writer asks again (up to 100 times) while the session already
    /// has it, then falls back to a full random UUID as pi does.
    fn entry_id(&mut self) -> String;
}

/// The clock and random ids: 8 lowercase hex digits of a UUIDv4, as pi and omp draw them.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemStamps;

impl Stamps for SystemStamps {
    fn now(&mut self) -> IsoTimestamp {
        IsoTimestamp::now()
    }

    fn entry_id(&mut self) -> String {
        let mut id = uuid::Uuid::new_v4().simple().to_string();
        id.truncate(8);
        id
    }
}

/// A header for a new session with the given id and creation time (and `cwd`), version 3.
pub fn new_header_with(
    cwd: impl Into<String>,
    id: impl Into<String>,
    timestamp: impl Into<String>,
) -> SessionHeader {
    SessionHeader {
        version: Some(JsonNumber::from(3u8)),
        id: id.into(),
        timestamp: Some(IsoTimestamp::new(timestamp.into())),
        cwd: Some(cwd.into()),
        ..SessionHeader::default()
    }
}

/// A header for a new session: version 3, a fresh UUIDv7 id, the current time, and `cwd`.
///
/// ```
/// let header = pi_session_store::new_header("/home/alice/proj");
/// assert_eq!(header.id.len(), 36);
/// assert_eq!(header.version_or_1(), 3);
/// ```
pub fn new_header(cwd: impl Into<String>) -> SessionHeader {
    new_header_with(
        cwd,
        uuid::Uuid::now_v7().to_string(),
        IsoTimestamp::now().as_str(),
    )
}

/// Appends entries to one session (a file, or memory only), assigning ids, parents and times.
///
/// * Nothing is written until the first [`append`](Self::append), which creates the directories
///   and the file (never overwriting one), takes the writer lock, and writes the title slot (when
///   asked for), the header and the entry.
/// * Each append writes exactly one line and returns the entry parsed back from those bytes.
/// * Every write takes omp's publish lock (`.<name>.lock`, see [`crate::publish_lock_path`]) and
///   first checks that the file still has the size and identity this writer last saw: if another
///   process (such as omp) appended to it, rewrote it or removed it, the call writes nothing and
///   fails with [`StoreError::Conflict`]; open it again with
///   [`open_for_append`](Self::open_for_append). A lock held for more than 500 ms gives
///   [`StoreError::PublishLockTimeout`].
/// * If an append fails, the session in memory does not include that entry, and a partly written
///   line is cut off again; if even that fails, the next append starts on a new line.
///
/// The file I/O goes through `F` (see [`crate::vfs`]): the operating system's file system unless
/// a test gives another one ([`create_in`](Self::create_in),
/// [`open_for_append_in`](Self::open_for_append_in)).
#[derive(Debug)]
pub struct SessionWriter<F: Vfs = RealFs> {
    fs: F,
    /// `None` for an in-memory session.
    path: Option<PathBuf>,
    header: SessionHeader,
    options: WriterOptions,
    leaf: Option<String>,
    /// The index of the file this writer resumed: its ids are the session's first ones (looked
    /// up there, not copied; see [`SessionWriter::has_id`]).
    resumed_ids: Option<Arc<EntryTable>>,
    /// The ids written or caught up on since (all of them for a new session).
    ids: HashSet<String>,
    entry_count: usize,
    /// The id of the file's last entry as this writer knows it: the leaf follows foreign
    /// appends (see [`SessionWriter::catch_up`]) only while it is this tip.
    file_tip: Option<String>,
    title_updated_at: Option<String>,
    /// The slot's title when it is not the header's (see [`SessionWriter::with_slot_title`]).
    slot_title: Option<(Option<String>, Option<TitleSource>)>,
    state: State<F>,
    stamps: Box<dyn Stamps>,
}

#[derive(Debug)]
enum State<F: Vfs> {
    /// A new file that does not exist yet.
    Pending,
    /// An existing file that is not locked yet.
    Existing {
        has_slot: bool,
        /// The size the file had when it was read; appending requires it unchanged.
        expected_len: u64,
    },
    /// Locked and open for appending.
    Open(OpenFile<F>),
    /// An in-memory session: the bytes a file would hold (empty until the first append).
    Memory(Vec<u8>),
    /// A session in a keyed store (see [`crate::Store`]).
    Keyed(KeyedTarget),
}

/// How many bytes [`Durability::Buffered`] collects before writing them.
const BUFFER_BYTES: usize = 64 << 10;

/// A session file this writer owns (the sidecar lock) and appends to.
///
/// Every write to the file happens under omp's publish lock (see [`PublishLock`]) and only
/// after checking that the file is still the one this writer last wrote: same identity, and
/// `len` bytes long. A foreign append or rewrite gives [`StoreError::Conflict`].
#[derive(Debug)]
struct OpenFile<F: Vfs> {
    fs: F,
    path: PathBuf,
    /// Opened with `O_APPEND`.
    file: F::File,
    /// Lines not written yet ([`Durability::Buffered`] only).
    pending: Vec<u8>,
    durability: Durability,
    /// How long to wait for omp's publish lock beyond its own 500 ms.
    busy_timeout: Option<Duration>,
    /// How this writer claims omp's publish lock.
    claims: Claims,
    _lock: WriterLock,
    /// Which file `file` is, to notice the path being replaced.
    identity: FileIdentity,
    /// Bytes on disk as this writer last wrote or read them (the expected size).
    len: u64,
    /// The file ends without a newline: the next write starts with one.
    needs_newline: bool,
    has_slot: bool,
}

impl SessionWriter {
    /// A new session in `dir`, in the file pi and omp would name it
    /// (`<timestamp>_<id>.jsonl`, see [`session_file_name`]). Writes nothing.
    pub fn create(dir: impl AsRef<Path>, header: SessionHeader, options: WriterOptions) -> Self {
        let timestamp = header
            .timestamp
            .as_ref()
            .map_or_else(String::new, |t| t.as_str().to_owned());
        let path = dir.as_ref().join(session_file_name(&timestamp, &header.id));
        Self::create_at(path, header, options)
    }

    /// A new session at an explicit path. Writes nothing; the first append fails with
    /// [`StoreError::AlreadyExists`] if the file exists by then.
    pub fn create_at(
        path: impl Into<PathBuf>,
        header: SessionHeader,
        options: WriterOptions,
    ) -> Self {
        Self::create_in(RealFs, path, header, options)
    }

    /// A session that lives in memory only: the same API, no file, no lock.
    pub fn in_memory(header: SessionHeader) -> Self {
        Self::with_state(
            RealFs,
            None,
            header,
            WriterOptions::default(),
            State::Memory(Vec::new()),
        )
    }

    /// Resumes an existing session: opens it (see [`crate::open`]) and prepares to append after
    /// its last line. The leaf is the last entry that has an id. The lock is taken on the first
    /// append. A file with a valid title slot keeps it current on [`set_title`](Self::set_title),
    /// whatever [`WriterOptions::title_slot`] says.
    ///
    /// Fails for a file without a header ([`StoreError::NoHeader`]) and for a version 1 or 2
    /// file ([`StoreError::NeedsMigration`]: pi and omp rewrite such a file as version 3 when
    /// they open it, and pi gives a version 1 file's entries new ids).
    pub fn open_for_append(
        path: impl AsRef<Path>,
        options: WriterOptions,
    ) -> Result<(Self, SessionFile, Vec<Diagnostic>), StoreError> {
        Self::open_for_append_in(RealFs, path, options)
    }

    /// [`open_for_append`](Self::open_for_append) for a file the caller has already opened
    /// (with [`crate::open`]) as `session`: no second read. Appending requires the file to be
    /// unchanged since then ([`StoreError::Conflict`] otherwise).
    pub fn resume(
        path: impl AsRef<Path>,
        session: &SessionFile,
        options: WriterOptions,
    ) -> Result<Self, StoreError> {
        Self::resume_in(RealFs, path, session, options)
    }

    /// [`create_at`](Self::create_at) for a session in a keyed store ([`crate::Store::create_at`]).
    pub(crate) fn create_keyed(
        path: &Path,
        header: SessionHeader,
        options: WriterOptions,
        target: KeyedTarget,
    ) -> Self {
        Self::with_state(
            RealFs,
            Some(path.to_path_buf()),
            header,
            options,
            State::Keyed(target),
        )
    }

    /// [`resume`](Self::resume) for a session in a keyed store ([`crate::Store::resume`]).
    pub(crate) fn resume_keyed(
        path: &Path,
        session: &SessionFile,
        options: WriterOptions,
        target: KeyedTarget,
    ) -> Result<Self, StoreError> {
        Self::resumed(RealFs, path, session, options, State::Keyed(target))
    }
}

impl<F: Vfs> SessionWriter<F> {
    /// [`create_at`](SessionWriter::create_at) on the file system `fs` (see [`crate::vfs`]).
    pub fn create_in(
        fs: F,
        path: impl Into<PathBuf>,
        header: SessionHeader,
        options: WriterOptions,
    ) -> Self {
        Self::with_state(fs, Some(path.into()), header, options, State::Pending)
    }

    fn with_state(
        fs: F,
        path: Option<PathBuf>,
        header: SessionHeader,
        options: WriterOptions,
        state: State<F>,
    ) -> Self {
        let title_updated_at = header.timestamp.as_ref().map(|t| t.as_str().to_owned());
        Self {
            fs,
            path,
            header,
            options,
            leaf: None,
            resumed_ids: None,
            ids: HashSet::new(),
            entry_count: 0,
            file_tip: None,
            title_updated_at,
            slot_title: None,
            state,
            stamps: Box::new(SystemStamps),
        }
    }

    /// [`open_for_append`](SessionWriter::open_for_append) on the file system `fs`.
    pub fn open_for_append_in(
        fs: F,
        path: impl AsRef<Path>,
        options: WriterOptions,
    ) -> Result<(Self, SessionFile, Vec<Diagnostic>), StoreError> {
        let path = path.as_ref();
        let (session, diagnostics) = fs.open_session(path)?;
        let writer = Self::resume_in(fs, path, &session, options)?;
        Ok((writer, session, diagnostics))
    }

    /// [`resume`](SessionWriter::resume) on the file system `fs`.
    pub fn resume_in(
        fs: F,
        path: impl AsRef<Path>,
        session: &SessionFile,
        options: WriterOptions,
    ) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let has_slot = session.title_slot().is_some() && slot_is_rewritable(&fs, path)?;
        Self::resumed(
            fs,
            path,
            session,
            options,
            State::Existing {
                has_slot,
                expected_len: session.byte_len(),
            },
        )
    }

    fn resumed(
        fs: F,
        path: &Path,
        session: &SessionFile,
        options: WriterOptions,
        state: State<F>,
    ) -> Result<Self, StoreError> {
        let header = session
            .header()
            .cloned()
            .ok_or_else(|| StoreError::NoHeader {
                path: path.to_path_buf(),
            })?;
        let version = session.file_version();
        if version < crate::CURRENT_VERSION {
            return Err(StoreError::NeedsMigration {
                path: path.to_path_buf(),
                version,
            });
        }
        let mut writer = Self::with_state(fs, Some(path.to_path_buf()), header, options, state);
        writer.title_updated_at = session
            .title_slot()
            .map(|s| s.updated_at.clone())
            .or(writer.title_updated_at);
        writer.resumed_ids = Some(Arc::clone(session.table()));
        writer.entry_count = session.len();
        writer.leaf = session.leaf_id().map(str::to_owned);
        writer.file_tip = writer.leaf.clone();
        Ok(writer)
    }

    /// Uses `stamps` for entry times and ids from now on (see [`Stamps`]).
    pub fn with_stamps(mut self, stamps: impl Stamps + 'static) -> Self {
        self.stamps = Box::new(stamps);
        self
    }

    /// Changes how long writes wait for a busy session from now on (see
    /// [`WriterOptions::busy_timeout`]).
    pub fn set_busy_timeout(&mut self, timeout: Option<Duration>) {
        self.options.busy_timeout = timeout;
        if let State::Open(open) = &mut self.state {
            open.busy_timeout = timeout;
        }
    }

    /// The session file (`None` for an in-memory session).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The header (as written, or as it will be written by the first append).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The id of the current leaf: the parent the next append gets (`None`: a new root).
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// Number of entries in the session (existing ones included when resumed).
    pub fn len(&self) -> usize {
        self.entry_count
    }

    /// True when the session has no entries.
    pub fn is_empty(&self) -> bool {
        self.entry_count == 0
    }

    /// Whether anything has been written (the file exists, or memory holds the header).
    pub fn is_written(&self) -> bool {
        match &self.state {
            State::Pending => false,
            State::Existing { .. } | State::Open(_) => true,
            State::Memory(bytes) => !bytes.is_empty(),
            State::Keyed(target) => target.is_created(),
        }
    }

    /// Whether `id` names an entry of this session.
    pub fn contains_id(&self, id: &str) -> bool {
        self.has_id(id)
    }

    /// Whether `id` names an entry of this session: one of the resumed file's, or one
    /// written or caught up on since.
    fn has_id(&self, id: &str) -> bool {
        self.ids.contains(id)
            || self
                .resumed_ids
                .as_ref()
                .is_some_and(|table| table.position_of(id).is_some())
    }

    /// Moves the leaf (pi's `branch` / `resetLeaf`): the next append becomes a child of `id`, or
    /// a new root for `None`. Nothing is written; an unknown id is refused.
    pub fn set_leaf(&mut self, id: Option<&str>) -> Result<(), StoreError> {
        if let Some(id) = id
            && !self.has_id(id)
        {
            return Err(StoreError::UnknownId { id: id.to_owned() });
        }
        self.leaf = id.map(str::to_owned);
        Ok(())
    }

    /// Appends `entry` as a child of the leaf and makes it the leaf.
    ///
    /// Sets `id` (8 lowercase hex digits, unique in the session), `parentId` (the leaf, `null`
    /// for the first) and `timestamp` (now, ISO 8601 UTC with milliseconds), overriding any the
    /// entry had; writes one line; returns the entry parsed back from the bytes written.
    ///
    /// With [`WriterOptions::busy_timeout`], a session that others appended to meanwhile is
    /// caught up on first, and the entry built again (new id, parent, time) when another
    /// append slipped in before the write.
    pub fn append(&mut self, mut entry: Entry) -> Result<Entry, StoreError> {
        if matches!(entry.kind(), "session" | "title") {
            return Err(StoreError::ReservedType {
                kind: entry.kind().to_owned(),
            });
        }
        let deadline = self
            .catches_up()
            .then(|| Instant::now() + self.options.busy_timeout.unwrap_or_default());
        loop {
            if deadline.is_some() {
                self.catch_up()?;
            }
            // A try again sets the whole envelope anew: no copy of the entry is kept for it.
            let id = self.fresh_id();
            entry.set_envelope(id.clone(), self.leaf.clone(), self.stamps.now());
            let (line, read_back) = entry_line(&entry)?;
            match self.write_line(&line) {
                Err(StoreError::Conflict {
                    replaced: false,
                    expected,
                    actual: Some(actual),
                    ..
                }) if actual > expected && deadline.is_some_and(|d| Instant::now() < d) => {
                    continue;
                }
                result => result?,
            }
            self.ids.insert(id.clone());
            self.leaf = Some(id.clone());
            self.file_tip = Some(id);
            self.entry_count += 1;
            return Ok(read_back);
        }
    }

    /// Whether this writer catches up on foreign appends (a busy timeout, unbuffered).
    fn catches_up(&self) -> bool {
        self.options.busy_timeout.is_some()
            && self.options.durability != Durability::Buffered
            && self.path.is_some()
    }

    /// Reads what others appended to the file since this writer last looked: only the new
    /// bytes. Their ids become known (so no id is reused) and count as entries; the leaf
    /// moves to the file's new last entry if it was at the old one (a writer following the
    /// file's tip keeps following it; one that moved its leaf keeps its branch). Takes the
    /// writer lock first (waiting up to [`WriterOptions::busy_timeout`]) if not held yet.
    /// Returns how many entries were read.
    ///
    /// A file replaced by another (omp's rewrites rename a new file into place) or one that
    /// shrank gives [`StoreError::Conflict`]: open it again with
    /// [`open_for_append`](Self::open_for_append). Nothing is read for a file not yet
    /// created or an in-memory session.
    pub fn catch_up(&mut self) -> Result<usize, StoreError> {
        if matches!(self.state, State::Pending | State::Memory(_)) {
            return Ok(0);
        }
        if let State::Keyed(target) = &mut self.state {
            return Ok(match target.read_growth()? {
                Some(bytes) => self.absorb(&bytes),
                None => 0,
            });
        }
        let open = self.ensure_open()?;
        open.flush()?;
        let Some(bytes) = open.read_growth()? else {
            return Ok(0);
        };
        Ok(self.absorb(&bytes))
    }

    /// Takes note of foreign lines (see [`catch_up`](Self::catch_up)).
    fn absorb(&mut self, bytes: &[u8]) -> usize {
        let mut count = 0;
        let mut tip = None;
        for line in bytes.split(|b| *b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(envelope) = parse_envelope(line) else {
                continue;
            };
            if matches!(envelope.kind.as_str(), "session" | "title") {
                continue;
            }
            count += 1;
            if let Some(id) = envelope.id {
                self.ids.insert(id.clone());
                tip = Some(id);
            }
        }
        self.entry_count += count;
        if let Some(tip) = tip {
            if self.leaf == self.file_tip {
                self.leaf = Some(tip.clone());
            }
            self.file_tip = Some(tip);
        }
        count
    }

    /// Appends `entry` exactly as given: its own `id`, `parentId` and `timestamp` (or their
    /// absence) are kept, for copying entries into a new file (a fork, a migration). Nothing is
    /// checked beyond the reserved types: the caller copies a tree that is already there. An
    /// entry with an id becomes the leaf. Returns the entry as read back from the bytes written.
    pub fn append_verbatim(&mut self, entry: Entry) -> Result<Entry, StoreError> {
        if matches!(entry.kind(), "session" | "title") {
            return Err(StoreError::ReservedType {
                kind: entry.kind().to_owned(),
            });
        }
        let id = entry.id().map(str::to_owned);
        self.write_verbatim(id, &entry)
    }

    /// Appends an entry exactly as given, the way omp's `ingestReplicatedEntry` does: its `id`,
    /// `parentId` and `timestamp` are kept, and its keys are written in the map's order (a typed
    /// [`Entry`] would be written in the schema's order, see [`append_verbatim`](Self::append_verbatim)).
    /// Used to write a session that another program composed, such as an imported Claude Code or
    /// Codex conversation.
    ///
    /// The id must be a string new to the session and the parent `null` or an id already
    /// appended ([`StoreError::UnknownId`] otherwise); the entry becomes the leaf. Returns the
    /// entry as it reads back from the bytes written.
    pub fn append_replicated(&mut self, entry: JsonMap) -> Result<Entry, StoreError> {
        let view = pi_session_types::view::EntryRef::new(&entry);
        let kind = view.kind().unwrap_or("");
        if matches!(kind, "session" | "title") {
            return Err(StoreError::ReservedType {
                kind: kind.to_owned(),
            });
        }
        let Some(id) = view.id().map(str::to_owned) else {
            return Err(StoreError::Serialize {
                what: "entry",
                detail: "a replicated entry needs a string `id`".to_owned(),
            });
        };
        if self.has_id(&id) {
            return Err(StoreError::Serialize {
                what: "entry",
                detail: format!("the session already has an entry with id {id:?}"),
            });
        }
        if let Some(parent) = view.parent_id().and_then(|p| p.as_str())
            && !self.has_id(parent)
        {
            return Err(StoreError::UnknownId {
                id: parent.to_owned(),
            });
        }
        self.write_verbatim(Some(id), &entry)
    }

    /// Writes `entry` as one line with the envelope it has (it becomes the leaf when it has an
    /// `id`) and returns it as read back from the bytes written.
    fn write_verbatim(
        &mut self,
        id: Option<String>,
        entry: &impl serde::Serialize,
    ) -> Result<Entry, StoreError> {
        let (line, read_back) = entry_line(entry)?;
        self.write_line(&line)?;
        if let Some(id) = id {
            self.ids.insert(id.clone());
            self.leaf = Some(id.clone());
            self.file_tip = Some(id);
        }
        self.entry_count += 1;
        Ok(read_back)
    }

    /// Sets what the title slot of a new file says and when it was last updated, independently
    /// of the header: omp's `persistCopy` appends `title`/`titleSource` to the header after
    /// `cwd`, an order the typed header cannot give, so a caller that must match those bytes
    /// keeps them in [`SessionHeader::extra`] and names the slot's title here. Only the slot of
    /// a file not written yet is affected.
    pub fn with_slot_title(
        mut self,
        title: Option<&str>,
        source: Option<TitleSource>,
        updated_at: impl Into<String>,
    ) -> Self {
        self.slot_title = Some((title.map(str::to_owned), source));
        self.title_updated_at = Some(updated_at.into());
        self
    }

    /// Changes the title in the header, and in the title slot when the file has one (rewriting
    /// only those 256 bytes in place; the header line is never rewritten). `None` clears it.
    ///
    /// The title is stored as given: clean it first (omp cleans control characters and runs
    /// of spaces, see `pi_session_types::header::clean_title`). The slot cuts a long title to
    /// fit its 256 bytes, as omp does.
    pub fn set_title(
        &mut self,
        title: Option<&str>,
        source: Option<TitleSource>,
    ) -> Result<TitleWrite, StoreError> {
        self.header.title = title.map(str::to_owned);
        self.header.title_source = source.map(|s| s.as_str().to_owned());
        self.slot_title = None;
        self.title_updated_at = Some(self.stamps.now().as_str().to_owned());
        let has_slot = match &self.state {
            State::Pending => return Ok(TitleWrite::AtCreation),
            State::Memory(bytes) if bytes.is_empty() => return Ok(TitleWrite::AtCreation),
            State::Memory(_) => false,
            State::Keyed(target) if !target.is_created() => return Ok(TitleWrite::AtCreation),
            State::Keyed(_) => {
                // omp keeps the title beside the bytes (its title hash), never in them.
                let meta = KeyedTitle {
                    title: title.map(str::to_owned),
                    source,
                    updated_at: self.title_updated_at.clone().unwrap_or_default(),
                };
                if let State::Keyed(target) = &self.state {
                    target.set_title(&meta)?;
                }
                return Ok(TitleWrite::Slot);
            }
            State::Existing { has_slot, .. } => *has_slot,
            State::Open(open) => open.has_slot,
        };
        if !has_slot {
            return Ok(TitleWrite::InMemoryOnly);
        }
        let slot = self.slot_bytes()?;
        let open = self.ensure_open()?;
        open.flush()?;
        open.rewrite_slot(&slot)?;
        Ok(TitleWrite::Slot)
    }

    /// Pushes buffered lines to the file (and fsyncs with [`Durability::Fsync`]).
    pub fn flush(&mut self) -> Result<(), StoreError> {
        if let State::Open(open) = &mut self.state {
            open.flush()?;
            if open.durability == Durability::Fsync {
                open.file
                    .sync_data()
                    .map_err(|e| StoreError::io("could not fsync", &open.path, e))?;
            }
        }
        Ok(())
    }

    /// Reads the session back as it now stands (flushing first): the file, or for an in-memory
    /// session the bytes it holds. Before the first append this is the header alone.
    pub fn session(&mut self) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
        self.flush()?;
        match (&self.state, &self.path) {
            (State::Memory(bytes), _) if !bytes.is_empty() => Ok(open_bytes(bytes.clone())),
            (State::Existing { .. } | State::Open(_), Some(path)) => self.fs.open_session(path),
            (State::Keyed(target), Some(path)) if target.is_created() => target.store().open(path),
            _ => Ok(open_bytes(self.prefix_bytes()?)),
        }
    }

    /// 8 random lowercase hex digits (from a UUIDv4, like pi and omp) not used in this session;
    /// after 100 collisions a full UUID, as pi does.
    fn fresh_id(&mut self) -> String {
        for _ in 0..100 {
            let id = self.stamps.entry_id();
            if !self.has_id(&id) {
                return id;
            }
        }
        uuid::Uuid::new_v4().to_string()
    }

    fn file_path(&self) -> Result<&Path, StoreError> {
        self.path
            .as_deref()
            .ok_or(StoreError::InMemory { action: "write" })
    }

    /// What goes before the first entry of a new file: the slot (if asked for) and the header.
    fn prefix_bytes(&self) -> Result<Vec<u8>, StoreError> {
        let mut bytes = if self.options.title_slot && self.path.is_some() {
            self.slot_bytes()?
        } else {
            Vec::new()
        };
        let header = to_js_vec(&self.header).map_err(|e| StoreError::Serialize {
            what: "header",
            detail: e.to_string(),
        })?;
        bytes.extend_from_slice(&header);
        bytes.push(b'\n');
        Ok(bytes)
    }

    fn slot_bytes(&self) -> Result<Vec<u8>, StoreError> {
        let (title, source) = match &self.slot_title {
            Some((title, source)) => (title.as_deref(), *source),
            None => (
                self.header.title.as_deref(),
                match self.header.title_source.as_deref() {
                    Some("user") => Some(TitleSource::User),
                    Some("auto") => Some(TitleSource::Auto),
                    _ => None,
                },
            ),
        };
        let updated_at = self.title_updated_at.as_deref().unwrap_or_default();
        let title = title.unwrap_or_default();
        TitleSlot::serialize_fixed(title, source, updated_at)
            .map(String::into_bytes)
            .map_err(|e| StoreError::Serialize {
                what: "title slot",
                detail: e.to_string(),
            })
    }

    fn write_line(&mut self, line: &[u8]) -> Result<(), StoreError> {
        if let State::Memory(bytes) = &mut self.state {
            if bytes.is_empty() {
                let prefix = self.prefix_bytes()?;
                if let State::Memory(bytes) = &mut self.state {
                    bytes.extend_from_slice(&prefix);
                }
            }
            if let State::Memory(bytes) = &mut self.state {
                bytes.extend_from_slice(line);
            }
            return Ok(());
        }
        if matches!(self.state, State::Pending) {
            return self.create_file(line);
        }
        if let State::Keyed(target) = &self.state
            && !target.is_created()
        {
            let mut bytes = self.prefix_bytes()?;
            bytes.extend_from_slice(line);
            let slot = parse_line(&bytes[..bytes.iter().position(|b| *b == b'\n').unwrap_or(0)])
                .ok()
                .and_then(|p| match p.value {
                    ParsedLine::TitleSlot(slot) => Some(KeyedTitle::from_slot(&slot)),
                    _ => None,
                });
            if let State::Keyed(target) = &mut self.state {
                target.create(&bytes, slot.as_ref())?;
            }
            return Ok(());
        }
        if let State::Keyed(target) = &mut self.state {
            return target.append(line);
        }
        self.ensure_open()?.append(line)
    }

    /// The first append of a new session: directories, lock, then (under omp's publish lock, as
    /// omp creates files) the slot + header + entry appear at the path all at once (see
    /// [`create_whole`]).
    fn create_file(&mut self, line: &[u8]) -> Result<(), StoreError> {
        let path = self.file_path()?.to_path_buf();
        let mut bytes = self.prefix_bytes()?;
        let has_slot = self.options.title_slot;
        bytes.extend_from_slice(line);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            self.fs
                .create_dir_all(dir)
                .map_err(|e| StoreError::io("could not create the directory", dir, e))?;
        }
        let lock = WriterLock::acquire(&path, self.options.busy_timeout)?;
        let publishing = PublishLock::acquire(&path, self.options.busy_timeout)?;
        let durability = self.options.durability;
        let created = create_whole(&self.fs, &path, &bytes, durability);
        drop(publishing);
        let (file, identity) = created?;
        self.state = State::Open(OpenFile {
            fs: self.fs.clone(),
            claims: Claims::new(&path, false),
            path,
            file,
            pending: Vec::new(),
            durability,
            busy_timeout: self.options.busy_timeout,
            _lock: lock,
            identity,
            len: bytes.len() as u64,
            needs_newline: false,
            has_slot,
        });
        Ok(())
    }

    /// Locks and opens an existing file for appending (once). Refuses with
    /// [`StoreError::Conflict`] if the file is no longer the size it was when it was read.
    fn ensure_open(&mut self) -> Result<&mut OpenFile<F>, StoreError> {
        if let State::Existing {
            has_slot,
            expected_len,
        } = self.state
        {
            let path = self.file_path()?.to_path_buf();
            let lock = WriterLock::acquire(&path, self.options.busy_timeout)?;
            let file = self
                .fs
                .open_append(&path)
                .map_err(|e| StoreError::io("could not open for appending", &path, e))?;
            if self.options.durability == Durability::Fsync {
                // The file's name may not be on disk yet (created by a writer that did not
                // sync its directory): each append's fsync covers the data, not the name.
                sync_parent_dir(&self.fs, &path)
                    .map_err(|e| StoreError::io("could not fsync the directory of", &path, e))?;
            }
            let metadata = file
                .metadata()
                .map_err(|e| StoreError::io("could not read the size of", &path, e))?;
            let grew = metadata.len > expected_len;
            if metadata.len != expected_len && !(grew && self.catches_up()) {
                return Err(StoreError::Conflict {
                    path,
                    expected: expected_len,
                    actual: Some(metadata.len),
                    replaced: false,
                });
            }
            let needs_newline = expected_len > 0
                && last_byte(&file, expected_len)
                    .map_err(|e| StoreError::io("could not read", &path, e))?
                    != b'\n';
            self.state = State::Open(OpenFile {
                fs: self.fs.clone(),
                claims: Claims::new(&path, true),
                path,
                file,
                pending: Vec::new(),
                durability: self.options.durability,
                busy_timeout: self.options.busy_timeout,
                _lock: lock,
                identity: metadata.identity,
                len: expected_len,
                needs_newline,
                has_slot,
            });
            if grew {
                // Caught up right away, before anything is built on the old tip.
                if let State::Open(open) = &mut self.state
                    && let Some(bytes) = open.read_growth()?
                {
                    self.absorb(&bytes);
                }
            }
        }
        match &mut self.state {
            State::Open(open) => Ok(open),
            _ => Err(StoreError::InMemory {
                action: "open for appending",
            }),
        }
    }
}

impl<F: Vfs> OpenFile<F> {
    /// Writes `line` now, or with [`Durability::Buffered`] adds it to the pending bytes (writing
    /// those first when they would outgrow the buffer). On error nothing of `line` stays.
    fn append(&mut self, line: &[u8]) -> Result<(), StoreError> {
        if self.durability != Durability::Buffered {
            return self.publish(line);
        }
        if !self.pending.is_empty() && self.pending.len() + line.len() > BUFFER_BYTES {
            self.flush()?;
        }
        if line.len() >= BUFFER_BYTES {
            return self.publish(line);
        }
        self.pending.extend_from_slice(line);
        Ok(())
    }

    /// Writes the pending bytes, if any; on error they stay pending.
    fn flush(&mut self) -> Result<(), StoreError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let result = self.publish(&pending);
        if result.is_err() {
            self.pending = pending;
        }
        result
    }

    /// One write of whole lines, under omp's publish lock, after checking that nobody else
    /// changed the file. A failed write is cut off again.
    fn publish(&mut self, lines: &[u8]) -> Result<(), StoreError> {
        let _publishing = self.claims.acquire(&self.path, self.busy_timeout)?;
        self.check_unchanged()?;
        let newline: &[u8] = if self.needs_newline { b"\n" } else { b"" };
        let before = self.len;
        let result =
            write_parts(&mut self.file, newline, lines).and_then(|()| match self.durability {
                Durability::Fsync => self.file.sync_data(),
                Durability::Buffered | Durability::Flush => Ok(()),
            });
        match result {
            Ok(()) => {
                self.len += (newline.len() + lines.len()) as u64;
                self.needs_newline = false;
                Ok(())
            }
            Err(e) => {
                self.roll_back(before);
                Err(StoreError::io("could not append to", &self.path, e))
            }
        }
    }

    /// [`StoreError::Conflict`] unless the path still names our file, `len` bytes long.
    fn check_unchanged(&self) -> Result<(), StoreError> {
        let conflict = |actual, replaced| StoreError::Conflict {
            path: self.path.clone(),
            expected: self.len,
            actual,
            replaced,
        };
        let metadata = match self.fs.metadata(&self.path) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(conflict(None, false)),
            Err(e) => return Err(StoreError::io("could not read the size of", &self.path, e)),
        };
        if metadata.identity != self.identity {
            return Err(conflict(Some(metadata.len), true));
        }
        if metadata.len != self.len {
            return Err(conflict(Some(metadata.len), false));
        }
        Ok(())
    }

    /// The bytes appended to the file since this writer last looked (`None`: nothing new), read
    /// under omp's publish lock so no append is half seen; afterwards they count as seen. A
    /// replaced or shrunk file gives [`StoreError::Conflict`].
    fn read_growth(&mut self) -> Result<Option<Vec<u8>>, StoreError> {
        // The common case, nothing new, needs no lock: the file only grows under it.
        if self.check_unchanged().is_ok() {
            return Ok(None);
        }
        let _publishing = self.claims.acquire(&self.path, self.busy_timeout)?;
        let grown_to = match self.check_unchanged() {
            Ok(()) => return Ok(None),
            Err(StoreError::Conflict {
                replaced: false,
                actual: Some(actual),
                ..
            }) if actual > self.len => actual,
            Err(e) => return Err(e),
        };
        let mut bytes = vec![0u8; usize::try_from(grown_to - self.len).unwrap_or(usize::MAX)];
        self.file
            .read_exact_at(self.len, &mut bytes)
            .map_err(|e| StoreError::io("could not read what was appended to", &self.path, e))?;
        self.len = grown_to;
        // A line cut short (a crashed pi, which takes no lock) must not swallow ours.
        self.needs_newline = bytes.last() != Some(&b'\n');
        Ok(Some(bytes))
    }

    /// Rewrites the 256-byte title slot in place, under the publish lock and only if the file is
    /// unchanged. omp itself takes no lock for slot writes; taking it here keeps the check and
    /// the write together against omp's rewrites, which rename under the lock.
    fn rewrite_slot(&mut self, slot: &[u8]) -> Result<(), StoreError> {
        let _publishing = self.claims.acquire(&self.path, self.busy_timeout)?;
        self.check_unchanged()?;
        self.fs
            .write_at(&self.path, 0, slot)
            .map_err(|e| StoreError::io("could not rewrite the title slot of", &self.path, e))
    }

    /// Cuts a partly written line off again; if that fails, makes the next write start on a
    /// new line so it can never fuse onto the fragment.
    fn roll_back(&mut self, len: u64) {
        if self.file.set_len(len).is_err() {
            self.needs_newline = true;
            // The fragment's length is unknown; take the file's real size as the expected one.
            if let Ok(metadata) = self.file.metadata() {
                self.len = metadata.len;
            }
        }
    }
}

impl<F: Vfs> Drop for OpenFile<F> {
    fn drop(&mut self) {
        // Best effort, as a `BufWriter` would: an error here has nowhere to go. Call
        // `SessionWriter::flush` to see it.
        let _ = self.flush();
    }
}

/// Writes `prefix` and `lines` with as few system calls as possible.
fn write_parts(file: &mut impl VfsFile, prefix: &[u8], lines: &[u8]) -> io::Result<()> {
    if prefix.is_empty() {
        return file.append(lines);
    }
    let mut joined = Vec::with_capacity(prefix.len() + lines.len());
    joined.extend_from_slice(prefix);
    joined.extend_from_slice(lines);
    file.append(&joined)
}

/// Puts a new file holding `bytes` at `path`, never overwriting one, so that the path never
/// names a file without them: a reader, a resuming writer or a crash sees either no file or
/// the whole first write (slot, header, first entry), never an empty or headerless file.
///
/// The bytes go to a hidden temporary file beside it (`.<name>.<pid>.<n>.tmp`), which is then
/// hard-linked to the path (atomic, and fails if the path exists) and unlinked. The temporary
/// file is synced before the link in every [`Durability`] (one fsync per new session): a file
/// system may otherwise put the new name on disk before the data, and a power loss would leave
/// the path naming an empty file. Where hard links
/// are not supported, the file is created exclusively and written instead (the old way: a crash
/// in between can leave an empty file there). A crash between link and unlink leaves only the
/// hidden temporary name behind.
fn create_whole<F: Vfs>(
    fs: &F,
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<(F::File, FileIdentity), StoreError> {
    let temp = crate::paths::hidden_beside(path, "tmp");
    let mut file = fs
        .create_new(&temp)
        .map_err(|e| StoreError::io("could not create", &temp, e))?;
    let remove_temp = || {
        let _ = fs.remove_file(&temp);
    };
    let written = file.append(bytes).and_then(|()| file.sync_data());
    if let Err(e) = written {
        remove_temp();
        return Err(StoreError::io("could not write", &temp, e));
    }
    match fs.hard_link(&temp, path) {
        Ok(()) => remove_temp(),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            remove_temp();
            return Err(StoreError::AlreadyExists {
                path: path.to_path_buf(),
            });
        }
        Err(_) => {
            remove_temp();
            drop(file);
            return create_in_place(fs, path, bytes, durability);
        }
    }
    if durability == Durability::Fsync {
        sync_parent_dir(fs, path)
            .map_err(|e| StoreError::io("could not fsync the directory of", path, e))?;
    }
    let identity = file
        .metadata()
        .map_err(|e| StoreError::io("could not read the metadata of", path, e))?
        .identity;
    Ok((file, identity))
}

/// [`create_whole`] without hard links: exclusive create, then one write; on failure the new
/// file is removed again.
fn create_in_place<F: Vfs>(
    fs: &F,
    path: &Path,
    bytes: &[u8],
    durability: Durability,
) -> Result<(F::File, FileIdentity), StoreError> {
    let mut file = match fs.create_new(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            return Err(StoreError::AlreadyExists {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(StoreError::io("could not create", path, e)),
    };
    let written = file.append(bytes).and_then(|()| {
        if durability == Durability::Fsync {
            file.sync_data()?;
            sync_parent_dir(fs, path)?;
        }
        file.metadata()
    });
    match written {
        Ok(metadata) => Ok((file, metadata.identity)),
        Err(e) => {
            drop(file);
            // The file is ours (created exclusively above): take it away again. If removal
            // fails too, report the write error, which is the cause.
            let _ = fs.remove_file(path);
            Err(StoreError::io("could not write", path, e))
        }
    }
}

/// The entry as it reads back from `line` (without its newline).
fn read_back(line: &[u8]) -> Result<Entry, StoreError> {
    let not_an_entry = |detail: String| StoreError::Serialize {
        what: "entry",
        detail,
    };
    match parse_line(line)
        .map_err(|e| not_an_entry(e.to_string()))?
        .value
    {
        ParsedLine::Entry(entry) => Ok(entry),
        other => Err(not_an_entry(format!(
            "the line reads back as a {} line, not an entry",
            other.kind()
        ))),
    }
}

fn last_byte(file: &impl VfsFile, len: u64) -> io::Result<u8> {
    let mut byte = [0u8; 1];
    file.read_exact_at(len - 1, &mut byte)?;
    Ok(byte[0])
}

/// Whether the file starts with a slot of exactly 256 bytes (only then may it be rewritten in
/// place; omp does not check the width when reading).
fn slot_is_rewritable(fs: &impl Vfs, path: &Path) -> Result<bool, StoreError> {
    let mut first = [0u8; pi_session_types::header::TITLE_SLOT_BYTES];
    match fs.read_exact_at(path, 0, &mut first) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(false),
        Err(e) => return Err(StoreError::io("could not read", path, e)),
    }
    let (body, last) = first.split_at(first.len() - 1);
    Ok(last == b"\n"
        && matches!(
            parse_line(body).map(|p| p.value),
            Ok(ParsedLine::TitleSlot(_))
        ))
}

/// Fsyncs the directory `path` is in.
fn sync_parent_dir(fs: &impl Vfs, path: &Path) -> io::Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => fs.sync_dir(dir),
        None => fs.sync_dir(Path::new(".")),
    }
}

/// The line `entry` is written as (with its newline), and the entry as it reads back from it:
/// a line that would not read back is refused before anything reaches the disk.
fn entry_line(entry: &impl serde::Serialize) -> Result<(Vec<u8>, Entry), StoreError> {
    let mut line = to_js_vec(entry).map_err(|e| StoreError::Serialize {
        what: "entry",
        detail: e.to_string(),
    })?;
    let read_back = read_back(&line)?;
    line.push(b'\n');
    Ok((line, read_back))
}
