//! The convenience layer over the store: a [`pi_session_store::SessionFile`]
//! is an [`EntrySource`], so a 200 MB file is indexed from the envelopes the
//! store already parsed, and only the bodies a question needs are read: in one pass in file
//! order, each line parsed straight to JSON as omp and pi read it (keys in file order).

use pi_session_store::{SessionFile, StoreError};
use serde_json::Value;

use crate::index::{NodeInfo, TreeIndex};
use crate::source::EntrySource;

/// Why an entry body could not be read from a session file.
#[derive(Debug, thiserror::Error)]
pub enum EntryReadError {
    /// The store could not read the entry (I/O, the file changed underneath).
    #[error("reading an entry from the session file failed: {0}")]
    Store(#[from] StoreError),
    /// The typed entry could not be turned back into JSON (a bug: please report it
    /// with the line that triggered it).
    #[error("converting a typed entry to JSON failed: {0}")]
    Json(#[from] serde_json::Error),
}

impl EntrySource for SessionFile {
    type Error = EntryReadError;

    fn entry_count(&self) -> usize {
        self.len()
    }

    /// Over the file's own table, shared ([`TreeIndex::from_table`]).
    fn tree_index(&self) -> TreeIndex {
        TreeIndex::from_table(std::sync::Arc::clone(self.table()))
    }

    fn envelope(&self, position: usize) -> NodeInfo {
        self.index()
            .get(position)
            .map(|entry| NodeInfo {
                kind: entry.envelope.kind().to_owned(),
                id: entry.envelope.id().map(str::to_owned),
                parent_id: entry.envelope.parent_id().map(str::to_owned),
            })
            .unwrap_or_default()
    }

    /// The line as JSON, keys in file order ([`SessionFile::values_for`]).
    fn entry_value(&self, position: usize) -> Result<Value, EntryReadError> {
        let mut values = self.values_for(&[position])?;
        values
            .pop()
            .ok_or(EntryReadError::Store(StoreError::NoSuchEntry {
                index: position,
                len: self.len(),
            }))
    }

    /// One pass over the file in file order, each line parsed straight to JSON (typed only when
    /// a version 1 or 2 file migrates it): [`SessionFile::values_for`].
    fn entry_values(&self, positions: &[usize]) -> Result<Vec<Value>, EntryReadError> {
        Ok(self.values_for(positions)?)
    }

    /// From the raw lines ([`SessionFile::lines_containing`]), nothing parsed: a line may hold
    /// `needle` when it has it byte for byte or has a `\u` escape (which could spell it); every
    /// line of a migrated file may (migration rewrites lines in memory).
    fn may_contain(&self, positions: &[usize], needle: &str) -> Result<Vec<bool>, EntryReadError> {
        if self.is_migrated() {
            return Ok(vec![true; positions.len()]);
        }
        Ok(self.lines_containing(positions, &[needle.as_bytes(), b"\\u"])?)
    }

    /// From the key filter the open kept for each line ([`SessionFile::may_hold_key`]):
    /// nothing read; every entry of a migrated file may.
    fn may_hold_key(&self, positions: &[usize], key: &str) -> Result<Vec<bool>, EntryReadError> {
        Ok(SessionFile::may_hold_key(self, positions, key))
    }

    fn header_value(&self) -> Option<Value> {
        self.header()
            .and_then(|header| serde_json::to_value(header).ok())
    }

    fn title_slot(&self) -> Option<String> {
        SessionFile::title_slot(self).map(|slot| slot.title.clone())
    }
}
