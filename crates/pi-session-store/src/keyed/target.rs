//! [`KeyedTarget`]: what a [`SessionWriter`](crate::SessionWriter) appends to when the session
//! lives in a [`KeyedStore`]. It remembers the length and last bytes it last saw and hands them
//! to every write, so the backend refuses a write onto bytes this writer has not seen.

use super::{Expected, KeyedStore, TAIL_BYTES, TitleMeta};
use crate::error::StoreError;
use std::path::PathBuf;
use std::sync::Arc;

/// A session in a keyed store, as one writer last saw it.
#[derive(Debug)]
pub(crate) struct KeyedTarget {
    store: Arc<dyn KeyedStore>,
    path: String,
    /// What the value was when this writer last wrote or read it (`len: None`: not created).
    seen: Expected,
}

impl KeyedTarget {
    /// A session not created yet.
    pub(crate) fn new(store: Arc<dyn KeyedStore>, path: String) -> Self {
        let seen = Expected {
            len: None,
            tail: Vec::new(),
        };
        Self { store, path, seen }
    }

    /// A session read at `seen`.
    pub(crate) fn existing(store: Arc<dyn KeyedStore>, path: String, seen: Expected) -> Self {
        Self { store, path, seen }
    }

    /// The store, to read the session back.
    pub(crate) fn store(&self) -> super::Store {
        super::Store::Keyed(Arc::clone(&self.store))
    }

    /// Whether the session exists (this writer created it or read it).
    pub(crate) fn is_created(&self) -> bool {
        self.seen.len.is_some()
    }

    /// Creates the session with `bytes` (slot, header, first entry), refusing to overwrite.
    pub(crate) fn create(
        &mut self,
        bytes: &[u8],
        title: Option<&TitleMeta>,
    ) -> Result<(), StoreError> {
        match self.store.replace_if(&self.path, None, bytes, title) {
            Ok(()) => {
                self.saw(bytes.len() as u64, bytes);
                Ok(())
            }
            Err(StoreError::Conflict { .. }) => Err(StoreError::AlreadyExists {
                path: PathBuf::from(&self.path),
            }),
            Err(e) => Err(e),
        }
    }

    /// Appends whole lines, starting on a new line when the value ends with a torn one.
    pub(crate) fn append(&mut self, lines: &[u8]) -> Result<(), StoreError> {
        let torn = self.seen.len.unwrap_or(0) > 0 && self.seen.tail.last() != Some(&b'\n');
        let mut bytes = Vec::with_capacity(lines.len() + 1);
        if torn {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(lines);
        let len = self.store.append_if(&self.path, &self.seen, &bytes)?;
        self.saw(len, &bytes);
        Ok(())
    }

    /// What others appended since this writer last looked (`None`: nothing). A value that
    /// shrank, vanished or no longer ends with the bytes seen is a [`StoreError::Conflict`].
    pub(crate) fn read_growth(&mut self) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(len) = self.seen.len else {
            return Ok(None);
        };
        let conflict = |actual, replaced| StoreError::Conflict {
            path: PathBuf::from(&self.path),
            expected: len,
            actual,
            replaced,
        };
        let Some(stat) = self.store.stat(&self.path)? else {
            return Err(conflict(None, false));
        };
        if stat.size == len {
            return Ok(None);
        }
        if stat.size < len {
            return Err(conflict(Some(stat.size), true));
        }
        let from = len - self.seen.tail.len() as u64;
        let read = self.store.read_range(&self.path, from, stat.size - from)?;
        let Some(growth) = read.strip_prefix(self.seen.tail.as_slice()) else {
            return Err(conflict(Some(stat.size), true));
        };
        let growth = growth.to_vec();
        self.saw(from + read.len() as u64, &read);
        Ok(Some(growth))
    }

    /// Sets omp's title metadata (the slot every reader sees).
    pub(crate) fn set_title(&self, title: &TitleMeta) -> Result<(), StoreError> {
        self.store.set_title(&self.path, title)
    }

    /// Records that the value is now `len` bytes long and ends with `written`.
    fn saw(&mut self, len: u64, written: &[u8]) {
        let mut tail = std::mem::take(&mut self.seen.tail);
        tail.extend_from_slice(written);
        let keep = tail.len().min(TAIL_BYTES as usize);
        tail.drain(..tail.len() - keep);
        self.seen = Expected {
            len: Some(len),
            tail,
        };
    }
}
