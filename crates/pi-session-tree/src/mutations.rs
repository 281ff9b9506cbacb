//! Planning tree changes: moving the leaf, branching with a summary, forking
//! a path into a new session. Nothing here writes; the store appends what is
//! planned.

use pi_session_types::view::EntryRef;
use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::context::Dialect;
use crate::index::TreeIndex;
use pi_session_types::js;

/// Errors from planning a tree change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    /// The id names no entry of the session.
    #[error("entry {0} not found: pick an id from `pi-session tree FILE --json`")]
    EntryNotFound(String),
}

/// Where the leaf goes: `Some(id)` for an entry, `None` for before the first
/// entry (the next append starts a new root).
pub type Leaf = Option<String>;

/// `branch(id)`: the new leaf, checked to exist (pi and omp throw
/// `Entry <id> not found` otherwise). Nothing is written: a reopened file's
/// leaf is its last entry again.
pub fn branch_to(index: &TreeIndex, id: &str) -> Result<Leaf, TreeError> {
    index
        .position_of(id)
        .map(|_| Some(id.to_owned()))
        .ok_or_else(|| TreeError::EntryNotFound(id.to_owned()))
}

/// `resetLeaf()`: the leaf before the first entry.
pub fn reset_leaf() -> Leaf {
    None
}

/// A `branch_summary` entry to append after moving the leaf to `leaf`.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummaryPlan {
    /// The leaf to move to before appending (the summary's parent).
    pub leaf: Leaf,
    /// The entry, keys in the dialect's write order; `id` and `timestamp` are
    /// empty strings for the appender to fill (`parentId` is already `leaf`).
    pub entry: Value,
}

/// `branchWithSummary(from, summary, details?, fromExtension?)`: checks `from`,
/// then builds the `branch_summary` entry with `fromId = from ?? "root"` (pi
/// 0.73 and omp 18 both store the new position there). The flag is written as
/// `fromHook` for pi and `fromExtension` for omp.
pub fn branch_with_summary(
    index: &TreeIndex,
    from: Option<&str>,
    summary: &str,
    details: Option<Value>,
    from_extension: Option<bool>,
    dialect: Dialect,
) -> Result<BranchSummaryPlan, TreeError> {
    if let Some(id) = from {
        branch_to(index, id)?;
    }
    let mut entry = Map::new();
    entry.insert("type".into(), Value::from("branch_summary"));
    entry.insert("id".into(), Value::from(""));
    entry.insert("parentId".into(), from.map_or(Value::Null, Value::from));
    entry.insert("timestamp".into(), Value::from(""));
    entry.insert("fromId".into(), Value::from(from.unwrap_or("root")));
    entry.insert("summary".into(), Value::from(summary));
    if let Some(details) = details {
        entry.insert("details".into(), details);
    }
    if let Some(flag) = from_extension {
        let key = dialect.session_rules().branch_summary_flag_key();
        entry.insert(key.into(), Value::Bool(flag));
    }
    Ok(BranchSummaryPlan {
        leaf: from.map(str::to_owned),
        entry: Value::Object(entry),
    })
}

/// Plans the entries of a fork: the path to a leaf, as a new linear session.
///
/// Like pi's `createBranchedSession`, `label` entries on the path are dropped
/// and one fresh label entry per label in effect on a path entry is appended
/// at the end (original label text and timestamp). Unlike pi 0.73, parent
/// links are re-chained across the dropped labels, and a compaction's
/// `firstKeptEntryId` that named a dropped label is moved to the next kept
/// entry, so the fork reloads with the same context. `new_id` gives each new
/// label entry an id not in the set it is shown.
///
/// `path` is the branch (root first); `label_entries` every `label` entry of
/// the file in file order. The caller writes a header with `parentSession`.
pub fn plan_fork(
    path: &[Value],
    label_entries: &[Value],
    new_id: &mut dyn FnMut(&HashSet<String>) -> String,
) -> Vec<Value> {
    let is_label = |e: &Value| EntryRef::new(e).is("label");
    let mut next_kept: HashMap<String, Option<String>> = HashMap::new();
    let mut pending_labels: Vec<String> = Vec::new();
    for entry in path {
        let id = EntryRef::new(entry).id().map(str::to_owned);
        if is_label(entry) {
            pending_labels.extend(id);
        } else {
            for label_id in pending_labels.drain(..) {
                next_kept.insert(label_id, id.clone());
            }
        }
    }
    let mut planned: Vec<Value> = Vec::new();
    let mut ids: HashSet<String> = HashSet::new();
    let mut previous: Option<String> = None;
    for entry in path.iter().filter(|e| !is_label(e)) {
        let mut entry = entry.clone();
        if let Some(map) = entry.as_object_mut() {
            map.insert(
                "parentId".into(),
                previous.clone().map_or(Value::Null, Value::from),
            );
            if let Some(target) =
                js::as_str(EntryRef::new(&*map).first_kept_entry_id()).map(str::to_owned)
                && let Some(replacement) = next_kept.get(&target)
            {
                let value = replacement.clone().map_or(Value::from(""), Value::from);
                map.insert("firstKeptEntryId".into(), value);
            }
            previous = EntryRef::new(&*map).id().map(str::to_owned);
        }
        ids.extend(previous.clone());
        planned.push(entry);
    }
    let on_path: HashSet<&str> = planned
        .iter()
        .filter_map(|e| EntryRef::new(e).id())
        .collect();
    let mut in_effect: Map<String, Value> = Map::new();
    for label in label_entries.iter().filter(|e| is_label(e)) {
        let label = EntryRef::new(label);
        let target = js::string_of(label.target_id());
        if js::truthy(label.label()) {
            let record = serde_json::json!([label.label(), label.timestamp()]);
            in_effect.insert(target, record);
        } else {
            in_effect.shift_remove(&target);
        }
    }
    let mut labels = Vec::new();
    for (target, record) in &in_effect {
        if !on_path.contains(target.as_str()) {
            continue;
        }
        let id = new_id(&ids);
        ids.insert(id.clone());
        let mut entry = Map::new();
        entry.insert("type".into(), Value::from("label"));
        entry.insert("id".into(), Value::from(id.clone()));
        entry.insert(
            "parentId".into(),
            previous.clone().map_or(Value::Null, Value::from),
        );
        entry.insert("timestamp".into(), record[1].clone());
        entry.insert("targetId".into(), Value::from(target.as_str()));
        entry.insert("label".into(), record[0].clone());
        previous = Some(id);
        labels.push(Value::Object(entry));
    }
    planned.extend(labels);
    planned
}
