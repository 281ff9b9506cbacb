//! The tree index: ids, parent links, leaf, branches, children and tips, built
//! from entry envelopes only.
//!
//! Building the index needs just `type`, `id` and `parentId` of every entry in
//! file order, so a 200 MB session is indexed without loading message bodies.
//! Every walk is bounded: a cycle or a missing parent ends it with a
//! [`Diagnostic`], never a hang.

use std::sync::{Arc, OnceLock};

use pi_session_store::{EntryTable, KindQuery};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::node_maps::{ChildMap, IdMap, ParentLinks};

/// The envelope of one entry: what the tree needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeInfo {
    /// The entry's `type`.
    pub kind: String,
    /// The entry's `id`, when it is a string.
    pub id: Option<String>,
    /// The entry's `parentId`, when it is a string (`null` and a missing key are
    /// both `None`).
    pub parent_id: Option<String>,
}

impl NodeInfo {
    /// This envelope, borrowed.
    pub fn borrowed(&self) -> NodeRef<'_> {
        NodeRef {
            kind: &self.kind,
            id: self.id.as_deref(),
            parent_id: self.parent_id.as_deref(),
        }
    }

    /// Reads the envelope of an entry given as a JSON object. Non-string ids
    /// and parent ids count as absent.
    pub fn from_value(entry: &Value) -> Self {
        let entry = pi_session_types::view::EntryRef::new(entry);
        Self {
            kind: entry.kind().unwrap_or_default().to_owned(),
            id: entry.id().map(str::to_owned),
            parent_id: entry.parent_id().and_then(Value::as_str).map(str::to_owned),
        }
    }
}

/// The envelope of one entry as the index holds it: borrowed from the store's table
/// ([`TreeIndex::from_table`]) or from the [`NodeInfo`] it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NodeRef<'a> {
    /// The entry's `type`.
    pub kind: &'a str,
    /// The entry's `id`, when it is a string.
    pub id: Option<&'a str>,
    /// The entry's `parentId`, when it is a string (`null` and a missing key are
    /// both `None`).
    pub parent_id: Option<&'a str>,
}

impl NodeRef<'_> {
    /// An owned copy.
    pub fn to_info(self) -> NodeInfo {
        NodeInfo {
            kind: self.kind.to_owned(),
            id: self.id.map(str::to_owned),
            parent_id: self.parent_id.map(str::to_owned),
        }
    }
}

/// The envelopes an index is over: the store's table, shared and never copied
/// ([`TreeIndex::from_table`]), then the entries given one by one (all of them for
/// [`TreeIndex::from_nodes`]; those a host appends with [`TreeIndex::push`]).
#[derive(Clone, Default)]
pub(crate) struct Nodes {
    table: Option<Arc<EntryTable>>,
    given: Vec<NodeInfo>,
}

impl Nodes {
    /// The store's table, when the index was built over one.
    pub(crate) fn table(&self) -> Option<&EntryTable> {
        self.table.as_deref()
    }

    #[inline]
    fn table_len(&self) -> usize {
        self.table.as_ref().map_or(0, |table| table.len())
    }

    pub(crate) fn len(&self) -> usize {
        self.table_len() + self.given.len()
    }

    pub(crate) fn get(&self, at: usize) -> Option<NodeRef<'_>> {
        let table_len = self.table_len();
        if at < table_len {
            let envelope = &self.table.as_ref()?.entries().get(at)?.envelope;
            return Some(NodeRef {
                kind: envelope.kind(),
                id: envelope.id(),
                parent_id: envelope.parent_id(),
            });
        }
        self.given.get(at - table_len).map(NodeInfo::borrowed)
    }

    /// The `type` of the entry at `at`.
    pub(crate) fn kind_at(&self, at: usize) -> Option<&str> {
        let table_len = self.table_len();
        if at < table_len {
            return self.table.as_ref()?.kind(at);
        }
        self.given
            .get(at - table_len)
            .map(|node| node.kind.as_str())
    }

    /// Whether the entry at `at` is of the type `kind` asks about: the store's table answers for
    /// its entries from a byte ([`EntryTable::is_kind`]).
    #[inline]
    pub(crate) fn is_kind(&self, at: usize, kind: KindQuery<'_>) -> bool {
        let table_len = self.table_len();
        if at < table_len {
            return self
                .table
                .as_ref()
                .is_some_and(|table| table.is_kind(at, kind));
        }
        self.given
            .get(at - table_len)
            .is_some_and(|node| node.kind == kind.kind())
    }

    /// Whether the entry at `at` has an id ([`Self::id_at`] is `Some`).
    #[inline]
    pub(crate) fn has_id(&self, at: usize) -> bool {
        let table_len = self.table_len();
        if at < table_len {
            return self
                .table
                .as_ref()
                .and_then(|table| table.entries().get(at))
                .is_some_and(|entry| entry.envelope.has_id());
        }
        self.given
            .get(at - table_len)
            .is_some_and(|node| node.id.is_some())
    }

    /// Every `type` of the entries, each once (the table's first: [`EntryTable::kinds_present`]).
    /// A set keeps it linear however many types the entries given after the table have.
    pub(crate) fn kinds_present(&self) -> Vec<&str> {
        let mut present = self
            .table
            .as_ref()
            .map(|table| table.kinds_present())
            .unwrap_or_default();
        if !self.given.is_empty() {
            let mut seen: std::collections::HashSet<&str> = present.iter().copied().collect();
            for node in &self.given {
                if seen.insert(&node.kind) {
                    present.push(&node.kind);
                }
            }
        }
        present
    }

    /// The positions of the entries of type `kind`, in order: the store's table answers for
    /// its entries (from a byte an entry, [`EntryTable::positions_of_kind`]).
    fn positions_of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = usize> + 'a {
        let table_len = self.table_len();
        let table = self
            .table
            .iter()
            .flat_map(move |table| table.positions_of_kind(kind));
        let given = self
            .given
            .iter()
            .enumerate()
            .filter(move |(_, node)| node.kind == kind)
            .map(move |(at, _)| table_len + at);
        table.chain(given)
    }

    /// The id of the entry at `at`.
    pub(crate) fn id_at(&self, at: usize) -> Option<&str> {
        let table_len = self.table_len();
        if at < table_len {
            return self.table.as_ref()?.entries().get(at)?.envelope.id();
        }
        self.given.get(at - table_len)?.id.as_deref()
    }

    /// The `parentId` of the entry at `at`.
    pub(crate) fn parent_id_at(&self, at: usize) -> Option<&str> {
        self.get(at)?.parent_id
    }

    fn iter(&self) -> impl DoubleEndedIterator<Item = NodeRef<'_>> + ExactSizeIterator + '_ {
        (0..self.len()).map(|at| self.get(at).unwrap_or_default())
    }
}

/// Which entry a question is asked about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LeafSelector {
    /// The leaf the real implementation uses after opening the file: the last
    /// entry in file order.
    #[default]
    Default,
    /// Before the first entry (`leafId === null`): an empty context.
    Null,
    /// A given entry id; an unknown id falls back to the last entry (pi and omp
    /// both do this), with a diagnostic.
    Id(String),
}

impl LeafSelector {
    /// Parses the CLI form: `null` means [`LeafSelector::Null`], anything else
    /// is an id.
    pub fn parse(text: &str) -> Self {
        if text == "null" {
            Self::Null
        } else {
            Self::Id(text.to_owned())
        }
    }
}

/// A branch: entry positions from the root to the leaf, with what cut it short.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Branch {
    /// Positions in file order of the entries on the path, root first.
    pub positions: Vec<usize>,
    /// Why the walk ended early (cycle, missing parent), if it did.
    pub diagnostics: Vec<Diagnostic>,
}

/// Index over the entries of one session (header excluded), in file order.
///
/// Build it at once with [`TreeIndex::from_nodes`], or over an opened file's
/// table with [`TreeIndex::from_table`], or grow it one entry at a time with
/// [`TreeIndex::push`] as a host appends; all give the same index.
///
/// Over a store's table the index keeps the table (shared, not copied) and uses
/// its id lookup and parent links: no envelope is copied and no id hashed again.
/// Its own lookups by id (for entries given as [`NodeInfo`]) keep positions
/// only: they hash and compare through the envelopes' own ids (no second copy of
/// any id), with a fast seeded hasher. Each entry's `parentId` is resolved to a
/// position once (a table of parent positions), so a branch walk follows
/// integers and hashes nothing.
#[derive(Clone, Default)]
pub struct TreeIndex {
    nodes: Nodes,
    /// Ids of the entries given as [`NodeInfo`]; the table's answer the rest.
    by_id: IdMap,
    parents: ParentLinks,
    /// Children of each parent id, in file order; a parent is present only
    /// while it has at least one child. Built on the first question that
    /// needs it (a reader such as `check` or `context` never asks), then kept
    /// exact by [`Self::push`].
    children: OnceLock<ChildMap>,
    diagnostics: Vec<Diagnostic>,
    /// The last position whose entry has an id.
    leaf: Option<usize>,
}

/// Two indexes are equal when they index the same envelopes: the lookups are
/// a function of them.
impl PartialEq for TreeIndex {
    fn eq(&self, other: &Self) -> bool {
        self.nodes.len() == other.nodes.len()
            && self.nodes.iter().eq(other.nodes.iter())
            && self.diagnostics == other.diagnostics
            && self.leaf == other.leaf
    }
}

impl Eq for TreeIndex {}

impl std::fmt::Debug for TreeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TreeIndex")
            .field("nodes", &self.nodes.iter().collect::<Vec<_>>())
            .field("diagnostics", &self.diagnostics)
            .field("leaf", &self.leaf)
            .finish_non_exhaustive()
    }
}

impl TreeIndex {
    /// Builds the index from envelopes in file order.
    ///
    /// Duplicate ids: the later entry wins for every lookup (pi and omp both
    /// keep the last one in their id map); each shadowed entry is reported.
    pub fn from_nodes(nodes: impl IntoIterator<Item = NodeInfo>) -> Self {
        let nodes = Nodes {
            table: None,
            given: nodes.into_iter().collect(),
        };
        let mut by_id = IdMap::with_capacity(nodes.len());
        let mut diagnostics = Vec::new();
        for (position, node) in nodes.given.iter().enumerate() {
            if let Some(id) = &node.id
                && let Some(previous) = by_id.insert(&nodes, id, position)
            {
                diagnostics.push(duplicate_id(id, previous, position));
            }
        }
        let leaf = nodes.given.iter().rposition(|node| node.id.is_some());
        let parents = ParentLinks::resolve(&nodes, &by_id);
        Self {
            nodes,
            by_id,
            parents,
            children: OnceLock::new(),
            diagnostics,
            leaf,
        }
    }

    /// Builds the index over an opened file's table ([`pi_session_store::SessionFile::table`]),
    /// giving the same index as [`TreeIndex::from_nodes`] over its envelopes. The table is
    /// kept, not copied: its envelopes, id lookup and parent links serve the index, so this
    /// costs a copy of the parent links and a scan for the last id.
    ///
    /// ```
    /// use pi_session_tree::{NodeInfo, TreeIndex};
    /// let text = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
    ///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"one"}"#, "\n",
    ///     r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"two"}"#, "\n",
    /// );
    /// let (file, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
    /// let index = TreeIndex::from_table(file.table().clone());
    /// assert_eq!(index.branch(1).positions, [0, 1]);
    /// let nodes = file.index().iter().map(|at| NodeInfo {
    ///     kind: at.envelope.kind().to_owned(),
    ///     id: at.envelope.id().map(str::to_owned),
    ///     parent_id: at.envelope.parent_id().map(str::to_owned),
    /// });
    /// assert_eq!(index, TreeIndex::from_nodes(nodes));
    /// ```
    pub fn from_table(table: Arc<EntryTable>) -> Self {
        let id_of = |at: usize| {
            table
                .entries()
                .get(at)
                .and_then(|entry| entry.envelope.id())
                .unwrap_or_default()
        };
        let diagnostics = table
            .duplicate_ids()
            .iter()
            .map(|&(previous, position)| duplicate_id(id_of(position), previous, position))
            .collect();
        let leaf = table
            .entries()
            .iter()
            .rposition(|entry| entry.envelope.id().is_some());
        let parents = ParentLinks::of_table(&table);
        Self {
            nodes: Nodes {
                table: Some(table),
                given: Vec::new(),
            },
            by_id: IdMap::default(),
            parents,
            children: OnceLock::new(),
            diagnostics,
            leaf,
        }
    }

    /// Appends one entry after the last one (file order), giving the same
    /// index as rebuilding with [`TreeIndex::from_nodes`] over every entry:
    /// a duplicate id takes over lookups from the earlier entry (with a
    /// [`DiagnosticKind::DuplicateId`] diagnostic), the entry joins its
    /// parent's children, and an entry with an id becomes the leaf.
    ///
    /// O(1) amortised; a duplicate id also costs a scan of the shadowed
    /// entry's siblings.
    ///
    /// ```
    /// use pi_session_tree::{NodeInfo, TreeIndex};
    ///
    /// let node = |id: &str, parent: Option<&str>| NodeInfo {
    ///     kind: "message".into(),
    ///     id: Some(id.into()),
    ///     parent_id: parent.map(Into::into),
    /// };
    /// let mut index = TreeIndex::default();
    /// index.push(node("a", None));
    /// index.push(node("b", Some("a")));
    /// assert_eq!(index.leaf_id(), Some("b"));
    /// assert_eq!(index.children("a"), &[1]);
    /// assert_eq!(index, TreeIndex::from_nodes([node("a", None), node("b", Some("a"))]));
    /// ```
    pub fn push(&mut self, node: NodeInfo) {
        let position = self.nodes.len();
        self.nodes.given.push(node);
        let nodes = &self.nodes;
        let Some(id) = nodes.id_at(position) else {
            self.parents.push(nodes, &self.by_id);
            return;
        };
        let previous = self.by_id.insert(nodes, id, position);
        if let Some(previous) = previous {
            self.diagnostics.push(duplicate_id(id, previous, position));
            // The shadowed entry leaves its parent's children.
            if let Some(parent) = nodes.get(previous).and_then(child_link)
                && let Some(children) = self.children.get_mut()
            {
                children.remove_child(nodes, parent, previous);
            }
        }
        // Entries naming this id as their parent now find this entry.
        self.parents.relink(nodes, id, position, previous.is_some());
        self.parents.push(nodes, &self.by_id);
        if let Some(parent) = nodes.get(position).and_then(child_link)
            && let Some(children) = self.children.get_mut()
        {
            children.add(nodes, parent, position);
        }
        self.leaf = Some(position);
    }

    /// Builds the index from whole entries given as JSON objects.
    pub fn from_entries<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Self {
        Self::from_nodes(entries.into_iter().map(NodeInfo::from_value))
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the session has no entries.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 0
    }

    /// The envelope of the entry at `position`.
    pub fn node(&self, position: usize) -> Option<NodeRef<'_>> {
        self.nodes.get(position)
    }

    /// The `type` of the entry at `position`: [`Self::node`]'s `kind` alone, for the store's
    /// entries from a byte an entry (no envelope read).
    pub fn kind(&self, position: usize) -> Option<&str> {
        self.nodes.kind_at(position)
    }

    /// The id of the entry at `position`: [`Self::node`]'s `id` alone.
    pub fn id(&self, position: usize) -> Option<&str> {
        self.nodes.id_at(position)
    }

    /// Whether the entry at `position` is a `message` with an id: what a context reads by its
    /// message's keys alone, as no other entry's rule reads its body ([`Self::kind`] and
    /// [`Self::id`], no envelope read).
    pub fn is_message_with_id(&self, position: usize) -> bool {
        self.nodes.is_kind(position, KindQuery::new("message")) && self.nodes.has_id(position)
    }

    /// Whether the entry at `position` is of the type `kind` asks about: [`Self::kind`]
    /// compared, where the store's table compares a byte (`kind` is made once for a question
    /// asked of many entries).
    ///
    /// ```
    /// use pi_session_tree::{KindQuery, NodeInfo, TreeIndex};
    /// let node = |kind: &str, id: &str| NodeInfo { kind: kind.into(), id: Some(id.into()), parent_id: None };
    /// let index = TreeIndex::from_nodes(vec![node("message", "a"), node("label", "b")]);
    /// let label = KindQuery::new("label");
    /// assert_eq!((index.is_kind(0, label), index.is_kind(1, label), index.is_kind(2, label)), (false, true, false));
    /// ```
    #[inline]
    pub fn is_kind(&self, position: usize, kind: KindQuery<'_>) -> bool {
        self.nodes.is_kind(position, kind)
    }

    /// Every entry `type` of the index, each once, in no promised order: what a question
    /// about which types occur reads, one byte an entry of the store's table.
    pub(crate) fn kinds_present(&self) -> Vec<&str> {
        self.nodes.kinds_present()
    }

    /// All envelopes in file order.
    pub fn nodes(&self) -> impl DoubleEndedIterator<Item = NodeRef<'_>> + ExactSizeIterator + '_ {
        self.nodes.iter()
    }

    /// Problems found while indexing (duplicate ids).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The position of the entry that owns `id` (the last one with that id).
    pub fn position_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(&self.nodes, id)
    }

    /// The path indices (into `positions`, a branch's positions) whose entry has one of the
    /// ids `named`, ascending. When no id repeats in the index, each named id is looked up
    /// ([`Self::position_of`]) and the path searched for the positions found, integers
    /// compared: a path's ids are not read one by one (a pointer followed and a string
    /// compared for each; ~0.04 ms of a 5 MB session's 2,471 entries, `docs/perf.md`, round
    /// 48). Otherwise every id on the path is compared, as the lookups would miss the earlier
    /// entries of a repeated id.
    pub fn path_indices_with_ids(&self, positions: &[usize], named: &[&str]) -> Vec<usize> {
        if named.is_empty() {
            return Vec::new();
        }
        let repeats = self
            .diagnostics
            .iter()
            .any(|d| d.kind == crate::DiagnosticKind::DuplicateId);
        if repeats {
            return (0..positions.len())
                .filter(|&at| self.id(positions[at]).is_some_and(|id| named.contains(&id)))
                .collect();
        }
        let mut found: Vec<usize> = named.iter().filter_map(|id| self.position_of(id)).collect();
        found.sort_unstable();
        (0..positions.len())
            .filter(|&at| found.binary_search(&positions[at]).is_ok())
            .collect()
    }

    /// Whether `position` is the entry lookups by its id find (false for
    /// entries shadowed by a later duplicate, and for entries without an id).
    pub fn is_id_owner(&self, position: usize) -> bool {
        self.nodes
            .id_at(position)
            .is_some_and(|id| self.position_of(id) == Some(position))
    }

    /// The leaf after opening the file: the last entry with an id.
    pub fn leaf_position(&self) -> Option<usize> {
        self.leaf
    }

    /// The id of [`Self::leaf_position`].
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf_position()
            .and_then(|position| self.nodes.id_at(position))
    }

    /// Resolves a [`LeafSelector`] to an entry position the way pi's and omp's
    /// `buildSessionContext` do: `Null` gives `None`; `Default` and unknown
    /// ids give the last entry in file order.
    pub fn resolve_leaf(&self, selector: &LeafSelector) -> (Option<usize>, Option<Diagnostic>) {
        let last = self.nodes.len().checked_sub(1);
        match selector {
            LeafSelector::Null => (None, None),
            LeafSelector::Default => (last, None),
            LeafSelector::Id(id) if id.is_empty() => (last, None),
            LeafSelector::Id(id) => match self.position_of(id) {
                Some(position) => (Some(position), None),
                None => (
                    last,
                    Some(Diagnostic::at(
                        DiagnosticKind::UnknownLeaf,
                        None,
                        Some(id),
                        "no entry has this id; using the last entry instead, as pi and omp do",
                    )),
                ),
            },
        }
    }

    /// The path from the root to the entry at `position`, root first.
    ///
    /// Follows `parentId` while it is set and found. A missing parent ends the
    /// walk; coming back to an entry already on the path ends it too (pi 0.73.1
    /// would loop forever; omp stops the same way). Both are reported.
    pub fn branch(&self, position: usize) -> Branch {
        // Room for the branch a well-formed file gives (parents before children: at most the
        // positions up to this one): only the pages the positions fill are touched, where
        // growing the list doubling by doubling touched twice as many (each page's first touch
        // a fault: ~400 on a 100,000-entry chain). A damaged file's longer walk grows it.
        let mut branch = Branch {
            positions: Vec::with_capacity(position.saturating_add(1).min(self.nodes.len())),
            diagnostics: Vec::new(),
        };
        // Parents come before their children in a well-formed file, so a walk that only moves
        // to earlier positions cannot repeat one; entries are tracked from the first step that
        // does not (a bit per entry), which is where a cycle can start.
        let mut seen: Option<Vec<u64>> = None;
        let mut current = Some(position);
        let mut previous = usize::MAX;
        // An envelope is read only to report where a walk ends.
        let len = self.nodes.len();
        let node = |pos: usize| self.nodes.get(pos).unwrap_or_default();
        while let Some(pos) = current {
            if pos >= len {
                break;
            }
            if pos >= previous && seen.is_none() {
                let mut bits = vec![0u64; len.div_ceil(64)];
                for &at in &branch.positions {
                    bits[at / 64] |= 1 << (at % 64);
                }
                seen = Some(bits);
            }
            if let Some(bits) = &mut seen {
                let (word, bit) = (pos / 64, 1u64 << (pos % 64));
                if bits[word] & bit != 0 {
                    branch.diagnostics.push(Diagnostic::at(
                        DiagnosticKind::Cycle,
                        Some(pos),
                        node(pos).id,
                        "parentId links loop back to this entry; the branch stops before repeating it",
                    ));
                    break;
                }
                bits[word] |= bit;
            }
            branch.positions.push(pos);
            previous = pos;
            current =
                match self.parents.of(pos) {
                    Some(parent_pos) => Some(parent_pos),
                    None => match node(pos).parent_id {
                        None | Some("") => None,
                        Some(parent) => {
                            branch.diagnostics.push(Diagnostic::at(
                        DiagnosticKind::MissingParent,
                        Some(pos),
                        node(pos).id,
                        format!("parent {parent:?} is not in the session; the branch starts here"),
                    ));
                            None
                        }
                    },
                };
        }
        branch.positions.reverse();
        branch
    }

    /// The branch ending at the entry a [`LeafSelector`] picks (empty for
    /// `Null` or an empty session).
    pub fn branch_for(&self, selector: &LeafSelector) -> Branch {
        let (leaf, diagnostic) = self.resolve_leaf(selector);
        let mut branch = leaf.map(|pos| self.branch(pos)).unwrap_or_default();
        branch.diagnostics.extend(diagnostic);
        branch
    }

    /// Positions of the direct children of `id` in file order (entries
    /// shadowed by a later duplicate id, and self-parented entries, excluded).
    pub fn children(&self, id: &str) -> &[usize] {
        self.children
            .get_or_init(|| ChildMap::of(&self.nodes, &self.by_id))
            .get(&self.nodes, id)
    }

    /// Tips: entries with an id that no other entry names as its parent (the
    /// ends of every branch), in file order.
    ///
    /// One pass over the parent links (no map of children is built): an owner is a parent when
    /// another owner's `parentId` resolves to it. An empty id, which no `parentId` resolves
    /// to, has children when an owner names `""` as its parent ([`Self::children`]'s rule).
    pub fn tips(&self) -> Vec<usize> {
        let len = self.nodes.len();
        let owners: Vec<bool> = (0..len).map(|pos| self.is_id_owner(pos)).collect();
        let mut parents = vec![false; len];
        let mut names_empty = false;
        for child in (0..len).filter(|&pos| owners[pos]) {
            match self.parents.of(child) {
                Some(parent) if parent != child => parents[parent] = true,
                _ => {}
            }
            names_empty |=
                self.nodes.parent_id_at(child) == Some("") && self.nodes.id_at(child) != Some("");
        }
        (0..len)
            .filter(|&pos| owners[pos] && !parents[pos])
            .filter(|&pos| !(names_empty && self.nodes.id_at(pos) == Some("")))
            .collect()
    }

    /// Roots: entries whose parent is unset, themselves, or not in the session
    /// (orphans become roots, as in pi's and omp's `getTree`), in file order.
    pub fn roots(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&pos| self.is_id_owner(pos))
            .filter(|&pos| match self.nodes.get(pos) {
                None => false,
                Some(node) => match node.parent_id {
                    None => true,
                    Some(parent) => node.id == Some(parent) || self.position_of(parent).is_none(),
                },
            })
            .collect()
    }

    /// Positions of every entry of the given `type`, in file order (e.g. all
    /// `label` entries, to load just those bodies).
    pub fn positions_of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = usize> + 'a {
        self.nodes.positions_of_kind(kind)
    }
}

/// The parent an entry is listed under as a child: its `parentId`, unless it
/// has no id or names itself.
pub(crate) fn child_link(node: NodeRef<'_>) -> Option<&str> {
    let id = node.id?;
    node.parent_id.filter(|parent| *parent != id)
}

fn duplicate_id(id: &str, previous: usize, position: usize) -> Diagnostic {
    Diagnostic::at(
        DiagnosticKind::DuplicateId,
        Some(position),
        Some(id),
        format!("id {id:?} was already used by entry {previous}; the later entry wins for lookups"),
    )
}

#[cfg(test)]
mod tests {
    use super::{NodeInfo, TreeIndex};
    use std::collections::HashSet;

    /// The path indices with one of the named ids are those a comparison of every id on the
    /// path finds: looked up when no id repeats, and also when one does (an earlier entry of
    /// a repeated id, which the lookup does not find, is on the path too).
    #[test]
    fn the_path_indices_with_named_ids_are_those_every_id_compared_finds() {
        let scan = |index: &TreeIndex, positions: &[usize], named: &[&str]| -> Vec<usize> {
            (0..positions.len())
                .filter(|&at| {
                    index
                        .id(positions[at])
                        .is_some_and(|id| named.contains(&id))
                })
                .collect()
        };
        for ids in [
            ["a", "b", "c", "d", "e", "f"],
            ["a", "b", "a", "d", "b", "f"],
        ] {
            let index = TreeIndex::from_nodes(ids.iter().map(|id| node("message", id)));
            let repeats = !index.diagnostics().is_empty();
            for positions in [vec![0, 1, 2, 3, 4, 5], vec![0, 2, 5], vec![5, 3, 1], vec![]] {
                for named in [&["a"][..], &["b", "f"], &["x"], &[], &["f", "a", "a"]] {
                    let found = index.path_indices_with_ids(&positions, named);
                    let case = format!("ids {ids:?} path {positions:?} named {named:?}");
                    assert_eq!(found, scan(&index, &positions, named), "{case}");
                }
            }
            assert_eq!(repeats, ids[2] == "a");
        }
    }

    fn node(kind: &str, id: &str) -> NodeInfo {
        NodeInfo {
            kind: kind.to_owned(),
            id: Some(id.to_owned()),
            parent_id: None,
        }
    }

    /// The types of the store's table and of the entries given after it, each once.
    #[test]
    fn the_types_present_are_listed_once_over_a_table_and_after_it() {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#,
            "\n",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            "\n",
            r#"{"type":"note","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z"}"#,
            "\n",
        );
        let (file, _) = pi_session_store::open_bytes(text.as_bytes().to_vec());
        let mut index = TreeIndex::from_table(file.table().clone());
        for (at, kind) in ["note", "label", "message", "memo", "label"]
            .iter()
            .enumerate()
        {
            index.push(node(kind, &format!("g{at}")));
        }
        let present = index.kinds_present();
        let distinct: HashSet<&str> = present.iter().copied().collect();
        assert_eq!(present.len(), distinct.len(), "{present:?}");
        assert_eq!(
            distinct,
            HashSet::from(["message", "note", "label", "memo"]),
            "{present:?}"
        );
        // Given only (no table): the same.
        let given = TreeIndex::from_nodes(vec![node("memo", "a"), node("memo", "b")]);
        assert_eq!(given.kinds_present(), ["memo"]);
    }

    /// The tips are the owners with no children, by [`TreeIndex::children`]'s rule, an empty
    /// id (which no `parentId` resolves to) and a duplicate and a self-named parent included.
    #[test]
    fn the_tips_are_the_owners_without_children() {
        let child = |id: &str, parent: Option<&str>| NodeInfo {
            parent_id: parent.map(str::to_owned),
            ..node("message", id)
        };
        let cases = [
            vec![child("", None), child("a", Some(""))],
            vec![child("", None), child("a", Some("x"))],
            vec![child("a", None), child("", Some("a")), child("b", Some(""))],
            vec![
                child("a", Some("a")),
                child("b", Some("a")),
                child("b", None),
            ],
            vec![
                child("a", None),
                child("b", Some("a")),
                child("a", Some("b")),
            ],
        ];
        for nodes in cases {
            let index = TreeIndex::from_nodes(nodes.clone());
            let expected: Vec<usize> = (0..nodes.len())
                .filter(|&at| index.is_id_owner(at))
                .filter(|&at| index.children(nodes[at].id.as_deref().unwrap()).is_empty())
                .collect();
            assert_eq!(index.tips(), expected, "{nodes:?}");
        }
    }
}
