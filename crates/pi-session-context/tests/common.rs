//! Helpers shared by the tests: minimal sessions built from JSON values.

use std::collections::{HashMap, HashSet};

use pi_session_types::line::replace_lone_surrogate_escapes;
use serde_json::{Value, json};

/// Chains `entries` into a linear branch: ids `e1`, `e2`, … and each
/// `parentId` the previous id (unless the entry already has an `id`).
pub fn branch(entries: Vec<Value>) -> Vec<Value> {
    let mut parent = Value::Null;
    entries
        .into_iter()
        .enumerate()
        .map(|(i, mut e)| {
            let obj = e.as_object_mut().unwrap();
            if !obj.contains_key("id") {
                obj.insert("id".into(), json!(format!("e{}", i + 1)));
            }
            obj.insert("parentId".into(), parent.clone());
            parent = obj["id"].clone();
            e
        })
        .collect()
}

/// A `message` entry.
pub fn msg(message: Value) -> Value {
    json!({"type": "message", "message": message})
}

/// A user message entry with text.
pub fn user(text: &str) -> Value {
    msg(json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}))
}

/// An assistant message entry with text and tool calls `(id, name)`.
pub fn assistant(text: &str, calls: &[(&str, &str)]) -> Value {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for (id, name) in calls {
        content.push(
            json!({"type": "toolCall", "id": id, "name": name, "arguments": {"b": 1, "a": 2}}),
        );
    }
    msg(
        json!({"role": "assistant", "content": content, "stopReason": if calls.is_empty() {"stop"} else {"toolUse"}}),
    )
}

/// A tool result entry.
pub fn tool_result(id: &str, name: &str, text: &str) -> Value {
    msg(
        json!({"role": "toolResult", "toolCallId": id, "toolName": name,
        "content": [{"type": "text", "text": text}], "isError": false}),
    )
}

/// A compact one-line-per-message summary of a projection, for asserts.
pub fn outline(messages: &[pi_session_context::Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| {
            let calls = m
                .tool_calls
                .iter()
                .flatten()
                .map(|c| c.id.clone())
                .collect::<Vec<_>>()
                .join(",");
            match m.role {
                pi_session_context::Role::Tool => format!(
                    "tool {}: {}",
                    m.tool_call_id.clone().unwrap_or_default(),
                    m.text()
                ),
                role if calls.is_empty() => format!("{}: {}", role.as_str(), m.text()),
                role => format!("{}: {} [{}]", role.as_str(), m.text(), calls),
            }
        })
        .collect()
}

/// Leaf = last entry with an id; walk `parentId` (stopping on a cycle).
pub fn branch_of_leaf(entries: &[Value]) -> Vec<Value> {
    let by_id: HashMap<&str, &Value> = entries
        .iter()
        .filter_map(|e| Some((e.get("id")?.as_str()?, e)))
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut cursor = entries
        .iter()
        .rev()
        .find(|e| e.get("id").is_some_and(Value::is_string));
    while let Some(entry) = cursor {
        let id = entry["id"].as_str().unwrap_or_default();
        if !seen.insert(id.to_owned()) {
            break;
        }
        out.push(entry.clone());
        cursor = entry
            .get("parentId")
            .and_then(Value::as_str)
            .and_then(|p| by_id.get(p).copied());
    }
    out.reverse();
    out
}

/// The JSON objects of a session file with a string `type` (lines that are
/// not JSON are skipped; lone surrogates become U+FFFD), header and title
/// slot left out.
pub fn read_entries(path: &std::path::Path) -> Vec<Value> {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(&replace_lone_surrogate_escapes(l)).ok())
        .filter(|v| v.get("type").is_some_and(Value::is_string))
        .filter(|v| !matches!(v["type"].as_str(), Some("session" | "title")))
        .collect()
}

/// rho's promise: every tool call is answered before the next non-tool
/// message (and by the end), and no thinking is sent back.
pub fn assert_valid_for_provider(messages: &[pi_session_context::Message], what: &str) {
    use pi_session_context::{PartType, Role};
    let mut open: Vec<String> = Vec::new();
    for message in messages {
        assert!(
            message.content.iter().all(|p| p.kind != PartType::Thinking),
            "{what}: thinking sent back"
        );
        if message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            open.retain(|o| o != id);
            continue;
        }
        assert!(open.is_empty(), "{what}: calls {open:?} unanswered");
        open = message
            .tool_calls
            .iter()
            .flatten()
            .map(|c| c.id.clone())
            .collect();
    }
    assert!(
        open.is_empty(),
        "{what}: calls {open:?} unanswered at the end"
    );
}
