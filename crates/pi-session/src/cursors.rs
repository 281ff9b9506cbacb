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

use pi_session_types::view::EntryRef;
use std::collections::HashMap;

use pi_session_types::{Entry, JsonMap, JsonValue};
use serde_json::json;

use crate::error::Result;
use crate::read::model_from;
use crate::session::{Position, Session};

/// The `customType` of a named cursor's record.
pub const CURSOR_CUSTOM_TYPE: &str = "pi-session.cursor";

/// The key of the record's `data` holding the name (ours: written and read only here).
const NAME_KEY: &str = "name";

/// The record that saves cursor `name`.
pub(crate) fn record(name: &str) -> Entry {
    let mut map = JsonMap::new();
    map.insert("type".into(), "custom".into());
    map.insert("customType".into(), CURSOR_CUSTOM_TYPE.into());
    map.insert("data".into(), json!({ NAME_KEY: name }));
    Entry::from_map(map)
}

/// The cursor name a record entry saves, if `value` is one.
fn name_of(value: &JsonValue) -> Option<&str> {
    if EntryRef::new(value)
        .custom_type()
        .and_then(JsonValue::as_str)
        != Some(CURSOR_CUSTOM_TYPE)
    {
        return None;
    }
    EntryRef::new(value).data()?.get(NAME_KEY)?.as_str()
}

/// Finds the saved cursors of an opened session and registers each at its tip.
pub(crate) fn restore(session: &mut Session) -> Result<()> {
    let tips = {
        let mut log = session.log();
        // Only `custom` bodies are read, and the walk below runs only when one is a record.
        let customs: Vec<usize> = log.index.positions_of_kind("custom").collect();
        let mut records: HashMap<usize, String> = HashMap::new();
        for at in customs {
            if let Some(name) = name_of(&log.value(at)?) {
                records.insert(at, name.to_owned());
            }
        }
        if records.is_empty() {
            return Ok(());
        }
        let len = log.index.len();
        let mut owner: Vec<Option<String>> = vec![None; len];
        let mut by_id: HashMap<&str, usize> = HashMap::new();
        let mut tips: Vec<(String, usize)> = Vec::new();
        for at in 0..len {
            let Some(node) = log.index.node(at) else {
                continue;
            };
            let mine = match records.get(&at) {
                Some(name) => Some(name.clone()),
                None => node
                    .parent_id
                    .and_then(|p| by_id.get(p))
                    .and_then(|&p| owner[p].clone()),
            };
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
        let mut found = Vec::new();
        for (name, at) in tips {
            let positions = log.index.branch(at).positions;
            let branch = positions
                .into_iter()
                .map(|p| log.entry(p))
                .collect::<Result<Vec<_>>>()?;
            let leaf = log.index.node(at).and_then(|n| n.id).map(str::to_owned);
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
