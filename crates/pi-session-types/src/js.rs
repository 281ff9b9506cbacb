//! JavaScript value semantics, the one place they live in the workspace.
//!
//! pi and omp are TypeScript programs: they test fields with truthiness, fall back with `??`,
//! build strings with template literals, compare with `===`, trim with `String.prototype.trim`
//! and turn ISO strings into milliseconds with `new Date(x).getTime()`. Reproducing their output
//! exactly means applying the same rules to the JSON values read from a file, including the odd
//! ones (missing keys, `null`, numbers where strings were expected). The tree and context crates
//! use these functions; they do not restate the rules.
//!
//! A JavaScript `undefined` (a missing key) is `None` throughout.
//!
//! ```
//! use pi_session_types::js;
//! use serde_json::json;
//!
//! let message = json!({"role": "user", "content": "", "count": 0.5});
//! assert!(!js::truthy(message.get("content")));            // "" is falsy
//! assert!(js::is_nullish(message.get("missing")));          // undefined ?? …
//! assert_eq!(js::string_of(message.get("count")), "0.5"); // `${count}`
//! assert_eq!(js::string_of(message.get("missing")), "undefined");
//! assert_eq!(js::trim("\u{FEFF} hi \u{0085}"), "hi \u{0085}"); // not Rust's whitespace set
//! assert_eq!(js::date_ms(Some(&json!("1970-01-01T00:00:01.500Z"))), Some(1500));
//! ```

use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------------------
// Reading values
// ---------------------------------------------------------------------------------------------

/// Reads `key` from `value` when it is an object; `None` (JavaScript `undefined`)
/// otherwise.
pub fn get<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    value
        .and_then(Value::as_object)
        .and_then(|map| map.get(key))
}

/// Reads `key` from an object map.
pub fn field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    map.get(key)
}

/// The value as a string slice when it is a JSON string.
pub fn as_str(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

/// `value === "literal"`.
pub fn is_str(value: Option<&Value>, literal: &str) -> bool {
    as_str(value) == Some(literal)
}

// ---------------------------------------------------------------------------------------------
// Truthiness, `??` and equality
// ---------------------------------------------------------------------------------------------

/// JavaScript truthiness: `undefined`, `null`, `false`, `0`, `NaN` and `""` are
/// falsy; every other value (objects and arrays included) is truthy.
pub fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// `undefined` or `null`: the values `??` (and `?.`) treat as missing.
pub fn is_nullish(value: Option<&Value>) -> bool {
    matches!(value, None | Some(Value::Null))
}

/// `a ?? b`: `a` unless it is `undefined` or `null`.
pub fn nullish_or<'a>(a: Option<&'a Value>, b: Option<&'a Value>) -> Option<&'a Value> {
    if is_nullish(a) { b } else { a }
}

/// Strict equality (`===`) of two JSON values as JavaScript sees them.
///
/// Objects and arrays compare by identity, which for values borrowed from the
/// same parsed document means "the same place in memory".
pub fn strict_eq(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(x)), Some(Value::Bool(y))) => x == y,
        (Some(Value::Number(x)), Some(Value::Number(y))) => x.as_f64() == y.as_f64(),
        (Some(Value::String(x)), Some(Value::String(y))) => x == y,
        (Some(x @ Value::Array(_)), Some(y @ Value::Array(_)))
        | (Some(x @ Value::Object(_)), Some(y @ Value::Object(_))) => std::ptr::eq(x, y),
        _ => false,
    }
}

/// A key with JavaScript `SameValueZero` semantics, for `Set`/`Map` membership.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SameValueKey {
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number, by the bits of its `f64` value (`-0` folded into `0`).
    Number(u64),
    /// A string.
    String(String),
    /// An object or array, by identity.
    Reference(usize),
}

impl SameValueKey {
    /// The key of a (possibly missing) value.
    pub fn of(value: Option<&Value>) -> Self {
        match value {
            None => Self::Undefined,
            Some(Value::Null) => Self::Null,
            Some(Value::Bool(b)) => Self::Bool(*b),
            Some(Value::Number(n)) => {
                let f = n.as_f64().unwrap_or(0.0);
                let f = if f == 0.0 { 0.0 } else { f };
                Self::Number(f.to_bits())
            }
            Some(Value::String(s)) => Self::String(s.clone()),
            Some(v) => Self::Reference(v as *const Value as usize),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers and strings
// ---------------------------------------------------------------------------------------------

/// Formats a JSON number the way JavaScript's `Number.prototype.toString` does.
///
/// Integers that fit an `i64` (or a `u64` below 2⁵³) are written with all their digits.
pub fn number_to_string(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64()
        && u < (1u64 << 53)
    {
        return u.to_string();
    }
    format_f64(n.as_f64().unwrap_or(f64::NAN))
}

/// Formats an `f64` with ECMAScript `Number::toString` rules (`NaN`, `Infinity`,
/// `1e+21`, `1e-7`, shortest round-trip digits); the same digits
/// [`crate::json::to_js_string`] writes for a finite number.
///
/// ```
/// use pi_session_types::js::format_f64;
/// assert_eq!(format_f64(2.0), "2");
/// assert_eq!(format_f64(-0.0), "0");
/// assert_eq!(format_f64(f64::NAN), "NaN");
/// ```
pub fn format_f64(f: f64) -> String {
    crate::json::number_to_js_string(f, &mut ryu_js::Buffer::new()).to_owned()
}

/// `x.toFixed(digits)` (at most 100 digits), exact like ECMAScript: the decimal closest to
/// the double's exact value, a true tie rounding up (`(1.15).toFixed(1)` is `"1.1"` because
/// the double 1.15 lies below 1.15).
///
/// ```
/// use pi_session_types::js::to_fixed;
/// assert_eq!(to_fixed(1.25, 1), "1.3");
/// assert_eq!(to_fixed(1.15, 1), "1.1");
/// assert_eq!(to_fixed(50.0, 1), "50.0");
/// ```
pub fn to_fixed(x: f64, digits: u8) -> String {
    ryu_js::Buffer::new().format_to_fixed(x, digits).to_owned()
}

/// `x.toLocaleString()` in the `en-US` locale: thousands grouped with `,`, at most three
/// fraction digits, trailing zeros dropped.
///
/// ```
/// use pi_session_types::js::to_locale_string;
/// assert_eq!(to_locale_string(1234567.0), "1,234,567");
/// assert_eq!(to_locale_string(-1234.5), "-1,234.5");
/// ```
pub fn to_locale_string(x: f64) -> String {
    if !x.is_finite() {
        return format_f64(x);
    }
    let rounded = format!("{:.3}", x.abs());
    let (int_part, frac_part) = rounded.split_once('.').unwrap_or((&rounded, ""));
    let frac = frac_part.trim_end_matches('0');
    let mut out = String::with_capacity(rounded.len() + int_part.len() / 3 + 1);
    if x < 0.0 {
        out.push('-');
    }
    for (i, c) in int_part.chars().enumerate() {
        if i > 0 && (int_part.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// `n.toString(36)` for a non-negative integer: lowercase base-36 digits, no padding.
///
/// ```
/// assert_eq!(pi_session_types::js::to_base36(0), "0");
/// assert_eq!(pi_session_types::js::to_base36(36 * 36 + 35), "10z");
/// ```
pub fn to_base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(char::from(DIGITS[(n % 36) as usize]));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.iter().rev().collect()
}

/// JavaScript `String(value)`, which is what a template literal (`${value}`) prints (not
/// `JSON.stringify`: that is [`crate::json::to_js_string`]).
pub fn string_of(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_string(),
        Some(Value::Null) => "null".to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => number_to_string(n),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => string_of(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_string(),
    }
}

/// True for the characters `String.prototype.trim` and the regex class `\s` match
/// (WhiteSpace and LineTerminator of ECMA-262). Differs from Rust's `char::is_whitespace`:
/// U+FEFF is JavaScript whitespace, U+0085 is not.
pub fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// `String.prototype.trim`.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// `String.prototype.trimEnd`.
pub fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

/// `String.prototype.trimStart`.
pub fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

// ---------------------------------------------------------------------------------------------
// Strings as JavaScript holds them: UTF-16, lone surrogates included
// ---------------------------------------------------------------------------------------------
//
// A JavaScript string is a sequence of UTF-16 code units and may hold a *lone surrogate* (a
// high surrogate U+D800–U+DBFF without a low one after it, or a low one U+DC00–U+DFFF without a
// high one before it), e.g. when a tool's output is cut in the middle of an emoji.
// `JSON.stringify` writes one as the escape `"\ud83d"`. A Rust `String` cannot hold one, so this
// workspace *carries* lone surrogate U+D800+k (k < 2048) as the private-use code point
// U+10F800+k (the last 2048 code points of plane 16, [`CARRIER_FIRST`]..=[`CARRIER_LAST`]):
// - reading a line turns each lone surrogate escape into its carrier ([`crate::line`]);
// - [`crate::json`] writes a carrier back as the `\udxxx` escape, so a string read from a file
//   is written exactly as pi and omp write it;
// - the functions below count a carrier as ONE UTF-16 unit, and make one where JavaScript would
//   leave a lone surrogate (a `slice` through the middle of a pair).
//
// A genuine U+10F800–U+10FFFF character in a file cannot be told apart from a carrier once read;
// the line parser reports it ([`crate::ParseWarning::AmbiguousPrivateUse`]) and it is written
// back as a lone surrogate escape. No agent or model is known to write these code points.

/// First carrier code point: lone surrogate U+D800 is carried as U+10F800.
pub const CARRIER_FIRST: char = '\u{10F800}';
/// Last carrier code point: lone surrogate U+DFFF is carried as U+10FFFF.
pub const CARRIER_LAST: char = '\u{10FFFF}';

/// The code point that carries the lone surrogate `unit` in a Rust string; `None` when `unit`
/// is not a surrogate (U+D800–U+DFFF).
///
/// ```
/// use pi_session_types::js::{carrier_of, carried_surrogate};
/// assert_eq!(carrier_of(0xD83D), Some('\u{10F83D}'));
/// assert_eq!(carried_surrogate('\u{10F83D}'), Some(0xD83D));
/// assert_eq!((carrier_of(0x41), carried_surrogate('A')), (None, None));
/// ```
pub fn carrier_of(unit: u16) -> Option<char> {
    (0xD800..=0xDFFF)
        .contains(&unit)
        .then(|| char::from_u32(0x10_F800 + u32::from(unit - 0xD800)))
        .flatten()
}

/// The lone surrogate `c` carries, when `c` is a carrier (U+10F800–U+10FFFF).
pub fn carried_surrogate(c: char) -> Option<u16> {
    let code = u32::from(c);
    (code >= 0x10_F800).then(|| (0xD800 + (code - 0x10_F800)) as u16)
}

/// True when `s` holds a carried lone surrogate (a cheap byte test: every carrier's UTF-8
/// starts with `F4 8F A0..BF`).
pub fn has_lone_surrogate(s: &str) -> bool {
    carrier_bytes(s.as_bytes())
}

/// True when `bytes` hold the UTF-8 of a code point U+10F800–U+10FFFF.
pub(crate) fn carrier_bytes(bytes: &[u8]) -> bool {
    memchr::memchr_iter(0xF4, bytes).any(|at| carrier_at(bytes, at))
}

/// How many code points U+10F800–U+10FFFF the UTF-8 `bytes` hold.
pub(crate) fn carrier_count(bytes: &[u8]) -> usize {
    memchr::memchr_iter(0xF4, bytes)
        .filter(|&at| carrier_at(bytes, at))
        .count()
}

/// True when the byte `0xF4` at `at` starts a code point U+10F800–U+10FFFF.
fn carrier_at(bytes: &[u8], at: usize) -> bool {
    bytes.get(at + 1) == Some(&0x8F) && bytes.get(at + 2) >= Some(&0xA0)
}

/// How many UTF-16 units JavaScript's string holds for `c`: 2 above U+FFFF, 1 otherwise, and 1
/// for a carried lone surrogate.
pub fn char_utf16_len(c: char) -> usize {
    if carried_surrogate(c).is_some() {
        1
    } else {
        c.len_utf16()
    }
}

/// Length of a string in UTF-16 code units (JavaScript's `.length`); a carried lone surrogate
/// counts as one unit.
///
/// ```
/// use pi_session_types::js::utf16_len;
/// assert_eq!(utf16_len("a😀"), 3);
/// assert_eq!(utf16_len("a\u{10F83D}"), 2); // "a\ud83d"
/// ```
pub fn utf16_len(s: &str) -> usize {
    if !has_lone_surrogate(s) {
        return s.encode_utf16().count();
    }
    s.chars().map(char_utf16_len).sum()
}

/// The UTF-16 units JavaScript holds for `s`, a carried lone surrogate as its own unit.
pub fn utf16_units(s: &str) -> impl Iterator<Item = u16> + '_ {
    s.chars().flat_map(|c| {
        let mut buffer = [0u16; 2];
        let units: &[u16] = match carried_surrogate(c) {
            Some(unit) => {
                buffer[0] = unit;
                &buffer[..1]
            }
            None => c.encode_utf16(&mut buffer),
        };
        let (first, second) = (units[0], units.get(1).copied());
        std::iter::once(first).chain(second)
    })
}

/// Decodes UTF-16 units as JavaScript holds them into a Rust string: pairs become their
/// character, lone surrogates their carrier (the inverse of [`utf16_units`]).
pub fn from_utf16_units(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|r| match r {
            Ok(c) => c,
            Err(e) => carrier_of(e.unpaired_surrogate()).unwrap_or('\u{FFFD}'),
        })
        .collect()
}

/// `s.slice(start, end)` (and `substring` for `start <= end <= length`) counted in UTF-16
/// units, as JavaScript does: a cut through a surrogate pair leaves a lone surrogate, carried.
/// Indices past the end are clamped.
///
/// ```
/// use pi_session_types::js::slice;
/// assert_eq!(slice("a😀b", 0, 2), "a\u{10F83D}"); // "a\ud83d"
/// assert_eq!(slice("a😀b", 2, 4), "\u{10FE00}b"); // "\ude00b"
/// assert_eq!(slice("a😀b", 0, 3), "a😀");
/// ```
pub fn slice(s: &str, start: usize, end: usize) -> String {
    if s.is_ascii() {
        let end = end.min(s.len());
        return s.get(start.min(end)..end).unwrap_or_default().to_owned();
    }
    let units: Vec<u16> = utf16_units(s).collect();
    let end = end.min(units.len());
    from_utf16_units(&units[start.min(end)..end])
}

/// `String.prototype.toWellFormed`: every lone surrogate (carried) becomes U+FFFD.
pub fn to_well_formed(s: &str) -> std::borrow::Cow<'_, str> {
    if !has_lone_surrogate(s) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars()
        .map(|c| match carried_surrogate(c) {
            Some(_) => '\u{FFFD}',
            None => c,
        })
        .collect::<String>()
        .into()
}

/// pi-ai's `sanitizeSurrogates`: every lone surrogate (carried) is removed.
pub fn remove_lone_surrogates(s: &str) -> std::borrow::Cow<'_, str> {
    if !has_lone_surrogate(s) {
        return std::borrow::Cow::Borrowed(s);
    }
    s.chars()
        .filter(|&c| carried_surrogate(c).is_none())
        .collect::<String>()
        .into()
}

// ---------------------------------------------------------------------------------------------
// Building values
// ---------------------------------------------------------------------------------------------

/// Builds a JSON object from `(key, value)` pairs in order, leaving out the pairs whose value
/// is `None`: an object literal whose `undefined` members `JSON.stringify` omits.
///
/// ```
/// use pi_session_types::js::object;
/// use serde_json::json;
/// let value = object([("role", Some(json!("user"))), ("name", None), ("n", Some(json!(1)))]);
/// assert_eq!(value, json!({"role": "user", "n": 1}));
/// ```
pub fn object<const N: usize>(pairs: [(&str, Option<Value>); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

/// Builds a JSON object from `(key, value)` pairs in order, each value moved in: for a value
/// already made (a message, a list of blocks), which `serde_json::json!` would copy by
/// serialising it.
///
/// ```
/// use pi_session_types::js::fields;
/// use serde_json::json;
/// let blocks = json!([{"type": "text", "text": "long"}]);
/// let value = fields([("role", "user".into()), ("content", blocks)]);
/// assert_eq!(value, json!({"role": "user", "content": [{"type": "text", "text": "long"}]}));
/// ```
pub fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}

/// The content block `{type: "text", text}`, keys in the order pi and omp write them.
pub fn text_block(text: impl Into<String>) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), Value::String("text".into()));
    block.insert("text".into(), Value::String(text.into()));
    Value::Object(block)
}

// ---------------------------------------------------------------------------------------------
// Dates
// ---------------------------------------------------------------------------------------------

/// `new Date(value).getTime()`, or `None` for `NaN`.
///
/// Strings are parsed with the ECMAScript date-time string format
/// (`YYYY-MM-DDTHH:mm:ss.sssZ` and its shorter and offset forms, plus the
/// extended `±YYYYYY` years). Forms without an offset are read as UTC: the
/// real implementations would use the machine's local zone for date-time forms,
/// which makes their output depend on `TZ`; every file pi and omp write carries
/// an explicit `Z`. Other formats that V8's legacy parser accepts give `None`.
pub fn date_ms(value: Option<&Value>) -> Option<i64> {
    match value {
        None => None,
        Some(Value::Null) => Some(0),
        Some(Value::Bool(b)) => Some(i64::from(*b)),
        Some(Value::Number(n)) => time_clip(n.as_f64()?),
        Some(Value::String(s)) => parse_date_string(s),
        Some(other @ Value::Array(_)) => parse_date_string(&string_of(Some(other))),
        Some(Value::Object(_)) => None,
    }
}

/// The JSON value JavaScript writes for `new Date(value).getTime()`: a number,
/// or `null` for `NaN`.
pub fn date_ms_value(value: Option<&Value>) -> Value {
    match date_ms(value) {
        Some(ms) => Value::from(ms),
        None => Value::Null,
    }
}

const MAX_TIME_MS: f64 = 8.64e15;

fn time_clip(ms: f64) -> Option<i64> {
    if !ms.is_finite() || ms.abs() > MAX_TIME_MS {
        return None;
    }
    // Bounded by 8.64e15 above, so the conversion is exact.
    #[allow(clippy::cast_possible_truncation)]
    Some(ms.trunc() as i64)
}

/// Parses an ECMAScript date-time string; `None` when V8 would give `NaN`
/// (for the formats we support).
pub fn parse_date_string(input: &str) -> Option<i64> {
    let s = trim(input);
    let mut cursor = Cursor {
        bytes: s.as_bytes(),
        pos: 0,
    };
    let year = cursor.year()?;
    let mut month = 1;
    let mut day = 1;
    if cursor.eat(b'-') {
        month = cursor.digits(2)?;
        if cursor.eat(b'-') {
            day = cursor.digits(2)?;
        }
    }
    let (mut hour, mut minute, mut second, mut millis) = (0, 0, 0, 0);
    let mut offset_minutes: i64 = 0;
    if cursor.eat(b'T') || cursor.eat(b't') || cursor.eat(b' ') {
        hour = cursor.digits(2)?;
        if !cursor.eat(b':') {
            return None;
        }
        minute = cursor.digits(2)?;
        if cursor.eat(b':') {
            second = cursor.digits(2)?;
            if cursor.eat(b'.') || cursor.eat(b',') {
                millis = cursor.fraction_millis()?;
            }
        }
        if cursor.eat(b'Z') || cursor.eat(b'z') {
            offset_minutes = 0;
        } else if let Some(sign) = cursor.sign() {
            let oh = cursor.digits(2)?;
            let _ = cursor.eat(b':');
            let om = cursor.digits(2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            offset_minutes = sign * (oh * 60 + om);
        }
    } else if cursor.eat(b'Z') || cursor.eat(b'z') {
        offset_minutes = 0;
    }
    if cursor.pos != cursor.bytes.len() {
        return None;
    }
    // V8 and JavaScriptCore accept any day 1..=31 and let it overflow into the
    // next month (`2023-02-31` is 3 March).
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let is_end_of_day = hour == 24 && minute == 0 && second == 0 && millis == 0;
    if (hour > 23 && !is_end_of_day) || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let ms = days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis
        - offset_minutes * 60_000;
    #[allow(clippy::cast_precision_loss)]
    time_clip(ms as f64)
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn eat(&mut self, byte: u8) -> bool {
        if self.bytes.get(self.pos) == Some(&byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn sign(&mut self) -> Option<i64> {
        if self.eat(b'+') {
            Some(1)
        } else if self.eat(b'-') {
            Some(-1)
        } else {
            None
        }
    }

    fn digits(&mut self, count: usize) -> Option<i64> {
        let slice = self.bytes.get(self.pos..self.pos + count)?;
        let mut value = 0i64;
        for byte in slice {
            if !byte.is_ascii_digit() {
                return None;
            }
            value = value * 10 + i64::from(byte - b'0');
        }
        self.pos += count;
        Some(value)
    }

    fn year(&mut self) -> Option<i64> {
        match self.sign() {
            Some(sign) => {
                let y = self.digits(6)?;
                if sign < 0 && y == 0 {
                    return None;
                }
                Some(sign * y)
            }
            None => self.digits(4),
        }
    }

    fn fraction_millis(&mut self) -> Option<i64> {
        let start = self.pos;
        let mut millis = 0i64;
        let mut seen = 0;
        while let Some(byte) = self.bytes.get(self.pos) {
            if !byte.is_ascii_digit() {
                break;
            }
            if seen < 3 {
                millis = millis * 10 + i64::from(byte - b'0');
            }
            seen += 1;
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        for _ in seen..3 {
            millis *= 10;
        }
        Some(millis)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `new Date(ms).toISOString()` for a valid time value.
pub fn iso_from_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let year = if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else if y < 0 {
        format!("-{:06}", -y)
    } else {
        format!("+{y:06}")
    };
    format!(
        "{year}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_iso_timestamps_like_v8() {
        // Values computed with node 20 and bun 1.4.5 (both agree): new Date(s).getTime()
        let table = [
            ("2025-01-02T03:04:05.678Z", Some(1_735_787_045_678)),
            ("1970-01-01T00:00:00.000Z", Some(0)),
            ("2024-02-29T00:00:00Z", Some(1_709_164_800_000)),
            ("2023-02-29T00:00:00Z", Some(1_677_628_800_000)),
            ("2023-02-31T00:00:00Z", Some(1_677_801_600_000)),
            ("2023-02-32T00:00:00Z", None),
            ("2024-01-01T24:00:01Z", None),
            ("2024-01-01t00:00:00z", Some(1_704_067_200_000)),
            ("2024-01-01T00:00:00+0100", Some(1_704_063_600_000)),
            ("2024-01-01T00:00:00.Z", None),
            ("2024-01-01T00:00:60Z", None),
            ("2024-13-01", None),
            ("-000000-01-01T00:00:00Z", None),
            ("2024-01-01", Some(1_704_067_200_000)),
            ("2024-01-01T00:00:00.123456Z", Some(1_704_067_200_123)),
            ("2024-01-01T01:00:00+01:00", Some(1_704_067_200_000)),
            ("2024-01-01T24:00:00Z", Some(1_704_153_600_000)),
            ("not a date", None),
            ("", None),
            ("+275760-09-13T00:00:00.000Z", Some(8_640_000_000_000_000)),
            ("+275760-09-13T00:00:00.001Z", None),
            ("-000001-01-01T00:00:00Z", Some(-62_198_755_200_000)),
        ];
        for (input, expected) in table {
            assert_eq!(parse_date_string(input), expected, "{input}");
        }
    }

    #[test]
    fn date_of_non_strings() {
        assert_eq!(date_ms(None), None);
        assert_eq!(date_ms(Some(&json!(null))), Some(0));
        assert_eq!(date_ms(Some(&json!(12.9))), Some(12));
        assert_eq!(date_ms(Some(&json!({}))), None);
    }

    #[test]
    fn iso_round_trip() {
        for ms in [
            0,
            1_735_787_045_678,
            -1,
            253_402_300_799_999,
            -62_198_755_200_000,
        ] {
            assert_eq!(parse_date_string(&iso_from_ms(ms)), Some(ms), "{ms}");
        }
        assert_eq!(iso_from_ms(1_735_787_045_678), "2025-01-02T03:04:05.678Z");
    }

    #[test]
    fn js_strings() {
        assert_eq!(string_of(None), "undefined");
        assert_eq!(string_of(Some(&json!(null))), "null");
        assert_eq!(string_of(Some(&json!(1.5))), "1.5");
        assert_eq!(string_of(Some(&json!(1e21))), "1e+21");
        assert_eq!(string_of(Some(&json!([1, null, "a"]))), "1,,a");
        assert_eq!(string_of(Some(&json!({"a": 1}))), "[object Object]");
    }

    #[test]
    fn js_trim_differs_from_rust() {
        assert_eq!(trim("\u{FEFF} a \u{0085}"), "a \u{0085}");
        assert!(truthy(Some(&json!([]))));
        assert!(!truthy(Some(&json!(0.0))));
        assert!(!truthy(Some(&json!(""))));
    }

    #[test]
    fn js_strings_of_every_kind() {
        assert_eq!(string_of(Some(&json!(2))), "2");
        assert_eq!(string_of(Some(&json!(-0.0))), "0");
        assert_eq!(string_of(Some(&json!(true))), "true");
        assert_eq!(string_of(Some(&json!([[1, 2], "b"]))), "1,2,b");
    }

    #[test]
    fn truthiness_and_nullish_match_javascript() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&json!(null))));
        assert!(!truthy(Some(&json!(false))));
        assert!(!truthy(Some(&json!(0))));
        assert!(truthy(Some(&json!("0"))));
        assert!(truthy(Some(&json!({}))));
        assert!(is_nullish(None) && is_nullish(Some(&json!(null))));
        assert!(!is_nullish(Some(&json!(0))) && !is_nullish(Some(&json!(""))));
        let (zero, one) = (json!(0), json!(1));
        assert_eq!(nullish_or(Some(&zero), Some(&one)), Some(&zero));
        assert_eq!(nullish_or(None, Some(&one)), Some(&one));
    }

    #[test]
    fn whitespace_set_is_ecmascripts() {
        // ECMA-262 WhiteSpace + LineTerminator, listed out as the spec does.
        let spec = [
            '\u{0009}', '\u{000B}', '\u{000C}', '\u{0020}', '\u{00A0}', '\u{FEFF}', '\u{000A}',
            '\u{000D}', '\u{2028}', '\u{2029}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}',
            '\u{2003}', '\u{2004}', '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}',
            '\u{200A}', '\u{202F}', '\u{205F}', '\u{3000}',
        ];
        for c in '\u{0}'..='\u{FFFF}' {
            assert_eq!(is_js_whitespace(c), spec.contains(&c), "U+{:04X}", c as u32);
        }
        assert_eq!(trim_end(" a \u{2028}"), " a");
        assert_eq!(trim_start("\u{3000}a "), "a ");
    }

    #[test]
    fn to_fixed_and_locale_match_javascript() {
        // Computed with bun 1.4 (omp's runtime): x.toFixed(1), x.toLocaleString("en-US").
        let fixed = [
            (1.15, "1.1"),
            (1.25, "1.3"),
            (1.05, "1.1"),
            (0.05, "0.1"),
            (2.45, "2.5"),
            (1023.95, "1024.0"),
            (48.85, "48.9"),
            (0.25, "0.3"),
            (1.35, "1.4"),
            (12345.65, "12345.6"),
            (1e21, "1e+21"),
        ];
        for (x, expected) in fixed {
            assert_eq!(to_fixed(x, 1), expected, "{x}");
        }
        assert_eq!(to_locale_string(1234.5), "1,234.5");
        assert_eq!(to_locale_string(0.0005), "0.001");
        assert_eq!(to_locale_string(999.0), "999");
        assert_eq!(to_locale_string(f64::NAN), "NaN");
    }

    #[test]
    fn builders_leave_out_undefined() {
        assert_eq!(
            object([("a", None), ("b", Some(json!(null)))]),
            json!({"b": null})
        );
        assert_eq!(text_block("x"), json!({"type": "text", "text": "x"}));
    }
}
