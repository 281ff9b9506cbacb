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

/// Sessions kept in memory (see the docs of `keyed/memory.rs`).
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

    /// A store holding what a dump of omp's Redis keyspace under `prefix` holds (the layout
    /// `RedisStore` speaks): every `<prefix>file:<path>` STRING is a
    /// session, `<prefix>meta` (path → mtime in ms) its modification time, `<prefix>title`
    /// (path → omp's title JSON, read as omp's `decodeTitleMeta`) its title. Keys outside the
    /// prefix, other keys under it and hash fields naming no session are left out, as omp's
    /// reads leave them. So a recording of omp's keyspace answers in tests without a server.
    ///
    /// ```
    /// use pi_session_store::{KeyedStore, MemoryStore, RedisValue};
    /// let keys = [
    ///     ("omp:sessions:file:/s/a.jsonl".to_owned(), RedisValue::String(b"{}\n".to_vec())),
    ///     ("omp:sessions:meta".to_owned(), RedisValue::Hash(vec![("/s/a.jsonl".into(), "7".into())])),
    ///     ("omp:sessions:title".to_owned(), RedisValue::Hash(vec![(
    ///         "/s/a.jsonl".into(), r#"{"title":"T","source":"user","updatedAt":"x"}"#.into(),
    ///     )])),
    /// ];
    /// let store = MemoryStore::from_omp_keyspace("omp:sessions:", keys);
    /// let listed = store.list().unwrap();
    /// assert_eq!((listed[0].path.as_str(), listed[0].mtime_ms), ("/s/a.jsonl", 7));
    /// assert_eq!(listed[0].title.as_ref().and_then(|t| t.title.as_deref()), Some("T"));
    /// ```
    pub fn from_omp_keyspace(
        prefix: &str,
        keys: impl IntoIterator<Item = (String, RedisValue)>,
    ) -> Self {
        let file_prefix = format!("{prefix}file:");
        let (meta_key, title_key) = (format!("{prefix}meta"), format!("{prefix}title"));
        let (mut meta, mut titles) = (Vec::new(), Vec::new());
        let mut sessions = BTreeMap::new();
        for (key, value) in keys {
            match value {
                RedisValue::String(bytes) => {
                    if let Some(path) = key.strip_prefix(&file_prefix) {
                        let slot = Slot {
                            bytes,
                            ..Slot::default()
                        };
                        sessions.insert(path.to_owned(), slot);
                    }
                }
                RedisValue::Hash(fields) if key == meta_key => meta = fields,
                RedisValue::Hash(fields) if key == title_key => titles = fields,
                RedisValue::Hash(_) => {}
            }
        }
        for (path, mtime) in meta {
            if let (Some(slot), Ok(mtime)) = (sessions.get_mut(&path), mtime.trim().parse()) {
                slot.mtime_ms = mtime;
            }
        }
        for (path, raw) in titles {
            if let Some(slot) = sessions.get_mut(&path) {
                slot.title = TitleMeta::from_json(&raw);
            }
        }
        let last = sessions.values().map(|s| s.mtime_ms).max().unwrap_or(0);
        Self {
            sessions: Mutex::new(sessions),
            last_mtime: AtomicU64::new(last),
        }
    }
}

/// The value of one key in a dump of a Redis keyspace ([`MemoryStore::from_omp_keyspace`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisValue {
    /// A STRING's bytes.
    String(Vec<u8>),
    /// A HASH's fields and values.
    Hash(Vec<(String, String)>),
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
