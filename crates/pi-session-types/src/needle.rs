//! A word looked for in the bytes of many lines, its searcher built once ([`Needle`]).

use std::fmt;
use std::sync::OnceLock;

use memchr::memmem::Finder;

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
