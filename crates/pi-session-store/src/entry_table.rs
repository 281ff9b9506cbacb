//! [`EntryTable`]: the index of an opened session (one [`IndexEntry`] per entry, in file order)
//! with its lookups, built once by the open's fold and shared by the session and the tree index
//! built over it (`pi-session-tree`'s `TreeIndex::from_table`), so neither copies an envelope
//! or builds a second id table.
//!
//! The id lookup ([`IdTable`]) keeps positions only and hashes and compares through the
//! entries' own ids: a `HashMap<String, usize>` would keep every id twice (~70 bytes an entry
//! for 8-character ids); this costs about 9. The hasher is `foldhash`, seeded per table
//! (SipHash was a visible share of opening a large file), so a file cannot choose its
//! collisions in advance.

use crate::session_file::IndexEntry;
use hashbrown::HashTable;
use pi_session_types::envelope_scan::{KeyFilter, MessageAt};
use pi_session_types::json::Strings;
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
    entries.get(position)?.envelope.id()
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

/// The parent an entry names: its `parentId`, unless unset or empty (both mean "a root", as pi
/// and omp read them). The one place this rule lives: the store's parent links and the tree's
/// (for entries a host appends) both read it.
///
/// ```
/// use pi_session_store::named_parent;
/// assert_eq!(named_parent(Some("a1")), Some("a1"));
/// assert_eq!(named_parent(Some("")), None);
/// assert_eq!(named_parent(None), None);
/// ```
pub fn named_parent(parent_id: Option<&str>) -> Option<&str> {
    parent_id.filter(|parent| !parent.is_empty())
}

/// No parent position: see [`EntryTable::parent_position`].
const NO_PARENT: usize = usize::MAX;

/// The index of an opened session: every entry's line, offset, length and envelope in file
/// order ([`entries`](Self::entries)), the position of each id, each entry's parent as a
/// position, and the keys each entry's line may hold (a [`KeyFilter`] from the open's scan). Built once by `open`; a [`SessionFile`](crate::SessionFile) shares it
/// ([`SessionFile::table`](crate::SessionFile::table)) with whatever indexes the tree over it.
#[derive(Debug, Default)]
pub struct EntryTable {
    entries: Vec<IndexEntry>,
    by_id: IdTable,
    /// The position of each entry's parent, [`NO_PARENT`] when it has none.
    parents: Vec<usize>,
    /// `(shadowed, position)` for each entry whose id an earlier entry had, in file order.
    duplicates: Vec<(usize, usize)>,
    /// The keys each entry's line may hold, beside `entries` (kept apart: [`IndexEntry`]'s
    /// fields are public). Shorter than `entries` only in a table built without them.
    keys: Vec<KeyFilter>,
    /// What the open's scan proved of each entry's strings ([`Strings`]), beside `entries`;
    /// shorter, as `keys`, only in a table built without them.
    strings: Vec<Strings>,
    /// Where the open's scan found each entry's line's message and id
    /// ([`MessageAt::to_packed`]; 0: it did not), beside `entries`; shorter, as `keys`, only in
    /// a table built without them.
    message_at: Vec<u32>,
    /// Each entry's `type` as its place in [`KINDS`] ([`OTHER_KIND`]: another type), one byte
    /// an entry: a question over every entry's type (the dialect's evidence, the positions of
    /// the labels) reads these instead of each envelope's text on the heap.
    kinds: Vec<u8>,
}

/// The entry types [`EntryTable`] keeps as a number (fewer than [`OTHER_KIND`]).
const KINDS: [&str; 20] = pi_session_types::ENTRY_TYPES;

/// The number of a `type` that is not in [`KINDS`].
const OTHER_KIND: u8 = u8::MAX;

/// The number [`EntryTable`] keeps for the type `kind`.
#[inline]
pub(crate) fn kind_code(kind: &str) -> u8 {
    KINDS
        .iter()
        .position(|known| *known == kind)
        .map_or(OTHER_KIND, |at| at as u8)
}

/// An entry type asked about many times ([`EntryTable::is_kind`]): the number the table keeps
/// for it is worked out once, here, and each question compares one byte.
///
/// ```
/// use pi_session_store::KindQuery;
/// let bytes = concat!(
///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#, "\n",
///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","label":"x"}"#, "\n",
///     r#"{"type":"note","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z"}"#, "\n",
/// );
/// let (session, _) = pi_session_store::open_bytes(bytes.as_bytes().to_vec());
/// let (label, note) = (KindQuery::new("label"), KindQuery::new("note"));
/// let table = session.table();
/// assert_eq!((table.is_kind(0, label), table.is_kind(1, label)), (true, false));
/// assert_eq!((table.is_kind(0, note), table.is_kind(1, note)), (false, true));
/// assert!(!table.is_kind(2, label), "no entry there");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindQuery<'k> {
    kind: &'k str,
    code: u8,
}

impl<'k> KindQuery<'k> {
    /// The question "is this entry's `type` `kind`?".
    #[inline]
    pub fn new(kind: &'k str) -> Self {
        Self {
            kind,
            code: kind_code(kind),
        }
    }

    /// The type asked about.
    pub fn kind(&self) -> &'k str {
        self.kind
    }
}

impl EntryTable {
    /// Builds the lookups over `entries`: ids (a later duplicate wins, as in pi and omp), then
    /// every parent resolved against the final ids. `keys` is each entry's key filter (an
    /// entry without one may hold any key), `strings` what the scan proved of its strings
    /// (of an entry without it: nothing), `message_at` where it found its line's message and id
    /// ([`MessageAt::to_packed`]).
    pub(crate) fn new(
        entries: Vec<IndexEntry>,
        keys: Vec<KeyFilter>,
        strings: Vec<Strings>,
        message_at: Vec<u32>,
    ) -> Self {
        let mut by_id = IdTable::with_capacity(entries.len());
        let mut duplicates = Vec::new();
        for (position, entry) in entries.iter().enumerate() {
            if let Some(id) = entry.envelope.id()
                && let Some(shadowed) = by_id.insert(&entries, id, position)
            {
                duplicates.push((shadowed, position));
            }
        }
        // Every entry that an id's later duplicate did not shadow owns its id.
        let mut shadowed: Vec<usize> = duplicates.iter().map(|&(shadowed, _)| shadowed).collect();
        shadowed.sort_unstable();
        let owns_id = |at: usize| shadowed.binary_search(&at).is_err();
        let parents = entries
            .iter()
            .enumerate()
            .map(|(at, entry)| {
                let Some(parent) = named_parent(entry.envelope.parent_id()) else {
                    return NO_PARENT;
                };
                // Most entries name the entry before them (a line just read, its id still in
                // the cache): found without hashing.
                if let Some(before) = at.checked_sub(1)
                    && id_at(&entries, before) == Some(parent)
                    && owns_id(before)
                {
                    return before;
                }
                by_id.get(&entries, parent).unwrap_or(NO_PARENT)
            })
            .collect();
        let kinds = entries
            .iter()
            .map(|entry| entry.envelope.kind_code())
            .collect();
        Self {
            entries,
            by_id,
            parents,
            duplicates,
            keys,
            strings,
            message_at,
            kinds,
        }
    }

    /// The `type` of the entry at `position`.
    pub fn kind(&self, position: usize) -> Option<&str> {
        match *self.kinds.get(position)? {
            OTHER_KIND => Some(self.entries.get(position)?.envelope.kind()),
            code => KINDS.get(usize::from(code)).copied(),
        }
    }

    /// Whether the entry at `position` is of the type `kind` asks about (`false` past the last
    /// entry): a byte compared, the envelope's text read only for a type the table does not
    /// number.
    #[inline]
    pub fn is_kind(&self, position: usize, kind: KindQuery<'_>) -> bool {
        match self.kinds.get(position) {
            Some(&code) if code == kind.code => {
                code != OTHER_KIND
                    || self.entries.get(position).map(|e| e.envelope.kind()) == Some(kind.kind)
            }
            _ => false,
        }
    }

    /// Every entry type the table holds, each once: the types it numbers first (in
    /// [`pi_session_types::ENTRY_TYPES`]' order), then the others in the order they first
    /// appear. A question that only asks which types occur reads one byte an entry.
    ///
    /// ```
    /// let bytes = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#, "\n",
    ///     r#"{"type":"note","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}"#, "\n",
    ///     r#"{"type":"label","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","label":"x"}"#, "\n",
    ///     r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"hi"}}"#, "\n",
    ///     r#"{"type":"note","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z"}"#, "\n",
    ///     r#"{"type":"memo","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(bytes.as_bytes().to_vec());
    /// assert_eq!(session.table().kinds_present(), ["message", "label", "note", "memo"]);
    /// ```
    pub fn kinds_present(&self) -> Vec<&str> {
        let mut seen = [false; 256];
        for &code in &self.kinds {
            seen[usize::from(code)] = true;
        }
        let mut present: Vec<&str> = KINDS
            .iter()
            .zip(seen)
            .filter_map(|(&kind, seen)| seen.then_some(kind))
            .collect();
        if seen[usize::from(OTHER_KIND)] {
            let mut others = std::collections::HashSet::new();
            for at in memchr::memchr_iter(OTHER_KIND, &self.kinds) {
                if let Some(entry) = self.entries.get(at)
                    && others.insert(entry.envelope.kind())
                {
                    present.push(entry.envelope.kind());
                }
            }
        }
        present
    }

    /// The positions of the entries of type `kind`, in file order.
    ///
    /// ```
    /// let bytes = concat!(
    ///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#, "\n",
    ///     r#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","label":"x"}"#, "\n",
    ///     r#"{"type":"note","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z"}"#, "\n",
    ///     r#"{"type":"label","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","label":"y"}"#, "\n",
    /// );
    /// let (session, _) = pi_session_store::open_bytes(bytes.as_bytes().to_vec());
    /// let table = session.table();
    /// assert_eq!(table.positions_of_kind("label").collect::<Vec<_>>(), [0, 2]);
    /// assert_eq!(table.positions_of_kind("note").collect::<Vec<_>>(), [1]);
    /// assert_eq!(table.kind(1), Some("note"));
    /// ```
    pub fn positions_of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = usize> + 'a {
        let code = kind_code(kind);
        memchr::memchr_iter(code, &self.kinds).filter(move |&at| {
            code != OTHER_KIND || self.entries.get(at).map(|e| e.envelope.kind()) == Some(kind)
        })
    }

    /// The keys the line of the entry at `position` may hold ([`KeyFilter::ANY`] when the
    /// table has no filter for it).
    #[inline]
    pub(crate) fn key_filter(&self, position: usize) -> KeyFilter {
        self.keys.get(position).copied().unwrap_or(KeyFilter::ANY)
    }

    /// What the open's scan proved of the strings of the line of the entry at `position`
    /// ([`Strings::Unknown`] when the table holds nothing for it).
    #[inline]
    pub(crate) fn strings(&self, position: usize) -> Strings {
        self.strings.get(position).copied().unwrap_or_default()
    }

    /// Where the open's scan found the message and the id of the line of the entry at
    /// `position`, when it did.
    pub(crate) fn message_at(&self, position: usize) -> Option<MessageAt> {
        MessageAt::from_packed(*self.message_at.get(position)?)
    }

    /// Every entry's line, offset, length and envelope, in file order.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The position of the entry with this id (the later one when ids repeat, as pi and omp do).
    pub fn position_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(&self.entries, id)
    }

    /// The position of the entry's parent: the entry [`position_of`](Self::position_of) finds
    /// for its [`named_parent`]; `None` when it names none or names an id no entry has.
    pub fn parent_position(&self, position: usize) -> Option<usize> {
        self.parents
            .get(position)
            .copied()
            .filter(|&parent| parent != NO_PARENT)
    }

    /// `(shadowed, position)` for each entry whose id an earlier entry had (`shadowed`: the
    /// entry lookups found before it), in file order.
    pub fn duplicate_ids(&self) -> &[(usize, usize)] {
        &self.duplicates
    }
}
