//! JavaScript strings with lone surrogates: read from a line, counted, sliced and written back
//! exactly as pi and omp (node and bun) do.

use pi_session_types::js::{
    carrier_of, from_utf16_units, remove_lone_surrogates, slice, to_well_formed, utf16_len,
    utf16_units,
};
use pi_session_types::json::to_js_string;
use pi_session_types::line::parse_object_line;
use pi_session_types::{ParseWarning, parse_line};
use proptest::prelude::*;

/// `JSON.stringify(s)` of a JavaScript string given as UTF-16 units, written independently of
/// the crate: `"` `\` and controls escaped, lone surrogates as lowercase `\udxxx`, the rest raw.
fn stringify_units(units: &[u16]) -> String {
    let mut out = String::from("\"");
    for decoded in char::decode_utf16(units.iter().copied()) {
        match decoded {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\n') => out.push_str("\\n"),
            Ok('\r') => out.push_str("\\r"),
            Ok('\t') => out.push_str("\\t"),
            Ok('\u{8}') => out.push_str("\\b"),
            Ok('\u{c}') => out.push_str("\\f"),
            Ok(c) if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            Ok(c) => out.push(c),
            Err(e) => out.push_str(&format!("\\u{:04x}", e.unpaired_surrogate())),
        }
    }
    out.push('"');
    out
}

/// UTF-16 units biased towards surrogates (both halves, in and out of order) and escapes.
///
/// A pair that encodes U+10F800–U+10FFFF (high half `0xDBFE`/`0xDBFF`) is moved just below that
/// range: a genuine character there is the carriers' own range, the one documented ambiguity,
/// read as it is with an `AmbiguousPrivateUse` warning (tested apart, in
/// `a_genuine_code_point_of_the_carrier_range_is_reported`).
fn js_units() -> impl Strategy<Value = Vec<u16>> {
    let unit = prop_oneof![
        3 => 0x20u16..0x7f,
        1 => 0u16..0x20,
        3 => 0xD800u16..0xE000,
        1 => Just(0xD83Du16),
        1 => Just(0xDE00u16),
        1 => 0x80u16..0xD800,
        1 => 0xE000u16..=0xFFFF,
    ];
    proptest::collection::vec(unit, 0..24).prop_map(|mut units| {
        for at in 1..units.len() {
            if matches!(units[at - 1], 0xDBFE | 0xDBFF) && (0xDC00..0xE000).contains(&units[at]) {
                units[at - 1] = 0xDBFD;
            }
        }
        units
    })
}

proptest! {
    /// Any JavaScript string, lone surrogates included, read from a line and written by our
    /// `JSON.stringify` is the bytes JavaScript wrote, as a value and as a key.
    #[test]
    fn any_js_string_survives_parse_and_write(units in js_units(), key in js_units()) {
        // A key of its own (never `type` or `id`), on a type the model keeps in file order.
        let key: Vec<u16> = "k".encode_utf16().chain(key).collect();
        let line = format!(
            r#"{{"type":"x_unknown",{}:{},"id":"a"}}"#,
            stringify_units(&key),
            stringify_units(&units)
        );
        let parsed = parse_object_line(line.as_bytes()).unwrap();
        prop_assert_eq!(to_js_string(&parsed.value).unwrap(), line.clone());
        let typed = parse_line(line.as_bytes()).unwrap();
        prop_assert_eq!(to_js_string(&typed.value).unwrap(), line.clone());
        // The string holds the units JavaScript held.
        let value = parsed.value.values().nth(1).and_then(|v| v.as_str()).unwrap();
        prop_assert_eq!(utf16_units(value).collect::<Vec<_>>(), units.clone());
        prop_assert_eq!(utf16_len(value), units.len());
        prop_assert_eq!(from_utf16_units(&units), value);
    }

    /// `slice` cuts where JavaScript cuts, lone halves of a cut pair included.
    #[test]
    fn slice_is_javascript_slice(units in js_units(), a in 0usize..30, b in 0usize..30) {
        let text = from_utf16_units(&units);
        let end = b.min(units.len());
        let start = a.min(end);
        prop_assert_eq!(slice(&text, a, b), from_utf16_units(&units[start..end]));
    }
}

#[test]
fn a_cut_emoji_is_two_lone_surrogates_as_in_javascript() {
    // node: const s = "a😀b"; [s.length, s.slice(0, 2), s.slice(2)]
    //   → [4, "a\ud83d", "\ude00b"]; JSON.stringify of the pieces writes the escapes.
    let s = "a😀b";
    assert_eq!(utf16_len(s), 4);
    let (head, tail) = (slice(s, 0, 2), slice(s, 2, usize::MAX));
    assert_eq!((utf16_len(&head), utf16_len(&tail)), (2, 2));
    assert_eq!(to_js_string(&head).unwrap(), r#""a\ud83d""#);
    assert_eq!(to_js_string(&tail).unwrap(), r#""\ude00b""#);
    // Joined again, the halves are one emoji, as `head + tail` is in JavaScript.
    let joined: Vec<u16> = utf16_units(&head).chain(utf16_units(&tail)).collect();
    assert_eq!(from_utf16_units(&joined), s);
}

#[test]
fn well_formed_and_sanitized_as_pi_ai_does() {
    let s = format!(
        "x{}y😀{}",
        carrier_of(0xD83D).unwrap(),
        carrier_of(0xDC00).unwrap()
    );
    // "x\ud83dy😀\udc00".toWellFormed() → "x\ufffdy😀\ufffd"
    assert_eq!(to_well_formed(&s), "x\u{fffd}y😀\u{fffd}");
    // pi-ai's sanitizeSurrogates: lone surrogates removed, pairs kept.
    assert_eq!(remove_lone_surrogates(&s), "xy😀");
    assert_eq!(remove_lone_surrogates("plain 😀"), "plain 😀");
}

#[test]
fn a_genuine_code_point_of_the_carrier_range_is_reported() {
    let raw = "{\"type\":\"custom\",\"id\":\"a\",\"t\":\"\u{10FFFD}\"}";
    let escaped = r#"{"type":"custom","id":"a","t":"\udbff\udffd"}"#;
    for line in [raw, escaped] {
        let parsed = parse_line(line.as_bytes()).unwrap();
        assert_eq!(
            parsed.warnings,
            [ParseWarning::AmbiguousPrivateUse { count: 1 }],
            "{line}"
        );
        // Read as it is; written back as the lone surrogate it carries (documented).
        assert!(to_js_string(&parsed.value).unwrap().contains(r#""\udffd""#));
    }
}
