//! OpenAI Responses (`openai-responses`) by omp 18.2.3's own pi-ai
//! (`@oh-my-pi/pi-ai` `src/providers/openai-responses.ts` `buildParams`,
//! `openai-shared.ts` `buildResponsesInput`,
//! `convertResponsesAssistantMessage`, `appendResponsesToolResultMessages`,
//! the orphan repairs and `applyResponsesCompatPolicy`; `utils.ts` for the
//! replay sanitizers and id rules).
//!
//! Rules: the system prompt as a leading `developer` message for a reasoning
//! model whose compat has the developer role, else the top-level
//! `instructions`; omp's first pass ([`transform_messages_with`]: thinking of
//! other models demoted into the target's dialect, omp's result pairing,
//! calls of other models renamed by `normalizeResponsesToolCallIdForTransform`
//! with Bun's hash); user and developer turns as `user` messages (blank text
//! dropped, text before pictures, a turn left empty skipped); native
//! Responses history (`providerPayload` of type `openaiResponsesHistory`)
//! replayed as its items (ids dropped, output-only `status` stripped; an
//! assistant's non-incremental snapshot replaces everything before it);
//! assistant turns as reasoning items (the thinking signature's JSON),
//! `message` items (ids kept only beside a replayable reasoning item,
//! `msg_<n>` made up there) and `function_call` items (`fc_` item ids only
//! beside a replayable reasoning item of the same model); results as
//! `function_call_output` with the call's first id part; outputs without a
//! call become assistant notes, calls without an output get a placeholder,
//! assistant messages wedged inside a call batch move before it;
//! `include`/`reasoning` from the thinking level and compat (thinking off:
//! the model's lowest effort).

use pi_session_types::js::{object, string_of, trim, utf16_len};
use pi_session_types::view::{BlockRef, CustomToolArgumentsRef, MessageRef, ProviderPayloadRef};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::bun_hash::bun_hash36;
use super::openai_chat::js_slice;
use super::openai_responses::parse_text_signature;
use super::registry::Model;
use super::transform::{
    Rules, block_type, blocks, is_blank, omp_demoted_thinking, str_field, transform_messages_with,
};
use super::{RequestOptions, to_object};

/// The session-decided part of omp's Responses body, in omp's key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OmpResponsesRequest {
    /// `input`.
    pub input: Vec<Value>,
    /// `instructions` (the system prompt when it does not go in `input`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `include`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<Value>>,
    /// `reasoning`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Value>,
}

impl OmpResponsesRequest {
    /// The JSON object.
    pub fn to_value(&self) -> Value {
        to_object(self)
    }
}

/// The placeholder output of a call whose result is missing.
pub const ORPHAN_TOOL_CALL_PLACEHOLDER: &str =
    "[No tool output recorded: the tool call was interrupted before it produced a result.]";
/// omp's placeholder for pictures a model without image input is not sent.
pub const NON_VISION_IMAGE_PLACEHOLDER: &str = "[image omitted: model does not support vision]";

/// The Responses request omp's pi-ai builds.
pub fn request(messages: &[Value], model: &Model, options: &RequestOptions) -> OmpResponsesRequest {
    let mut input = build_input(messages, model);
    let mut out = OmpResponsesRequest::default();
    let prompts: Vec<&str> = options
        .system_prompt
        .as_deref()
        .filter(|s| !is_blank(s))
        .into_iter()
        .collect();
    if !prompts.is_empty() {
        let developer =
            model.reasoning && model.compat_bool("supportsDeveloperRole").unwrap_or(false);
        if developer {
            let head: Vec<Value> = prompts
                .iter()
                .map(|p| json!({"role": "developer", "content": p}))
                .collect();
            input.splice(0..0, head);
        } else {
            out.instructions = Some(prompts.join("\n\n"));
        }
    }
    out.input = input;
    apply_reasoning(&mut out, model, &options.thinking_level);
    out
}

/// `resolveOpenAICompatPolicy` + `applyResponsesCompatPolicy` for the keys
/// the session decides.
fn apply_reasoning(out: &mut OmpResponsesRequest, model: &Model, level: &str) {
    if !model.reasoning {
        return;
    }
    if model
        .compat_bool("includeEncryptedReasoning")
        .unwrap_or(false)
    {
        out.include = Some(vec![json!("reasoning.encrypted_content")]);
    }
    let supports_effort = model
        .compat_bool("supportsReasoningEffort")
        .unwrap_or(false);
    let omit_effort = model.compat_bool("omitReasoningEffort").unwrap_or(false) || !supports_effort;
    let efforts: Vec<&str> = model
        .thinking
        .as_ref()
        .map(|t| t.efforts.iter().map(String::as_str).collect())
        .unwrap_or_default();
    if level.is_empty() || level == "off" || level == "inherit" {
        // The caller disabled reasoning (`disableReasoning`).
        let wire = match model.compat_str("reasoningDisableMode") {
            _ if !supports_effort || omit_effort => None,
            Some("none-effort") => Some(json!("none")),
            Some("lowest-effort") => efforts.first().map(|e| map_effort(model, e)),
            Some("openrouter-enabled-false") => {
                out.reasoning = Some(json!({"enabled": false}));
                return;
            }
            _ => None,
        };
        if let Some(effort) = wire {
            out.reasoning = Some(json!({"effort": effort}));
        }
        return;
    }
    // `resolveOpenAiReasoningEffort`: a model without a thinking descriptor
    // gets no effort.
    if model.thinking.is_none() {
        return;
    }
    if omit_effort {
        return;
    }
    let summary = model
        .compat_bool("supportsReasoningSummary")
        .unwrap_or(false);
    let mut reasoning = Map::new();
    reasoning.insert("effort".into(), map_effort(model, level));
    if summary {
        reasoning.insert("summary".into(), json!("auto"));
    }
    out.reasoning = Some(Value::Object(reasoning));
}

/// `compat.reasoningEffortMap[e] ?? thinking.effortMap[e] ?? e`.
fn map_effort(model: &Model, effort: &str) -> Value {
    model
        .compat("reasoningEffortMap")
        .and_then(|m| m.get(effort))
        .or_else(|| {
            model
                .thinking
                .as_ref()
                .and_then(|t| t.effort_map.as_ref())
                .and_then(|m| m.get(effort))
        })
        .filter(|v| !v.is_null())
        .cloned()
        .unwrap_or_else(|| json!(effort))
}

/// `[^a-zA-Z0-9_-]` → `_`.
fn sanitize(id: &str) -> String {
    super::openai_chat::sanitize(id)
}

fn is_plain_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The position of the first `\n` or `|` (in UTF-16 units and bytes).
fn separator(id: &str) -> Option<usize> {
    id.find(['\n', '|'])
}

/// `sanitizeCodexCallId`.
pub fn sanitize_codex_call_id(raw: &str) -> String {
    if raw.is_empty() {
        return format!("call_{}", bun_hash36("empty"));
    }
    let base = match separator(raw) {
        Some(0) => &raw[1..],
        Some(at) => &raw[..at],
        None => raw,
    };
    let sanitized = sanitize(base).trim_end_matches('_').to_owned();
    if !sanitized.is_empty() && utf16_len(&sanitized) <= 64 && sanitized == base {
        return sanitized;
    }
    let hash = bun_hash36(if base.is_empty() { raw } else { base });
    let effective = if sanitized.is_empty() {
        "call"
    } else {
        sanitized.as_str()
    };
    let prefix_len = 63usize.saturating_sub(hash.len());
    js_slice(&format!("{}_{hash}", js_slice(effective, prefix_len)), 64)
}

/// `normalizeResponsesToolCallIdForTransform` (calls of other models only).
pub fn normalize_for_transform(id: &str, model: &Model, source: &Value) -> String {
    let sep = separator(id);
    if sep.is_none() && utf16_len(id) <= 64 && is_plain_id(id) {
        return id.to_owned();
    }
    let foreign = MessageRef::new(source).provider_str() != Some(model.provider.as_str())
        || MessageRef::new(source).api_str() != Some(model.api.as_str());
    if foreign || sep.is_some() || utf16_len(id) > 64 {
        let (call_id, item_id) = match sep {
            Some(at) if at > 0 => (&id[..at], Some(&id[at + 1..])),
            _ => (id, None),
        };
        let item = match item_id.filter(|i| !i.is_empty()) {
            Some(item) => format!("fc_{}", bun_hash36(item)),
            None => format!("fc_{}", bun_hash36(id)),
        };
        return format!(
            "{}|{}",
            sanitize_codex_call_id(call_id),
            js_slice(&item, 64)
        );
    }
    let (call_id, item_id) = normalize_tool_call_id(id, "fc");
    format!("{call_id}|{item_id}")
}

/// `normalizeResponsesToolCallId(id, prefix)`: the wire `call_id` and item id.
pub fn normalize_tool_call_id(id: &str, prefix: &str) -> (String, String) {
    match separator(id) {
        Some(at) if at > 0 => (
            id[..at].to_owned(),
            normalize_item_id(&id[at + 1..], prefix),
        ),
        _ => (id.to_owned(), format!("{prefix}_{}", bun_hash36(id))),
    }
}

fn normalize_item_id(item_id: &str, fallback: &str) -> String {
    let prefix = explicit_prefix(item_id);
    let allowed = match prefix {
        Some(p) if fallback == "ctc" => p == "ctc",
        Some(p) => p == "fc" || p == "fcr",
        None => false,
    };
    match prefix {
        Some(p) if allowed => {
            if utf16_len(item_id) <= 64 {
                item_id.to_owned()
            } else {
                format!("{p}_{}", bun_hash36(item_id))
            }
        }
        _ => format!("{fallback}_{}", bun_hash36(item_id)),
    }
}

/// `^([a-zA-Z][a-zA-Z0-9]*)_`.
fn explicit_prefix(id: &str) -> Option<&str> {
    let end = id.find('_')?;
    let head = &id[..end];
    let mut chars = head.chars();
    (chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric()))
    .then_some(head)
}

fn image_item(block: &Value) -> Value {
    let detail = match BlockRef::new(block).detail() {
        Some(Value::Null) | None => json!("auto"),
        Some(d) => d.clone(),
    };
    let url = match BlockRef::new(block)
        .url()
        .filter(|u| pi_session_types::js::truthy(Some(u)))
    {
        Some(url) => url.clone(),
        None => json!(format!(
            "data:{};base64,{}",
            string_of(BlockRef::new(block).mime_type()),
            string_of(BlockRef::new(block).data())
        )),
    };
    json!({"type": "input_image", "detail": detail, "image_url": url})
}

/// `convertResponsesInputContent`: `None` when nothing is left to send.
fn input_content(message: &Value, images_ok: bool) -> Option<Vec<Value>> {
    match MessageRef::new(message).content() {
        Some(Value::String(text)) => {
            (!is_blank(text)).then(|| vec![json!({"type": "input_text", "text": text})])
        }
        _ => {
            let content = blocks(message);
            let mut out: Vec<Value> = content
                .iter()
                .filter(|b| block_type(b) == Some("text"))
                .filter_map(|b| BlockRef::new(b).text_str().or(Some("")))
                .filter(|t| !is_blank(t))
                .map(|t| json!({"type": "input_text", "text": t}))
                .collect();
            let images = content.iter().filter(|b| block_type(b) == Some("image"));
            if images_ok {
                out.extend(images.map(image_item));
            } else if images.count() > 0 {
                out.push(json!({"type": "input_text", "text": NON_VISION_IMAGE_PLACEHOLDER}));
            }
            (!out.is_empty()).then_some(out)
        }
    }
}

/// `getOpenAIResponsesHistoryItems`: native items stored for `provider`.
fn history_items<'a>(
    payload: Option<&'a Value>,
    provider: &str,
    fallback: Option<&str>,
) -> Option<(&'a Vec<Value>, bool)> {
    let payload = ProviderPayloadRef::new(payload?);
    if payload.kind() != Some("openaiResponsesHistory") {
        return None;
    }
    let items = payload.items()?.as_array()?;
    let owner = payload.provider_str().or(fallback).unwrap_or(provider);
    (owner == provider).then_some((items, pi_session_types::js::truthy(payload.dt())))
}

/// `sanitizeOpenAIResponsesHistoryItemsForReplay` (no computer use).
fn sanitize_history(items: &[Value]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|item| {
            // Provider wire JSON (not the session schema): a Responses item.
            let kind = str_field(item, "type");
            if kind == Some("function_call") {
                let args = str_field(item, "arguments")?;
                if trim(args).is_empty() || serde_json::from_str::<Value>(args).is_err() {
                    return None;
                }
            }
            match kind {
                Some("item_reference") => None,
                Some("image_generation_call") => {
                    let id = BlockRef::new(item).id_str()?;
                    let result = str_field(item, "result").filter(|r| !r.is_empty())?;
                    let id = if utf16_len(id) <= 64 {
                        id.to_owned()
                    } else {
                        format!("ig_{}", bun_hash36(id))
                    };
                    Some(json!({"id": id, "type": "image_generation_call", "status": "completed", "result": result}))
                }
                Some("reasoning") => {
                    let mut out = Map::new();
                    out.insert("type".into(), json!("reasoning"));
                    for key in ["summary", "content"] {
                        if let Some(v) = item.get(key).filter(|v| v.is_array()) {
                            out.insert(key.into(), v.clone());
                        }
                    }
                    if let Some(v) = item
                        .get("encrypted_content")
                        .filter(|v| v.is_string() || v.is_null())
                    {
                        out.insert("encrypted_content".into(), v.clone());
                    }
                    Some(Value::Object(out))
                }
                _ => {
                    let mut out = item.as_object()?.clone();
                    out.remove("id");
                    if matches!(
                        kind,
                        Some(
                            "message"
                                | "function_call"
                                | "custom_tool_call"
                                | "compaction"
                                | "compaction_summary"
                        )
                    ) {
                        out.remove("status");
                    }
                    Some(Value::Object(out))
                }
            }
        })
        .collect()
}

fn has_visible_text(text: &str) -> bool {
    text.chars().any(|c| !c.is_whitespace())
}

fn is_empty_assistant_message(item: &Value) -> bool {
    // Provider wire JSON (not the session schema): a Responses item.
    if str_field(item, "type") != Some("message") || str_field(item, "role") != Some("assistant") {
        return false;
    }
    match item.get("content") {
        Some(Value::String(text)) => !has_visible_text(text),
        _ => !blocks(item).iter().any(|part| match block_type(part) {
            Some("output_text") => str_field(part, "text").is_some_and(has_visible_text),
            Some("refusal") => str_field(part, "refusal").is_some_and(has_visible_text),
            _ => false,
        }),
    }
}

/// Whether a native item starts a client turn (`isOpenAIResponsesClientInputBoundary`).
fn is_client_boundary(item: &Value) -> bool {
    // Provider wire JSON (not the session schema): a Responses item.
    let role = str_field(item, "role");
    match str_field(item, "type") {
        Some("message") => role != Some("assistant"),
        None => role.is_some_and(|r| r != "assistant"),
        Some(
            "input_text"
            | "input_image"
            | "input_file"
            | "input_audio"
            | "function_call_output"
            | "custom_tool_call_output"
            | "computer_call_output"
            | "local_shell_call_output"
            | "shell_call_output"
            | "apply_patch_call_output"
            | "mcp_approval_response"
            | "compaction"
            | "compaction_summary"
            | "compaction_trigger"
            | "item_reference",
        ) => true,
        Some("additional_tools") => role != Some("assistant"),
        // Provider wire JSON (not the session schema): a Responses item.
        Some("tool_search_output") => str_field(item, "execution") != Some("server"),
        _ => false,
    }
}

/// `sanitizeOpenAIResponsesAssistantHistoryItemsForReplay`: `None` for a
/// hidden-empty turn.
fn sanitize_assistant_history(items: &[Value]) -> Option<Vec<Value>> {
    let sanitized = sanitize_history(items);
    let mut replayable = false;
    let mut empty = false;
    for item in &sanitized {
        // Provider wire JSON (not the session schema): a Responses item.
        if str_field(item, "type") == Some("reasoning") {
            continue;
        }
        if is_empty_assistant_message(item) {
            empty = true;
        } else {
            replayable = true;
        }
    }
    if !replayable {
        return None;
    }
    if !empty {
        return Some(sanitized);
    }
    let mut kept = Vec::new();
    let mut pending: Vec<Value> = Vec::new();
    let mut removed = false;
    for item in sanitized {
        if is_client_boundary(&item) {
            pending.clear();
            removed = false;
            kept.push(item);
        } else if str_field(&item, "type") == Some("reasoning") {
            if removed {
                pending.clear();
            }
            removed = false;
            pending.push(item);
        } else if is_empty_assistant_message(&item) {
            removed = true;
        } else {
            kept.append(&mut pending);
            removed = false;
            kept.push(item);
        }
    }
    Some(kept)
}

/// `sanitizeOpenAIResponsesAssistantFallbackItemsForReplay`.
fn visible_fallback(items: Vec<Value>) -> Vec<Value> {
    items
        .into_iter()
        .filter(|item| {
            // Provider wire JSON (not the session schema): a Responses item.
            if str_field(item, "type") == Some("reasoning") {
                return false;
            }
            if str_field(item, "type") != Some("message")
                || str_field(item, "role") != Some("assistant")
            {
                return true;
            }
            !is_empty_assistant_message(item)
        })
        .collect()
}

/// `parseResponseReasoningReplayItem`: a thinking signature holding a reasoning item.
fn reasoning_item(signature: Option<&str>) -> Option<Value> {
    // Provider wire JSON (not the session schema): a Responses reasoning item (kept whole
    // in a thinking signature).
    let parsed: Value = serde_json::from_str(signature.filter(|s| !s.is_empty())?).ok()?;
    (parsed.is_object() && str_field(&parsed, "type") == Some("reasoning")).then_some(parsed)
}

/// `convertResponsesAssistantMessage` (no computer calls, no reasoning
/// reconstruction: the compat flags that ask for it are off for every
/// `openai-responses` model of the catalog that we record).
fn assistant_items(
    message: &Value,
    model: &Model,
    index: usize,
    include_signatures: bool,
    known: &mut Vec<String>,
    custom: &mut Vec<String>,
) -> Vec<Value> {
    let errored = MessageRef::new(message).stop_reason() == Some("error");
    let content = blocks(message);
    let replayable = include_signatures
        && !errored
        && content.iter().any(|b| {
            block_type(b) == Some("thinking")
                && reasoning_item(BlockRef::new(b).thinking_signature_str()).is_some()
        });
    let different_model = MessageRef::new(message).model_str() != Some(model.id.as_str())
        && MessageRef::new(message).provider_str() == Some(model.provider.as_str())
        && MessageRef::new(message).api_str() == Some(model.api.as_str());
    let mut unsigned = 0usize;
    let mut items = Vec::new();
    for block in content {
        match block_type(block) {
            Some("thinking") if !errored => {
                if include_signatures
                    && let Some(item) =
                        reasoning_item(BlockRef::new(block).thinking_signature_str())
                {
                    items.push(item);
                }
            }
            Some("text") => {
                let parsed = parse_text_signature(BlockRef::new(block).text_signature_str());
                let id = match &parsed {
                    None if replayable => {
                        let id = if unsigned == 0 {
                            format!("msg_{index}")
                        } else {
                            format!("msg_{index}_{unsigned}")
                        };
                        unsigned += 1;
                        Some(id)
                    }
                    None => None,
                    Some(_) if !replayable => None,
                    Some((id, _)) if utf16_len(id) > 64 => Some(format!("msg_{}", bun_hash36(id))),
                    Some((id, _)) => Some(id.clone()),
                };
                items.push(object([
                    ("type", Some(json!("message"))),
                    ("role", Some(json!("assistant"))),
                    (
                        "content",
                        Some(json!([{"type": "output_text", "text": BlockRef::new(block).text().cloned().unwrap_or(Value::Null), "annotations": []}])),
                    ),
                    ("status", Some(json!("completed"))),
                    ("id", id.map(Value::String)),
                    ("phase", parsed.and_then(|(_, p)| p).map(Value::String)),
                ]));
            }
            Some("toolCall") => {
                let wire_name = BlockRef::new(block).custom_wire_name_str();
                let prefix = if wire_name.is_some() { "ctc" } else { "fc" };
                let (call_id, item_id) =
                    normalize_tool_call_id(BlockRef::new(block).id_str().unwrap_or(""), prefix);
                let native = ["fc_", "fcr_", "ctc_"]
                    .iter()
                    .any(|p| item_id.starts_with(p));
                let item_id = (!(native && (!replayable || different_model))).then_some(item_id);
                known.push(call_id.clone());
                if let Some(wire_name) = wire_name {
                    custom.push(call_id.clone());
                    let input = CustomToolArgumentsRef::new(BlockRef::new(block).arguments())
                        .input()
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    items.push(object([
                        ("type", Some(json!("custom_tool_call"))),
                        ("id", item_id.map(Value::String)),
                        ("call_id", Some(json!(call_id))),
                        ("name", Some(json!(wire_name))),
                        ("input", Some(json!(input))),
                    ]));
                    continue;
                }
                let arguments = match BlockRef::new(block).arguments() {
                    None => "null".to_owned(),
                    Some(a) => pi_session_types::json::to_js_string(a).unwrap_or_default(),
                };
                items.push(object([
                    ("type", Some(json!("function_call"))),
                    ("id", item_id.map(Value::String)),
                    ("call_id", Some(json!(call_id))),
                    ("name", BlockRef::new(block).name().cloned()),
                    ("arguments", Some(json!(arguments))),
                ]));
            }
            _ => {}
        }
    }
    items
}

/// `encodeResponsesToolResultOutput` + `appendResponsesToolResultMessages`
/// (no strict pairing, no computer results).
fn tool_output(message: &Value, model: &Model, custom: &[String]) -> Value {
    let content = blocks(message);
    let images_ok = model.takes_images();
    let text = content
        .iter()
        .filter(|b| block_type(b) == Some("text"))
        .map(|b| string_of(BlockRef::new(b).text()))
        .collect::<Vec<_>>()
        .join("\n");
    let has_images = content.iter().any(|b| block_type(b) == Some("image"));
    let output = if has_images && images_ok {
        Value::Array(
            content
                .iter()
                .map(|b| {
                    if block_type(b) == Some("image") {
                        image_item(b)
                    } else {
                        json!({"type": "input_text", "text": BlockRef::new(b).text().cloned().unwrap_or(Value::Null)})
                    }
                })
                .collect(),
        )
    } else if has_images {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(text);
        }
        parts.push(NON_VISION_IMAGE_PLACEHOLDER.to_owned());
        json!(parts.join("\n"))
    } else {
        json!(text)
    };
    let (call_id, _) = normalize_tool_call_id(
        MessageRef::new(message).tool_call_id_str().unwrap_or(""),
        "fc",
    );
    let kind = if custom.contains(&call_id) {
        "custom_tool_call_output"
    } else {
        "function_call_output"
    };
    json!({"type": kind, "call_id": call_id, "output": output})
}

fn known_call_ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter(|i| call_kind(i).is_some())
        .filter_map(|i| str_field(i, "call_id").filter(|c| !c.is_empty()))
        .map(str::to_owned)
        .collect()
}

fn custom_call_ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        // Provider wire JSON (not the session schema): a Responses item.
        .filter(|i| str_field(i, "type") == Some("custom_tool_call"))
        .filter_map(|i| str_field(i, "call_id"))
        .map(str::to_owned)
        .collect()
}

/// `buildResponsesInput` (native history replayed, no strict pairing).
fn build_input(messages: &[Value], model: &Model) -> Vec<Value> {
    let normalize = |id: &str, source: &Value| normalize_for_transform(id, model, source);
    let rules = Rules {
        developer_closes_calls: true,
        demote: Some(omp_demoted_thinking),
        omp_pairing: true,
    };
    let transformed = transform_messages_with(messages, model, Some(&normalize), rules);
    let images_ok = model.takes_images();
    let mut out: Vec<Value> = Vec::new();
    let mut known: Vec<String> = Vec::new();
    let mut custom: Vec<String> = Vec::new();
    let mut index = 0usize;
    for message in &transformed {
        match MessageRef::new(message).role() {
            Some("user" | "developer") => {
                if let Some((items, _)) = history_items(
                    MessageRef::new(message).provider_payload(),
                    &model.provider,
                    None,
                ) {
                    out.extend(sanitize_history(items));
                    known = known_call_ids(&out);
                    custom.extend(custom_call_ids(&out));
                    index += 1;
                    continue;
                }
                let Some(content) = input_content(message, images_ok) else {
                    continue;
                };
                out.push(json!({"role": "user", "content": content}));
            }
            Some("assistant") => {
                let same_target = MessageRef::new(message).api_str() == Some(model.api.as_str())
                    && MessageRef::new(message).model_str() == Some(model.id.as_str());
                let history = same_target
                    .then(|| {
                        history_items(
                            MessageRef::new(message).provider_payload(),
                            &model.provider,
                            MessageRef::new(message).provider_str(),
                        )
                    })
                    .flatten();
                let mut suppress = false;
                if let Some((items, incremental)) = history {
                    match sanitize_assistant_history(items) {
                        Some(replay) => {
                            if incremental {
                                out.extend(replay);
                            } else {
                                out = replay;
                                custom.clear();
                            }
                            known = known_call_ids(&out);
                            custom.extend(custom_call_ids(&out));
                            index += 1;
                            continue;
                        }
                        None => suppress = true,
                    }
                }
                let items =
                    assistant_items(message, model, index, !suppress, &mut known, &mut custom);
                let items = if suppress {
                    visible_fallback(items)
                } else {
                    items
                };
                if items.is_empty() {
                    continue;
                }
                out.extend(items);
            }
            Some("toolResult") => out.push(tool_output(message, model, &custom)),
            _ => {}
        }
        index += 1;
    }
    hoist_batch_messages(repair_orphan_calls(repair_orphan_outputs(out)))
}

fn call_kind(item: &Value) -> Option<&'static str> {
    // Provider wire JSON (not the session schema): a Responses item.
    match str_field(item, "type") {
        Some("function_call") => Some("function"),
        Some("custom_tool_call") => Some("custom"),
        Some("computer_call") => Some("computer"),
        _ => None,
    }
}

fn output_kind(item: &Value) -> Option<&'static str> {
    // Provider wire JSON (not the session schema): a Responses item.
    match str_field(item, "type") {
        Some("function_call_output") => Some("function"),
        Some("custom_tool_call_output") => Some("custom"),
        Some("computer_call_output") => Some("computer"),
        _ => None,
    }
}

/// `repairOrphanResponsesToolOutputs`: an output before (or without) its call
/// becomes an assistant note.
fn repair_orphan_outputs(input: Vec<Value>) -> Vec<Value> {
    let mut calls: Vec<(&'static str, String)> = Vec::new();
    let mut out = Vec::with_capacity(input.len());
    for item in input {
        let call_id = str_field(&item, "call_id")
            .filter(|c| !c.is_empty())
            .map(str::to_owned);
        if let (Some(kind), Some(id)) = (call_kind(&item), &call_id) {
            calls.push((kind, id.clone()));
        }
        let (Some(kind), Some(id)) = (output_kind(&item), call_id) else {
            out.push(item);
            continue;
        };
        if calls.iter().any(|(k, c)| *k == kind && *c == id) {
            out.push(item);
            continue;
        }
        let tool = if kind == "computer" {
            "computer"
        } else {
            "tool"
        };
        // Provider wire JSON (not the session schema): a Responses item.
        let mut text = match item.get("output") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => pi_session_types::json::to_js_string(other).unwrap_or_default(),
        };
        if utf16_len(&text) > 16_000 {
            text = format!("{}\n...[truncated]", js_slice(&text, 16_000));
        }
        out.push(json!({
            "type": "message",
            "role": "assistant",
            "content": format!("[Orphan {tool} result; call_id={id}]: {text}"),
        }));
    }
    out
}

/// `repairOrphanResponsesToolCalls`: a call without a later output gets the
/// placeholder output right after it.
fn repair_orphan_calls(input: Vec<Value>) -> Vec<Value> {
    let mut later: Vec<(&'static str, String)> = Vec::new();
    let mut orphan = vec![false; input.len()];
    for (index, item) in input.iter().enumerate().rev() {
        let call_id = str_field(item, "call_id").filter(|c| !c.is_empty());
        if let (Some(kind), Some(id)) = (output_kind(item), call_id) {
            later.push((kind, id.to_owned()));
        }
        if let (Some(kind), Some(id)) = (call_kind(item), call_id)
            && !later.iter().any(|(k, c)| *k == kind && c == id)
        {
            orphan[index] = true;
        }
    }
    let mut out = Vec::with_capacity(input.len());
    for (item, orphan) in input.into_iter().zip(orphan) {
        if !orphan {
            out.push(item);
            continue;
        }
        let kind = call_kind(&item).unwrap_or("function");
        let call_id = str_field(&item, "call_id").unwrap_or("").to_owned();
        if kind == "computer" {
            out.push(json!({"type": "message", "role": "assistant", "content": format!("[Computer call interrupted before a screenshot was recorded; call_id={call_id}]")}));
            continue;
        }
        out.push(item);
        let output_type = if kind == "custom" {
            "custom_tool_call_output"
        } else {
            "function_call_output"
        };
        out.push(json!({"type": output_type, "call_id": call_id, "output": ORPHAN_TOOL_CALL_PLACEHOLDER}));
    }
    out
}

#[derive(PartialEq)]
enum BatchKind {
    Call,
    Output,
    AssistantMessage,
    Other,
}

fn batch_kind(item: &Value) -> BatchKind {
    if call_kind(item).is_some() {
        BatchKind::Call
    } else if output_kind(item).is_some() {
        BatchKind::Output
    // Provider wire JSON (not the session schema): a Responses item.
    } else if str_field(item, "type") == Some("message")
        && str_field(item, "role") == Some("assistant")
    {
        BatchKind::AssistantMessage
    } else {
        BatchKind::Other
    }
}

/// `hoistInterleavedResponsesToolBatchMessages`: assistant messages between a
/// batch's calls and its outputs move before the calls.
fn hoist_batch_messages(items: Vec<Value>) -> Vec<Value> {
    let kinds: Vec<BatchKind> = items.iter().map(batch_kind).collect();
    let mut moved = vec![false; items.len()];
    let mut insert_before: std::collections::BTreeMap<usize, Vec<usize>> =
        std::collections::BTreeMap::new();
    for index in 0..items.len() {
        if kinds[index] != BatchKind::Output || (index > 0 && kinds[index - 1] == BatchKind::Output)
        {
            continue;
        }
        let mut start = index;
        let mut saw_call = false;
        let mut messages = Vec::new();
        while start > 0 {
            match kinds[start - 1] {
                BatchKind::Call => saw_call = true,
                BatchKind::AssistantMessage => messages.push(start - 1),
                _ => break,
            }
            start -= 1;
        }
        if !saw_call || messages.is_empty() {
            continue;
        }
        messages.reverse();
        for &m in &messages {
            moved[m] = true;
        }
        insert_before.entry(start).or_default().extend(messages);
    }
    if !moved.contains(&true) {
        return items;
    }
    let mut out = Vec::with_capacity(items.len());
    for index in 0..items.len() {
        if let Some(pending) = insert_before.get(&index) {
            out.extend(pending.iter().map(|&m| items[m].clone()));
        }
        if !moved[index] {
            out.push(items[index].clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_call_ids_keep_clean_ids_and_hash_the_rest() {
        assert_eq!(sanitize_codex_call_id("toolu_01"), "toolu_01");
        assert_eq!(
            sanitize_codex_call_id(""),
            format!("call_{}", bun_hash36("empty"))
        );
        let odd = sanitize_codex_call_id("a.b");
        assert_eq!(odd, format!("a_b_{}", bun_hash36("a.b")));
    }

    #[test]
    fn item_ids_get_a_known_prefix() {
        assert_eq!(
            normalize_tool_call_id("call_1|fc_abc", "fc"),
            ("call_1".to_owned(), "fc_abc".to_owned())
        );
        assert_eq!(
            normalize_tool_call_id("call_1|rs_abc", "fc"),
            ("call_1".to_owned(), format!("fc_{}", bun_hash36("rs_abc")))
        );
        assert_eq!(
            normalize_tool_call_id("toolu_01", "fc"),
            (
                "toolu_01".to_owned(),
                format!("fc_{}", bun_hash36("toolu_01"))
            )
        );
    }

    #[test]
    fn wedged_assistant_messages_move_before_their_batch() {
        let items = vec![
            json!({"type": "function_call", "call_id": "a"}),
            json!({"type": "message", "role": "assistant", "content": "x"}),
            json!({"type": "function_call_output", "call_id": "a"}),
        ];
        let hoisted = hoist_batch_messages(items);
        assert_eq!(str_field(&hoisted[0], "type"), Some("message"));
        assert_eq!(str_field(&hoisted[1], "type"), Some("function_call"));
    }
}
