//! Tree questions on a [`Session`], over the live log (the file as opened plus every append
//! since, through any cursor): entries by id, children, labels, tips, the session's name, the
//! tree as JSON, and the whole index for a caller that walks or draws it ([`Session::tree`]).

use std::sync::MutexGuard;

use pi_session_tree::{LeafSelector, TreeIndex, session_meta, tree_json};
use pi_session_types::{Entry, JsonMap, JsonValue};

use crate::diagnostic::Diagnostic;
use crate::error::Result;
use crate::session::{Log, Session};

/// The tree of the live log, read under the session's lock ([`Session::tree`]): the index
/// (every entry's id, parent and type by position, roots, children, tips, the leaf) and each
/// entry by position. Appends through the session's other cursors wait until it is dropped.
pub struct TreeRead<'a> {
    log: MutexGuard<'a, Log>,
}

impl std::fmt::Debug for TreeRead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeRead")
            .field("entries", &self.log.index.len())
            .finish_non_exhaustive()
    }
}

impl TreeRead<'_> {
    /// The tree index over the file's entries and those appended since (positions in file
    /// order).
    pub fn index(&self) -> &TreeIndex {
        &self.log.index
    }

    /// The entry at `position`, typed (as [`Session::entry_at`] reads it).
    pub fn entry(&self, position: usize) -> Result<Entry> {
        self.log.entry(position)
    }
}

impl Session {
    /// How many entries the log holds (the file's and those appended since).
    pub fn len(&self) -> usize {
        self.log().index.len()
    }

    /// Whether the log holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the resolver finds walking the branch pi and omp walk when they open the file (from
    /// its last entry): cycles, missing parents, each placed at its entry's line in the file.
    pub fn tree_diagnostics(&self) -> Vec<Diagnostic> {
        let diagnostics = self
            .log()
            .index
            .branch_for(&LeafSelector::Default)
            .diagnostics;
        self.located(diagnostics)
    }

    /// The line and byte offset in the file of the entry at `position` (as diagnostics name
    /// them); `None` for entries appended since opening.
    pub fn locate(&self, position: usize) -> Option<(u64, u64)> {
        let log = self.log();
        let at = log.file.as_ref()?.index().get(position)?;
        Some((at.line, at.byte_offset))
    }

    /// The entry with id `id` (the last one, if a damaged file has it twice), if any.
    pub fn entry(&self, id: &str) -> Result<Option<Entry>> {
        let log = self.log();
        log.index
            .position_of(id)
            .map(|at| log.entry(at))
            .transpose()
    }

    /// The entries whose parent is `id`, in file order.
    pub fn children(&self, id: &str) -> Result<Vec<Entry>> {
        let log = self.log();
        log.index
            .children(id)
            .iter()
            .map(|&at| log.entry(at))
            .collect()
    }

    /// Every label in effect, by target id (a later `label` entry replaces or clears an earlier
    /// one, as in pi and omp).
    pub fn labels(&self) -> Result<JsonMap> {
        let mut log = self.log();
        let positions: Vec<usize> = log.index.positions_of_kind("label").collect();
        let values = positions
            .into_iter()
            .map(|at| log.value(at))
            .collect::<Result<Vec<_>>>()?;
        Ok(session_meta::labels(&values))
    }

    /// The label of entry `id`, if it has one.
    pub fn label(&self, id: &str) -> Result<Option<String>> {
        Ok(self
            .labels()?
            .get(id)
            .and_then(JsonValue::as_str)
            .map(str::to_owned))
    }

    /// The ids of the tips: entries no other entry names as its parent (the ends of every
    /// branch), in file order.
    pub fn tips(&self) -> Vec<String> {
        let log = self.log();
        log.index
            .tips()
            .into_iter()
            .filter_map(|at| log.index.node(at).and_then(|n| n.id).map(str::to_owned))
            .collect()
    }

    /// The session's name as the dialect's agent shows it: pi's latest `session_info` name; omp's
    /// title (the title slot's, else the header's).
    pub fn name(&self) -> Result<Option<String>> {
        let mut log = self.log();
        if !log.dialect.has_title_slot() {
            let positions: Vec<usize> = log.index.positions_of_kind("session_info").collect();
            let values = positions
                .into_iter()
                .map(|at| log.value(at))
                .collect::<Result<Vec<_>>>()?;
            return Ok(session_meta::pi_session_name(&values));
        }
        if let Some(name) = &log.renamed {
            return Ok(Some(name.clone()));
        }
        let header = log.writer.header().map(crate::read::to_json);
        let slot = log
            .file
            .as_ref()
            .and_then(|f| f.title_slot().map(|s| s.title.clone()));
        Ok(session_meta::omp_session_title(
            slot.as_deref(),
            header.as_ref(),
        ))
    }

    /// The tree as JSON: `{"leafId", "branchIds", "tips", "labels"}` for the file's leaf (the
    /// last entry, as pi and omp pick it: none when that line has no id).
    pub fn tree_json(&self) -> Result<JsonValue> {
        let labels = self.labels()?;
        Ok(tree_json(&self.log().index, &labels))
    }

    /// The tree of the live log, to walk or draw it (the CLI's `tree` draws it): the index and
    /// each entry by position, read under one lock. Take [`Self::labels`] and the name first:
    /// the session's other methods wait while it is held.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, UserOptions, user};
    /// let dir = tempfile::tempdir().unwrap();
    /// let mut session = Session::new(dir.path(), "anthropic:claude-sonnet-4-5", "/work");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let tree = session.tree();
    /// let leaf = tree.index().leaf_position().unwrap();
    /// assert_eq!(tree.entry(leaf)?.kind(), "message");
    /// assert_eq!(tree.index().roots(), [0]); // the first model_change
    /// # Ok(()) }
    /// ```
    pub fn tree(&self) -> TreeRead<'_> {
        TreeRead { log: self.log() }
    }
}
