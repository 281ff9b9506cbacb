//! [`FileEntries`]: a store [`SessionFile`] as the tree's [`EntrySource`], so the tree's
//! [`SessionView`](pi_session_tree::SessionView) can answer questions about a file on disk
//! while loading only the entry bodies each question needs.

use pi_session_store::{SessionFile, StoreError};
use pi_session_tree::{EntrySource, NodeInfo};
use pi_session_types::JsonValue;

use crate::read::to_json;

/// A session file read through the tree's [`EntrySource`] trait.
///
/// Entry bodies come back as the JSON the file holds, keys in file order (a file migrated in
/// memory, version 1 or 2, gives its migrated entries instead).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use pi_session::{FileEntries, store::open_bytes, tree::SessionView};
/// let (file, _) = open_bytes(&b"{\"type\":\"session\",\"version\":3,\"id\":\"s\"}\n{\"type\":\"label\",\"id\":\"a\",\"parentId\":null}\n"[..]);
/// let source = FileEntries::new(&file);
/// let view = SessionView::new(&source);
/// assert_eq!(view.index().leaf_id(), Some("a"));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FileEntries<'a> {
    file: &'a SessionFile,
}

impl<'a> FileEntries<'a> {
    /// Wraps an opened session file.
    pub fn new(file: &'a SessionFile) -> Self {
        Self { file }
    }

    /// The session file.
    pub fn file(&self) -> &'a SessionFile {
        self.file
    }
}

/// The entry at `position` as JSON: the bytes of the line (key order kept) when the file is
/// current, the typed (migrated) entry otherwise or when the line needs repairs to parse.
pub(crate) fn entry_value(file: &SessionFile, position: usize) -> Result<JsonValue, StoreError> {
    if !file.is_migrated()
        && let Ok(JsonValue::Object(map)) = serde_json::from_slice::<JsonValue>(&file.raw(position)?)
    {
        return Ok(JsonValue::Object(map));
    }
    Ok(to_json(&file.entry(position)?))
}

impl EntrySource for FileEntries<'_> {
    type Error = StoreError;

    fn entry_count(&self) -> usize {
        self.file.len()
    }

    fn envelope(&self, position: usize) -> NodeInfo {
        self.file.index().get(position).map_or_else(NodeInfo::default, |at| NodeInfo {
            kind: at.envelope.kind.clone(),
            id: at.envelope.id.clone(),
            parent_id: at.envelope.parent_id.clone(),
        })
    }

    fn entry_value(&self, position: usize) -> Result<JsonValue, StoreError> {
        entry_value(self.file, position)
    }

    fn header_value(&self) -> Option<JsonValue> {
        self.file.header().map(to_json)
    }

    fn title_slot(&self) -> Option<String> {
        self.file.title_slot().map(|slot| slot.title.clone())
    }
}
