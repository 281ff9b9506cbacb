//! The session header line (`type:"session"`) and omp's fixed-width title slot (`type:"title"`).

use crate::field::Field;
use crate::json::{JsonError, to_js_string};
use crate::tags;
use crate::timestamp::IsoTimestamp;
use crate::{JsonMap, JsonNumber, JsonValue};
use pi_session_types_macros::record;
use serde::{Deserialize, Serialize};

/// The header line: `{"type":"session","version":3,"id":...,"timestamp":...,"cwd":...}`.
///
/// Holds the fields of both dialects (omp's `title`, `titleSource`, `additionalDirectories`,
/// `previousSessionFiles`, `providerPromptCacheKey`; pi v1's `provider`, `modelId`,
/// `thinkingLevel`, `branchedFrom`, `systemPrompt`, `model`) in omp's write order. A header is
/// valid (for both dialects) iff `type` is `"session"` and `id` is a string; a `session` line
/// without a string `id` is not typed as a header, and one whose other fields have unexpected
/// types keeps them all in `extra` with a warning (see [`crate::parse_line`]).
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionHeader {
    /// Always `"session"`.
    #[serde(rename = "type")]
    pub kind: tags::Session,
    /// Format version: `3` today; absent means v1.
    pub version: Option<JsonNumber>,
    /// Session id (UUIDv7 in current files; any string accepted).
    pub id: String,
    /// omp: title (possibly stale; the title slot wins).
    pub title: Option<String>,
    /// omp: `"auto" | "user"`.
    pub title_source: Option<String>,
    /// Creation time, ISO-8601.
    pub timestamp: Option<IsoTimestamp>,
    /// Working directory at creation.
    pub cwd: Option<String>,
    /// Parent session: a file path (pi, omp branches) or a session id (omp forks).
    pub parent_session: Option<String>,
    /// omp: prompt-cache identity inherited by forks.
    pub provider_prompt_cache_key: Option<String>,
    /// omp: extra workspace roots.
    pub additional_directories: Option<Vec<String>>,
    /// omp: paths the file had before moves.
    pub previous_session_files: Option<Vec<String>>,
    /// pi v1: provider.
    pub provider: Option<String>,
    /// pi v1: model id.
    pub model_id: Option<String>,
    /// pi v1: thinking level.
    pub thinking_level: Field<String>,
    /// pi v1: file this session was branched from (renamed `parentSession` in v2 types only).
    pub branched_from: Option<String>,
    /// pi v1 (2025-11-11): system prompt.
    pub system_prompt: Option<JsonValue>,
    /// pi v1 (2025-11): model (opaque).
    pub model: Option<JsonValue>,
    /// Unknown keys, kept in order (e.g. rho's or future fields).
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl SessionHeader {
    /// The format version, 1 when absent (v1 files have none).
    pub fn version_or_1(&self) -> u64 {
        self.version
            .as_ref()
            .and_then(JsonNumber::as_u64)
            .unwrap_or(1)
    }
}

/// Where the title came from: `"auto"` (generated) or `"user"` (set by the user).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum TitleSource {
    /// `"auto"`.
    #[serde(rename = "auto")]
    Auto,
    /// `"user"`.
    #[serde(rename = "user")]
    User,
}

impl TitleSource {
    /// The string as written.
    pub fn as_str(self) -> &'static str {
        match self {
            TitleSource::Auto => "auto",
            TitleSource::User => "user",
        }
    }
}

/// Width of omp's title slot line in bytes, including the trailing `"\n"`.
pub const TITLE_SLOT_BYTES: usize = 256;

/// omp's fixed-width first line: `{"type":"title","v":1,"title":...,"source"?:...,"updatedAt":...,"pad":"   "}`.
///
/// Only a *valid* slot is typed as this (omp §1.3): `v === 1`, `title`/`updatedAt`/`pad`
/// strings, `source` absent or `"auto"`/`"user"`. An invalid `type:"title"` line is an ordinary
/// (unknown) entry, as omp treats it.
#[record]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TitleSlot {
    /// Always `"title"`.
    #[serde(rename = "type")]
    pub kind: tags::Title,
    /// Slot format version; must be `1`.
    pub v: JsonNumber,
    /// Current title; empty means "no title".
    pub title: String,
    /// Where the title came from.
    pub source: Option<TitleSource>,
    /// Time of the last title change (ISO-8601).
    pub updated_at: String,
    /// Spaces that pad the line to 256 bytes.
    pub pad: String,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

/// Why a title slot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TitleSlotError {
    /// Even with an empty title the slot does not fit in 256 bytes (`updatedAt` too long).
    #[error(
        "title slot metadata exceeds the fixed {TITLE_SLOT_BYTES}-byte slot ({needed} bytes needed with an empty title); use a normal ISO timestamp for updatedAt"
    )]
    MetadataExceedsSlot {
        /// Bytes the slot needs with an empty title.
        needed: usize,
    },
    /// Writing the JSON failed.
    #[error(transparent)]
    Json(#[from] JsonError),
}

/// Bytes `c` takes inside a JSON string as JavaScript writes it.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

impl TitleSlot {
    /// True when `value` is a slot omp accepts (omp §1.3 `parseTitleSlotLine`): `type` is
    /// `"title"`, `v === 1`, `title`, `updatedAt` and `pad` are strings, and `source` is absent,
    /// `"auto"` or `"user"`. The 256-byte width is not checked, as in omp.
    pub fn is_valid_slot(value: &JsonMap) -> bool {
        let is_str = |key: &str| value.get(key).is_some_and(JsonValue::is_string);
        value.get("type").and_then(JsonValue::as_str) == Some(tags::Title::VALUE)
            && value.get("v").and_then(JsonValue::as_f64) == Some(1.0)
            && is_str("title")
            && is_str("updatedAt")
            && is_str("pad")
            && match value.get("source") {
                None => true,
                Some(source) => matches!(source.as_str(), Some("auto" | "user")),
            }
    }

    /// The title, `None` when empty (an empty slot title deletes the header's title).
    pub fn title(&self) -> Option<&str> {
        (!self.title.is_empty()).then_some(self.title.as_str())
    }

    /// Writes a slot line exactly as omp's `serializeTitleSlot`: the title is cut to the
    /// longest code-point prefix that fits, and `pad` fills the line to exactly 256 bytes
    /// including the trailing `"\n"`.
    ///
    /// ```
    /// use pi_session_types::{TitleSlot, TitleSource};
    /// let line = TitleSlot::serialize_fixed("Fix the build", Some(TitleSource::User), "2026-01-01T00:00:00.000Z").unwrap();
    /// assert_eq!(line.len(), 256);
    /// assert!(line.starts_with(r#"{"type":"title","v":1,"title":"Fix the build","source":"user","updatedAt":"#));
    /// assert!(line.ends_with("\"}\n"));
    /// ```
    pub fn serialize_fixed(
        title: &str,
        source: Option<TitleSource>,
        updated_at: &str,
    ) -> Result<String, TitleSlotError> {
        let mut slot = TitleSlot {
            kind: tags::Title,
            v: JsonNumber::from(1u8),
            title: String::new(),
            source,
            updated_at: updated_at.to_string(),
            pad: String::new(),
            extra: JsonMap::new(),
        };
        let base = to_js_string(&slot)?.len() + 1;
        if base > TITLE_SLOT_BYTES {
            return Err(TitleSlotError::MetadataExceedsSlot { needed: base });
        }
        let mut used = base;
        let mut cut = title.len();
        for (index, c) in title.char_indices() {
            let width = escaped_len(c);
            if used + width > TITLE_SLOT_BYTES {
                cut = index;
                break;
            }
            used += width;
        }
        slot.title = title[..cut].to_string();
        slot.pad = " ".repeat(TITLE_SLOT_BYTES - used);
        let mut line = to_js_string(&slot)?;
        line.push('\n');
        debug_assert_eq!(line.len(), TITLE_SLOT_BYTES);
        Ok(line)
    }
}

/// omp's `#cleanTitle`: control characters (U+0000–U+001F, U+007F–U+009F) become spaces, runs
/// of spaces collapse to one, and the result is trimmed; `None` when nothing is left (omp then
/// refuses the rename).
///
/// ```
/// assert_eq!(pi_session_types::header::clean_title("  a\tb\n\n c  ").as_deref(), Some("a b c"));
/// assert_eq!(pi_session_types::header::clean_title(" \u{7f} "), None);
/// ```
pub fn clean_title(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}') {
            ' '
        } else {
            c
        };
        if c == ' ' && out.ends_with(' ') {
            continue;
        }
        out.push(c);
    }
    let trimmed = js_trim(&out);
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

/// JavaScript `String.prototype.trim`: strips WhiteSpace and LineTerminator code points.
fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}
