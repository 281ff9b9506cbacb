//! Writing JSON exactly as JavaScript's `JSON.stringify` does.
//!
//! This is the one place in the workspace where these rules live; every line the store writes
//! goes through [`to_js_string`] / [`to_js_writer`]:
//!
//! - compact output, object keys in insertion order, except that **integer-like keys** (array
//!   indices `"0"`, `"1"`, ... up to 2³²−2, no leading zeros) come first in ascending numeric
//!   order, as V8 does;
//! - numbers as ECMAScript `Number::toString` (via `ryu-js`): `2` not `2.0`, `1e-7`, `1e+21`,
//!   `0.000001`, shortest round-trip digits; `-0` becomes `0`; `NaN`/`±Infinity` become `null`;
//!   integers beyond ±2⁵³ are written as the nearest double, like JavaScript would hold them;
//! - strings escape only `"`, `\` and U+0000–U+001F (`\b \f \n \r \t`, else lowercase `\u00xx`);
//!   `/`, DEL, U+2028/U+2029 and all other non-ASCII are written raw.
//!
//! - a lone UTF-16 surrogate (which a JavaScript string may hold) is written as the lowercase
//!   escape `\udxxx`, as `JSON.stringify` does. A Rust `String` cannot hold one, so it is
//!   *carried* as the code point U+10F800+k for U+D800+k ([`crate::js::carrier_of`]): reading a
//!   line makes the carrier, this writer turns it back into the escape. So a line read from a
//!   file pi or omp wrote is written back byte for byte, lone surrogates included.
//!
//! ```
//! use pi_session_types::json::to_js_string;
//! let v = serde_json::json!({"b": 2.0, "1": 1e21, "a": 1e-7, "0": -0.0});
//! assert_eq!(to_js_string(&v).unwrap(), r#"{"0":0,"1":1e+21,"b":2,"a":1e-7}"#);
//! ```

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::io::{self, Write};

/// An error while writing JSON.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// The value could not be serialised (e.g. a map with non-string keys); fix the value.
    #[error("value cannot be written as JSON: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The destination writer failed; check the file or stream it writes to.
    #[error("writing JSON to the destination failed: {0}")]
    Io(#[from] io::Error),
}

/// Serialises `value` as JavaScript's `JSON.stringify(value)` would (no trailing newline).
pub fn to_js_string<T: Serialize + ?Sized>(value: &T) -> Result<String, JsonError> {
    let bytes = to_js_vec(value)?;
    // The formatter only ever writes UTF-8 (from `&str` fragments and ASCII).
    String::from_utf8(bytes)
        .map_err(|e| JsonError::Io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// Serialises `value` like [`to_js_string`], returning the bytes.
pub fn to_js_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, JsonError> {
    let mut state = State::default();
    {
        let formatter = JsFormatter { state: &mut state };
        let mut serializer = serde_json::Serializer::with_formatter(io::sink(), formatter);
        value.serialize(&mut serializer)?;
    }
    Ok(state.out)
}

/// Serialises `value` like [`to_js_string`] and writes the bytes to `writer` in one call.
pub fn to_js_writer<W: Write, T: Serialize + ?Sized>(
    mut writer: W,
    value: &T,
) -> Result<(), JsonError> {
    let bytes = to_js_vec(value)?;
    writer.write_all(&bytes)?;
    Ok(())
}

/// ECMAScript `Number::toString(value)`: `NaN`, `Infinity`, `-Infinity`, `0` for both zeros,
/// otherwise the shortest round-trip digits in JavaScript's notation (`1e+21`, `1e-7`). For a
/// finite number these are the bytes `JSON.stringify` writes; [`crate::js::format_f64`] uses
/// it for `String(x)`.
pub(crate) fn number_to_js_string(value: f64, buffer: &mut ryu_js::Buffer) -> &str {
    buffer.format(value)
}

/// Largest integer magnitude a JavaScript number holds exactly (2⁵³).
const MAX_SAFE: u64 = 1 << 53;

/// Output buffer plus the bookkeeping needed to move integer-like keys to the front.
#[derive(Default)]
struct State {
    out: Vec<u8>,
    frames: Vec<Frame>,
    members: Vec<Member>,
}

struct Frame {
    members_base: usize,
    has_index_key: bool,
}

struct Member {
    /// Offset of the member's key (after any separating comma).
    start: usize,
    /// The key as an array index, when it is one.
    index: Option<u32>,
}

struct JsFormatter<'a> {
    state: &'a mut State,
}

/// `Some(n)` when `key` (the raw bytes between the quotes) is a canonical array index.
fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || !key.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if key.len() > 1 && key[0] == b'0' {
        return None;
    }
    let value = key
        .iter()
        .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'));
    // Array indices stop at 2^32 - 2; larger integer keys keep insertion order in V8.
    (value <= 4_294_967_294).then_some(value as u32)
}

impl State {
    fn write_number_f64(&mut self, value: f64) {
        if value.is_finite() {
            let mut buffer = ryu_js::Buffer::new();
            self.out
                .extend_from_slice(number_to_js_string(value, &mut buffer).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
    }

    fn write_unsigned(&mut self, value: u128, negative: bool) {
        if value <= u128::from(MAX_SAFE) {
            if negative && value != 0 {
                self.out.push(b'-');
            }
            let mut digits = [0u8; 40];
            let mut n = value;
            let mut i = digits.len();
            loop {
                i -= 1;
                digits[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            self.out.extend_from_slice(&digits[i..]);
        } else {
            let magnitude = value as f64;
            self.write_number_f64(if negative { -magnitude } else { magnitude });
        }
    }

    /// Moves the members of the object that starts at `first` so that array-index keys come
    /// first in ascending order, then the other keys in their original order.
    fn reorder_members(&mut self, base: usize) {
        let members = &self.members[base..];
        let Some(first) = members.first() else { return };
        let region_start = first.start;
        let end = self.out.len();
        let mut spans: Vec<(Option<u32>, usize, usize, usize)> = Vec::with_capacity(members.len());
        for (i, member) in members.iter().enumerate() {
            // The next member's start is preceded by its separating comma.
            let member_end = members.get(i + 1).map_or(end, |next| next.start - 1);
            spans.push((member.index, i, member.start, member_end));
        }
        spans.sort_by_key(|&(index, order, _, _)| match index {
            Some(n) => (0u8, u64::from(n), order),
            None => (1u8, 0, order),
        });
        let mut reordered = Vec::with_capacity(end - region_start);
        for (i, &(_, _, start, stop)) in spans.iter().enumerate() {
            if i > 0 {
                reordered.push(b',');
            }
            reordered.extend_from_slice(&self.out[start..stop]);
        }
        self.out.truncate(region_start);
        self.out.extend_from_slice(&reordered);
    }
}

impl Formatter for JsFormatter<'_> {
    fn write_null<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.extend_from_slice(b"null");
        Ok(())
    }
    fn write_bool<W: ?Sized + Write>(&mut self, _: &mut W, value: bool) -> io::Result<()> {
        self.state
            .out
            .extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }
    fn write_i8<W: ?Sized + Write>(&mut self, w: &mut W, value: i8) -> io::Result<()> {
        self.write_i64(w, i64::from(value))
    }
    fn write_i16<W: ?Sized + Write>(&mut self, w: &mut W, value: i16) -> io::Result<()> {
        self.write_i64(w, i64::from(value))
    }
    fn write_i32<W: ?Sized + Write>(&mut self, w: &mut W, value: i32) -> io::Result<()> {
        self.write_i64(w, i64::from(value))
    }
    fn write_i64<W: ?Sized + Write>(&mut self, w: &mut W, value: i64) -> io::Result<()> {
        self.write_i128(w, i128::from(value))
    }
    fn write_i128<W: ?Sized + Write>(&mut self, _: &mut W, value: i128) -> io::Result<()> {
        self.state.write_unsigned(value.unsigned_abs(), value < 0);
        Ok(())
    }
    fn write_u8<W: ?Sized + Write>(&mut self, w: &mut W, value: u8) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u16<W: ?Sized + Write>(&mut self, w: &mut W, value: u16) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u32<W: ?Sized + Write>(&mut self, w: &mut W, value: u32) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u64<W: ?Sized + Write>(&mut self, w: &mut W, value: u64) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u128<W: ?Sized + Write>(&mut self, _: &mut W, value: u128) -> io::Result<()> {
        self.state.write_unsigned(value, false);
        Ok(())
    }
    fn write_f32<W: ?Sized + Write>(&mut self, _: &mut W, value: f32) -> io::Result<()> {
        self.state.write_number_f64(f64::from(value));
        Ok(())
    }
    fn write_f64<W: ?Sized + Write>(&mut self, _: &mut W, value: f64) -> io::Result<()> {
        self.state.write_number_f64(value);
        Ok(())
    }
    fn write_number_str<W: ?Sized + Write>(&mut self, _: &mut W, value: &str) -> io::Result<()> {
        match value.parse::<f64>() {
            Ok(number) => self.state.write_number_f64(number),
            Err(_) => self.state.out.extend_from_slice(value.as_bytes()),
        }
        Ok(())
    }
    fn begin_string<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.push(b'"');
        Ok(())
    }
    fn end_string<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.push(b'"');
        Ok(())
    }
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if crate::js::has_lone_surrogate(fragment) {
            write_carrying(&mut self.state.out, fragment);
        } else {
            self.state.out.extend_from_slice(fragment.as_bytes());
        }
        Ok(())
    }
    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let out = &mut self.state.out;
        match escape {
            CharEscape::Quote => out.extend_from_slice(b"\\\""),
            CharEscape::ReverseSolidus => out.extend_from_slice(b"\\\\"),
            CharEscape::Solidus => out.push(b'/'),
            CharEscape::Backspace => out.extend_from_slice(b"\\b"),
            CharEscape::FormFeed => out.extend_from_slice(b"\\f"),
            CharEscape::LineFeed => out.extend_from_slice(b"\\n"),
            CharEscape::CarriageReturn => out.extend_from_slice(b"\\r"),
            CharEscape::Tab => out.extend_from_slice(b"\\t"),
            CharEscape::AsciiControl(byte) => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]),
        }
        Ok(())
    }
    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.state.out.extend_from_slice(fragment.as_bytes());
        Ok(())
    }
    fn begin_array<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.push(b'[');
        Ok(())
    }
    fn end_array<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.push(b']');
        Ok(())
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        if !first {
            self.state.out.push(b',');
        }
        Ok(())
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        let state = &mut *self.state;
        state.out.push(b'{');
        state.frames.push(Frame {
            members_base: state.members.len(),
            has_index_key: false,
        });
        Ok(())
    }
    fn end_object<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        let state = &mut *self.state;
        if let Some(frame) = state.frames.pop() {
            if frame.has_index_key {
                state.reorder_members(frame.members_base);
            }
            state.members.truncate(frame.members_base);
        }
        state.out.push(b'}');
        Ok(())
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        let state = &mut *self.state;
        if !first {
            state.out.push(b',');
        }
        state.members.push(Member {
            start: state.out.len(),
            index: None,
        });
        Ok(())
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        let state = &mut *self.state;
        let Some(member) = state.members.last_mut() else {
            return Ok(());
        };
        let key = &state.out[member.start..];
        if key.len() >= 2 && key[0] == b'"' && key[key.len() - 1] == b'"' {
            member.index = array_index(&key[1..key.len() - 1]);
        }
        if member.index.is_some()
            && let Some(frame) = state.frames.last_mut()
        {
            frame.has_index_key = true;
        }
        Ok(())
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.push(b':');
        Ok(())
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `fragment` with each carried lone surrogate as its `\udxxx` escape.
fn write_carrying(out: &mut Vec<u8>, fragment: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut utf8 = [0u8; 4];
    for c in fragment.chars() {
        match crate::js::carried_surrogate(c) {
            Some(unit) => out.extend_from_slice(&[
                b'\\',
                b'u',
                HEX[usize::from(unit >> 12)],
                HEX[usize::from((unit >> 8) & 0xf)],
                HEX[usize::from((unit >> 4) & 0xf)],
                HEX[usize::from(unit & 0xf)],
            ]),
            None => out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_index_rules() {
        assert_eq!(array_index(b"0"), Some(0));
        assert_eq!(array_index(b"42"), Some(42));
        assert_eq!(array_index(b"01"), None);
        assert_eq!(array_index(b"4294967294"), Some(4_294_967_294));
        assert_eq!(array_index(b"4294967295"), None);
        assert_eq!(array_index(b"-1"), None);
        assert_eq!(array_index(b""), None);
    }

    #[test]
    fn carried_lone_surrogates_are_written_as_escapes() {
        let value = serde_json::json!({"k\u{10FC00}": "a\u{10F83D}b😀\u{10FFFF}"});
        assert_eq!(
            to_js_string(&value).unwrap(),
            r#"{"k\udc00":"a\ud83db😀\udfff"}"#
        );
    }
}
