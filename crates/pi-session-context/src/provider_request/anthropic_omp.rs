//! Anthropic Messages (`anthropic-messages`) by omp 18.2.3's own pi-ai
//! (`@oh-my-pi/pi-ai` `src/providers/anthropic.ts` `buildParams`,
//! `convertAnthropicMessages`, `applyHeadCaching`, `applyPromptCaching`;
//! `transform-messages.ts` for the Anthropic target; `stream.ts` for the
//! thinking budget), for an API-key request (no OAuth, no Claude Code
//! instruction, no tools).
//!
//! Rules:
//! - first pass for an Anthropic target: thinking signatures kept only where
//!   their issuer can verify them (same deployment; the latest turn of the
//!   target's own provider byte for byte; a signature stripped when a
//!   signing endpoint is crossed), unsigned thinking of the same model
//!   dropped on a signing endpoint, thinking of other APIs demoted into the
//!   target's dialect, redacted thinking kept only beside its own signed
//!   thinking, assistant pictures dropped, every tool-call id made
//!   Anthropic-valid (`[a-zA-Z0-9_-]{1,64}`, else `toolu_<Bun.hash>`); then
//!   omp's result pairing ([`omp_pair_results`]);
//! - user and developer turns as `user` (blank text dropped; text-only
//!   results as blocks; `(see attached image)` before pictures without
//!   text), assistant turns with `tool_use` blocks moved after the rest,
//!   runs of results merged into one `user` turn (error results keep their
//!   text, their pictures follow the run; an empty error result says
//!   `Tool failed with no output.`);
//! - two assistant turns in a row get a `Continue.` user turn between them,
//!   and a trailing assistant turn one after it;
//! - `system`: the prompt as one text block, marked `cache_control`
//!   (the head); then up to three more markers on the conversation: the last
//!   message (before a trailing `Continue.` pad), every 15th real user turn
//!   (newest first) and the message before the last;
//! - `thinking` from the level: `disabled` (off; adaptive-only models get
//!   `output_config.effort: "low"` instead), `enabled` with omp's budget
//!   (minimal 1024, low 4096, medium 8192, high 16384, xhigh 32768, at most
//!   the model's output limit less 4000), or `adaptive` with
//!   `output_config.effort`.

use pi_session_types::js::{object, string_of};
use pi_session_types::view::{BlockRef, MessageRef, key};
use serde_json::{Map, Value, json};

use super::anthropic::{AnthropicRequest, tool_use_block};
use super::bun_hash::bun_hash36;
use super::openai_chat::js_slice;
use super::registry::Model;
use super::transform::{
    DEMOTED, SYNTHETIC_USER, block_type, blocks, is_blank, is_responses_family, is_same_model,
    marked_text, omp_demoted_thinking, omp_pair_results, replayed_call, responses_call_component,
    str_field, trim_final_demoted, truthy, wire_text_block,
};
use super::{RequestOptions, openai_responses_omp::NON_VISION_IMAGE_PLACEHOLDER};

/// The pad omp sends where an assistant turn would follow an assistant turn or end the list.
pub const CONTINUE_PAD: &str = "Continue.";
/// The text of an error result that has no output.
pub const EMPTY_ERROR_RESULT: &str = "Tool failed with no output.";
/// The key marking a `user` param that came from a real conversational turn
/// (never serialised: removed before the body is returned).
const CONVERSATIONAL: &str = "\u{0}conversational";

/// `ANTHROPIC_THINKING`: omp's thinking budget per level.
fn thinking_budget(level: &str) -> Option<u64> {
    Some(match level {
        "minimal" => 1024,
        "low" => 4096,
        "medium" => 8192,
        "high" => 16384,
        "xhigh" | "max" => 32768,
        _ => return None,
    })
}

/// The Anthropic request omp's pi-ai builds.
pub fn request(messages: &[Value], model: &Model, options: &RequestOptions) -> AnthropicRequest {
    let marker = json!({"type": "ephemeral"});
    let mut out = AnthropicRequest {
        messages: convert_messages(messages, model),
        ..AnthropicRequest::default()
    };
    let mut head_markers = 0;
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !is_blank(s)) {
        out.system = Some(vec![
            json!({"type": "text", "text": system, "cache_control": marker}),
        ]);
        head_markers = 1;
    }
    apply_thinking(&mut out, model, options);
    apply_prompt_caching(&mut out.messages, 4 - head_markers, &marker);
    for message in &mut out.messages {
        if let Some(map) = message.as_object_mut() {
            map.remove(CONVERSATIONAL);
        }
    }
    out
}

fn thinking_mode(model: &Model) -> Option<&str> {
    model.thinking.as_ref().and_then(|t| t.mode.as_deref())
}

/// `usesAdaptiveThinkingTagOnly`: every effort maps to `adaptive`.
fn adaptive_tag_only(model: &Model) -> bool {
    let Some(thinking) = model.thinking.as_ref() else {
        return false;
    };
    if thinking_mode(model) != Some("anthropic-adaptive") {
        return false;
    }
    let Some(map) = &thinking.effort_map else {
        return false;
    };
    let efforts = &thinking.efforts;
    !efforts.is_empty()
        && efforts
            .iter()
            .all(|e| map.get(e).and_then(Value::as_str) == Some("adaptive"))
}

/// `mapEffortToAnthropicAdaptiveEffort`.
fn adaptive_effort(model: &Model, level: &str) -> String {
    let mapped = model
        .thinking
        .as_ref()
        .and_then(|t| t.effort_map.as_ref())
        .and_then(|m| m.get(level))
        .and_then(Value::as_str)
        .unwrap_or(level);
    if mapped == "minimal" {
        "low".to_owned()
    } else {
        mapped.to_owned()
    }
}

fn apply_thinking(out: &mut AnthropicRequest, model: &Model, options: &RequestOptions) {
    if !model.reasoning {
        return;
    }
    let level = options.thinking_level.as_str();
    let mode = thinking_mode(model);
    let adaptive_ok = !model
        .compat_bool("disableAdaptiveThinking")
        .unwrap_or(false);
    let output_effort = model.compat_bool("supportsOutputEffort").unwrap_or(false);
    let budget = thinking_budget(level);
    let enabled = budget.is_some() || model.compat_bool("requiresThinkingEnabled") == Some(true);
    if !enabled {
        if mode == Some("anthropic-adaptive") && adaptive_ok && !adaptive_tag_only(model) {
            if output_effort {
                out.output_config = Some(json!({"effort": "low"}));
            }
        } else {
            out.thinking = Some(json!({"type": "disabled"}));
        }
        return;
    }
    let effort = (matches!(mode, Some("anthropic-adaptive" | "anthropic-budget-effort"))
        && budget.is_some())
    .then(|| adaptive_effort(model, level));
    let mut effort_config = None;
    if mode == Some("anthropic-adaptive") && adaptive_ok {
        let supports_display = model.thinking.as_ref().is_some_and(|t| t.supports_display);
        out.thinking = Some(if supports_display {
            json!({"type": "adaptive", "display": "summarized"})
        } else {
            json!({"type": "adaptive"})
        });
        effort_config = effort.filter(|e| e != "adaptive");
    } else {
        let model_max = model.max_tokens.unwrap_or(64_000);
        let mut budget = budget.unwrap_or(1024);
        // `ensureMaxTokensForThinking` (4000 tokens kept for the answer).
        let max_tokens = options.max_tokens.unwrap_or(model_max).min(model_max);
        let raised = max_tokens.max(budget + 4000).min(model_max);
        if budget + 4000 > raised {
            budget = raised.saturating_sub(4000);
        }
        out.thinking =
            Some(json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"}));
        if mode == Some("anthropic-budget-effort") {
            effort_config = effort.filter(|e| e != "adaptive");
        }
    }
    if output_effort && let Some(effort) = effort_config {
        out.output_config = Some(json!({"effort": effort}));
    }
}

/// `^[a-zA-Z0-9_-]{1,64}$`.
fn valid_tool_call_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `normalizeAnthropicTargetToolCallId` with pi-ai's `normalizeToolCallId`.
pub fn normalize_tool_call_id(id: &str) -> String {
    if valid_tool_call_id(id) {
        return id.to_owned();
    }
    let normalized = js_slice(&super::openai_chat::sanitize(id), 64);
    if valid_tool_call_id(&normalized) {
        normalized
    } else {
        format!("toolu_{}", bun_hash36(id))
    }
}

fn truncated_thinking_only(message: &Value) -> bool {
    matches!(
        MessageRef::new(message).stop_reason(),
        Some("length" | "error" | "aborted")
    ) && !blocks(message)
        .iter()
        .any(|b| matches!(block_type(b), Some("toolCall" | "text")))
}

fn signature(block: &Value) -> Option<&str> {
    BlockRef::new(block)
        .thinking_signature()
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn without_signature(block: &Value) -> Value {
    let mut out = block.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove(key::THINKING_SIGNATURE);
    }
    out
}

fn thinking_blank(block: &Value) -> bool {
    BlockRef::new(block)
        .thinking_str()
        .is_none_or(|t| t.trim().is_empty() || is_blank(t))
}

/// omp's `transformMessages` for an Anthropic target, then its pairing.
fn transform(messages: &[Value], model: &Model) -> Vec<Value> {
    let official = model.compat_bool("officialEndpoint").unwrap_or(false);
    let signing = model.compat_bool("signingEndpoint").unwrap_or(false);
    let replays_unsigned = model.compat_bool("replayUnsignedThinking") == Some(true);
    let prefix_binding = model.thinking.as_ref().is_some_and(|t| t.prefix_binding);
    let latest = messages.iter().rposition(|m| {
        MessageRef::new(m).role() == Some("assistant") && !truncated_thinking_only(m)
    });
    let mut id_map: Map<String, Value> = Map::new();
    let mut composite: Map<String, Value> = Map::new();
    let mut out = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        match MessageRef::new(message).role() {
            Some("toolResult") => {
                let id = MessageRef::new(message).tool_call_id_str().unwrap_or("");
                let mapped = id_map.get(id).cloned().or_else(|| {
                    id.contains('|')
                        .then(|| composite.get(responses_call_component(id)).cloned())
                        .flatten()
                });
                let mut message = message.clone();
                if let Some(new_id) = mapped
                    && let Some(map) = message.as_object_mut()
                {
                    map.insert("toolCallId".into(), new_id);
                }
                out.push(message);
            }
            Some("assistant") => {
                let same = is_same_model(message, model);
                let source_provider = MessageRef::new(message).provider_str();
                let anthropic_replay =
                    MessageRef::new(message).api_str() == Some("anthropic-messages");
                let same_deployment = anthropic_replay
                    && source_provider == Some(model.provider.as_str())
                    && (official || prefix_binding);
                let is_latest = latest == Some(index);
                let signing_involved =
                    (anthropic_replay && source_provider == Some("anthropic")) || signing;
                let stop = MessageRef::new(message).stop_reason();
                let invalid_stop = matches!(stop, Some("aborted" | "error"));
                let content = blocks(message);
                let abandoned = !invalid_stop
                    && stop != Some("toolUse")
                    && content.iter().any(|b| block_type(b) == Some("toolCall"));
                let last_block = content.len().saturating_sub(1);
                let cross_provider = source_provider != Some(model.provider.as_str());
                let survives = |candidate: &Value, at: usize| -> bool {
                    if block_type(candidate) != Some("thinking") || !anthropic_replay {
                        return false;
                    }
                    if is_latest && abandoned {
                        return true;
                    }
                    let untrustworthy = abandoned || (invalid_stop && at == last_block);
                    let sig = if untrustworthy {
                        None
                    } else {
                        signature(candidate)
                    };
                    if sig.is_none() && thinking_blank(candidate) {
                        return false;
                    }
                    !(same && signing && sig.is_none_or(|s| s.trim().is_empty()))
                };
                let drops_all_visible = anthropic_replay
                    && same
                    && signing
                    && content.iter().any(|b| block_type(b) == Some("thinking"))
                    && !content.iter().enumerate().any(|(i, b)| survives(b, i));
                let mut kept = Vec::new();
                for (at, block) in content.iter().enumerate() {
                    match block_type(block) {
                        Some("thinking") => {
                            let untrustworthy = abandoned || (invalid_stop && at == last_block);
                            let mut sanitized = if untrustworthy && signature(block).is_some() {
                                without_signature(block)
                            } else {
                                block.clone()
                            };
                            if anthropic_replay {
                                if is_latest && abandoned && !cross_provider {
                                    kept.push(block.clone());
                                    continue;
                                }
                                let stale = !same_deployment
                                    && if is_latest { cross_provider } else { !same };
                                if stale && signing_involved && signature(&sanitized).is_some() {
                                    sanitized = without_signature(&sanitized);
                                }
                                let sig = signature(&sanitized);
                                if sig.is_none() && thinking_blank(&sanitized) {
                                    continue;
                                }
                                if same && signing && sig.is_none_or(|s| s.trim().is_empty()) {
                                    continue;
                                }
                                kept.push(sanitized);
                                continue;
                            }
                            if same && signature(&sanitized).is_some() {
                                kept.push(sanitized);
                                continue;
                            }
                            if thinking_blank(&sanitized) {
                                continue;
                            }
                            if same {
                                kept.push(sanitized);
                            } else if replays_unsigned {
                                kept.push(without_signature(&sanitized));
                            } else {
                                let text = omp_demoted_thinking(
                                    &model.id,
                                    BlockRef::new(&sanitized).thinking_str().unwrap_or(""),
                                );
                                let mut demoted = json!({"type": "text", "text": text});
                                if let Some(map) = demoted.as_object_mut() {
                                    map.insert(DEMOTED.to_owned(), Value::Bool(true));
                                }
                                kept.push(demoted);
                            }
                        }
                        Some("redactedThinking") => {
                            let keep = if anthropic_replay {
                                !drops_all_visible
                                    && (same
                                        || same_deployment
                                        || (is_latest && !cross_provider)
                                        || replays_unsigned)
                            } else {
                                same
                            };
                            if keep {
                                kept.push(block.clone());
                            }
                        }
                        Some("anthropicServerTool") => {
                            if anthropic_replay && !cross_provider {
                                kept.push(block.clone());
                            }
                        }
                        Some("fallback") => {
                            if official {
                                kept.push(block.clone());
                            }
                        }
                        Some("image") => {}
                        Some("text") => {
                            if same {
                                kept.push(block.clone());
                            } else {
                                kept.push(object([
                                    ("type", Some(json!("text"))),
                                    ("text", BlockRef::new(block).text().cloned()),
                                ]));
                            }
                        }
                        Some("toolCall") => {
                            let mut call = replayed_call(block, same);
                            if !same || official {
                                let id = BlockRef::new(block).id_str().unwrap_or("");
                                let new_id = normalize_tool_call_id(id);
                                if new_id != id {
                                    id_map.insert(id.to_owned(), json!(new_id));
                                    if let Some(map) = call.as_object_mut() {
                                        map.insert("id".into(), json!(new_id));
                                    }
                                }
                                if is_responses_family(MessageRef::new(message).api_str()) {
                                    composite.insert(
                                        responses_call_component(id).to_owned(),
                                        json!(new_id),
                                    );
                                }
                            }
                            kept.push(call);
                        }
                        _ => kept.push(block.clone()),
                    }
                }
                trim_final_demoted(&mut kept);
                let mut message = message.clone();
                if let Some(map) = message.as_object_mut() {
                    map.insert("content".into(), Value::Array(kept));
                }
                out.push(message);
            }
            _ => out.push(message.clone()),
        }
    }
    omp_pair_results(out)
}

/// `normalizeAnthropicImageMediaType`.
fn media_type(mime: &str) -> Option<&'static str> {
    match mime.to_ascii_lowercase().as_str() {
        "image/jpeg" | "image/jpg" => Some("image/jpeg"),
        "image/png" => Some("image/png"),
        "image/gif" => Some("image/gif"),
        "image/webp" => Some("image/webp"),
        _ => None,
    }
}

/// `convertContentBlocks`: blocks, or one string for a model without image input.
fn content_blocks(content: &[Value], images_ok: bool) -> Value {
    let mut out = Vec::new();
    let (mut saw_text, mut saw_image) = (false, false);
    for block in content {
        if block_type(block) == Some("text") {
            let text = string_of(BlockRef::new(block).text());
            if is_blank(&text) {
                continue;
            }
            saw_text = true;
            out.push(json!({"type": "text", "text": text}));
            continue;
        }
        if !images_ok {
            out.push(json!({"type": "text", "text": NON_VISION_IMAGE_PLACEHOLDER}));
            continue;
        }
        let source = if let Some(url) = BlockRef::new(block).url_str().filter(|u| !u.is_empty()) {
            json!({"type": "url", "url": url})
        } else {
            let mime = string_of(BlockRef::new(block).mime_type());
            let Some(media) = media_type(&mime) else {
                out.push(json!({"type": "text", "text": format!("[unsupported image: {mime}]")}));
                continue;
            };
            object([
                ("type", Some(json!("base64"))),
                ("media_type", Some(json!(media))),
                ("data", BlockRef::new(block).data().cloned()),
            ])
        };
        saw_image = true;
        out.push(json!({"type": "image", "source": source}));
    }
    if !images_ok {
        let texts: Vec<&str> = out
            .iter()
            .filter_map(|b| BlockRef::new(b).text_str())
            .collect();
        return json!(texts.join("\n"));
    }
    if saw_image && !saw_text {
        out.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(out)
}

fn tool_result_block(message: &Value, images_ok: bool, hoisted: &mut Vec<Value>) -> Value {
    let is_error = truthy(MessageRef::new(message).is_error());
    let mut content = content_blocks(blocks(message), images_ok);
    if is_error && let Value::Array(parts) = &mut content {
        hoisted.extend(
            parts
                .iter()
                .filter(|b| block_type(b) == Some("image"))
                .cloned(),
        );
        parts.retain(|b| block_type(b) == Some("text"));
    }
    if content.as_array().is_some_and(Vec::is_empty) {
        content = json!("");
    }
    if is_error {
        let empty = match &content {
            Value::String(s) => s.trim().is_empty() || is_blank(s),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        if empty {
            content = if content.is_string() {
                json!(EMPTY_ERROR_RESULT)
            } else {
                json!([{"type": "text", "text": EMPTY_ERROR_RESULT}])
            };
        }
    }
    object([
        ("type", Some(json!("tool_result"))),
        (
            "tool_use_id",
            Some(
                MessageRef::new(message)
                    .tool_call_id()
                    .cloned()
                    .unwrap_or(Value::Null),
            ),
        ),
        ("content", Some(content)),
        ("is_error", MessageRef::new(message).is_error().cloned()),
    ])
}

fn assistant_blocks(message: &Value, model: &Model) -> Vec<Value> {
    let content = blocks(message);
    let signed = content
        .iter()
        .any(|b| block_type(b) == Some("thinking") && signature(b).is_some_and(|s| !is_blank(s)));
    let replays_unsigned = model.compat_bool("replayUnsignedThinking") == Some(true);
    let mut out = Vec::new();
    for block in content {
        match block_type(block) {
            Some("text") => out.extend(wire_text_block(block)),
            Some("thinking") => {
                let thinking = BlockRef::new(block).thinking_str().unwrap_or("");
                let sig = signature(block).filter(|s| !is_blank(s));
                match sig {
                    Some(sig) => {
                        if !signed && is_blank(thinking) {
                            continue;
                        }
                        out.push(
                            json!({"type": "thinking", "thinking": thinking, "signature": sig}),
                        );
                    }
                    None if is_blank(thinking) => {}
                    None if !signed && replays_unsigned => {
                        out.push(json!({"type": "thinking", "thinking": thinking, "signature": ""}))
                    }
                    None => out.push(
                        json!({"type": "text", "text": omp_demoted_thinking(&model.id, thinking)}),
                    ),
                }
            }
            Some("redactedThinking") => {
                let data = BlockRef::new(block).data_str().unwrap_or("");
                if !is_blank(data) {
                    out.push(json!({"type": "redacted_thinking", "data": data}));
                }
            }
            Some("toolCall") => out.push(tool_use_block(block)),
            _ => {}
        }
    }
    // `tool_use` blocks go last when anything but thinking follows one.
    let mut saw_tool_use = false;
    let needs_partition = out.iter().any(|b| match block_type(b) {
        Some("tool_use") => {
            saw_tool_use = true;
            false
        }
        Some("thinking" | "redacted_thinking") => false,
        _ => saw_tool_use,
    });
    if needs_partition {
        let (tool_use, rest): (Vec<Value>, Vec<Value>) = out
            .into_iter()
            .partition(|b| block_type(b) == Some("tool_use"));
        out = rest;
        out.extend(tool_use);
    }
    out
}

fn convert_messages(messages: &[Value], model: &Model) -> Vec<Value> {
    let transformed = transform(messages, model);
    let images_ok = model.takes_images();
    let mut params: Vec<Value> = Vec::new();
    let mut developers: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < transformed.len() {
        let message = &transformed[i];
        match MessageRef::new(message).role() {
            Some(role @ ("user" | "developer")) => {
                let content = match MessageRef::new(message).content() {
                    Some(Value::String(text)) => {
                        if is_blank(text) {
                            i += 1;
                            continue;
                        }
                        json!(text)
                    }
                    _ => {
                        let converted = content_blocks(blocks(message), images_ok);
                        let empty = match &converted {
                            Value::String(s) => is_blank(s),
                            Value::Array(a) => a.is_empty(),
                            _ => true,
                        };
                        if empty {
                            i += 1;
                            continue;
                        }
                        converted
                    }
                };
                if role == "developer" {
                    developers.push(params.len());
                }
                let mut param = json!({"role": "user", "content": content});
                let agent_authored = MessageRef::new(message).synthetic()
                    == Some(&Value::Bool(true))
                    || MessageRef::new(message).attribution_str() == Some("agent");
                if role == "user"
                    && !agent_authored
                    && message.get(SYNTHETIC_USER).is_none()
                    && let Some(map) = param.as_object_mut()
                {
                    map.insert(CONVERSATIONAL.to_owned(), Value::Bool(true));
                }
                params.push(param);
            }
            Some("assistant") => {
                let content = assistant_blocks(message, model);
                if !content.is_empty() {
                    params.push(json!({"role": "assistant", "content": content}));
                }
            }
            Some("toolResult") => {
                let mut results = Vec::new();
                let mut hoisted = Vec::new();
                while i < transformed.len()
                    && MessageRef::new(&transformed[i]).role() == Some("toolResult")
                {
                    results.push(tool_result_block(&transformed[i], images_ok, &mut hoisted));
                    i += 1;
                }
                if !hoisted.is_empty() {
                    results.push(json!({"type": "text", "text": "Attached image(s) from the tool result(s) above:"}));
                    results.extend(hoisted);
                }
                params.push(json!({"role": "user", "content": results}));
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if model.compat_bool("supportsMidConversationSystem") == Some(true) {
        for &at in developers.iter().rev() {
            // Provider wire JSON (not the session schema): Anthropic request params.
            let follows_user = at > 0 && str_field(&params[at - 1], "role") == Some("user");
            let before_assistant = at + 1 == params.len()
                || params
                    .get(at + 1)
                    .is_some_and(|n| str_field(n, "role") == Some("assistant"));
            let text_only = match params[at].get("content") {
                Some(Value::Array(parts)) => parts.iter().all(|b| block_type(b) == Some("text")),
                _ => true,
            };
            if follows_user
                && before_assistant
                && text_only
                && let Some(map) = params[at].as_object_mut()
            {
                map.insert("role".into(), json!("system"));
            }
        }
    }
    let mut at = params.len();
    while at > 1 {
        at -= 1;
        if str_field(&params[at], "role") == Some("assistant")
            && str_field(&params[at - 1], "role") == Some("assistant")
        {
            params.insert(at, json!({"role": "user", "content": CONTINUE_PAD}));
        }
    }
    if params
        .last()
        .is_some_and(|p| str_field(p, "role") == Some("assistant"))
    {
        params.push(json!({"role": "user", "content": CONTINUE_PAD}));
    }
    params
}

/// `applyCacheControlToMessage`: marks the last markable block.
fn mark_message(message: &mut Value, marker: &Value) -> bool {
    let Some(map) = message.as_object_mut() else {
        return false;
    };
    // Provider wire JSON (not the session schema): an Anthropic request param.
    match map.get_mut("content") {
        Some(Value::String(text)) => {
            let content = marked_text(text, marker);
            map.insert("content".into(), content);
            true
        }
        Some(Value::Array(parts)) => {
            for part in parts.iter_mut().rev() {
                if matches!(
                    block_type(part),
                    Some(
                        "thinking"
                            | "redacted_thinking"
                            | "fallback"
                            | "tool_addition"
                            | "tool_removal"
                    )
                ) {
                    continue;
                }
                let Some(block) = part.as_object_mut() else {
                    return false;
                };
                if block.get("cache_control").is_some_and(|c| !c.is_null()) {
                    return false;
                }
                block.insert("cache_control".into(), marker.clone());
                return true;
            }
            false
        }
        _ => false,
    }
}

/// `applyPromptCaching`: up to `budget` markers on the conversation.
fn apply_prompt_caching(messages: &mut [Value], budget: usize, marker: &Value) {
    if budget == 0 || messages.is_empty() {
        return;
    }
    let last = messages.len() - 1;
    // Provider wire JSON (not the session schema): Anthropic request params.
    let trailing_pad = str_field(&messages[last], "role") == Some("user")
        && messages[last].get("content") == Some(&json!(CONTINUE_PAD))
        && messages[last].get(CONVERSATIONAL).is_none()
        && last > 0
        && str_field(&messages[last - 1], "role") == Some("assistant");
    let end = if trailing_pad { last - 1 } else { last };
    let users: Vec<usize> = (0..=end)
        .filter(|&i| messages[i].get(CONVERSATIONAL).is_some())
        .collect();
    let checkpoints: Vec<usize> = users
        .iter()
        .enumerate()
        .filter(|(ordinal, _)| (ordinal + 1) % 15 == 0)
        .map(|(_, &i)| i)
        .collect();
    let trailing: Vec<usize> = (0..=end).rev().take(2).collect();
    let mut candidates: Vec<usize> = trailing.first().copied().into_iter().collect();
    for &c in checkpoints.iter().rev() {
        if !candidates.contains(&c) {
            candidates.push(c);
        }
    }
    for &t in &trailing {
        if !candidates.contains(&t) {
            candidates.push(t);
        }
    }
    let mut applied = 0;
    for index in candidates {
        if applied >= budget {
            break;
        }
        if mark_message(&mut messages[index], marker) {
            applied += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_ids_become_anthropic_valid() {
        assert_eq!(normalize_tool_call_id("toolu_01"), "toolu_01");
        assert_eq!(normalize_tool_call_id("call|fc_1"), "call_fc_1");
        assert_eq!(
            normalize_tool_call_id(""),
            format!("toolu_{}", bun_hash36(""))
        );
    }

    #[test]
    fn a_trailing_assistant_gets_a_continue_pad_and_the_markers_skip_it() {
        let mut messages = vec![
            json!({"role": "user", "content": "hi", CONVERSATIONAL: true}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "hello"}]}),
            json!({"role": "user", "content": CONTINUE_PAD}),
        ];
        apply_prompt_caching(&mut messages, 3, &json!({"type": "ephemeral"}));
        assert!(messages[1]["content"][0].get("cache_control").is_some());
        assert!(messages[0]["content"][0].get("cache_control").is_some());
        assert_eq!(messages[2]["content"], json!(CONTINUE_PAD));
    }
}
