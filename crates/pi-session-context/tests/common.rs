//! Helpers shared by the tests: minimal sessions built from JSON values.

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
