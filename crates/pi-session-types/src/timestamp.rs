//! Entry timestamps: ISO-8601 strings, kept verbatim.
//!
//! Entry and header `timestamp` values are `new Date().toISOString()` strings
//! (`YYYY-MM-DDTHH:MM:SS.mmmZ`). Message timestamps (inside `message`) are Unix milliseconds and
//! are kept as [`crate::JsonNumber`] so that an odd value (a float) is written back as it was.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// An entry or header `timestamp`: an ISO-8601 string, kept exactly as written.
///
/// An invalid string is kept, not rejected; [`IsoTimestamp::parse`] then returns `None`.
///
/// ```
/// use pi_session_types::IsoTimestamp;
/// let t = IsoTimestamp::new("2026-03-15T22:40:18.123Z");
/// assert_eq!(t.unix_ms(), Some(1773614418123));
/// assert!(IsoTimestamp::new("yesterday").parse().is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct IsoTimestamp(pub String);

impl IsoTimestamp {
    /// Wraps a string as written in a file.
    pub fn new(value: impl Into<String>) -> Self {
        IsoTimestamp(value.into())
    }

    /// The current time as JavaScript's `new Date().toISOString()` would write it.
    pub fn now() -> Self {
        IsoTimestamp(now_iso())
    }

    /// The time from Unix milliseconds, formatted like `new Date(ms).toISOString()`.
    pub fn from_unix_ms(ms: i64) -> Option<Self> {
        let nanos = i128::from(ms).checked_mul(1_000_000)?;
        OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .map(|t| IsoTimestamp(format_iso(t)))
    }

    /// The string exactly as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Interprets the string as an RFC 3339 / ISO-8601 date-time; `None` when it is not one.
    pub fn parse(&self) -> Option<OffsetDateTime> {
        OffsetDateTime::parse(&self.0, &Rfc3339).ok()
    }

    /// Unix milliseconds, as JavaScript's `Date.parse` gives for a valid ISO string.
    pub fn unix_ms(&self) -> Option<i64> {
        let t = self.parse()?;
        i64::try_from(t.unix_timestamp_nanos().div_euclid(1_000_000)).ok()
    }
}

impl std::fmt::Display for IsoTimestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for IsoTimestamp {
    fn from(value: &str) -> Self {
        IsoTimestamp(value.to_string())
    }
}

impl From<String> for IsoTimestamp {
    fn from(value: String) -> Self {
        IsoTimestamp(value)
    }
}

/// The current UTC time formatted as `YYYY-MM-DDTHH:MM:SS.mmmZ` (JavaScript `toISOString`).
pub fn now_iso() -> String {
    format_iso(OffsetDateTime::now_utc())
}

/// Formats a time like JavaScript's `Date.prototype.toISOString` (UTC, milliseconds, `Z`).
pub fn format_iso(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    let year = t.year();
    let year_text = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else if year < 0 {
        format!("-{:06}", -i64::from(year))
    } else {
        format!("+{year:06}")
    };
    format!(
        "{year_text}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}
