//! A word looked for in the bytes of many lines, its searcher built once ([`Needle`]), and a
//! key looked for in lines not parsed, in their bytes or the open's key filter of them
//! ([`KeyNeedle`], [`LineKeys`]).

use std::fmt;
use std::sync::OnceLock;

use memchr::memmem::Finder;

use crate::envelope_scan::KeyFilter;

/// A word a rule looks for in the bytes of every line it reads (`"toolCall"` in a `message`
/// line, `"usage"` in any), kept in a `static`: its searcher is built on first use and kept,
/// where [`memchr::memmem::find`] builds one on every call. On lines of a few KB the build
/// costs a third of what the search does: over a 50 MB session's context, omp's rules spent
/// ~0.3 ms building searchers for three words.
///
/// ```
/// use pi_session_types::needle::Needle;
/// static CALL: Needle = Needle::new(br#""toolCall""#);
/// assert!(CALL.is_in(br#"{"content":[{"type":"toolCall","id":"c"}]}"#));
/// assert!(!CALL.is_in(br#"{"role":"toolResult","toolCallId":"c"}"#));
/// assert_eq!(CALL.word(), br#""toolCall""#);
/// ```
pub struct Needle {
    word: &'static [u8],
    finder: OnceLock<Finder<'static>>,
}

impl Needle {
    /// The word `word`, its searcher not built yet.
    pub const fn new(word: &'static [u8]) -> Self {
        Self {
            word,
            finder: OnceLock::new(),
        }
    }

    /// Whether `haystack` holds the word (an empty word is in every haystack).
    pub fn is_in(&self, haystack: &[u8]) -> bool {
        self.finder
            .get_or_init(|| Finder::new(self.word))
            .find(haystack)
            .is_some()
    }

    /// The word looked for.
    pub fn word(&self) -> &'static [u8] {
        self.word
    }
}

/// A key looked for in lines that are not parsed: a [`Needle`] of the key as JSON writes it
/// (between quotes), and the key itself for the open's key filter of a line. Asked through
/// [`LineKeys::may_hold`].
///
/// ```
/// use pi_session_types::needle::{KeyNeedle, LineKeys};
/// static USAGE: KeyNeedle = KeyNeedle::new("usage", br#""usage""#);
/// assert_eq!(USAGE.name(), "usage");
/// assert!(LineKeys::Written(br#"{"usage":{}}"#).may_hold(&USAGE));
/// ```
pub struct KeyNeedle {
    name: &'static str,
    written: Needle,
}

impl KeyNeedle {
    /// The key `name`; `written` is the same key between quotes (checked when built: a
    /// `static` that spells them apart does not compile). A key JSON writes with an escape
    /// (a `"`, a `\` or a control character in it) is refused: its written form is not this.
    pub const fn new(name: &'static str, written: &'static [u8]) -> Self {
        let name_bytes = name.as_bytes();
        assert!(
            written.len() == name_bytes.len() + 2,
            "written is not the key in quotes"
        );
        assert!(written[0] == b'"' && written[written.len() - 1] == b'"');
        let mut at = 0;
        while at < name_bytes.len() {
            let byte = name_bytes[at];
            assert!(
                byte >= 0x20 && byte != b'"' && byte != b'\\',
                "a key written with an escape"
            );
            assert!(written[at + 1] == byte, "written is not the key in quotes");
            at += 1;
        }
        Self {
            name,
            written: Needle::new(written),
        }
    }

    /// The key (decoded, as a JSON object has it).
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl fmt::Debug for KeyNeedle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("KeyNeedle").field(&self.name).finish()
    }
}

/// What a reader can tell of the keys of a line it has not parsed, to leave unread or unparsed
/// a line that surely holds none it looks for: its bytes, or the key filter the store's open
/// kept of it ([`KeyFilter`], a few bits a line; nothing read).
#[derive(Debug, Clone, Copy)]
pub enum LineKeys<'a> {
    /// The line as written: a key is found as JSON writes it, and a line with a `\u` escape
    /// anywhere may spell any key with it.
    Written(&'a [u8]),
    /// The open's key filter of the line ([`KeyFilter::ANY`] for a line it did not scan).
    Filtered(KeyFilter),
}

impl LineKeys<'_> {
    /// Whether the line may hold the key `key` at some depth: `false` only when it surely
    /// does not.
    ///
    /// ```
    /// use pi_session_types::envelope_scan::{KeyFilter, scan_envelope};
    /// use pi_session_types::needle::{KeyNeedle, LineKeys};
    /// static PROVIDER: KeyNeedle = KeyNeedle::new("provider", br#""provider""#);
    /// let named = br#"{"type":"message","message":{"role":"assistant","provider":"p"}}"#;
    /// let quoted = br#"{"type":"message","message":{"role":"user","content":"no provider"}}"#;
    /// let escaped = br#"{"type":"message","message":{"pro\u0076ider":"p"}}"#;
    /// for (line, holds) in [(&named[..], true), (quoted, false), (escaped, true)] {
    ///     assert_eq!(LineKeys::Written(line).may_hold(&PROVIDER), holds);
    ///     let filter = scan_envelope(line).map_or(KeyFilter::ANY, |scanned| scanned.keys);
    ///     assert_eq!(LineKeys::Filtered(filter).may_hold(&PROVIDER), holds);
    /// }
    /// ```
    pub fn may_hold(self, key: &KeyNeedle) -> bool {
        self.may_hold_any(&[key])
    }

    /// Whether the line may hold one of `keys` at some depth ([`Self::may_hold`] of each, the
    /// bytes searched for a `\u` escape once for all of them).
    ///
    /// ```
    /// use pi_session_types::needle::{KeyNeedle, LineKeys};
    /// static A: KeyNeedle = KeyNeedle::new("a", br#""a""#);
    /// static B: KeyNeedle = KeyNeedle::new("b", br#""b""#);
    /// assert!(LineKeys::Written(br#"{"b":1}"#).may_hold_any(&[&A, &B]));
    /// assert!(!LineKeys::Written(br#"{"c":1}"#).may_hold_any(&[&A, &B]));
    /// ```
    pub fn may_hold_any(self, keys: &[&KeyNeedle]) -> bool {
        /// The start of a `\u` escape, with which a key may be spelled otherwise.
        static ESCAPE: Needle = Needle::new(b"\\u");
        match self {
            Self::Written(line) => {
                keys.iter().any(|key| key.written.is_in(line)) || ESCAPE.is_in(line)
            }
            Self::Filtered(filter) => keys.iter().any(|key| filter.may_hold(key.name)),
        }
    }
}

impl fmt::Debug for Needle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Needle")
            .field(&String::from_utf8_lossy(self.word))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_a_search_of_the_same_word_finds() {
        static WORD: Needle = Needle::new(b"ab");
        for haystack in [&b""[..], b"a", b"ab", b"xxab", b"aab", b"ba", b"a b"] {
            assert_eq!(
                WORD.is_in(haystack),
                memchr::memmem::find(haystack, b"ab").is_some(),
                "{haystack:?}"
            );
        }
        static EMPTY: Needle = Needle::new(b"");
        assert!(EMPTY.is_in(b""));
        assert_eq!(format!("{WORD:?}"), r#"Needle("ab")"#);
    }
}
