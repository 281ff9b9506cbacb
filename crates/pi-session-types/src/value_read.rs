//! A reader of one JSON value into a [`serde_json::Value`], for the values the readers of a
//! line take whole (a message's `content`, a block's `arguments`): the same value
//! `serde_json` reads, with the strings decoded 16 bytes at a time.
//!
//! Most of what a session sends is long text (tool output, code) with an escape every few dozen
//! bytes (`\n`, `\"`). `serde_json`'s reader stops at each escape and starts its search again;
//! this one searches each 16-byte chunk for the bytes a string stops at once
//! (`envelope_scan::escaped`, SSE2 on x86_64) and copies the runs between them.
//!
//! It reads only what it reads exactly as `serde_json` (with `preserve_order` and
//! `float_roundtrip`, the workspace's features) does, and answers `None` for anything else:
//! input that is not JSON, a lone UTF-16 surrogate escape (which this crate's other readers
//! carry, see [`crate::js`]), nesting deeper than `serde_json`'s limit. A number other than a
//! plain integer is read by `serde_json` itself. So a caller that falls back to `serde_json` on
//! `None` reads every input as before.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use crate::envelope_scan::escaped;
use crate::js_string::{JsString, stringify_escape_len};
use crate::json;

/// `serde_json`'s nesting limit: a value nested deeper is refused (and so is it here).
const DEPTH_LIMIT: usize = 128;

/// The JSON value at the start of `bytes` (after any whitespace) and the offset just past it:
/// what `serde_json::Deserializer::from_slice(bytes).into_iter::<Value>()` gives first and its
/// `byte_offset()`; `None` where that gives an error, and for what this reader leaves to
/// `serde_json` (see the module's docs). What follows a value that starts with `{`, `[` or `"`
/// is not looked at; a number or a literal must end before a byte that may end a value.
///
/// ```
/// use pi_session_types::value_read::read_value;
/// use serde_json::json;
/// let bytes = br#"[{"type":"text","text":"line\n\"quoted\""}], "next": 1"#;
/// let (value, len) = read_value(bytes).unwrap();
/// assert_eq!(value, json!([{"type": "text", "text": "line\n\"quoted\""}]));
/// assert_eq!(&bytes[len..], br#", "next": 1"#);
/// assert_eq!(read_value(br#"["\ud83d"]"#), None); // a lone surrogate: left to the caller
/// assert_eq!(read_value(br#"[1,]"#), None);
/// ```
pub fn read_value(bytes: &[u8]) -> Option<(Value, usize)> {
    let mut reader = Reader::new(bytes, json::Strings::Unknown);
    reader.skip_space();
    let delimited = matches!(reader.peek()?, b'{' | b'[' | b'"');
    let value = reader.value(0)?;
    // A number or a literal ends where `serde_json` sees a value end, as it checks.
    let ended = match reader.peek() {
        None => true,
        Some(next) => matches!(
            next,
            b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'[' | b']' | b'{' | b'}' | b',' | b':'
        ),
    };
    (delimited || ended).then_some((value, reader.at))
}

/// The JSON text `bytes` as `serde_json::from_slice::<Value>` reads it (whitespace around the
/// value allowed, nothing else), or `None` (see [`read_value`]).
///
/// ```
/// use pi_session_types::value_read::read_whole_value;
/// assert_eq!(read_whole_value(b" \"a\\tb\" "), Some("a\tb".into()));
/// assert_eq!(read_whole_value(b"\"a\" x"), None);
/// ```
pub fn read_whole_value(bytes: &[u8]) -> Option<Value> {
    let mut reader = Reader::new(bytes, json::Strings::Unknown);
    reader.skip_space();
    let value = reader.value(0)?;
    reader.skip_space();
    (reader.at == bytes.len()).then_some(value)
}

/// The JSON text `bytes` as `serde_json::from_slice::<Value>` reads it, its error included:
/// [`read_whole_value`] where it answers, serde_json where it does not. The one place where a
/// caller that parses a whole value meets both readers.
///
/// ```
/// use pi_session_types::value_read::from_slice;
/// assert_eq!(from_slice(br#"{"a":"b\nc"}"#).unwrap()["a"], "b\nc");
/// assert!(from_slice(br#"["\ud83d"]"#).is_err()); // serde_json's answer to a lone surrogate
/// ```
pub fn from_slice(bytes: &[u8]) -> serde_json::Result<Value> {
    match read_whole_value(bytes) {
        Some(value) => Ok(value),
        None => serde_json::from_slice(bytes),
    }
}

/// A value the listing readers ([`read_listed`], [`read_listed_keeping`]) read where a reader
/// looks at it (an array's item, an object's member): a string kept as `JSON.stringify`'s
/// spelling of it when the bytes spell it so (copied, not decoded: a text sent on as it is read
/// is then written as it is, see [`JsString`]), or any value as [`read_value`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Field {
    /// A string.
    Text(JsString),
    /// Any other value (the values inside it read as [`read_value`] reads them).
    Other(Value),
}

impl Field {
    /// The value [`read_value`] reads from the same bytes.
    pub fn into_value(self) -> Value {
        match self {
            Field::Text(text) => Value::String(text.into_string()),
            Field::Other(value) => value,
        }
    }

    /// The string, when it is one.
    ///
    /// ```
    /// use pi_session_types::value_read::Field;
    /// assert_eq!(Field::from(serde_json::json!("a")).as_text().map(|t| t.as_str()), Some("a"));
    /// assert_eq!(Field::from(serde_json::json!(1)).as_text(), None);
    /// ```
    pub fn as_text(&self) -> Option<&JsString> {
        match self {
            Field::Text(text) => Some(text),
            Field::Other(_) => None,
        }
    }
}

/// A value as a field: a string as its text, any other value as it is.
impl From<Value> for Field {
    fn from(value: Value) -> Self {
        match value {
            Value::String(text) => Field::Text(text.into()),
            other => Field::Other(other),
        }
    }
}

/// An object's members as [`read_listed`] gives them: each key with its value, in the order
/// they are written; a key decoded from the bytes, or the caller's own spelling of it where
/// [`read_listed_keeping`] kept it (no copy made). A key written twice is listed twice; the later one is the value
/// `serde_json`'s map keeps ([`Listed::into_value`] makes that map).
pub type Members = Vec<(Cow<'static, str>, Field)>;

/// An item of an array [`read_listed`] read: an object as its [`Members`], any other item as
/// its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    /// An object, its members listed (no map made of them).
    Object(Members),
    /// Any other value.
    Other(Field),
}

/// A value [`read_listed`] read: an array item by item, or any other value.
#[derive(Debug, Clone, PartialEq)]
pub enum Listed {
    /// An array, its objects listed as their members.
    Array(Vec<Element>),
    /// Any value that is not an array.
    Other(Field),
}

impl Listed {
    /// The value [`read_value`] reads from the same bytes (each object made a map, a key met
    /// twice in its first place with its later value).
    pub fn into_value(self) -> Value {
        match self {
            Listed::Array(items) => {
                Value::Array(items.into_iter().map(Element::into_value).collect())
            }
            Listed::Other(value) => value.into_value(),
        }
    }
}

impl Element {
    /// The item as a value ([`Listed::into_value`]).
    pub fn into_value(self) -> Value {
        match self {
            Element::Object(members) => Value::Object(
                members
                    .into_iter()
                    .map(|(key, value)| (key.into_owned(), value.into_value()))
                    .collect(),
            ),
            Element::Other(value) => value.into_value(),
        }
    }
}

/// [`read_value`], an array's objects left as lists of their members ([`Members`]): for a
/// reader that takes a few keys of each object of an array (rho's projection reads a message's
/// content blocks so), no map is made of them, no key hashed. It reads and refuses exactly
/// what [`read_value`] does: [`Listed::into_value`] of its answer is [`read_value`]'s value,
/// and the length is the same.
///
/// ```
/// use pi_session_types::value_read::{Element, Listed, read_listed, read_value};
/// use serde_json::json;
/// let bytes = br#"[{"type":"text","text":"a\nb"},"s"] rest"#;
/// let (listed, len) = read_listed(bytes).unwrap();
/// let Listed::Array(items) = &listed else { panic!() };
/// assert_eq!(items[0], Element::Object(vec![("type".into(), json!("text").into()), ("text".into(), json!("a\nb").into())]));
/// assert_eq!(Some((listed.into_value(), len)), read_value(bytes));
/// assert_eq!(read_listed(br#"{"a":1}"#).map(|(l, _)| l), Some(Listed::Other(json!({"a": 1}).into())));
/// ```
pub fn read_listed(bytes: &[u8]) -> Option<(Listed, usize)> {
    read_listed_given(bytes, json::Strings::Unknown)
}

/// [`read_listed`] of bytes whose strings are known to be `strings` (a line the open's scan
/// proved [`Strings::Stringified`](json::Strings::Stringified)): each string's end found by a
/// search for its closing quote, its spelling copied unchecked. Say so only of bytes a scan
/// proved: other bytes would be taken as canonical.
pub fn read_listed_given(bytes: &[u8], strings: json::Strings) -> Option<(Listed, usize)> {
    listed_with(bytes, strings, |reader, depth| {
        let mut members = Vec::new();
        reader.fields(depth, |key, value| members.push((Cow::Owned(key), value)))?;
        Some(members)
    })
}

/// [`read_listed`] with each object of the array read by `object` (given the reader at its `{`
/// and how deep it sits).
fn listed_with(
    bytes: &[u8],
    strings: json::Strings,
    mut object: impl FnMut(&mut Reader<'_>, usize) -> Option<Members>,
) -> Option<(Listed, usize)> {
    let mut reader = Reader::new(bytes, strings);
    reader.skip_space();
    match reader.peek()? {
        b'[' => {}
        b'"' => {
            let text = reader.field(0)?;
            return Some((Listed::Other(text), reader.at));
        }
        _ => {
            return read_value(bytes).map(|(value, len)| (Listed::Other(Field::Other(value)), len));
        }
    }
    // As `value(0)` reads an array: the array one deep, its objects two.
    let items = reader.items(1, |reader, depth| {
        if reader.peek()? != b'{' {
            return reader.field(depth).map(Element::Other);
        }
        object(reader, depth + 1).map(Element::Object)
    })?;
    Some((Listed::Array(items), reader.at))
}

/// [`read_listed`] of an array whose objects are read only as far as a reader looks: each
/// object's members named in `keep` are read (their values as [`read_value`] reads them), the
/// others stepped over unread: where rho's projection reads a block's type, text, picture and
/// call, a thinking block's text and signature (a fifth of the bytes of the real sessions in
/// the corpus) are never decoded. Any other value (the array's other items; a value that is
/// not an array) is read whole. What
/// it answers is what [`shallow::entry_with_message_keys`](crate::shallow) makes of a
/// message's `content` with those block keys ([`Listed::into_value`] of it is that value),
/// and it refuses what that one refuses: an object with a key spelled with an escape (it could
/// spell a kept one) or a kept key written twice. The values stepped over are not checked:
/// this is for text known to be JSON (the store checked every line when it opened the file).
///
/// ```
/// use pi_session_types::value_read::{Element, Listed, read_listed_keeping};
/// use serde_json::json;
/// let bytes = br#"[{"type":"thinking","thinking":"long","thinkingSignature":"x"},{"type":"text","text":"a"},"s"]"#;
/// let (listed, len) = read_listed_keeping(bytes, &["type", "text"]).unwrap();
/// let kept = |members: &[(&'static str, serde_json::Value)]| {
///     Element::Object(members.iter().map(|(k, v)| ((*k).into(), v.clone().into())).collect())
/// };
/// assert_eq!(listed, Listed::Array(vec![
///     kept(&[("type", json!("thinking"))]),
///     kept(&[("type", json!("text")), ("text", json!("a"))]),
///     Element::Other(json!("s").into()),
/// ]));
/// assert_eq!(len, bytes.len());
/// assert_eq!(read_listed_keeping(br#"[{"type":"a","type":"b"}]"#, &["type"]), None);
/// assert_eq!(read_listed_keeping(br#"[{"t\u0065xt":"a"}]"#, &["text"]), None);
/// ```
pub fn read_listed_keeping(bytes: &[u8], keep: &[&'static str]) -> Option<(Listed, usize)> {
    read_listed_keeping_given(bytes, keep, json::Strings::Unknown)
}

/// [`read_listed_keeping`] of bytes whose strings are known to be `strings`, as
/// [`read_listed_given`] reads them.
pub fn read_listed_keeping_given(
    bytes: &[u8],
    keep: &[&'static str],
    strings: json::Strings,
) -> Option<(Listed, usize)> {
    // Each kept key is marked in a word as it is met.
    if keep.len() > u64::BITS as usize {
        return None;
    }
    listed_with(bytes, strings, |reader, depth| {
        let mut members = Vec::new();
        reader.kept_members(depth, keep, |key, value| {
            members.push((Cow::Borrowed(key), value));
        })?;
        Some(members)
    })
}

/// A cursor over the bytes. Every read is bounds-checked: bad input ends the read with `None`.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// What is known of the strings of `bytes` ([`Reader::spelled_string`]).
    strings: json::Strings,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `bytes`, whose strings are known to be `strings`.
    fn new(bytes: &'a [u8], strings: json::Strings) -> Self {
        Self {
            bytes,
            at: 0,
            strings,
        }
    }
}

impl Reader<'_> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline]
    fn skip_space(&mut self) {
        self.at = json::skip_whitespace(self.bytes, self.at);
    }

    /// `literal` at the cursor, stepped over.
    fn eat(&mut self, literal: &[u8]) -> Option<()> {
        self.at = json::past_literal(self.bytes, self.at, literal)?;
        Some(())
    }

    /// [`Self::value`] as a [`Field`]: a string kept as its spelling where it is
    /// `JSON.stringify`'s.
    fn field(&mut self, depth: usize) -> Option<Field> {
        if self.peek()? == b'"' {
            return self.spelled_string().map(Field::Text);
        }
        self.value(depth).map(Field::Other)
    }

    /// The value at the cursor (no whitespace before it), `depth` containers deep.
    fn value(&mut self, depth: usize) -> Option<Value> {
        match self.peek()? {
            b'"' => self.string().map(Value::String),
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b't' => self.eat(b"true").map(|()| Value::Bool(true)),
            b'f' => self.eat(b"false").map(|()| Value::Bool(false)),
            b'n' => self.eat(b"null").map(|()| Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        let mut map = Map::new();
        // A key met again keeps its first place and takes the later value, as `serde_json`'s
        // map does.
        self.members(depth, |key, value| {
            map.insert(key, value);
        })?;
        Some(Value::Object(map))
    }

    /// The members of the object whose `{` is at the cursor (`depth` containers deep, itself
    /// included), each handed to `member` in order; the cursor past its `}`.
    fn members(&mut self, depth: usize, member: impl FnMut(String, Value)) -> Option<()> {
        self.members_read(depth, Self::value, member)
    }

    /// [`Self::members`] with their values as [`Field`]s.
    fn fields(&mut self, depth: usize, member: impl FnMut(String, Field)) -> Option<()> {
        self.members_read(depth, Self::field, member)
    }

    /// [`Self::members`], each value read by `read`.
    fn members_read<V>(
        &mut self,
        depth: usize,
        read: fn(&mut Self, usize) -> Option<V>,
        mut member: impl FnMut(String, V),
    ) -> Option<()> {
        if depth > DEPTH_LIMIT {
            return None;
        }
        if self.opened(b'}')? {
            return Some(());
        }
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.skip_space();
            self.eat(b":")?;
            self.skip_space();
            let value = read(self, depth)?;
            member(key, value);
            if self.closed(b'}')? {
                return Some(());
            }
        }
    }

    /// [`Self::members`] of the members named in `keep` (at most 64), each handed to `member`
    /// with its name as `keep` spells it; the values of the others stepped over unread
    /// ([`json::skip_value`]). `None` for a key spelled with an escape, or a kept key met twice
    /// ([`read_listed_keeping`]).
    fn kept_members<'k>(
        &mut self,
        depth: usize,
        keep: &[&'k str],
        mut member: impl FnMut(&'k str, Field),
    ) -> Option<()> {
        if depth > DEPTH_LIMIT {
            return None;
        }
        if self.opened(b'}')? {
            return Some(());
        }
        let mut met = 0u64;
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            // Compared as written, as the map's reader compares keys.
            let len = json::string_len(self.bytes.get(self.at..)?)?;
            let name = &self.bytes[self.at + 1..self.at + len - 1];
            if name.contains(&b'\\') {
                return None;
            }
            self.at += len;
            self.skip_space();
            self.eat(b":")?;
            self.skip_space();
            match keep.iter().position(|kept| kept.as_bytes() == name) {
                Some(at) => {
                    let bit = 1u64 << at;
                    if met & bit != 0 {
                        return None;
                    }
                    met |= bit;
                    let value = self.field(depth)?;
                    member(keep[at], value);
                }
                None => self.at = json::skip_value(self.bytes, self.at)?,
            }
            if self.closed(b'}')? {
                return Some(());
            }
        }
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.items(depth, |reader, depth| reader.value(depth))
            .map(Value::Array)
    }

    /// The items of the array whose `[` is at the cursor (`depth` containers deep, itself
    /// included), each read by `item` (given the reader at the item and `depth`); the cursor
    /// past its `]`.
    fn items<T>(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self, usize) -> Option<T>,
    ) -> Option<Vec<T>> {
        if depth > DEPTH_LIMIT {
            return None;
        }
        let mut items = Vec::new();
        if self.opened(b']')? {
            return Some(items);
        }
        loop {
            items.push(item(self, depth)?);
            if self.closed(b']')? {
                return Some(items);
            }
        }
    }

    /// Past a container's opening byte (at the cursor) and the whitespace after it: `true`
    /// past its closing `close` too (it is empty), `false` at its first item.
    fn opened(&mut self, close: u8) -> Option<bool> {
        self.at += 1;
        self.skip_space();
        let empty = self.peek()? == close;
        self.at += usize::from(empty);
        Some(empty)
    }

    /// After an item: `true` past the container's closing `close`, `false` past a comma and
    /// the whitespace after it (at the next item), `None` for anything else.
    fn closed(&mut self, close: u8) -> Option<bool> {
        self.skip_space();
        match self.peek()? {
            b',' => {
                self.at += 1;
                self.skip_space();
                Some(false)
            }
            byte if byte == close => {
                self.at += 1;
                Some(true)
            }
            _ => None,
        }
    }

    /// A number: a plain integer read here as `serde_json` reads it (`u64`, or a negative
    /// `i64`); any other (a fraction, an exponent, `-0`, one too long for 64 bits) checked
    /// against JSON's grammar here and read by `serde_json` itself.
    fn number(&mut self) -> Option<Value> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let digits = self.at;
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.skip_digits(),
            _ => return None,
        }
        let integer = self.at - digits;
        let mut plain = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits_after()?;
            plain = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.digits_after()?;
            plain = false;
        }
        let text = &self.bytes[start..self.at];
        // 19 digits always fit a `u64`, 18 an `i64`'s negative range.
        if plain && !negative && integer <= 19 {
            let n = text.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
            return Some(Value::Number(n.into()));
        }
        if plain && negative && integer <= 18 && text[1] != b'0' {
            let n = text[1..]
                .iter()
                .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
            return Some(Value::Number((-n).into()));
        }
        serde_json::from_slice::<Number>(text)
            .ok()
            .map(Value::Number)
    }

    fn skip_digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    /// At least one digit, stepped over.
    fn digits_after(&mut self) -> Option<()> {
        let start = self.at;
        self.skip_digits();
        (self.at > start).then_some(())
    }

    /// The string whose opening quote is at the cursor, decoded; the cursor past its closing
    /// quote.
    fn string(&mut self) -> Option<String> {
        let bytes = self.bytes;
        let start = self.at + 1;
        // Most strings hold no escape: found whole, copied once.
        let mut at = next_stop(bytes, start)?;
        if bytes[at] == b'"' {
            self.at = at + 1;
            return std::str::from_utf8(&bytes[start..at])
                .ok()
                .map(str::to_owned);
        }
        // A text with escapes (a tool's output: a `\n` every line) is decoded into a buffer
        // sized from its spelling, found whole first (decoding never lengthens a text): it
        // never grows, copying what it holds each time.
        let spelled = json::string_len(bytes.get(self.at..)?)?;
        let mut out = Vec::with_capacity(spelled);
        out.extend_from_slice(&bytes[start..at]);
        loop {
            match bytes[at] {
                b'"' => {
                    self.at = at + 1;
                    return String::from_utf8(out).ok();
                }
                b'\\' => at = unescape(bytes, at, &mut out)?,
                // A control character: JSON has it only escaped.
                _ => return None,
            }
            let run = at;
            at = next_stop(bytes, at)?;
            out.extend_from_slice(&bytes[run..at]);
        }
    }
}

impl Reader<'_> {
    /// The string whose opening quote is at the cursor as a [`JsString`]: its spelling
    /// copied when every escape in it is one `JSON.stringify` writes (most texts of a session:
    /// pi and omp write their lines with it), else decoded ([`Self::string`]); the cursor past
    /// its closing quote.
    fn spelled_string(&mut self) -> Option<JsString> {
        let bytes = self.bytes;
        if self.strings == json::Strings::Stringified {
            return self.known_spelled_string();
        }
        let start = self.at + 1;
        let mut at = next_stop(bytes, start)?;
        let mut escaped = false;
        loop {
            match bytes[at] {
                b'"' => break,
                b'\\' => match stringify_escape_len(bytes, at) {
                    Some(len) => {
                        escaped = true;
                        at += len;
                    }
                    None => return self.string().map(JsString::from),
                },
                // A control character: JSON has it only escaped.
                _ => return None,
            }
            at = next_stop(bytes, at)?;
        }
        let spelling = std::str::from_utf8(&bytes[start..at]).ok()?.to_owned();
        self.at = at + 1;
        Some(JsString::spelled(spelling, escaped))
    }

    /// [`Self::spelled_string`] of bytes whose strings are `JSON.stringify`'s spelling
    /// ([`json::Strings::Stringified`]): found as the canonical walk finds them
    /// ([`json::known_string`]), the spelling copied.
    fn known_spelled_string(&mut self) -> Option<JsString> {
        let (text, end, escaped) = json::known_string(self.bytes, self.at, self.at + 1)?;
        let spelling = std::str::from_utf8(text).ok()?.to_owned();
        self.at = end;
        Some(JsString::spelled(spelling, escaped))
    }
}

/// From `at` inside a string, the offset of the first byte a string stops at (a `"`, a `\\`
/// or a control character), 16 bytes at a time; `None` when the bytes end first.
#[inline(always)]
fn next_stop(bytes: &[u8], mut at: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(at..at + 16).and_then(|c| c.first_chunk()) {
        let stops = escaped(chunk);
        if stops != 0 {
            return Some(at + stops.trailing_zeros() as usize);
        }
        at += 16;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|plain| at + plain)
}

/// The escape whose backslash is at `at`, decoded onto `out`; the offset past it. `None` for
/// an escape JSON does not have, and for a lone surrogate (a high one not followed by a low
/// one's escape, or a low one alone).
fn unescape(bytes: &[u8], at: usize, out: &mut Vec<u8>) -> Option<usize> {
    let byte = match *bytes.get(at + 1)? {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'b' => 0x08,
        b'f' => 0x0c,
        b'u' => {
            let unit = hex4(bytes, at + 2)?;
            let (code, end) = match unit {
                0xD800..=0xDBFF => {
                    if bytes.get(at + 6..at + 8)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(bytes, at + 8)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code =
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                    (code, at + 12)
                }
                0xDC00..=0xDFFF => return None,
                unit => (u32::from(unit), at + 6),
            };
            let c = char::from_u32(code)?;
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            return Some(end);
        }
        _ => return None,
    };
    out.push(byte);
    Some(at + 2)
}

/// The text of a string's bytes between its quotes, `text`, its escapes decoded ([`unescape`]):
/// `None` for an escape JSON does not have or a lone surrogate's, and for bytes that are not
/// UTF-8.
pub(crate) fn unescaped(text: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'\\', text.get(at..)?) {
        let slash = at + found;
        out.extend_from_slice(&text[at..slash]);
        at = unescape(text, slash, &mut out)?;
    }
    out.extend_from_slice(text.get(at..)?);
    String::from_utf8(out).ok()
}

/// The four hex digits at `at` as a UTF-16 unit.
fn hex4(bytes: &[u8], at: usize) -> Option<u16> {
    bytes.get(at..at + 4)?.iter().try_fold(0u16, |unit, &b| {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        Some(unit << 4 | u16::from(digit))
    })
}

#[cfg(test)]
mod tests {
    use super::{read_listed, read_value, read_whole_value};
    use proptest::prelude::*;
    use serde_json::Value;

    /// What `serde_json` reads at the start of `bytes` and where it ends.
    fn serde_at(bytes: &[u8]) -> Option<(Value, usize)> {
        let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<Value>();
        let value = values.next()?.ok()?;
        Some((value, values.byte_offset()))
    }

    /// Where the two readers may differ: `None` here is always allowed (the caller reads with
    /// `serde_json` then); `Some` must be `serde_json`'s answer.
    fn agrees(bytes: &[u8]) {
        let listed = read_listed(bytes).map(|(listed, len)| (listed.into_value(), len));
        assert_eq!(
            listed,
            read_value(bytes),
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
        if let Some(read) = read_value(bytes) {
            assert_eq!(
                Some(&read),
                serde_at(bytes).as_ref(),
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        if let Some(read) = read_whole_value(bytes) {
            let serde: Option<Value> = serde_json::from_slice(bytes).ok();
            assert_eq!(Some(read), serde, "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn reads_what_serde_json_reads() {
        let cases: &[&[u8]] = &[
            br#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            br#" [ 1 , -2 , 3.5 , 1e3 , -0 , 0 , 18446744073709551615 , 18446744073709551616 ] "#,
            br#"[-9223372036854775808, -9223372036854775809, 123456789012345678901234]"#,
            br#"{"a":1,"a":2,"b":3}"#,
            br#""tab\there \"q\" \\ \/ \b\f\n\r \u00e9 \ud83d\ude00 \u0000""#,
            "\"plain ascii that runs past sixteen bytes, and é ü 😀 beyond\"".as_bytes(),
            br#"["a long text with an escape every few bytes\n and more\n and \"quotes\" too"]"#,
        ];
        for case in cases {
            let (value, len) = read_value(case).unwrap();
            assert_eq!(Some((value, len)), serde_at(case));
            agrees(case);
        }
    }

    #[test]
    fn refuses_what_serde_json_refuses_or_it_leaves_to_serde_json() {
        let cases: &[&[u8]] = &[
            br#"["\ud83d"]"#,
            br#"["\ude00"]"#,
            br#"["\ud83d\u0041"]"#,
            br#"[01]"#,
            br#"[1.]"#,
            br#"[1e]"#,
            br#"[-]"#,
            br#"{"a" 1}"#,
            br#"{"a":1,}"#,
            br#"["unterminated"#,
            b"[\"raw\ttab\"]",
            b"[\"bad \xff byte\"]",
            br#"["\x"]"#,
            br#"["\u12G4"]"#,
            br#"[tru]"#,
            br#"{1:2}"#,
        ];
        for case in cases {
            assert_eq!(
                read_value(case),
                None,
                "{:?}",
                String::from_utf8_lossy(case)
            );
            agrees(case);
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(read_value(deep.as_bytes()), None);
        let shallow = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(read_value(shallow.as_bytes()), serde_at(shallow.as_bytes()));
    }

    #[test]
    fn a_listed_string_keeps_json_stringify_spelling_and_decodes_any_other() {
        use super::{Element, Field, Listed, read_listed_keeping};
        use std::borrow::Cow;
        let bytes = br#"[{"type":"text","text":"a\n\"b\" \u001b"},{"text":"caf\u00e9 \/"},"s\t"]"#;
        let (listed, _) = read_listed_keeping(bytes, &["text"]).unwrap();
        let Listed::Array(items) = listed else {
            panic!("{listed:?}")
        };
        let texts: Vec<_> = items
            .iter()
            .map(|item| match item {
                Element::Object(members) => members[0].1.as_text().unwrap(),
                Element::Other(Field::Text(text)) => text,
                other => panic!("{other:?}"),
            })
            .collect();
        // Kept as written: `JSON.stringify` spells them so.
        assert!(matches!(
            texts[0].spelling(),
            Cow::Borrowed(r#"a\n\"b\" \u001b"#)
        ));
        assert_eq!(texts[0].as_str(), "a\n\"b\" \u{1b}");
        assert!(matches!(texts[2].spelling(), Cow::Borrowed(r#"s\t"#)));
        // Decoded: it writes `é` and `/` as they are.
        assert!(matches!(texts[1].spelling(), Cow::Owned(_)));
        assert_eq!(texts[1].spelling(), "café /");
    }

    /// Bytes whose strings are known to be `JSON.stringify`'s spelling read as any bytes read:
    /// each string's end found by its quotes (backslashes before a quote counted), its
    /// spelling and whether it holds an escape as the checking reader finds them.
    #[test]
    fn strings_known_as_stringify_spells_them_read_as_checked_ones() {
        use super::{Listed, read_listed_given, read_listed_keeping, read_listed_keeping_given};
        use crate::json::Strings;
        let texts = [
            r#""""#,
            r#""plain""#,
            r#""a\n\"b\"""#,
            r#""ends in a backslash \\""#,
            r#""\\\"\\""#,
            "\"café ☕\"",
            r#""\u001b over sixteen bytes \\\\""#,
        ];
        let decoded = |read: Option<(Listed, usize)>| read.map(|(l, len)| (l.into_value(), len));
        for text in texts {
            let array = format!(r#"[{{"type":"text","text":{text},"other":{text}}},{text}],"#);
            let bytes = array.as_bytes();
            let checked = read_listed_keeping(bytes, &["text"]);
            assert!(checked.is_some(), "{text}");
            let known = read_listed_keeping_given(bytes, &["text"], Strings::Stringified);
            assert_eq!(known, checked, "{text}");
            assert_eq!(decoded(known), decoded(checked), "{text}");
            let string = format!("{text},");
            let checked = super::read_listed(string.as_bytes());
            let known = read_listed_given(string.as_bytes(), Strings::Stringified);
            assert_eq!(known, checked, "{text}");
            assert_eq!(decoded(known), decoded(checked), "{text}");
        }
    }

    /// A JSON text made of the pieces a reader could trip over (escapes at a chunk's edge,
    /// text that is not ASCII, numbers of every kind), and bytes spliced in that may break it.
    fn json_text() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just("a".to_owned()),
            Just("0123456789abcdef".to_owned()),
            Just("\\n".to_owned()),
            Just("\\\"".to_owned()),
            Just("\\\\".to_owned()),
            Just("\\u00e9".to_owned()),
            Just("\\ud83d\\ude00".to_owned()),
            Just("\\ud83d".to_owned()),
            Just("é".to_owned()),
            Just("😀".to_owned()),
            Just("\t".to_owned()),
        ];
        let text = prop::collection::vec(piece, 0..12).prop_map(|p| format!("\"{}\"", p.concat()));
        let number = prop_oneof![
            any::<u64>().prop_map(|n| n.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| n.to_string()),
            Just("-0".to_owned()),
            Just("1e400".to_owned()),
            Just("99999999999999999999999".to_owned()),
            Just("-1.5E-3".to_owned()),
        ];
        let leaf = prop_oneof![
            text.clone(),
            number,
            Just("true".to_owned()),
            Just("null".to_owned())
        ];
        let tree = leaf.prop_recursive(4, 32, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec((text.clone(), inner), 0..6).prop_map(|v| {
                    let members: Vec<String> =
                        v.into_iter().map(|(k, v)| format!("{k} : {v}")).collect();
                    format!("{{ {} }}", members.join(" ,"))
                }),
            ]
        });
        (tree, any::<Option<(prop::sample::Index, u8)>>()).prop_map(|(text, splice)| {
            let mut bytes = text.into_bytes();
            if let Some((at, byte)) = splice {
                let at = at.index(bytes.len() + 1);
                bytes.insert(at, byte);
            }
            bytes
        })
    }

    proptest! {
        #[test]
        fn a_value_read_is_the_one_serde_json_reads(bytes in json_text()) {
            agrees(&bytes);
        }
    }
}
