//! Entry builders: the entries rho appends, in pi's shapes (rho-reqllm.md §A.6).
//!
//! Each builder returns an [`Entry`] without `id`, `parentId` and `timestamp`; `append` adds
//! them. Message timestamps are the current time in milliseconds, as rho writes them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use pi_session_types::{Entry, JsonMap, JsonValue, StopReason};
use serde_json::json;

use pi_session_tree::Dialect;

use crate::api_table::api_for;
use crate::model::{split_model, to_pi_model};
use crate::read::{to_json, usage};

/// The namespace of notices when none is given (`rho.notice`, `rho.error`, `rho.aside`).
/// Operator used `"operator"`; pass it to [`custom_in`] to keep writing what Operator wrote.
pub const DEFAULT_NAMESPACE: &str = "rho";

/// What a notice (a `custom_message` written by the host) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// `<ns>.notice`: something the host tells the user and the model (e.g. "Stopped by the user.").
    Notice,
    /// `<ns>.error`: a failure report.
    Error,
    /// `<ns>.aside`: a remark on the side.
    Aside,
}

impl NoticeKind {
    /// `"notice"`, `"error"` or `"aside"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Notice => "notice",
            Self::Error => "error",
            Self::Aside => "aside",
        }
    }

    /// Parses `"notice"`, `"error"` or `"aside"`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "notice" => Some(Self::Notice),
            "error" => Some(Self::Error),
            "aside" => Some(Self::Aside),
            _ => None,
        }
    }
}

/// What an attached file is (the message's `attachments[].kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttachmentKind {
    /// A picture, sent to the model as an image part.
    Image,
    /// A text file, its text in the envelope.
    Text,
    /// A PDF: its bytes are not stored; they are read from `path` when the context is built.
    Pdf,
    /// Anything else: path, size and type only.
    File,
}

impl AttachmentKind {
    /// `"image"`, `"text"`, `"pdf"` or `"file"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Text => "text",
            Self::Pdf => "pdf",
            Self::File => "file",
        }
    }
}

/// A file the user attached to a message, as the host prepared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachedFile {
    /// What it is.
    pub kind: AttachmentKind,
    /// File name shown to the model.
    pub name: String,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
    /// Where it is in the workspace.
    pub path: String,
    /// One line for the model (size, dimensions, ...). For a file that is neither text nor a
    /// picture rho writes `"<size>, not text or a picture: work with it through its path"`.
    pub about: String,
    /// Text files: the text, already cut to the output budget.
    pub text: Option<String>,
    /// Pictures: the (scaled) image bytes sent to the model.
    pub image: Option<Vec<u8>>,
    /// PDFs: the page count, when known.
    pub pages: Option<u64>,
}

impl AttachedFile {
    /// An attachment of `kind` with empty `about`, no text, image or page count.
    pub fn new(
        kind: AttachmentKind,
        name: impl Into<String>,
        mime_type: impl Into<String>,
        path: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            name: name.into(),
            mime_type: mime_type.into(),
            path: path.into(),
            about: String::new(),
            text: None,
            image: None,
            pages: None,
        }
    }

    /// Sets the line about the file.
    #[must_use]
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = about.into();
        self
    }

    /// Sets a text file's text.
    #[must_use]
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Sets a picture's bytes.
    #[must_use]
    pub fn image(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.image = Some(bytes.into());
        self
    }

    /// Sets a PDF's page count.
    #[must_use]
    pub fn pages(mut self, pages: u64) -> Self {
        self.pages = Some(pages);
        self
    }

    /// The text part rho writes for this attachment, exactly:
    /// `<attachment name="NAME" type="MIME" path="PATH">` `\n` body `\n</attachment>`, where the
    /// body is `about` and `text` (the non-empty ones) joined with `\n`, and every `"` in an
    /// attribute value becomes `'` (nothing else is escaped).
    ///
    /// ```
    /// use pi_session::{AttachedFile, AttachmentKind};
    /// let file = AttachedFile::new(AttachmentKind::Text, "say \"hi\".txt", "text/plain", "/w/a.txt")
    ///     .about("12 B")
    ///     .text("hello & <bye>");
    /// assert_eq!(
    ///     file.envelope(),
    ///     "<attachment name=\"say 'hi'.txt\" type=\"text/plain\" path=\"/w/a.txt\">\n12 B\nhello & <bye>\n</attachment>"
    /// );
    /// ```
    pub fn envelope(&self) -> String {
        let body: Vec<&str> = [Some(self.about.as_str()), self.text.as_deref()]
            .into_iter()
            .flatten()
            .filter(|part| !part.is_empty())
            .collect();
        format!(
            "<attachment name=\"{}\" type=\"{}\" path=\"{}\">\n{}\n</attachment>",
            attribute(&self.name),
            attribute(&self.mime_type),
            attribute(&self.path),
            body.join("\n")
        )
    }

    /// The item of the message's `attachments` list: `kind`, `name`, `path`, `mimeType`,
    /// `about`, and `pages` when known.
    fn record(&self) -> JsonValue {
        let mut record = JsonMap::new();
        record.insert("kind".into(), self.kind.as_str().into());
        record.insert("name".into(), self.name.as_str().into());
        record.insert("path".into(), self.path.as_str().into());
        record.insert("mimeType".into(), self.mime_type.as_str().into());
        record.insert("about".into(), self.about.as_str().into());
        if let Some(pages) = self.pages {
            record.insert("pages".into(), pages.into());
        }
        JsonValue::Object(record)
    }
}

fn attribute(value: &str) -> String {
    value.replace('"', "'")
}

/// A picture: bytes and MIME type (a model-made image, or one a tool returned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// The image bytes (written as standard padded base64).
    pub data: Vec<u8>,
    /// MIME type, e.g. `image/png`.
    pub mime_type: String,
}

impl Picture {
    /// A picture from bytes and a MIME type.
    pub fn new(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    fn part(&self) -> JsonValue {
        json!({"type": "image", "data": STANDARD.encode(&self.data), "mimeType": self.mime_type})
    }
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call id the tool result answers.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments (a JSON object).
    pub arguments: JsonValue,
}

impl ToolCall {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: JsonValue) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// Who asked, for a user message that answers another agent's question (rho's `ask`/`from`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserOptions {
    /// Attached files, in order.
    pub attachments: Vec<AttachedFile>,
    /// Sent while the agent was running (the loop's steering queue).
    pub steering: bool,
    /// The id of a question another phone's agent asked.
    pub ask: Option<String>,
    /// The node that asked (written as `""` when `ask` is set without it).
    pub from: Option<String>,
}

impl UserOptions {
    /// No attachments, not steering, not an answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an attachment.
    #[must_use]
    pub fn attach(mut self, file: AttachedFile) -> Self {
        self.attachments.push(file);
        self
    }

    /// Marks the message as steering.
    #[must_use]
    pub fn steering(mut self, steering: bool) -> Self {
        self.steering = steering;
        self
    }

    /// Marks the message as the answer to question `ask` from node `from`.
    #[must_use]
    pub fn ask(mut self, ask: impl Into<String>, from: impl Into<String>) -> Self {
        self.ask = Some(ask.into());
        self.from = Some(from.into());
        self
    }
}

/// A model's reply, as the agent loop received it. The default is an empty reply that
/// stopped normally (`StopReason::Stop`).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Thinking text (written only when non-empty; never sent back to the model).
    pub thinking: String,
    /// The reply text (written only when non-empty).
    pub text: String,
    /// Pictures the model made.
    pub images: Vec<Picture>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// req_llm's usage map (`input_tokens`, `output_tokens`, ...), converted with [`usage`].
    pub usage: JsonMap,
    /// `Stop`, `Length`, `ToolUse`, `Error` or `Aborted`.
    pub stop_reason: StopReason,
    /// The error, for a failed call (`errorMessage`).
    pub error: Option<String>,
    /// The `api` to write (e.g. `openai-completions`); `None`: the one the dialect's model
    /// catalog gives the provider ([`api_for`](crate::api_for)), else the provider's name.
    pub api: Option<String>,
}

impl Default for Reply {
    fn default() -> Self {
        Self {
            thinking: String::new(),
            text: String::new(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            usage: JsonMap::new(),
            stop_reason: StopReason::Stop,
            error: None,
            api: None,
        }
    }
}

/// rho's `user/2`: a user message with what the user typed (left out when empty), then for
/// each attachment its envelope text part and, for a picture, its image part; the
/// `attachments` list; `steering`; and `ask`/`from`.
///
/// ```
/// use pi_session::{user, typed, UserOptions};
/// let entry = user("hello", UserOptions::new().steering(true));
/// assert_eq!(typed(entry.message().unwrap()), "hello");
/// ```
pub fn user(text: &str, options: UserOptions) -> Entry {
    let mut content: Vec<JsonValue> = Vec::new();
    if !text.is_empty() {
        content.push(text_part(text));
    }
    for file in &options.attachments {
        content.push(text_part(&file.envelope()));
        if file.kind == AttachmentKind::Image
            && let Some(bytes) = &file.image
        {
            content.push(Picture::new(bytes.clone(), file.mime_type.clone()).part());
        }
    }
    let mut message = JsonMap::new();
    message.insert("role".into(), "user".into());
    message.insert("content".into(), content.into());
    message.insert("attribution".into(), "user".into());
    message.insert("timestamp".into(), now_ms().into());
    if !options.attachments.is_empty() {
        let records: Vec<JsonValue> = options
            .attachments
            .iter()
            .map(AttachedFile::record)
            .collect();
        message.insert("attachments".into(), records.into());
    }
    if options.steering {
        message.insert("steering".into(), true.into());
    }
    if let Some(ask) = options.ask {
        message.insert("ask".into(), ask.into());
        message.insert("from".into(), options.from.unwrap_or_default().into());
    }
    message_entry(message)
}

/// rho's `assistant/2`: the reply's thinking, text, pictures and tool calls as content parts,
/// `api`/`provider`/`model` from the req_llm spec `model`, usage converted from req_llm's map,
/// the stop reason, and `errorMessage` when the reply failed.
///
/// ```
/// use pi_session::{assistant, Reply, types::{AgentMessage, StopReason}};
/// let entry = assistant(&Reply { text: "done".into(), stop_reason: StopReason::Stop, ..Reply::default() }, "openai_codex:gpt-5");
/// let Some(AgentMessage::Assistant(message)) = entry.message() else { panic!() };
/// assert_eq!(message.provider.as_deref(), Some("openai-codex"));
/// assert_eq!(message.api.as_deref(), Some("openai-codex-responses"));
/// ```
pub fn assistant(reply: &Reply, model: &str) -> Entry {
    assistant_in(Dialect::PI, reply, model)
}

/// [`assistant`] with the `api` of `dialect`'s catalog (see [`Reply::api`]).
///
/// ```
/// use pi_session::{Reply, assistant_in, tree::Dialect, types::AgentMessage};
/// let entry = assistant_in(Dialect::OMP, &Reply::default(), "ollama:qwen3");
/// let Some(AgentMessage::Assistant(message)) = entry.message() else { panic!() };
/// assert_eq!(message.api.as_deref(), Some("ollama-chat"));
/// ```
pub fn assistant_in(dialect: Dialect, reply: &Reply, model: &str) -> Entry {
    let mut content: Vec<JsonValue> = Vec::new();
    if !reply.thinking.is_empty() {
        content.push(json!({"type": "thinking", "thinking": reply.thinking}));
    }
    if !reply.text.is_empty() {
        content.push(text_part(&reply.text));
    }
    content.extend(reply.images.iter().map(Picture::part));
    content.extend(
        reply
            .tool_calls
            .iter()
            .map(|call| json!({"type": "toolCall", "id": call.id, "name": call.name, "arguments": call.arguments})),
    );
    let (provider, id) = split_model(model);
    let mut message = JsonMap::new();
    message.insert("role".into(), "assistant".into());
    message.insert("content".into(), content.into());
    let api = reply
        .api
        .clone()
        .or_else(|| api_for(dialect, &provider).map(str::to_owned))
        .unwrap_or_else(|| provider.clone());
    message.insert("api".into(), api.into());
    message.insert("provider".into(), provider.as_str().into());
    message.insert("model".into(), id.into());
    message.insert("usage".into(), to_json(&usage(&reply.usage)));
    message.insert("stopReason".into(), reply.stop_reason.as_str().into());
    message.insert("timestamp".into(), now_ms().into());
    if let Some(error) = &reply.error {
        message.insert("errorMessage".into(), error.as_str().into());
    }
    message_entry(message)
}

/// rho's `tool_result/5`: the result of call `call_id` of tool `name`: a text part (always,
/// even empty), then the pictures; `isError`; and the tool's `details` when the host keeps them.
pub fn tool_result(
    call_id: &str,
    name: &str,
    text: &str,
    is_error: bool,
    images: &[Picture],
    details: Option<JsonValue>,
) -> Entry {
    let mut content = vec![text_part(text)];
    content.extend(images.iter().map(Picture::part));
    let mut message = JsonMap::new();
    message.insert("role".into(), "toolResult".into());
    message.insert("toolCallId".into(), call_id.into());
    message.insert("toolName".into(), name.into());
    message.insert("content".into(), content.into());
    if let Some(details) = details {
        message.insert("details".into(), details);
    }
    message.insert("isError".into(), is_error.into());
    message.insert("timestamp".into(), now_ms().into());
    message_entry(message)
}

/// rho's `custom/2` in the default namespace ([`DEFAULT_NAMESPACE`]): a notice shown to the
/// user that reaches the model as a user message.
pub fn custom(kind: NoticeKind, text: &str) -> Entry {
    custom_in(DEFAULT_NAMESPACE, kind, text)
}

/// A notice in `namespace`:
/// `{"type":"custom_message","customType":"<namespace>.<kind>","content":text,"display":true,"attribution":"agent"}`.
pub fn custom_in(namespace: &str, kind: NoticeKind, text: &str) -> Entry {
    entry(json!({
        "type": "custom_message",
        "customType": format!("{namespace}.{}", kind.as_str()),
        "content": text,
        "display": true,
        "attribution": "agent",
    }))
}

/// rho's `compaction/4`: `summary` replaces the branch before `first_kept_id`
/// (`method:"soft"`, `fromExtension:false`).
pub fn compaction(
    summary: &str,
    first_kept_id: &str,
    tokens_before: u64,
    tokens_after: u64,
) -> Entry {
    entry(json!({
        "type": "compaction",
        "summary": summary,
        "firstKeptEntryId": first_kept_id,
        "tokensBefore": tokens_before,
        "tokensAfter": tokens_after,
        "method": "soft",
        "fromExtension": false,
    }))
}

/// rho's `model_change/1`: `{"type":"model_change","model":"<pi provider>/<id>"}` for a req_llm
/// spec: omp's shape, which pi does not read. To write in a file's own dialect use
/// [`Session::set_model`](crate::Session::set_model) or [`ModelChange`](crate::ModelChange).
///
/// ```
/// let entry = pi_session::model_change("openai_codex:gpt-5");
/// assert_eq!(pi_session::types::to_js_string(&entry).unwrap(), r#"{"type":"model_change","model":"openai-codex/gpt-5"}"#);
/// ```
pub fn model_change(spec: &str) -> Entry {
    entry(json!({"type": "model_change", "model": to_pi_model(spec)}))
}

fn text_part(text: &str) -> JsonValue {
    json!({"type": "text", "text": text})
}

fn message_entry(message: JsonMap) -> Entry {
    let mut entry = JsonMap::new();
    entry.insert("type".into(), "message".into());
    entry.insert("message".into(), JsonValue::Object(message));
    Entry::from_map(entry)
}

fn entry(value: JsonValue) -> Entry {
    match value {
        JsonValue::Object(map) => Entry::from_map(map),
        _ => Entry::from_map(JsonMap::new()),
    }
}

/// The current time in milliseconds since the Unix epoch (0 if the clock is before 1970).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
