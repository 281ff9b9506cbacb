//! OpenAI Chat Completions (`openai-completions`): pi 0.73.1
//! `dist/providers/openai-completions.js` (`convertMessages`, `buildParams`,
//! `detectCompat`/`getCompat`).
//!
//! Rules: the system prompt first (`developer` for a reasoning model whose
//! compat allows it, else `system`); tool-call ids with `|` keep the part
//! before it (sanitised, at most 40 chars), provider `openai` truncates to
//! 40; user text parts and `image_url` data URLs; assistant text joined into
//! one string, thinking dropped (or sent as text with
//! `requiresThinkingAsText`), tool-call-only turns `content: null` (`""` with
//! `requiresAssistantAfterToolResult`), empty turns skipped; tool results as
//! `role: tool` with text only and their pictures in one user turn after the
//! run; `tools: []` when the history has tool calls and the caller gave no
//! tools; Anthropic cache markers for OpenRouter's `anthropic/*` models;
//! reasoning keys by the compat's `thinkingFormat`.

use pi_session_types::js::object;
use pi_session_types::view::{BlockRef, MessageRef};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::registry::Model;
use super::transform::{
    DEMOTED, Rules, block_type, blocks, is_blank, marked_text, omp_demoted_thinking, str_field,
    tool_result_text, transform_messages_with, user_parts,
};
use super::{PiAi, RequestOptions, to_object};

/// The session-decided part of a Chat Completions body, in pi-ai's key order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ChatRequest {
    /// `messages`.
    pub messages: Vec<Value>,
    /// `tools: []` (pi-ai sends it when the history has tool calls and no tools were given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Value>>,
    /// z.ai / qwen `enable_thinking`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_thinking: Option<bool>,
    /// qwen chat-template `chat_template_kwargs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<Value>,
    /// DeepSeek `thinking`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Value>,
    /// `reasoning_effort`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<Value>,
    /// OpenRouter `reasoning`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Value>,
}

impl ChatRequest {
    /// The JSON object.
    pub fn to_value(&self) -> Value {
        to_object(self)
    }
}

/// pi's resolved Chat Completions compat flags (those the session part uses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compat {
    /// `supportsDeveloperRole`.
    pub supports_developer_role: bool,
    /// `supportsReasoningEffort`.
    pub supports_reasoning_effort: bool,
    /// `requiresToolResultName`.
    pub requires_tool_result_name: bool,
    /// `requiresAssistantAfterToolResult`.
    pub requires_assistant_after_tool_result: bool,
    /// `requiresThinkingAsText`.
    pub requires_thinking_as_text: bool,
    /// `requiresReasoningContentOnAssistantMessages`.
    pub requires_reasoning_content: bool,
    /// `thinkingFormat`.
    pub thinking_format: String,
    /// `cacheControlFormat === "anthropic"`.
    pub anthropic_cache_control: bool,
}

/// pi's `getCompat(model)`: detected from provider and base URL, overridden by `model.compat`.
pub fn compat(model: &Model) -> Compat {
    let provider = model.provider.as_str();
    let url = model.base_url.as_str();
    let zai = provider == "zai" || url.contains("api.z.ai");
    let moonshot =
        provider == "moonshotai" || provider == "moonshotai-cn" || url.contains("api.moonshot.");
    let workers = provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
    let gateway = provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
    let non_standard = provider == "cerebras"
        || url.contains("cerebras.ai")
        || provider == "xai"
        || url.contains("api.x.ai")
        || url.contains("chutes.ai")
        || url.contains("deepseek.com")
        || zai
        || moonshot
        || provider == "opencode"
        || url.contains("opencode.ai")
        || workers
        || gateway;
    let grok = provider == "xai" || url.contains("api.x.ai");
    let deepseek = provider == "deepseek" || url.contains("deepseek.com");
    let detected_format = if deepseek {
        "deepseek"
    } else if zai {
        "zai"
    } else if provider == "openrouter" || url.contains("openrouter.ai") {
        "openrouter"
    } else {
        "openai"
    };
    let detected_cache = provider == "openrouter" && model.id.starts_with("anthropic/");
    let flag = |key: &str, detected: bool| model.compat_bool(key).unwrap_or(detected);
    Compat {
        supports_developer_role: flag("supportsDeveloperRole", !non_standard),
        supports_reasoning_effort: flag(
            "supportsReasoningEffort",
            !grok && !zai && !moonshot && !gateway,
        ),
        requires_tool_result_name: flag("requiresToolResultName", false),
        requires_assistant_after_tool_result: flag("requiresAssistantAfterToolResult", false),
        requires_thinking_as_text: flag("requiresThinkingAsText", false),
        requires_reasoning_content: flag("requiresReasoningContentOnAssistantMessages", deepseek),
        thinking_format: model
            .compat_str("thinkingFormat")
            .unwrap_or(detected_format)
            .to_owned(),
        anthropic_cache_control: match model.compat_str("cacheControlFormat") {
            Some(format) => format == "anthropic",
            None => detected_cache,
        },
    }
}

/// The levels pi-ai knows, lowest first (`EXTENDED_THINKING_LEVELS`).
pub const THINKING_LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/// pi's `clampThinkingLevel(model, level)`.
pub fn clamp_thinking_level(model: &Model, level: &str) -> String {
    let map = model.thinking_level_map.as_ref();
    let available: Vec<&str> = if model.reasoning {
        THINKING_LEVELS
            .into_iter()
            .filter(|l| match map.and_then(|m| m.get(*l)) {
                Some(Value::Null) => false,
                mapped => *l != "xhigh" || mapped.is_some(),
            })
            .collect()
    } else {
        vec!["off"]
    };
    if available.contains(&level) {
        return level.to_owned();
    }
    let first = available.first().copied().unwrap_or("off").to_owned();
    let Some(index) = THINKING_LEVELS.iter().position(|l| *l == level) else {
        return first;
    };
    THINKING_LEVELS[index..]
        .iter()
        .chain(THINKING_LEVELS[..index].iter().rev())
        .find(|l| available.contains(l))
        .map_or(first, |l| (*l).to_owned())
}

/// The effort pi's `streamSimple*` hands the provider: the clamped level, `None` when off.
pub fn reasoning_effort(model: &Model, options: &RequestOptions) -> Option<String> {
    let level = options.thinking_level.as_str();
    if level.is_empty() || level == "off" {
        return None;
    }
    Some(clamp_thinking_level(model, level)).filter(|l| l != "off")
}

/// `model.thinkingLevelMap?.[level]`.
pub fn mapped_level<'a>(model: &'a Model, level: &str) -> Option<&'a Value> {
    model.thinking_level_map.as_ref().and_then(|m| m.get(level))
}

/// The Chat Completions request pi-ai builds.
pub fn request(
    messages: &[Value],
    model: &Model,
    pi_ai: PiAi,
    options: &RequestOptions,
) -> ChatRequest {
    let compat = compat(model);
    let mut out = ChatRequest {
        messages: convert_messages(messages, model, &compat, options, pi_ai == PiAi::Omp),
        ..ChatRequest::default()
    };
    if has_tool_history(messages) {
        out.tools = Some(Vec::new());
    }
    if compat.anthropic_cache_control {
        apply_cache_control(&mut out.messages);
    }
    let effort = reasoning_effort(model, options);
    let effort_value = |effort: &str| {
        mapped_level(model, effort)
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or_else(|| json!(effort))
    };
    match compat.thinking_format.as_str() {
        "zai" | "qwen" if model.reasoning => out.enable_thinking = Some(effort.is_some()),
        "qwen-chat-template" if model.reasoning => {
            out.chat_template_kwargs =
                Some(json!({"enable_thinking": effort.is_some(), "preserve_thinking": true}));
        }
        "deepseek" if model.reasoning => {
            out.thinking = Some(json!({"type": if effort.is_some() {"enabled"} else {"disabled"}}));
            out.reasoning_effort = effort.as_deref().map(effort_value);
        }
        "openrouter" if model.reasoning => {
            if let Some(effort) = &effort {
                out.reasoning = Some(json!({"effort": effort_value(effort)}));
            } else {
                match mapped_level(model, "off") {
                    Some(Value::Null) => {}
                    Some(off) => out.reasoning = Some(json!({"effort": off})),
                    None => out.reasoning = Some(json!({"effort": "none"})),
                }
            }
        }
        _ if model.reasoning && compat.supports_reasoning_effort => match &effort {
            Some(effort) => out.reasoning_effort = Some(effort_value(effort)),
            None => {
                if let Some(off @ Value::String(_)) = mapped_level(model, "off") {
                    out.reasoning_effort = Some(off.clone());
                }
            }
        },
        _ => {}
    }
    out
}

fn has_tool_history(messages: &[Value]) -> bool {
    messages.iter().any(|m| match MessageRef::new(m).role() {
        Some("toolResult") => true,
        Some("assistant") => blocks(m).iter().any(|b| block_type(b) == Some("toolCall")),
        _ => false,
    })
}

/// pi's Chat Completions tool-call id rule.
fn normalize_id(id: &str, model: &Model) -> String {
    if let Some((call_id, _)) = id.split_once('|') {
        return sanitize(call_id).chars().take(40).collect();
    }
    if model.provider == "openai" && pi_session_types::js::utf16_len(id) > 40 {
        return js_slice(id, 40);
    }
    id.to_owned()
}

/// `[^a-zA-Z0-9_-]` → `_` (per UTF-16 unit, as the JavaScript regex does).
pub fn sanitize(id: &str) -> String {
    id.chars()
        .flat_map(|c| {
            let units = if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                0
            } else {
                pi_session_types::js::char_utf16_len(c)
            };
            let keep = (units == 0).then_some(c);
            keep.into_iter().chain(std::iter::repeat_n('_', units))
        })
        .collect()
}

/// `text.slice(0, n)` counted in UTF-16 units: a pair cut in two keeps its first half, a
/// lone surrogate (`pi_session_types::js::slice`).
pub fn js_slice(text: &str, n: usize) -> String {
    pi_session_types::js::slice(text, 0, n)
}

fn data_url(block: &Value) -> Value {
    json!({
        "type": "image_url",
        "image_url": {"url": format!("data:{};base64,{}",
            pi_session_types::js::string_of(BlockRef::new(block).mime_type()),
            pi_session_types::js::string_of(BlockRef::new(block).data()))},
    })
}

/// `omp`: omp 18.2.3's departures reproduced so far: `developer` messages sent
/// as `developer` (or `user` without the compat's developer role), blank user
/// text dropped, thinking from other models demoted into the target's
/// thinking dialect, `content: ""` on tool-call turns.
fn convert_messages(
    messages: &[Value],
    model: &Model,
    compat: &Compat,
    options: &RequestOptions,
    omp: bool,
) -> Vec<Value> {
    let normalize = |id: &str, _source: &Value| normalize_id(id, model);
    let rules = if omp {
        Rules {
            developer_closes_calls: true,
            demote: Some(omp_demoted_thinking),
            omp_pairing: true,
        }
    } else {
        Rules::default()
    };
    let transformed = transform_messages_with(messages, model, Some(&normalize), rules);
    let mut params = Vec::new();
    if let Some(system) = options.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if model.reasoning && compat.supports_developer_role {
            "developer"
        } else {
            "system"
        };
        params.push(json!({"role": role, "content": system}));
    }
    let mut last_role: Option<&str> = None;
    let mut i = 0;
    while i < transformed.len() {
        let message = &transformed[i];
        let role = MessageRef::new(message).role();
        if compat.requires_assistant_after_tool_result
            && last_role == Some("toolResult")
            && role == Some("user")
        {
            params.push(
                json!({"role": "assistant", "content": "I have processed the tool results."}),
            );
        }
        match role {
            Some("developer") if omp => {
                let role = if compat.supports_developer_role {
                    "developer"
                } else {
                    "user"
                };
                if let Some(turn) = omp_user_turn(message, role) {
                    params.push(turn);
                }
            }
            Some("user") if omp => {
                if let Some(turn) = omp_user_turn(message, "user") {
                    params.push(turn);
                }
            }
            Some("user") => match MessageRef::new(message).content() {
                Some(Value::String(text)) => params.push(json!({"role": "user", "content": text})),
                _ => {
                    let content = user_parts(message, "text", data_url);
                    if content.is_empty() {
                        i += 1;
                        continue;
                    }
                    params.push(json!({"role": "user", "content": content}));
                }
            },
            Some("assistant") => {
                if let Some(converted) = convert_assistant(message, model, compat, omp) {
                    params.push(converted);
                } else {
                    i += 1;
                    continue;
                }
            }
            Some("toolResult") => {
                let mut images = Vec::new();
                let mut j = i;
                while j < transformed.len()
                    && MessageRef::new(&transformed[j]).role() == Some("toolResult")
                {
                    let tool = &transformed[j];
                    let text = tool_result_text(tool);
                    let has_images = blocks(tool).iter().any(|b| block_type(b) == Some("image"));
                    let mut result = Map::new();
                    result.insert("role".into(), json!("tool"));
                    result.insert(
                        "content".into(),
                        json!(if text.is_empty() {
                            "(see attached image)".to_owned()
                        } else {
                            text
                        }),
                    );
                    result.insert(
                        "tool_call_id".into(),
                        MessageRef::new(tool)
                            .tool_call_id()
                            .cloned()
                            .unwrap_or(Value::Null),
                    );
                    if compat.requires_tool_result_name
                        && let Some(name) = MessageRef::new(tool)
                            .tool_name()
                            .filter(|n| super::transform::truthy(Some(n)))
                    {
                        result.insert("name".into(), name.clone());
                    }
                    params.push(Value::Object(result));
                    if has_images && model.takes_images() {
                        images.extend(
                            blocks(tool)
                                .iter()
                                .filter(|b| block_type(b) == Some("image"))
                                .map(data_url),
                        );
                    }
                    j += 1;
                }
                i = j;
                if images.is_empty() {
                    last_role = Some("toolResult");
                } else {
                    if compat.requires_assistant_after_tool_result {
                        params.push(json!({"role": "assistant", "content": "I have processed the tool results."}));
                    }
                    let mut content = vec![
                        json!({"type": "text", "text": "Attached image(s) from tool result:"}),
                    ];
                    content.extend(images);
                    params.push(json!({"role": "user", "content": content}));
                    last_role = Some("user");
                }
                continue;
            }
            _ => {}
        }
        last_role = role;
        i += 1;
    }
    params
}

/// omp's user/developer turn: blank string or text parts dropped; an array
/// turn is always sent as `user` (omp's encoder keeps the developer role only
/// for string content).
fn omp_user_turn(message: &Value, role: &str) -> Option<Value> {
    match MessageRef::new(message).content() {
        Some(Value::String(text)) => {
            (!is_blank(text)).then(|| json!({"role": role, "content": text}))
        }
        _ => {
            let content: Vec<Value> = user_parts(message, "text", data_url)
                .into_iter()
                .filter(|p| {
                    block_type(p) != Some("text")
                        || !BlockRef::new(p).text_str().is_none_or(is_blank)
                })
                .collect();
            (!content.is_empty()).then(|| json!({"role": "user", "content": content}))
        }
    }
}

fn convert_assistant(message: &Value, model: &Model, compat: &Compat, omp: bool) -> Option<Value> {
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert(
        "content".into(),
        if compat.requires_assistant_after_tool_result {
            json!("")
        } else {
            Value::Null
        },
    );
    let text_blocks: Vec<&Value> = blocks(message)
        .iter()
        .filter(|b| block_type(b) == Some("text"))
        .filter(|b| BlockRef::new(b).text_str().is_some_and(|t| !is_blank(t)))
        .collect();
    let texts: Vec<&str> = text_blocks
        .iter()
        .filter_map(|b| BlockRef::new(b).text_str())
        .collect();
    // omp puts a line break after demoted thinking that another block follows.
    let joined: String = text_blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let text = BlockRef::new(b).text_str().unwrap_or("");
            if b.get(DEMOTED).is_some() && i + 1 < text_blocks.len() {
                format!("{text}\n")
            } else {
                text.to_owned()
            }
        })
        .collect();
    let thinking: Vec<&Value> = blocks(message)
        .iter()
        .filter(|b| block_type(b) == Some("thinking"))
        .filter(|b| {
            BlockRef::new(b)
                .thinking_str()
                .is_some_and(|t| !is_blank(t))
        })
        .collect();
    if !thinking.is_empty() {
        if compat.requires_thinking_as_text {
            let text = thinking
                .iter()
                .filter_map(|b| BlockRef::new(b).thinking_str())
                .collect::<Vec<_>>()
                .join("\n\n");
            let mut content = vec![json!({"type": "text", "text": text})];
            content.extend(texts.iter().map(|t| json!({"type": "text", "text": t})));
            out.insert("content".into(), Value::Array(content));
        } else {
            if !joined.is_empty() {
                out.insert("content".into(), json!(joined));
            }
            if let Some(signature) = BlockRef::new(thinking[0])
                .thinking_signature_str()
                .filter(|s| !s.is_empty())
            {
                let text = thinking
                    .iter()
                    .filter_map(|b| BlockRef::new(b).thinking_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                out.insert(signature.to_owned(), json!(text));
            }
        }
    } else if !joined.is_empty() {
        out.insert("content".into(), json!(joined));
    }
    let calls: Vec<&Value> = blocks(message)
        .iter()
        .filter(|b| block_type(b) == Some("toolCall"))
        .collect();
    if !calls.is_empty() {
        let tool_calls: Vec<Value> = calls
            .iter()
            .map(|call| {
                let function = object([
                    ("name", BlockRef::new(call).name().cloned()),
                    (
                        "arguments",
                        BlockRef::new(call).arguments().map(stringify_arguments),
                    ),
                ]);
                object([
                    ("id", BlockRef::new(call).id().cloned()),
                    ("type", Some(json!("function"))),
                    ("function", Some(function)),
                ])
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(tool_calls));
        let details: Vec<Value> = calls
            .iter()
            .filter_map(|c| {
                BlockRef::new(c)
                    .thought_signature_str()
                    .filter(|s| !s.is_empty())
            })
            .filter_map(|s| serde_json::from_str::<Value>(s).ok())
            .filter(|v| super::transform::truthy(Some(v)))
            .collect();
        if !details.is_empty() {
            out.insert("reasoning_details".into(), Value::Array(details));
        }
    }
    if compat.requires_reasoning_content
        && model.reasoning
        && !out.contains_key("reasoning_content")
    {
        out.insert("reasoning_content".into(), json!(""));
    }
    // Provider wire JSON (not the session schema): the Chat Completions message built above.
    if omp && out.get("content") == Some(&Value::Null) && out.contains_key("tool_calls") {
        out.insert("content".into(), json!(""));
    }
    let has_content = match out.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        _ => false,
    };
    (has_content || out.contains_key("tool_calls")).then_some(Value::Object(out))
}

/// `JSON.stringify(arguments)` as a JSON string value.
pub fn stringify_arguments(arguments: &Value) -> Value {
    json!(pi_session_types::json::to_js_string(arguments).unwrap_or_default())
}

/// pi's `applyAnthropicCacheControl` on the messages (system prompt and last
/// conversation turn; tools are the caller's).
fn apply_cache_control(messages: &mut [Value]) {
    let marker = json!({"type": "ephemeral"});
    if let Some(system) = messages
        .iter_mut()
        // Provider wire JSON (not the session schema): Chat Completions messages.
        .find(|m| matches!(str_field(m, "role"), Some("system" | "developer")))
    {
        mark_text(system, &marker);
    }
    for message in messages.iter_mut().rev() {
        if matches!(str_field(message, "role"), Some("user" | "assistant"))
            && mark_text(message, &marker)
        {
            return;
        }
    }
}

fn mark_text(message: &mut Value, marker: &Value) -> bool {
    let Some(map) = message.as_object_mut() else {
        return false;
    };
    // Provider wire JSON (not the session schema): a Chat Completions message.
    match map.get_mut("content") {
        Some(Value::String(text)) => {
            if text.is_empty() {
                return false;
            }
            let content = marked_text(text, marker);
            map.insert("content".into(), content);
            true
        }
        Some(Value::Array(parts)) => {
            for part in parts.iter_mut().rev() {
                if block_type(part) == Some("text")
                    && let Some(p) = part.as_object_mut()
                {
                    p.insert("cache_control".into(), marker.clone());
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}
