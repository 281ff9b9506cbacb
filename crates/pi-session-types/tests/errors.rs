//! Lines that are not session lines give a typed error that says which, never a panic; lines
//! JavaScript accepts but serde_json does not (lone surrogates, invalid UTF-8) are read.

use pi_session_types::{
    AgentMessage, Content, Entry, LineError, ParseWarning, ParsedLine, parse_envelope, parse_line,
};
use proptest::prelude::*;

fn error_of(line: &[u8]) -> LineError {
    let full = parse_line(line).expect_err("line must be rejected");
    let fast = parse_envelope(line).expect_err("envelope must reject too");
    match (&full, &fast) {
        (LineError::NotJson { .. }, LineError::NotJson { .. }) => {}
        _ => assert_eq!(
            full,
            fast,
            "both parsers classify {:?} alike",
            String::from_utf8_lossy(line)
        ),
    }
    full
}

#[test]
fn each_kind_of_bad_line_is_named() {
    let table: &[(&[u8], LineError)] = &[
        (b"", LineError::Blank),
        (b"   \r\n", LineError::Blank),
        (b"[1,2]", LineError::NotAnObject { found: "array" }),
        (b"\"text\"", LineError::NotAnObject { found: "string" }),
        (b"42", LineError::NotAnObject { found: "number" }),
        (b"-1.5e3\n", LineError::NotAnObject { found: "number" }),
        (b"true", LineError::NotAnObject { found: "boolean" }),
        (b"null", LineError::NotAnObject { found: "null" }),
        (br#"{"id":"x"}"#, LineError::MissingType),
        (br#"{}"#, LineError::MissingType),
        (
            br#"{"type":1}"#,
            LineError::TypeNotString { found: "number" },
        ),
        (
            br#"{"type":null}"#,
            LineError::TypeNotString { found: "null" },
        ),
        (
            br#"{"type":["message"]}"#,
            LineError::TypeNotString { found: "array" },
        ),
        (
            br#"{"type":{"a":1}}"#,
            LineError::TypeNotString { found: "object" },
        ),
        (
            br#"{"type":true}"#,
            LineError::TypeNotString { found: "boolean" },
        ),
    ];
    for (line, expected) in table {
        assert_eq!(
            &error_of(line),
            expected,
            "line {:?}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn not_json_says_where() {
    for line in [
        &b"this is not json"[..],
        br#"{"type":"message","id":"a""#,
        br#"{"type":"message"} trailing"#,
        br#"{"type":"message","x":"bad \q escape"}"#,
        br#"{"type":"message",}"#,
        b"{\"type\":\"message\",\"x\":\"raw\ncontrol\"}",
        b"{\"type\":\"m\"}\x00",
    ] {
        match error_of(line) {
            LineError::NotJson { message, column } => {
                assert!(!message.is_empty());
                assert!(column > 0, "column for {:?}", String::from_utf8_lossy(line));
                let text = LineError::NotJson { message, column }.to_string();
                assert!(text.contains("not valid JSON"), "{text}");
            }
            other => panic!(
                "expected NotJson for {:?}, got {other:?}",
                String::from_utf8_lossy(line)
            ),
        }
    }
}

#[test]
fn error_messages_say_what_and_what_to_do() {
    assert_eq!(
        LineError::MissingType.to_string(),
        "line is a JSON object without a \"type\" key; every session line needs a string type"
    );
    assert_eq!(
        LineError::NotAnObject { found: "array" }.to_string(),
        "line is JSON array, not an object; every session line must be a JSON object"
    );
}

#[test]
fn lone_surrogate_line_is_read_with_carriers_and_written_back() {
    let line = br#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"half \ud83d emoji \ude00 and whole \ud83d\ude00"}],"timestamp":1}}"#;
    let parsed = parse_line(line).unwrap();
    assert_eq!(
        parsed.warnings,
        vec![ParseWarning::LoneSurrogateReplaced { count: 2 }]
    );
    let ParsedLine::Entry(Entry::Message(entry)) = &parsed.value else {
        panic!("{parsed:?}")
    };
    let AgentMessage::User(user) = &entry.message else {
        panic!()
    };
    assert_eq!(
        user.content.joined_text(""),
        "half \u{10F83D} emoji \u{10FE00} and whole 😀"
    );
    // Written back as JavaScript wrote it: the lone escapes as they were, the pair raw.
    let written = pi_session_types::to_js_string(&parsed.value).unwrap();
    assert!(
        written.contains(r#""half \ud83d emoji \ude00 and whole 😀""#),
        "{written}"
    );
    assert!(matches!(user.content, Content::Blocks(_)));
    let envelope = parse_envelope(line).unwrap();
    assert_eq!(envelope.id.as_deref(), Some("a1"));
    // The fast path skips the message without checking surrogate pairing: no repair needed.
    assert!(envelope.warnings.is_empty());
}

#[test]
fn lone_surrogate_in_a_key_and_in_the_envelope_is_read() {
    let line = br#"{"type":"custom","customType":"x\udc00","data":{"k\ud800":1},"id":"\ud83d","parentId":null,"timestamp":"t"}"#;
    let parsed = parse_line(line).unwrap();
    let Some(Entry::Custom(custom)) = parsed.value.as_entry() else {
        panic!()
    };
    assert_eq!(custom.custom_type.as_deref(), Some("x\u{10FC00}"));
    assert_eq!(custom.data, Some(serde_json::json!({"k\u{10F800}": 1})));
    assert_eq!(
        pi_session_types::to_js_string(&parsed.value)
            .unwrap()
            .as_bytes(),
        &line[..]
    );
    let envelope = parse_envelope(line).unwrap();
    assert_eq!(envelope.id.as_deref(), Some("\u{10F83D}"));
    assert_eq!(
        envelope.warnings,
        vec![ParseWarning::LoneSurrogateReplaced { count: 3 }]
    );
    // The borrowing form does not repair: the `id` itself is unreadable for serde_json.
    assert!(matches!(
        pi_session_types::line::parse_envelope_ref(line),
        Err(LineError::NotJson { .. })
    ));
}

#[test]
fn invalid_utf8_is_replaced_with_a_warning() {
    let line = b"{\"type\":\"label\",\"id\":\"x\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"targetId\":\"t\",\"label\":\"a\xffb\"}";
    let parsed = parse_line(line).unwrap();
    assert_eq!(parsed.warnings, vec![ParseWarning::InvalidUtf8Replaced]);
    let Some(Entry::Label(label)) = parsed.value.as_entry() else {
        panic!()
    };
    assert_eq!(label.label.as_deref(), Some("a\u{fffd}b"));
    // Only the envelope fields are decoded by the fast path; the bad byte is in `label`.
    assert!(parse_envelope(line).unwrap().warnings.is_empty());
    let in_id = b"{\"type\":\"label\",\"id\":\"a\xffb\"}";
    let envelope = parse_envelope(in_id).unwrap();
    assert_eq!(envelope.id.as_deref(), Some("a\u{fffd}b"));
    assert_eq!(envelope.warnings, vec![ParseWarning::InvalidUtf8Replaced]);
}

#[test]
fn duplicate_keys_take_the_last_value_like_javascript() {
    let line = br#"{"type":"label","id":"first","id":"second","parentId":null,"timestamp":"t","targetId":"x"}"#;
    assert_eq!(parse_envelope(line).unwrap().id.as_deref(), Some("second"));
    assert_eq!(
        parse_line(line).unwrap().value.as_entry().unwrap().id(),
        Some("second")
    );
}

#[test]
fn known_type_with_wrong_field_types_keeps_its_json_and_warns() {
    let line = br#"{"type":"label","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":7}"#;
    let parsed = parse_line(line).unwrap();
    let Some(Entry::Unknown(unknown)) = parsed.value.as_entry() else {
        panic!("{parsed:?}")
    };
    assert!(unknown.reason.as_deref().unwrap().contains("invalid type"));
    assert!(
        matches!(&parsed.warnings[..], [ParseWarning::Untyped { reason }] if reason.contains("\"label\""))
    );
    assert_eq!(
        pi_session_types::to_js_string(&parsed.value)
            .unwrap()
            .as_bytes(),
        &line[..]
    );
}

#[test]
fn invalid_timestamp_is_kept_and_reported() {
    let line =
        br#"{"type":"label","id":"a","parentId":null,"timestamp":"yesterday","targetId":"b"}"#;
    let parsed = parse_line(line).unwrap();
    assert_eq!(
        parsed.warnings,
        vec![ParseWarning::InvalidTimestamp {
            value: "yesterday".into()
        }]
    );
    assert_eq!(
        parsed.value.as_entry().unwrap().timestamp(),
        Some("yesterday")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let full = parse_line(&bytes);
        let fast = parse_envelope(&bytes);
        prop_assert_eq!(full.is_ok(), fast.is_ok());
    }

    #[test]
    fn json_like_text_never_panics(text in r#"[{}\[\]":,0-9a-z\\ \-\.eEtrunlfsp]{0,80}"#) {
        let full = parse_line(text.as_bytes());
        let fast = parse_envelope(text.as_bytes());
        prop_assert_eq!(full.is_ok(), fast.is_ok(), "{:?}", text);
    }

    #[test]
    fn surrogate_escapes_never_panic(units in proptest::collection::vec(0xd7f0u16..0xe010, 0..6), tail in "[a-z\\\\u0-9]{0,6}") {
        let escapes: String = units.iter().map(|u| format!("\\u{u:04x}")).collect();
        let line = format!(r#"{{"type":"custom","x":"{escapes}{tail}"}}"#);
        let full = parse_line(line.as_bytes());
        let fast = parse_envelope(line.as_bytes());
        prop_assert_eq!(full.is_ok(), fast.is_ok(), "{}", line);
    }
}

#[test]
fn header_with_string_id_but_odd_fields_is_still_a_header() {
    let line = br#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":7}"#;
    let parsed = parse_line(line).unwrap();
    let ParsedLine::Header(header) = &parsed.value else {
        panic!("{parsed:?}")
    };
    assert_eq!(header.id, "s1");
    assert_eq!(header.extra.get("cwd"), Some(&serde_json::json!(7)));
    assert!(matches!(
        &parsed.warnings[..],
        [ParseWarning::Untyped { .. }]
    ));
    let again: serde_json::Value =
        serde_json::from_str(&pi_session_types::to_js_string(&parsed.value).unwrap()).unwrap();
    assert_eq!(
        again,
        serde_json::from_slice::<serde_json::Value>(line).unwrap()
    );
    // Without a string id it is not a header at all.
    let parsed = parse_line(br#"{"type":"session","id":42}"#).unwrap();
    assert!(matches!(parsed.value, ParsedLine::Entry(Entry::Unknown(_))));
}
