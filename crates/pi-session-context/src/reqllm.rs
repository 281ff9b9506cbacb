//! Rust mirrors of req_llm's `ReqLLM.Message`, `ReqLLM.Message.ContentPart`
//! and `ReqLLM.ToolCall`, and their JSON renderings.
//!
//! The canonical ("full") rendering is what `Jason.encode!(messages)` gives in
//! Elixir for the same structs: every field present, `nil` as `null`, keys
//! sorted at every level, binary `data` as padded standard base64. It is the
//! golden form, comparable byte for byte with rho's own output. The compact
//! rendering leaves out `null`s, empty `metadata` and unused part fields.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use pi_session_types::js_string::JsString;
use serde::ser::SerializeMap as _;
use serde_json::{Map, Value};

/// `ReqLLM.Message.role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// `:user`
    User,
    /// `:assistant`
    Assistant,
    /// `:system`
    System,
    /// `:tool` (a tool result)
    Tool,
}

impl Role {
    /// The atom's name, as Jason writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }
}

/// `ReqLLM.Message.ContentPart.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartType {
    /// `:text`
    Text,
    /// `:image_url`
    ImageUrl,
    /// `:image` (inline bytes)
    Image,
    /// `:file` (inline bytes; PDFs here)
    File,
    /// `:thinking` (text in `text`)
    Thinking,
}

impl PartType {
    /// The atom's name, as Jason writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            PartType::Text => "text",
            PartType::ImageUrl => "image_url",
            PartType::Image => "image",
            PartType::File => "file",
            PartType::Thinking => "thinking",
        }
    }
}

/// `ReqLLM.Message.ContentPart`: one piece of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentPart {
    /// What kind of part this is.
    pub kind: PartType,
    /// Text of a text or thinking part: as read from a session's line, `JSON.stringify`'s
    /// spelling of it, written as it is ([`JsString`]); decoded when looked at.
    pub text: Option<JsString>,
    /// URL of an `image_url` part.
    pub url: Option<String>,
    /// Raw bytes of an image or file part (base64-encoded when rendered).
    pub data: Option<Vec<u8>>,
    /// Provider file id (never set by the projection).
    pub file_id: Option<String>,
    /// MIME type of an image or file part.
    pub media_type: Option<String>,
    /// File name of a file part.
    pub filename: Option<String>,
    /// Part metadata; rho sets `{"pages": n | null}` on PDF parts.
    pub metadata: Map<String, Value>,
}

impl ContentPart {
    fn empty(kind: PartType) -> Self {
        ContentPart {
            kind,
            text: None,
            url: None,
            data: None,
            file_id: None,
            media_type: None,
            filename: None,
            metadata: Map::new(),
        }
    }

    /// `ContentPart.text(t)`.
    pub fn text(text: impl Into<JsString>) -> Self {
        ContentPart {
            text: Some(text.into()),
            ..Self::empty(PartType::Text)
        }
    }

    /// `ContentPart.thinking(t)`.
    pub fn thinking(text: impl Into<JsString>) -> Self {
        ContentPart {
            text: Some(text.into()),
            ..Self::empty(PartType::Thinking)
        }
    }

    /// `ContentPart.image(bytes, media_type)`.
    pub fn image(bytes: Vec<u8>, media_type: Option<String>) -> Self {
        ContentPart {
            data: Some(bytes),
            media_type,
            ..Self::empty(PartType::Image)
        }
    }

    /// `ContentPart.image_url(url)`.
    pub fn image_url(url: impl Into<String>) -> Self {
        ContentPart {
            url: Some(url.into()),
            ..Self::empty(PartType::ImageUrl)
        }
    }

    /// `ContentPart.file(bytes, filename, media_type, metadata)`.
    pub fn file(
        bytes: Vec<u8>,
        filename: impl Into<String>,
        media_type: impl Into<String>,
        metadata: Map<String, Value>,
    ) -> Self {
        ContentPart {
            data: Some(bytes),
            filename: Some(filename.into()),
            media_type: Some(media_type.into()),
            metadata,
            ..Self::empty(PartType::File)
        }
    }

    /// The text of a text part, else `None`.
    pub fn as_text(&self) -> Option<&str> {
        match self.kind {
            PartType::Text => self.text.as_deref(),
            _ => None,
        }
    }

    /// `data` as padded standard base64.
    pub fn data_base64(&self) -> Option<String> {
        self.data.as_ref().map(|bytes| STANDARD.encode(bytes))
    }

    /// The full rendering: all 8 keys, sorted (its `Serialize`, as a value).
    pub fn to_canonical_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The compact rendering: `type` first, then only the fields in use.
    pub fn to_compact_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("type".into(), Value::String(self.kind.as_str().into()));
        let mut put = |key: &str, value: Option<String>| {
            if let Some(value) = value {
                map.insert(key.into(), Value::String(value));
            }
        };
        put("text", self.text.clone().map(JsString::into_string));
        put("url", self.url.clone());
        put("file_id", self.file_id.clone());
        put("filename", self.filename.clone());
        put("media_type", self.media_type.clone());
        put("data", self.data_base64());
        if !self.metadata.is_empty() {
            map.insert("metadata".into(), Value::Object(self.metadata.clone()));
        }
        Value::Object(map)
    }
}

/// `ReqLLM.ToolCall`: `{id, type: "function", function: {name, arguments}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call id, answered by a tool message's `tool_call_id`.
    pub id: String,
    /// The tool's name; `None` (JSON `null`) when the call had none, as rho's
    /// `ToolCall.new(id, nil, …)` gives.
    pub name: Option<String>,
    /// The arguments as a JSON string (rho re-encodes them with sorted keys).
    pub arguments: String,
}

impl ToolCall {
    /// The canonical rendering (keys sorted; its `Serialize`, as a value).
    pub fn to_canonical_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl serde::Serialize for ToolCall {
    /// Serialises the canonical rendering: `{function: {arguments, name}, id, type}`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Function<'a>(&'a ToolCall);
        impl serde::Serialize for Function<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("arguments", &self.0.arguments)?;
                map.serialize_entry("name", &self.0.name)?;
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("function", &Function(self))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("type", "function")?;
        map.end()
    }
}

/// `ReqLLM.Message`.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The content parts (always a list in req_llm 1.x).
    pub content: Vec<ContentPart>,
    /// The tool's name on tool results; `None` elsewhere.
    pub name: Option<String>,
    /// The answered call on tool results.
    pub tool_call_id: Option<String>,
    /// Calls of an assistant turn; `None` when there are none (req_llm
    /// normalises `[]` to `nil`).
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Message metadata (rho never sets it).
    pub metadata: Map<String, Value>,
}

impl Message {
    /// `Context.user(text)`: one text part, no trimming.
    pub fn user_text(text: impl Into<JsString>) -> Self {
        Self::user(vec![ContentPart::text(text)])
    }

    /// `Context.user(parts)`.
    pub fn user(content: Vec<ContentPart>) -> Self {
        Message {
            role: Role::User,
            content,
            name: None,
            tool_call_id: None,
            tool_calls: None,
            metadata: Map::new(),
        }
    }

    /// `Context.system(text)`.
    pub fn system_text(text: impl Into<JsString>) -> Self {
        Message {
            role: Role::System,
            ..Self::user_text(text)
        }
    }

    /// `Context.assistant(text, tool_calls: calls)`: whitespace-only text gives
    /// no content part, and no calls give `tool_calls: nil`.
    pub fn assistant(text: impl Into<JsString>, calls: Vec<ToolCall>) -> Self {
        let text = text.into();
        let content = if text.is_blank() {
            Vec::new()
        } else {
            vec![ContentPart::text(text)]
        };
        Message {
            role: Role::Assistant,
            content,
            name: None,
            tool_call_id: None,
            tool_calls: if calls.is_empty() { None } else { Some(calls) },
            metadata: Map::new(),
        }
    }

    /// `Context.tool_result(id, name, parts)`.
    pub fn tool_result(
        id: impl Into<String>,
        name: Option<String>,
        content: Vec<ContentPart>,
    ) -> Self {
        Message {
            role: Role::Tool,
            content,
            name,
            tool_call_id: Some(id.into()),
            tool_calls: None,
            metadata: Map::new(),
        }
    }

    /// The text parts concatenated (no separator).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(ContentPart::as_text)
            .collect()
    }

    /// The full rendering: all 7 keys, sorted, as `Jason.encode!` writes the struct (its
    /// `Serialize`, as a value).
    pub fn to_canonical_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The compact rendering: `role`, `content`, then only what is set.
    pub fn to_compact_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("role".into(), Value::String(self.role.as_str().into()));
        map.insert(
            "content".into(),
            Value::Array(
                self.content
                    .iter()
                    .map(ContentPart::to_compact_json)
                    .collect(),
            ),
        );
        if let Some(name) = &self.name {
            map.insert("name".into(), Value::String(name.clone()));
        }
        if let Some(id) = &self.tool_call_id {
            map.insert("tool_call_id".into(), Value::String(id.clone()));
        }
        if let Some(calls) = &self.tool_calls {
            map.insert(
                "tool_calls".into(),
                Value::Array(calls.iter().map(ToolCall::to_canonical_json).collect()),
            );
        }
        if !self.metadata.is_empty() {
            map.insert("metadata".into(), Value::Object(self.metadata.clone()));
        }
        Value::Object(map)
    }
}

/// A message given to a function that takes it lent or given (`impl Into<Cow<Message>>`: the
/// provider streams), which then owns it.
impl From<Message> for std::borrow::Cow<'_, Message> {
    fn from(message: Message) -> Self {
        std::borrow::Cow::Owned(message)
    }
}

/// A message lent to a function that takes it lent or given, which copies what it keeps.
impl<'m> From<&'m Message> for std::borrow::Cow<'m, Message> {
    fn from(message: &'m Message) -> Self {
        std::borrow::Cow::Borrowed(message)
    }
}

impl serde::Serialize for Message {
    /// Serialises the canonical (full) form, written straight from the message: all 7 keys,
    /// sorted, `nil` as `null`, the parts and calls in their canonical forms.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(7))?;
        map.serialize_entry("content", &self.content)?;
        map.serialize_entry("metadata", &Sorted(&self.metadata))?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("reasoning_details", &())?;
        map.serialize_entry("role", self.role.as_str())?;
        map.serialize_entry("tool_call_id", &self.tool_call_id)?;
        map.serialize_entry("tool_calls", &self.tool_calls)?;
        map.end()
    }
}

impl serde::Serialize for ContentPart {
    /// Serialises the canonical (full) form: all 8 keys, sorted, `data` as padded standard
    /// base64.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(8))?;
        map.serialize_entry("data", &self.data_base64())?;
        map.serialize_entry("file_id", &self.file_id)?;
        map.serialize_entry("filename", &self.filename)?;
        map.serialize_entry("media_type", &self.media_type)?;
        map.serialize_entry("metadata", &Sorted(&self.metadata))?;
        map.serialize_entry("text", &self.text)?;
        map.serialize_entry("type", self.kind.as_str())?;
        map.serialize_entry("url", &self.url)?;
        map.end()
    }
}

/// The canonical JSON array of a projection (rho-reqllm.md §C.1 full form).
pub fn to_canonical_json(messages: &[Message]) -> Value {
    Value::Array(messages.iter().map(Message::to_canonical_json).collect())
}

/// The compact JSON array of a projection.
pub fn to_compact_json(messages: &[Message]) -> Value {
    Value::Array(messages.iter().map(Message::to_compact_json).collect())
}

/// A JSON object written with its keys sorted at every level, as Jason writes Elixir maps:
/// the map itself, no sorted copy made of it.
pub(crate) struct Sorted<'a>(pub(crate) &'a Map<String, Value>);

impl serde::Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut members: Vec<(&String, &Value)> = self.0.iter().collect();
        members.sort_unstable_by_key(|(key, _)| *key);
        let mut map = serializer.serialize_map(Some(members.len()))?;
        for (key, value) in members {
            map.serialize_entry(key, &SortedValue(value))?;
        }
        map.end()
    }
}

/// [`Sorted`] for any JSON value.
pub(crate) struct SortedValue<'a>(pub(crate) &'a Value);

impl serde::Serialize for SortedValue<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => Sorted(map).serialize(serializer),
            Value::Array(items) => serializer.collect_seq(items.iter().map(SortedValue)),
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_message_has_every_key_sorted() {
        let json = serde_json::to_string(&Message::user_text("hi").to_canonical_json()).unwrap();
        assert_eq!(
            json,
            r#"{"content":[{"data":null,"file_id":null,"filename":null,"media_type":null,"metadata":{},"text":"hi","type":"text","url":null}],"metadata":{},"name":null,"reasoning_details":null,"role":"user","tool_call_id":null,"tool_calls":null}"#
        );
    }

    #[test]
    fn canonical_parts_and_calls_are_written_with_every_key_sorted() {
        let metadata: Map<String, Value> =
            serde_json::from_str(r#"{"pages":2,"b":{"z":1,"a":[{"y":0,"x":1}]}}"#).unwrap();
        let mut message = Message::assistant(
            "done",
            vec![ToolCall {
                id: "c1".into(),
                name: None,
                arguments: "{}".into(),
            }],
        );
        message.content.push(ContentPart::file(
            vec![1, 2, 3],
            "a.pdf",
            "application/pdf",
            metadata,
        ));
        let json = serde_json::to_string(&message).unwrap();
        assert_eq!(
            json,
            r#"{"content":[{"data":null,"file_id":null,"filename":null,"media_type":null,"metadata":{},"text":"done","type":"text","url":null},{"data":"AQID","file_id":null,"filename":"a.pdf","media_type":"application/pdf","metadata":{"b":{"a":[{"x":1,"y":0}],"z":1},"pages":2},"text":null,"type":"file","url":null}],"metadata":{},"name":null,"reasoning_details":null,"role":"assistant","tool_call_id":null,"tool_calls":[{"function":{"arguments":"{}","name":null},"id":"c1","type":"function"}]}"#
        );
        assert_eq!(
            serde_json::to_string(&message.to_canonical_json()).unwrap(),
            json
        );
    }

    #[test]
    fn assistant_trims_for_emptiness_and_normalises_calls() {
        let m = Message::assistant(" \n", vec![]);
        assert!(m.content.is_empty());
        assert!(m.tool_calls.is_none());
    }
}
