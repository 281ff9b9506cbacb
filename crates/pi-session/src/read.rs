//! rho's reading helpers (rho-reqllm.md §A.7, §A.9, §A.10): what the user typed, the text,
//! thinking and tool calls of a message, attachments, notices, the model in effect, usage and
//! totals.
//!
//! The rules for text, branches, totals and the model in effect live in `pi-session-context`
//! and `pi-session-tree`; these functions give them rho's names over typed entries.

use pi_session_context::rho;
use pi_session_tree as tree;
use pi_session_types::view::{BlockRef, MessageRef};
use pi_session_types::{
    AgentMessage, Attachment, Content, ContentBlock, Cost, Entry, JsonMap, JsonNumber, JsonValue,
    ToolCallBlock, Usage,
};
use serde::Serialize;

use crate::entries::NoticeKind;
use crate::model::from_pi_model;

pub use pi_session_tree::Totals;

/// The result text rho gives a tool call that never got one: exactly
/// `"Tool was not executed because the run was aborted."`.
pub fn aborted_tool_text() -> &'static str {
    rho::ABORTED_TOOL_TEXT
}

/// A typed value as JSON. Serialising the session types cannot fail (every map has string
/// keys), so a failure would only give `null`.
pub(crate) fn to_json<T: Serialize>(value: &T) -> JsonValue {
    serde_json::to_value(value).unwrap_or_default()
}

/// rho's `text/1`: a string content as is; the `text` of every text part, concatenated with no
/// separator; anything else `""`.
///
/// ```
/// use pi_session::types::{Content, ContentBlock, TextBlock};
/// let content = Content::Blocks(vec![ContentBlock::Text(TextBlock::new("a")), ContentBlock::Text(TextBlock::new("b"))]);
/// assert_eq!(pi_session::text(&content), "ab");
/// ```
pub fn text(content: &Content) -> String {
    rho::text(Some(&to_json(content)))
}

/// rho's `typed/1`: what the user typed. Without attachments, the message's text; with `n`
/// attachments, the text parts except the last `n` (each attachment adds one envelope text part
/// after the typed text). A string content with attachments gives `""`.
pub fn typed(message: &AgentMessage) -> String {
    typed_value(&to_json(message))
}

pub(crate) fn typed_value(message: &JsonValue) -> String {
    let attached = match MessageRef::new(message).attachments() {
        Some(JsonValue::Array(items)) => items.len(),
        _ => 0,
    };
    if attached == 0 {
        return rho::text(MessageRef::new(message).content());
    }
    let Some(JsonValue::Array(parts)) = MessageRef::new(message).content() else {
        return String::new();
    };
    let text_parts: Vec<JsonValue> = parts
        .iter()
        .filter(|p| BlockRef::new(p).is("text"))
        .cloned()
        .collect();
    let keep = text_parts.len().saturating_sub(attached);
    rho::text(Some(&JsonValue::Array(text_parts[..keep].to_vec())))
}

/// rho's `thinking/1`: the thinking parts of a message, concatenated.
pub fn thinking(message: &AgentMessage) -> String {
    message_content(message)
        .map(Content::blocks)
        .unwrap_or_default()
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Thinking(t) => Some(t.thinking.as_str()),
            _ => None,
        })
        .collect()
}

/// rho's `tool_calls/1`: the `toolCall` parts of a message, in order.
pub fn tool_calls(message: &AgentMessage) -> Vec<&ToolCallBlock> {
    message_content(message)
        .map(Content::blocks)
        .unwrap_or_default()
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect()
}

/// rho's `attachments/1`: a user message's `attachments` list (empty for other messages).
pub fn attachments(message: &AgentMessage) -> &[Attachment] {
    match message {
        AgentMessage::User(user) => user.attachments.as_deref().unwrap_or_default(),
        _ => &[],
    }
}

fn message_content(message: &AgentMessage) -> Option<&Content> {
    Some(match message {
        AgentMessage::User(m) => &m.content,
        AgentMessage::Developer(m) => &m.content,
        AgentMessage::System(m) => &m.content,
        AgentMessage::Assistant(m) => &m.content,
        AgentMessage::ToolResult(m) => &m.content,
        AgentMessage::Custom(m) => &m.content,
        _ => return None,
    })
}

/// The notice kind of a `custom_message` whose `customType` is `<namespace>.notice`,
/// `<namespace>.error` or `<namespace>.aside`, whatever the namespace (so sessions Operator
/// wrote, `operator.notice`, read the same as rho's).
///
/// ```
/// use pi_session::{custom_in, notice_kind, NoticeKind};
/// assert_eq!(notice_kind(&custom_in("operator", NoticeKind::Aside, "psst")), Some(NoticeKind::Aside));
/// ```
pub fn notice_kind(entry: &Entry) -> Option<NoticeKind> {
    let Entry::CustomMessage(custom) = entry else {
        return None;
    };
    let (namespace, kind) = custom.custom_type.as_deref()?.rsplit_once('.')?;
    if namespace.is_empty() {
        return None;
    }
    NoticeKind::parse(kind)
}

/// rho's `model_from/1`: the req_llm spec of the model in effect on a branch (the last
/// default-role `model_change`, else the last assistant's provider and model), or `None`.
pub fn model_from(branch: &[Entry]) -> Option<String> {
    let values: Vec<JsonValue> = branch.iter().map(to_json).collect();
    tree::pi_model_from(&values).map(|model| from_pi_model(&model))
}

/// rho's `usage/1`: a req_llm usage map (keys as req_llm names them: `input_tokens`,
/// `output_tokens`, `cache_read_tokens`/`cached_tokens`, `cache_write_tokens`/
/// `cache_creation_tokens`, `input_cost`, `output_cost`, `total_cost`/`cost`) → pi's `Usage`.
///
/// Each alternative takes the **first key present** (and not `null` or `false`), even when it
/// is 0, as Elixir's `||` does. Input excludes cache reads and writes, never below 0.
///
/// ```
/// use serde_json::json;
/// let map = json!({"input_tokens": 100, "output_tokens": 20, "cache_read_tokens": 0, "cached_tokens": 50});
/// let usage = pi_session::usage(map.as_object().unwrap());
/// assert_eq!(usage.cache_read(), 0); // the first present key wins, even at 0
/// assert_eq!(usage.input(), 100);
/// assert_eq!(usage.total_tokens(), 120);
/// ```
pub fn usage(u: &JsonMap) -> Usage {
    let count = |keys: &[&str]| first_present(u, keys).map_or(0.0, number_or_zero);
    let cache_read = count(&["cache_read_tokens", "cached_tokens"]);
    let cache_write = count(&["cache_write_tokens", "cache_creation_tokens"]);
    let input = (count(&["input_tokens"]) - cache_read - cache_write).max(0.0);
    let output = count(&["output_tokens"]);
    let cost = |keys: &[&str]| {
        Some(json_number(
            first_present(u, keys).map_or(0.0, number_or_zero),
        ))
    };
    let cost = Cost {
        input: cost(&["input_cost"]),
        output: cost(&["output_cost"]),
        cache_read: Some(JsonNumber::from(0)),
        cache_write: Some(JsonNumber::from(0)),
        total: cost(&["total_cost", "cost"]),
        ..Cost::default()
    };
    Usage {
        input: Some(json_number(input)),
        output: Some(json_number(output)),
        cache_read: Some(json_number(cache_read)),
        cache_write: Some(json_number(cache_write)),
        total_tokens: Some(json_number(input + output + cache_read + cache_write)),
        cost: Some(cost),
        ..Usage::default()
    }
}

/// The value of the first key present with a value other than `null` and `false`.
fn first_present<'a>(map: &'a JsonMap, keys: &[&str]) -> Option<&'a JsonValue> {
    keys.iter()
        .filter_map(|k| map.get(*k))
        .find(|v| !matches!(v, JsonValue::Null | JsonValue::Bool(false)))
}

/// rho's `num/1`: a number as is, anything else 0.
fn number_or_zero(value: &JsonValue) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

/// A JSON number: an integer when the value is whole and exactly representable, else a float.
pub(crate) fn json_number(value: f64) -> JsonNumber {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.fract() == 0.0 && value.abs() < EXACT {
        // Whole and below 2^53: the conversion is exact.
        #[allow(clippy::cast_possible_truncation)]
        return JsonNumber::from(value as i64);
    }
    JsonNumber::from_f64(value).unwrap_or_else(|| JsonNumber::from(0))
}

/// rho's `totals/1`: tokens, output tokens and cost over the assistant messages of `entries`
/// (errored and aborted turns included).
pub fn totals(entries: &[Entry]) -> Totals {
    let values: Vec<JsonValue> = entries.iter().map(to_json).collect();
    tree::totals(&values)
}

/// rho's `add_usage/2`: adds one `Usage` to a running total.
pub fn add_usage(totals: Totals, usage: &Usage) -> Totals {
    tree::add_usage(totals, &to_json(usage))
}
