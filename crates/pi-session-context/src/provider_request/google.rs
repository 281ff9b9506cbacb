//! Google Generative AI (`google-generative-ai`): pi 0.73.1
//! `dist/providers/google.js` (`buildParams`, `streamSimpleGoogle`) and
//! `google-shared.js` (`convertMessages`), serialised the way the
//! `@google/genai` SDK writes the HTTP body (its `*ToMldev` converters fix the
//! key order of every part and drop `null`s).
//!
//! Rules: roles `user`/`model`; tool-call ids kept (sanitised, at most 64,
//! and sent as `functionCall.id`/`functionResponse.id` only for `claude-*`
//! and `gpt-oss-*` model ids); blank assistant text dropped; thinking from
//! the same provider and model as `{thought: true, text}`, from others as
//! text; `thoughtSignature` only from the same model and when it is valid
//! base64; tool results as `functionResponse {name, response: {output|error}}`,
//! consecutive ones merged into one user turn, their pictures nested for
//! Gemini 3+ and in a following `Tool result image:` user turn before; the
//! system prompt as `systemInstruction`; `thinkingConfig` from the thinking
//! level (budgets for Gemini 2.5, levels for Gemini 3 and Gemma 4).

use pi_session_types::view::{BlockRef, MessageRef};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::openai_chat::{clamp_thinking_level, sanitize};
use super::registry::Model;
use super::transform::{
    Rules, block_type, blocks, is_blank, omp_demoted_thinking, str_field, tool_result_text,
    transform_messages, transform_messages_with,
};
use super::{PiAi, RequestError, RequestOptions, to_object};

/// The session-decided part of a Gemini body, in the SDK's key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GoogleRequest {
    /// `contents`.
    pub contents: Vec<Value>,
    /// `systemInstruction`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Value>,
    /// `generationConfig` (only its `thinkingConfig` is the session's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_config: Option<Value>,
}

impl GoogleRequest {
    /// The JSON object.
    pub fn to_value(&self) -> Value {
        to_object(self)
    }
}

fn requires_tool_call_id(id: &str) -> bool {
    id.starts_with("claude-") || id.starts_with("gpt-oss-")
}

fn gemini_major(id: &str) -> Option<u32> {
    let lower = id.to_lowercase();
    let rest = lower.strip_prefix("gemini-")?;
    let rest = rest.strip_prefix("live-").unwrap_or(rest);
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn multimodal_function_response(id: &str) -> bool {
    gemini_major(id).is_none_or(|major| major >= 3)
}

fn is_gemini3_pro(id: &str) -> bool {
    family(id, "pro")
}

fn is_gemini3_flash(id: &str) -> bool {
    family(id, "flash")
}

/// `/gemini-3(?:\.\d+)?-<kind>/` on the lower-cased id.
fn family(id: &str, kind: &str) -> bool {
    let lower = id.to_lowercase();
    lower.match_indices("gemini-3").any(|(at, m)| {
        let mut rest = &lower[at + m.len()..];
        if let Some(after) = rest.strip_prefix('.') {
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            rest = &after[digits..];
        }
        rest.starts_with(&format!("-{kind}"))
    })
}

fn is_gemma4(id: &str) -> bool {
    let lower = id.to_lowercase();
    lower.contains("gemma4") || lower.contains("gemma-4")
}

fn valid_signature(signature: Option<&str>) -> Option<&str> {
    signature.filter(|s| {
        !s.is_empty() && s.len() % 4 == 0 && {
            let body = s.trim_end_matches('=');
            s.len() - body.len() <= 2
                && !body.is_empty()
                && body
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        }
    })
}

/// `resolveThoughtSignature`: a block's `key` signature, kept only when the turn
/// came from this provider and model and the signature is valid base64.
fn signatures(message: &Value, model: &Model) -> impl Fn(Option<&str>) -> Option<Value> {
    let same = MessageRef::new(message).provider_str() == Some(model.provider.as_str())
        && MessageRef::new(message).model_str() == Some(model.id.as_str());
    move |signature| {
        if same {
            valid_signature(signature).map(|s| json!(s))
        } else {
            None
        }
    }
}

/// A part in the SDK's key order, `null`s dropped.
fn part(fields: &[(&str, Option<Value>)]) -> Value {
    const ORDER: [&str; 6] = [
        "functionCall",
        "functionResponse",
        "inlineData",
        "text",
        "thought",
        "thoughtSignature",
    ];
    let mut out = Map::new();
    for key in ORDER {
        if let Some((_, Some(value))) = fields.iter().find(|(k, _)| *k == key)
            && !value.is_null()
        {
            out.insert(key.to_owned(), value.clone());
        }
    }
    Value::Object(out)
}

/// A text block's part, signed when its signature is kept (`None` for blank text).
fn text_part(block: &Value, signature: &dyn Fn(Option<&str>) -> Option<Value>) -> Option<Value> {
    let text = BlockRef::new(block).text_str().unwrap_or("");
    (!is_blank(text)).then(|| {
        part(&[
            ("text", Some(json!(text))),
            (
                "thoughtSignature",
                signature(BlockRef::new(block).text_signature_str()),
            ),
        ])
    })
}

/// A thinking block's text; `None` when it is blank (neither rule sends it).
fn thinking_text(block: &Value) -> Option<&str> {
    let thinking = BlockRef::new(block).thinking_str().unwrap_or("");
    (!is_blank(thinking)).then_some(thinking)
}

/// A tool call's `functionCall` part (`call` built by the caller), signed when the block's
/// signature is kept.
fn call_part(
    call: Value,
    block: &Value,
    signature: &dyn Fn(Option<&str>) -> Option<Value>,
) -> Value {
    part(&[
        ("functionCall", Some(call)),
        (
            "thoughtSignature",
            signature(BlockRef::new(block).thought_signature_str()),
        ),
    ])
}

fn inline_data(block: &Value) -> Value {
    let mut data = Map::new();
    for key in ["data", "mimeType"] {
        if let Some(v) = block.get(key).filter(|v| !v.is_null()) {
            data.insert(key.to_owned(), v.clone());
        }
    }
    part(&[("inlineData", Some(Value::Object(data)))])
}

fn turn(role: &str, parts: Vec<Value>) -> Value {
    json!({"parts": parts, "role": role})
}

/// The Gemini request pi-ai builds; `Err` when the SDK refuses to send it
/// (no contents).
pub fn request(
    messages: &[Value],
    model: &Model,
    pi_ai: PiAi,
    options: &RequestOptions,
) -> Result<GoogleRequest, RequestError> {
    if pi_ai == PiAi::Omp {
        return omp_request(messages, model, options);
    }
    let contents = convert_messages(messages, model);
    if contents.is_empty() {
        return Err(RequestError::Refused("contents are required".to_owned()));
    }
    let mut out = GoogleRequest {
        contents,
        ..GoogleRequest::default()
    };
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        out.system_instruction = Some(json!({"parts": [{"text": system}], "role": "user"}));
    }
    if model.reasoning {
        let level = options.thinking_level.as_str();
        let thinking = if level.is_empty() || level == "off" {
            disabled_thinking(&model.id)
        } else {
            let clamped = clamp_thinking_level(model, level);
            let effort = if clamped == "off" {
                "high".to_owned()
            } else {
                clamped
            };
            if is_gemini3_pro(&model.id) || is_gemini3_flash(&model.id) || is_gemma4(&model.id) {
                json!({"includeThoughts": true, "thinkingLevel": thinking_level(&effort, &model.id)})
            } else {
                match budget(&model.id, &effort) {
                    Some(b) => json!({"includeThoughts": true, "thinkingBudget": b}),
                    None => json!({"includeThoughts": true}),
                }
            }
        };
        out.generation_config = Some(json!({"thinkingConfig": thinking}));
    }
    Ok(out)
}

/// omp 18.2.3's Gemini body (`google-shared.ts` `convertMessages`,
/// `buildGoogleGenerateContentParams`, `paramsToWireBody`; `stream.ts` thinking
/// options): omp writes the wire body itself, so keys keep their build order.
fn omp_request(
    messages: &[Value],
    model: &Model,
    options: &RequestOptions,
) -> Result<GoogleRequest, RequestError> {
    // omp writes the wire body itself: an empty `contents` is sent, not refused.
    let contents = omp_convert_messages(messages, model);
    let mut out = GoogleRequest {
        contents,
        ..GoogleRequest::default()
    };
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !is_blank(s)) {
        out.system_instruction = Some(json!({"parts": [{"text": system}]}));
    }
    if let Some(thinking) = omp_thinking_config(model, &options.thinking_level) {
        out.generation_config = Some(json!({"thinkingConfig": thinking}));
    }
    Ok(out)
}

/// omp's thinking options for Gemini: off (or no level) disables thinking
/// unless the model requires an effort (then its lowest effort is used);
/// otherwise the model's effort budget.
fn omp_thinking_config(model: &Model, level: &str) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    let thinking = model.thinking.as_ref()?;
    let mode = thinking.mode.as_deref().unwrap_or("");
    let off = level.is_empty() || level == "off" || level == "inherit";
    let effort = if off && thinking.requires_effort && !thinking.suppress_when_off {
        thinking.efforts.first().cloned()
    } else if off {
        None
    } else {
        Some(level.to_owned())
    };
    let Some(effort) = effort else {
        return if mode == "budget" && (!thinking.requires_effort || thinking.suppress_when_off) {
            Some(json!({"includeThoughts": false, "thinkingBudget": 0}))
        } else if mode == "google-level" && thinking.suppress_when_off {
            Some(json!({"includeThoughts": false, "thinkingLevel": "MINIMAL"}))
        } else {
            None
        };
    };
    if mode == "google-level" {
        return Some(
            json!({"includeThoughts": true, "thinkingLevel": thinking_level(&effort, &model.id)}),
        );
    }
    let budget = thinking
        .effort_budgets
        .as_ref()
        .and_then(|b| b.get(&effort))
        .cloned()
        .unwrap_or(json!(-1));
    Some(json!({"includeThoughts": true, "thinkingBudget": budget}))
}

fn omp_image(block: &Value) -> Value {
    json!({"inlineData": pi_session_types::js::object([
        ("mimeType", BlockRef::new(block).mime_type().cloned()),
        ("data", BlockRef::new(block).data().cloned()),
    ])})
}

fn omp_convert_messages(messages: &[Value], model: &Model) -> Vec<Value> {
    let normalize = |id: &str, _source: &Value| sanitize(id).chars().take(64).collect::<String>();
    let rules = Rules {
        developer_closes_calls: true,
        demote: Some(omp_demoted_thinking),
        omp_pairing: true,
    };
    let transformed = transform_messages_with(messages, model, Some(&normalize), rules);
    let with_id = model.compat_bool("supportsFunctionPartId").unwrap_or(false);
    let nested = model
        .compat_bool("multimodalFunctionResponse")
        .unwrap_or(false);
    let images_ok = model.takes_images();
    let mut contents: Vec<Value> = Vec::new();
    let mut names: std::collections::HashMap<String, Value> = std::collections::HashMap::new();
    let mut pending_images: Vec<Value> = Vec::new();
    for message in &transformed {
        let role = MessageRef::new(message).role();
        if role != Some("toolResult") && !pending_images.is_empty() {
            contents.push(json!({"role": "user", "parts": std::mem::take(&mut pending_images)}));
        }
        match role {
            Some("user" | "developer") => match MessageRef::new(message).content() {
                Some(Value::String(text)) => {
                    if !is_blank(text) {
                        contents.push(json!({"role": "user", "parts": [{"text": text}]}));
                    }
                }
                _ => {
                    let mut parts = Vec::new();
                    let mut omitted = false;
                    for item in blocks(message) {
                        if block_type(item) == Some("text") {
                            let text = BlockRef::new(item).text_str().unwrap_or("");
                            if !is_blank(text) {
                                parts.push(json!({"text": text}));
                            }
                        } else if images_ok {
                            parts.push(omp_image(item));
                        } else {
                            omitted = true;
                        }
                    }
                    if omitted {
                        parts.push(json!({"text": OMP_NON_VISION_PLACEHOLDER}));
                    }
                    if !parts.is_empty() {
                        contents.push(json!({"role": "user", "parts": parts}));
                    }
                }
            },
            Some("assistant") => {
                // omp: a thinking block without a kept signature is demoted to text, or dropped
                // where the model's compat says so; each call's name is remembered for the
                // tool results that follow.
                let parts = assistant_message_parts(
                    message,
                    model,
                    |block, thinking, signature| {
                        let sig = signature(BlockRef::new(block).thinking_signature_str());
                        if sig.is_none()
                            && model.compat_bool("dropUnsignedThinking").unwrap_or(false)
                        {
                            return None;
                        }
                        Some(match sig {
                            Some(sig) => {
                                json!({"thought": true, "text": thinking, "thoughtSignature": sig})
                            }
                            None => json!({"text": omp_demoted_thinking(&model.id, thinking)}),
                        })
                    },
                    |block, args| {
                        if let Some(id) = BlockRef::new(block).id_str() {
                            names.insert(
                                id.to_owned(),
                                BlockRef::new(block).name().cloned().unwrap_or(Value::Null),
                            );
                        }
                        pi_session_types::js::object([
                            ("name", BlockRef::new(block).name().cloned()),
                            ("args", Some(args)),
                            (
                                "id",
                                if with_id {
                                    BlockRef::new(block).id().cloned()
                                } else {
                                    None
                                },
                            ),
                        ])
                    },
                );
                if !parts.is_empty() {
                    contents.push(json!({"role": "model", "parts": parts}));
                }
            }
            Some("toolResult") => {
                let content = blocks(message);
                let text = tool_result_text(message);
                let images: Vec<Value> = if images_ok {
                    content
                        .iter()
                        .filter(|c| block_type(c) == Some("image"))
                        .map(omp_image)
                        .collect()
                } else {
                    Vec::new()
                };
                let omitted = !images_ok && content.iter().any(|c| block_type(c) == Some("image"));
                let value = if omitted {
                    [text.as_str(), OMP_NON_VISION_PLACEHOLDER]
                        .iter()
                        .filter(|s| !s.is_empty())
                        .copied()
                        .collect::<Vec<_>>()
                        .join("\n")
                } else if !text.is_empty() {
                    text
                } else if !images.is_empty() {
                    "(see attached image)".to_owned()
                } else {
                    String::new()
                };
                let error = pi_session_types::js::truthy(MessageRef::new(message).is_error());
                let id = MessageRef::new(message).tool_call_id_str().unwrap_or("");
                let name = names
                    .get(id)
                    .cloned()
                    .or_else(|| MessageRef::new(message).tool_name().cloned());
                let response = pi_session_types::js::object([
                    ("name", name),
                    (
                        "response",
                        Some(if error {
                            json!({"error": value})
                        } else {
                            json!({"output": value})
                        }),
                    ),
                    (
                        "parts",
                        (!images.is_empty() && nested).then(|| Value::Array(images.clone())),
                    ),
                    (
                        "id",
                        if with_id {
                            MessageRef::new(message).tool_call_id().cloned()
                        } else {
                            None
                        },
                    ),
                ]);
                let part = json!({"functionResponse": response});
                let merge = contents.last().is_some_and(|last| {
                    // Provider wire JSON (not the session schema): Gemini contents.
                    str_field(last, "role") == Some("user")
                        && blocks_named(last, "parts")
                            .iter()
                            .any(|p| p.get("functionResponse").is_some())
                });
                match contents
                    .last_mut()
                    .and_then(|l| l.get_mut("parts"))
                    .and_then(Value::as_array_mut)
                {
                    Some(parts) if merge => parts.push(part),
                    _ => contents.push(json!({"role": "user", "parts": [part]})),
                }
                if !images.is_empty() && !nested {
                    pending_images.push(json!({"text": "Tool result image:"}));
                    pending_images.extend(images);
                }
            }
            _ => {}
        }
    }
    if !pending_images.is_empty() {
        contents.push(json!({"role": "user", "parts": pending_images}));
    }
    contents
}

/// omp's placeholder for a picture a model without image input is not sent.
const OMP_NON_VISION_PLACEHOLDER: &str = "[image omitted: model does not support vision]";

fn disabled_thinking(id: &str) -> Value {
    if is_gemini3_pro(id) {
        json!({"thinkingLevel": "LOW"})
    } else if is_gemini3_flash(id) || is_gemma4(id) {
        json!({"thinkingLevel": "MINIMAL"})
    } else {
        json!({"thinkingBudget": 0})
    }
}

fn thinking_level(effort: &str, id: &str) -> &'static str {
    let low_high = |low: &'static str| match effort {
        "minimal" | "low" => Some(low),
        "medium" | "high" => Some("HIGH"),
        _ => None,
    };
    if is_gemini3_pro(id)
        && let Some(level) = low_high("LOW")
    {
        return level;
    }
    if is_gemma4(id)
        && let Some(level) = low_high("MINIMAL")
    {
        return level;
    }
    match effort {
        "minimal" => "MINIMAL",
        "low" => "LOW",
        "medium" => "MEDIUM",
        _ => "HIGH",
    }
}

fn budget(id: &str, effort: &str) -> Option<i64> {
    let table: [i64; 4] = if id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if id.contains("2.5-flash-lite") {
        [512, 2048, 8192, 24576]
    } else if id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return Some(-1);
    };
    match effort {
        "minimal" => Some(table[0]),
        "low" => Some(table[1]),
        "medium" => Some(table[2]),
        "high" => Some(table[3]),
        _ => None,
    }
}

fn convert_messages(messages: &[Value], model: &Model) -> Vec<Value> {
    let with_id = requires_tool_call_id(&model.id);
    let normalize = |id: &str, _source: &Value| {
        if with_id {
            sanitize(id).chars().take(64).collect()
        } else {
            id.to_owned()
        }
    };
    let transformed = transform_messages(messages, model, Some(&normalize));
    let mut contents: Vec<Value> = Vec::new();
    for message in &transformed {
        match MessageRef::new(message).role() {
            Some("user") => match MessageRef::new(message).content() {
                Some(Value::String(text)) => {
                    contents.push(turn("user", vec![json!({"text": text})]))
                }
                _ => {
                    let parts: Vec<Value> = blocks(message)
                        .iter()
                        .map(|item| {
                            if block_type(item) == Some("text") {
                                part(&[("text", BlockRef::new(item).text().cloned())])
                            } else {
                                inline_data(item)
                            }
                        })
                        .collect();
                    if !parts.is_empty() {
                        contents.push(turn("user", parts));
                    }
                }
            },
            Some("assistant") => {
                let parts = assistant_parts(message, model, with_id);
                if !parts.is_empty() {
                    contents.push(turn("model", parts));
                }
            }
            Some("toolResult") => push_tool_result(&mut contents, message, model, with_id),
            _ => {}
        }
    }
    contents
}

/// pi-ai: thinking from the same provider and model stays a thought (signed when the signature
/// is kept), any other becomes plain text; a call's keys in the SDK's order, `null`s dropped.
fn assistant_parts(message: &Value, model: &Model, with_id: bool) -> Vec<Value> {
    let same = MessageRef::new(message).provider_str() == Some(model.provider.as_str())
        && MessageRef::new(message).model_str() == Some(model.id.as_str());
    assistant_message_parts(
        message,
        model,
        |block, thinking, signature| {
            Some(if same {
                part(&[
                    ("thought", Some(json!(true))),
                    ("text", Some(json!(thinking))),
                    (
                        "thoughtSignature",
                        signature(BlockRef::new(block).thinking_signature_str()),
                    ),
                ])
            } else {
                part(&[("text", Some(json!(thinking)))])
            })
        },
        |block, args| {
            let mut call = Map::new();
            call.insert("args".into(), args);
            if with_id && let Some(id) = BlockRef::new(block).id().filter(|v| !v.is_null()) {
                call.insert("id".into(), id.clone());
            }
            if let Some(name) = BlockRef::new(block).name().filter(|v| !v.is_null()) {
                call.insert("name".into(), name.clone());
            }
            Value::Object(call)
        },
    )
}

/// The parts of an assistant message, in block order: text parts and tool calls as both
/// requests write them (blank texts left out, a call's missing or `null` arguments as `{}`);
/// a non-blank thinking block's part from `thinking` (which may drop it), a call's
/// `functionCall` object from `call`, given the arguments.
fn assistant_message_parts(
    message: &Value,
    model: &Model,
    mut thinking: impl FnMut(&Value, &str, &dyn Fn(Option<&str>) -> Option<Value>) -> Option<Value>,
    mut call: impl FnMut(&Value, Value) -> Value,
) -> Vec<Value> {
    let signature = signatures(message, model);
    let mut parts = Vec::new();
    for block in blocks(message) {
        match block_type(block) {
            Some("text") => parts.extend(text_part(block, &signature)),
            Some("thinking") => {
                if let Some(text) = thinking_text(block) {
                    parts.extend(thinking(block, text, &signature));
                }
            }
            Some("toolCall") => {
                let args = match BlockRef::new(block).arguments() {
                    None | Some(Value::Null) => json!({}),
                    Some(a) => a.clone(),
                };
                parts.push(call_part(call(block, args), block, &signature));
            }
            _ => {}
        }
    }
    parts
}

fn push_tool_result(contents: &mut Vec<Value>, message: &Value, model: &Model, with_id: bool) {
    let content = blocks(message);
    let text = tool_result_text(message);
    let images: Vec<&Value> = if model.takes_images() {
        content
            .iter()
            .filter(|c| block_type(c) == Some("image"))
            .collect()
    } else {
        Vec::new()
    };
    let nested = multimodal_function_response(&model.id);
    let value = if !text.is_empty() {
        text
    } else if !images.is_empty() {
        "(see attached image)".to_owned()
    } else {
        String::new()
    };
    let error = MessageRef::new(message)
        .is_error()
        .is_some_and(|e| pi_session_types::js::truthy(Some(e)));
    let mut response = Map::new();
    if let Some(name) = MessageRef::new(message)
        .tool_name()
        .filter(|v| !v.is_null())
    {
        response.insert("name".into(), name.clone());
    }
    response.insert(
        "response".into(),
        if error {
            json!({"error": value})
        } else {
            json!({"output": value})
        },
    );
    let image_parts: Vec<Value> = images.iter().map(|i| inline_data(i)).collect();
    if !images.is_empty() && nested {
        response.insert("parts".into(), Value::Array(image_parts.clone()));
    }
    if with_id
        && let Some(id) = MessageRef::new(message)
            .tool_call_id()
            .filter(|v| !v.is_null())
    {
        response.insert("id".into(), id.clone());
    }
    let response_part = part(&[("functionResponse", Some(Value::Object(response)))]);
    let merge = contents.last().is_some_and(|last| {
        // Provider wire JSON (not the session schema): Gemini contents.
        str_field(last, "role") == Some("user")
            && blocks_named(last, "parts")
                .iter()
                .any(|p| p.get("functionResponse").is_some())
    });
    if merge {
        if let Some(parts) = contents
            .last_mut()
            .and_then(|last| last.get_mut("parts"))
            .and_then(Value::as_array_mut)
        {
            parts.push(response_part);
        }
    } else {
        contents.push(turn("user", vec![response_part]));
    }
    if !images.is_empty() && !nested {
        let mut parts = vec![json!({"text": "Tool result image:"})];
        parts.extend(image_parts);
        contents.push(turn("user", parts));
    }
}

fn blocks_named<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_families_follow_the_regexes() {
        assert!(is_gemini3_pro("gemini-3-pro-preview"));
        assert!(is_gemini3_pro("gemini-3.1-pro"));
        assert!(!is_gemini3_pro("gemini-2.5-pro"));
        assert!(is_gemini3_flash("models/gemini-3-flash"));
        assert_eq!(gemini_major("gemini-2.5-pro"), Some(2));
        assert!(!multimodal_function_response("gemini-2.5-pro"));
        assert!(multimodal_function_response("claude-x"));
    }

    #[test]
    fn thought_signatures_must_be_base64() {
        assert_eq!(valid_signature(Some("QUJD")), Some("QUJD"));
        assert_eq!(valid_signature(Some("QUJ=")), Some("QUJ="));
        assert_eq!(valid_signature(Some("abc")), None);
        assert_eq!(valid_signature(Some("ab!d")), None);
    }
}
