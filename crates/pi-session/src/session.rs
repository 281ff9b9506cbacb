//! [`Session`]: rho's `Rho.Session` (rho-reqllm.md §A.1–A.5) plus cursors over one shared log.
//!
//! A `Session` is a cursor: a position (the leaf) in a session's log, and the model in effect
//! there. [`Session::fork`] makes another cursor on the same log; appends through any cursor
//! go to the one file, one line each, under the store's single-writer lock.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use pi_session_context::reqllm::Message;
use pi_session_store::{Durability, SessionFile, SessionWriter, Store, WriterOptions, new_header};
use pi_session_tree::{
    AgentContext, ContextOptions, Dialect, KindQuery, LeafSelector, NodeInfo, TreeIndex,
};
use pi_session_types::SessionHeader;
use pi_session_types::needle::LineKeys;
use pi_session_types::shallow::Keys;
use pi_session_types::view::key;
use pi_session_types::{Entry, JsonValue, TitleSource};

use crate::builders::model_change_in;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::model::from_pi_model;
use crate::project::{ProjectOptions, node_of};
use crate::read::{model_from, to_json};
use crate::stats::{ContextStats, StatsOptions};
use crate::title::title_for;

/// Choices for a new session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOptions {
    /// The title; when `None` or empty, the first append derives it ([`title_for`]).
    pub title: Option<String>,
    /// How hard each append works to reach stable storage (default: flushed to the OS).
    pub durability: Durability,
    /// Also write omp's 256-byte title slot as line 1 (rho does not; pi cannot read it). Always
    /// written for [`Dialect::OMP`], where it holds the session's name.
    pub title_slot: bool,
    /// Whose shapes the session writes ([`Session::dialect`]); default pi 0.73's, which omp and
    /// pi 1.6 read too.
    pub dialect: Dialect,
    /// How long a write waits for a session another process is writing (the store's
    /// `WriterOptions::busy_timeout`, as SQLite's `busy_timeout`): its lock, omp's publish lock,
    /// and entries others appended meanwhile, which are caught up on. `None` (the default)
    /// fails at once with [`ErrorKind::Busy`](crate::ErrorKind::Busy). For an opened session,
    /// [`Session::set_busy_timeout`].
    pub busy_timeout: Option<Duration>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            title: None,
            durability: Durability::default(),
            title_slot: false,
            dialect: Dialect::PI,
            busy_timeout: None,
        }
    }
}

impl SessionOptions {
    /// The store's options for a new session: omp files always get a title slot, as omp
    /// writes one; the busy timeout goes through to the writer (files and keyed stores alike).
    fn writer_options(&self) -> WriterOptions {
        WriterOptions {
            durability: self.durability,
            title_slot: self.title_slot || self.dialect.has_title_slot(),
            busy_timeout: self.busy_timeout,
        }
    }
}

/// What [`Session::open`] returns.
#[derive(Debug)]
pub struct Opened {
    /// The session, its leaf at the file's last entry.
    pub session: Session,
    /// The leaf's branch, root first (rho's `branch/1` of the file).
    pub branch: Vec<Entry>,
    /// What was wrong with the file, if anything.
    pub diagnostics: Vec<Diagnostic>,
}

/// One session: a cursor (leaf and model) over a log shared with its forks.
///
/// ```
/// # fn main() -> Result<(), pi_session::Error> {
/// use pi_session::{Session, UserOptions, user};
/// let dir = tempfile::tempdir().unwrap();
/// let mut session = Session::new(dir.path(), "anthropic:claude-sonnet-4-5", "/work/project");
/// assert!(!session.is_written());
/// let entry = session.append(user("fix the tests", UserOptions::new()))?;
/// assert_eq!(session.leaf_id().as_deref(), entry.id());
/// assert_eq!(session.title().as_deref(), Some("fix the tests"));
///
/// let reopened = Session::open(session.path().unwrap(), "openai:gpt-5")?;
/// assert_eq!(reopened.branch.len(), 2); // the model_change, then the user message
/// assert_eq!(reopened.session.model(), "anthropic:claude-sonnet-4-5");
/// # Ok(()) }
/// ```
pub struct Session {
    pub(crate) log: Arc<Mutex<Log>>,
    pub(crate) leaf: Option<String>,
    /// Made before anything was written and not moved since: the cursor follows the session's
    /// start (the first `model_change`), wherever another cursor's first append puts it.
    pub(crate) at_start: bool,
    pub(crate) model: String,
    pub(crate) name: Option<String>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("path", &self.path())
            .field("leaf", &self.leaf)
            .field("model", &self.model)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The shared log: the writer, the entries that were in the file when it was opened (read on
/// demand), the ones appended since, and the tree index over all of them (grown by each append).
pub(crate) struct Log {
    pub(crate) writer: Sink,
    title: Option<String>,
    pub(crate) file: Option<SessionFile>,
    appended: Vec<Entry>,
    pub(crate) index: TreeIndex,
    values: HashMap<usize, JsonValue>,
    /// The entries of the last context built, for the next turn.
    pub(crate) context: Option<ContextCache>,
    pub(crate) names: BTreeMap<String, Position>,
    /// Names that have their record in the file (see [`crate::cursors`]).
    pub(crate) saved_names: std::collections::HashSet<String>,
    /// The `model_change` the first append of a new session wrote.
    first_id: Option<String>,
    /// Whose shapes the session writes.
    pub(crate) dialect: Dialect,
    /// The name set with [`Session::set_name`] since opening (omp: newer than the file's slot).
    pub(crate) renamed: Option<String>,
    /// What [`Session::set_busy_timeout`] set last (also for a session that takes no appends:
    /// [`Session::fork_to_in`] writes its new file with it).
    pub(crate) busy_timeout: Option<std::time::Duration>,
}

/// Where appends go: the writer, or why this file takes none.
pub(crate) enum Sink {
    /// Appends go to this writer.
    Open(SessionWriter),
    /// The file was read, but appending to it is refused (no header, a version 1 or 2 file).
    Refused {
        path: PathBuf,
        header: Option<SessionHeader>,
        why: Error,
    },
}

impl Sink {
    pub(crate) fn header(&self) -> Option<&SessionHeader> {
        match self {
            Self::Open(writer) => Some(writer.header()),
            Self::Refused { header, .. } => header.as_ref(),
        }
    }

    pub(crate) fn path(&self) -> Option<&Path> {
        match self {
            Self::Open(writer) => writer.path(),
            Self::Refused { path, .. } => Some(path),
        }
    }

    fn is_written(&self) -> bool {
        match self {
            Self::Open(writer) => writer.is_written(),
            Self::Refused { .. } => true,
        }
    }

    /// The writer, or the error that says why this file takes no appends and what to do.
    pub(crate) fn writer(&mut self) -> Result<&mut SessionWriter> {
        match self {
            Self::Open(writer) => Ok(writer),
            Self::Refused { why, .. } => Err(why.clone()),
        }
    }
}

/// The log as the tree's entry source, for [`Session::agent_context`] ([`Log::values_at`]).
pub(crate) struct LogSource<'a> {
    pub(crate) log: &'a Log,
}

impl LogSource<'_> {
    /// A "may this entry hold ..." question for each of `positions`: `ask` answers it for the
    /// entries still as the file has them; every other entry (appended, or replaced in
    /// memory) may.
    fn ask_file(
        &self,
        positions: &[usize],
        ask: impl FnOnce(&SessionFile, &[usize]) -> Result<Vec<bool>>,
    ) -> Result<Vec<bool>> {
        let file_len = self.log.file_len();
        let as_in_file = |at: usize| at < file_len && !self.log.values.contains_key(&at);
        // Most often every position asked is a line of the file as it is written: asked as
        // they are, not copied.
        if let Some(file) = &self.log.file
            && positions.iter().all(|&at| as_in_file(at))
        {
            return ask(file, positions);
        }
        let in_file: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&at| as_in_file(at))
            .collect();
        let mut answers = match &self.log.file {
            Some(file) if !in_file.is_empty() => ask(file, &in_file)?,
            _ => Vec::new(),
        }
        .into_iter();
        Ok(positions
            .iter()
            .map(|&at| !as_in_file(at) || answers.next().unwrap_or(true))
            .collect())
    }
}

impl pi_session_tree::EntrySource for LogSource<'_> {
    type Error = Error;

    fn entry_count(&self) -> usize {
        self.log.index.len()
    }

    fn envelope(&self, position: usize) -> NodeInfo {
        self.log.node_info(position)
    }

    fn entry_value(&self, position: usize) -> Result<JsonValue> {
        self.entry_values(&[position])?
            .pop()
            .ok_or_else(|| Error::invalid_input(format!("no entry at position {position}")))
    }

    fn entry_values(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        self.log.values_at(positions)
    }

    /// The file's lines answer from their bytes; appended entries may (they are few).
    fn may_contain(&self, positions: &[usize], needle: &str) -> Result<Vec<bool>> {
        self.ask_file(positions, |file, in_file| {
            Ok(pi_session_tree::EntrySource::may_contain(
                file, in_file, needle,
            )?)
        })
    }

    /// The file's lines answer from the key filters its open kept; appended entries may
    /// ([`Log::may_hold_all`], the one rule for both).
    fn may_hold_key(&self, positions: &[usize], key: &str) -> Result<Vec<bool>> {
        let wanted = pi_session_types::envelope_scan::KeyFilter::wanting(key);
        Ok(positions
            .iter()
            .map(|&at| self.log.may_hold_all(at, wanted))
            .collect())
    }
}

/// The entries of the last context built ([`Session::agent_context`]), kept so that a host's
/// next turn reads only what it appended.
pub(crate) struct ContextCache {
    pub(crate) dialect: Dialect,
    /// The branch positions it was built for.
    positions: Vec<usize>,
    /// What [`pi_session_tree::source::context_path`] gave for them (for omp, with omp's
    /// load-time rewrites applied), then the messages appended since.
    pub(crate) path: Vec<JsonValue>,
    /// What [`Session::turn_context`] built, kept between turns (`crate::turn`).
    pub(crate) turn: Option<crate::turn::TurnState>,
}

impl ContextCache {
    fn new(dialect: Dialect, positions: Vec<usize>) -> Self {
        Self {
            dialect,
            positions,
            path: Vec::new(),
            turn: None,
        }
    }

    /// Whether the branch `positions` is this one grown by `message` entries with an id only
    /// ([`TreeIndex::is_message_with_id`]: no compaction or setting that would move the part
    /// sent).
    fn extends_to(&self, log: &Log, dialect: Dialect, positions: &[usize]) -> bool {
        self.dialect == dialect
            && positions.starts_with(&self.positions)
            && positions[self.positions.len()..]
                .iter()
                .all(|&at| log.index.is_message_with_id(at))
    }

    /// Adds entries at the end (omp's load-time rewrites applied once, here).
    fn push(&mut self, mut entries: Vec<JsonValue>) {
        // Without a blob source the rewrites report nothing.
        drop(pi_session_tree::context::prepare_entries(
            &mut entries,
            self.dialect,
            None,
        ));
        self.path.append(&mut entries);
    }

    /// The dialect's `buildSessionContext` over the kept entries (borrowed, not copied).
    fn build(&self) -> (AgentContext, Vec<pi_session_tree::Diagnostic>) {
        let options = ContextOptions::default();
        pi_session_tree::context::agent_context_prepared(&self.path, self.dialect, &options)
    }
}

/// Where a named branch's tip is (see [`Session::fork_named`]).
#[derive(Debug, Clone)]
pub(crate) struct Position {
    pub(crate) leaf: Option<String>,
    pub(crate) at_start: bool,
    pub(crate) model: String,
}

impl Log {
    fn new(writer: SessionWriter, title: Option<String>, file: Option<SessionFile>) -> Self {
        Self::over(Sink::Open(writer), title, file)
    }

    fn over(writer: Sink, title: Option<String>, file: Option<SessionFile>) -> Self {
        let index = file.as_ref().map_or_else(TreeIndex::default, |f| {
            TreeIndex::from_table(Arc::clone(f.table()))
        });
        Self::indexed(writer, title, file, index)
    }

    /// [`Log::over`] with `file`'s index already built.
    fn indexed(
        writer: Sink,
        title: Option<String>,
        file: Option<SessionFile>,
        index: TreeIndex,
    ) -> Self {
        Self {
            writer,
            title,
            file,
            appended: Vec::new(),
            index,
            values: HashMap::new(),
            context: None,
            names: BTreeMap::new(),
            saved_names: std::collections::HashSet::new(),
            first_id: None,
            dialect: Dialect::PI,
            renamed: None,
            busy_timeout: None,
        }
    }

    fn file_len(&self) -> usize {
        self.file.as_ref().map_or(0, SessionFile::len)
    }

    /// The envelope of the entry at `at`, owned (the tree's `EntrySource::envelope`; empty
    /// past the end).
    pub(crate) fn node_info(&self, at: usize) -> NodeInfo {
        self.index
            .node(at)
            .map(pi_session_tree::NodeRef::to_info)
            .unwrap_or_default()
    }

    /// Whether the entry at `at` is read from the file (not appended since, nor held parsed).
    pub(crate) fn in_file(&self, at: usize) -> bool {
        // Most often no entry is held parsed: then no call to the map's lookup (a model's
        // search asks this of every message of a branch).
        at < self.file_len() && (self.values.is_empty() || !self.values.contains_key(&at))
    }

    pub(crate) fn index(&self) -> &TreeIndex {
        &self.index
    }

    pub(crate) fn record(&mut self, entry: Entry) {
        self.index.push(node_of(&entry));
        self.appended.push(entry);
    }

    pub(crate) fn entry(&self, position: usize) -> Result<Entry> {
        match &self.file {
            Some(file) if position < file.len() => Ok(file.entry(position)?),
            _ => self.appended_at(position).cloned(),
        }
    }

    /// The entries at `positions` (in file order), typed: the file's read in one batch on every
    /// core ([`SessionFile::entries_for`]), those appended since cloned. The first entry the
    /// typed model cannot read is the error.
    pub(crate) fn entries_at(&self, positions: &[usize]) -> Result<Vec<Entry>> {
        let file_len = self.file_len();
        let split = positions.partition_point(|&at| at < file_len);
        let mut entries = match &self.file {
            Some(file) if split > 0 => file.entries_for(&positions[..split])?,
            _ => Vec::new(),
        };
        for &at in &positions[split..] {
            entries.push(self.entry(at)?);
        }
        Ok(entries)
    }

    /// The entry appended at `position` (past the file's entries), borrowed.
    fn appended_at(&self, position: usize) -> Result<&Entry> {
        position
            .checked_sub(self.file_len())
            .and_then(|at| self.appended.get(at))
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "entry position {position} is past the end of the log"
                ))
            })
    }

    pub(crate) fn value(&mut self, position: usize) -> Result<JsonValue> {
        if let Some(value) = self.values.get(&position) {
            return Ok(value.clone());
        }
        let value = match &self.file {
            Some(file) if position < file.len() => {
                pi_session_tree::EntrySource::entry_value(file, position)?
            }
            _ => to_json(&self.entry(position)?),
        };
        self.values.insert(position, value.clone());
        Ok(value)
    }

    /// The entries at `positions` as JSON values: from the values read before, else the file's
    /// in one batch read ([`SessionFile::values_for`]), else the appended entries. Nothing is
    /// added to the values kept.
    pub(crate) fn values_at(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        let file_len = self.file_len();
        let from_file: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|at| *at < file_len && !self.values.contains_key(at))
            .collect();
        let mut read: HashMap<usize, JsonValue> = match &self.file {
            Some(file) if !from_file.is_empty() => {
                let values = pi_session_tree::EntrySource::entry_values(file, &from_file)?;
                from_file.into_iter().zip(values).collect()
            }
            _ => HashMap::new(),
        };
        positions
            .iter()
            .map(|&at| match (read.remove(&at), self.values.get(&at)) {
                (Some(value), _) => Ok(value),
                (None, Some(value)) => Ok(value.clone()),
                (None, None) if at >= file_len => Ok(to_json(self.appended_at(at)?)),
                (None, None) => Ok(to_json(&self.entry(at)?)),
            })
            .collect()
    }

    /// [`Self::values_at`] of those `positions` that may hold what a reader looks for, in
    /// order, each with its position: an entry of the file whose line `may_hold` refuses is
    /// left out, never parsed, and a `message` line is read as the keys `keys` names of it
    /// ([`SessionFile::values_that_may_hold`]: asked of each line's key filter, then of the
    /// bytes of those read). Entries not read from the file's lines (appended since, or kept
    /// as values) are always given, whole.
    pub(crate) fn values_that_may_hold(
        &self,
        positions: &[usize],
        may_hold: impl Fn(&str, LineKeys<'_>) -> bool + Sync,
        keys: &Keys,
    ) -> Result<Vec<(usize, JsonValue)>> {
        let Some(file) = &self.file else {
            return Ok(positions
                .iter()
                .copied()
                .zip(self.values_at(positions)?)
                .collect());
        };
        let (lines, others): (Vec<usize>, Vec<usize>) =
            positions.iter().partition(|&&at| self.in_file(at));
        let mut kept = file
            .values_that_may_hold(&lines, may_hold, keys)?
            .into_iter()
            .peekable();
        let mut others = self.values_at(&others)?.into_iter();
        let mut values = Vec::with_capacity(positions.len());
        for &at in positions {
            if !self.in_file(at) {
                values.extend(others.next().map(|value| (at, value)));
            } else if kept.peek().is_some_and(|(read, _)| *read == at) {
                values.extend(kept.next());
            }
        }
        Ok(values)
    }

    /// [`pi_session_tree::source::context_path`] over this log.
    pub(crate) fn context_path(
        &self,
        positions: &[usize],
        dialect: Dialect,
    ) -> Result<Vec<JsonValue>> {
        pi_session_tree::source::context_path(
            &LogSource { log: self },
            &self.index,
            positions,
            dialect,
        )
    }

    /// The kept context ([`ContextCache`]) brought to the branch `positions`: extended by the
    /// messages appended since when the branch only grew by messages, else read again.
    pub(crate) fn cached_context(
        &mut self,
        positions: Vec<usize>,
        dialect: Dialect,
    ) -> Result<&mut ContextCache> {
        let cache = match self.context.take() {
            Some(mut cache) if cache.extends_to(self, dialect, &positions) => {
                let added = self.values_at(&positions[cache.positions.len()..])?;
                cache.push(added);
                cache.positions = positions;
                cache
            }
            _ => {
                let path = self.context_path(&positions, dialect)?;
                let mut cache = ContextCache::new(dialect, positions);
                cache.push(path);
                cache
            }
        };
        Ok(self.context.insert(cache))
    }

    /// [`Self::cached_context`] for the branch ending at `leaf`. A host's turn only appended
    /// messages below the kept branch's tip: that is found by walking back from `leaf` over
    /// what was appended, without walking (or allocating) the whole branch again.
    pub(crate) fn cached_context_at(
        &mut self,
        leaf: Option<&str>,
        dialect: Dialect,
    ) -> Result<&mut ContextCache> {
        let grown = match (&self.context, leaf) {
            (Some(cache), Some(leaf)) if cache.dialect == dialect => cache
                .positions
                .last()
                .and_then(|&tip| self.grown_from(tip, leaf)),
            _ => None,
        };
        match grown {
            Some(added) => {
                let mut cache = self.context.take().ok_or_else(|| {
                    Error::invalid_input("the kept context went away while it was extended")
                })?;
                let values = self.values_at(&added)?;
                cache.push(values);
                cache.positions.extend(added);
                Ok(self.context.insert(cache))
            }
            None => {
                let positions = self.branch_positions(leaf);
                self.cached_context(positions, dialect)
            }
        }
    }

    /// The positions from below `tip` down to `leaf` (root first) when `leaf`'s branch is
    /// `tip`'s grown by `message` entries only; `None` otherwise.
    fn grown_from(&self, tip: usize, leaf: &str) -> Option<Vec<usize>> {
        let index = &self.index;
        let mut at = index.position_of(leaf)?;
        let mut added = Vec::new();
        // Entries appended after `tip` sit after it; the walk is bounded by their number.
        let most = index.len().saturating_sub(tip);
        while at != tip {
            if at < tip || added.len() >= most {
                return None;
            }
            let node = index.node(at)?;
            if node.kind != "message" || node.id.is_none() {
                return None;
            }
            added.push(at);
            at = index.position_of(pi_session_store::named_parent(node.parent_id)?)?;
        }
        added.reverse();
        Some(added)
    }

    /// rho's model in effect on the branch `positions` ([`crate::model_from`]): the
    /// `model_change` entries from the leaf back to the first that names a model, else the
    /// messages from the leaf back to the first assistant turn that does, a growing batch at a
    /// time ([`Self::first_named`]: only the fields the rule reads, no body is built).
    fn model_on(&self, positions: &[usize]) -> Result<Option<String>> {
        use pi_session_types::envelope_scan::KeyFilter;
        // An assistant message names a model with both keys (`named_model`): a line whose key
        // filter says it holds no `provider` or no `model` is not read (a branch of user turns
        // is not read through for a model none of it names).
        let names_a_model = KeyFilter::wanting(key::PROVIDER).union(KeyFilter::wanting(key::MODEL));
        for kind in ["model_change", "message"] {
            let of_kind = KindQuery::new(kind);
            let must_name = kind == "message";
            // Asked from the leaf back, a batch at a time: most branches name their model
            // near the leaf, and the positions before it are never looked at.
            let mut from_leaf = positions.iter().rev();
            let mut batch = 64;
            loop {
                let mut asked = Vec::new();
                for &at in from_leaf.by_ref() {
                    if self.index.is_kind(at, of_kind)
                        && (!must_name || self.may_hold_all(at, names_a_model))
                    {
                        asked.push(at);
                        if asked.len() == batch {
                            break;
                        }
                    }
                }
                if asked.is_empty() {
                    break;
                }
                if let Some(model) = self.first_named(&asked)? {
                    return Ok(Some(from_pi_model(&model)));
                }
                batch = (batch * 2).min(1 << 14);
            }
        }
        Ok(None)
    }

    /// Whether the entry at `at` may hold every key `keys` asks about: its line's key filter
    /// says so ([`SessionFile::key_filter`]), or it is not read from the file (appended, or
    /// held parsed), where any key may be.
    pub(crate) fn may_hold_all(
        &self,
        at: usize,
        keys: pi_session_types::envelope_scan::KeyFilter,
    ) -> bool {
        match &self.file {
            Some(file) if self.in_file(at) => file.key_filter(at).may_hold_all(keys),
            _ => true,
        }
    }

    /// The model ([`pi_session_tree::branch_facts::named_model`], as `provider/modelId`) named
    /// by the first entry of `positions` (in that order) that names one. Lines of the file are
    /// read as [`ModelFacts`] straight from their bytes, without building their JSON; a line
    /// that cannot hold an assistant role (neither the bytes `assistant` nor an escape `\u` in
    /// it) is not parsed at all; one serde_json does not read as it is (lone surrogates,
    /// damage), a migrated file's, and entries held parsed or appended are read as values.
    fn first_named(&self, positions: &[usize]) -> Result<Option<String>> {
        use pi_session_tree::branch_facts::named_model;
        use pi_session_types::model_facts::ModelFacts;
        let named_in = |value: &JsonValue| {
            named_model(ModelFacts::of_value(value)).map(|named| named.name().pi_string())
        };
        let from_lines = match &self.file {
            Some(file) if !file.is_migrated() && positions.iter().all(|&at| self.in_file(at)) => {
                file
            }
            _ => {
                let values = self.values_at(positions)?;
                return Ok(values.iter().find_map(named_in));
            }
        };
        let assistant = memchr::memmem::Finder::new(b"assistant");
        let escape = memchr::memmem::Finder::new(b"\\u");
        let read = from_lines.map_raw(positions, |_, at, bytes| {
            let no_assistant = at.envelope.kind() == "message"
                && assistant.find(bytes).is_none()
                && escape.find(bytes).is_none();
            if no_assistant {
                return Some(None);
            }
            let facts = ModelFacts::parse(bytes)?;
            let same_entry = facts.kind.as_deref() == Some(at.envelope.kind())
                && facts.id.as_deref() == at.envelope.id();
            same_entry.then(|| named_model(facts).map(|named| named.name().pi_string()))
        })?;
        for (&at, named) in positions.iter().zip(read) {
            let named = match named {
                Some(named) => named,
                None => self.values_at(&[at])?.iter().find_map(named_in),
            };
            if named.is_some() {
                return Ok(named);
            }
        }
        Ok(None)
    }

    /// Positions of the branch ending at `leaf`, root first (empty for no leaf).
    pub(crate) fn branch_positions(&self, leaf: Option<&str>) -> Vec<usize> {
        let Some(leaf) = leaf else { return Vec::new() };
        let index = self.index();
        index
            .position_of(leaf)
            .map(|at| index.branch(at).positions)
            .unwrap_or_default()
    }
}

impl Session {
    /// rho's `new/3`: a session in `dir` for the req_llm `model`, working in `cwd`. Nothing is
    /// written until the first [`append`](Self::append).
    pub fn new(dir: impl AsRef<Path>, model: impl Into<String>, cwd: impl Into<String>) -> Self {
        Self::with_options(dir, model, cwd, SessionOptions::default())
    }

    /// [`new`](Self::new) with a title, durability or title slot.
    pub fn with_options(
        dir: impl AsRef<Path>,
        model: impl Into<String>,
        cwd: impl Into<String>,
        options: SessionOptions,
    ) -> Self {
        let writer = SessionWriter::create(dir, new_header(cwd), options.writer_options());
        let mut log = Log::new(writer, options.title, None);
        log.dialect = options.dialect;
        Self::from_log(log, None, true, model.into())
    }

    /// [`with_options`](Self::with_options) for a session kept in `store`: the new session's
    /// path is `dir` joined with the file name omp and pi give it. Nothing is written until the
    /// first append, which writes slot, header and entry at once and never overwrites.
    pub fn create_in(
        store: &Store,
        dir: impl AsRef<Path>,
        model: impl Into<String>,
        cwd: impl Into<String>,
        options: SessionOptions,
    ) -> Self {
        let writer_options = options.writer_options();
        let header = new_header(cwd);
        let timestamp = header
            .timestamp
            .as_ref()
            .map_or_else(String::new, |t| t.as_str().to_owned());
        let name = pi_session_store::paths::session_file_name(&timestamp, &header.id);
        let writer = store.create_at(&dir.as_ref().join(name), header, writer_options);
        let mut log = Log::new(writer, options.title, None);
        log.dialect = options.dialect;
        Self::from_log(log, None, true, model.into())
    }

    /// A new session over a writer the caller built (nothing written yet), e.g. one with a fixed
    /// clock and id source ([`SessionWriter::with_stamps`]) for reproducible files. `title` is
    /// used as [`SessionOptions::title`] is.
    ///
    /// ```
    /// use pi_session::Session;
    /// use pi_session_store::{SessionWriter, new_header};
    /// let writer = SessionWriter::in_memory(new_header("/work"));
    /// let session = Session::from_writer(writer, "anthropic:claude-sonnet-4-5", None);
    /// assert!(session.leaf_id().is_none());
    /// ```
    pub fn from_writer(
        writer: SessionWriter,
        model: impl Into<String>,
        title: Option<String>,
    ) -> Self {
        Self::from_log(Log::new(writer, title, None), None, true, model.into())
    }

    /// A session that lives in memory only: the same API, no file.
    pub fn in_memory(model: impl Into<String>, cwd: impl Into<String>) -> Self {
        let writer = SessionWriter::in_memory(new_header(cwd));
        Self::from_log(Log::new(writer, None, None), None, true, model.into())
    }

    pub(crate) fn from_log(log: Log, leaf: Option<String>, at_start: bool, model: String) -> Self {
        Self {
            log: Arc::new(Mutex::new(log)),
            leaf,
            at_start,
            model,
            name: None,
        }
    }

    /// This cursor's leaf as the log stands (a cursor at the start follows the first entry).
    pub(crate) fn leaf_in(&self, log: &Log) -> Option<String> {
        if self.at_start {
            log.first_id.clone()
        } else {
            self.leaf.clone()
        }
    }

    /// Where this cursor is, to remember under a branch name.
    pub(crate) fn position(&self) -> Position {
        Position {
            leaf: self.leaf.clone(),
            at_start: self.at_start,
            model: self.model.clone(),
        }
    }

    /// rho's `open/2`: the session at `path`, its leaf at the last entry with an id, its model
    /// the one in effect on that branch (else `default_model`, a req_llm spec); with the branch
    /// (root first) and what was wrong with the file.
    ///
    /// Reads every file the store reads: version 1 and 2 files are migrated in memory (as pi
    /// does), damaged lines and a missing header are [`Diagnostic`]s. Appending is refused only
    /// where it must be: a file without a header ([`Error::is_not_a_session`]) and a version 1 or
    /// 2 file ([`ErrorKind::NeedsMigration`](crate::ErrorKind::NeedsMigration)); both errors name
    /// the way out ([`Session::migrate`], [`Session::fork_to`]). The dialect the session writes
    /// in is detected from the file ([`Session::set_dialect`] overrides it).
    ///
    /// Errors: the file cannot be read ([`Error::is_io`]) or is not a file
    /// ([`ErrorKind::NotAFile`](crate::ErrorKind::NotAFile)).
    pub fn open(path: impl AsRef<Path>, default_model: &str) -> Result<Opened> {
        Self::open_in(&Store::Files, path, default_model)
    }

    /// [`open`](Self::open) for a session kept in `store` (files, memory, Redis): `path` is the
    /// session's path as omp names it. Appends go back to the same store, with the same
    /// guarantees (see [`pi_session_store::Store`]).
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, SessionOptions};
    /// use pi_session_store::{MemoryStore, Store};
    /// let store = Store::keyed(MemoryStore::new());
    /// let mut session = Session::create_in(&store, "/sessions/--w--", "anthropic:claude-sonnet-4-5", "/w", SessionOptions::default());
    /// session.append(pi_session::user("hi", pi_session::UserOptions::new()))?;
    /// let path = session.path().expect("a keyed session has a path");
    /// let opened = Session::open_in(&store, &path, "unknown:unknown")?;
    /// assert_eq!(opened.session.entries()?.len(), session.entries()?.len());
    /// # Ok(()) }
    /// ```
    pub fn open_in(store: &Store, path: impl AsRef<Path>, default_model: &str) -> Result<Opened> {
        let (session, diagnostics) = Self::resume_in(store, path, default_model)?;
        let branch = session.branch()?;
        Ok(Opened {
            session,
            branch,
            diagnostics,
        })
    }

    /// [`Session::open`] without the branch: what a host resuming a session needs. No body
    /// is typed; only the bodies that name the model in effect are read (the branch's
    /// `model_change` entries, else its messages from the leaf back to the last assistant
    /// turn), so memory stays with the file's index (see [`Session::turn_context`] for the
    /// context). [`Session::branch`] gives the branch when it is wanted.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, UserOptions, user};
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut session = Session::new(dir.path(), "anthropic:claude-sonnet-4-5", "/work");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let (resumed, diagnostics) = Session::resume(session.path().unwrap(), "openai:gpt-5")?;
    /// assert!(diagnostics.is_empty());
    /// assert_eq!(resumed.model(), "anthropic:claude-sonnet-4-5");
    /// assert_eq!(resumed.leaf_id(), session.leaf_id());
    /// # Ok(()) }
    /// ```
    pub fn resume(
        path: impl AsRef<Path>,
        default_model: &str,
    ) -> Result<(Session, Vec<Diagnostic>)> {
        Self::resume_in(&Store::Files, path, default_model)
    }

    /// [`resume`](Self::resume) for a session kept in `store` (see [`open_in`](Self::open_in)).
    pub fn resume_in(
        store: &Store,
        path: impl AsRef<Path>,
        default_model: &str,
    ) -> Result<(Session, Vec<Diagnostic>)> {
        Self::resume_with(store, path.as_ref(), default_model, true)
    }

    /// [`resume_in`](Self::resume_in) for reading only: the same session, answers and
    /// diagnostics, without preparing a writer (no id set is built; every append is refused).
    /// What a one-shot reader such as `pi-session context` or `check` needs.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, UserOptions, user};
    /// use pi_session::store::Store;
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut session = Session::new(dir.path(), "anthropic:claude-sonnet-4-5", "/work");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let (mut read, _) = Session::read_in(&Store::Files, session.path().unwrap(), "unknown:unknown")?;
    /// assert_eq!(read.leaf_id(), session.leaf_id());
    /// assert!(read.append(user("more", UserOptions::new())).is_err());
    /// # Ok(()) }
    /// ```
    pub fn read_in(
        store: &Store,
        path: impl AsRef<Path>,
        default_model: &str,
    ) -> Result<(Session, Vec<Diagnostic>)> {
        Self::resume_with(store, path.as_ref(), default_model, false)
    }

    fn resume_with(
        store: &Store,
        path: &Path,
        default_model: &str,
        writable: bool,
    ) -> Result<(Session, Vec<Diagnostic>)> {
        let (file, file_diagnostics) = store.open(path)?;
        let resumed = if writable {
            store
                .resume(path, &file, WriterOptions::default())
                .map_err(Error::from)
        } else {
            Err(Error::invalid_input(format!(
                "{} was opened for reading only (Session::read_in); open it with Session::open to append",
                path.display()
            )))
        };
        let sink = match resumed {
            Ok(writer) => Sink::Open(writer),
            Err(why) => Sink::Refused {
                path: path.to_path_buf(),
                header: file.header().cloned(),
                why,
            },
        };
        // One index, built once: detection reads it, then the log keeps it.
        let view = pi_session_tree::SessionView::new(&file);
        let dialect = view.detect_dialect()?;
        let index = view.into_index();
        let title = file.title().map(str::to_owned);
        let mut log = Log::indexed(sink, title, Some(file), index);
        log.dialect = dialect;
        let leaf = log.index().leaf_id().map(str::to_owned);
        let walk = match log.index().leaf_position() {
            Some(at) => log.index().branch(at),
            None => pi_session_tree::Branch::default(),
        };
        let model = log
            .model_on(&walk.positions)?
            .unwrap_or_else(|| default_model.to_owned());
        let mut session = Self::from_log(log, leaf, false, model);
        let mut diagnostics: Vec<Diagnostic> = file_diagnostics
            .into_iter()
            .map(Diagnostic::from_file)
            .collect();
        // The store already reported a dangling `parentId` at its line; the walk's cut there is
        // the same fact.
        let located = session.located(walk.diagnostics);
        let reported = |cut: &Diagnostic| {
            let is_cut = cut
                .tree()
                .is_some_and(|t| t.kind == pi_session_tree::DiagnosticKind::MissingParent);
            is_cut
                && diagnostics.iter().any(|d| {
                    d.line() == cut.line()
                        && d.file().is_some_and(|f| {
                            matches!(
                                f.kind,
                                pi_session_store::DiagnosticKind::ParentNotFound { .. }
                            )
                        })
                })
        };
        let walk: Vec<Diagnostic> = located.into_iter().filter(|d| !reported(d)).collect();
        diagnostics.extend(walk);
        crate::cursors::restore(&mut session)?;
        Ok((session, diagnostics))
    }

    /// How long this session's writes wait for another writer (see
    /// [`SessionOptions::busy_timeout`]); for every cursor of the log. Waiting writes end with
    /// [`ErrorKind::Busy`](crate::ErrorKind::Busy) when the time is up.
    ///
    /// Entries other writers appended meanwhile are caught up on by the store (their ids are
    /// never reused, and this session appends after them), but they are not added to this
    /// session's own view: each cursor continues its own branch, and [`Session::open`] shows
    /// the others' entries.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use std::time::Duration;
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut session = pi_session::Session::new(dir.path(), "anthropic:claude-x", "/w");
    /// session.set_busy_timeout(Some(Duration::from_secs(5)));
    /// session.append(pi_session::user("hello", pi_session::UserOptions::new()))?;
    /// # Ok(()) }
    /// ```
    pub fn set_busy_timeout(&mut self, timeout: Option<Duration>) {
        let mut log = self.log();
        log.busy_timeout = timeout;
        if let Sink::Open(writer) = &mut log.writer {
            writer.set_busy_timeout(timeout);
        }
    }

    pub(crate) fn log(&self) -> MutexGuard<'_, Log> {
        // A panic while the lock was held cannot leave the log half-updated: every update
        // happens after the write it records succeeded.
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The session id (the header's; empty for a file without a header).
    pub fn id(&self) -> String {
        self.log()
            .writer
            .header()
            .map(|h| h.id.clone())
            .unwrap_or_default()
    }

    /// The file (`None` for an in-memory session).
    pub fn path(&self) -> Option<PathBuf> {
        self.log().writer.path().map(Path::to_path_buf)
    }

    /// The header (as written, or as the first append will write it, title aside); `None` for
    /// a file without one.
    pub fn header(&self) -> Option<SessionHeader> {
        self.log().writer.header().cloned()
    }

    /// The working directory in the header.
    pub fn cwd(&self) -> Option<String> {
        self.log().writer.header().and_then(|h| h.cwd.clone())
    }

    /// The title: the one set with [`SessionOptions::title`], else the one the first append
    /// derived ([`title_for`]), else the file's (omp's header or title slot). omp files keep it
    /// in the header; pi files do not (a pi session's name is [`Session::name`]).
    pub fn title(&self) -> Option<String> {
        let log = self.log();
        log.title
            .clone()
            .or_else(|| log.writer.header().and_then(|h| h.title.clone()))
    }

    /// The model in effect at this cursor (a req_llm spec).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The leaf: the parent of the next append (`None`: a new root, or nothing written yet).
    pub fn leaf_id(&self) -> Option<String> {
        let log = self.log();
        self.leaf_in(&log)
    }

    /// This cursor's branch name, for a cursor made with [`fork_named`](Self::fork_named) or
    /// [`checkout`](Self::checkout).
    pub fn branch_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether anything is on disk (or in memory) yet.
    pub fn is_written(&self) -> bool {
        self.log().writer.is_written()
    }

    /// rho's `append/2`: adds `entry` after this cursor's leaf and returns it as read back from
    /// the bytes written (with its `id`, `parentId` and `timestamp`).
    ///
    /// The first append of a new session writes the header (the title set, else
    /// [`title_for`] this entry; `titleSource:"auto"`) and a `model_change` to the session's
    /// model first. Appending a `model_change` changes this cursor's model.
    pub fn append(&mut self, entry: Entry) -> Result<Entry> {
        let log_handle = Arc::clone(&self.log);
        let mut log = log_handle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !log.writer.is_written() {
            let title = log
                .title
                .clone()
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| title_for(&entry));
            let first = model_change_in(log.dialect, &self.model);
            let titled = log.dialect.has_title_slot();
            log.title = Some(title.clone());
            let writer = log.writer.writer()?;
            if titled {
                // pi keeps no title in its header (its name is a `session_info` entry), and a
                // header title marks a file as omp's.
                writer.set_title(Some(&title), Some(TitleSource::Auto))?;
            }
            writer.set_leaf(None)?;
            let change = writer.append(first)?;
            log.first_id = change.id().map(str::to_owned);
            log.record(change);
        }
        self.leaf = self.leaf_in(&log);
        self.at_start = false;
        if let Some(name) = &self.name
            && !log.saved_names.contains(name)
        {
            let writer = log.writer.writer()?;
            writer.set_leaf(self.leaf.as_deref())?;
            let record = writer.append(crate::cursors::record(name))?;
            self.leaf = record.id().map(str::to_owned);
            log.saved_names.insert(name.clone());
            log.record(record);
        }
        let writer = log.writer.writer()?;
        writer.set_leaf(self.leaf.as_deref())?;
        let written = writer.append(entry)?;
        self.leaf = written.id().map(str::to_owned);
        if let Some(model) = changed_model(&written) {
            self.model = model;
        }
        if let Some(name) = &self.name {
            log.names.insert(name.clone(), self.position());
        }
        log.record(written.clone());
        Ok(written)
    }

    /// A new cursor at this one's leaf, on the same log. Appends through either go to the one
    /// file; each cursor keeps its own leaf and model. A cursor made before anything is written
    /// starts after the session's first `model_change`, whichever cursor writes it.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{ProjectOptions, Reply, Session, UserOptions, assistant, user};
    /// let mut main = Session::in_memory("anthropic:claude-x", "/w");
    /// main.append(user("pick a name", UserOptions::new()))?;
    /// let mut side = main.fork();
    /// main.append(assistant(&Reply { text: "Ada".into(), ..Reply::default() }, main.model()))?;
    /// side.append(assistant(&Reply { text: "Grace".into(), ..Reply::default() }, side.model()))?;
    /// let last = |s: &Session| s.context(&ProjectOptions::default()).map(|m| m.last().map(|m| m.text()));
    /// assert_eq!(last(&main)?.as_deref(), Some("Ada"));
    /// assert_eq!(last(&side)?.as_deref(), Some("Grace"));
    /// # Ok(()) }
    /// ```
    pub fn fork(&self) -> Session {
        Session {
            log: Arc::clone(&self.log),
            leaf: self.leaf.clone(),
            at_start: self.at_start,
            model: self.model.clone(),
            name: None,
        }
    }

    /// A new cursor at this one's leaf, named `name`: the name follows the cursor's appends,
    /// and [`checkout`](Self::checkout) finds its tip again. Names live as long as the log.
    ///
    /// The cursor's first append saves the name in the file first (a `custom` entry of type
    /// [`CURSOR_CUSTOM_TYPE`](crate::CURSOR_CUSTOM_TYPE) at the fork point, which pi and omp
    /// leave out of the context); [`Session::open`] restores every saved name at the last entry
    /// written below its record. A named cursor that never appends is not saved.
    pub fn fork_named(&self, name: impl Into<String>) -> Session {
        let name = name.into();
        self.log().names.insert(name.clone(), self.position());
        Session {
            name: Some(name),
            ..self.fork()
        }
    }

    /// A cursor at the tip of the branch named `name`.
    pub fn checkout(&self, name: &str) -> Result<Session> {
        let position = self.log().names.get(name).cloned().ok_or_else(|| {
            Error::invalid_input(format!(
                "no branch is named {name:?}; name one with fork_named"
            ))
        })?;
        Ok(Session {
            log: Arc::clone(&self.log),
            leaf: position.leaf,
            at_start: position.at_start,
            model: position.model,
            name: Some(name.to_owned()),
        })
    }

    /// The names of the named branches, sorted.
    pub fn branch_names(&self) -> Vec<String> {
        self.log().names.keys().cloned().collect()
    }

    /// A cursor at the end of every branch ([`tips`](Self::tips), in file order): what a viewer
    /// or a check walks to see each branch as its own conversation.
    pub fn tip_cursors(&self) -> Result<Vec<Session>> {
        self.tips()
            .iter()
            .map(|tip| {
                let mut cursor = self.fork();
                cursor.branch_to(tip)?;
                Ok(cursor)
            })
            .collect()
    }

    /// Moves this cursor to entry `id` (pi's `branch`): the next append becomes its child.
    /// The model becomes the one in effect there (unchanged if the branch names none).
    pub fn branch_to(&mut self, id: &str) -> Result<()> {
        let leaf = {
            let log = self.log();
            pi_session_tree::branch_to(log.index(), id)?
        };
        self.leaf = leaf;
        self.at_start = false;
        if let Some(model) = model_from(&self.branch()?) {
            self.model = model;
        }
        Ok(())
    }

    /// Moves this cursor before the first entry: the next append starts a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
        self.at_start = false;
    }

    /// Moves to `from` (or before the first entry for `None`) and appends a `branch_summary`
    /// of the branch being left (pi's `branchWithSummary`); returns the appended entry.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<JsonValue>,
    ) -> Result<Entry> {
        let plan = {
            let log = self.log();
            pi_session_tree::branch_with_summary(
                log.index(),
                from,
                summary,
                details,
                None,
                Dialect::PI,
            )?
        };
        let JsonValue::Object(map) = plan.entry else {
            return Err(Error::invalid_input(
                "the planned branch summary is not a JSON object",
            ));
        };
        self.leaf = plan.leaf;
        self.at_start = false;
        self.append(Entry::from_map(map))
    }

    /// Every entry of the log in file order.
    pub fn entries(&self) -> Result<Vec<Entry>> {
        let log = self.log();
        (0..log.index.len()).map(|at| log.entry(at)).collect()
    }

    /// The entries on this cursor's branch, root first.
    pub fn branch(&self) -> Result<Vec<Entry>> {
        let log = self.log();
        let leaf = self.leaf_in(&log);
        let positions = log.branch_positions(leaf.as_deref());
        positions.into_iter().map(|at| log.entry(at)).collect()
    }

    /// This cursor's branch as JSON values (keys as in the file), for the projections: read in
    /// one batch, and not kept (a long branch is read once, not held twice).
    #[cfg(test)]
    pub(crate) fn branch_values(&self) -> Result<Vec<JsonValue>> {
        let log = self.log();
        let leaf = self.leaf_in(&log);
        let positions = log.branch_positions(leaf.as_deref());
        log.values_at(&positions)
    }

    /// rho's part of this cursor's branch ([`Session::rho_values_at`]): as long as the branch,
    /// with the bodies nothing sends or names left as envelopes.
    pub(crate) fn rho_branch_values(&self) -> Result<Vec<JsonValue>> {
        let log = self.log();
        let leaf = self.leaf_in(&log);
        let positions = log.branch_positions(leaf.as_deref());
        pi_session_tree::source::rho_path(&LogSource { log: &log }, &log.index, &positions)
    }

    /// rho's `context/2` for this cursor's branch: the req_llm messages to send. Only the
    /// bodies rho may send or name are read ([`pi_session_tree::source::rho_sent_path`]).
    pub fn context(&self, options: &ProjectOptions<'_>) -> Result<Vec<Message>> {
        let entries = self.entries_for(pi_session_context::Format::ReqLlm, Dialect::PI)?;
        Ok(pi_session_context::rho::context(&entries, options))
    }

    /// The branch's entries a projection to `format` reads: the dialect's sent part
    /// ([`pi_session_tree::source::context_path`]) for the agent formats, rho's
    /// ([`pi_session_tree::source::rho_sent_path`]: only the entries it reads) for the others;
    /// bodies nothing reads are left unread. The projection over them equals it over every body
    /// of the branch.
    pub(crate) fn entries_for(
        &self,
        format: pi_session_context::Format,
        dialect: Dialect,
    ) -> Result<Vec<JsonValue>> {
        use pi_session_context::Format;
        let log = self.log();
        let leaf = self.leaf_in(&log);
        let positions = log.branch_positions(leaf.as_deref());
        match format {
            Format::Agent | Format::Llm => log.context_path(&positions, dialect),
            Format::OmpAgentLoop => log.context_path(&positions, Dialect::OMP),
            _ => pi_session_tree::source::rho_sent_path(
                &LogSource { log: &log },
                &log.index,
                &positions,
            ),
        }
    }

    /// The dialect's `buildSessionContext` for this cursor's branch (what pi or omp would
    /// rebuild from the file), with the resolver's diagnostics.
    ///
    /// Only the bodies the context needs are read ([`pi_session_tree::source::context_path`]):
    /// after the latest compaction, its kept range onwards, plus the settings entries. The
    /// entries read are kept (one branch per log): when the branch only grew by messages since
    /// the last call, as in a host's turn, only those are read and added.
    pub fn agent_context(
        &self,
        dialect: Dialect,
        options: &ContextOptions<'_>,
    ) -> Result<(AgentContext, Vec<Diagnostic>)> {
        let (context, diagnostics) = {
            let mut log = self.log();
            let leaf = self.leaf_in(&log);
            let positions = log.branch_positions(leaf.as_deref());
            if options.blobs.is_some() {
                // Blob references are resolved (and reported) on each call: nothing is kept.
                let path = log.context_path(&positions, dialect)?;
                pi_session_tree::context::agent_context_owned(path, dialect, options)
            } else {
                log.cached_context(positions, dialect)?.build()
            }
        };
        Ok((context, self.located(diagnostics)))
    }

    /// How full the model's window is with this cursor's context (its stamps applied; the
    /// distributions of [`crate::manage`]): [`Session::prepare_context`]'s statistics without a
    /// budget, computed a chunk of entries at a time ([`crate::manage`]'s `streamed`) so that
    /// memory stays with the index however long the branch is.
    pub fn context_stats(
        &self,
        project: &ProjectOptions<'_>,
        options: &StatsOptions<'_>,
    ) -> Result<ContextStats> {
        let overlay = self.resolutions()?;
        if let Some(stats) =
            crate::manage::streamed::streamed_stats(self, &overlay, project, options)?
        {
            return Ok(stats);
        }
        let prepare = crate::manage::PrepareOptions {
            project: *project,
            stats: *options,
            ..crate::manage::PrepareOptions::default()
        };
        Ok(self.prepare_context(&prepare)?.stats)
    }

    /// The leaf selector for this cursor (for the tree's APIs).
    pub fn leaf_selector(&self) -> LeafSelector {
        self.leaf_id().map_or(LeafSelector::Null, LeafSelector::Id)
    }
}

/// The req_llm spec a read-back `model_change` switches to (rho reads `model`; pi's
/// `provider`/`modelId` shape is read too).
fn changed_model(entry: &Entry) -> Option<String> {
    let Entry::ModelChange(change) = entry else {
        return None;
    };
    if let Some(model) = &change.model {
        return Some(from_pi_model(model));
    }
    change
        .provider_and_model_id()
        .map(|(provider, id)| from_pi_model(&format!("{provider}/{id}")))
}
