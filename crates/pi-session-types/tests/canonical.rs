//! `is_js_canonical`: bytes it accepts are exactly what `to_js_string` prints for the value they
//! parse to (as the store reads a line), so copying them equals parsing and printing them. A
//! proptest writes generated values with every spelling JSON allows (whitespace, escapes in
//! both cases, surrogate pairs escaped, `\/`, `1.0`/`1e2`/`-0` numbers, duplicate and
//! integer-like keys) and compares the two paths; the plain `JSON.stringify` spelling must be
//! accepted.

use std::borrow::Cow;

use pi_session_types::envelope_scan::scan_envelope;
use pi_session_types::json::{
    JsBuffer, MemberOf, Strings, canonical_members, for_each_member, is_js_canonical,
    is_js_canonical_given, to_js_string, to_js_vec, to_js_vec_through_serde_json, top_level_member,
    value_to_js_vec, write_laid_out,
};
use pi_session_types::line::replace_lone_surrogate_escapes;
use pi_session_types::shallow::{
    Keys, LaidOut, canonical_entry_with_message_keys, canonical_entry_with_message_keys_given,
    canonical_keyed_message, canonical_keyed_message_given, canonical_keyed_message_laid,
    entry_with_message_keys, listed_entry_with_message_keys_given,
    listed_entry_with_message_keys_proven,
};
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// A body as the store reads it: serde_json, else with lone surrogate escapes carried.
fn read(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(bytes).ok().or_else(|| {
        let text = String::from_utf8_lossy(bytes);
        match replace_lone_surrogate_escapes(&text) {
            Cow::Owned(fixed) => serde_json::from_str(&fixed).ok(),
            Cow::Borrowed(_) => None,
        }
    })
}

/// The parsed path's bytes for `text`, when `text` is JSON.
fn printed(text: &[u8]) -> Option<String> {
    read(text).map(|value| to_js_string(&value).unwrap())
}

#[test]
fn what_json_stringify_writes_is_copied() {
    let cases = [
        r#"{"role":"user","content":[{"type":"text","text":"hi \"you\"\\ \n\t\b\f\r\u0001\u001f"}],"timestamp":1767225600000}"#,
        r#"{"a":"\ud83d","b":"\udc00x\ud83d\ud83d","c":"😀 é ✓ \u007f / \u2028"}"#,
        r#"[1,-1,0,2.5,-2.5,1e+21,1e-7,0.000001,123456789012345,9007199254740992]"#,
        r#"{"x":{},"y":[],"z":[{}],"t":true,"f":false,"n":null,"":""}"#,
        r#"{"a1":1,"-1":2,"01":3,"4294967295":4}"#,
        r#""just a string""#,
        "0",
    ];
    for case in cases {
        let case = case
            .replace("\\u007f", "\u{7f}")
            .replace("\\u2028", "\u{2028}");
        assert!(is_js_canonical(case.as_bytes()), "{case}");
        assert_eq!(printed(case.as_bytes()).as_deref(), Some(case.as_str()));
    }
}

/// Long strings are skipped 16 bytes at a time where they hold only plain text and the
/// common escapes: a spelling `JSON.stringify` never writes is still found at every place in
/// them (at a chunk's first or last byte, after an escape, amid text that is not ASCII).
#[test]
fn a_long_string_is_checked_at_every_byte() {
    let texts = [
        r#"line one \n \"quoted\" \t tab \\ backslash \n more text to fill two chunks or three"#,
        r#"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\t\t\t\t\t\t\t\t\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\""#,
        "caf\u{e9} \u{2713} \u{1f600} \\n text that is not ASCII, é é é é é é é é é é é é é é é é",
    ];
    let bad = [
        r"\/", r"\u00e9", r"\u0041", r"\uD83D", "\u{1}", "\t", "\n", " \\", r#"""#,
    ];
    for text in texts {
        let line = format!(r#"{{"message":{{"content":"{text}","n":1}}}}"#);
        assert!(is_js_canonical(line.as_bytes()), "{line}");
        assert_eq!(printed(line.as_bytes()).as_deref(), Some(line.as_str()));
        for at in (0..=text.len()).filter(|&at| text.is_char_boundary(at)) {
            for spelling in bad {
                let spelled = format!("{}{spelling}{}", &text[..at], &text[at..]);
                let line = format!(r#"{{"message":{{"content":"{spelled}","n":1}}}}"#);
                assert_eq!(
                    is_js_canonical(line.as_bytes()),
                    printed(line.as_bytes()).as_deref() == Some(line.as_str()),
                    "{line}"
                );
            }
            // Bytes that are not UTF-8, and a carrier (printed as a lone surrogate's escape).
            for bytes in [
                &b"\xff"[..],
                b"\x80",
                b"\xc3",
                b"\xe2\x9c",
                b"\xf4\x8f\xa0\x80",
            ] {
                let mut line = br#"{"message":{"content":""#.to_vec();
                line.extend_from_slice(&text.as_bytes()[..at]);
                line.extend_from_slice(bytes);
                line.extend_from_slice(&text.as_bytes()[at..]);
                line.extend_from_slice(br#"","n":1}}"#);
                assert!(!is_js_canonical(&line), "{line:?}");
            }
        }
    }
}

#[test]
fn every_other_spelling_takes_the_parsed_path() {
    let cases = [
        // Whitespace.
        r#"{"a": 1}"#,
        r#" {"a":1}"#,
        r#"{"a":1} "#,
        "[1,\n2]",
        // Escapes JSON.stringify does not write.
        r#"{"a":"\u00e9"}"#,
        r#"{"a":"\/"}"#,
        r#"{"a":"\u000a"}"#,
        r#"{"a":"\u0041"}"#,
        r#"{"a":"\u001F"}"#,
        r#"{"a":"\uD83D"}"#,
        r#"{"a":"\ud83d\ude00"}"#,
        r#"{"a":"\ud83d\uDE00"}"#,
        r#"{"\u0061":1}"#,
        // Numbers ECMAScript spells otherwise.
        r#"{"a":1.0}"#,
        r#"{"a":1e2}"#,
        r#"{"a":1E+21}"#,
        r#"{"a":-0}"#,
        r#"{"a":0.10}"#,
        r#"{"a":9007199254740993}"#,
        r#"{"a":12345678901234567890}"#,
        // Objects JSON.stringify prints otherwise.
        r#"{"a":1,"a":2}"#,
        r#"{"a":{"b":1,"b":1}}"#,
        r#"{"b":1,"0":2}"#,
        r#"{"1":1,"0":2}"#,
    ];
    for case in cases {
        assert!(!is_js_canonical(case.as_bytes()), "{case}");
        // Each is JSON the parsed path prints differently.
        let printed = printed(case.as_bytes()).unwrap_or_else(|| panic!("{case} is JSON"));
        assert_ne!(printed, case);
    }
    // Not one JSON value, not UTF-8, a carrier-range character, too deep, too many keys.
    let many_keys = format!(
        "{{{}}}",
        (0..65)
            .map(|i| format!("\"k{i}\":{i}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
    for case in [
        b"{\"a\":1}{}".to_vec(),
        b"{\"a\":1".to_vec(),
        b"tru".to_vec(),
        b"{\"a\":\"\xff\"}".to_vec(),
        "{\"a\":\"\u{10F83D}\"}".as_bytes().to_vec(),
        many_keys.into_bytes(),
        deep.into_bytes(),
    ] {
        assert!(
            !is_js_canonical(&case),
            "{}",
            String::from_utf8_lossy(&case)
        );
    }
}

#[test]
fn a_member_is_found_once_spelled_plainly() {
    let line = br#"{ "type" : "message", "id":"a\"b", "message" : {"role":"user","x":[1,{"y":"}"}]} , "n":-1.5e3}"#;
    assert_eq!(
        top_level_member(line, "message"),
        Some(&br#"{"role":"user","x":[1,{"y":"}"}]}"#[..])
    );
    assert_eq!(top_level_member(line, "id"), Some(&br#""a\"b""#[..]));
    assert_eq!(top_level_member(line, "n"), Some(&b"-1.5e3"[..]));
    assert_eq!(top_level_member(line, "role"), None);
    assert_eq!(
        top_level_member(br#"{"message":1,"message":2}"#, "message"),
        None
    );
    assert_eq!(top_level_member(br#"{"m\u0065ssage":1}"#, "message"), None);
    assert_eq!(top_level_member(b"[1]", "message"), None);
    assert_eq!(top_level_member(b"{}", "message"), None);
    assert_eq!(top_level_member(br#"{"message":"#, "message"), None);
}

/// What is sent of a `message` line is its message: the members around it are found without a
/// check of their spelling (the store checked the line as JSON when it opened the file), and
/// only the message must be `JSON.stringify`'s. A key repeated, a key spelled with an escape
/// or a message spelled otherwise is still refused, before the message or after it.
#[test]
fn a_line_is_read_by_its_message_whatever_its_other_members_spell() {
    const KEYS: Keys = Keys {
        entry: &["type", "id", "timestamp", "message"],
        message: &["role"],
        blocks: &[],
    };
    let message = br#"{"role":"user","content":"hi"}"#;
    let line = |before: &str, after: &str| {
        format!(
            r#"{{"type":"message","id":"a",{before}"message":{}{after}}}"#,
            String::from_utf8_lossy(message)
        )
    };
    // Spellings `JSON.stringify` never writes, around a message it wrote.
    for (before, after) in [
        (r#""parentId":"\u0061","#, ""),
        (r#""n":1.0,"timestamp":"2026-01-01T00:00:00.000Z","#, ""),
        (r#""s":"\/","#, r#","x":[1, 2],"y":1E2"#),
        (r#""0":{"b":1,"a":2},"#, r#","z":"\ud83d\ude00""#),
        ("", r#","parentId":1e21"#),
    ] {
        let text = line(before, after);
        assert!(!is_js_canonical(text.as_bytes()), "{text}");
        let (keyed, bytes) = canonical_keyed_message(text.as_bytes(), &KEYS, "a")
            .unwrap_or_else(|| panic!("refused: {text}"));
        assert_eq!(bytes, message, "{text}");
        assert_eq!(keyed.get("role"), Some(&Value::from("user")), "{text}");
        let (entry, bytes) = canonical_entry_with_message_keys(text.as_bytes(), &KEYS)
            .unwrap_or_else(|| panic!("refused whole: {text}"));
        assert_eq!(bytes, message, "{text}");
        let whole = read(text.as_bytes()).unwrap();
        assert_eq!(entry["id"], whole["id"], "{text}");
        assert_eq!(entry.get("timestamp"), whole.get("timestamp"), "{text}");
        assert_eq!(canonical_keyed_message(text.as_bytes(), &KEYS, "b"), None);
    }
    // Refused wherever the key or the spelling is met.
    for (before, after) in [
        (r#""message":{},"#, ""),
        ("", r#","message":{}"#),
        (r#""id":"a","#, ""),
        ("", r#","id":"a""#),
        ("", r#","t":1,"t":2"#),
        (r#""t":1,"#, r#","t":2"#),
        (r#""p\u0061rentId":null,"#, ""),
        ("", r#","p\u0061rentId":null"#),
        (r#""parentId": null,"#, ""),
        ("", r#", "parentId":null"#),
        ("", r#","parentId":"#),
        ("", ","),
        (
            "",
            r#","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9"#,
        ),
    ] {
        let text = line(before, after);
        assert_eq!(
            canonical_keyed_message(text.as_bytes(), &KEYS, "a"),
            None,
            "{text}"
        );
        assert_eq!(
            canonical_entry_with_message_keys(text.as_bytes(), &KEYS),
            None,
            "{text}"
        );
    }
    for spelled in [
        r#"{"role":"user","content":"\u0068i"}"#,
        r#"{"role":"user", "content":"hi"}"#,
        r#"{"r\u006fle":"user"}"#,
        r#"{"role":"user","role":"user"}"#,
        r#"[1]"#,
    ] {
        let text = format!(r#"{{"type":"message","id":"a","message":{spelled}}}"#);
        assert_eq!(
            canonical_keyed_message(text.as_bytes(), &KEYS, "a"),
            None,
            "{text}"
        );
    }
    // The message is as deep in the line as in the walk of the whole line: the same depth
    // limit holds.
    for depth in [126, 127, 128] {
        let text = format!(
            r#"{{"type":"message","id":"a","message":{{"role":"user","content":{}{}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert_eq!(
            canonical_keyed_message(text.as_bytes(), &KEYS, "a").is_some(),
            is_js_canonical(text.as_bytes()),
            "{depth}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Generated bodies, written in every spelling
// ---------------------------------------------------------------------------------------------

/// The round-trip test's values, with more integers and strings holding carried lone
/// surrogates and integer-like keys.
fn json_value() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        crate::roundtrip_props::number(),
        any::<i64>().prop_map(Value::from),
        (-1000i64..1000).prop_map(Value::from),
    ];
    let text = prop_oneof![
        crate::roundtrip_props::text(),
        "[a/\n\u{1}\u{8}\u{10F83D}\u{10FC00}😀é]{0,6}",
        "(01|-1|4294967295)",
    ];
    crate::roundtrip_props::json_value_of(number.boxed(), text.clone().boxed(), text.boxed(), 4)
}

/// Writes `value` as JSON, each choice (whitespace, escape form, number spelling, a duplicated
/// key) taken from `noise`; all zeros gives `JSON.stringify`'s spelling.
struct Noisy<'n> {
    noise: std::iter::Cycle<std::slice::Iter<'n, u8>>,
    out: String,
}

impl Noisy<'_> {
    fn pick(&mut self) -> u8 {
        self.noise.next().copied().unwrap_or(0)
    }

    fn space(&mut self) {
        if self.pick() == 1 {
            self.out.push(' ');
        }
    }

    fn value(&mut self, value: &Value) {
        self.space();
        match value {
            Value::Null | Value::Bool(_) => self.out.push_str(&value.to_string()),
            Value::Number(n) => self.number(n),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.value(item);
                }
                self.space();
                self.out.push(']');
            }
            Value::Object(map) => {
                self.out.push('{');
                for (i, (key, item)) in map.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    if self.pick() == 2 {
                        // A duplicate: JSON.parse keeps the later value at this place.
                        self.string(key);
                        self.out.push_str(":0,");
                    }
                    self.space();
                    self.string(key);
                    self.space();
                    self.out.push(':');
                    self.value(item);
                }
                self.space();
                self.out.push('}');
            }
        }
    }

    fn number(&mut self, n: &Number) {
        let canonical = to_js_string(n).unwrap();
        let choice = self.pick();
        match (choice, n.as_f64()) {
            (3, Some(f)) => self.out.push_str(&format!("{f:?}")),
            (4, Some(f)) => self.out.push_str(&format!("{f:e}")),
            (5, _) if !canonical.contains(['.', 'e']) => {
                self.out.push_str(&canonical);
                self.out.push_str(".0");
            }
            (6, Some(0.0)) => self.out.push_str("-0"),
            (7, _) => self.out.push_str(&canonical.to_uppercase()),
            _ => self.out.push_str(&canonical),
        }
    }

    fn string(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            let choice = self.pick();
            if let Some(unit) = pi_session_types::js::carried_surrogate(c) {
                self.out.push_str(&if choice == 3 {
                    format!("\\u{unit:04X}")
                } else {
                    format!("\\u{unit:04x}")
                });
                continue;
            }
            match (c, choice) {
                ('"', _) => self.out.push_str("\\\""),
                ('\\', _) => self.out.push_str("\\\\"),
                ('/', 4) => self.out.push_str("\\/"),
                ('\n', 5) | ('\u{8}', 5) => self.out.push_str(&format!("\\u{:04x}", c as u32)),
                ('\n', _) => self.out.push_str("\\n"),
                ('\r', _) => self.out.push_str("\\r"),
                ('\t', _) => self.out.push_str("\\t"),
                ('\u{8}', _) => self.out.push_str("\\b"),
                ('\u{c}', _) => self.out.push_str("\\f"),
                (c, 6) if c < ' ' => self.out.push_str(&format!("\\u{:04X}", c as u32)),
                (c, _) if c < ' ' => self.out.push_str(&format!("\\u{:04x}", c as u32)),
                (c, 3..=6) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        if choice == 6 {
                            self.out.push_str(&format!("\\u{unit:04X}"));
                        } else {
                            self.out.push_str(&format!("\\u{unit:04x}"));
                        }
                    }
                }
                (c, _) => self.out.push(c),
            }
        }
        self.out.push('"');
    }
}

fn noisy(value: &Value, noise: &[u8]) -> String {
    let quiet = [0u8];
    let noise = if noise.is_empty() { &quiet[..] } else { noise };
    let mut writer = Noisy {
        noise: noise.iter().cycle(),
        out: String::new(),
    };
    writer.value(value);
    writer.out
}

/// True when some object of `value` has an integer-like key (printed first by
/// `JSON.stringify`, so its spelling depends on the order) or more keys than the scanner
/// checks, or a string holds a carried high surrogate before a carried low one (printed as two
/// escapes that read back as one character).
fn has_reordered_or_wide_object(value: &Value) -> bool {
    match value {
        Value::String(s) => {
            let units: Vec<Option<u16>> = s
                .chars()
                .map(pi_session_types::js::carried_surrogate)
                .collect();
            units.windows(2).any(|pair| {
                matches!(pair, [Some(high), Some(low)]
                    if (0xD800..0xDC00).contains(high) && (0xDC00..0xE000).contains(low))
            })
        }
        Value::Array(items) => items.iter().any(has_reordered_or_wide_object),
        Value::Object(map) => {
            map.len() > 64
                || map
                    .keys()
                    .any(|k| has_reordered_or_wide_object(&Value::from(k.as_str())))
                || map.keys().any(|k| {
                    !k.is_empty()
                        && k.bytes().all(|b| b.is_ascii_digit())
                        && (k == "0" || !k.starts_with('0'))
                        && k.parse::<u64>().is_ok_and(|n| n <= 4_294_967_294)
                })
                || map.values().any(has_reordered_or_wide_object)
        }
        _ => false,
    }
}

/// Values whose strings hold no lone surrogate (a line holding one is left by the open's scan
/// to the full parse), with the characters the noisy writer spells in other ways: `/`,
/// controls with and without a short form, text that is not ASCII, quotes and backslashes.
fn scannable_value() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        crate::roundtrip_props::number(),
        (-1000i64..1000).prop_map(Value::from),
    ];
    let text = "[a/\n\t\u{1}\u{8}\u{c}\r\"\\\\é😀 ]{0,12}";
    crate::roundtrip_props::json_value_of(number.boxed(), text.boxed(), "[a-z/é]{1,4}".boxed(), 3)
}

/// Whether `text` (JSON) holds whitespace between its tokens or an escape `JSON.stringify`
/// never writes (`\/`, `\u`): told token by token, the reference for
/// [`pi_session_types::envelope_scan::Scanned::stringify_spelled`].
fn spelled_otherwise(text: &str) -> bool {
    let mut bytes = text.bytes();
    let mut in_string = false;
    while let Some(byte) = bytes.next() {
        match (in_string, byte) {
            (false, b' ' | b'\n' | b'\t' | b'\r') => return true,
            (false, b'"') | (true, b'"') => in_string = !in_string,
            (true, b'\\') => {
                if let Some(b'/' | b'u') = bytes.next() {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The length of the value of the top-level `message` of `line` (0 when it has none).
fn message_len(line: &[u8]) -> usize {
    top_level_member(line, "message").map_or(0, <[u8]>::len)
}

/// The keys the property tests over a `message` line read of it.
const MESSAGE_LINE_KEYS: Keys = Keys {
    entry: &["type", "id", "message"],
    message: &["role", "content"],
    blocks: &[],
};

/// A `message` entry holding `content` and `other` (in its message and beside it), and its line
/// written with one kind of spelling every `period`-th choice ([`noisy`]).
fn noisy_message_line(
    content: Value,
    other: Value,
    (period, at, kind): (usize, usize, u8),
) -> (Value, String) {
    let mut noise = vec![0u8; period];
    noise[at % period] = kind;
    let entry = serde_json::json!({
        "type": "message",
        "other": other.clone(),
        "message": {"role": "user", "other": other, "content": content},
        "id": "a",
    });
    let text = noisy(&entry, &noise);
    (entry, text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The open's scan says a line is spelled as `JSON.stringify` spells strings and layout
    /// exactly when it is; of such a line, the walks told so (its strings stepped over by
    /// their quotes) answer as the walks that read every string.
    #[test]
    fn a_scanned_lines_strings_are_stepped_over_with_the_same_answers(
        content in scannable_value(),
        other in scannable_value(),
        (period, at, kind) in (1usize..40, 0usize..40, 0u8..8),
    ) {
        let (_, text) = noisy_message_line(content, other, (period, at, kind));
        let bytes = text.as_bytes();
        let Some(scanned) = scan_envelope(bytes) else {
            return Ok(());
        };
        prop_assert_eq!(scanned.stringify_spelled, !spelled_otherwise(&text), "{}", text);
        let strings = Strings::of_scanned(&scanned);
        prop_assert_eq!(is_js_canonical_given(bytes, strings), is_js_canonical(bytes), "{}", text);
        if let Some(message) = top_level_member(bytes, "message") {
            prop_assert_eq!(
                is_js_canonical_given(message, strings),
                is_js_canonical(message),
                "{}", text
            );
        }
        prop_assert_eq!(
            canonical_keyed_message_given(bytes, strings, &MESSAGE_LINE_KEYS, "a"),
            canonical_keyed_message(bytes, &MESSAGE_LINE_KEYS, "a"),
            "{}", text
        );
        prop_assert_eq!(
            canonical_entry_with_message_keys_given(bytes, strings, &MESSAGE_LINE_KEYS),
            canonical_entry_with_message_keys(bytes, &MESSAGE_LINE_KEYS),
            "{}", text
        );
        // The scan finds the line's one message where its value starts, and the id; on a line
        // laid out as pi and omp write one (no whitespace between tokens, `type` first) the
        // reader is told the line still holds the entry's id there, and reads from the message
        // the keys the whole line's walk reads (a message it reads alone, the line spelled
        // otherwise around it, is itself `JSON.stringify`'s text).
        let mut messages = 0;
        pi_session_types::json::for_each_member(bytes, |key, _| {
            messages += usize::from(key == b"message");
        });
        prop_assert_eq!(scanned.message_at.is_some(), messages == 1, "{}", text);
        if let Some(at) = scanned.message_at {
            prop_assert_eq!(
                Some(&bytes[at.message()..at.message() + message_len(bytes)]),
                top_level_member(bytes, "message"),
                "{}", text
            );
            let laid_out = !spelled_otherwise(&text) && bytes.starts_with(br#"{"type":"message","#);
            prop_assert!(!laid_out || at.holds(bytes, "a"), "{}", text);
            prop_assert!(!at.holds(bytes, "b"), "{}", text);
            let laid = LaidOut::proven(bytes, at);
            let proven = canonical_keyed_message_laid(&laid, strings, &MESSAGE_LINE_KEYS, "a");
            match canonical_keyed_message(bytes, &MESSAGE_LINE_KEYS, "a") {
                Some(whole) if at.holds(bytes, "a") => {
                    prop_assert_eq!(&proven, &Some(whole), "{}", text);
                }
                _ => if let Some((_, message)) = &proven {
                    prop_assert!(at.holds(bytes, "a") && is_js_canonical(message), "{}", text);
                },
            }
            // Another entry's id where the scan found this one's: not this entry's line.
            let other = canonical_keyed_message_laid(&laid, strings, &MESSAGE_LINE_KEYS, "b");
            prop_assert_eq!(other, None, "{}", text);
            // rho's listing reader, read from the message: what it reads of the whole line.
            let listed = listed_entry_with_message_keys_proven(bytes, at, "a", strings, &MESSAGE_LINE_KEYS);
            if at.holds(bytes, "a") {
                prop_assert_eq!(
                    listed,
                    listed_entry_with_message_keys_given(bytes, strings, &MESSAGE_LINE_KEYS),
                    "{}", text
                );
            } else {
                prop_assert_eq!(listed, None, "{}", text);
            }
            let other = listed_entry_with_message_keys_proven(bytes, at, "b", strings, &MESSAGE_LINE_KEYS);
            prop_assert_eq!(other, None, "{}", text);
        }
    }

    /// Whatever the scanner accepts, the parsed path prints byte for byte.
    #[test]
    fn accepted_bytes_are_what_the_parsed_path_prints(
        value in json_value(),
        (period, at, kind) in (1usize..40, 0usize..40, 1u8..8),
    ) {
        // One kind of spelling, every `period`-th choice.
        let mut noise = vec![0u8; period];
        noise[at % period] = kind;
        let text = noisy(&value, &noise);
        if is_js_canonical(text.as_bytes()) {
            prop_assert_eq!(printed(text.as_bytes()), Some(text.clone()));
        }
    }

    /// The members handed out on the canonical walk are those `for_each_member` finds in the
    /// object and in its member `m`, and the walk says what `is_js_canonical` says.
    #[test]
    fn members_are_handed_out_on_the_canonical_walk(
        value in json_value(),
        (period, at, kind) in (1usize..40, 0usize..40, 0u8..8),
    ) {
        let mut noise = vec![0u8; period];
        noise[at % period] = kind;
        let mut object = Map::new();
        object.insert("a".into(), value.clone());
        object.insert("m".into(), value);
        let text = noisy(&Value::Object(object), &noise);
        let bytes = text.as_bytes();
        let mut members = Vec::new();
        let canonical = canonical_members(bytes, "m", |of, key, value| {
            members.push((of, key.to_vec(), value.to_vec()));
        });
        prop_assert_eq!(canonical, is_js_canonical(bytes), "{}", text);
        if canonical {
            let mut expected = Vec::new();
            for_each_member(bytes, |key, value| {
                if key == b"m" {
                    for_each_member(value, |key, value| {
                        expected.push((MemberOf::Inner, key.to_vec(), value.to_vec()));
                    });
                }
                expected.push((MemberOf::Top, key.to_vec(), value.to_vec()));
            });
            prop_assert_eq!(members, expected, "{}", text);
        }
    }

    /// A line cut down to a few keys of the entry and of its message reads as its whole parse
    /// cut down, its message's bytes as that parse's message, however the line is spelled;
    /// spelled as `JSON.stringify` spells it (and without lone surrogates), it is read so, not
    /// left to the whole parse.
    #[test]
    fn a_line_cut_to_its_keys_reads_as_its_whole_parse_cut(
        content in json_value(),
        other in json_value(),
        (period, at, kind) in (1usize..40, 0usize..40, 0u8..8),
    ) {
        let (entry, text) = noisy_message_line(content, other, (period, at, kind));
        let Some(whole) = read(text.as_bytes()) else {
            return Ok(());
        };
        let cut = |value: &Value, keys: &[&str]| -> Value {
            let Some(map) = value.as_object() else {
                return value.clone();
            };
            Value::Object(map.iter().filter(|(k, _)| keys.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone())).collect())
        };
        let mut expected = cut(&whole, MESSAGE_LINE_KEYS.entry);
        expected["message"] = cut(&whole["message"], MESSAGE_LINE_KEYS.message);
        match entry_with_message_keys(text.as_bytes(), &MESSAGE_LINE_KEYS) {
            Some((shallow, message)) => {
                prop_assert_eq!(&shallow, &expected, "{}", text);
                let message = read(message);
                prop_assert_eq!(message.as_ref(), Some(&whole["message"]), "{}", text);
            }
            // Refused: a line spelled otherwise, or holding a lone surrogate (serde_json's
            // parse refuses it; the whole line is read as the store reads it).
            None => prop_assert!(
                noisy(&entry, &[]) != text
                    || serde_json::from_slice::<Value>(text.as_bytes()).is_err(),
                "refused: {}", text
            ),
        }
        // Read as its message's keys alone (the entry's type and id checked, not kept): the
        // same keys, the same message, for the same lines as the canonical cut but those
        // whose type or id is spelled with an escape (compared as written, so refused).
        let keyed = canonical_keyed_message(text.as_bytes(), &MESSAGE_LINE_KEYS, "a");
        let cut = canonical_entry_with_message_keys(text.as_bytes(), &MESSAGE_LINE_KEYS);
        prop_assert!(keyed.is_none() || cut.is_some(), "{}", text);
        prop_assert!(
            keyed.is_some()
                || cut.is_none()
                || !(text.contains(r#""type":"message""#) && text.contains(r#""id":"a""#)),
            "{}", text
        );
        if let Some((keyed, message)) = keyed {
            let members: Map<String, Value> =
                keyed.members().map(|(k, v)| (k.to_owned(), v.clone())).collect();
            prop_assert_eq!(&Value::Object(members), &expected["message"], "{}", text);
            let message = read(message);
            prop_assert_eq!(message.as_ref(), Some(&whole["message"]), "{}", text);
            prop_assert!(canonical_keyed_message(text.as_bytes(), &MESSAGE_LINE_KEYS, "b").is_none());
        }
    }

    /// The value walk and the serializer's walk print what serde_json's `Serializer` prints,
    /// byte for byte.
    #[test]
    fn the_value_walk_prints_as_serde_does(value in json_value()) {
        let reference = to_js_vec_through_serde_json(&value).unwrap();
        prop_assert_eq!(&value_to_js_vec(&value), &reference);
        prop_assert_eq!(&to_js_vec(&value).unwrap(), &reference);
    }

    /// A member's value is found whole however its strings are written: long runs of the
    /// escapes text is full of (skipped 32 bytes at a time), other escapes, escaped
    /// backslashes before a quote, text that is not ASCII.
    #[test]
    fn a_member_is_found_whole_past_strings_of_escapes(
        texts in proptest::collection::vec("[a \n\t\"\\\\/é😀\u{1}]{0,120}", 1..4),
    ) {
        let value = serde_json::json!({"a": [texts, {"k": "v"}], "b": 1});
        let line = serde_json::to_vec(&value).unwrap();
        let a = serde_json::to_vec(&value["a"]).unwrap();
        prop_assert_eq!(top_level_member(&line, "a"), Some(&a[..]));
        prop_assert_eq!(top_level_member(&line, "b"), Some(&b"1"[..]));
    }

    /// A buffer kept between values writes each as `to_js_vec` and `value_to_js_vec` do,
    /// whatever it held before.
    #[test]
    fn a_buffer_writes_each_value_as_to_js_vec_does(
        values in proptest::collection::vec(json_value(), 1..6),
    ) {
        let mut buffer = JsBuffer::default();
        for value in &values {
            let expected = to_js_vec(value).unwrap();
            prop_assert_eq!(buffer.write(value).unwrap(), &expected[..]);
            prop_assert_eq!(buffer.write_value(value), &expected[..]);
        }
    }

    /// A value written laid out is the compact text laid out (`JSON.stringify(value, null,
    /// 2)`), at any depth, from any buffer; a value the layout cannot be written on the way for
    /// holds an object with an integer-like key.
    #[test]
    fn a_buffer_lays_out_each_value_as_its_compact_text_is_laid_out(
        values in proptest::collection::vec(json_value(), 1..6),
        depth in 0usize..4,
    ) {
        let mut buffer = JsBuffer::default();
        for value in &values {
            let mut expected = Vec::new();
            write_laid_out(&to_js_vec(value).unwrap(), &mut expected, depth).unwrap();
            let pretty = buffer.write_pretty(value, depth).unwrap().map(<[u8]>::to_vec);
            let pretty_value = buffer.write_value_pretty(value, depth).map(<[u8]>::to_vec);
            prop_assert_eq!(&pretty, &pretty_value);
            match pretty {
                Some(pretty) => prop_assert_eq!(
                    String::from_utf8_lossy(&pretty),
                    String::from_utf8_lossy(&expected)
                ),
                None => prop_assert!(has_reordered_or_wide_object(value), "{}", value),
            }
            // The buffer writes compact text again after a layout.
            prop_assert_eq!(buffer.write(value).unwrap(), &to_js_vec(value).unwrap()[..]);
        }
    }

    /// `JSON.stringify`'s own spelling is accepted (but for integer-like keys and wide objects,
    /// which take the parsed path).
    #[test]
    fn json_stringify_spelling_is_accepted(value in json_value()) {
        let text = to_js_string(&value).unwrap();
        if !has_reordered_or_wide_object(&value) {
            prop_assert_eq!(noisy(&value, &[]), text.clone());
            prop_assert!(is_js_canonical(text.as_bytes()), "{}", text);
        }
    }
}

#[test]
fn noise_free_writing_is_json_stringify() {
    let mut map = Map::new();
    map.insert("a\n\"".into(), Value::from("😀\u{10F83D}/"));
    let value = Value::Object(map);
    assert_eq!(noisy(&value, &[]), to_js_string(&value).unwrap());
}

#[test]
fn a_buffer_drops_what_the_fast_walk_wrote_before_it_gave_up() {
    // Integer map keys are written by serde_json's `Serializer` after the walk has begun the
    // object: the buffer keeps none of the walk's bytes, nor of the value before.
    let mut buffer = JsBuffer::default();
    buffer
        .write(&serde_json::json!({"long": "x".repeat(100)}))
        .unwrap();
    let keyed: std::collections::BTreeMap<i32, &str> = [(2, "b"), (1, "a\n")].into();
    let expected = to_js_vec(&keyed).unwrap();
    assert_eq!(buffer.write(&keyed).unwrap(), &expected[..]);
    assert_eq!(expected, br#"{"1":"a\n","2":"b"}"#);
    // Laid out, the same: serde_json's `Serializer` takes it on from the value's start, at
    // the value's depth.
    let texts: std::collections::BTreeMap<&str, std::collections::BTreeMap<i32, &str>> =
        [("k", [(3, "c")].into())].into();
    let mut expected = Vec::new();
    write_laid_out(&to_js_vec(&texts).unwrap(), &mut expected, 2).unwrap();
    assert_eq!(buffer.write_pretty(&texts, 2).unwrap(), Some(&expected[..]));
    assert_eq!(
        String::from_utf8(expected).unwrap(),
        "{\n      \"k\": {\n        \"3\": \"c\"\n      }\n    }"
    );
    let mut expected = Vec::new();
    write_laid_out(&to_js_vec(&keyed).unwrap(), &mut expected, 1).unwrap();
    assert_eq!(buffer.write_pretty(&keyed, 1).unwrap(), Some(&expected[..]));
    // Out of `JSON.stringify`'s order: left to the compact text.
    let unordered = serde_json::json!({"b": 1, "1": 2});
    assert_eq!(buffer.write_pretty(&unordered, 1).unwrap(), None);
}
