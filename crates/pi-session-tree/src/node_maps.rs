//! The tree index's lookups by id ([`IdMap`]: id → position; [`ChildMap`]: parent id →
//! children), keeping positions only, and each entry's parent as a position ([`ParentLinks`]).
//!
//! A `HashMap<String, _>` keeps a second copy of every id (an allocation per entry) and hashes
//! it with SipHash. These tables hash and compare through the index's own envelopes instead,
//! with `foldhash` (seeded per table, so a file cannot choose its collisions in advance): the
//! index of a 40,000-entry session is built with no allocation per entry beyond its envelope.
//! Over a store's table ([`crate::TreeIndex::from_table`]) the table's own id lookup and parent
//! links answer for its entries; these tables hold only the entries given after it.

use std::hash::BuildHasher;

use foldhash::fast::RandomState;
use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use pi_session_store::{EntryTable, named_parent};

use crate::index::{Nodes, child_link};

/// The parent the entry at `at` is listed under ([`child_link`]).
fn parent_at(nodes: &Nodes, at: usize) -> Option<&str> {
    nodes.get(at).and_then(child_link)
}

/// Positions by id: the position stored for an id is the entry lookups find. Holds the ids of
/// the entries given as `NodeInfo`; an id none of them has is looked up in the store's table.
#[derive(Clone, Default)]
pub(crate) struct IdMap {
    table: HashTable<usize>,
    hasher: RandomState,
}

impl IdMap {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            table: HashTable::with_capacity(capacity),
            hasher: RandomState::default(),
        }
    }

    /// Makes `position` (whose entry in `nodes` has id `id`) the one found for `id`; the
    /// position it replaces, if any (in this map, else in the store's table).
    pub(crate) fn insert(&mut self, nodes: &Nodes, id: &str, position: usize) -> Option<usize> {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(id);
        let rehash = |&at: &usize| hasher.hash_one(nodes.id_at(at).unwrap_or_default());
        match self
            .table
            .entry(hash, |&at| nodes.id_at(at) == Some(id), rehash)
        {
            Entry::Occupied(mut seen) => Some(std::mem::replace(seen.get_mut(), position)),
            Entry::Vacant(slot) => {
                slot.insert(position);
                nodes.table().and_then(|table| table.position_of(id))
            }
        }
    }

    /// The position found for `id`: in this map (the later entries), else in the store's table.
    pub(crate) fn get(&self, nodes: &Nodes, id: &str) -> Option<usize> {
        if !self.table.is_empty() {
            let hash = self.hasher.hash_one(id);
            if let Some(&at) = self.table.find(hash, |&at| nodes.id_at(at) == Some(id)) {
                return Some(at);
            }
        }
        nodes.table().and_then(|table| table.position_of(id))
    }
}

/// The children of one parent, in file order: most entries have one child, which needs no
/// allocation.
#[derive(Clone, Debug)]
enum Kids {
    One(usize),
    Many(Vec<usize>),
}

impl Kids {
    fn as_slice(&self) -> &[usize] {
        match self {
            Self::One(at) => std::slice::from_ref(at),
            Self::Many(all) => all,
        }
    }

    /// Any child: they all name the same parent, which is the key.
    fn first(&self) -> usize {
        self.as_slice().first().copied().unwrap_or(usize::MAX)
    }

    fn push(&mut self, position: usize) {
        match self {
            Self::One(first) => *self = Self::Many(vec![*first, position]),
            Self::Many(all) => all.push(position),
        }
    }
}

/// Children by parent id (a parent is present while it has a child).
#[derive(Clone, Default)]
pub(crate) struct ChildMap {
    table: HashTable<Kids>,
    hasher: RandomState,
}

impl ChildMap {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            table: HashTable::with_capacity(capacity),
            hasher: RandomState::default(),
        }
    }

    /// The children of every parent in `nodes`: each id's owner (the entry `by_id` finds) under
    /// the parent it is listed under ([`child_link`]), in file order.
    pub(crate) fn of(nodes: &Nodes, by_id: &IdMap) -> Self {
        let mut children = Self::with_capacity(nodes.len());
        for position in 0..nodes.len() {
            let Some(node) = nodes.get(position) else {
                continue;
            };
            let Some(id) = node.id else { continue };
            if by_id.get(nodes, id) != Some(position) {
                continue;
            }
            if let Some(parent) = child_link(node) {
                children.add(nodes, parent, position);
            }
        }
        children
    }

    /// Adds `position` (whose entry in `nodes` is listed under `parent`) after the children
    /// `parent` has.
    pub(crate) fn add(&mut self, nodes: &Nodes, parent: &str, position: usize) {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(parent);
        let rehash =
            |kids: &Kids| hasher.hash_one(parent_at(nodes, kids.first()).unwrap_or_default());
        match self.table.entry(
            hash,
            |kids| parent_at(nodes, kids.first()) == Some(parent),
            rehash,
        ) {
            Entry::Occupied(mut kids) => kids.get_mut().push(position),
            Entry::Vacant(slot) => {
                slot.insert(Kids::One(position));
            }
        }
    }

    /// Removes `position` from `parent`'s children (and `parent`, when it was the last).
    pub(crate) fn remove_child(&mut self, nodes: &Nodes, parent: &str, position: usize) {
        let hash = self.hasher.hash_one(parent);
        let Ok(mut kids) = self
            .table
            .find_entry(hash, |kids| parent_at(nodes, kids.first()) == Some(parent))
        else {
            return;
        };
        let empty = match kids.get_mut() {
            Kids::One(at) => *at == position,
            Kids::Many(all) => {
                all.retain(|&at| at != position);
                all.is_empty()
            }
        };
        if empty {
            kids.remove();
        }
    }

    /// The children of `parent`, in file order.
    pub(crate) fn get(&self, nodes: &Nodes, parent: &str) -> &[usize] {
        let hash = self.hasher.hash_one(parent);
        self.table
            .find(hash, |kids| parent_at(nodes, kids.first()) == Some(parent))
            .map_or(&[], Kids::as_slice)
    }
}

/// No parent: `parentId` unset, empty, or naming no entry.
const NO_PARENT: usize = usize::MAX;

/// Each entry's `parentId` resolved to the position [`IdMap::get`] gives for it, so a branch
/// walk follows integers instead of hashing an id per step.
///
/// Kept exact as entries are pushed: a new id is found by the entries that named it while it
/// was missing (`dangling`, few: only damaged files have them), and a duplicate id (rare)
/// moves every entry naming it to the new position (a scan).
#[derive(Clone, Default)]
pub(crate) struct ParentLinks {
    links: Vec<usize>,
    /// Positions whose non-empty `parentId` names no entry (yet).
    dangling: Vec<usize>,
}

/// The position `nodes[at]`'s `parentId` resolves to, or [`NO_PARENT`].
fn resolve_one(nodes: &Nodes, by_id: &IdMap, at: usize) -> usize {
    named_parent(nodes.parent_id_at(at))
        .and_then(|parent| by_id.get(nodes, parent))
        .unwrap_or(NO_PARENT)
}

/// Whether `parent_id` names a parent that is not (yet) there (its link is `link`).
fn names_missing(parent_id: Option<&str>, link: usize) -> bool {
    link == NO_PARENT && named_parent(parent_id).is_some()
}

impl ParentLinks {
    /// Resolves every entry's parent (after all ids are in `by_id`).
    pub(crate) fn resolve(nodes: &Nodes, by_id: &IdMap) -> Self {
        let links: Vec<usize> = (0..nodes.len())
            .map(|at| resolve_one(nodes, by_id, at))
            .collect();
        let dangling = (0..nodes.len())
            .filter(|&at| names_missing(nodes.parent_id_at(at), links[at]))
            .collect();
        Self { links, dangling }
    }

    /// The links the store's table resolved (the same rule: [`named_parent`], then the id
    /// lookup), copied as integers: no id is hashed again.
    pub(crate) fn of_table(table: &EntryTable) -> Self {
        let links: Vec<usize> = (0..table.len())
            .map(|at| table.parent_position(at).unwrap_or(NO_PARENT))
            .collect();
        let dangling = table
            .entries()
            .iter()
            .zip(&links)
            .enumerate()
            .filter(|(_, (entry, link))| {
                **link == NO_PARENT && names_missing(entry.envelope.parent_id(), **link)
            })
            .map(|(at, _)| at)
            .collect();
        Self { links, dangling }
    }

    /// The parent position of the entry at `at`.
    pub(crate) fn of(&self, at: usize) -> Option<usize> {
        self.links
            .get(at)
            .copied()
            .filter(|&link| link != NO_PARENT)
    }

    /// Links the last entry of `nodes` (just pushed, its id already in `by_id`).
    pub(crate) fn push(&mut self, nodes: &Nodes, by_id: &IdMap) {
        let at = self.links.len();
        let link = resolve_one(nodes, by_id, at);
        if names_missing(nodes.parent_id_at(at), link) {
            self.dangling.push(at);
        }
        self.links.push(link);
    }

    /// `id` now belongs to the entry at `position`: the entries naming it follow.
    pub(crate) fn relink(&mut self, nodes: &Nodes, id: &str, position: usize, duplicate: bool) {
        let names_id = |at: usize| nodes.parent_id_at(at) == Some(id);
        if duplicate {
            for (at, link) in self.links.iter_mut().enumerate() {
                if names_id(at) {
                    *link = position;
                }
            }
            return;
        }
        let links = &mut self.links;
        self.dangling.retain(|&at| {
            if names_id(at) {
                if let Some(link) = links.get_mut(at) {
                    *link = position;
                }
                false
            } else {
                true
            }
        });
    }
}
