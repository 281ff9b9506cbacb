//! An entry's planning facts and size estimates from borrowed passes over its line, without
//! building its JSON value.
//!
//! The planner's first pass ([`super::plan`]) needs of every entry only its id, kind, tool-call
//! links and phase ([`Facts`]), and of the entries it may send the sizes
//! [`estimate`](super::estimate::estimate) gives at each level ([`Sketch`]); it renders only the
//! entries it keeps. Parsing every line into a [`JsonValue`] to read those (every key, every
//! thinking text and signature, every usage record allocated, hashed and freed) cost more than
//! the rest of the plan. [`Facts::of_line`] deserializes the line into borrowed structs holding
//! the ids, role and calls only (every text skipped unparsed): it is read of every line.
//! [`Sketch::of_line`] holds only the fields the estimator reads (texts as `&str` into the line
//! when they have no escapes; everything else skipped unparsed), and computes the estimates of
//! every level from them by the estimator's own rules (`estimate.rs`'s helpers and the
//! renderer's summary lines), so that [`Sketch::estimate`] equals `estimate` on the parsed
//! entry: a test checks it on every fixture and corpus entry at every level. The planner
//! sketches only the lines whose sizes can change its plan (newest turns first, see
//! `Ladder::evicts_all_before`).
//!
//! A line either cannot read as the parse would (a line that is not UTF-8, not an object, a
//! field of an unexpected type, a repeated key) gives `None`, and the planner parses that entry
//! instead.

use std::borrow::Cow;
use std::fmt;

use pi_session_types::js::fields;
use pi_session_types::view::{BlockRef, EntryRef, MessageRef};
use pi_session_types::{JsonMap, JsonValue};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Resolution;
use super::estimate::{NOTE_BYTES, cut_arguments_len, json_len, outlined_len, piece};
use super::phase::{PhaseInput, call_phase, runs_checks};
use super::render::{
    Said, call_outline, write_assistant_summary, write_content_summary, write_result_summary,
    written, written_len,
};
use crate::stats::{BYTES_PER_TOKEN, PICTURE_TOKENS};

/// A JSON string, borrowed from the line when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

type Str<'a> = Option<Text<'a>>;

fn as_str<'s>(text: &'s Str<'_>) -> Option<&'s str> {
    text.as_ref().map(|t| &*t.0)
}

/// `line` read into the borrowed fields `T` holds, the rest skipped unparsed; `None` when it does
/// not read so. The line is checked as UTF-8 once, whole, rather than each string as serde_json
/// reads it from bytes (a line that is not UTF-8 anywhere, even in what is skipped, is left to
/// the parse, which tells).
fn read_line<'a, T: Deserialize<'a>>(line: &'a [u8]) -> Option<T> {
    serde_json::from_str(std::str::from_utf8(line).ok()?).ok()
}

/// A present field as a value (`null` included), as `get` finds it.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<JsonValue>, D::Error> {
    JsonValue::deserialize(deserializer).map(Some)
}

/// The fields of an entry line the planner reads.
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(rename = "customType", borrow, default)]
    custom_type: Str<'a>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
}

/// The fields of a message the planner reads.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: Str<'a>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: Str<'a>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    /// Present (whatever its value): rho sends nothing of the message.
    #[serde(rename = "retryRecovery", default, deserialize_with = "present_at_all")]
    retry_recovery: bool,
    /// A `bashExecution`'s command (its phase, [`Facts`]).
    #[serde(borrow, default)]
    command: Str<'a>,
}

/// `true` for a present field (`null` included), its value skipped unparsed.
fn present_at_all<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| true)
}

/// A message's content as the planner reads it: its text (when kept), its parts, or another
/// shape (neither).
enum Listed<'a, P> {
    Text(Cow<'a, str>),
    Parts(Vec<P>),
    Other,
}

/// A content with its text and the parts' texts ([`Sketch`]).
type Content<'a> = Listed<'a, Part<'a>>;

/// Reads a content as [`Listed`]: an array's elements as `P`s, a string as its text when
/// `keep_text` (else unread, as every other shape is).
fn listed<'de, D: Deserializer<'de>, P: Deserialize<'de>>(
    deserializer: D,
    keep_text: bool,
) -> Result<Listed<'de, P>, D::Error> {
    struct ListedVisitor<P> {
        keep_text: bool,
        parts: std::marker::PhantomData<P>,
    }
    impl<'de, P: Deserialize<'de>> Visitor<'de> for ListedVisitor<P> {
        type Value = Listed<'de, P>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a content")
        }
        fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
            Ok(self.text(Cow::Borrowed(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(if self.keep_text {
                Listed::Text(Cow::Owned(v.to_owned()))
            } else {
                Listed::Other
            })
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
            Ok(self.text(Cow::Owned(v)))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut parts = Vec::new();
            while let Some(part) = seq.next_element()? {
                parts.push(part);
            }
            Ok(Listed::Parts(parts))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Listed::Other)
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Listed::Other)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Listed::Other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Listed::Other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Listed::Other)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Listed::Other)
        }
    }
    impl<'de, P> ListedVisitor<P> {
        fn text(&self, text: Cow<'de, str>) -> Listed<'de, P> {
            if self.keep_text {
                Listed::Text(text)
            } else {
                Listed::Other
            }
        }
    }
    deserializer.deserialize_any(ListedVisitor {
        keep_text,
        parts: std::marker::PhantomData,
    })
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        listed(deserializer, true)
    }
}

/// The fields of a content part the planner reads.
#[derive(Deserialize)]
struct Part<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    text: Str<'a>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(default, deserialize_with = "present")]
    arguments: Option<JsonValue>,
}

impl Part<'_> {
    fn is(&self, kind: &str) -> bool {
        as_str(&self.kind) == Some(kind)
    }
}

impl<'a> Content<'a> {
    fn parts(&self) -> &[Part<'a>] {
        match self {
            Content::Parts(parts) => parts,
            _ => &[],
        }
    }

    /// `texts`: the pieces of its text, and its pictures.
    fn texts(&self) -> (usize, usize) {
        match self {
            Content::Text(s) => (piece(s.len()), 0),
            Content::Parts(parts) => parts.iter().fold((0, 0), |(text, pictures), part| {
                if part.is("text") {
                    (
                        text + piece(as_str(&part.text).map_or(0, str::len)),
                        pictures,
                    )
                } else if part.is("image") {
                    (text, pictures + 1)
                } else {
                    (text, pictures)
                }
            }),
            Content::Other => (0, 0),
        }
    }

    /// `outlined`: the bytes of its text parts, each outlined.
    fn outlined(&self) -> usize {
        match self {
            Content::Text(s) => outlined_len(s),
            Content::Parts(parts) => parts
                .iter()
                .filter(|p| p.is("text"))
                .filter_map(|p| as_str(&p.text))
                .map(outlined_len)
                .sum(),
            Content::Other => 0,
        }
    }

    /// The renderer's `joined_text`.
    fn joined(&self) -> Cow<'_, str> {
        match self {
            Content::Text(s) => Cow::Borrowed(s),
            Content::Parts(parts) => {
                let mut texts = parts
                    .iter()
                    .filter(|p| p.is("text"))
                    .filter_map(|p| as_str(&p.text));
                // One text (a tool's output, most often): borrowed, not joined into a copy.
                match (texts.next(), texts.next()) {
                    (None, _) => Cow::Borrowed(""),
                    (Some(one), None) => Cow::Borrowed(one),
                    (Some(first), Some(second)) => Cow::Owned(
                        [first, second]
                            .into_iter()
                            .chain(texts)
                            .collect::<Vec<_>>()
                            .join("\n"),
                    ),
                }
            }
            Content::Other => Cow::Borrowed(""),
        }
    }

    fn calls(&self) -> impl Iterator<Item = &Part<'a>> {
        self.parts().iter().filter(|p| p.is("toolCall"))
    }
}

/// What the planner's first step reads of every entry: its id, kind, tool-call links and phase
/// ([`Facts::of`] from a parsed entry, [`Facts::of_line`] from its line, texts skipped).
#[derive(Debug)]
pub(crate) struct Facts {
    /// The entry's `id`, when a string.
    pub(crate) id: Option<String>,
    /// Its `type` (`message` entries: the message's role).
    pub(crate) kind: String,
    /// A tool result's `toolCallId`, when a string.
    pub(crate) tool_call_id: Option<String>,
    /// An assistant message's tool calls' ids (those that are strings).
    pub(crate) call_ids: Vec<String>,
    /// What its phase is decided from.
    pub(crate) phase: PhaseInput,
}

/// The fields of an entry line [`Facts`] read.
#[derive(Deserialize)]
struct FactsLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(borrow, default)]
    message: Option<FactsMessage<'a>>,
}

/// The fields of a message [`Facts`] read.
#[derive(Deserialize)]
struct FactsMessage<'a> {
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Option<Calls<'a>>,
    #[serde(rename = "toolName", borrow, default)]
    tool_name: Str<'a>,
    #[serde(rename = "toolCallId", borrow, default)]
    tool_call_id: Str<'a>,
    #[serde(borrow, default)]
    command: Str<'a>,
}

/// A content's parts without their texts (a content that is not an array has none).
struct Calls<'a>(Vec<CallPart<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Calls<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Calls(match listed(deserializer, false)? {
            Listed::Parts(parts) => parts,
            Listed::Text(_) | Listed::Other => Vec::new(),
        }))
    }
}

/// The fields of a content part [`Facts`] read (a tool call's; texts are skipped unread).
#[derive(Deserialize)]
struct CallPart<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(default, deserialize_with = "present")]
    arguments: Option<JsonValue>,
}

impl Facts {
    /// The facts of `value` (a file entry as JSON).
    pub(crate) fn of(value: &JsonValue) -> Self {
        let message = EntryRef::new(value).message();
        let role = MessageRef::new(message).role();
        let kind = match (EntryRef::new(value).kind(), role) {
            (Some("message"), Some(role)) => role.to_owned(),
            (Some(kind), _) => kind.to_owned(),
            (None, _) => String::new(),
        };
        let call_ids = if kind == "assistant" {
            message
                .and_then(|m| MessageRef::new(m).content())
                .and_then(JsonValue::as_array)
                .into_iter()
                .flatten()
                .map(BlockRef::new)
                .filter(|p| p.is("toolCall"))
                .filter_map(BlockRef::id_str)
                .map(str::to_owned)
                .collect()
        } else {
            Vec::new()
        };
        Self {
            id: EntryRef::new(value).id().map(str::to_owned),
            tool_call_id: message
                .and_then(|m| MessageRef::new(m).tool_call_id())
                .and_then(JsonValue::as_str)
                .map(str::to_owned),
            kind,
            call_ids,
            phase: PhaseInput::of(value),
        }
    }

    /// The facts of the entry written as `line`, read without its texts (skipped unparsed);
    /// `None` when only a parse can tell (as for [`Sketch::of_line`]), or when its `type` is
    /// not `kind` or its `id` is not `id`. Equal to [`Facts::of`] of the parsed line.
    pub(crate) fn of_line(line: &[u8], kind: &str, id: Option<&str>) -> Option<Self> {
        let line: FactsLine<'_> = read_line(line)?;
        if as_str(&line.kind) != Some(kind) || as_str(&line.id) != id {
            return None;
        }
        let message = line.message.as_ref().map(|m| FactsOf {
            role: as_str(&m.role),
            tool_call_id: as_str(&m.tool_call_id),
            tool_name: as_str(&m.tool_name),
            command: as_str(&m.command),
            calls: m
                .content
                .iter()
                .flat_map(|c| &c.0)
                .filter(|p| as_str(&p.kind) == Some("toolCall"))
                .map(|p| (as_str(&p.id), as_str(&p.name), p.arguments.as_ref()))
                .collect(),
        });
        Some(Self::of_message(kind, id, message))
    }

    /// The facts and the sketch of the entry written as `line`, read in one pass (texts as
    /// [`Sketch::of_line`] reads them); `None` when that pass cannot read it (then
    /// [`Facts::of_line`] may).
    pub(crate) fn sketched(line: &[u8], kind: &str, id: Option<&str>) -> Option<(Self, Sketch)> {
        let line: Line<'_> = read_line(line)?;
        if as_str(&line.kind) != Some(kind) || as_str(&line.id) != id {
            return None;
        }
        let message = line.message.as_ref().map(|m| FactsOf {
            role: as_str(&m.role),
            tool_call_id: as_str(&m.tool_call_id),
            tool_name: as_str(&m.tool_name),
            command: as_str(&m.command),
            calls: m
                .content
                .iter()
                .flat_map(Content::calls)
                .map(|p| (as_str(&p.id), as_str(&p.name), p.arguments.as_ref()))
                .collect(),
        });
        Some((Self::of_message(kind, id, message), Sketch::of(&line)))
    }

    /// The facts of an entry of type `kind` and id `id` from what its message says.
    fn of_message(kind: &str, id: Option<&str>, message: Option<FactsOf<'_>>) -> Self {
        let message = message.as_ref();
        let role = message.and_then(|m| m.role);
        let calls = || message.into_iter().flat_map(|m| &m.calls);
        let line_kind = kind;
        let kind = match (kind, role) {
            ("message", Some(role)) => role.to_owned(),
            (kind, _) => kind.to_owned(),
        };
        let call_ids = if kind == "assistant" {
            calls()
                .filter_map(|(id, _, _)| id.map(str::to_owned))
                .collect()
        } else {
            Vec::new()
        };
        let tool_call_id = message.and_then(|m| m.tool_call_id.map(str::to_owned));
        let phase = match (line_kind, message) {
            ("message", Some(message)) => match role {
                Some("assistant") => PhaseInput::Assistant(
                    calls()
                        .map(|&(id, name, arguments)| {
                            let arguments = arguments.unwrap_or(&JsonValue::Null);
                            (
                                id.unwrap_or("").to_owned(),
                                call_phase(name.unwrap_or(""), arguments),
                            )
                        })
                        .collect(),
                ),
                Some("toolResult") => PhaseInput::ToolResult {
                    call_id: tool_call_id.clone(),
                    tool_name: message.tool_name.map(str::to_owned),
                },
                Some("bashExecution") => {
                    PhaseInput::Shell(runs_checks(message.command.unwrap_or("")))
                }
                _ => PhaseInput::Other,
            },
            _ => PhaseInput::Other,
        };
        Self {
            id: id.map(str::to_owned),
            kind,
            tool_call_id,
            call_ids,
            phase,
        }
    }
}

/// What [`Facts`] read of a message: its role, call links and command (strings), and each tool
/// call's id, name and arguments.
struct FactsOf<'a> {
    role: Option<&'a str>,
    tool_call_id: Option<&'a str>,
    tool_name: Option<&'a str>,
    command: Option<&'a str>,
    calls: Vec<(Option<&'a str>, Option<&'a str>, Option<&'a JsonValue>)>,
}

/// How an entry is sized: the estimator's cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Sends nothing the estimator counts.
    Nothing,
    /// A user, developer or custom message.
    Content,
    /// An assistant message.
    Assistant,
    /// A tool result.
    ToolResult,
}

/// An entry's sizes at every level, in bytes (see [`Sketch::estimate`]).
#[derive(Debug, Clone, Copy)]
struct Sizes {
    shape: Shape,
    /// Its text (and an assistant's calls) at Full.
    full: usize,
    /// Its pictures.
    pictures: usize,
    /// Outlined (an assistant's calls with cut arguments).
    outlined: usize,
    /// Summarized.
    summarized: usize,
}

/// An entry's sizes at every level and what its Summarized rendering sends: what the planner
/// measures of an entry that may be sent ([`Facts`] are read of every entry).
#[derive(Debug)]
pub(crate) struct Sketch {
    sizes: Sizes,
    summary: Summary,
}

/// What an entry's Summarized rendering sends, kept from the sketch (see
/// [`Sketch::summarized`]): what its one line says (measured for every entry, written only
/// for those sent Summarized) and the few fields rho reads beside the content.
#[derive(Debug, Default)]
struct Summary {
    /// What the one line ([`render`](super::render)'s summary of the entry) says.
    line: SummaryLine,
    /// A message's role (of those rho sends), or `None` for a custom message.
    role: Option<&'static str>,
    /// A tool result's `toolCallId` and `toolName`, when strings.
    tool_call_id: Option<String>,
    tool_name: Option<String>,
    /// An assistant's calls: each one's `id` and `name`, when strings.
    calls: Vec<(Option<String>, Option<String>)>,
    /// An assistant message with a `retryRecovery`.
    retry_recovery: bool,
}

/// What an entry's summary line says, to be written by [`render`](super::render)'s rules.
#[derive(Debug, Default)]
struct SummaryLine {
    /// A content's kind (`user`, a custom type), or a tool result's tool name.
    label: String,
    /// A tool result that is an error.
    is_error: bool,
    /// What is said of its joined text.
    said: Said<String>,
    /// Its pictures.
    pictures: usize,
    /// An assistant's calls' outlines.
    outlines: Vec<String>,
}

impl SummaryLine {
    fn write(&self, shape: Shape, out: &mut impl fmt::Write) -> fmt::Result {
        match shape {
            Shape::Nothing => Ok(()),
            Shape::Content => write_content_summary(out, &self.label, &self.said, self.pictures),
            Shape::Assistant => {
                write_assistant_summary(out, &self.said, self.pictures, &self.outlines)
            }
            Shape::ToolResult => {
                write_result_summary(out, &self.label, self.is_error, &self.said, self.pictures)
            }
        }
    }

    /// The bytes of the line.
    fn len(&self, shape: Shape) -> usize {
        written_len(|out| self.write(shape, out))
    }
}

impl Sketch {
    /// The sketch of the entry written as `line`; `None` when only a parse can tell (see the
    /// module), or when its `type` is not `kind` or its `id` is not `id` (the index's: the
    /// file would serve another value for it).
    pub(crate) fn of_line(line: &[u8], kind: &str, id: Option<&str>) -> Option<Self> {
        let line: Line<'_> = read_line(line)?;
        (as_str(&line.kind) == Some(kind) && as_str(&line.id) == id).then(|| Self::of(&line))
    }

    fn of(line: &Line<'_>) -> Self {
        let entry_kind = as_str(&line.kind);
        let message = line.message.as_ref();
        let role = message.and_then(|m| as_str(&m.role));
        let content = message.and_then(|m| m.content.as_ref());
        let tool_call_id = message.and_then(|m| as_str(&m.tool_call_id).map(str::to_owned));
        let (sizes, line_of_summary) = sizes(line, entry_kind, message, role);
        let summary = Summary {
            line: line_of_summary,
            role: match (entry_kind, role) {
                (Some("message"), Some("user")) => Some("user"),
                (Some("message"), Some("developer")) => Some("developer"),
                (Some("message"), Some("assistant")) => Some("assistant"),
                (Some("message"), Some("toolResult")) => Some("toolResult"),
                _ => None,
            },
            tool_call_id,
            tool_name: message.and_then(|m| as_str(&m.tool_name).map(str::to_owned)),
            calls: match (sizes.shape, content) {
                (Shape::Assistant, Some(content)) => content
                    .calls()
                    .map(|c| {
                        (
                            as_str(&c.id).map(str::to_owned),
                            as_str(&c.name).map(str::to_owned),
                        )
                    })
                    .collect(),
                _ => Vec::new(),
            },
            retry_recovery: message.is_some_and(|m| m.retry_recovery),
        };
        Self { sizes, summary }
    }

    /// An entry that rho projects exactly as it projects the entry's Summarized rendering
    /// ([`render`](super::render)), built from the sketch without reading the line again: the
    /// summary line as its content, and only the fields rho reads beside it (a tool result's
    /// call id and tool name, an assistant's calls without arguments, `retryRecovery`). Not
    /// for projections that read a user message's attachments (PDF inputs). A test compares
    /// both projections on every fixture and corpus entry.
    pub(crate) fn summarized(&self) -> JsonValue {
        let s = &self.summary;
        let line = written(|out| s.line.write(self.sizes.shape, out));
        let text_part = |text: &str| fields([("type", "text".into()), ("text", text.into())]);
        let message = |mut members: JsonMap| {
            if let Some(role) = s.role {
                members.insert("role".into(), role.into());
            }
            fields([
                ("type", "message".into()),
                ("message", JsonValue::Object(members)),
            ])
        };
        match self.sizes.shape {
            Shape::Nothing => JsonValue::Null,
            Shape::Content => match s.role {
                Some(_) => message(JsonMap::from_iter([("content".into(), line.into())])),
                None => fields([("type", "custom_message".into()), ("content", line.into())]),
            },
            Shape::Assistant => {
                let mut parts = Vec::with_capacity(1 + s.calls.len());
                parts.push(text_part(&line));
                parts.extend(s.calls.iter().map(|(id, name)| {
                    let mut call = JsonMap::from_iter([("type".into(), "toolCall".into())]);
                    if let Some(id) = id {
                        call.insert("id".into(), id.as_str().into());
                    }
                    if let Some(name) = name {
                        call.insert("name".into(), name.as_str().into());
                    }
                    call.insert("arguments".into(), JsonValue::Object(JsonMap::new()));
                    JsonValue::Object(call)
                }));
                let mut fields = JsonMap::from_iter([("content".into(), JsonValue::Array(parts))]);
                if s.retry_recovery {
                    fields.insert("retryRecovery".into(), JsonValue::Null);
                }
                message(fields)
            }
            Shape::ToolResult => {
                let mut fields = JsonMap::from_iter([(
                    "content".into(),
                    JsonValue::Array(vec![text_part(&line)]),
                )]);
                if let Some(id) = &s.tool_call_id {
                    fields.insert("toolCallId".into(), id.as_str().into());
                }
                if let Some(name) = &s.tool_name {
                    fields.insert("toolName".into(), name.as_str().into());
                }
                message(fields)
            }
        }
    }

    /// The estimated tokens of the entry sent at `level`, exactly as
    /// [`estimate`](super::estimate::estimate) gives them for the parsed entry.
    pub(crate) fn estimate(&self, level: Resolution, limit: Option<usize>) -> u64 {
        let (bytes, pictures) = self.sent_bytes(level, limit);
        (bytes as u64).div_ceil(BYTES_PER_TOKEN) + pictures * PICTURE_TOKENS
    }

    fn sent_bytes(&self, level: Resolution, limit: Option<usize>) -> (usize, u64) {
        let s = &self.sizes;
        if level == Resolution::Compacted {
            return (0, 0);
        }
        let pictures_sent = matches!(level, Resolution::Full | Resolution::Pinned);
        let sent_pictures = if pictures_sent { s.pictures as u64 } else { 0 };
        match s.shape {
            Shape::Nothing => (0, 0),
            Shape::Content => match level {
                Resolution::Summarized => (s.summarized, 0),
                Resolution::Outlined => (s.outlined + s.pictures * NOTE_BYTES, 0),
                Resolution::Attached => (s.full + s.pictures * NOTE_BYTES, 0),
                _ => (s.full, sent_pictures),
            },
            Shape::Assistant => match level {
                Resolution::Summarized => (s.summarized, 0),
                Resolution::Outlined => (s.outlined, 0),
                _ => (s.full, 0),
            },
            Shape::ToolResult => {
                let bytes = match level {
                    Resolution::Summarized => s.summarized,
                    Resolution::Outlined => s.outlined + s.pictures * NOTE_BYTES,
                    Resolution::Full | Resolution::Attached => {
                        let text = limit.map_or(s.full, |l| s.full.min(l + 4 * NOTE_BYTES));
                        text + usize::from(level == Resolution::Attached) * s.pictures * NOTE_BYTES
                    }
                    _ => s.full,
                };
                (bytes, sent_pictures)
            }
        }
    }
}

/// The sizes of every level, by the estimator's cases, and what the Summarized line says.
fn sizes(
    line: &Line<'_>,
    entry_kind: Option<&str>,
    message: Option<&Message<'_>>,
    role: Option<&str>,
) -> (Sizes, SummaryLine) {
    let nothing = Sizes {
        shape: Shape::Nothing,
        full: 0,
        pictures: 0,
        outlined: 0,
        summarized: 0,
    };
    let content_sizes = |kind: &str, content: Option<&Content<'_>>| {
        let other = Content::Other;
        let content = content.unwrap_or(&other);
        let (full, pictures) = content.texts();
        let summary = SummaryLine {
            label: kind.to_owned(),
            said: Said::of(&content.joined()).owned(),
            pictures,
            ..SummaryLine::default()
        };
        let sizes = Sizes {
            shape: Shape::Content,
            full,
            pictures,
            outlined: content.outlined(),
            summarized: piece(summary.len(Shape::Content)),
        };
        (sizes, summary)
    };
    match entry_kind {
        Some("message") => {
            let Some(message) = message else {
                return (nothing, SummaryLine::default());
            };
            let other = Content::Other;
            let content = message.content.as_ref().unwrap_or(&other);
            match role {
                Some("user" | "developer") => content_sizes("user", Some(content)),
                Some("assistant") => {
                    let (text, pictures) = content.texts();
                    let name = |call: &Part<'_>| as_str(&call.name).map_or(0, str::len);
                    let outlines: Vec<String> = content
                        .calls()
                        .map(|c| call_outline(as_str(&c.name), c.arguments.as_ref()))
                        .collect();
                    let summary = SummaryLine {
                        said: Said::of(&content.joined()).owned(),
                        pictures,
                        outlines,
                        ..SummaryLine::default()
                    };
                    let sizes = Sizes {
                        shape: Shape::Assistant,
                        full: text
                            + content
                                .calls()
                                .map(|c| name(c) + c.arguments.as_ref().map_or(2, json_len))
                                .sum::<usize>(),
                        pictures,
                        outlined: content.outlined()
                            + content
                                .calls()
                                .map(|c| {
                                    name(c) + c.arguments.as_ref().map_or(2, cut_arguments_len)
                                })
                                .sum::<usize>(),
                        summarized: piece(summary.len(Shape::Assistant))
                            + content
                                .calls()
                                .map(|c| piece(name(c)) + piece(2))
                                .sum::<usize>(),
                    };
                    (sizes, summary)
                }
                Some("toolResult") => {
                    let (text, pictures) = content.texts();
                    let name = as_str(&message.tool_name).unwrap_or("tool");
                    let is_error = message.is_error == Some(true);
                    let summary = SummaryLine {
                        label: name.to_owned(),
                        is_error,
                        said: Said::of(&content.joined()).owned(),
                        pictures,
                        outlines: Vec::new(),
                    };
                    let sizes = Sizes {
                        shape: Shape::ToolResult,
                        full: text,
                        pictures,
                        outlined: content.outlined(),
                        summarized: piece(summary.len(Shape::ToolResult)),
                    };
                    (sizes, summary)
                }
                _ => (nothing, SummaryLine::default()),
            }
        }
        Some("custom_message") => content_sizes(
            as_str(&line.custom_type).unwrap_or("custom"),
            line.content.as_ref(),
        ),
        _ => (nothing, SummaryLine::default()),
    }
}

#[cfg(test)]
mod tests {
    use pi_session_test_support::fixture_and_corpus_files;
    use serde_json::json;

    use super::*;
    use crate::ProjectOptions;
    use crate::manage::estimate::estimate;
    use crate::manage::render;
    use pi_session_context::rho;

    /// Compares the facts of `line` with the parsed entry's and its sketch with the estimator:
    /// whether the facts were read, and whether it was sketched.
    fn agrees(line: &[u8], context: &str) -> (bool, bool) {
        let Ok(value) = serde_json::from_slice::<JsonValue>(line) else {
            return (false, false);
        };
        let kind = value.get("type").and_then(JsonValue::as_str).unwrap_or("");
        let id = value.get("id").and_then(JsonValue::as_str);
        let facts = Facts::of_line(line, kind, id);
        if let Some(facts) = &facts {
            assert_eq!(
                format!("{facts:?}"),
                format!("{:?}", Facts::of(&value)),
                "{context}"
            );
        }
        // Read in one pass: the same facts and sketch (and read whenever both are apart).
        let sketched = Facts::sketched(line, kind, id);
        if let Some((both, sketch)) = &sketched {
            let apart = facts.as_ref().map(|f| format!("{f:?}"));
            assert_eq!(Some(format!("{both:?}")), apart, "{context}");
            let apart = Sketch::of_line(line, kind, id).map(|s| format!("{s:?}"));
            assert_eq!(Some(format!("{sketch:?}")), apart, "{context}");
        }
        let Some(sketch) = Sketch::of_line(line, kind, id) else {
            assert!(sketched.is_none(), "{context}");
            return (facts.is_some(), false);
        };
        for level in Resolution::ALL {
            for limit in [None, Some(0), Some(100), Some(4000)] {
                assert_eq!(
                    sketch.estimate(level, limit),
                    estimate(&value, level, limit),
                    "{context}: {level:?} {limit:?}"
                );
            }
        }
        // The Summarized rendering built from the sketch projects as the parsed entry's.
        let options = ProjectOptions::default();
        let rendered = render(&value, Resolution::Summarized).unwrap();
        assert_eq!(
            rho::messages(&[sketch.summarized()], &options),
            rho::messages(&[rendered], &options),
            "{context}"
        );
        (facts.is_some(), true)
    }

    #[test]
    fn sketches_estimate_every_fixture_and_corpus_entry_as_the_estimator() {
        let files = fixture_and_corpus_files();
        let (mut sketched, mut messages) = (0, 0);
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if agrees(line, &format!("{}:{}", path.display(), n + 1)) == (true, true) {
                    sketched += 1;
                    messages += usize::from(line.starts_with(br#"{"type":"message""#));
                }
            }
        }
        // Enough lines were sketched (not left to the parse) to mean something.
        assert!(sketched > 1000 && messages > 500, "{sketched} {messages}");
    }

    #[test]
    fn sketches_agree_on_odd_shapes_and_refuse_what_only_a_parse_can_tell() {
        let lines = [
            json!({"type":"message","id":"a","message":{"role":"user","content":"hi\n\nthere"}}),
            json!({"type":"message","id":"b","message":{"role":"assistant","content":[
                {"type":"thinking","thinking":"hmm"},{"type":"text","text":"a \"quoted\"\ttext"},
                {"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"cargo test"}},
                {"type":"toolCall","id":"c2","name":"read","arguments":null},
                {"type":"toolCall","id":"c3"}]}}),
            json!({"type":"message","id":"c","message":{"role":"toolResult","toolCallId":"c1",
                "toolName":"bash","isError":true,"content":[{"type":"text","text":"boom\nline"},
                {"type":"image","mimeType":"image/png","data":"AAAA"}]}}),
            json!({"type":"custom_message","id":"d","customType":"note","content":[
                {"type":"image","data":"AAAA"}]}),
            json!({"type":"message","id":"e","message":{"role":"developer","content":7}}),
            json!({"type":"message","id":"f","message":null}),
            json!({"type":"message","id":"g","message":{"role":"bashExecution","command":"ls"}}),
            json!({"type":"message","id":"h","message":{"role":"assistant","retryRecovery":null,
                "content":[{"type":"text","text":"again"}]}}),
            json!({"type":"message","id":"i","message":{"role":"assistant","content":[
                {"type":"toolCall","id":null,"name":null,"arguments":{"path":"a"}}]}}),
            json!({"type":"message","id":"j","message":{"role":"toolResult","toolCallId":null,
                "content":"plain"}}),
            json!({"type":"custom_message","id":"k","customType":"note","content":"a\nb",
                "message":{"role":"user"}}),
        ];
        for line in &lines {
            let text = line.to_string();
            assert_eq!(agrees(text.as_bytes(), &text), (true, true), "{text}");
        }
        for refused in [
            r#"{"type":"message","id":"a","id":"b"}"#,
            r#"{"type":"message","id":"a","message":{"role":7}}"#,
            r#"{"type":"message","id":"a","message":"text"}"#,
            r#"["message"]"#,
        ] {
            assert_eq!(
                agrees(refused.as_bytes(), refused),
                (false, false),
                "{refused}"
            );
        }
        assert!(Sketch::of_line(br#"{"type":"message","id":"a"}"#, "message", Some("b")).is_none());
        assert!(Facts::of_line(br#"{"type":"message","id":"a"}"#, "message", Some("b")).is_none());
        assert!(
            Sketch::of_line(b"{\"type\":\"message\",\"id\":\"\xff\"}", "message", None).is_none()
        );
    }
}
