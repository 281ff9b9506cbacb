//! Provider request shapes built from req_llm messages (rho-reqllm.md
//! §C.2–C.3): the `messages` array of an OpenAI Chat Completions request and
//! the `{system?, messages}` of an Anthropic Messages request.

use std::borrow::Cow;
use std::convert::Infallible;

use serde::ser::SerializeMap as _;
use serde_json::{Map, Value, json};

use pi_session_types::js::text_block;
use pi_session_types::js_string::JsString;
use pi_session_types::value_read;

use crate::reqllm::{ContentPart, Message, PartType, Role, ToolCall};

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
/// `messages` lent (`&[Message]`, `&Vec<Message>`) are copied a message at a time; given
/// (`Vec<Message>`), their texts move into the answer ([`OpenAiStream::push`]).
///
/// ```
/// use pi_session_context::providers::{openai_chat_messages, OpenAiOptions};
/// use pi_session_context::reqllm::Message;
/// let out = openai_chat_messages(&[Message::user_text("hi")], OpenAiOptions::default());
/// assert_eq!(out, serde_json::json!([{"role":"user","content":"hi"}]));
/// ```
pub fn openai_chat_messages<'m>(
    messages: impl IntoIterator<Item = impl Into<Cow<'m, Message>>>,
    options: OpenAiOptions,
) -> Value {
    let mut out = Vec::new();
    let mut push = pushing_to(&mut out);
    let mut stream = OpenAiStream::new(options);
    for message in messages {
        let Ok(()) = stream.push(message, &mut push);
    }
    let Ok(()) = stream.finish(&mut push);
    drop(push);
    Value::Array(out)
}

/// [`openai_chat_messages`] a message at a time, for a caller that writes each request
/// message out as it is made: [`push`](Self::push) each req_llm message in order, then
/// [`finish`](Self::finish). Only the pictures of the current run of tool results are held
/// (they follow the run in one user turn).
#[derive(Debug)]
pub struct OpenAiStream {
    options: OpenAiOptions,
    /// The pictures of the tool results since the last message that was not one.
    images: Vec<Value>,
}

impl OpenAiStream {
    /// A stream with `options`.
    pub fn new(options: OpenAiOptions) -> Self {
        OpenAiStream {
            options,
            images: Vec::new(),
        }
    }

    /// Gives `each` the request messages `message` makes (none, one, or after a run of tool
    /// results with pictures the turn that carries them, then this one), each as `T`: an
    /// [`Element`] (written as its value is, with no map made of it) or its [`Value`]. A
    /// message given (`Message`) has its texts, names and ids moved into them; one lent
    /// (`&Message`) is copied first.
    pub fn push<'m, T: From<Element>, E>(
        &mut self,
        message: impl Into<Cow<'m, Message>>,
        each: &mut impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut message = message.into().into_owned();
        if message.role != Role::Tool {
            self.end_tool_run(each)?;
            if !is_empty_assistant(&message) {
                each(openai_message(message).into())?;
            }
            return Ok(());
        }
        let text = joined_texts(&mut message.content, "\n");
        let pictures: Vec<Value> = message
            .content
            .iter_mut()
            .filter(|p| p.kind == PartType::Image)
            .filter_map(openai_part)
            .collect();
        let text = match (text.is_empty(), pictures.is_empty()) {
            (false, _) => text,
            (true, false) => OPENAI_SEE_ATTACHED_IMAGE.into(),
            (true, true) => OPENAI_NO_TOOL_OUTPUT.into(),
        };
        let mut tool_message = Element::with_capacity(4);
        tool_message.push("role", Member::Name("tool"));
        tool_message.push("content", Member::Text(text));
        tool_message.push(
            "tool_call_id",
            Member::Text(message.tool_call_id.take().unwrap_or_default().into()),
        );
        if self.options.tool_result_name
            && let Some(name) = message.name.take()
        {
            tool_message.push("name", Member::Text(name.into()));
        }
        each(tool_message.into())?;
        self.images.extend(pictures);
        Ok(())
    }

    /// Gives `each` what the last run of tool results still owes (its pictures' turn), as
    /// [`Self::push`] gives its messages.
    pub fn finish<T: From<Element>, E>(
        mut self,
        each: &mut impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        self.end_tool_run(each)
    }

    /// After a run of tool results with pictures: one user turn brings them (after pi's
    /// bridge turn when the server needs one).
    fn end_tool_run<T: From<Element>, E>(
        &mut self,
        each: &mut impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.images.is_empty() {
            return Ok(());
        }
        if self.options.assistant_after_tool_result {
            each(
                Element::of([
                    ("role", Member::Name("assistant")),
                    ("content", Member::Name(OPENAI_BRIDGE_TEXT)),
                ])
                .into(),
            )?;
        }
        let mut content = vec![Member::Value(text_block(OPENAI_TOOL_IMAGES_TEXT))];
        content.extend(self.images.drain(..).map(Member::Value));
        each(
            Element::of([
                ("role", Member::Name("user")),
                ("content", Member::List(content)),
            ])
            .into(),
        )
    }
}

/// A stream's `each` that gathers the messages into `out` (the whole-answer functions).
fn pushing_to(out: &mut Vec<Value>) -> impl FnMut(Value) -> Result<(), Infallible> + '_ {
    |message| {
        out.push(message);
        Ok(())
    }
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

/// The texts of `parts`' text parts (`ContentPart::as_text`) joined with `separator`, taken
/// out of them: one text is moved, not copied.
fn joined_texts(parts: &mut [ContentPart], separator: &str) -> JsString {
    let mut texts = parts
        .iter_mut()
        .filter(|part| part.kind == PartType::Text)
        .filter_map(|part| part.text.take());
    let mut joined = texts.next().unwrap_or_default();
    // Spelled once, when a second text comes (most results have one).
    let mut spelled = None;
    for text in texts {
        joined.push(spelled.get_or_insert_with(|| JsString::spelled_of(separator)));
        joined.push(&text);
    }
    joined
}

fn openai_message(mut message: Message) -> Element {
    let content = match message.content.as_mut_slice() {
        [only] if only.kind == PartType::Text => Member::Text(only.text.take().unwrap_or_default()),
        parts => {
            let parts: Vec<Member> = parts
                .iter_mut()
                .filter_map(openai_part)
                .map(Member::Value)
                .collect();
            if parts.is_empty() && message.role == Role::Assistant {
                Member::Value(Value::Null)
            } else {
                Member::List(parts)
            }
        }
    };
    let mut out = Element::with_capacity(5);
    out.push("role", Member::Name(message.role.as_str()));
    out.push("content", content);
    if let Some(calls) = message.tool_calls.take().filter(|c| !c.is_empty()) {
        out.push("tool_calls", Member::Calls(calls));
    }
    if let Some(id) = message.tool_call_id.take() {
        out.push("tool_call_id", Member::Text(id.into()));
    }
    if let Some(name) = message.name.take().filter(|n| !n.is_empty()) {
        out.push("name", Member::Text(name.into()));
    }
    out
}

fn data_uri(part: &ContentPart, default_mime: &str) -> String {
    format!(
        "data:{};base64,{}",
        part.media_type.as_deref().unwrap_or(default_mime),
        part.data_base64().unwrap_or_default()
    )
}

/// A part as OpenAI takes it; its text, URL or file name taken out of it.
fn openai_part(part: &mut ContentPart) -> Option<Value> {
    match part.kind {
        PartType::Text => Some(text_block(part.text.take().unwrap_or_default())),
        PartType::Image => {
            Some(json!({"type": "image_url", "image_url": {"url": data_uri(part, "image/png")}}))
        }
        PartType::ImageUrl => Some(
            json!({"type": "image_url", "image_url": {"url": part.url.take().unwrap_or_default()}}),
        ),
        PartType::File => Some(json!({"type": "file", "file": {
            "filename": part.filename.take().unwrap_or_default(),
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
/// `messages` lent are copied a message at a time; given, their texts move into the answer
/// ([`AnthropicStream::push`]).
///
/// ```
/// use pi_session_context::providers::anthropic_messages;
/// use pi_session_context::reqllm::Message;
/// let out = anthropic_messages(&[Message::system_text("be brief"), Message::user_text("hi")]);
/// assert_eq!(out, serde_json::json!({"system":"be brief","messages":[{"role":"user","content":"hi"}]}));
/// ```
pub fn anthropic_messages<'m>(
    messages: impl IntoIterator<Item = impl Into<Cow<'m, Message>>>,
) -> Value {
    let mut out: Vec<Value> = Vec::new();
    let mut push = pushing_to(&mut out);
    let mut stream = AnthropicStream::default();
    for message in messages {
        let Ok(()) = stream.push(message, &mut push);
    }
    let Ok(system_blocks) = stream.finish_blocks(&mut push);
    drop(push);
    let mut request = Map::new();
    if !system_blocks.is_empty() {
        request.insert("system".into(), collapse(system_blocks).into_value());
    }
    request.insert("messages".into(), Value::Array(out));
    Value::Object(request)
}

/// The `messages` of [`anthropic_messages`] a message at a time, for a caller that writes
/// each request message out as it is made: [`push`](Self::push) each req_llm message in
/// order, then [`finish`](Self::finish), which gives the `system` blocks. Only the user turn
/// of the current run of tool results is held (later results join it).
///
/// The `system` key comes before `messages` in [`anthropic_messages`], so a caller that writes
/// as it goes can do so only for messages without a system one, as rho's projection makes
/// them ([`crate::rho::context`] gives user, assistant and tool messages only).
#[derive(Debug, Default)]
pub struct AnthropicStream {
    system: Vec<Block>,
    /// The user turn of the tool results since the last other message, not given yet.
    tool_turn: Option<Vec<Member>>,
}

/// A block of an Anthropic message as it is made: a text kept as its string until the
/// message's blocks are all known (a lone text is sent as that string: [`collapse`]), any
/// other block as its member.
#[derive(Debug)]
enum Block {
    Text(JsString),
    Other(Member),
}

impl Block {
    /// The block as Anthropic takes it in a list.
    fn into_member(self) -> Member {
        match self {
            Block::Text(text) => Member::Object(Element::of([
                ("type", Member::Name("text")),
                ("text", Member::Text(text)),
            ])),
            Block::Other(member) => member,
        }
    }
}

impl AnthropicStream {
    /// Gives `each` the request messages complete once `message` has come, each as `T`: an
    /// [`Element`] (written as its value is, with no map made of it) or its [`Value`]. A
    /// message given (`Message`) has its texts, names and ids moved into them; one lent
    /// (`&Message`) is copied first.
    pub fn push<'m, T: From<Element>, E>(
        &mut self,
        message: impl Into<Cow<'m, Message>>,
        each: &mut impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut message = message.into().into_owned();
        match message.role {
            Role::System => {
                self.system
                    .extend(message.content.iter_mut().filter_map(anthropic_block));
                self.end_tool_turn(each)
            }
            Role::Tool => {
                let block = anthropic_tool_result(message);
                self.tool_turn
                    .get_or_insert_with(Vec::new)
                    .push(Member::Object(block));
                Ok(())
            }
            // Left out, and a run of tool results goes on past it.
            Role::Assistant if is_empty_assistant(&message) => Ok(()),
            Role::User | Role::Assistant => {
                self.end_tool_turn(each)?;
                let mut blocks: Vec<Block> = message
                    .content
                    .iter_mut()
                    .filter_map(anthropic_block)
                    .collect();
                for call in message.tool_calls.into_iter().flatten() {
                    // Read as `serde_json` reads it, by the project's faster reader where it
                    // answers.
                    let input = value_read::from_slice(call.arguments.as_bytes())
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| Value::Object(Map::new()));
                    blocks.push(Block::Other(Member::Object(Element::of([
                        ("type", Member::Name("tool_use")),
                        ("id", Member::Text(call.id.into())),
                        (
                            "name",
                            call.name.map_or(Member::Value(Value::Null), |name| {
                                Member::Text(name.into())
                            }),
                        ),
                        ("input", Member::Value(input)),
                    ]))));
                }
                each(
                    Element::of([
                        ("role", Member::Name(message.role.as_str())),
                        ("content", collapse(blocks)),
                    ])
                    .into(),
                )
            }
        }
    }

    /// Gives `each` the last tool results' turn, as [`Self::push`] gives its messages; returns
    /// the `system` blocks (none from rho's messages: [`crate::rho::context`] makes no system
    /// message, so a caller that writes as it goes has nothing to write before them).
    pub fn finish<T: From<Element>, E>(
        self,
        each: &mut impl FnMut(T) -> Result<(), E>,
    ) -> Result<Vec<Value>, E> {
        let blocks = self.finish_blocks(each)?;
        Ok(blocks
            .into_iter()
            .map(|block| block.into_member().into_value())
            .collect())
    }

    /// The last tool results' turn given to `each`; the `system` blocks as they were made.
    fn finish_blocks<T: From<Element>, E>(
        mut self,
        each: &mut impl FnMut(T) -> Result<(), E>,
    ) -> Result<Vec<Block>, E> {
        self.end_tool_turn(each)?;
        Ok(self.system)
    }

    fn end_tool_turn<T: From<Element>, E>(
        &mut self,
        each: &mut impl FnMut(T) -> Result<(), E>,
    ) -> Result<(), E> {
        match self.tool_turn.take() {
            Some(blocks) => each(
                Element::of([
                    ("role", Member::Name("user")),
                    ("content", Member::List(blocks)),
                ])
                .into(),
            ),
            None => Ok(()),
        }
    }
}

/// A lone text block becomes its string (moved, no block made of it); no blocks give `""`.
fn collapse(mut blocks: Vec<Block>) -> Member {
    match blocks.as_mut_slice() {
        [] => Member::Text(JsString::default()),
        [Block::Text(only)] => Member::Text(std::mem::take(only)),
        _ => Member::List(blocks.into_iter().map(Block::into_member).collect()),
    }
}

fn base64_source(part: &ContentPart, default_mime: &str) -> Value {
    json!({
        "type": "base64",
        "media_type": part.media_type.as_deref().unwrap_or(default_mime),
        "data": part.data_base64().unwrap_or_default(),
    })
}

/// A part as Anthropic takes it (none for an empty text); its text or URL taken out of it.
fn anthropic_block(part: &mut ContentPart) -> Option<Block> {
    let block = match part.kind {
        PartType::Text => {
            let text = part.text.take().unwrap_or_default();
            return (!text.is_empty()).then_some(Block::Text(text));
        }
        PartType::Image => json!({"type": "image", "source": base64_source(part, "image/png")}),
        PartType::ImageUrl => {
            json!({"type": "image", "source": {"type": "url", "url": part.url.take().unwrap_or_default()}})
        }
        PartType::File => {
            json!({"type": "document", "source": base64_source(part, "application/pdf")})
        }
        PartType::Thinking => {
            return Some(Block::Other(Member::Object(Element::of([
                ("type", Member::Name("thinking")),
                (
                    "thinking",
                    Member::Text(part.text.take().unwrap_or_default()),
                ),
            ]))));
        }
    };
    Some(Block::Other(Member::Value(block)))
}

fn anthropic_tool_result(mut message: Message) -> Element {
    let blocks: Vec<Block> = message
        .content
        .iter_mut()
        .filter_map(anthropic_block)
        .collect();
    let mut block = Element::with_capacity(4);
    block.push("type", Member::Name("tool_result"));
    block.push(
        "tool_use_id",
        Member::Text(message.tool_call_id.take().unwrap_or_default().into()),
    );
    block.push("content", collapse(blocks));
    if message.metadata.get("is_error") == Some(&Value::Bool(true)) {
        block.push("is_error", Member::Value(Value::Bool(true)));
    }
    block
}

/// A request message (or a block of one) of [`OpenAiStream`] and [`AnthropicStream`] as they
/// make it (their `push` gives it, or its value): its members in the order they are sent, the
/// texts moved in from the req_llm message. Written (its `Serialize`) it is the value
/// [`Self::into_value`] gives, with no map made of it (no key hashed, no map allocated and
/// freed for each message sent).
///
/// ```
/// use pi_session_context::providers::{AnthropicStream, Element};
/// use pi_session_context::reqllm::Message;
/// let mut stream = AnthropicStream::default();
/// let mut made: Vec<Element> = Vec::new();
/// stream
///     .push(Message::user_text("hi"), &mut |e: Element| {
///         made.push(e);
///         Ok::<_, ()>(())
///     })
///     .unwrap();
/// let value = serde_json::json!({"role": "user", "content": "hi"});
/// assert_eq!(serde_json::to_value(&made[0]).unwrap(), value);
/// assert_eq!(made.remove(0).into_value(), value);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Element(Vec<(&'static str, Member)>);

/// The value of a member of an [`Element`].
#[derive(Debug, Clone, PartialEq)]
enum Member {
    /// A string the streams name (a role, a block's type).
    Name(&'static str),
    /// A string of the message's (a text, an id, a name).
    Text(JsString),
    /// An object.
    Object(Element),
    /// An array.
    List(Vec<Member>),
    /// An OpenAI message's calls, in their canonical form ([`ToolCall`]'s `Serialize`).
    Calls(Vec<ToolCall>),
    /// Any other value (a picture's source, a call's input, `null`).
    Value(Value),
}

impl Element {
    /// An element of `members`, in that order (no key twice).
    fn of<const N: usize>(members: [(&'static str, Member); N]) -> Self {
        Element(Vec::from(members))
    }

    fn with_capacity(capacity: usize) -> Self {
        Element(Vec::with_capacity(capacity))
    }

    /// Adds the member `key` (not in the element yet) after the others.
    fn push(&mut self, key: &'static str, value: Member) {
        self.0.push((key, value));
    }

    /// The element as a JSON object, its members in their order.
    pub fn into_value(self) -> Value {
        Value::Object(
            self.0
                .into_iter()
                .map(|(key, value)| (key.to_owned(), value.into_value()))
                .collect(),
        )
    }
}

impl From<Element> for Value {
    fn from(element: Element) -> Self {
        element.into_value()
    }
}

impl Member {
    fn into_value(self) -> Value {
        match self {
            Member::Name(name) => Value::String(name.to_owned()),
            Member::Text(text) => text.into(),
            Member::Object(element) => element.into_value(),
            Member::List(items) => {
                Value::Array(items.into_iter().map(Member::into_value).collect())
            }
            Member::Calls(calls) => {
                Value::Array(calls.iter().map(ToolCall::to_canonical_json).collect())
            }
            Member::Value(value) => value,
        }
    }
}

impl serde::Serialize for Element {
    /// Serialises the element as [`Element::into_value`]'s object serialises.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl serde::Serialize for Member {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Member::Name(name) => serializer.serialize_str(name),
            Member::Text(text) => text.serialize(serializer),
            Member::Object(element) => element.serialize(serializer),
            Member::List(items) => serializer.collect_seq(items),
            Member::Calls(calls) => serializer.collect_seq(calls),
            Member::Value(value) => value.serialize(serializer),
        }
    }
}
