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

use pi_session_types::view::{BlockRef, MessageRef};
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
    MessageRef::new(message).provider_str() == Some(model.provider.as_str())
        && MessageRef::new(message).api_str() == Some(model.api.as_str())
        && MessageRef::new(message).model_str() == Some(model.id.as_str())
}

/// A string field of an object.
pub fn str_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The `type` of a content block.
pub fn block_type(block: &Value) -> Option<&str> {
    BlockRef::new(block).kind()
}

/// A message's content blocks (an empty slice for string or missing content).
pub fn blocks(message: &Value) -> &[Value] {
    MessageRef::new(message).block_values()
}

/// `text.trim() === ""` with JavaScript's whitespace set.
pub fn is_blank(text: &str) -> bool {
    pi_session_types::js::trim(text).is_empty()
}

/// Where omp's pi-ai departs from pi's in this pass (the parts reproduced so far).
#[derive(Debug, Clone, Copy, Default)]
pub struct Rules {
    /// `developer` messages close a tool-call window like user messages (omp).
    pub developer_closes_calls: bool,
    /// Thinking from another model becomes text wrapped in the target model's
    /// thinking dialect, marked with [`DEMOTED`] (omp's `renderDemotedThinking`);
    /// `None`: bare text (pi).
    pub demote: Option<fn(&str, &str) -> String>,
    /// omp's result pairing ([`omp_pair_results`]) instead of pi's.
    pub omp_pairing: bool,
}

/// The key marking a text block made from demoted thinking (never serialised:
/// the converters build their own blocks).
pub const DEMOTED: &str = "\u{0}demoted";

/// The key marking a `user` message omp's pairing made up (the
/// `<stale-tool-result>` note; omp's `kSyntheticUser`), never serialised.
pub const SYNTHETIC_USER: &str = "\u{0}syntheticUser";

/// omp's `renderDemotedThinking(modelId, text)` for the dialects reproduced:
/// Claude models get bare text, Gemini a ```` ```thinking ```` fence, OpenAI
/// and gpt-oss models `<think>`, every other model (omp's fallback `xml`
/// dialect) `<thinking>`.
pub fn omp_demoted_thinking(model_id: &str, text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let id = model_id.to_lowercase();
    if id.contains("claude") {
        text.to_owned()
    } else if id.contains("gemini") {
        format!("```thinking\n{text}\n```")
    } else if id.starts_with("gpt")
        || id.contains("gpt-oss")
        || id.starts_with('o') && id[1..].starts_with(char::is_numeric)
    {
        format!("<think>\n{text}\n</think>")
    } else {
        format!("<thinking>\n{text}\n</thinking>")
    }
}

/// Runs the first pass. `normalize_id(id, source_assistant)` is the API's
/// tool-call id rule, applied to calls from other models only (pi); `None`
/// keeps every id.
pub fn transform_messages(
    messages: &[Value],
    model: &Model,
    normalize_id: Option<NormalizeId<'_>>,
) -> Vec<Value> {
    transform_messages_with(messages, model, normalize_id, Rules::default())
}

/// [`transform_messages`] with omp's departures from pi's rules.
pub fn transform_messages_with(
    messages: &[Value],
    model: &Model,
    normalize_id: Option<NormalizeId<'_>>,
    rules: Rules,
) -> Vec<Value> {
    let mut id_map: Map<String, Value> = Map::new();
    // omp: Responses composite ids (`call|item`) renamed for another API, by
    // their call part, so a result whose item part differs still follows.
    let mut composite: Map<String, Value> = Map::new();
    let images_ok = model.takes_images();
    let transformed: Vec<Value> = messages
        .iter()
        .map(|message| {
            let message = if images_ok {
                message.clone()
            } else {
                downgrade_images(message)
            };
            match MessageRef::new(&message).role() {
                Some("toolResult") => {
                    let mapped = MessageRef::new(&message).tool_call_id_str().and_then(|id| {
                        id_map.get(id).cloned().or_else(|| {
                            (rules.omp_pairing && id.contains('|'))
                                .then(|| composite.get(responses_call_component(id)).cloned())
                                .flatten()
                        })
                    });
                    match mapped {
                        Some(new_id)
                            if Some(&new_id) != MessageRef::new(&message).tool_call_id() =>
                        {
                            let mut out = message;
                            if let Some(map) = out.as_object_mut() {
                                map.insert("toolCallId".into(), new_id);
                            }
                            out
                        }
                        _ => message,
                    }
                }
                Some("assistant") => transform_assistant(
                    message,
                    model,
                    normalize_id,
                    rules,
                    &mut id_map,
                    &mut composite,
                ),
                _ => message,
            }
        })
        .collect();
    if rules.omp_pairing {
        return omp_pair_results(transformed);
    }
    insert_synthetic_results(transformed, rules)
}

/// A synthetic error result for `call` with `text`.
fn synthetic_result(call: &Value, text: &str) -> Value {
    pi_session_types::js::object([
        ("role", Some(json!("toolResult"))),
        (
            "toolCallId",
            Some(BlockRef::new(call).id().cloned().unwrap_or(Value::Null)),
        ),
        ("toolName", BlockRef::new(call).name().cloned()),
        ("content", Some(json!([{"type": "text", "text": text}]))),
        ("isError", Some(json!(true))),
    ])
}

fn tool_calls(message: &Value) -> Vec<Value> {
    blocks(message)
        .iter()
        .filter(|b| block_type(b) == Some("toolCall"))
        .cloned()
        .collect()
}

fn id_of<'a>(value: &'a Value, key: &str) -> &'a str {
    str_field(value, key).unwrap_or("")
}

/// omp 18.2.3's second pass (`transformMessages`): every surviving tool call is
/// followed by exactly one result. Errored/aborted turns are kept, their
/// unanswered calls get an `aborted` result; truncated thinking-only turns are
/// dropped; a result whose call is in the open window is sent, a missing one
/// is pulled from later in the history or made up (`No result provided`); a
/// result whose call is nowhere becomes a `<stale-tool-result>` user note (or
/// is dropped while a window is open); any other stray result is dropped.
/// Composite Responses ids and duplicate ids are paired by their raw value.
pub fn omp_pair_results(transformed: Vec<Value>) -> Vec<Value> {
    let mut pairing = OmpPairing::new(&transformed);
    for (index, message) in transformed.iter().enumerate() {
        match MessageRef::new(message).role() {
            Some("assistant") => {
                pairing.close_windows();
                let stop = MessageRef::new(message).stop_reason();
                let truncated = matches!(stop, Some("length" | "error" | "aborted"));
                let actionable = blocks(message).iter().any(|b| {
                    block_type(b) == Some("toolCall")
                        || (block_type(b) == Some("text") && b.get(DEMOTED).is_none())
                });
                if truncated && !actionable {
                    continue;
                }
                let calls = tool_calls(message);
                pairing.result.push(message.clone());
                if matches!(stop, Some("error" | "aborted")) {
                    pairing.aborted = Some((calls, index));
                } else if !calls.is_empty() {
                    pairing.pending = (calls, index);
                }
            }
            Some("toolResult") => pairing.tool_result(message),
            _ => {
                pairing.close_windows();
                pairing.result.push(message.clone());
            }
        }
    }
    pairing.close_windows();
    pairing.result
}

/// The state of [`omp_pair_results`]: the open windows of calls (the normal
/// one and an errored turn's), which calls have their one result, and the real
/// results by call id (position, taken).
struct OmpPairing<'a> {
    transformed: &'a [Value],
    results_by_id: std::collections::HashMap<String, Vec<(usize, bool)>>,
    valid: std::collections::HashSet<String>,
    resolved: std::collections::HashSet<String>,
    pending: (Vec<Value>, usize),
    aborted: Option<(Vec<Value>, usize)>,
    result: Vec<Value>,
}

impl<'a> OmpPairing<'a> {
    fn new(transformed: &'a [Value]) -> Self {
        let mut results_by_id: std::collections::HashMap<String, Vec<(usize, bool)>> =
            std::collections::HashMap::new();
        for (index, message) in transformed.iter().enumerate() {
            if MessageRef::new(message).role() == Some("toolResult") {
                results_by_id
                    .entry(id_of(message, "toolCallId").to_owned())
                    .or_default()
                    .push((index, false));
            }
        }
        let valid = transformed
            .iter()
            .filter(|m| MessageRef::new(m).role() == Some("assistant"))
            .flat_map(tool_calls)
            .map(|c| id_of(&c, "id").to_owned())
            .collect();
        OmpPairing {
            transformed,
            results_by_id,
            valid,
            resolved: std::collections::HashSet::new(),
            pending: (Vec::new(), 0),
            aborted: None,
            result: Vec::new(),
        }
    }

    /// Answers every call of both windows: the earliest untaken real result
    /// after the call's turn, else a synthetic one.
    fn close_windows(&mut self) {
        let (pending, after) = std::mem::take(&mut self.pending);
        self.answer(pending, after, NO_RESULT_TEXT);
        if let Some((aborted, after)) = self.aborted.take() {
            self.answer(aborted, after, "aborted");
        }
    }

    fn answer(&mut self, calls: Vec<Value>, after: usize, text: &str) {
        for call in calls {
            let id = id_of(&call, "id").to_owned();
            if self.resolved.contains(&id) {
                continue;
            }
            let real = self.results_by_id.get_mut(&id).and_then(|entries| {
                let entry = entries
                    .iter_mut()
                    .find(|(index, taken)| !*taken && *index > after)?;
                entry.1 = true;
                Some(entry.0)
            });
            self.result.push(match real {
                Some(index) => self.transformed[index].clone(),
                None => synthetic_result(&call, text),
            });
            self.resolved.insert(id);
        }
    }

    fn tool_result(&mut self, message: &Value) {
        let id = id_of(message, "toolCallId").to_owned();
        if self.resolved.contains(&id) {
            return;
        }
        let in_aborted = self
            .aborted
            .as_mut()
            .and_then(|(calls, _)| {
                let at = calls.iter().position(|c| id_of(c, "id") == id)?;
                calls.remove(at);
                Some(())
            })
            .is_some();
        if in_aborted || self.pending.0.iter().any(|c| id_of(c, "id") == id) {
            self.resolved.insert(id);
            self.result.push(message.clone());
            return;
        }
        if self.valid.contains(&id) {
            return; // its call is elsewhere: pulled into that call's window instead
        }
        let window_open = self
            .pending
            .0
            .iter()
            .any(|c| !self.resolved.contains(id_of(c, "id")))
            || self
                .aborted
                .as_ref()
                .is_some_and(|(calls, _)| !calls.is_empty());
        if window_open {
            return;
        }
        let texts: Vec<&str> = blocks(message)
            .iter()
            .filter(|b| block_type(b) == Some("text"))
            .filter_map(|b| BlockRef::new(b).text_str())
            .filter(|t| !is_blank(t))
            .collect();
        if texts.is_empty() {
            return;
        }
        let error = if truthy(MessageRef::new(message).is_error()) {
            " is-error=\"true\""
        } else {
            ""
        };
        let tool = pi_session_types::js::string_of(MessageRef::new(message).tool_name());
        self.result.push(json!({
            "role": "user",
            SYNTHETIC_USER: true,
            "content": format!("<stale-tool-result tool=\"{tool}\" id=\"{id}\"{error}>\n{}\n</stale-tool-result>", texts.join("\n")),
        }));
    }
}

fn transform_assistant(
    message: Value,
    model: &Model,
    normalize_id: Option<NormalizeId<'_>>,
    rules: Rules,
    id_map: &mut Map<String, Value>,
    composite: &mut Map<String, Value>,
) -> Value {
    let same = is_same_model(&message, model);
    let mut content = Vec::new();
    for block in blocks(&message) {
        match block_type(block) {
            Some("thinking") => {
                if truthy(BlockRef::new(block).redacted()) {
                    if same {
                        content.push(block.clone());
                    }
                    continue;
                }
                if same && truthy(BlockRef::new(block).thinking_signature()) {
                    content.push(block.clone());
                    continue;
                }
                let thinking = BlockRef::new(block).thinking_str().unwrap_or("");
                if thinking.is_empty() || is_blank(thinking) {
                    continue;
                }
                if same {
                    content.push(block.clone());
                } else if let Some(demote) = rules.demote {
                    let mut text = json!({"type": "text", "text": demote(&model.id, thinking)});
                    if let Some(map) = text.as_object_mut() {
                        map.insert(DEMOTED.to_owned(), Value::Bool(true));
                    }
                    content.push(text);
                } else {
                    content.push(json!({"type": "text", "text": BlockRef::new(block).thinking().cloned().unwrap_or(Value::Null)}));
                }
            }
            Some("text") => {
                if same {
                    content.push(block.clone());
                } else {
                    let mut text = Map::new();
                    text.insert("type".into(), json!("text"));
                    if let Some(t) = BlockRef::new(block).text() {
                        text.insert("text".into(), t.clone());
                    }
                    content.push(Value::Object(text));
                }
            }
            Some("toolCall") => {
                let mut call = replayed_call(block, same);
                if !same
                    && let Some(normalize) = normalize_id
                    && let Some(id) = BlockRef::new(block).id_str()
                {
                    let new_id = normalize(id, &message);
                    if rules.omp_pairing && is_responses_family(MessageRef::new(&message).api_str())
                    {
                        composite.insert(
                            responses_call_component(id).to_owned(),
                            Value::String(new_id.clone()),
                        );
                    }
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
    if rules.omp_pairing {
        trim_final_demoted(&mut content);
    }
    let mut out = message;
    if let Some(map) = out.as_object_mut() {
        map.insert("content".into(), Value::Array(content));
    }
    out
}

/// omp trims the end of demoted thinking left as a turn's last block
/// (Anthropic rejects a final assistant text ending in whitespace).
pub(super) fn trim_final_demoted(content: &mut [Value]) {
    if let Some(last) = content.last_mut()
        && last.get(DEMOTED).is_some()
        && let Some(text) = BlockRef::new(&*last).text_str()
    {
        let trimmed = pi_session_types::js::trim_end(text).to_owned();
        if let Some(map) = last.as_object_mut() {
            map.insert("text".into(), Value::String(trimmed));
        }
    }
}

/// The APIs whose tool-call ids are `call_id|item_id` composites.
pub(super) fn is_responses_family(api: Option<&str>) -> bool {
    matches!(
        api,
        Some("openai-responses" | "openai-codex-responses" | "azure-openai-responses")
    )
}

/// The call part of a composite id (the whole id when `|` is absent or first).
pub(super) fn responses_call_component(id: &str) -> &str {
    match id.find('|') {
        Some(at) if at > 0 => &id[..at],
        _ => id,
    }
}

fn insert_synthetic_results(transformed: Vec<Value>, rules: Rules) -> Vec<Value> {
    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<Value> = Vec::new();
    let mut answered: Vec<String> = Vec::new();
    let flush = |result: &mut Vec<Value>, pending: &mut Vec<Value>, answered: &mut Vec<String>| {
        for call in pending.drain(..) {
            let id = BlockRef::new(&call).id_str().unwrap_or("");
            if !answered.iter().any(|a| a == id) {
                let mut synthetic = Map::new();
                synthetic.insert("role".into(), json!("toolResult"));
                synthetic.insert(
                    "toolCallId".into(),
                    BlockRef::new(&call).id().cloned().unwrap_or(Value::Null),
                );
                if let Some(name) = BlockRef::new(&call).name() {
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
        match MessageRef::new(&message).role() {
            Some("assistant") => {
                flush(&mut result, &mut pending, &mut answered);
                if matches!(
                    MessageRef::new(&message).stop_reason(),
                    Some("error" | "aborted")
                ) {
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
                if let Some(id) = MessageRef::new(&message).tool_call_id_str() {
                    answered.push(id.to_owned());
                }
                result.push(message);
            }
            Some("user") => {
                flush(&mut result, &mut pending, &mut answered);
                result.push(message);
            }
            Some("developer") if rules.developer_closes_calls => {
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
    let placeholder = match MessageRef::new(message).role() {
        Some("user")
            if MessageRef::new(message)
                .content()
                .is_some_and(Value::is_array) =>
        {
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
        previous_was_placeholder = BlockRef::new(block).text_str() == Some(placeholder);
    }
    result
}

/// A tool result's text blocks joined by `\n` (every API sends tool results this way).
pub fn tool_result_text(message: &Value) -> String {
    blocks(message)
        .iter()
        .filter(|c| block_type(c) == Some("text"))
        .map(|c| pi_session_types::js::string_of(BlockRef::new(c).text()))
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
                json!({"type": text_type, "text": BlockRef::new(item).text().cloned().unwrap_or(Value::Null)})
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

/// A text block as the provider's own `{"type": "text", "text": …}` block (Anthropic's and
/// Chat Completions' shape); `None` for blank text, which neither sends.
pub(crate) fn wire_text_block(block: &Value) -> Option<Value> {
    let text = BlockRef::new(block).text_str().unwrap_or("");
    (!is_blank(text)).then(|| json!({"type": "text", "text": text}))
}

/// A string content as the one text block that carries a prompt-cache `marker` (Anthropic's
/// and Chat Completions' `cache_control`); the string is moved out.
pub(crate) fn marked_text(text: &mut String, marker: &Value) -> Value {
    json!([{"type": "text", "text": std::mem::take(text), "cache_control": marker}])
}

/// A tool call as it is replayed: a `thoughtSignature` made by another model is dropped (pi-ai's
/// `transformMessages`; omp's Anthropic replay does the same).
pub(crate) fn replayed_call(block: &Value, same_model: bool) -> Value {
    let mut call = block.clone();
    if !same_model
        && truthy(BlockRef::new(block).thought_signature())
        && let Some(map) = call.as_object_mut()
    {
        map.remove("thoughtSignature");
    }
    call
}
