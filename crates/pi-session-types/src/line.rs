//! Parsing one physical line of a session file.
//!
//! Two entry points:
//! - [`parse_line`]: the full typed view ([`ParsedLine`]) plus [`ParseWarning`]s;
//! - [`parse_envelope`]: the store's hot path; reads only `type`, `id`, `parentId` and
//!   `timestamp`, skipping (but still validating) everything else without building a tree of
//!   JSON values.
//!
//! Both accept a trailing `"\n"`/`"\r\n"`, and both read lines that stock serde_json rejects but
//! JavaScript accepts: a lone UTF-16 surrogate escape (`"\ud83d"` without its pair) is read as
//! its carrier code point U+10F800+k ([`crate::js::carrier_of`]; [`crate::json`] writes it back
//! as the same escape, so nothing is lost), and invalid UTF-8 is replaced lossily by U+FFFD;
//! each is reported as a warning (the store keeps the original bytes). A line that already holds
//! a code point U+10F800–U+10FFFF (raw, or as an escaped pair) is read as it is, with
//! [`ParseWarning::AmbiguousPrivateUse`]: once read, it cannot be told from a carrier. Anything else that is not a JSON object with a string
//! `type` is a [`LineError`] saying which; nothing here panics.

use crate::entry::{Entry, UnknownEntry};
use crate::field::MaybeTyped;
use crate::header::{SessionHeader, TitleSlot};
use crate::message::AgentMessage;
use crate::timestamp::IsoTimestamp;
use crate::{JsonMap, JsonValue, tags};
use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// Why a line is not a session line at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// The line is empty or only whitespace.
    #[error("blank line: a session line must hold one JSON object; skip or remove it")]
    Blank,
    /// The bytes are not JSON (e.g. a torn write or a bad escape).
    #[error("line is not valid JSON ({message}); it may be torn or corrupted and cannot be read")]
    NotJson {
        /// serde_json's description, with the column of the problem.
        message: String,
        /// 1-based column (byte) where parsing failed.
        column: usize,
    },
    /// Valid JSON, but not an object.
    #[error("line is JSON {found}, not an object; every session line must be a JSON object")]
    NotAnObject {
        /// The JSON type found: `"array"`, `"string"`, `"number"`, `"boolean"` or `"null"`.
        found: &'static str,
    },
    /// An object without a `type` key.
    #[error("line is a JSON object without a \"type\" key; every session line needs a string type")]
    MissingType,
    /// An object whose `type` is not a string.
    #[error(
        "line has a \"type\" that is {found}, not a string; every session line needs a string type"
    )]
    TypeNotString {
        /// The JSON type found for `type`.
        found: &'static str,
    },
}

/// Something noteworthy about a line that was read anyway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseWarning {
    /// Lone UTF-16 surrogate escapes (JavaScript writes them; a Rust `String` cannot hold
    /// them) were read as their carrier code points U+10F800+k ([`crate::js::carrier_of`]),
    /// which [`crate::json`] writes back as the same escapes: nothing is lost.
    LoneSurrogateReplaced {
        /// How many escapes were carried.
        count: usize,
    },
    /// The line holds code points U+10F800–U+10FFFF (raw or as escaped pairs), the range that
    /// carries lone surrogates: they are read as they are, but are written back as lone
    /// surrogate escapes (`\udxxx`). No agent is known to write them.
    AmbiguousPrivateUse {
        /// How many such code points the line holds.
        count: usize,
    },
    /// Bytes that are not UTF-8 were replaced by U+FFFD.
    InvalidUtf8Replaced,
    /// A line, message or block of a known type could not be typed and is kept as JSON.
    Untyped {
        /// Which object and why.
        reason: String,
    },
    /// An entry `timestamp` that is not an ISO-8601 date-time, or a message `timestamp` that is
    /// not a number; it is kept as written.
    InvalidTimestamp {
        /// The value as written (a message timestamp as its JSON text).
        value: String,
    },
}

impl fmt::Display for ParseWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseWarning::LoneSurrogateReplaced { count } => write!(
                f,
                "{count} lone UTF-16 surrogate escape(s), as JavaScript writes them; kept (carried as U+10F800+k, written back as the same escape)"
            ),
            ParseWarning::AmbiguousPrivateUse { count } => write!(
                f,
                "{count} code point(s) U+10F800..U+10FFFF, the range that carries lone surrogates; read as they are, but written back as lone surrogate escapes (\\udxxx)"
            ),
            ParseWarning::InvalidUtf8Replaced => {
                f.write_str("invalid UTF-8 replaced by U+FFFD in the typed view")
            }
            ParseWarning::Untyped { reason } => write!(f, "kept as untyped JSON: {reason}"),
            ParseWarning::InvalidTimestamp { value } => {
                write!(f, "timestamp {value:?} is not ISO-8601; kept as written")
            }
        }
    }
}

/// A parsed value plus the warnings raised while reading it.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<T> {
    /// The value.
    pub value: T,
    /// Repairs and fallbacks, in the order they happened; empty for a clean line.
    pub warnings: Vec<ParseWarning>,
}

/// One line of a session file, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedLine {
    /// omp's fixed-width title slot (valid per omp's rules; see [`TitleSlot::is_valid_slot`]).
    TitleSlot(TitleSlot),
    /// The `session` header.
    Header(SessionHeader),
    /// Any other line (including an invalid `title` object or a `session` line without a
    /// string `id`, which become [`Entry::Unknown`]).
    Entry(Entry),
}

impl ParsedLine {
    /// The line's `type` string.
    pub fn kind(&self) -> &str {
        match self {
            ParsedLine::TitleSlot(_) => tags::Title::VALUE,
            ParsedLine::Header(_) => tags::Session::VALUE,
            ParsedLine::Entry(e) => e.kind(),
        }
    }
    /// The entry, when this line is one.
    pub fn as_entry(&self) -> Option<&Entry> {
        match self {
            ParsedLine::Entry(e) => Some(e),
            _ => None,
        }
    }
    /// Consumes the line, giving the entry when it is one.
    pub fn into_entry(self) -> Option<Entry> {
        match self {
            ParsedLine::Entry(e) => Some(e),
            _ => None,
        }
    }
}

impl Serialize for ParsedLine {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ParsedLine::TitleSlot(s) => s.serialize(serializer),
            ParsedLine::Header(h) => h.serialize(serializer),
            ParsedLine::Entry(e) => e.serialize(serializer),
        }
    }
}

/// The four envelope fields of a line, read without typing the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// `type`: `"title"` for omp's slot, `"session"` for the header, else an entry type.
    pub kind: String,
    /// `id` when it is a string.
    pub id: Option<String>,
    /// `parentId` when it is a string (`None` for `null`, absent, or another JSON type).
    pub parent_id: Option<String>,
    /// `timestamp` when it is a string.
    pub timestamp: Option<String>,
    /// True when `parentId` is present and `null` (a root entry).
    pub parent_is_null: bool,
    /// Repairs made to read the four envelope fields (lone surrogates, invalid UTF-8); empty
    /// normally. Values the fast path skips are checked for JSON syntax but not for UTF-8 or
    /// surrogate pairing, so a repair elsewhere in the line shows up only in [`parse_line`].
    pub warnings: Vec<ParseWarning>,
}

impl Envelope {
    /// True for a `type:"title"` line (a title-slot candidate; validate with [`parse_line`]).
    pub fn is_title(&self) -> bool {
        self.kind == tags::Title::VALUE
    }
    /// True for a `type:"session"` line (a header candidate).
    pub fn is_header(&self) -> bool {
        self.kind == tags::Session::VALUE
    }
}

/// Borrowing form of [`Envelope`]: strings borrow from the line when they hold no escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeRef<'a> {
    /// `type`.
    pub kind: Cow<'a, str>,
    /// `id` when it is a string.
    pub id: Option<Cow<'a, str>>,
    /// `parentId` when it is a string.
    pub parent_id: Option<Cow<'a, str>>,
    /// `timestamp` when it is a string.
    pub timestamp: Option<Cow<'a, str>>,
    /// True when `parentId` is present and `null`.
    pub parent_is_null: bool,
}

impl EnvelopeRef<'_> {
    /// An owned copy.
    pub fn into_owned(self, warnings: Vec<ParseWarning>) -> Envelope {
        Envelope {
            kind: self.kind.into_owned(),
            id: self.id.map(Cow::into_owned),
            parent_id: self.parent_id.map(Cow::into_owned),
            timestamp: self.timestamp.map(Cow::into_owned),
            parent_is_null: self.parent_is_null,
            warnings,
        }
    }
}

/// Reads only the envelope of a line; the store's fast path.
///
/// ```
/// use pi_session_types::{parse_envelope, LineError};
/// let env = parse_envelope(br#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}"#).unwrap();
/// assert_eq!((env.kind.as_str(), env.id.as_deref(), env.parent_is_null), ("message", Some("a1"), true));
/// assert_eq!(parse_envelope(b"[1]"), Err(LineError::NotAnObject { found: "array" }));
/// assert_eq!(parse_envelope(br#"{"id":"x"}"#), Err(LineError::MissingType));
/// ```
pub fn parse_envelope(bytes: &[u8]) -> Result<Envelope, LineError> {
    match parse_envelope_ref(bytes) {
        Ok(envelope) => Ok(envelope.into_owned(Vec::new())),
        Err(error) => {
            let (repaired, warnings) = repair(bytes).ok_or(error)?;
            parse_envelope_ref(repaired.as_bytes()).map(|e| e.into_owned(warnings))
        }
    }
}

/// Reads only the envelope of a line, borrowing strings from `bytes` where possible.
///
/// Does no repair: a line with a lone surrogate escape or invalid UTF-8 gives
/// [`LineError::NotJson`]; use [`parse_envelope`] to read such lines.
pub fn parse_envelope_ref(bytes: &[u8]) -> Result<EnvelopeRef<'_>, LineError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let raw = deserializer
        .deserialize_any(EnvelopeVisitor)
        .and_then(|raw| deserializer.end().map(|()| raw))
        .map_err(|e| classify(bytes, &e))?;
    let Some(raw) = raw else {
        return Err(not_an_object(bytes));
    };
    let kind = match raw.kind {
        Lenient::Str(kind) => kind,
        Lenient::Absent => return Err(LineError::MissingType),
        Lenient::Null => return Err(LineError::TypeNotString { found: "null" }),
        Lenient::Other(found) => return Err(LineError::TypeNotString { found }),
    };
    Ok(EnvelopeRef {
        kind,
        id: raw.id.into_str(),
        parent_is_null: matches!(raw.parent_id, Lenient::Null),
        parent_id: raw.parent_id.into_str(),
        timestamp: raw.timestamp.into_str(),
    })
}

/// Parses one line into its typed form.
///
/// ```
/// use pi_session_types::{parse_line, ParsedLine, ParseWarning, Entry, AgentMessage, Content};
/// let parsed = parse_line(br#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"\ud83d!","timestamp":1}}"#).unwrap();
/// assert_eq!(parsed.warnings, vec![ParseWarning::LoneSurrogateReplaced { count: 1 }]);
/// let Some(Entry::Message(m)) = parsed.value.as_entry() else { panic!() };
/// let AgentMessage::User(user) = &m.message else { panic!() };
/// assert_eq!(user.content, Content::Text("\u{10F83D}!".into())); // carries "\ud83d"
/// ```
pub fn parse_line(bytes: &[u8]) -> Result<Parsed<ParsedLine>, LineError> {
    match parse_object(bytes) {
        Ok(map) => type_line(bytes, map, ambiguity_warnings(bytes)),
        Err(error) => {
            let (repaired, warnings) = repair(bytes).ok_or(error)?;
            let map = parse_object(repaired.as_bytes())?;
            type_line(repaired.as_bytes(), map, warnings)
        }
    }
}

/// `JSON.parse` of one line, as JavaScript reads it, when only an object will do: invalid UTF-8
/// reads as U+FFFD and lone UTF-16 surrogate escapes as their carriers (with a warning each;
/// see [`crate::js::carrier_of`]), anything else that is
/// not a JSON object is a [`LineError`]. The object is not typed (use it for JSONL that is not a
/// session file, such as another agent's transcript).
///
/// ```
/// use pi_session_types::line::parse_object_line;
/// let parsed = parse_object_line(br#"{"a":"\ud83d"}"#).unwrap();
/// assert_eq!((parsed.value["a"].as_str(), parsed.warnings.len()), (Some("\u{10F83D}"), 1));
/// assert!(parse_object_line(b"[1]").is_err());
/// ```
pub fn parse_object_line(bytes: &[u8]) -> Result<Parsed<JsonMap>, LineError> {
    match parse_object(bytes) {
        Ok(value) => Ok(Parsed {
            value,
            warnings: ambiguity_warnings(bytes),
        }),
        Err(error) => {
            let (repaired, warnings) = repair(bytes).ok_or(error)?;
            let value = parse_object(repaired.as_bytes())?;
            Ok(Parsed { value, warnings })
        }
    }
}

/// Warnings every typed entry gets: untyped parts, odd timestamps.
fn finish_entry(entry: &Entry, warnings: &mut Vec<ParseWarning>) {
    warnings.extend(
        entry
            .fallback_reasons()
            .into_iter()
            .map(|reason| ParseWarning::Untyped { reason }),
    );
    if let Some(MaybeTyped::Raw(value)) = entry.message().and_then(AgentMessage::timestamp_field) {
        warnings.push(ParseWarning::InvalidTimestamp {
            value: value.to_string(),
        });
    }
    check_timestamp(entry.timestamp(), warnings);
}

/// [`parse_line`] for a `&str`.
pub fn parse_line_str(line: &str) -> Result<Parsed<ParsedLine>, LineError> {
    parse_line(line.as_bytes())
}

fn parse_object(bytes: &[u8]) -> Result<JsonMap, LineError> {
    match crate::value_read::from_slice(bytes) {
        Ok(JsonValue::Object(map)) => Ok(map),
        Ok(other) => Err(LineError::NotAnObject {
            found: json_type_name(&other),
        }),
        Err(e) => Err(classify(bytes, &e)),
    }
}

/// Types the object `map` parsed from `bytes` (already repaired, if it needed it).
fn type_line(
    bytes: &[u8],
    map: JsonMap,
    mut warnings: Vec<ParseWarning>,
) -> Result<Parsed<ParsedLine>, LineError> {
    let kind = match map.get("type") {
        None => return Err(LineError::MissingType),
        Some(JsonValue::String(kind)) => kind.as_str(),
        Some(other) => {
            return Err(LineError::TypeNotString {
                found: json_type_name(other),
            });
        }
    };
    let value = match kind {
        "title" if TitleSlot::is_valid_slot(&map) => match typed::<TitleSlot>(&map) {
            Ok(slot) => ParsedLine::TitleSlot(slot),
            Err(reason) => untyped_line(map, "title slot", reason, &mut warnings),
        },
        "session" => match typed::<SessionHeader>(&map) {
            Ok(header) => {
                check_timestamp(
                    header.timestamp.as_ref().map(IsoTimestamp::as_str),
                    &mut warnings,
                );
                ParsedLine::Header(header)
            }
            Err(reason) => header_with_string_id(map, reason, &mut warnings),
        },
        _ => {
            // One pass that moves the parsed JSON into the typed structs; if anything does not
            // fit, parse again and type with fallbacks that keep every part (rare).
            let entry = match Entry::from_map_moved(map) {
                Ok(entry) => entry,
                Err(_) => Entry::from_map(parse_object(bytes)?),
            };
            finish_entry(&entry, &mut warnings);
            ParsedLine::Entry(entry)
        }
    };
    Ok(Parsed { value, warnings })
}

/// Reports an entry or header `timestamp` that is not an ISO-8601 date-time.
fn check_timestamp(timestamp: Option<&str>, warnings: &mut Vec<ParseWarning>) {
    if let Some(timestamp) = timestamp
        && !IsoTimestamp::is_valid_str(timestamp)
    {
        warnings.push(ParseWarning::InvalidTimestamp {
            value: timestamp.to_string(),
        });
    }
}

fn typed<T: for<'a> serde::Deserialize<'a>>(map: &JsonMap) -> Result<T, String> {
    T::deserialize(de::value::MapDeserializer::new(
        map.iter().map(|(k, v)| (k.as_str(), v)),
    ))
    .map_err(|e: serde_json::Error| e.to_string())
}

/// A `session` line whose fields do not all have the expected types. Both dialects accept a
/// header iff its `id` is a string, so such a line is still a [`SessionHeader`]: `id` typed,
/// every other key kept in `extra` (with a warning). Without a string `id` it is not a header.
fn header_with_string_id(
    mut map: JsonMap,
    reason: String,
    warnings: &mut Vec<ParseWarning>,
) -> ParsedLine {
    let Some(JsonValue::String(id)) = map.get("id").cloned() else {
        return untyped_line(map, "session header", reason, warnings);
    };
    warnings.push(ParseWarning::Untyped {
        reason: format!("session header fields kept untyped: {reason}"),
    });
    map.shift_remove("type");
    map.shift_remove("id");
    ParsedLine::Header(SessionHeader {
        id,
        extra: map,
        ..SessionHeader::default()
    })
}

fn untyped_line(
    map: JsonMap,
    what: &str,
    reason: String,
    warnings: &mut Vec<ParseWarning>,
) -> ParsedLine {
    warnings.push(ParseWarning::Untyped {
        reason: format!("{what} kept untyped: {reason}"),
    });
    ParsedLine::Entry(Entry::Unknown(UnknownEntry {
        value: map,
        reason: Some(reason),
    }))
}

fn json_type_name(value: &JsonValue) -> &'static str {
    match value {
        JsonValue::Null => "null",
        JsonValue::Bool(_) => "boolean",
        JsonValue::Number(_) => "number",
        JsonValue::String(_) => "string",
        JsonValue::Array(_) => "array",
        JsonValue::Object(_) => "object",
    }
}

/// Turns a serde_json failure on `bytes` into the error that says what is wrong.
fn classify(bytes: &[u8], error: &serde_json::Error) -> LineError {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return LineError::Blank;
    }
    if error.is_data() {
        // Syntax was fine; the top-level value was not what was asked for.
        return not_an_object(bytes);
    }
    LineError::NotJson {
        message: error.to_string(),
        column: byte_column(bytes, error.line(), error.column()),
    }
}

/// serde_json counts lines at each `\n` inside the input; turn its (line, column) into a
/// 1-based byte column of this one physical line (at least 1).
fn byte_column(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start = if line > 1 {
        memchr_nth_newline(bytes, line - 1).map_or(0, |i| i + 1)
    } else {
        0
    };
    (line_start + column).max(1)
}

fn memchr_nth_newline(bytes: &[u8], n: usize) -> Option<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(n - 1)
        .map(|(i, _)| i)
}

/// The error for a line that is valid JSON but not an object.
fn not_an_object(bytes: &[u8]) -> LineError {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let found = match first {
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        Some(b'{') => "object",
        _ => "number",
    };
    LineError::NotAnObject { found }
}

/// The warning for a line that holds code points of the carrier range (see
/// [`ParseWarning::AmbiguousPrivateUse`]); empty for nearly every line (two byte scans).
fn ambiguity_warnings(bytes: &[u8]) -> Vec<ParseWarning> {
    let count = ambiguous_private_use(bytes);
    if count == 0 {
        Vec::new()
    } else {
        vec![ParseWarning::AmbiguousPrivateUse { count }]
    }
}

/// How many code points U+10F800–U+10FFFF the JSON text `bytes` holds: raw (UTF-8 `F4 8F
/// A0..BF`) or as an escaped pair (`\udbfe`/`\udbff` then `\udc00`–`\udfff`).
pub(crate) fn ambiguous_private_use(bytes: &[u8]) -> usize {
    let raw = crate::js::carrier_count(bytes);
    // `\u` is rare in a line; an escaped backslash before `u` (`\\udbfe`) is text, which
    // counting the backslashes before the match tells apart.
    let escaped = memchr::memmem::find_iter(bytes, b"\\u")
        .filter(|&at| {
            let backslashes = bytes[..at]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            backslashes % 2 == 0
                && hex4(&bytes[at + 2..]).is_some_and(|high| (0xDBFE..=0xDBFF).contains(&high))
                && bytes.get(at + 6) == Some(&b'\\')
                && bytes.get(at + 7) == Some(&b'u')
                && hex4(&bytes[(at + 8).min(bytes.len())..])
                    .is_some_and(|low| (0xDC00..0xE000).contains(&low))
        })
        .count();
    raw + escaped
}

/// Repairs what JavaScript accepts but serde_json does not: invalid UTF-8 (lossy) and lone
/// surrogate escapes (rewritten as the escaped pair of their carrier). `None` when nothing
/// needed repair.
fn repair(bytes: &[u8]) -> Option<(String, Vec<ParseWarning>)> {
    let mut warnings = ambiguity_warnings(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => {
            warnings.push(ParseWarning::InvalidUtf8Replaced);
            String::from_utf8_lossy(bytes)
        }
    };
    let (text, count) = replace_lone_surrogates(&text);
    if count > 0 {
        warnings.push(ParseWarning::LoneSurrogateReplaced { count });
    }
    let repaired = count > 0 || warnings.contains(&ParseWarning::InvalidUtf8Replaced);
    repaired.then(|| (text.into_owned(), warnings))
}

fn hex4(bytes: &[u8]) -> Option<u16> {
    let digits = bytes.get(..4)?;
    let mut value = 0u16;
    for &d in digits {
        value = value * 16 + (d as char).to_digit(16)? as u16;
    }
    Some(value)
}

/// Rewrites the `\uXXXX` escape of each unpaired UTF-16 surrogate in JSON text to the escaped
/// pair of its carrier code point (U+D800+k → U+10F800+k, see [`crate::js::carrier_of`]), as
/// [`parse_line`] reads them; paired escapes and every other byte are left alone.
///
/// JavaScript's `JSON.stringify` writes lone surrogates (`"\ud83d"`) that serde_json rejects.
/// Use this to read such text (recorded outputs of the real implementations, for example) with
/// serde_json: the strings then hold the carriers, which [`crate::json`] writes back as the
/// original escapes.
///
/// ```
/// use pi_session_types::line::replace_lone_surrogate_escapes;
/// let text = r#"{"a":"\ud83d!","b":"\ud83d\ude00"}"#;
/// let read = replace_lone_surrogate_escapes(text);
/// assert_eq!(read, r#"{"a":"\udbfe\udc3d!","b":"\ud83d\ude00"}"#);
/// let value: serde_json::Value = serde_json::from_str(&read).unwrap();
/// assert_eq!(value["a"], "\u{10F83D}!");
/// assert_eq!(pi_session_types::json::to_js_string(&value).unwrap(), r#"{"a":"\ud83d!","b":"😀"}"#);
/// ```
pub fn replace_lone_surrogate_escapes(json_text: &str) -> Cow<'_, str> {
    replace_lone_surrogates(json_text).0
}

/// Rewrites `\uXXXX` escapes of unpaired UTF-16 surrogates to their carriers' escaped pairs;
/// returns the text and how many were rewritten. Paired escapes and every other byte are left alone.
pub(crate) fn replace_lone_surrogates(text: &str) -> (Cow<'_, str>, usize) {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut count = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = hex4(&bytes[i + 2..]) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if is_high {
            let next_is_low = bytes.get(i + 6) == Some(&b'\\')
                && bytes.get(i + 7) == Some(&b'u')
                && hex4(&bytes[(i + 8).min(bytes.len())..])
                    .is_some_and(|n| (0xDC00..0xE000).contains(&n));
            if next_is_low {
                i += 12;
                continue;
            }
        }
        if is_high || is_low {
            let buffer = out.get_or_insert_with(|| String::with_capacity(text.len()));
            buffer.push_str(&text[copied..i]);
            push_carrier_escape(buffer, unit);
            copied = i + 6;
            count += 1;
        }
        i += 6;
    }
    match out {
        Some(mut buffer) => {
            buffer.push_str(&text[copied..]);
            (Cow::Owned(buffer), count)
        }
        None => (Cow::Borrowed(text), 0),
    }
}

/// Appends the escaped UTF-16 pair of the carrier of the lone surrogate `unit`
/// (U+10F800+k = `\udbfe`/`\udbff` + a low surrogate).
fn push_carrier_escape(buffer: &mut String, unit: u16) {
    let offset = 0xF_F800 + u32::from(unit - 0xD800);
    let high = 0xD800 + (offset >> 10);
    let low = 0xDC00 + (offset & 0x3FF);
    buffer.push_str(&format!("\\u{high:04x}\\u{low:04x}"));
}

/// A JSON value seen where a string was expected, reduced to what the envelope needs.
enum Lenient<'a> {
    Absent,
    Null,
    Str(Cow<'a, str>),
    Other(&'static str),
}

impl<'a> Lenient<'a> {
    fn into_str(self) -> Option<Cow<'a, str>> {
        match self {
            Lenient::Str(s) => Some(s),
            _ => None,
        }
    }
}

struct LenientVisitor;

impl<'de> Visitor<'de> for LenientVisitor {
    type Value = Lenient<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Lenient::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Lenient::Str(Cow::Owned(v.to_string())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Lenient::Str(Cow::Owned(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient::Null)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Lenient::Other("boolean"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Lenient::Other("number"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Lenient::Other("number"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Lenient::Other("number"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient::Other("array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lenient::Other("object"))
    }
}

impl<'de> de::Deserialize<'de> for Lenient<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor)
    }
}

object_keys! {
    /// Which envelope key a map key is.
    EnvelopeKey {
        Type => "type",
        Id => "id",
        ParentId => "parentId",
        Timestamp => "timestamp",
    }
}

struct RawEnvelope<'a> {
    kind: Lenient<'a>,
    id: Lenient<'a>,
    parent_id: Lenient<'a>,
    timestamp: Lenient<'a>,
}

/// Visits the top-level value: `Some(envelope)` for an object (later duplicate keys win, as in
/// JavaScript), `None` for any other JSON value (consumed and validated).
struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Option<RawEnvelope<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut raw = RawEnvelope {
            kind: Lenient::Absent,
            id: Lenient::Absent,
            parent_id: Lenient::Absent,
            timestamp: Lenient::Absent,
        };
        while let Some(key) = map.next_key::<EnvelopeKey>()? {
            match key {
                EnvelopeKey::Type => raw.kind = map.next_value()?,
                EnvelopeKey::Id => raw.id = map.next_value()?,
                EnvelopeKey::ParentId => raw.parent_id = map.next_value()?,
                EnvelopeKey::Timestamp => raw.timestamp = map.next_value()?,
                EnvelopeKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(raw))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_are_rewritten_to_carriers_and_pairs_kept() {
        let (text, n) =
            replace_lone_surrogates(r#""\ud83d\ude00 \ud83d x \ude00 \\ud83d \ud83d\ud83d\ude00""#);
        assert_eq!(n, 3);
        assert_eq!(
            text,
            r#""\ud83d\ude00 \udbfe\udc3d x \udbff\ude00 \\ud83d \udbfe\udc3d\ud83d\ude00""#
        );
    }

    #[test]
    fn code_points_of_the_carrier_range_are_counted() {
        assert_eq!(
            ambiguous_private_use("a\u{10F800} \u{10FFFF} \u{10F7FF}".as_bytes()),
            2
        );
        assert_eq!(
            ambiguous_private_use(br#""\udbfe\udc00 \uDBFF\uDFFF \udbfd\udfff \udbfe""#),
            2
        );
        let parsed = parse_object_line("{\"a\":\"\u{10F83D}\"}".as_bytes()).unwrap();
        assert_eq!(
            parsed.warnings,
            [ParseWarning::AmbiguousPrivateUse { count: 1 }]
        );
    }

    /// The one pass types the nested parts by move and gives up (for the retry) on a mismatch
    /// there; elsewhere it keeps the fallbacks, so it never differs from `Entry::from_map`.
    #[test]
    fn the_one_pass_moves_nested_parts_and_gives_up_only_there() {
        let map = |json: serde_json::Value| match json {
            JsonValue::Object(map) => map,
            _ => unreachable!("an object literal"),
        };
        let block = serde_json::json!({"type": "image", "data": "AAAA", "mimeType": "image/png"});
        let bad_block = serde_json::json!({"type": "text", "text": 5});
        let lines = [
            // (line, typed by move without a retry)
            (
                serde_json::json!({"type": "message", "message": {"role": "user", "content": [block]}}),
                true,
            ),
            (
                serde_json::json!({"type": "message", "message": {"role": "bashExecution", "command": "ls", "images": [block]}}),
                true,
            ),
            (
                serde_json::json!({"type": "custom_message", "customType": "x", "content": [block], "display": true}),
                true,
            ),
            (
                serde_json::json!({"type": "message", "message": {"role": "user", "content": [bad_block]}}),
                false,
            ),
            (
                serde_json::json!({"type": "message", "message": {"role": "bashExecution", "images": [bad_block]}}),
                false,
            ),
            (
                serde_json::json!({"type": "custom_message", "content": [bad_block]}),
                false,
            ),
            // Elsewhere a mismatch keeps its fallback in the one pass too.
            (
                serde_json::json!({"type": "compaction", "summary": "s", "firstKeptEntryId": "a", "tokensBefore": 1,
                "systemMessage": {"role": "user", "content": [bad_block]}}),
                true,
            ),
        ];
        for (line, moved) in lines {
            let fallback = Entry::from_map(map(line.clone()));
            match Entry::from_map_moved(map(line.clone())) {
                Ok(entry) => {
                    assert!(moved, "{line} should need the retry");
                    assert_eq!(entry, fallback, "{line}");
                }
                Err(_) => assert!(!moved, "{line} should be typed in one pass"),
            }
        }
    }
}
