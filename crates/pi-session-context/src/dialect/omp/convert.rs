//! omp's `convertToLlm` (omp 18.2.3's `pi-coding-agent/src/session/messages.ts` with
//! pi-agent-core's `convertMessageToLlm`): `custom` becomes `developer`, bash/python runs get
//! omp's wording, file mentions are split by pictures, summaries go through omp's templates
//! and post-render normalisation, attribution defaults are filled in, pruned tool results are
//! collapsed and interrupted thinking is stripped; and the steps of omp's agent loop around
//! it (steering wrapper, image gate, provider-replay filter).
//!
//! Messages are JSON objects, so that everything the real function passes
//! through (every key, in order) is passed through here too, and the output
//! serialises to the JSON the real function returns. A missing key plays
//! JavaScript's `undefined` (left out of the output, as `JSON.stringify` does).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::output_notice::format_output_notice;
use super::prompt::{
    BRANCH_SUMMARY_TEMPLATE, COMPACTION_SUMMARY_TEMPLATE, HANDOFF_SUMMARY_TEMPLATE,
    USER_INTERJECTION_TEMPLATE,
};
use crate::dialect::run_text::{
    PYTHON_WORDING, bash_text_head, run_outcome_text, string_to_blocks,
};
use crate::dialect::{ConvertToLlm, Dialect, Passed, llm_message};
use crate::provider_request::PiAi;
use pi_session_tree::dialect::omp::prompt::render;
use pi_session_types::js::{as_str, is_nullish, object, string_of, text_block, trim, truthy};
use pi_session_types::shallow::Seen;
use pi_session_types::view::{BlockRef, FileMentionRef, MessageRef, key};

/// omp's `customType` of a collab peer's prompt (steering envelope).
pub const COLLAB_PROMPT_TYPE: &str = "collab-prompt";
/// omp's `customType` of a `/skill:` prompt.
pub const SKILL_PROMPT_TYPE: &str = "skill-prompt";
/// omp's `customType` of the hidden interrupted-thinking continuity message.
pub const INTERRUPTED_THINKING_TYPE: &str = "interrupted-thinking";
/// omp's `errorMessage` of a user interrupt.
pub const USER_INTERRUPT_LABEL: &str = "Interrupted by user";
/// omp's `errorId` flag of a user interrupt.
pub const USER_INTERRUPT_FLAG: i64 = 0x0400_0000;

/// omp's `convertToLlm` of one release.
#[derive(Debug, Clone, Copy)]
pub struct Omp;

impl ConvertToLlm for Omp {
    /// omp strips an assistant's interrupted thinking when an `interrupted-thinking` custom
    /// message follows it.
    fn convert<'a>(&self, message: &'a Value, next: Option<&Value>) -> Vec<Cow<'a, Value>> {
        let interrupted_next = role(message) == Some("assistant") && self.depends_on_next(next);
        omp_convert(message, interrupted_next)
    }

    fn pi_ai(&self) -> Option<PiAi> {
        Some(PiAi::Omp)
    }

    /// An `interrupted-thinking` custom message after an assistant message strips its thinking.
    fn depends_on_next(&self, next: Option<&Value>) -> bool {
        interrupts(next.map(Seen::Value))
    }

    /// The role, and what decides whether a rule touches the message: its attribution, a
    /// tool result's `prunedAt`, an assistant's `stopReason`, the next message's `customType`.
    fn reads(&self) -> &'static [&'static str] {
        &OMP_READS
    }

    /// An assistant message passes as it is unless it was aborted or an
    /// `interrupted-thinking` message follows; a user or developer message, and a tool result
    /// not pruned, get their default attribution added when they hold none (one that holds
    /// `null` is changed in place: not answered).
    fn passes(&self, message: Seen<'_>, next: Option<Seen<'_>>) -> Option<Passed> {
        let attributed = |fallback: &'static str| match message.get(key::ATTRIBUTION) {
            None => Some(Passed::Appended {
                key: key::ATTRIBUTION,
                value: fallback,
            }),
            Some(Value::Null) => None,
            Some(_) => Some(Passed::Unchanged),
        };
        match message.str(key::ROLE)? {
            "assistant" => (message.str(key::STOP_REASON) != Some("aborted") && !interrupts(next))
                .then_some(Passed::Unchanged),
            "user" => attributed("user"),
            "developer" => attributed("agent"),
            "toolResult" if message.get(key::PRUNED_AT).is_none() => attributed("agent"),
            _ => None,
        }
    }
}

/// Whether `next`, the message after an assistant message, is omp's `interrupted-thinking`
/// custom message (which strips the assistant's thinking).
fn interrupts(next: Option<Seen<'_>>) -> bool {
    next.is_some_and(|next| {
        next.str(key::ROLE) == Some("custom")
            && next.str(key::CUSTOM_TYPE) == Some(INTERRUPTED_THINKING_TYPE)
    })
}

/// The keys [`Omp::passes`] reads.
const OMP_READS: [&str; 5] = [
    key::ROLE,
    key::ATTRIBUTION,
    key::PRUNED_AT,
    key::STOP_REASON,
    key::CUSTOM_TYPE,
];

/// The keys [`OmpAgentLoop::passes`] reads: [`OMP_READS`] and a user message's `steering`.
const OMP_AGENT_LOOP_READS: [&str; 6] = [
    key::ROLE,
    key::ATTRIBUTION,
    key::PRUNED_AT,
    key::STOP_REASON,
    key::CUSTOM_TYPE,
    key::STEERING,
];

/// omp's agent loop around its `convertToLlm`, a message at a time: the steering wrapper,
/// [`Omp`]'s conversion, the image gate and the provider-replay filter
/// ([`omp_agent_loop_each`] is this over a list of messages).
#[derive(Debug, Clone, Copy)]
pub struct OmpAgentLoop {
    options: OmpAgentLoopOptions,
}

/// The agent loop with pictures allowed, blocked, and for a model that takes none.
static OMP_AGENT_LOOPS: [OmpAgentLoop; 3] = [
    OmpAgentLoop {
        options: OmpAgentLoopOptions {
            images: OmpImageGate::Allow,
        },
    },
    OmpAgentLoop {
        options: OmpAgentLoopOptions {
            images: OmpImageGate::Blocked,
        },
    },
    OmpAgentLoop {
        options: OmpAgentLoopOptions {
            images: OmpImageGate::ModelWithoutImages,
        },
    },
];

impl OmpAgentLoop {
    /// The agent loop that projects with `options`.
    ///
    /// ```
    /// use pi_session_context::dialect::ConvertToLlm;
    /// use pi_session_context::dialect::omp::convert::OmpAgentLoop;
    /// use pi_session_context::OmpAgentLoopOptions;
    /// use serde_json::json;
    /// let looped = OmpAgentLoop::of(&OmpAgentLoopOptions::default());
    /// let steering = json!({"role":"user","content":"stop","steering":true,"timestamp":1});
    /// let sent = looped.convert(&steering, None);
    /// assert_eq!(sent[0]["attribution"], "user");
    /// assert!(sent[0].get("steering").is_none());
    /// ```
    pub fn of(options: &OmpAgentLoopOptions) -> &'static Self {
        let index = match options.images {
            OmpImageGate::Allow => 0,
            OmpImageGate::Blocked => 1,
            OmpImageGate::ModelWithoutImages => 2,
        };
        &OMP_AGENT_LOOPS[index]
    }
}

impl ConvertToLlm for OmpAgentLoop {
    fn convert<'a>(&self, message: &'a Value, next: Option<&Value>) -> Vec<Cow<'a, Value>> {
        let next = next.map(wrap_steering_one);
        let converted: Vec<Cow<'a, Value>> = match wrap_steering_one(message) {
            Cow::Borrowed(message) => llm_message(message, next.as_deref(), Dialect::OMP),
            Cow::Owned(wrapped) => llm_message(&wrapped, next.as_deref(), Dialect::OMP)
                .into_iter()
                .map(|converted| Cow::Owned(converted.into_owned()))
                .collect(),
        };
        let placeholder = self.options.images.placeholder();
        converted
            .into_iter()
            .map(|converted| match placeholder {
                Some(placeholder) => replace_images_one(converted, placeholder),
                None => converted,
            })
            // `omp_filter_provider_replay` without copying what is kept.
            .filter(|gated| !omp_is_provider_refusal(gated))
            .collect()
    }

    /// [`Omp::depends_on_next`]: the steering wrapper never makes or unmakes an
    /// `interrupted-thinking` message (it wraps a user message, or a peer's `collab-prompt`,
    /// into a user message).
    fn depends_on_next(&self, next: Option<&Value>) -> bool {
        Omp.depends_on_next(next)
    }

    fn reads(&self) -> &'static [&'static str] {
        &OMP_AGENT_LOOP_READS
    }

    /// [`Omp::passes`], but for a steering user message (wrapped), an assistant message
    /// that ended with an error (a refusal is dropped) and, when pictures are gated, a user,
    /// developer or tool result message (its pictures replaced). The next message is read as
    /// it is: the steering wrapper does not change what [`Omp::passes`] reads of it
    /// ([`Self::depends_on_next`]).
    fn passes(&self, message: Seen<'_>, next: Option<Seen<'_>>) -> Option<Passed> {
        let role = message.str(key::ROLE)?;
        let steering = role == "user" && message.get(key::STEERING) == Some(&Value::Bool(true));
        let refusal = role == "assistant" && message.str(key::STOP_REASON) == Some("error");
        let gated = self.options.images.placeholder().is_some()
            && matches!(role, "user" | "developer" | "toolResult");
        if steering || refusal || gated {
            return None;
        }
        Omp.passes(message, next)
    }

    fn pi_ai(&self) -> Option<PiAi> {
        Some(PiAi::Omp)
    }
}

fn role(message: &Value) -> Option<&str> {
    MessageRef::of(message).and_then(MessageRef::role)
}

/// omp's `convertToLlm` of one message: the messages a rule leaves as they are (a user,
/// developer, assistant or tool result message with nothing to add or strip) come back
/// borrowed, every other one is made.
fn omp_convert(message: &Value, interrupted_next: bool) -> Vec<Cow<'_, Value>> {
    let Some(m) = MessageRef::of(message) else {
        return Vec::new();
    };
    match m.role() {
        Some("assistant") => omp_assistant(message, m, interrupted_next),
        Some("user") => vec![with_default(message, "attribution", "user")],
        Some("developer") => vec![with_default(message, "attribution", "agent")],
        Some("toolResult") => {
            let pruned = pruned_tool_result_content(m);
            if pruned.is_none() && !is_nullish(m.attribution()) {
                return vec![Cow::Borrowed(message)];
            }
            let mut out = message.clone();
            if let Some(pruned) = pruned
                && let Some(obj) = out.as_object_mut()
            {
                obj.insert(key::CONTENT.into(), pruned);
            }
            attribute_tool_result(&mut out);
            vec![Cow::Owned(out)]
        }
        _ => omp_convert_made(m).into_iter().map(Cow::Owned).collect(),
    }
}

/// `{...m, attribution: m.attribution ?? "agent"}` of a tool result, in place (an existing
/// key keeps its place): what omp's `convertToLlm` adds to a tool result. Other messages are
/// left as they are.
fn attribute_tool_result(message: &mut Value) {
    let Some(m) = MessageRef::of(message) else {
        return;
    };
    if m.role() != Some("toolResult") || !is_nullish(m.attribution()) {
        return;
    }
    if let Some(obj) = message.as_object_mut() {
        obj.insert("attribution".into(), "agent".into());
    }
}

/// [`omp_convert`] of the messages omp's `convertToLlm` makes anew (every role but user,
/// developer, assistant and tool result).
fn omp_convert_made(m: MessageRef<'_>) -> Vec<Value> {
    let timestamp = m.timestamp().cloned();
    match m.role() {
        Some("bashExecution") => {
            if truthy(m.exclude_from_context()) {
                return Vec::new();
            }
            let mut content = vec![text_block(
                bash_text_head(m) + &format_output_notice(m.meta()),
            )];
            if let Some(Value::Array(images)) = m.images() {
                content.extend(images.iter().cloned());
            }
            vec![object([
                ("role", Some("user".into())),
                ("content", Some(Value::Array(content))),
                ("attribution", Some("user".into())),
                ("timestamp", timestamp),
            ])]
        }
        Some("pythonExecution") => {
            if truthy(m.exclude_from_context()) {
                return Vec::new();
            }
            vec![object([
                ("role", Some("user".into())),
                (
                    "content",
                    Some(Value::Array(vec![text_block(omp_python_text(m))])),
                ),
                ("attribution", Some("user".into())),
                ("timestamp", timestamp),
            ])]
        }
        Some("fileMention") => omp_file_mention(m, timestamp),
        Some("custom") => {
            if !is_custom_content(m.content()) {
                return Vec::new();
            }
            let custom_type = m.custom_type();
            let by_user = m.attribution().and_then(Value::as_str) == Some("user");
            if by_user && custom_type == Some(COLLAB_PROMPT_TYPE) {
                return vec![omp_collab_prompt(m, timestamp)];
            }
            if by_user && custom_type == Some(SKILL_PROMPT_TYPE) {
                return vec![object([
                    ("role", Some("user".into())),
                    ("content", string_to_blocks(m.content())),
                    ("attribution", Some("user".into())),
                    ("timestamp", timestamp),
                ])];
            }
            omp_custom(m, timestamp)
        }
        Some("hookMessage") => {
            if !is_custom_content(m.content()) {
                return Vec::new();
            }
            omp_custom(m, timestamp)
        }
        Some("branchSummary") => vec![object([
            ("role", Some("user".into())),
            (
                "content",
                Some(Value::Array(vec![text_block(render(
                    BRANCH_SUMMARY_TEMPLATE,
                    "summary",
                    &handlebars_text(m.summary()),
                ))])),
            ),
            ("attribution", Some("agent".into())),
            ("historyRewriteAt", timestamp.clone()),
            ("timestamp", timestamp),
        ])],
        Some("compactionSummary") => vec![omp_compaction_summary(m, timestamp)],
        _ => Vec::new(),
    }
}

/// `{...m, key: m.key ?? fallback}`: an existing key keeps its place.
/// Borrowed when the key is set (nothing changes).
fn with_default<'a>(message: &'a Value, key: &str, fallback: &str) -> Cow<'a, Value> {
    if !message
        .as_object()
        .is_some_and(|obj| is_nullish(obj.get(key)))
    {
        return Cow::Borrowed(message);
    }
    let mut out = message.clone();
    if let Some(obj) = out.as_object_mut() {
        obj.insert(key.to_owned(), fallback.into());
    }
    Cow::Owned(out)
}

/// What Handlebars prints for `{{summary}}`: `undefined`/`null` print nothing.
fn handlebars_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        other => string_of(other),
    }
}

/// How `Array.prototype.join` prints an item: `undefined`/`null` print nothing.
/// The text blocks' texts, one a line (omp's `content.filter(text).map(t => t.text).join("\n")`).
fn joined_texts(blocks: &[Value]) -> String {
    let texts: Vec<String> = blocks
        .iter()
        .filter(|b| BlockRef::new(b).is("text"))
        .map(|b| join_item(BlockRef::new(b).text()))
        .collect();
    texts.join("\n")
}

fn join_item(value: Option<&Value>) -> String {
    handlebars_text(value)
}

fn is_custom_content(content: Option<&Value>) -> bool {
    matches!(content, Some(Value::String(_)) | Some(Value::Array(_)))
}

/// `pythonExecutionToText`.
fn omp_python_text(m: MessageRef<'_>) -> String {
    format!("Ran Python:\n```python\n{}\n```\n", string_of(m.code()))
        + &run_outcome_text(m, &PYTHON_WORDING)
        + &format_output_notice(m.meta())
}

fn omp_file_mention(m: MessageRef<'_>, timestamp: Option<Value>) -> Vec<Value> {
    let files: Vec<FileMentionRef<'_>> = match m.files() {
        Some(Value::Array(files)) => files
            .iter()
            .filter_map(Value::as_object)
            .map(FileMentionRef::new)
            .collect(),
        _ => return Vec::new(),
    };
    let wrap = |file: FileMentionRef<'_>| {
        let inner = if truthy(file.content()) {
            format!("\n{}\n", string_of(file.content()))
        } else {
            "\n".to_owned()
        };
        format!("<file path=\"{}\">{inner}</file>", string_of(file.path()))
    };
    let (image_files, text_files): (Vec<_>, Vec<_>) =
        files.into_iter().partition(|f| truthy(f.image()));
    let mut out = Vec::new();
    if !text_files.is_empty() {
        let text = text_files
            .iter()
            .map(|f| wrap(*f))
            .collect::<Vec<_>>()
            .join("\n");
        out.push(object([
            ("role", Some("developer".into())),
            ("content", Some(Value::Array(vec![text_block(text)]))),
            ("attribution", Some("user".into())),
            ("timestamp", timestamp.clone()),
        ]));
    }
    if !image_files.is_empty() {
        let text = image_files
            .iter()
            .map(|f| wrap(*f))
            .collect::<Vec<_>>()
            .join("\n");
        let mut content = vec![text_block(text)];
        content.extend(image_files.iter().filter_map(|f| f.image().cloned()));
        out.push(object([
            ("role", Some("user".into())),
            ("content", Some(Value::Array(content))),
            ("attribution", Some("user".into())),
            ("timestamp", timestamp),
        ]));
    }
    out
}

/// A collab peer's prompt: a `user` message in the steering envelope.
fn omp_collab_prompt(m: MessageRef<'_>, timestamp: Option<Value>) -> Value {
    let content = m.content().cloned();
    let wrapped = match &content {
        Some(Value::String(s)) if !s.is_empty() => Some(Value::String(render(
            USER_INTERJECTION_TEMPLATE,
            "message",
            s,
        ))),
        Some(Value::Array(blocks)) => {
            let text = joined_texts(blocks);
            if text.is_empty() {
                None
            } else {
                let mut out = vec![text_block(render(
                    USER_INTERJECTION_TEMPLATE,
                    "message",
                    &text,
                ))];
                out.extend(
                    blocks
                        .iter()
                        .filter(|b| BlockRef::new(b).is("image"))
                        .cloned(),
                );
                Some(Value::Array(out))
            }
        }
        _ => None,
    };
    object([
        ("role", Some("user".into())),
        ("content", wrapped.or(content)),
        ("attribution", Some("user".into())),
        ("timestamp", timestamp),
    ])
}

/// Custom and hook messages: `developer`, split in two when there are pictures.
fn omp_custom(m: MessageRef<'_>, timestamp: Option<Value>) -> Vec<Value> {
    let attribution = m.attribution().cloned();
    if let Some(Value::Array(blocks)) = m.content() {
        let of_type = |t: &str| -> Vec<Value> {
            blocks
                .iter()
                .filter(|b| BlockRef::new(b).is(t))
                .cloned()
                .collect()
        };
        let images = of_type("image");
        if !images.is_empty() {
            let texts = of_type("text");
            let mut out = Vec::new();
            if !texts.is_empty() {
                out.push(object([
                    ("role", Some("developer".into())),
                    ("content", Some(Value::Array(texts))),
                    ("attribution", attribution.clone()),
                    ("timestamp", timestamp.clone()),
                ]));
            }
            let mut content = vec![text_block(format!(
                "Images attached to {}.",
                string_of(m.map().and_then(|m| m.get(key::CUSTOM_TYPE)))
            ))];
            content.extend(images);
            out.push(object([
                ("role", Some("user".into())),
                ("content", Some(Value::Array(content))),
                ("attribution", attribution),
                ("timestamp", timestamp),
            ]));
            return out;
        }
    }
    vec![object([
        ("role", Some("developer".into())),
        ("content", string_to_blocks(m.content())),
        ("attribution", attribution),
        ("timestamp", timestamp),
    ])]
}

/// Borrowed unless its interrupted thinking is stripped.
fn omp_assistant<'a>(
    message: &'a Value,
    m: MessageRef<'_>,
    interrupted_next: bool,
) -> Vec<Cow<'a, Value>> {
    let user_interrupted = m.stop_reason() == Some("aborted") && is_user_interrupt(m);
    let mut out = Cow::Borrowed(message);
    if (interrupted_next || user_interrupted)
        && let Some(Value::Array(content)) = m.content()
        && let Some(kept) = strip_interrupted_thinking(content)
        && let Some(obj) = out.to_mut().as_object_mut()
    {
        obj.insert(key::CONTENT.into(), Value::Array(kept));
    }
    let empty = match MessageRef::of(&out).and_then(MessageRef::content) {
        Some(Value::Array(blocks)) => blocks.is_empty(),
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    };
    if user_interrupted && !interrupted_next && empty {
        return Vec::new();
    }
    vec![out]
}

fn is_user_interrupt(m: MessageRef<'_>) -> bool {
    let flagged = m
        .error_id()
        .and_then(Value::as_f64)
        .is_some_and(|id| (id as i64) & USER_INTERRUPT_FLAG != 0);
    flagged || as_str(m.error_message()) == Some(USER_INTERRUPT_LABEL)
}

/// `demoteInterruptedThinking(...).strippedContent`: skip trailing
/// whitespace-only text blocks, then cut the content at the start of the
/// trailing run of non-empty unsigned thinking blocks. `None` when there is
/// no such run (the content stays as it is).
fn strip_interrupted_thinking(content: &[Value]) -> Option<Vec<Value>> {
    let mut scan_end = content.len();
    while scan_end > 0 {
        let block = &content[scan_end - 1];
        let blank_text = BlockRef::new(block).is("text")
            && BlockRef::new(block)
                .text_str()
                .is_some_and(|t| trim(t).is_empty());
        if !blank_text {
            break;
        }
        scan_end -= 1;
    }
    let mut run_start = scan_end;
    while run_start > 0 {
        let block = &content[run_start - 1];
        let unsigned_thinking = BlockRef::new(block).is("thinking")
            && BlockRef::new(block)
                .thinking()
                .and_then(Value::as_str)
                .is_some_and(|t| !trim(t).is_empty())
            && !truthy(BlockRef::new(block).thinking_signature());
        if !unsigned_thinking {
            break;
        }
        run_start -= 1;
    }
    (run_start < scan_end).then(|| content[..run_start].to_vec())
}

fn omp_compaction_summary(m: MessageRef<'_>, timestamp: Option<Value>) -> Value {
    let content = match m.summary_blocks() {
        Some(blocks) if !blocks.is_null() => {
            let mut content = vec![text_block(string_of(m.summary()))];
            if let Value::Array(blocks) = blocks {
                content.extend(blocks.iter().cloned());
            }
            content
        }
        _ => {
            let template_text = if as_str(m.method()) == Some("handoff") {
                HANDOFF_SUMMARY_TEMPLATE
            } else {
                COMPACTION_SUMMARY_TEMPLATE
            };
            let mut content = vec![text_block(render(
                template_text,
                "summary",
                &handlebars_text(m.summary()),
            ))];
            if let Some(Value::Array(images)) = m.images() {
                content.extend(images.iter().cloned());
            }
            content
        }
    };
    object([
        ("role", Some("user".into())),
        ("content", Some(Value::Array(content))),
        ("attribution", Some("agent".into())),
        // 18.2.3: always the summary's own timestamp (18.3.4 prefers
        // `historyRewriteAt` when the message carries one).
        ("historyRewriteAt", timestamp.clone()),
        ("providerPayload", m.provider_payload().cloned()),
        ("timestamp", timestamp),
    ])
}

/// pi-agent-core's `getPrunedToolResultContent`: a result with `prunedAt`
/// (anything but `undefined`, so `null` too) keeps its non-text blocks and
/// one text block, where the first one was, holding all texts joined (or
/// `"[Output truncated]"`). `None` when nothing changes.
fn pruned_tool_result_content(m: MessageRef<'_>) -> Option<Value> {
    // Only a pruned result (`prunedAt` present, `null` included) changes.
    m.pruned_at()?;
    let Some(Value::Array(content)) = m.content() else {
        return None;
    };
    let is_text = |b: &Value| BlockRef::new(b).is("text");
    let joined: String = content
        .iter()
        .filter(|b| is_text(b))
        .map(|b| join_item(BlockRef::new(b).text()))
        .collect();
    let text = if joined.is_empty() {
        "[Output truncated]".to_owned()
    } else {
        joined
    };
    let Some(first_text) = content.iter().position(is_text) else {
        let mut out = vec![text_block(text)];
        out.extend(content.iter().cloned());
        return Some(Value::Array(out));
    };
    let mut out = Vec::with_capacity(content.len());
    for (index, block) in content.iter().enumerate() {
        if !is_text(block) {
            out.push(block.clone());
        } else if index == first_text {
            out.push(text_block(text.clone()));
        }
    }
    Some(Value::Array(out))
}

// ─────────────────────── omp's steps around convertToLlm ───────────────────────

/// omp's image-gate text when the setting `images.blockImages` is on.
pub const OMP_IMAGES_BLOCKED: &str = "Image reading is disabled.";
/// omp's image-gate text when the active model takes no pictures.
pub const OMP_IMAGES_UNSUPPORTED: &str =
    "[image omitted: the active model does not support image input]";

/// omp's `wrapSteeringForModel` (part of `transformContext`, run on agent
/// messages before [`llm_messages`](crate::dialect::llm_messages)): every `user` message with
/// `steering: true`, and every collab peer prompt, gets its text wrapped in
/// the user-interjection envelope (pictures kept after it); the `steering`
/// key is dropped. Messages with no text stay as they are.
pub fn omp_wrap_steering(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| wrap_steering_one(m).into_owned())
        .collect()
}

/// [`omp_wrap_steering`] of one message: borrowed when no envelope applies.
fn wrap_steering_one(message: &Value) -> Cow<'_, Value> {
    let Some(m) = MessageRef::of(message) else {
        return Cow::Borrowed(message);
    };
    let is_user = m.role() == Some("user");
    let steering = if is_user {
        m.steering() == Some(&Value::Bool(true))
    } else {
        m.role() == Some("custom")
            && m.custom_type() == Some(COLLAB_PROMPT_TYPE)
            && as_str(m.attribution()) == Some("user")
    };
    if !steering {
        return Cow::Borrowed(message);
    }
    let mut user = if is_user {
        let mut copy = m.map().cloned().unwrap_or_default();
        copy.shift_remove(key::STEERING);
        copy
    } else {
        match object([
            ("role", Some("user".into())),
            ("content", m.content().cloned()),
            ("attribution", Some("user".into())),
            ("timestamp", m.timestamp().cloned()),
        ]) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    };
    let unchanged = |user: Map<String, Value>| {
        if is_user {
            Cow::Borrowed(message)
        } else {
            Cow::Owned(Value::Object(user))
        }
    };
    match m.content() {
        Some(Value::String(s)) if s.is_empty() => unchanged(user),
        Some(Value::String(s)) => {
            user.insert(
                "content".into(),
                render(USER_INTERJECTION_TEMPLATE, "message", s).into(),
            );
            Cow::Owned(Value::Object(user))
        }
        Some(Value::Array(blocks)) => {
            let text = joined_texts(blocks);
            if text.is_empty() {
                return unchanged(user);
            }
            let mut content = vec![text_block(render(
                USER_INTERJECTION_TEMPLATE,
                "message",
                &text,
            ))];
            content.extend(
                blocks
                    .iter()
                    .filter(|b| BlockRef::new(b).is("image"))
                    .cloned(),
            );
            user.insert(key::CONTENT.into(), Value::Array(content));
            Cow::Owned(Value::Object(user))
        }
        _ => unchanged(user),
    }
}

/// omp's `replaceLlmImagesWithText` (the image gate after [`llm_messages`](crate::dialect::llm_messages)):
/// in `user`, `developer` and `toolResult` messages every picture becomes a
/// text block holding `placeholder`, and a picture right after that same
/// placeholder is dropped instead. Use [`OMP_IMAGES_UNSUPPORTED`] for a model
/// without picture input, [`OMP_IMAGES_BLOCKED`] when pictures are blocked.
pub fn omp_replace_images_with_text(messages: &[Value], placeholder: &str) -> Vec<Value> {
    messages
        .iter()
        .map(|message| replace_images_one(Cow::Borrowed(message), placeholder).into_owned())
        .collect()
}

/// [`omp_replace_images_with_text`] of one message: given back as it came when no picture
/// of it is gated, else with its content replaced (in place when it is owned).
fn replace_images_one<'a>(message: Cow<'a, Value>, placeholder: &str) -> Cow<'a, Value> {
    let gated = matches!(role(&message), Some("user" | "developer" | "toolResult"));
    let Some(Value::Array(content)) = MessageRef::of(&message).and_then(MessageRef::content) else {
        return message;
    };
    let is_image = |b: &Value| BlockRef::new(b).is("image");
    if !gated || !content.iter().any(is_image) {
        return message;
    }
    let mut replaced: Vec<Value> = Vec::with_capacity(content.len());
    for block in content {
        if !is_image(block) {
            replaced.push(block.clone());
            continue;
        }
        let after_placeholder = replaced.last().is_some_and(|prev| {
            BlockRef::new(prev).is("text") && BlockRef::new(prev).text_str() == Some(placeholder)
        });
        if !after_placeholder {
            replaced.push(text_block(placeholder));
        }
    }
    let mut out = message.into_owned();
    if let Some(obj) = out.as_object_mut() {
        obj.insert(key::CONTENT.into(), Value::Array(replaced));
    }
    Cow::Owned(out)
}

/// omp's `isProviderRefusalMessage` (pi-agent-core `replay-policy.ts`): an
/// `assistant` message that ended with `stopReason: "error"` because the
/// provider refused at the API level (`stopDetails.type` is `"refusal"` or
/// `"sensitive"`). Such a turn is a terminal error, not dialogue, so omp never
/// sends it back to a provider. Every comparison is strict, as in omp: the
/// `stopReason` must be that string and `stopDetails` an object whose `type`
/// is one of those strings.
///
/// ```
/// use pi_session_context::dialect::omp::convert::omp_is_provider_refusal;
/// use serde_json::json;
/// let refused = json!({"role":"assistant","content":[],"stopReason":"error",
///     "stopDetails":{"type":"refusal"}});
/// assert!(omp_is_provider_refusal(&refused));
/// let failed = json!({"role":"assistant","content":[],"stopReason":"error",
///     "errorMessage":"overloaded"});
/// assert!(!omp_is_provider_refusal(&failed));
/// ```
pub fn omp_is_provider_refusal(message: &Value) -> bool {
    let Some(m) = MessageRef::of(message) else {
        return false;
    };
    m.role() == Some("assistant")
        && m.stop_reason() == Some("error")
        && matches!(
            m.stop_details()
                .and_then(Value::as_object)
                .and_then(|details| as_str(details.get(key::TYPE))),
            Some("refusal" | "sensitive")
        )
}

/// omp's `filterProviderReplayMessages` (pi-agent-core `replay-policy.ts`,
/// run on the output of `convertToLlm` by omp's `sdk.ts`): drops every
/// message [`omp_is_provider_refusal`] accepts and keeps all others
/// untouched and in order. Values that are not objects are kept (omp's input
/// never holds any).
///
/// ```
/// use pi_session_context::dialect::omp::convert::omp_filter_provider_replay;
/// use serde_json::json;
/// let user = json!({"role":"user","content":"hi","timestamp":1});
/// let refused = json!({"role":"assistant","content":[],"stopReason":"error",
///     "stopDetails":{"type":"sensitive"},"timestamp":2});
/// assert_eq!(omp_filter_provider_replay(&[user.clone(), refused]), vec![user]);
/// ```
pub fn omp_filter_provider_replay(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|message| !omp_is_provider_refusal(message))
        .cloned()
        .collect()
}

/// What omp's image gate does with pictures (the `convertToLlm` wrapper in
/// omp's `sdk.ts`, checked on every request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OmpImageGate {
    /// Pictures go to the model (a vision model, `images.blockImages` off).
    #[default]
    Allow,
    /// The setting `images.blockImages` is on: every picture becomes
    /// [`OMP_IMAGES_BLOCKED`]. omp checks this before the model.
    Blocked,
    /// The active model takes no picture input: every picture becomes
    /// [`OMP_IMAGES_UNSUPPORTED`].
    ModelWithoutImages,
}

impl OmpImageGate {
    /// The gate for a model that does (`true`) or does not take pictures,
    /// with `images.blockImages` set to `blocked`, decided in omp's order.
    pub fn for_model(takes_images: bool, blocked: bool) -> Self {
        if blocked {
            OmpImageGate::Blocked
        } else if takes_images {
            OmpImageGate::Allow
        } else {
            OmpImageGate::ModelWithoutImages
        }
    }

    /// The text a picture is replaced with; `None` when pictures go through.
    pub fn placeholder(self) -> Option<&'static str> {
        match self {
            OmpImageGate::Allow => None,
            OmpImageGate::Blocked => Some(OMP_IMAGES_BLOCKED),
            OmpImageGate::ModelWithoutImages => Some(OMP_IMAGES_UNSUPPORTED),
        }
    }
}

/// The choices [`omp_agent_loop_messages`] takes. The default is the case
/// omp's golden recordings (`llmAgentLoop`) pin: a vision model with
/// pictures allowed.
///
/// ```
/// use pi_session_context::{OmpAgentLoopOptions, OmpImageGate};
/// let options = OmpAgentLoopOptions::default().with_images(OmpImageGate::Blocked);
/// assert_eq!(options.images, OmpImageGate::Blocked);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct OmpAgentLoopOptions {
    /// What happens to pictures (step 3 of [`omp_agent_loop_messages`]).
    pub images: OmpImageGate,
}

impl OmpAgentLoopOptions {
    /// These options with the image gate set to `images`.
    pub fn with_images(mut self, images: OmpImageGate) -> Self {
        self.images = images;
        self
    }
}

/// The messages omp 18.2.3's agent loop hands its provider layer for the
/// agent messages of a context (what `buildSessionContext` returns after a
/// resume), as wired in omp's `sdk.ts`. It reproduces, in this order:
///
/// 1. `transformContext` without extensions: [`omp_wrap_steering`]
///    (`wrapSteeringForModel`);
/// 2. `convertToLlm`: [`llm_messages`](crate::dialect::llm_messages) with [`Dialect::OMP`];
/// 3. the image gate: [`omp_replace_images_with_text`] unless
///    `options.images` is [`OmpImageGate::Allow`];
/// 4. `filterProviderReplayMessages`: [`omp_filter_provider_replay`].
///
/// With the default options this equals what the golden recordings hold as
/// `llmAgentLoop` (`fixtures/README.md`).
///
/// It does **not** reproduce: extensions' `context` event handlers (they
/// run before `wrapSteeringForModel` and are arbitrary code), secret
/// obfuscation (omp redacts configured secrets after step 4; with no secrets
/// configured it changes nothing), and the per-request provider transforms
/// after that (snapcompact image budget, image normalisation, URL-mirrored
/// images, date/cwd reminders) nor pi-ai's per-model `transformMessages` and
/// wire encoders, which depend on the provider and the model.
///
/// ```
/// use pi_session_context::{omp_agent_loop_messages, OmpAgentLoopOptions};
/// use serde_json::json;
/// let agent = vec![
///     json!({"role":"user","content":"hi","timestamp":1}),
///     json!({"role":"assistant","content":[],"stopReason":"error",
///            "stopDetails":{"type":"refusal"},"timestamp":2}),
/// ];
/// let sent = omp_agent_loop_messages(&agent, &OmpAgentLoopOptions::default());
/// assert_eq!(sent, vec![json!({"role":"user","content":"hi","timestamp":1,"attribution":"user"})]);
/// ```
pub fn omp_agent_loop_messages(messages: &[Value], options: &OmpAgentLoopOptions) -> Vec<Value> {
    let mut out = Vec::new();
    let Ok(()) = omp_agent_loop_each(messages, options, |message| {
        out.push(message.into_owned());
        Ok::<(), std::convert::Infallible>(())
    });
    out
}

/// [`omp_agent_loop_each`] over messages the caller gives up (e.g. a context it is done
/// with): what `convertToLlm` adds to a tool result (its `attribution`, when it has none) is
/// added in place first, so a tool result goes out borrowed instead of as a copy made to
/// add one key (tool results are most of a session's bytes: the copies were ~10% of
/// `omp-agent-loop`'s main thread at 200 MB). The messages handed out are the same.
///
/// ```
/// use pi_session_context::{omp_agent_loop_each, omp_agent_loop_each_mut, OmpAgentLoopOptions};
/// use serde_json::json;
/// let agent = vec![
///     json!({"role":"user","content":"hi","timestamp":1}),
///     json!({"role":"toolResult","toolCallId":"c","content":[],"timestamp":2}),
/// ];
/// let options = OmpAgentLoopOptions::default();
/// let (mut seen, mut seen_mut) = (Vec::new(), Vec::new());
/// omp_agent_loop_each(&agent, &options, |m| Ok::<_, ()>(seen.push(m.into_owned()))).unwrap();
/// let mut given_up = agent.clone();
/// omp_agent_loop_each_mut(&mut given_up, &options, |m| Ok::<_, ()>(seen_mut.push(m.into_owned())))
///     .unwrap();
/// assert_eq!(seen_mut, seen);
/// assert_eq!(seen[1]["attribution"], "agent");
/// ```
pub fn omp_agent_loop_each_mut<E>(
    messages: &mut [Value],
    options: &OmpAgentLoopOptions,
    each: impl FnMut(Cow<'_, Value>) -> Result<(), E>,
) -> Result<(), E> {
    messages.iter_mut().for_each(attribute_tool_result);
    omp_agent_loop_each(messages, options, each)
}

/// [`omp_agent_loop_messages`] a message at a time: `each` is given every message omp's loop
/// hands its provider, in order, borrowed from `messages` where no step changed it. Each step
/// works on one message (and the message after it, which `convertToLlm` looks at), so a
/// caller that writes each message out as it comes never holds the whole answer. The first
/// error of `each` ends the walk and is returned.
///
/// ```
/// use pi_session_context::{omp_agent_loop_each, omp_agent_loop_messages, OmpAgentLoopOptions};
/// use serde_json::json;
/// let agent = vec![json!({"role":"user","content":"hi","timestamp":1})];
/// let options = OmpAgentLoopOptions::default();
/// let mut seen = Vec::new();
/// omp_agent_loop_each(&agent, &options, |m| Ok::<_, ()>(seen.push(m.into_owned()))).unwrap();
/// assert_eq!(seen, omp_agent_loop_messages(&agent, &options));
/// ```
pub fn omp_agent_loop_each<E>(
    messages: &[Value],
    options: &OmpAgentLoopOptions,
    mut each: impl FnMut(Cow<'_, Value>) -> Result<(), E>,
) -> Result<(), E> {
    let looped = OmpAgentLoop::of(options);
    for (at, message) in messages.iter().enumerate() {
        for sent in looped.convert(message, messages.get(at + 1)) {
            each(sent)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_agent_loop_reads_what_omps_conversion_reads() {
        // `OmpAgentLoop::passes` asks `Omp::passes`: a line read as the loop's keys must hold
        // the conversion's.
        for key in super::OMP_READS {
            assert!(super::OMP_AGENT_LOOP_READS.contains(&key), "{key}");
        }
    }
}
