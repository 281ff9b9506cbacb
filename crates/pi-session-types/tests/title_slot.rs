//! omp's fixed-width title slot: writing (256 bytes, greedy code-point cut), validation, and
//! `clean_title`.
//!
//! `data/omp_title_slots.jsonl` holds `[name, title, source, expected line]` rows produced once
//! by running omp 18.2.3's own `serializeTitleSlot` under bun (updatedAt
//! `2026-01-15T09:00:00.000Z`).

use crate::common::{corpus_dir, lines};
use pi_session_types::header::{TITLE_SLOT_BYTES, clean_title};
use pi_session_types::{JsonMap, ParsedLine, TitleSlot, TitleSlotError, TitleSource, parse_line};
use serde_json::Value;

const UPDATED_AT: &str = "2026-01-15T09:00:00.000Z";

fn source_of(value: &Value) -> Option<TitleSource> {
    match value.as_str() {
        Some("user") => Some(TitleSource::User),
        Some("auto") => Some(TitleSource::Auto),
        _ => None,
    }
}

#[test]
fn serialize_fixed_matches_omp_byte_for_byte() {
    let table = include_str!("data/omp_title_slots.jsonl");
    let mut checked = 0;
    for row in table.lines() {
        let row: Vec<Value> = serde_json::from_str(row).unwrap();
        let (name, title, source, expected) = (&row[0], &row[1], &row[2], &row[3]);
        let line =
            TitleSlot::serialize_fixed(title.as_str().unwrap_or(""), source_of(source), UPDATED_AT)
                .unwrap();
        assert_eq!(line, expected.as_str().unwrap(), "case {name}");
        assert_eq!(line.len(), TITLE_SLOT_BYTES, "case {name}");
        // What is written reads back as a valid slot with the (possibly cut) title.
        let parsed = parse_line(line.as_bytes()).unwrap();
        let ParsedLine::TitleSlot(slot) = parsed.value else {
            panic!("{name}")
        };
        assert!(
            title.as_str().unwrap_or("").starts_with(&slot.title),
            "{name}"
        );
        checked += 1;
    }
    assert_eq!(checked, 7);
}

#[test]
fn real_omp_slot_is_reproduced() {
    let Some(dir) = corpus_dir() else { return };
    let mut seen = 0;
    for path in crate::common::jsonl_files(&dir) {
        let bytes = std::fs::read(&path).unwrap();
        let Some(first) = lines(&bytes).first().copied() else {
            continue;
        };
        let Ok(parsed) = parse_line(first) else {
            continue;
        };
        let ParsedLine::TitleSlot(slot) = parsed.value else {
            continue;
        };
        let line = TitleSlot::serialize_fixed(&slot.title, slot.source, &slot.updated_at).unwrap();
        assert_eq!(
            line.as_bytes(),
            &bytes[..TITLE_SLOT_BYTES],
            "{}",
            path.display()
        );
        seen += 1;
    }
    assert!(
        seen >= 1,
        "the corpus holds at least one omp file with a slot"
    );
}

#[test]
fn too_long_updated_at_is_an_error() {
    let err = TitleSlot::serialize_fixed("t", None, &"9".repeat(200)).unwrap_err();
    assert!(
        matches!(err, TitleSlotError::MetadataExceedsSlot { needed } if needed > TITLE_SLOT_BYTES)
    );
    assert!(err.to_string().contains("exceeds"));
}

#[test]
fn slot_validation_follows_omp() {
    let ok = r#"{"type":"title","v":1,"title":"t","updatedAt":"u","pad":""}"#;
    let cases = [
        (ok, true),
        (
            r#"{"type":"title","v":1.0,"title":"t","updatedAt":"u","pad":"  "}"#,
            true,
        ),
        (
            r#"{"type":"title","v":1,"title":"t","source":"auto","updatedAt":"u","pad":""}"#,
            true,
        ),
        (
            r#"{"type":"title","v":1,"title":"t","updatedAt":"u","pad":"","more":1}"#,
            true,
        ),
        (
            r#"{"type":"title","v":2,"title":"t","updatedAt":"u","pad":""}"#,
            false,
        ),
        (
            r#"{"type":"title","v":"1","title":"t","updatedAt":"u","pad":""}"#,
            false,
        ),
        (
            r#"{"type":"title","v":1,"title":3,"updatedAt":"u","pad":""}"#,
            false,
        ),
        (r#"{"type":"title","v":1,"title":"t","pad":""}"#, false),
        (
            r#"{"type":"title","v":1,"title":"t","updatedAt":"u"}"#,
            false,
        ),
        (
            r#"{"type":"title","v":1,"title":"t","source":"bot","updatedAt":"u","pad":""}"#,
            false,
        ),
        (
            r#"{"type":"title","v":1,"title":"t","source":null,"updatedAt":"u","pad":""}"#,
            false,
        ),
        (
            r#"{"type":"session","v":1,"title":"t","updatedAt":"u","pad":""}"#,
            false,
        ),
    ];
    for (line, valid) in cases {
        let map: JsonMap = serde_json::from_str(line).unwrap();
        assert_eq!(TitleSlot::is_valid_slot(&map), valid, "{line}");
        let parsed = parse_line(line.as_bytes()).unwrap();
        assert_eq!(
            matches!(parsed.value, ParsedLine::TitleSlot(_)),
            valid,
            "{line}"
        );
        // Either way nothing is lost: the typed write equals JavaScript's write of the line
        // (`1.0` is the number 1 in JavaScript, so both write `1`).
        let original: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            pi_session_types::to_js_string(&parsed.value).unwrap(),
            pi_session_types::to_js_string(&original).unwrap(),
            "{line}"
        );
    }
}

#[test]
fn clean_title_like_omp() {
    let cases = [
        ("  Fix   the\tbuild\n", Some("Fix the build")),
        ("a\u{7f}\u{85}\u{9f}b", Some("a b")),
        (
            "\u{a0} nbsp kept inside\u{a0}x \u{3000}",
            Some("nbsp kept inside\u{a0}x"),
        ),
        ("\u{0}\u{1}\u{1f}", None),
        ("", None),
        ("😀  ok", Some("😀 ok")),
    ];
    for (raw, expected) in cases {
        assert_eq!(clean_title(raw).as_deref(), expected, "{raw:?}");
    }
}
