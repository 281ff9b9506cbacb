//! Messages (`message.message` of a `message` entry) and their content blocks.
//!
//! Every role of both dialects is a struct with its typed fields plus `extra` for anything else;
//! an unknown role, or a known role whose fields have unexpected types, is kept as
//! [`UnknownMessage`] with the JSON untouched. The same holds for content blocks.

use crate::field::{Field, MaybeTyped};
use crate::tags;
use crate::usage::Usage;
use crate::{JsonMap, JsonNumber, JsonValue};
use pi_session_types_macros::record;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A message `timestamp`: Unix milliseconds as a JSON number, kept as written; any other JSON
/// value is kept too (and reported by [`crate::parse_line`]).
pub type MessageTimestamp = MaybeTyped<JsonNumber>;

/// Content of a message: a plain string or a list of blocks, kept as whichever was written.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// `"content": "text"`.
    Text(String),
    /// `"content": [ {...}, ... ]`.
    Blocks(Vec<ContentBlock>),
    /// Anything else found in a file (e.g. `null`, which pi 1.6 normalises to `[]`), kept as is.
    Other(JsonValue),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match JsonValue::deserialize(deserializer)? {
            JsonValue::String(text) => Content::Text(text),
            JsonValue::Array(items) => {
                Content::Blocks(items.into_iter().map(ContentBlock::from_value).collect())
            }
            other => Content::Other(other),
        })
    }
}

impl Default for Content {
    fn default() -> Self {
        Content::Blocks(Vec::new())
    }
}

impl Content {
    /// The blocks, or an empty slice for string or other content.
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            Content::Blocks(blocks) => blocks,
            _ => &[],
        }
    }

    /// All text of the content: the string itself, or the `text` blocks joined with `sep`.
    pub fn joined_text(&self, sep: &str) -> String {
        match self {
            Content::Text(text) => text.clone(),
            Content::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(sep),
            Content::Other(_) => String::new(),
        }
    }
}

/// One block of message content, by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// `{"type":"text", "text", "textSignature"?}`.
    Text(TextBlock),
    /// `{"type":"thinking", "thinking", "thinkingSignature"?, "redacted"?, "itemId"?}`.
    Thinking(ThinkingBlock),
    /// `{"type":"image", "data", "mimeType", ...}`; `data` may be an omp blob reference.
    Image(ImageBlock),
    /// `{"type":"toolCall", "id", "name", "arguments", ...}`.
    ToolCall(ToolCallBlock),
    /// Any other block (omp's `redactedThinking`, `fallback`, `anthropicServerTool`, future
    /// types) or a known type whose fields did not match; kept as written.
    Unknown(UnknownBlock),
}

/// A content block this crate does not type (or could not), kept as its JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownBlock {
    /// The block exactly as parsed.
    pub value: JsonValue,
    /// Why a block of a known `type` could not be typed; `None` for unknown types.
    pub reason: Option<String>,
}

impl UnknownBlock {
    /// The block's `type` string, when it has one.
    pub fn kind(&self) -> Option<&str> {
        self.value.get("type").and_then(JsonValue::as_str)
    }
}

/// `text` block.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TextBlock {
    /// Always `"text"`.
    #[serde(rename = "type")]
    pub kind: tags::BlockText,
    /// The text.
    pub text: String,
    /// Provider-opaque signature (OpenAI Responses item id or `TextSignatureV1` JSON).
    pub text_signature: Option<String>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl TextBlock {
    /// A plain text block.
    pub fn new(text: impl Into<String>) -> Self {
        TextBlock {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// `thinking` block (model reasoning).
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ThinkingBlock {
    /// Always `"thinking"`.
    #[serde(rename = "type")]
    pub kind: tags::BlockThinking,
    /// The reasoning text (`"[Reasoning redacted]"` for pi's redacted thinking).
    pub thinking: String,
    /// Provider-opaque signature; may be `""` after an aborted Anthropic stream.
    pub thinking_signature: Option<String>,
    /// pi 1.6: true for redacted (encrypted) reasoning.
    pub redacted: Option<bool>,
    /// omp: OpenAI Responses output item id.
    pub item_id: Option<String>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `image` block.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ImageBlock {
    /// Always `"image"`.
    #[serde(rename = "type")]
    pub kind: tags::BlockImage,
    /// Base64 data, or omp's `"blob:sha256:<64 hex>"` reference to its blob store.
    pub data: String,
    /// MIME type, e.g. `"image/png"`.
    pub mime_type: String,
    /// omp: `"auto" | "low" | "high" | "original"`.
    pub detail: Option<String>,
    /// omp: provider-side file reference (opaque).
    pub provider_file: Option<JsonValue>,
    /// omp: image URL.
    pub url: Option<String>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// Prefix of omp's blob-store references in `image.data`.
pub const BLOB_REF_PREFIX: &str = "blob:sha256:";

impl ImageBlock {
    /// The lowercase hex SHA-256 when `data` is an omp blob reference (`blob:sha256:<64 hex>`).
    ///
    /// ```
    /// use pi_session_types::ImageBlock;
    /// let hex = "ab".repeat(32);
    /// let img = ImageBlock { data: format!("blob:sha256:{hex}"), ..Default::default() };
    /// assert_eq!(img.blob_ref(), Some(hex.as_str()));
    /// assert_eq!(ImageBlock { data: "iVBORw0".into(), ..Default::default() }.blob_ref(), None);
    /// ```
    pub fn blob_ref(&self) -> Option<&str> {
        let hex = self.data.strip_prefix(BLOB_REF_PREFIX)?;
        (hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then_some(hex)
    }
}

/// `toolCall` block: a tool call made by the assistant.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolCallBlock {
    /// Always `"toolCall"`.
    #[serde(rename = "type")]
    pub kind: tags::BlockToolCall,
    /// Call id (OpenAI Responses: `"<call_id>|<item_id>"`).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments, normally an object; kept as written.
    pub arguments: JsonValue,
    /// Google thought signature (opaque).
    pub thought_signature: Option<String>,
    /// pi 1.6: OpenAI Responses tool namespace.
    pub namespace: Option<String>,
    /// pi 1.6: why the arguments could not be parsed.
    pub arguments_error: Option<String>,
    /// omp: harness-level intent extracted from the arguments.
    pub intent: Option<String>,
    /// Unknown keys (omp's `rawBlock`, `customWireName`, `providerMetadata`, ...), kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

fn type_of(value: &JsonValue) -> Option<&str> {
    value.get("type").and_then(JsonValue::as_str)
}

/// For [`crate::field::moved_with`]: a list of blocks, taken out of the JSON (an empty list stays
/// in its place) and typed by move; `None` for any other value, which serde then reads as usual.
pub(crate) fn blocks_moved(
    slot: &mut JsonValue,
) -> Option<Result<Vec<ContentBlock>, serde_json::Error>> {
    match slot {
        JsonValue::Array(items) => Some(
            std::mem::take(items)
                .into_iter()
                .map(ContentBlock::from_value_moved)
                .collect(),
        ),
        _ => None,
    }
}

/// A record with a `content` field, for typing its blocks by move.
pub(crate) trait HasContent {
    /// The `content` field.
    fn content_mut(&mut self) -> &mut Content;
}

macro_rules! has_content {
    ($($ty:ty),*) => {
        $(impl HasContent for $ty {
            fn content_mut(&mut self) -> &mut Content {
                &mut self.content
            }
        })*
    };
}
has_content!(
    UserMessage,
    DeveloperMessage,
    SystemMessage,
    AssistantMessage,
    ToolResultMessage
);
impl<R> HasContent for CustomRoleMessage<R> {
    fn content_mut(&mut self) -> &mut Content {
        &mut self.content
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(ContentBlock::from_value(JsonValue::deserialize(
            deserializer,
        )?))
    }
}

impl ContentBlock {
    /// Types a block by moving its JSON; a known type whose fields do not match is an error.
    fn from_value_moved(value: JsonValue) -> Result<ContentBlock, serde_json::Error> {
        Ok(match type_of(&value) {
            Some("text") => ContentBlock::Text(serde_json::from_value(value)?),
            Some("thinking") => ContentBlock::Thinking(serde_json::from_value(value)?),
            Some("image") => ContentBlock::Image(serde_json::from_value(value)?),
            Some("toolCall") => ContentBlock::ToolCall(serde_json::from_value(value)?),
            _ => ContentBlock::Unknown(UnknownBlock {
                value,
                reason: None,
            }),
        })
    }

    /// Types a block from its JSON; never fails (falls back to [`ContentBlock::Unknown`]).
    pub fn from_value(value: JsonValue) -> ContentBlock {
        fn typed<T: for<'a> Deserialize<'a>>(
            value: JsonValue,
            wrap: fn(T) -> ContentBlock,
        ) -> ContentBlock {
            match T::deserialize(&value) {
                Ok(block) => wrap(block),
                Err(e) => ContentBlock::Unknown(UnknownBlock {
                    value,
                    reason: Some(e.to_string()),
                }),
            }
        }
        match type_of(&value) {
            Some("text") => typed(value, ContentBlock::Text),
            Some("thinking") => typed(value, ContentBlock::Thinking),
            Some("image") => typed(value, ContentBlock::Image),
            Some("toolCall") => typed(value, ContentBlock::ToolCall),
            _ => ContentBlock::Unknown(UnknownBlock {
                value,
                reason: None,
            }),
        }
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentBlock::Text(b) => b.serialize(serializer),
            ContentBlock::Thinking(b) => b.serialize(serializer),
            ContentBlock::Image(b) => b.serialize(serializer),
            ContentBlock::ToolCall(b) => b.serialize(serializer),
            ContentBlock::Unknown(b) => b.value.serialize(serializer),
        }
    }
}

/// `stopReason` of an assistant message. Unknown values are kept in [`StopReason::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum StopReason {
    /// `"stop"`: the model finished.
    Stop,
    /// `"length"`: output token limit hit.
    Length,
    /// `"toolUse"`: the turn ends in tool calls.
    ToolUse,
    /// `"error"`: the request failed.
    Error,
    /// `"aborted"`: the user or the harness aborted.
    Aborted,
    /// `"pending"` (pi 1.6).
    Pending,
    /// `"deferred"` (pi 1.6): result to be fetched later.
    Deferred,
    /// Any other string, kept as written.
    Other(String),
}

impl StopReason {
    /// The string as written in the file.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Pending => "pending",
            StopReason::Deferred => "deferred",
            StopReason::Other(s) => s,
        }
    }
}

impl From<&str> for StopReason {
    fn from(value: &str) -> Self {
        match value {
            "stop" => StopReason::Stop,
            "length" => StopReason::Length,
            "toolUse" => StopReason::ToolUse,
            "error" => StopReason::Error,
            "aborted" => StopReason::Aborted,
            "pending" => StopReason::Pending,
            "deferred" => StopReason::Deferred,
            other => StopReason::Other(other.to_string()),
        }
    }
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StopReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(deserializer)?;
        Ok(StopReason::from(text.as_ref()))
    }
}

/// rho's `attachments` item on a user message (also accepts pi v1's attachment shape).
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Attachment {
    /// rho: `"image" | "text" | "pdf" | "file"`.
    pub kind: Option<String>,
    /// rho: file name.
    pub name: Option<String>,
    /// rho: file path.
    pub path: Option<String>,
    /// MIME type (rho and pi v1).
    pub mime_type: Option<String>,
    /// rho: one line about the file for the model.
    pub about: Option<String>,
    /// rho: PDF page count, when known.
    pub pages: Option<JsonNumber>,
    /// pi v1: attachment id.
    pub id: Option<String>,
    /// pi v1: `"image" | "document"`.
    #[serde(rename = "type")]
    pub kind_v1: Option<String>,
    /// pi v1: file name.
    pub file_name: Option<String>,
    /// pi v1: size in bytes.
    pub size: Option<JsonNumber>,
    /// pi v1: base64 content.
    pub content: Option<String>,
    /// pi v1: text extracted from a document.
    pub extracted_text: Option<String>,
    /// pi v1: preview.
    pub preview: Option<String>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"user"`: a user prompt (pi, omp and rho fields).
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UserMessage {
    /// Always `"user"`.
    pub role: tags::RoleUser,
    /// Text or text/image blocks.
    pub content: Content,
    /// omp: injected by the system (e.g. auto-continue).
    pub synthetic: Option<bool>,
    /// omp and rho: sent while the agent was running (a steer).
    pub steering: Option<bool>,
    /// omp: time of a client-side history rewrite this message represents.
    pub history_rewrite_at: Option<JsonNumber>,
    /// omp and rho: `"user" | "agent"`.
    pub attribution: Option<String>,
    /// omp: provider-opaque payload.
    pub provider_payload: Option<JsonValue>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// rho (and pi v1): attachments described by this message.
    pub attachments: Option<Vec<Attachment>>,
    /// rho: id of a question another node's agent asked.
    pub ask: Option<JsonValue>,
    /// rho: the node that asked (`ask`).
    pub from: Option<String>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"developer"` (omp): harness instructions mid-conversation.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeveloperMessage {
    /// Always `"developer"`.
    pub role: tags::RoleDeveloper,
    /// Text or text/image blocks.
    pub content: Content,
    /// `"user" | "agent"`.
    pub attribution: Option<String>,
    /// Injected by the system.
    pub synthetic: Option<bool>,
    /// A deliberate operator action.
    pub user_initiated: Option<bool>,
    /// Provider-opaque payload.
    pub provider_payload: Option<JsonValue>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"system"` (pi 1.6): the system prompt and tool loadout, replayed in order.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SystemMessage {
    /// Always `"system"`.
    pub role: tags::RoleSystem,
    /// Instruction text: a string or text blocks.
    pub content: Content,
    /// Named sections patched by name; `null` deletes one.
    pub sections: Option<JsonMap>,
    /// Tool definitions that become available (`{name, description, parameters, ...}`).
    pub tools_added: Option<Vec<JsonValue>>,
    /// Tools that stop being available (`{name}`).
    pub tools_removed: Option<Vec<JsonValue>>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"assistant"`: a model response (every field of both dialects).
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AssistantMessage {
    /// Always `"assistant"`.
    pub role: tags::RoleAssistant,
    /// Text, thinking, tool-call (and omp image/opaque) blocks.
    pub content: Content,
    /// Wire API, e.g. `"anthropic-messages"`.
    pub api: Option<String>,
    /// Provider id, e.g. `"anthropic"`.
    pub provider: Option<String>,
    /// Model id as requested.
    pub model: Option<String>,
    /// Token usage and cost.
    pub usage: Option<Usage>,
    /// Why the turn ended.
    pub stop_reason: Option<StopReason>,
    /// Unix milliseconds when the request started, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Provider response id.
    pub response_id: Option<String>,
    /// pi: concrete model reported by the provider.
    pub response_model: Option<String>,
    /// Error text of a failed or aborted turn.
    pub error_message: Option<String>,
    /// omp: request duration in ms.
    pub duration: Option<JsonNumber>,
    /// omp: time to first token in ms.
    pub ttft: Option<JsonNumber>,
    /// omp: Unix ms when the response completed.
    pub completed_at: Option<JsonNumber>,
    /// omp: context accounting snapshot (opaque).
    pub context_snapshot: Option<JsonValue>,
    /// pi 1.6: provider-native effort level.
    pub provider_thinking_level: Option<String>,
    /// pi 1.6: thinking level the loop requested.
    pub thinking_level: Option<String>,
    /// pi: redacted diagnostics (opaque array).
    pub diagnostics: Option<JsonValue>,
    /// omp: how an automatic retry settled this failed turn (opaque object).
    pub retry_recovery: Option<JsonValue>,
    /// omp: upstream provider behind an aggregator.
    pub upstream_provider: Option<String>,
    /// omp: concrete upstream model.
    pub upstream_model: Option<String>,
    /// omp: stop details object or `null`.
    pub stop_details: Field<JsonValue>,
    /// pi 1.6: handle of a deferred result (opaque).
    pub deferred: Option<JsonValue>,
    /// pi 1.6: raw provider stop reason.
    pub raw_stop_reason: Option<String>,
    /// pi 1.6: the model explicitly ended its turn.
    pub end_turn: Option<bool>,
    /// omp: classification text of the error.
    pub error_classification_message: Option<String>,
    /// omp: HTTP status of a failed request.
    pub error_status: Option<JsonNumber>,
    /// omp: error classification bit flags.
    pub error_id: Option<JsonNumber>,
    /// omp: provider-opaque payload.
    pub provider_payload: Option<JsonValue>,
    /// pi 1.6: duration in ms.
    pub duration_ms: Option<JsonNumber>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"toolResult"`: the result of one tool call.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolResultMessage {
    /// Always `"toolResult"`.
    pub role: tags::RoleToolResult,
    /// Id of the tool call this answers.
    pub tool_call_id: Option<String>,
    /// Name of the tool.
    pub tool_name: Option<String>,
    /// Text/image blocks (kept as written, even a string).
    pub content: Content,
    /// Tool-specific details (opaque, never sent to the model).
    pub details: Option<JsonValue>,
    /// True when the tool failed.
    pub is_error: Option<bool>,
    /// omp: `"user" | "agent"`.
    pub attribution: Option<String>,
    /// omp: time the output was pruned.
    pub pruned_at: Option<JsonNumber>,
    /// omp: provider-native replay metadata (opaque).
    pub provider_metadata: Option<JsonValue>,
    /// omp: result carries nothing worth keeping.
    pub useless: Option<bool>,
    /// pi 1.6: usage of nested model calls.
    pub usage: Option<Usage>,
    /// pi 1.6: nested calls (opaque).
    pub nested_calls: Option<JsonValue>,
    /// pi 1.6: duration in ms.
    pub duration_ms: Option<JsonNumber>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl ToolResultMessage {
    /// `isError`, false when absent.
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
}

/// `role:"bashExecution"`: a `!cmd` run by the user.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BashExecutionMessage {
    /// Always `"bashExecution"`.
    pub role: tags::RoleBashExecution,
    /// The command line.
    pub command: Option<String>,
    /// Captured output.
    pub output: Option<String>,
    /// Exit code; absent when killed or cancelled.
    pub exit_code: Field<JsonNumber>,
    /// Cancelled by the user.
    pub cancelled: Option<bool>,
    /// Output was truncated.
    pub truncated: Option<bool>,
    /// pi: path of the full output file.
    pub full_output_path: Field<String>,
    /// omp: terminal images.
    pub images: Option<Vec<ContentBlock>>,
    /// omp: output metadata (opaque).
    pub meta: Option<JsonValue>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// `!!` prefix: keep out of the model context.
    pub exclude_from_context: Option<bool>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"pythonExecution"` (omp): a `$code` run by the user.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PythonExecutionMessage {
    /// Always `"pythonExecution"`.
    pub role: tags::RolePythonExecution,
    /// The code.
    pub code: Option<String>,
    /// Captured output.
    pub output: Option<String>,
    /// Exit code, when known.
    pub exit_code: Field<JsonNumber>,
    /// Cancelled by the user.
    pub cancelled: Option<bool>,
    /// Output was truncated.
    pub truncated: Option<bool>,
    /// Output metadata (opaque).
    pub meta: Option<JsonValue>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Keep out of the model context.
    pub exclude_from_context: Option<bool>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"fileMention"` (omp): files auto-read for an `@file` mention.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileMentionMessage {
    /// Always `"fileMention"`.
    pub role: tags::RoleFileMention,
    /// `{path, content, lineCount?, byteSize?, skippedReason?, image?}` items (kept as JSON).
    pub files: Option<Vec<JsonValue>>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"custom"` (and legacy `hookMessage`): an extension message.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CustomRoleMessage<R> {
    /// `"custom"` or `"hookMessage"`.
    pub role: R,
    /// Extension-defined type.
    pub custom_type: Option<String>,
    /// Text or text/image blocks.
    pub content: Content,
    /// Shown in the UI.
    pub display: Option<bool>,
    /// Extension details (opaque).
    pub details: Option<JsonValue>,
    /// omp: `"user" | "agent"`.
    pub attribution: Option<String>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"custom"` message.
pub type CustomMessage = CustomRoleMessage<tags::RoleCustom>;
/// Legacy `role:"hookMessage"` message (renamed to `custom` by the v2→v3 migration).
pub type HookMessage = CustomRoleMessage<tags::RoleHookMessage>;

/// `role:"branchSummary"`: normally only built in memory from `branch_summary` entries.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BranchSummaryMessage {
    /// Always `"branchSummary"`.
    pub role: tags::RoleBranchSummary,
    /// Summary text.
    pub summary: Option<String>,
    /// Entry the branch was left from (`null` allowed in pi 1.6).
    pub from_id: Field<String>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// `role:"compactionSummary"`: normally only built in memory from `compaction` entries.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompactionSummaryMessage {
    /// Always `"compactionSummary"`.
    pub role: tags::RoleCompactionSummary,
    /// Summary text.
    pub summary: Option<String>,
    /// Tokens before compaction.
    pub tokens_before: Option<JsonNumber>,
    /// Unix milliseconds, kept as written.
    pub timestamp: Option<MessageTimestamp>,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// A message whose role is unknown, or that could not be typed; kept as its JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownMessage {
    /// The message exactly as parsed (any JSON value).
    pub value: JsonValue,
    /// Why a message with a known role could not be typed; `None` for unknown roles.
    pub reason: Option<String>,
}

impl UnknownMessage {
    /// The `role` string, when there is one.
    pub fn role(&self) -> Option<&str> {
        self.value.get("role").and_then(JsonValue::as_str)
    }
}

/// `message.message` of a `message` entry, by `role`.
///
/// `#[non_exhaustive]`: a future release adds roles, so a match outside this crate needs a `_`
/// arm (an unknown role is [`AgentMessage::Unknown`] until the schema learns it).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AgentMessage {
    /// `role:"user"`.
    User(UserMessage),
    /// `role:"developer"` (omp).
    Developer(DeveloperMessage),
    /// `role:"system"` (pi 1.6).
    System(SystemMessage),
    /// `role:"assistant"`.
    Assistant(AssistantMessage),
    /// `role:"toolResult"`.
    ToolResult(ToolResultMessage),
    /// `role:"bashExecution"`.
    BashExecution(BashExecutionMessage),
    /// `role:"pythonExecution"` (omp).
    PythonExecution(PythonExecutionMessage),
    /// `role:"fileMention"` (omp).
    FileMention(FileMentionMessage),
    /// `role:"custom"`.
    Custom(CustomMessage),
    /// `role:"hookMessage"` (legacy).
    HookMessage(HookMessage),
    /// `role:"branchSummary"`.
    BranchSummary(BranchSummaryMessage),
    /// `role:"compactionSummary"`.
    CompactionSummary(CompactionSummaryMessage),
    /// Any other role, or a message that could not be typed.
    Unknown(UnknownMessage),
}

impl AgentMessage {
    /// The `role` string as written (for unknown messages, when present).
    pub fn role(&self) -> Option<&str> {
        Some(match self {
            AgentMessage::User(_) => tags::RoleUser::VALUE,
            AgentMessage::Developer(_) => tags::RoleDeveloper::VALUE,
            AgentMessage::System(_) => tags::RoleSystem::VALUE,
            AgentMessage::Assistant(_) => tags::RoleAssistant::VALUE,
            AgentMessage::ToolResult(_) => tags::RoleToolResult::VALUE,
            AgentMessage::BashExecution(_) => tags::RoleBashExecution::VALUE,
            AgentMessage::PythonExecution(_) => tags::RolePythonExecution::VALUE,
            AgentMessage::FileMention(_) => tags::RoleFileMention::VALUE,
            AgentMessage::Custom(_) => tags::RoleCustom::VALUE,
            AgentMessage::HookMessage(_) => tags::RoleHookMessage::VALUE,
            AgentMessage::BranchSummary(_) => tags::RoleBranchSummary::VALUE,
            AgentMessage::CompactionSummary(_) => tags::RoleCompactionSummary::VALUE,
            AgentMessage::Unknown(u) => return u.role(),
        })
    }

    /// The message `timestamp` (Unix ms) as written, when present and a number.
    pub fn timestamp(&self) -> Option<&JsonNumber> {
        match self {
            AgentMessage::Unknown(u) => match u.value.get("timestamp") {
                Some(JsonValue::Number(n)) => Some(n),
                _ => None,
            },
            _ => self.timestamp_field().and_then(MaybeTyped::typed),
        }
    }

    /// The message `timestamp` in Unix milliseconds, when present and a number.
    pub fn timestamp_ms(&self) -> Option<f64> {
        self.timestamp().and_then(JsonNumber::as_f64)
    }

    /// The message `timestamp` field as written (number or, in odd files, anything else).
    pub fn timestamp_field(&self) -> Option<&MessageTimestamp> {
        match self {
            AgentMessage::User(m) => m.timestamp.as_ref(),
            AgentMessage::Developer(m) => m.timestamp.as_ref(),
            AgentMessage::System(m) => m.timestamp.as_ref(),
            AgentMessage::Assistant(m) => m.timestamp.as_ref(),
            AgentMessage::ToolResult(m) => m.timestamp.as_ref(),
            AgentMessage::BashExecution(m) => m.timestamp.as_ref(),
            AgentMessage::PythonExecution(m) => m.timestamp.as_ref(),
            AgentMessage::FileMention(m) => m.timestamp.as_ref(),
            AgentMessage::Custom(m) => m.timestamp.as_ref(),
            AgentMessage::HookMessage(m) => m.timestamp.as_ref(),
            AgentMessage::BranchSummary(m) => m.timestamp.as_ref(),
            AgentMessage::CompactionSummary(m) => m.timestamp.as_ref(),
            AgentMessage::Unknown(_) => None,
        }
    }

    /// The content, for roles that have one.
    pub fn content(&self) -> Option<&Content> {
        match self {
            AgentMessage::User(m) => Some(&m.content),
            AgentMessage::Developer(m) => Some(&m.content),
            AgentMessage::System(m) => Some(&m.content),
            AgentMessage::Assistant(m) => Some(&m.content),
            AgentMessage::ToolResult(m) => Some(&m.content),
            AgentMessage::Custom(m) => Some(&m.content),
            AgentMessage::HookMessage(m) => Some(&m.content),
            _ => None,
        }
    }

    /// Why this message or one of its blocks could not be typed (for warnings), if so.
    pub fn fallback_reasons(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        if let AgentMessage::Unknown(UnknownMessage {
            reason: Some(reason),
            ..
        }) = self
        {
            reasons.push(format!("message kept untyped: {reason}"));
        }
        if let Some(Content::Blocks(blocks)) = self.content() {
            for block in blocks {
                if let ContentBlock::Unknown(UnknownBlock {
                    reason: Some(reason),
                    value,
                }) = block
                {
                    let kind = type_of(value).unwrap_or("?");
                    reasons.push(format!("content block {kind:?} kept untyped: {reason}"));
                }
            }
        }
        reasons
    }
}

impl Default for AgentMessage {
    /// An empty user message (useful with struct-update syntax).
    fn default() -> Self {
        AgentMessage::User(UserMessage::default())
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(AgentMessage::from_value(JsonValue::deserialize(
            deserializer,
        )?))
    }
}

impl AgentMessage {
    /// Types a message by moving its JSON, its content blocks and images too; a known role whose
    /// fields (or blocks) do not match is an error. (Used by [`crate::parse_line`]'s one pass.)
    pub(crate) fn from_value_moved(value: JsonValue) -> Result<AgentMessage, serde_json::Error> {
        use serde_json::from_value as typed;
        /// The record, with a `content` list typed block by block by move.
        fn with_content<T: serde::de::DeserializeOwned + HasContent>(
            value: JsonValue,
        ) -> Result<T, serde_json::Error> {
            crate::field::moved_with(value, "content", blocks_moved, |m: &mut T, blocks| {
                *m.content_mut() = Content::Blocks(blocks);
            })
        }
        let role = value.get("role").and_then(JsonValue::as_str);
        Ok(match role {
            Some("user") => AgentMessage::User(with_content(value)?),
            Some("developer") => AgentMessage::Developer(with_content(value)?),
            Some("system") => AgentMessage::System(with_content(value)?),
            Some("assistant") => AgentMessage::Assistant(with_content(value)?),
            Some("toolResult") => AgentMessage::ToolResult(with_content(value)?),
            Some("bashExecution") => AgentMessage::BashExecution(crate::field::moved_with(
                value,
                "images",
                blocks_moved,
                |m: &mut BashExecutionMessage, blocks| m.images = Some(blocks),
            )?),
            Some("pythonExecution") => AgentMessage::PythonExecution(typed(value)?),
            Some("fileMention") => AgentMessage::FileMention(typed(value)?),
            Some("custom") => AgentMessage::Custom(with_content(value)?),
            Some("hookMessage") => AgentMessage::HookMessage(with_content(value)?),
            Some("branchSummary") => AgentMessage::BranchSummary(typed(value)?),
            Some("compactionSummary") => AgentMessage::CompactionSummary(typed(value)?),
            _ => AgentMessage::Unknown(UnknownMessage {
                value,
                reason: None,
            }),
        })
    }

    /// Types a message from its JSON; never fails (falls back to [`AgentMessage::Unknown`]).
    pub fn from_value(value: JsonValue) -> Self {
        fn typed<T: for<'a> Deserialize<'a>>(
            value: JsonValue,
            wrap: fn(T) -> AgentMessage,
        ) -> AgentMessage {
            match T::deserialize(&value) {
                Ok(message) => wrap(message),
                Err(e) => AgentMessage::Unknown(UnknownMessage {
                    value,
                    reason: Some(e.to_string()),
                }),
            }
        }
        let role = value.get("role").and_then(JsonValue::as_str);
        match role {
            Some("user") => typed(value, AgentMessage::User),
            Some("developer") => typed(value, AgentMessage::Developer),
            Some("system") => typed(value, AgentMessage::System),
            Some("assistant") => typed(value, AgentMessage::Assistant),
            Some("toolResult") => typed(value, AgentMessage::ToolResult),
            Some("bashExecution") => typed(value, AgentMessage::BashExecution),
            Some("pythonExecution") => typed(value, AgentMessage::PythonExecution),
            Some("fileMention") => typed(value, AgentMessage::FileMention),
            Some("custom") => typed(value, AgentMessage::Custom),
            Some("hookMessage") => typed(value, AgentMessage::HookMessage),
            Some("branchSummary") => typed(value, AgentMessage::BranchSummary),
            Some("compactionSummary") => typed(value, AgentMessage::CompactionSummary),
            _ => AgentMessage::Unknown(UnknownMessage {
                value,
                reason: None,
            }),
        }
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            AgentMessage::User(m) => m.serialize(serializer),
            AgentMessage::Developer(m) => m.serialize(serializer),
            AgentMessage::System(m) => m.serialize(serializer),
            AgentMessage::Assistant(m) => m.serialize(serializer),
            AgentMessage::ToolResult(m) => m.serialize(serializer),
            AgentMessage::BashExecution(m) => m.serialize(serializer),
            AgentMessage::PythonExecution(m) => m.serialize(serializer),
            AgentMessage::FileMention(m) => m.serialize(serializer),
            AgentMessage::Custom(m) => m.serialize(serializer),
            AgentMessage::HookMessage(m) => m.serialize(serializer),
            AgentMessage::BranchSummary(m) => m.serialize(serializer),
            AgentMessage::CompactionSummary(m) => m.serialize(serializer),
            AgentMessage::Unknown(u) => u.value.serialize(serializer),
        }
    }
}
