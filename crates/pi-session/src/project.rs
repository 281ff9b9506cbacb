//! rho's branch and projection functions over typed entries (rho-reqllm.md §A.3, §A.8):
//! [`branch`], [`compacted`], [`context`] and [`messages`]. The rules live in
//! `pi-session-tree` (branch walk, compaction split) and `pi-session-context` (projection);
//! these functions take and give [`Entry`] values.

use pi_session_context::reqllm::Message;
use pi_session_context::rho;
use pi_session_tree::{Compacted, NodeInfo, TreeIndex};
use pi_session_types::{Entry, JsonValue};

use crate::read::to_json;

pub use pi_session_context::ProjectOptions;
pub use pi_session_context::rho::Inputs;

/// The envelope of a typed entry, for the tree index.
pub(crate) fn node_of(entry: &Entry) -> NodeInfo {
    NodeInfo {
        kind: entry.kind().to_owned(),
        id: entry.id().map(str::to_owned),
        parent_id: entry.parent_id().map(str::to_owned),
    }
}

/// rho's `branch/1`: the leaf is the last entry with an id (in the order given); its branch,
/// root first, walking `parentId` until a missing parent or a cycle.
///
/// ```
/// use pi_session::{branch, types::Entry};
/// use serde_json::json;
/// let entry = |id: &str, parent: Option<&str>| Entry::from_map(
///     json!({"type":"label","id":id,"parentId":parent}).as_object().unwrap().clone());
/// let entries = [entry("a", None), entry("b", Some("a")), entry("c", Some("a"))];
/// let ids: Vec<_> = branch(&entries).iter().map(|e| e.id().unwrap().to_owned()).collect();
/// assert_eq!(ids, ["a", "c"]);
/// ```
pub fn branch(entries: &[Entry]) -> Vec<Entry> {
    let index = TreeIndex::from_nodes(entries.iter().map(node_of));
    match index.leaf_position() {
        Some(leaf) => index
            .branch(leaf)
            .positions
            .into_iter()
            .filter_map(|i| entries.get(i).cloned())
            .collect(),
        None => Vec::new(),
    }
}

/// rho's `compacted/1` over a branch (root first): where the latest compaction splits it, as
/// positions in `branch` ([`Compacted::kept_in`] and friends give the entries).
///
/// ```
/// use pi_session::{compacted, types::Entry};
/// use serde_json::json;
/// let entry = |v: serde_json::Value| Entry::from_map(v.as_object().unwrap().clone());
/// let branch = [
///     entry(json!({"type":"label","id":"a","parentId":null})),
///     entry(json!({"type":"label","id":"b","parentId":"a"})),
///     entry(json!({"type":"compaction","id":"c","parentId":"b","summary":"S","firstKeptEntryId":"b","tokensBefore":1})),
///     entry(json!({"type":"label","id":"d","parentId":"c"})),
/// ];
/// let split = compacted(&branch);
/// assert_eq!(split.compaction_in(&branch).and_then(|e| e.id()), Some("c"));
/// assert_eq!(split.kept_in(&branch), &branch[1..2]);
/// assert_eq!(split.later_in(&branch), &branch[3..]);
/// ```
pub fn compacted(branch: &[Entry]) -> Compacted {
    pi_session_tree::compacted(&values_of(branch))
}

/// rho's `context/2`: what the model is sent for a branch (root first) — the compaction
/// summary first, then the messages of the kept and later entries.
pub fn context(branch: &[Entry], options: &ProjectOptions<'_>) -> Vec<Message> {
    rho::context(&values_of(branch), options)
}

/// rho's `messages/2`: the req_llm messages of `entries` (no compaction handling).
pub fn messages(entries: &[Entry], options: &ProjectOptions<'_>) -> Vec<Message> {
    rho::messages(&values_of(entries), options)
}

pub(crate) fn values_of(entries: &[Entry]) -> Vec<JsonValue> {
    entries.iter().map(to_json).collect()
}
