//! [`IdTable`]: entry id → position, without a second copy of each id.
//!
//! A `HashMap<String, usize>` beside the index keeps every id twice (the envelope's and the
//! key's: ~70 bytes an entry for 8-character ids). The table keeps positions only and hashes
//! and compares through the index's own ids, so it costs about 9 bytes an entry. The hasher is
//! `foldhash`, seeded per table (SipHash was a visible share of opening a large file).

use crate::session_file::IndexEntry;
use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Positions of entries by id (the later entry wins, as pi and omp keep it).
#[derive(Clone, Default)]
pub(crate) struct IdTable {
    table: HashTable<usize>,
    hasher: foldhash::fast::RandomState,
}

impl std::fmt::Debug for IdTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IdTable({} ids)", self.table.len())
    }
}

fn id_at(entries: &[IndexEntry], position: usize) -> Option<&str> {
    entries.get(position)?.envelope.id.as_deref()
}

impl IdTable {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            table: HashTable::with_capacity(capacity),
            hasher: foldhash::fast::RandomState::default(),
        }
    }

    /// Makes `position` (whose entry has id `id`) the one found for `id`; the position it
    /// replaces, if any.
    pub(crate) fn insert(
        &mut self,
        entries: &[IndexEntry],
        id: &str,
        position: usize,
    ) -> Option<usize> {
        let hash = self.hasher.hash_one(id);
        let hasher = &self.hasher;
        let rehash = |&at: &usize| hasher.hash_one(id_at(entries, at).unwrap_or_default());
        match self
            .table
            .entry(hash, |&at| id_at(entries, at) == Some(id), rehash)
        {
            hashbrown::hash_table::Entry::Occupied(mut seen) => {
                Some(std::mem::replace(seen.get_mut(), position))
            }
            hashbrown::hash_table::Entry::Vacant(slot) => {
                slot.insert(position);
                None
            }
        }
    }

    /// The position of the entry with id `id`.
    pub(crate) fn get(&self, entries: &[IndexEntry], id: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(id);
        self.table
            .find(hash, |&at| id_at(entries, at) == Some(id))
            .copied()
    }
}
