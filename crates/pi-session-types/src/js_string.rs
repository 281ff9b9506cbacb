//! A JavaScript string that may be carried as `JSON.stringify`'s spelling of it.
//!
//! Most of what a context sends is text read from a session's lines and written out again
//! (tool output, code, replies). A reader that decodes such a text (`\n` to a newline, `\"` to a
//! quote) only for the writer to escape it again does twice the work for the same bytes.
//! [`JsString`] holds either the text or, when a reader found it spelled as `JSON.stringify`
//! spells it, that spelling: [`crate::json`]'s writer copies a spelling as it is, and the text
//! is decoded only when something looks at it ([`JsString::as_str`], once, kept).
//!
//! Both forms are the same string: equality, ordering, hashing, `Debug` and `Display` go by the
//! text, and any other serializer (serde_json's own, `to_value`) is given the text.
//!
//! ```
//! use pi_session_types::js_string::JsString;
//! use pi_session_types::json::to_js_string;
//! let spelled = JsString::from_spelling(r#"line\n\"quoted\""#).unwrap();
//! assert_eq!(spelled.as_str(), "line\n\"quoted\"");
//! assert_eq!(spelled, JsString::from("line\n\"quoted\""));
//! assert_eq!(to_js_string(&spelled).unwrap(), r#""line\n\"quoted\"""#);
//! assert_eq!(serde_json::to_string(&spelled).unwrap(), r#""line\n\"quoted\"""#);
//! // Not `JSON.stringify`'s spelling (it writes `é` as it is, and `/` unescaped):
//! assert_eq!(JsString::from_spelling(r#"caf\u00e9"#), None);
//! assert_eq!(JsString::from_spelling(r#"a\/b"#), None);
//! ```

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

/// The name of the newtype struct a [`JsString`] serialises as: [`crate::json`]'s writer
/// knows it and copies the spelling the struct holds; any other serializer sees through it to
/// the text.
pub(crate) const SPELLED_TOKEN: &str = "$pi_session_types::JsString";

/// A JavaScript string: its text, or `JSON.stringify`'s spelling of it (what lies between the
/// quotes). See the [module docs](self).
///
/// Lone UTF-16 surrogates are carried in the text as [`crate::js`] describes; a spelling never
/// holds one (a reader leaves such a string decoded).
#[derive(Clone, Default)]
pub struct JsString(Repr);

#[derive(Clone)]
enum Repr {
    /// The text.
    Text(String),
    /// `JSON.stringify`'s spelling; `escaped`: it holds an escape (else it is the text).
    Spelled {
        spelling: String,
        escaped: bool,
        /// The text, decoded on the first look.
        text: OnceLock<String>,
    },
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Text(String::new())
    }
}

impl JsString {
    /// The string `JSON.stringify` spells `spelling` (between the quotes), when it is its
    /// spelling: escapes only of `"`, `\` and U+0000–U+001F (`\b \f \n \r \t`, else lowercase
    /// `\u00xx`), every other character as it is. `None` for anything else (an escape
    /// `JSON.stringify` does not write, a raw quote, backslash or control character).
    pub fn from_spelling(spelling: &str) -> Option<Self> {
        let bytes = spelling.as_bytes();
        let mut escaped = false;
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'\\' => {
                    at += stringify_escape_len(bytes, at)?;
                    escaped = true;
                }
                b'"' | 0..0x20 => return None,
                _ => at += 1,
            }
        }
        Some(Self::spelled(spelling.to_owned(), escaped))
    }

    /// `text` held as `JSON.stringify`'s spelling of it (made now): for a text joined to
    /// spelled ones ([`Self::push`]), which then stay spelled.
    ///
    /// ```
    /// use pi_session_types::js_string::JsString;
    /// let mut joined = JsString::from_spelling(r#"a\tb"#).unwrap();
    /// joined.push(&JsString::spelled_of("\n"));
    /// assert_eq!(joined.spelling(), r#"a\tb\n"#);
    /// assert_eq!(joined, "a\tb\n");
    /// ```
    pub fn spelled_of(text: &str) -> Self {
        // A spelling holds no lone surrogate's escape (joined spellings could pair two).
        if crate::js::has_lone_surrogate(text) {
            return Self::from(text);
        }
        let spelling = spell(text);
        let escaped = spelling.contains('\\');
        Self::spelled(spelling, escaped)
    }

    /// A spelling a reader checked ([`stringify_escape_len`] at each backslash).
    pub(crate) fn spelled(spelling: String, escaped: bool) -> Self {
        JsString(Repr::Spelled {
            spelling,
            escaped,
            text: OnceLock::new(),
        })
    }

    /// The text (decoded from the spelling on the first call, then kept).
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Text(text) => text,
            Repr::Spelled {
                spelling,
                escaped: false,
                ..
            } => spelling,
            Repr::Spelled { spelling, text, .. } => text.get_or_init(|| decode(spelling)),
        }
    }

    /// The text, moved out where it is held.
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Text(text) => text,
            Repr::Spelled {
                spelling,
                escaped: false,
                ..
            } => spelling,
            Repr::Spelled { spelling, text, .. } => {
                text.into_inner().unwrap_or_else(|| decode(&spelling))
            }
        }
    }

    /// Whether the string is empty (never decodes).
    pub fn is_empty(&self) -> bool {
        match &self.0 {
            Repr::Text(text) => text.is_empty(),
            Repr::Spelled { spelling, .. } => spelling.is_empty(),
        }
    }

    /// Whether the text is empty or Unicode whitespace alone (`str::trim` leaves nothing);
    /// told from a spelling's first byte where it can be.
    pub fn is_blank(&self) -> bool {
        if let Repr::Spelled { spelling, .. } = &self.0
            && let Some(&first) = spelling.as_bytes().first()
            && first.is_ascii_graphic()
            && first != b'\\'
        {
            return false;
        }
        self.as_str().trim().is_empty()
    }

    /// `JSON.stringify`'s spelling of the string, between the quotes: the one held, or the
    /// text's, made.
    pub fn spelling(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Spelled { spelling, .. } => Cow::Borrowed(spelling),
            Repr::Text(text) => Cow::Owned(spell(text)),
        }
    }

    /// `self + other`: spellings joined where both are spelled (and no escaped surrogate half
    /// meets another at the seam, which a reader never leaves), the texts otherwise.
    pub fn push(&mut self, other: &JsString) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
            return;
        }
        if let (
            Repr::Spelled {
                spelling,
                escaped,
                text,
            },
            Repr::Spelled {
                spelling: more,
                escaped: more_escaped,
                ..
            },
        ) = (&mut self.0, &other.0)
        {
            spelling.push_str(more);
            *escaped |= *more_escaped;
            // A text decoded before is the text of less.
            *text = OnceLock::new();
            return;
        }
        let mut text = std::mem::take(self).into_string();
        text.push_str(other.as_str());
        *self = JsString::from(text);
    }

    /// The spelling as held, for the writer: `None` for a string held as its text.
    pub(crate) fn held_spelling(&self) -> Option<&str> {
        match &self.0 {
            Repr::Spelled { spelling, .. } => Some(spelling),
            Repr::Text(_) => None,
        }
    }
}

/// The length of the escape whose backslash is at `at` when a spelling may hold it: one
/// `JSON.stringify` writes ([`crate::json::stringify_escape`]) but a surrogate's, which a
/// [`JsString`] leaves decoded (two spellings joined could pair two halves).
pub(crate) fn stringify_escape_len(bytes: &[u8], at: usize) -> Option<usize> {
    use crate::json::StringifyEscape;
    match crate::json::stringify_escape(bytes, at)? {
        (StringifyEscape::Short | StringifyEscape::Control, len) => Some(len),
        (StringifyEscape::Surrogate(_), _) => None,
    }
}

/// The text a checked spelling stands for ([`crate::value_read`]'s decoding of escapes).
fn decode(spelling: &str) -> String {
    // A checked spelling holds only escapes that decode: the default is never taken.
    crate::value_read::unescaped(spelling.as_bytes()).unwrap_or_default()
}

/// `JSON.stringify`'s spelling of `text` between the quotes.
fn spell(text: &str) -> String {
    let written = crate::json::to_js_vec(text).unwrap_or_default();
    let inner = written
        .get(1..written.len().saturating_sub(1))
        .unwrap_or_default();
    String::from_utf8_lossy(inner).into_owned()
}

impl std::ops::Deref for JsString {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for JsString {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for JsString {
    fn from(text: String) -> Self {
        JsString(Repr::Text(text))
    }
}

impl From<&str> for JsString {
    fn from(text: &str) -> Self {
        JsString(Repr::Text(text.to_owned()))
    }
}

impl From<&String> for JsString {
    fn from(text: &String) -> Self {
        JsString(Repr::Text(text.clone()))
    }
}

impl From<Cow<'_, str>> for JsString {
    fn from(text: Cow<'_, str>) -> Self {
        JsString(Repr::Text(text.into_owned()))
    }
}

impl From<JsString> for String {
    fn from(text: JsString) -> Self {
        text.into_string()
    }
}

impl From<JsString> for serde_json::Value {
    fn from(text: JsString) -> Self {
        serde_json::Value::String(text.into_string())
    }
}

impl PartialEq for JsString {
    fn eq(&self, other: &Self) -> bool {
        match (self.held_spelling(), other.held_spelling()) {
            (Some(a), Some(b)) => a == b,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for JsString {}

impl PartialEq<str> for JsString {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for JsString {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for JsString {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialOrd for JsString {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for JsString {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for JsString {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for JsString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a [`JsString`] hands the serializer inside its newtype struct: shown with `{:#}`
/// ([`crate::json`]'s writer, which alone asks so, and only inside that struct), the spelling;
/// shown with `{}` (every other serializer's `collect_str`), the text.
pub(crate) struct Spelling<'a>(pub(crate) &'a JsString);

impl fmt::Display for Spelling<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.write_str(&self.0.spelling())
        } else {
            f.write_str(self.0.as_str())
        }
    }
}

impl serde::Serialize for Spelling<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl serde::Serialize for JsString {
    /// A JSON string of the text: [`crate::json`]'s writer copies a spelling held as it is.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Text(text) => serializer.serialize_str(text),
            Repr::Spelled { .. } => {
                serializer.serialize_newtype_struct(SPELLED_TOKEN, &Spelling(self))
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for JsString {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(JsString::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{to_js_string, to_js_vec_through_serde_json};

    /// Every escape `JSON.stringify` writes, and text around them that is not ASCII.
    const SPELLINGS: &[&str] = &[
        "",
        "plain",
        r#"a\nb\tc\r\"d\"\\e\bf\fg"#,
        r#"\u0000\u001b\u001f é 😀 /"#,
        r#"\n"#,
    ];

    #[test]
    fn a_spelling_is_written_as_held_and_read_as_its_text() {
        for spelling in SPELLINGS {
            let spelled = JsString::from_spelling(spelling).unwrap();
            let written = format!("\"{spelling}\"");
            let text: String = serde_json::from_str(&written).unwrap();
            assert_eq!(spelled.as_str(), text, "{spelling}");
            assert_eq!(spelled.clone().into_string(), text);
            assert_eq!(spelled, JsString::from(text.as_str()));
            assert_eq!(spelled.is_empty(), text.is_empty());
            assert_eq!(spelled.is_blank(), text.trim().is_empty());
            // Ours copies the spelling; serde_json's writer and its formatter-driven path
            // are handed the text; all write the same.
            assert_eq!(to_js_string(&spelled).unwrap(), written);
            assert_eq!(
                to_js_vec_through_serde_json(&spelled).unwrap(),
                written.as_bytes()
            );
            assert_eq!(serde_json::to_string(&spelled).unwrap(), written);
            assert_eq!(serde_json::to_value(&spelled).unwrap(), text.as_str());
            assert_eq!(JsString::from(text.as_str()).spelling(), *spelling);
        }
    }

    #[test]
    fn refuses_what_json_stringify_does_not_write() {
        for other in [
            r#"\/"#,
            r#"\u00e9"#,
            r#"\u000a"#,
            r#"\u001B"#,
            r#"\ud83d"#,
            r#"\ud83d\ude00"#,
            "\"",
            "tab\there",
            r#"\"#,
            r#"\u00"#,
            r#"\x"#,
        ] {
            assert_eq!(JsString::from_spelling(other), None, "{other}");
        }
    }

    #[test]
    fn joins_spellings_or_texts() {
        let mut joined = JsString::from_spelling(r#"a\n"#).unwrap();
        assert_eq!(joined, "a\n"); // decoded before it grows
        joined.push(&JsString::from_spelling(r#"b\""#).unwrap());
        assert_eq!(joined.held_spelling(), Some(r#"a\nb\""#));
        assert_eq!(joined, "a\nb\"");
        joined.push(&JsString::from("\tc"));
        assert_eq!(joined.held_spelling(), None);
        assert_eq!(joined, "a\nb\"\tc");
        let mut empty = JsString::default();
        empty.push(&JsString::from_spelling("x").unwrap());
        assert_eq!(empty.held_spelling(), Some("x"));
    }

    #[test]
    fn blank_by_its_text() {
        for (spelling, blank) in [
            (r#"\n\t "#, true),
            (" x", false),
            ("x", false),
            (r#"\u001f"#, false),
            ("\u{a0}", true),
        ] {
            assert_eq!(
                JsString::from_spelling(spelling).unwrap().is_blank(),
                blank,
                "{spelling}"
            );
        }
    }
}
