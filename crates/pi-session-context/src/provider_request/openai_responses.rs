//! OpenAI Responses (`openai-responses`): pi 0.73.1
//! `dist/providers/openai-responses.js` (`buildParams`,
//! `streamSimpleOpenAIResponses`) and `openai-responses-shared.js`
//! (`convertResponsesMessages`).
//!
//! Rules: the system prompt first (`developer` for a reasoning model, else
//! `system`); tool-call ids are `call_id|item_id`: for the providers openai,
//! openai-codex and opencode, a foreign item id becomes
//! `fc_<shortHash(item)>` and every item id starts `fc_`, elsewhere the id is
//! sanitised (at most 64, trailing `_` trimmed); user content as
//! `input_text`/`input_image`; signed thinking replayed as its reasoning item
//! (the signature is the item's JSON), unsigned thinking dropped; text as
//! `message` items with the text signature's id (`msg_<n>` when absent);
//! tool calls as `function_call` items (the item id left out for another
//! model of the same provider), results as `function_call_output`;
//! `reasoning`/`include` from the thinking level.

use pi_session_types::js::object;
use pi_session_types::view::{BlockRef, MessageRef, TextSignatureRef};
use serde::Serialize;
use serde_json::{Value, json};

use super::openai_chat::{mapped_level, reasoning_effort, sanitize, stringify_arguments};
use super::registry::Model;
use super::transform::{block_type, blocks, tool_result_text, transform_messages, user_parts};
use super::{PiAi, RequestOptions, to_object};

/// The session-decided part of a Responses body, in pi-ai's key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ResponsesRequest {
    /// `input`.
    pub input: Vec<Value>,
    /// `reasoning`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Value>,
    /// `include`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<Value>>,
}

impl ResponsesRequest {
    /// The JSON object.
    pub fn to_value(&self) -> Value {
        to_object(self)
    }
}

/// The providers whose tool-call ids carry Responses item ids.
const TOOL_CALL_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];

/// The Responses request pi-ai builds.
pub fn request(
    messages: &[Value],
    model: &Model,
    _pi_ai: PiAi,
    options: &RequestOptions,
) -> ResponsesRequest {
    let mut out = ResponsesRequest {
        input: convert_messages(messages, model, options),
        ..ResponsesRequest::default()
    };
    if model.reasoning {
        if let Some(effort) = reasoning_effort(model, options) {
            let value = mapped_level(model, &effort)
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or_else(|| json!(effort));
            out.reasoning = Some(json!({"effort": value, "summary": "auto"}));
            out.include = Some(vec![json!("reasoning.encrypted_content")]);
        } else if model.provider != "github-copilot" {
            match mapped_level(model, "off") {
                Some(Value::Null) => {}
                Some(off) => out.reasoning = Some(json!({"effort": off})),
                None => out.reasoning = Some(json!({"effort": "none"})),
            }
        }
    }
    out
}

/// pi-ai's `shortHash` (two 32-bit multiplicative hashes over UTF-16 units, base 36).
///
/// ```
/// use pi_session_context::provider_request::openai_responses::short_hash;
/// assert_eq!(short_hash(""), "k4n83c7h0j2b");
/// ```
pub fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in pi_session_types::js::utf16_units(text) {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!(
        "{}{}",
        pi_session_types::js::to_base36(u64::from(h2)),
        pi_session_types::js::to_base36(u64::from(h1))
    )
}

fn normalize_part(part: &str) -> String {
    let sanitized: String = sanitize(part).chars().take(64).collect();
    sanitized.trim_end_matches('_').to_owned()
}

fn normalize_id(id: &str, model: &Model, source: &Value) -> String {
    if !TOOL_CALL_PROVIDERS.contains(&model.provider.as_str()) {
        return normalize_part(id);
    }
    let Some((call_id, rest)) = id.split_once('|') else {
        return normalize_part(id);
    };
    let item_id = rest.split('|').next().unwrap_or("");
    let foreign = MessageRef::new(source).provider_str() != Some(model.provider.as_str())
        || MessageRef::new(source).api_str() != Some(model.api.as_str());
    let mut item = if foreign {
        format!("fc_{}", short_hash(item_id))
            .chars()
            .take(64)
            .collect()
    } else {
        normalize_part(item_id)
    };
    if !item.starts_with("fc_") {
        item = normalize_part(&format!("fc_{item}"));
    }
    format!("{}|{item}", normalize_part(call_id))
}

fn input_image(block: &Value) -> Value {
    json!({
        "type": "input_image",
        "detail": "auto",
        "image_url": format!("data:{};base64,{}",
            pi_session_types::js::string_of(BlockRef::new(block).mime_type()),
            pi_session_types::js::string_of(BlockRef::new(block).data())),
    })
}

/// `parseTextSignature` (pi's and omp's): `{v:1,id,phase?}` JSON or a legacy plain id.
pub(super) fn parse_text_signature(signature: Option<&str>) -> Option<(String, Option<String>)> {
    let signature = signature.filter(|s| !s.is_empty())?;
    if signature.starts_with('{')
        && let Ok(parsed) = serde_json::from_str::<Value>(signature)
        && TextSignatureRef::new(&parsed).version() == Some(&json!(1))
        && let Some(id) = TextSignatureRef::new(&parsed).id_str()
    {
        let phase = TextSignatureRef::new(&parsed)
            .phase_str()
            .filter(|p| matches!(*p, "commentary" | "final_answer"))
            .map(str::to_owned);
        return Some((id.to_owned(), phase));
    }
    Some((signature.to_owned(), None))
}

fn convert_messages(messages: &[Value], model: &Model, options: &RequestOptions) -> Vec<Value> {
    let normalize = |id: &str, source: &Value| normalize_id(id, model, source);
    let transformed = transform_messages(messages, model, Some(&normalize));
    let mut out = Vec::new();
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning {
            "developer"
        } else {
            "system"
        };
        out.push(json!({"role": role, "content": system}));
    }
    let mut index = 0usize;
    for message in &transformed {
        match MessageRef::new(message).role() {
            Some("user") => match MessageRef::new(message).content() {
                Some(Value::String(text)) => out.push(
                    json!({"role": "user", "content": [{"type": "input_text", "text": text}]}),
                ),
                _ => {
                    let content = user_parts(message, "input_text", input_image);
                    if content.is_empty() {
                        continue;
                    }
                    out.push(json!({"role": "user", "content": content}));
                }
            },
            Some("assistant") => {
                let items = assistant_items(message, model, index);
                if items.is_empty() {
                    continue;
                }
                out.extend(items);
            }
            Some("toolResult") => out.push(tool_output(message, model)),
            _ => {}
        }
        index += 1;
    }
    out
}

fn assistant_items(message: &Value, model: &Model, index: usize) -> Vec<Value> {
    let different_model = MessageRef::new(message).model_str() != Some(model.id.as_str())
        && MessageRef::new(message).provider_str() == Some(model.provider.as_str())
        && MessageRef::new(message).api_str() == Some(model.api.as_str());
    let mut items = Vec::new();
    for block in blocks(message) {
        match block_type(block) {
            Some("thinking") => {
                if let Some(signature) = BlockRef::new(block)
                    .thinking_signature_str()
                    .filter(|s| !s.is_empty())
                    && let Ok(item) = serde_json::from_str::<Value>(signature)
                {
                    items.push(item);
                }
            }
            Some("text") => {
                let parsed = parse_text_signature(BlockRef::new(block).text_signature_str());
                let id = match &parsed {
                    None => format!("msg_{index}"),
                    Some((id, _)) if pi_session_types::js::utf16_len(id) > 64 => {
                        format!("msg_{}", short_hash(id))
                    }
                    Some((id, _)) => id.clone(),
                };
                let text = BlockRef::new(block).text().cloned().unwrap_or(Value::Null);
                items.push(object([
                    ("type", Some(json!("message"))),
                    ("role", Some(json!("assistant"))),
                    (
                        "content",
                        Some(json!([{"type": "output_text", "text": text, "annotations": []}])),
                    ),
                    ("status", Some(json!("completed"))),
                    ("id", Some(json!(id))),
                    (
                        "phase",
                        parsed.and_then(|(_, phase)| phase).map(Value::String),
                    ),
                ]));
            }
            Some("toolCall") => {
                let id = BlockRef::new(block).id_str().unwrap_or("");
                let mut parts = id.split('|');
                let call_id = parts.next().unwrap_or("");
                let mut item_id = parts.next();
                if different_model && item_id.is_some_and(|i| i.starts_with("fc_")) {
                    item_id = None;
                }
                items.push(object([
                    ("type", Some(json!("function_call"))),
                    ("id", item_id.map(|i| json!(i))),
                    ("call_id", Some(json!(call_id))),
                    ("name", BlockRef::new(block).name().cloned()),
                    (
                        "arguments",
                        BlockRef::new(block).arguments().map(stringify_arguments),
                    ),
                ]));
            }
            _ => {}
        }
    }
    items
}

fn tool_output(message: &Value, model: &Model) -> Value {
    let content = blocks(message);
    let text = tool_result_text(message);
    let has_images = content.iter().any(|c| block_type(c) == Some("image"));
    let call_id = MessageRef::new(message)
        .tool_call_id_str()
        .unwrap_or("")
        .split('|')
        .next()
        .unwrap_or("")
        .to_owned();
    let output = if has_images && model.takes_images() {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({"type": "input_text", "text": text}));
        }
        parts.extend(
            content
                .iter()
                .filter(|c| block_type(c) == Some("image"))
                .map(input_image),
        );
        Value::Array(parts)
    } else {
        json!(if text.is_empty() {
            "(see attached image)".to_owned()
        } else {
            text
        })
    };
    json!({"type": "function_call_output", "call_id": call_id, "output": output})
}
