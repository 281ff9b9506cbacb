//! [`MemoryStore`]: a keyed store in this process's memory, for tests and ephemeral hosts. It
//! keeps exactly what Redis keeps (bytes, mtime, title metadata per path), under one lock, so
//! its checks and writes are atomic as Redis scripts are.

use super::{Expected, KeyedEntry, KeyedStore, TitleMeta, next_mtime};
use crate::error::StoreError;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard};

#[derive(Debug, Default)]
struct Slot {
    bytes: Vec<u8>,
    mtime_ms: u64,
    title: Option<TitleMeta>,
}

/// Sessions kept in memory (see the [module docs](super)).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use pi_session_store::{MemoryStore, Store, WriterOptions, new_header};
/// use pi_session_types::{Entry, JsonMap};
/// use std::path::Path;
///
/// let store = Store::keyed(MemoryStore::new());
/// let path = Path::new("/sessions/--w--/a.jsonl");
/// let mut writer = store.create_at(path, new_header("/w"), WriterOptions::default());
/// let mut label = JsonMap::new();
/// label.insert("type".into(), "label".into());
/// let written = writer.append(Entry::from_map(label))?;
/// let (session, diagnostics) = store.open(path)?;
/// assert!(diagnostics.is_empty());
/// assert_eq!(session.entry(0)?, written);
/// # Ok(()) }
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: Mutex<BTreeMap<String, Slot>>,
    last_mtime: AtomicU64,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn sessions(&self) -> MutexGuard<'_, BTreeMap<String, Slot>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces the bytes of `path` without any check, as another program might (tests).
    pub fn put(&self, path: &str, bytes: &[u8]) {
        let mtime_ms = next_mtime(&self.last_mtime);
        let mut sessions = self.sessions();
        let slot = sessions.entry(path.to_owned()).or_default();
        slot.bytes = bytes.to_vec();
        slot.mtime_ms = mtime_ms;
    }

    /// The bytes stored under `path`, as stored.
    pub fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.sessions().get(path).map(|s| s.bytes.clone())
    }
}

fn conflict(path: &str, expected: Option<u64>, actual: Option<u64>, replaced: bool) -> StoreError {
    StoreError::Conflict {
        path: PathBuf::from(path),
        expected: expected.unwrap_or(0),
        actual,
        replaced,
    }
}

impl KeyedStore for MemoryStore {
    fn describe(&self) -> String {
        "memory".to_owned()
    }

    fn stat(&self, path: &str) -> Result<Option<KeyedEntry>, StoreError> {
        Ok(self.sessions().get(path).map(|s| KeyedEntry {
            path: path.to_owned(),
            size: s.bytes.len() as u64,
            mtime_ms: s.mtime_ms,
            title: s.title.clone(),
        }))
    }

    fn read_range(&self, path: &str, start: u64, len: u64) -> Result<Vec<u8>, StoreError> {
        let sessions = self.sessions();
        let Some(slot) = sessions.get(path) else {
            return Ok(Vec::new());
        };
        let start = usize::try_from(start)
            .unwrap_or(usize::MAX)
            .min(slot.bytes.len());
        let end = start
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
            .min(slot.bytes.len());
        Ok(slot.bytes[start..end].to_vec())
    }

    fn append_if(&self, path: &str, expected: &Expected, bytes: &[u8]) -> Result<u64, StoreError> {
        let mtime_ms = next_mtime(&self.last_mtime);
        let mut sessions = self.sessions();
        let actual = sessions.get(path).map(|s| s.bytes.len() as u64);
        if actual != expected.len {
            return Err(conflict(path, expected.len, actual, false));
        }
        let slot = sessions.entry(path.to_owned()).or_default();
        if !slot.bytes.ends_with(&expected.tail) {
            return Err(conflict(path, expected.len, actual, true));
        }
        slot.bytes.extend_from_slice(bytes);
        slot.mtime_ms = mtime_ms;
        Ok(slot.bytes.len() as u64)
    }

    fn replace_if(
        &self,
        path: &str,
        expected: Option<u64>,
        bytes: &[u8],
        title: Option<&TitleMeta>,
    ) -> Result<(), StoreError> {
        let mtime_ms = next_mtime(&self.last_mtime);
        let mut sessions = self.sessions();
        let actual = sessions.get(path).map(|s| s.bytes.len() as u64);
        if actual != expected {
            return Err(conflict(path, expected, actual, false));
        }
        sessions.insert(
            path.to_owned(),
            Slot {
                bytes: bytes.to_vec(),
                mtime_ms,
                title: title.cloned(),
            },
        );
        Ok(())
    }

    fn title(&self, path: &str) -> Result<Option<TitleMeta>, StoreError> {
        Ok(self.sessions().get(path).and_then(|s| s.title.clone()))
    }

    fn set_title(&self, path: &str, title: &TitleMeta) -> Result<(), StoreError> {
        let mtime_ms = next_mtime(&self.last_mtime);
        let mut sessions = self.sessions();
        let slot = sessions.entry(path.to_owned()).or_default();
        slot.title = Some(title.clone());
        slot.mtime_ms = mtime_ms;
        Ok(())
    }

    fn list(&self) -> Result<Vec<KeyedEntry>, StoreError> {
        Ok(self
            .sessions()
            .iter()
            .map(|(path, s)| KeyedEntry {
                path: path.clone(),
                size: s.bytes.len() as u64,
                mtime_ms: s.mtime_ms,
                title: s.title.clone(),
            })
            .collect())
    }
}
