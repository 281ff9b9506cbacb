//! Provider request shapes built from req_llm messages (rho-reqllm.md
//! §C.2–C.3): the `messages` array of an OpenAI Chat Completions request and
//! the `{system?, messages}` of an Anthropic Messages request.

use serde_json::{Map, Value, json};

use crate::reqllm::{ContentPart, Message, PartType, Role};

/// The text of the user turn that carries tool-result pictures to OpenAI.
pub const OPENAI_TOOL_IMAGES_TEXT: &str = "Attached image(s) from tool result:";
/// An OpenAI tool result's text when it had only pictures.
pub const OPENAI_SEE_ATTACHED_IMAGE: &str = "(see attached image)";
/// An OpenAI tool result's text when it had neither text nor pictures.
pub const OPENAI_NO_TOOL_OUTPUT: &str = "(no tool output)";
/// pi's bridge turn for OpenAI-compatible servers that need an assistant
/// message between tool results and a user message.
pub const OPENAI_BRIDGE_TEXT: &str = "I have processed the tool results.";

/// Switches for OpenAI-compatible servers (pi's `compat` flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenAiOptions {
    /// Put `"I have processed the tool results."` between tool results and
    /// the user turn that carries their pictures.
    pub assistant_after_tool_result: bool,
    /// Send the tool's `name` on tool messages.
    pub tool_result_name: bool,
}

/// The `messages` array of an OpenAI Chat Completions request.
///
/// A lone text part becomes a plain string; pictures become `image_url` data
/// URIs; PDFs become `file` parts with a data URI; thinking is dropped; an
/// assistant turn with calls and no text sends `content: null`; one with
/// neither is left out. Tool results
/// carry text only: after a run of tool results with pictures, one user turn
/// brings the pictures (pi's convention).
///
/// ```
/// use pi_session_context::providers::{openai_chat_messages, OpenAiOptions};
/// use pi_session_context::reqllm::Message;
/// let out = openai_chat_messages(&[Message::user_text("hi")], OpenAiOptions::default());
/// assert_eq!(out, serde_json::json!([{"role":"user","content":"hi"}]));
/// ```
pub fn openai_chat_messages(messages: &[Message], options: OpenAiOptions) -> Value {
    let mut out = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        if message.role != Role::Tool {
            if !is_empty_assistant(message) {
                out.push(openai_message(message));
            }
            i += 1;
            continue;
        }
        let mut images = Vec::new();
        while i < messages.len() && messages[i].role == Role::Tool {
            let tool = &messages[i];
            let text = tool
                .content
                .iter()
                .filter_map(ContentPart::as_text)
                .collect::<Vec<_>>()
                .join("\n");
            let pictures: Vec<Value> = tool
                .content
                .iter()
                .filter(|p| p.kind == PartType::Image)
                .filter_map(openai_part)
                .collect();
            let text = match (text.is_empty(), pictures.is_empty()) {
                (false, _) => text,
                (true, false) => OPENAI_SEE_ATTACHED_IMAGE.to_owned(),
                (true, true) => OPENAI_NO_TOOL_OUTPUT.to_owned(),
            };
            let mut tool_message = Map::new();
            tool_message.insert("role".into(), "tool".into());
            tool_message.insert("content".into(), text.into());
            tool_message.insert(
                "tool_call_id".into(),
                tool.tool_call_id.clone().unwrap_or_default().into(),
            );
            if options.tool_result_name
                && let Some(name) = &tool.name
            {
                tool_message.insert("name".into(), name.clone().into());
            }
            out.push(Value::Object(tool_message));
            images.extend(pictures);
            i += 1;
        }
        if !images.is_empty() {
            if options.assistant_after_tool_result {
                out.push(json!({"role": "assistant", "content": OPENAI_BRIDGE_TEXT}));
            }
            let mut content = vec![json!({"type": "text", "text": OPENAI_TOOL_IMAGES_TEXT})];
            content.extend(images);
            out.push(json!({"role": "user", "content": content}));
        }
    }
    Value::Array(out)
}

/// An assistant turn with nothing to send: no content part and no call
/// (rho projects whitespace-only replies like that). Both providers reject
/// it, so the adapters leave it out, as pi's provider layer does.
fn is_empty_assistant(message: &Message) -> bool {
    message.role == Role::Assistant
        && message.tool_calls.as_ref().is_none_or(Vec::is_empty)
        && message
            .content
            .iter()
            .all(|p| p.as_text().is_some_and(str::is_empty))
}

fn openai_message(message: &Message) -> Value {
    let parts: Vec<Value> = message.content.iter().filter_map(openai_part).collect();
    let content = match (message.content.as_slice(), parts.is_empty()) {
        ([only], _) if only.kind == PartType::Text => {
            Value::String(only.text.clone().unwrap_or_default())
        }
        (_, true) if message.role == Role::Assistant => Value::Null,
        _ => Value::Array(parts),
    };
    let mut out = Map::new();
    out.insert("role".into(), message.role.as_str().into());
    out.insert("content".into(), content);
    if let Some(calls) = message.tool_calls.as_ref().filter(|c| !c.is_empty()) {
        out.insert(
            "tool_calls".into(),
            Value::Array(calls.iter().map(|c| c.to_canonical_json()).collect()),
        );
    }
    if let Some(id) = &message.tool_call_id {
        out.insert("tool_call_id".into(), id.clone().into());
    }
    if let Some(name) = message.name.as_ref().filter(|n| !n.is_empty()) {
        out.insert("name".into(), name.clone().into());
    }
    Value::Object(out)
}

fn data_uri(part: &ContentPart, default_mime: &str) -> String {
    format!(
        "data:{};base64,{}",
        part.media_type.as_deref().unwrap_or(default_mime),
        part.data_base64().unwrap_or_default()
    )
}

fn openai_part(part: &ContentPart) -> Option<Value> {
    match part.kind {
        PartType::Text => {
            Some(json!({"type": "text", "text": part.text.clone().unwrap_or_default()}))
        }
        PartType::Image => {
            Some(json!({"type": "image_url", "image_url": {"url": data_uri(part, "image/png")}}))
        }
        PartType::ImageUrl => Some(
            json!({"type": "image_url", "image_url": {"url": part.url.clone().unwrap_or_default()}}),
        ),
        PartType::File => Some(json!({"type": "file", "file": {
            "filename": part.filename.clone().unwrap_or_default(),
            "file_data": data_uri(part, "application/octet-stream"),
        }})),
        PartType::Thinking => None,
    }
}

/// The `{system?, messages}` of an Anthropic Messages request.
///
/// System messages go to `system`; empty text parts are dropped; an
/// assistant turn with no content and no calls is left out; a lone
/// text block collapses to a string; tool calls become `tool_use` blocks
/// with their arguments decoded (undecodable arguments give `{}`); tool
/// results become `tool_result` blocks in a user turn, and consecutive tool
/// results share one user turn.
///
/// ```
/// use pi_session_context::providers::anthropic_messages;
/// use pi_session_context::reqllm::Message;
/// let out = anthropic_messages(&[Message::system_text("be brief"), Message::user_text("hi")]);
/// assert_eq!(out, serde_json::json!({"system":"be brief","messages":[{"role":"user","content":"hi"}]}));
/// ```
pub fn anthropic_messages(messages: &[Message]) -> Value {
    let mut system_blocks: Vec<Value> = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    let mut last_was_tool = false;
    for message in messages {
        match message.role {
            Role::System => {
                system_blocks.extend(message.content.iter().filter_map(anthropic_block));
                last_was_tool = false;
            }
            Role::Tool => {
                let block = anthropic_tool_result(message);
                if last_was_tool
                    && let Some(Value::Array(blocks)) =
                        // Provider wire JSON (not the session schema): the Anthropic
                        // message built above.
                        out.last_mut().and_then(|m| m.get_mut("content"))
                {
                    blocks.push(block);
                } else {
                    out.push(json!({"role": "user", "content": [block]}));
                }
                last_was_tool = true;
            }
            Role::Assistant if is_empty_assistant(message) => {}
            Role::User | Role::Assistant => {
                let mut blocks: Vec<Value> =
                    message.content.iter().filter_map(anthropic_block).collect();
                for call in message.tool_calls.iter().flatten() {
                    let input = serde_json::from_str::<Value>(&call.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| Value::Object(Map::new()));
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                out.push(json!({"role": message.role.as_str(), "content": collapse(blocks)}));
                last_was_tool = false;
            }
        }
    }
    let mut request = Map::new();
    if !system_blocks.is_empty() {
        request.insert("system".into(), collapse(system_blocks));
    }
    request.insert("messages".into(), Value::Array(out));
    Value::Object(request)
}

/// A lone plain text block becomes its string; no blocks give `""`.
fn collapse(blocks: Vec<Value>) -> Value {
    match blocks.as_slice() {
        [] => Value::String(String::new()),
        // Provider wire JSON (not the session schema): an Anthropic block.
        [only] if only.get("type").and_then(Value::as_str) == Some("text") => {
            only.get("text").cloned().unwrap_or_default()
        }
        _ => Value::Array(blocks),
    }
}

fn base64_source(part: &ContentPart, default_mime: &str) -> Value {
    json!({
        "type": "base64",
        "media_type": part.media_type.as_deref().unwrap_or(default_mime),
        "data": part.data_base64().unwrap_or_default(),
    })
}

fn anthropic_block(part: &ContentPart) -> Option<Value> {
    match part.kind {
        PartType::Text => {
            let text = part.text.as_deref().unwrap_or_default();
            (!text.is_empty()).then(|| json!({"type": "text", "text": text}))
        }
        PartType::Image => {
            Some(json!({"type": "image", "source": base64_source(part, "image/png")}))
        }
        PartType::ImageUrl => Some(
            json!({"type": "image", "source": {"type": "url", "url": part.url.clone().unwrap_or_default()}}),
        ),
        PartType::File => {
            Some(json!({"type": "document", "source": base64_source(part, "application/pdf")}))
        }
        PartType::Thinking => {
            Some(json!({"type": "thinking", "thinking": part.text.clone().unwrap_or_default()}))
        }
    }
}

fn anthropic_tool_result(message: &Message) -> Value {
    let blocks: Vec<Value> = message.content.iter().filter_map(anthropic_block).collect();
    let mut block = Map::new();
    block.insert("type".into(), "tool_result".into());
    block.insert(
        "tool_use_id".into(),
        message.tool_call_id.clone().unwrap_or_default().into(),
    );
    block.insert("content".into(), collapse(blocks));
    if message.metadata.get("is_error") == Some(&Value::Bool(true)) {
        block.insert("is_error".into(), true.into());
    }
    Value::Object(block)
}
