//! File-global facts read from a few entry types: labels, the session name,
//! omp archive records and reset boundaries; and [`tree_json`], the tree
//! questions pi and omp answer for a whole file.
//!
//! Each function takes entries in FILE order (every branch), because pi and
//! omp resolve these globally, not per branch. Feed them just the entries of
//! the relevant type (see [`crate::TreeIndex::positions_of_kind`]) to avoid
//! loading message bodies.

use pi_session_types::view::EntryRef;
use serde_json::{Map, Value, json};

use crate::index::TreeIndex;
use pi_session_types::js;

/// `{"leafId", "branchIds", "tips", "labels"}` (`pi-session tree --json`, and what the recorded
/// fixtures hold): the leaf (the last entry; none when it has no id, as in pi and omp), the ids
/// on its branch root first, the ids of every tip in file order, and the labels in effect.
pub fn tree_json(index: &TreeIndex, labels: &Map<String, Value>) -> Value {
    // pi and omp take the file's last entry as the leaf; when that line has no id there is none
    // (`leafId` undefined, an empty branch), whatever entries with ids came before it.
    let last = index.len().checked_sub(1);
    let leaf = last.filter(|&pos| index.node(pos).is_some_and(|n| n.id.is_some()));
    let id_of = |pos: usize| {
        index
            .node(pos)
            .and_then(|n| n.id)
            .map_or(Value::Null, Value::from)
    };
    let branch_ids: Vec<Value> = leaf
        .map(|pos| index.branch(pos).positions)
        .unwrap_or_default()
        .into_iter()
        .map(id_of)
        .collect();
    let tips: Vec<Value> = index.tips().into_iter().map(id_of).collect();
    json!({
        "leafId": leaf.map_or(Value::Null, id_of),
        "branchIds": branch_ids,
        "tips": tips,
        "labels": Value::Object(labels.clone()),
    })
}

/// Labels in effect: target id → label, in the order pi's label map holds
/// them (first set; a clear and re-set moves the target to the end).
///
/// The last `label` entry for a target wins; a missing or empty label clears
/// it (pi and omp: `if (entry.label) set else delete`).
pub fn labels<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Map<String, Value> {
    let mut labels = Map::new();
    for entry in entries {
        if !EntryRef::new(entry).is("label") {
            continue;
        }
        let entry = EntryRef::new(entry);
        let target = js::string_of(entry.target_id());
        if js::truthy(entry.label()) {
            if let Some(label) = entry.label() {
                labels.insert(target, label.clone());
            }
        } else {
            labels.shift_remove(&target);
        }
    }
    labels
}

/// pi's session name: the latest `session_info` entry in file order wins,
/// including clears (0.73: `name?.trim() || undefined`).
pub fn pi_session_name<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Option<String> {
    let mut name = None;
    for entry in entries {
        if EntryRef::new(entry).is("session_info") {
            name = js::as_str(EntryRef::new(entry).name())
                .map(js::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned);
        }
    }
    name
}

/// omp's session title: the title slot when the file has a valid one (an
/// empty slot title means untitled), else the header's `title`.
pub fn omp_session_title(slot_title: Option<&str>, header: Option<&Value>) -> Option<String> {
    match slot_title {
        Some(title) => (!title.is_empty()).then(|| title.to_owned()),
        None => js::as_str(EntryRef::new(header).title())
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
    }
}

/// omp `archive` records in effect: target id → archived, last record per
/// target wins. Archived tips are hidden from tree views.
pub fn archived<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Map<String, Value> {
    let mut archived = Map::new();
    for entry in entries {
        if !EntryRef::new(entry).is("archive") {
            continue;
        }
        let Some(target) = js::as_str(EntryRef::new(entry).target_id()) else {
            continue;
        };
        let flag = EntryRef::new(entry)
            .archived()
            .and_then(Value::as_bool)
            .unwrap_or(false);
        archived.shift_remove(target);
        if flag {
            archived.insert(target.to_owned(), Value::Bool(true));
        }
    }
    archived
}

/// Index of the latest `reset_boundary` on a branch (omp's `/clear`): model
/// context starts after it unless a later compaction exists.
pub fn latest_reset_boundary(branch: &[Value]) -> Option<usize> {
    branch
        .iter()
        .rposition(|e| EntryRef::new(e).is("reset_boundary"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn last_label_in_file_order_wins_and_empty_clears() {
        let entries = [
            json!({"type":"label","targetId":"a","label":"one"}),
            json!({"type":"label","targetId":"b","label":"two"}),
            json!({"type":"label","targetId":"a","label":""}),
            json!({"type":"label","targetId":"b","label":"three"}),
            json!({"type":"label","targetId":"c"}),
        ];
        assert_eq!(Value::Object(labels(&entries)), json!({"b":"three"}));
    }

    #[test]
    fn session_name_clears() {
        let entries = [
            json!({"type":"session_info","name":" x "}),
            json!({"type":"session_info","name":"  "}),
        ];
        assert_eq!(pi_session_name(&entries[..1]), Some("x".into()));
        assert_eq!(pi_session_name(&entries), None);
    }
}
