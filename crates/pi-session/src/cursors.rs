//! Named cursors saved in the file, so that a reopened session has them again.
//!
//! A named cursor's first append writes a record before its first entry: a `custom` entry
//! `{"type":"custom","customType":"pi-session.cursor","data":{"name":NAME}}`, the child of the
//! fork point, and the cursor's entries descend from it. pi and omp leave `custom` entries out
//! of the context, so the record changes nothing they send a model.
//!
//! Restoring ([`restore`]): each entry belongs to the cursor whose record is its nearest
//! ancestor record; a name's tip is the last entry in file order that belongs to it (the
//! record itself when nothing was appended below it).

use std::collections::HashMap;

use pi_session_types::{Entry, JsonMap, JsonValue};
use serde_json::json;

use crate::error::Result;
use crate::read::model_from;
use crate::session::{Position, Session};

/// The `customType` of a named cursor's record.
pub const CURSOR_CUSTOM_TYPE: &str = "pi-session.cursor";

/// The record that saves cursor `name`.
pub(crate) fn record(name: &str) -> Entry {
    let mut map = JsonMap::new();
    map.insert("type".into(), "custom".into());
    map.insert("customType".into(), CURSOR_CUSTOM_TYPE.into());
    map.insert("data".into(), json!({ "name": name }));
    Entry::from_map(map)
}

/// The cursor name a record entry saves, if `value` is one.
fn name_of(value: &JsonValue) -> Option<&str> {
    if value.get("customType").and_then(JsonValue::as_str) != Some(CURSOR_CUSTOM_TYPE) {
        return None;
    }
    value.get("data")?.get("name")?.as_str()
}

/// Finds the saved cursors of an opened session and registers each at its tip.
pub(crate) fn restore(session: &mut Session) -> Result<()> {
    let tips = {
        let mut log = session.log();
        let len = log.index.len();
        let mut owner: Vec<Option<String>> = vec![None; len];
        let mut by_id: HashMap<String, usize> = HashMap::new();
        let mut tips: Vec<(String, usize)> = Vec::new();
        let mut any = false;
        for at in 0..len {
            let Some(node) = log.index.node(at).cloned() else {
                continue;
            };
            let mut mine = node
                .parent_id
                .as_deref()
                .and_then(|p| by_id.get(p))
                .and_then(|&p| owner[p].clone());
            if node.kind == "custom"
                && let Ok(entry) = log.entry(at)
                && let Some(name) = name_of(&crate::read::to_json(&entry))
            {
                mine = Some(name.to_owned());
                any = true;
            }
            if let Some(name) = &mine {
                match tips.iter_mut().find(|(n, _)| n == name) {
                    Some(tip) => tip.1 = at,
                    None => tips.push((name.clone(), at)),
                }
            }
            owner[at] = mine;
            if let Some(id) = node.id {
                by_id.insert(id, at);
            }
        }
        if !any {
            return Ok(());
        }
        let mut found = Vec::new();
        for (name, at) in tips {
            let positions = log.index.branch(at).positions;
            let branch = positions
                .into_iter()
                .map(|p| log.entry(p))
                .collect::<Result<Vec<_>>>()?;
            let leaf = log.index.node(at).and_then(|n| n.id.clone());
            log.saved_names.insert(name.clone());
            found.push((name, leaf, model_from(&branch)));
        }
        found
    };
    let default_model = session.model.clone();
    let mut log = session.log();
    for (name, leaf, model) in tips {
        log.names.insert(
            name,
            Position {
                leaf,
                at_start: false,
                model: model.unwrap_or_else(|| default_model.clone()),
            },
        );
    }
    Ok(())
}
