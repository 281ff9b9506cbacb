//! pi-ai's common first pass over the messages (`transformMessages`, pi
//! 0.73.1 `dist/providers/transform-messages.js`), run by every API before
//! its own conversion:
//!
//! 1. a model without image input: user images become
//!    `(image omitted: model does not support images)`, tool-result images
//!    `(tool image omitted: model does not support images)`, a run of images
//!    one placeholder;
//! 2. assistant turns from another model (provider, api or id differ):
//!    redacted thinking dropped, empty thinking dropped, thinking turned into
//!    text, `thoughtSignature` removed from tool calls, tool-call ids
//!    normalised by the API's rule (results follow the new id); from the same
//!    model: thinking kept when signed or non-empty;
//! 3. errored and aborted assistant turns skipped;
//! 4. a tool call without a result gets `No result provided` (an error
//!    result) before the next assistant or user turn, or at the end.

use serde_json::{Map, Value, json};

use super::registry::Model;

/// pi-ai's placeholder for a user picture sent to a model without image input.
pub const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
/// pi-ai's placeholder for a tool-result picture sent to a model without image input.
pub const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";
/// The text of the synthetic result of a call that got none.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// An API's tool-call id rule: `(id, source assistant message) -> new id`.
pub type NormalizeId<'a> = &'a dyn Fn(&str, &Value) -> String;

/// Whether an assistant message came from `model` (provider, api and id all equal).
pub fn is_same_model(message: &Value, model: &Model) -> bool {
    str_field(message, "provider") == Some(model.provider.as_str())
        && str_field(message, "api") == Some(model.api.as_str())
        && str_field(message, "model") == Some(model.id.as_str())
}

/// A string field of an object.
pub fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The `type` of a content block.
pub fn block_type(block: &Value) -> Option<&str> {
    str_field(block, "type")
}

/// A message's content blocks (an empty slice for string or missing content).
pub fn blocks(message: &Value) -> &[Value] {
    message
        .get("content")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `text.trim() === ""` with JavaScript's whitespace set.
pub fn is_blank(text: &str) -> bool {
    pi_session_types::js::trim(text).is_empty()
}

/// Runs the first pass. `normalize_id(id, source_assistant)` is the API's
/// tool-call id rule, applied to calls from other models only (pi); `None`
/// keeps every id.
pub fn transform_messages(
    messages: &[Value],
    model: &Model,
    normalize_id: Option<NormalizeId<'_>>,
) -> Vec<Value> {
    let mut id_map: Map<String, Value> = Map::new();
    let images_ok = model.takes_images();
    let transformed: Vec<Value> = messages
        .iter()
        .map(|message| {
            let message = if images_ok {
                message.clone()
            } else {
                downgrade_images(message)
            };
            match str_field(&message, "role") {
                Some("toolResult") => {
                    let mapped = str_field(&message, "toolCallId")
                        .and_then(|id| id_map.get(id))
                        .cloned();
                    match mapped {
                        Some(new_id) if Some(&new_id) != message.get("toolCallId") => {
                            let mut out = message;
                            if let Some(map) = out.as_object_mut() {
                                map.insert("toolCallId".into(), new_id);
                            }
                            out
                        }
                        _ => message,
                    }
                }
                Some("assistant") => transform_assistant(message, model, normalize_id, &mut id_map),
                _ => message,
            }
        })
        .collect();
    insert_synthetic_results(transformed)
}

fn transform_assistant(
    message: Value,
    model: &Model,
    normalize_id: Option<NormalizeId<'_>>,
    id_map: &mut Map<String, Value>,
) -> Value {
    let same = is_same_model(&message, model);
    let mut content = Vec::new();
    for block in blocks(&message) {
        match block_type(block) {
            Some("thinking") => {
                if truthy(block.get("redacted")) {
                    if same {
                        content.push(block.clone());
                    }
                    continue;
                }
                if same && truthy(block.get("thinkingSignature")) {
                    content.push(block.clone());
                    continue;
                }
                let thinking = str_field(block, "thinking").unwrap_or("");
                if thinking.is_empty() || is_blank(thinking) {
                    continue;
                }
                if same {
                    content.push(block.clone());
                } else {
                    content.push(json!({"type": "text", "text": block.get("thinking").cloned().unwrap_or(Value::Null)}));
                }
            }
            Some("text") => {
                if same {
                    content.push(block.clone());
                } else {
                    let mut text = Map::new();
                    text.insert("type".into(), json!("text"));
                    if let Some(t) = block.get("text") {
                        text.insert("text".into(), t.clone());
                    }
                    content.push(Value::Object(text));
                }
            }
            Some("toolCall") => {
                let mut call = block.clone();
                if !same
                    && truthy(block.get("thoughtSignature"))
                    && let Some(map) = call.as_object_mut()
                {
                    map.remove("thoughtSignature");
                }
                if !same
                    && let Some(normalize) = normalize_id
                    && let Some(id) = str_field(block, "id")
                {
                    let new_id = normalize(id, &message);
                    if new_id != id {
                        id_map.insert(id.to_owned(), Value::String(new_id.clone()));
                        if let Some(map) = call.as_object_mut() {
                            map.insert("id".into(), Value::String(new_id));
                        }
                    }
                }
                content.push(call);
            }
            _ => content.push(block.clone()),
        }
    }
    let mut out = message;
    if let Some(map) = out.as_object_mut() {
        map.insert("content".into(), Value::Array(content));
    }
    out
}

fn insert_synthetic_results(transformed: Vec<Value>) -> Vec<Value> {
    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<Value> = Vec::new();
    let mut answered: Vec<String> = Vec::new();
    let flush = |result: &mut Vec<Value>, pending: &mut Vec<Value>, answered: &mut Vec<String>| {
        for call in pending.drain(..) {
            let id = str_field(&call, "id").unwrap_or("");
            if !answered.iter().any(|a| a == id) {
                let mut synthetic = Map::new();
                synthetic.insert("role".into(), json!("toolResult"));
                synthetic.insert(
                    "toolCallId".into(),
                    call.get("id").cloned().unwrap_or(Value::Null),
                );
                if let Some(name) = call.get("name") {
                    synthetic.insert("toolName".into(), name.clone());
                }
                synthetic.insert(
                    "content".into(),
                    json!([{"type": "text", "text": NO_RESULT_TEXT}]),
                );
                synthetic.insert("isError".into(), json!(true));
                result.push(Value::Object(synthetic));
            }
        }
        answered.clear();
    };
    for message in transformed {
        match str_field(&message, "role") {
            Some("assistant") => {
                flush(&mut result, &mut pending, &mut answered);
                if matches!(str_field(&message, "stopReason"), Some("error" | "aborted")) {
                    continue;
                }
                let calls: Vec<Value> = blocks(&message)
                    .iter()
                    .filter(|b| block_type(b) == Some("toolCall"))
                    .cloned()
                    .collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                result.push(message);
            }
            Some("toolResult") => {
                if let Some(id) = str_field(&message, "toolCallId") {
                    answered.push(id.to_owned());
                }
                result.push(message);
            }
            Some("user") => {
                flush(&mut result, &mut pending, &mut answered);
                result.push(message);
            }
            _ => result.push(message),
        }
    }
    flush(&mut result, &mut pending, &mut answered);
    result
}

/// Replaces pictures by pi-ai's placeholders (model without image input).
fn downgrade_images(message: &Value) -> Value {
    let placeholder = match str_field(message, "role") {
        Some("user") if message.get("content").is_some_and(Value::is_array) => {
            USER_IMAGE_PLACEHOLDER
        }
        Some("toolResult") => TOOL_IMAGE_PLACEHOLDER,
        _ => return message.clone(),
    };
    let mut out = message.clone();
    if let Some(map) = out.as_object_mut() {
        map.insert(
            "content".into(),
            Value::Array(replace_images(blocks(message), placeholder)),
        );
    }
    out
}

fn replace_images(content: &[Value], placeholder: &str) -> Vec<Value> {
    let mut result = Vec::new();
    let mut previous_was_placeholder = false;
    for block in content {
        if block_type(block) == Some("image") {
            if !previous_was_placeholder {
                result.push(json!({"type": "text", "text": placeholder}));
            }
            previous_was_placeholder = true;
            continue;
        }
        result.push(block.clone());
        previous_was_placeholder = str_field(block, "text") == Some(placeholder);
    }
    result
}

/// A tool result's text blocks joined by `\n` (every API sends tool results this way).
pub fn tool_result_text(message: &Value) -> String {
    blocks(message)
        .iter()
        .filter(|c| block_type(c) == Some("text"))
        .map(|c| pi_session_types::js::to_js_string(c.get("text")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A user turn's content blocks as `{type: text_type, text}` parts and
/// `image(block)` for everything else (Chat Completions and Responses).
pub fn user_parts(message: &Value, text_type: &str, image: impl Fn(&Value) -> Value) -> Vec<Value> {
    blocks(message)
        .iter()
        .map(|item| {
            if block_type(item) == Some("text") {
                json!({"type": text_type, "text": item.get("text").cloned().unwrap_or(Value::Null)})
            } else {
                image(item)
            }
        })
        .collect()
}

/// JavaScript truthiness of an optional value.
pub fn truthy(value: Option<&Value>) -> bool {
    pi_session_types::js::truthy(value)
}
