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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

    /// True when `value` is an RFC 3339 / ISO-8601 date-time. The canonical
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ` form every writer uses is checked without a full parse.
    pub fn is_valid_str(value: &str) -> bool {
        is_canonical(value) || OffsetDateTime::parse(value, &Rfc3339).is_ok()
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

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` with a real calendar date and in-range clock fields.
fn is_canonical(value: &str) -> bool {
    let b = value.as_bytes();
    if b.len() != 24 {
        return false;
    }
    let digits_at = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let number = |range: std::ops::Range<usize>| {
        b[range]
            .iter()
            .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'))
    };
    let shape = digits_at(0..4)
        && b[4] == b'-'
        && digits_at(5..7)
        && b[7] == b'-'
        && digits_at(8..10)
        && b[10] == b'T'
        && digits_at(11..13)
        && b[13] == b':'
        && digits_at(14..16)
        && b[16] == b':'
        && digits_at(17..19)
        && b[19] == b'.'
        && digits_at(20..23)
        && b[23] == b'Z';
    if !shape || number(11..13) > 23 || number(14..16) > 59 || number(17..19) > 59 {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (
        i32::try_from(number(0..4)),
        u8::try_from(number(5..7)),
        u8::try_from(number(8..10)),
    ) else {
        return false;
    };
    time::Month::try_from(month)
        .ok()
        .and_then(|month| time::Date::from_calendar_date(year, month, day).ok())
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_check_agrees_with_the_full_parser() {
        for value in [
            "2026-03-15T22:40:18.123Z",
            "2026-02-29T00:00:00.000Z",
            "2024-02-29T23:59:59.999Z",
            "2026-13-01T00:00:00.000Z",
            "2026-01-01T24:00:00.000Z",
            "2026-01-01T00:60:00.000Z",
            "2026-01-01 00:00:00.000Z",
            "2026-01-01T00:00:00.000+01:00",
            "2026-01-01T00:00:00Z",
            "yesterday",
        ] {
            let full = OffsetDateTime::parse(value, &Rfc3339).is_ok();
            assert_eq!(IsoTimestamp::is_valid_str(value), full, "{value}");
            if is_canonical(value) {
                assert!(full, "{value}");
            }
        }
    }

    #[test]
    fn formats_like_to_iso_string() {
        let t = IsoTimestamp::from_unix_ms(1_773_614_418_123).unwrap();
        assert_eq!(t.as_str(), "2026-03-15T22:40:18.123Z");
        assert_eq!(
            IsoTimestamp::from_unix_ms(-1).unwrap().as_str(),
            "1969-12-31T23:59:59.999Z"
        );
        assert_eq!(now_iso().len(), 24);
        assert!(IsoTimestamp::now().parse().is_some());
    }
}
