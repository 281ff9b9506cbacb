//! Anthropic Messages (`anthropic-messages`): pi 0.73.1
//! `dist/providers/anthropic.js` (`convertMessages`, `buildParams`,
//! `streamSimpleAnthropic`) with `simple-options.js`.
//!
//! Rules: tool-call ids `[^a-zA-Z0-9_-]` → `_`, at most 64 (calls from other
//! models); blank user text dropped, a user turn left empty skipped; assistant
//! blank text dropped, signed thinking kept as `thinking`, unsigned thinking
//! sent as text, redacted thinking as `redacted_thinking`, tool calls as
//! `tool_use`; consecutive tool results merged into one user turn of
//! `tool_result` blocks (a text-only result's content is one string); the
//! system prompt as one `system` text block; `cache_control: {type:
//! "ephemeral"}` on the system block and on the last block of the last
//! message when that is a user turn (a string content becomes a block);
//! `thinking` from the thinking level: `disabled`, `enabled` with a budget
//! (older models) or `adaptive` with `output_config.effort` (Opus/Sonnet 4.6+).

use pi_session_types::js::object;
use pi_session_types::view::{BlockRef, MessageRef};
use serde::Serialize;
use serde_json::{Value, json};

use super::registry::Model;
use super::transform::{
    block_type, blocks, is_blank, str_field, transform_messages, truthy, wire_text_block,
};
use super::{PiAi, RequestOptions, to_object};

/// The session-decided part of an Anthropic Messages body, in pi-ai's key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AnthropicRequest {
    /// `messages`.
    pub messages: Vec<Value>,
    /// `system` blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<Vec<Value>>,
    /// `thinking`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Value>,
    /// `output_config` (adaptive thinking's effort).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_config: Option<Value>,
}

impl AnthropicRequest {
    /// The JSON object.
    pub fn to_value(&self) -> Value {
        to_object(self)
    }
}

/// pi's `supportsAdaptiveThinking(modelId)`.
fn adaptive(id: &str) -> bool {
    [
        "opus-4-6",
        "opus-4.6",
        "opus-4-7",
        "opus-4.7",
        "sonnet-4-6",
        "sonnet-4.6",
    ]
    .iter()
    .any(|p| id.contains(p))
}

/// The Anthropic request pi-ai builds.
pub fn request(
    messages: &[Value],
    model: &Model,
    _pi_ai: PiAi,
    options: &RequestOptions,
) -> AnthropicRequest {
    let marker = json!({"type": "ephemeral"});
    let mut out = AnthropicRequest {
        messages: convert_messages(messages, model, &marker),
        ..AnthropicRequest::default()
    };
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        out.system = Some(vec![
            json!({"type": "text", "text": system, "cache_control": marker}),
        ]);
    }
    if model.reasoning {
        let level = options.thinking_level.as_str();
        if level.is_empty() || level == "off" {
            out.thinking = Some(json!({"type": "disabled"}));
        } else if adaptive(&model.id) {
            out.thinking = Some(json!({"type": "adaptive", "display": "summarized"}));
            out.output_config = Some(json!({"effort": adaptive_effort(model, level)}));
        } else {
            let budget = thinking_budget(model, options, level);
            out.thinking =
                Some(json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}));
        }
    }
    out
}

fn adaptive_effort(model: &Model, level: &str) -> Value {
    if let Some(mapped @ Value::String(_)) = super::openai_chat::mapped_level(model, level) {
        return mapped.clone();
    }
    json!(match level {
        "minimal" | "low" => "low",
        "medium" => "medium",
        _ => "high",
    })
}

/// pi's `adjustMaxTokensForThinking(base, model.maxTokens, level).thinkingBudget`
/// (`|| 1024` when it comes out 0).
fn thinking_budget(model: &Model, options: &RequestOptions, level: &str) -> u64 {
    let model_max = model.max_tokens.unwrap_or(0);
    let base = options.max_tokens.unwrap_or(if model_max > 0 {
        model_max.min(32000)
    } else {
        0
    });
    let level = if level == "xhigh" { "high" } else { level };
    let mut budget: u64 = match level {
        "minimal" => 1024,
        "low" => 2048,
        "medium" => 8192,
        _ => 16384,
    };
    let max_tokens = (base + budget).min(model_max);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(1024);
    }
    if budget == 0 { 1024 } else { budget }
}

fn normalize_id(id: &str) -> String {
    super::openai_chat::sanitize(id).chars().take(64).collect()
}

fn image_block(item: &Value) -> Value {
    let source = object([
        ("type", Some(json!("base64"))),
        ("media_type", BlockRef::new(item).mime_type().cloned()),
        ("data", BlockRef::new(item).data().cloned()),
    ]);
    json!({"type": "image", "source": source})
}

fn text_value(block: &Value, key: &str) -> Value {
    block.get(key).cloned().unwrap_or(Value::Null)
}

/// pi's `convertContentBlocks`: text only → one string joined by `\n`; with
/// pictures → blocks (a leading `(see attached image)` when there is no text).
fn tool_result_content(content: &[Value]) -> Value {
    if !content.iter().any(|c| block_type(c) == Some("image")) {
        let text: Vec<String> = content
            .iter()
            .map(|c| pi_session_types::js::string_of(BlockRef::new(c).text()))
            .collect();
        return json!(text.join("\n"));
    }
    let mut out: Vec<Value> = content
        .iter()
        .map(|b| {
            if block_type(b) == Some("text") {
                json!({"type": "text", "text": text_value(b, "text")})
            } else {
                image_block(b)
            }
        })
        .collect();
    if !out.iter().any(|b| block_type(b) == Some("text")) {
        out.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(out)
}

fn tool_result(message: &Value) -> Value {
    object([
        ("type", Some(json!("tool_result"))),
        ("tool_use_id", Some(text_value(message, "toolCallId"))),
        ("content", Some(tool_result_content(blocks(message)))),
        ("is_error", MessageRef::new(message).is_error().cloned()),
    ])
}

fn convert_messages(messages: &[Value], model: &Model, marker: &Value) -> Vec<Value> {
    let normalize = |id: &str, _source: &Value| normalize_id(id);
    let transformed = transform_messages(messages, model, Some(&normalize));
    let mut params: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < transformed.len() {
        let message = &transformed[i];
        match MessageRef::new(message).role() {
            Some("user") => match MessageRef::new(message).content() {
                Some(Value::String(text)) => {
                    if !is_blank(text) {
                        params.push(json!({"role": "user", "content": text}));
                    }
                }
                _ => {
                    let content: Vec<Value> = blocks(message)
                        .iter()
                        .filter_map(|item| {
                            if block_type(item) == Some("text") {
                                let text = BlockRef::new(item).text_str().unwrap_or("");
                                (!is_blank(text)).then(|| json!({"type": "text", "text": text}))
                            } else {
                                Some(image_block(item))
                            }
                        })
                        .collect();
                    if !content.is_empty() {
                        params.push(json!({"role": "user", "content": content}));
                    }
                }
            },
            Some("assistant") => {
                let content = assistant_blocks(message);
                if !content.is_empty() {
                    params.push(json!({"role": "assistant", "content": content}));
                }
            }
            Some("toolResult") => {
                let mut results = Vec::new();
                while i < transformed.len()
                    && MessageRef::new(&transformed[i]).role() == Some("toolResult")
                {
                    results.push(tool_result(&transformed[i]));
                    i += 1;
                }
                params.push(json!({"role": "user", "content": results}));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if let Some(last) = params.last_mut()
        // Provider wire JSON (not the session schema): Anthropic request params.
        && str_field(last, "role") == Some("user")
    {
        mark_last_user(last, marker);
    }
    params
}

fn assistant_blocks(message: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for block in blocks(message) {
        match block_type(block) {
            Some("text") => out.extend(wire_text_block(block)),
            Some("thinking") => {
                if truthy(BlockRef::new(block).redacted()) {
                    out.push(object([
                        ("type", Some(json!("redacted_thinking"))),
                        ("data", BlockRef::new(block).thinking_signature().cloned()),
                    ]));
                    continue;
                }
                let thinking = BlockRef::new(block).thinking_str().unwrap_or("");
                if is_blank(thinking) {
                    continue;
                }
                match BlockRef::new(block)
                    .thinking_signature_str()
                    .filter(|s| !is_blank(s))
                {
                    Some(signature) => out.push(
                        json!({"type": "thinking", "thinking": thinking, "signature": signature}),
                    ),
                    None => out.push(json!({"type": "text", "text": thinking})),
                }
            }
            Some("toolCall") => out.push(tool_use_block(block)),
            _ => {}
        }
    }
    out
}

/// A tool call as a `tool_use` block (missing arguments: `{}`); both pi-ai versions.
pub(super) fn tool_use_block(block: &Value) -> Value {
    let input = match BlockRef::new(block).arguments() {
        None | Some(Value::Null) => json!({}),
        Some(a) => a.clone(),
    };
    object([
        ("type", Some(json!("tool_use"))),
        ("id", BlockRef::new(block).id().cloned()),
        ("name", BlockRef::new(block).name().cloned()),
        ("input", Some(input)),
    ])
}

fn mark_last_user(message: &mut Value, marker: &Value) {
    let Some(map) = message.as_object_mut() else {
        return;
    };
    // Provider wire JSON (not the session schema): an Anthropic request param.
    match map.get_mut("content") {
        Some(Value::Array(content)) => {
            if let Some(last) = content.last_mut()
                && matches!(block_type(last), Some("text" | "image" | "tool_result"))
                && let Some(block) = last.as_object_mut()
            {
                block.insert("cache_control".into(), marker.clone());
            }
        }
        Some(Value::String(text)) => {
            let text = std::mem::take(text);
            map.insert(
                "content".into(),
                json!([{"type": "text", "text": text, "cache_control": marker}]),
            );
        }
        _ => {}
    }
}
