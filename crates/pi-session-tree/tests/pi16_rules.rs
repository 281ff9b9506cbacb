//! pi 1.6 ([`Dialect::PI16`]): detection, and the 1.6 context rules that the
//! differential data (`differential.rs`) cannot show on their own.

use pi_session_tree::{Dialect, SessionView, detect_dialect};
use serde_json::json;

use crate::common::{entry, leaf, user};

#[test]
fn dialect_names_round_trip() {
    for dialect in [Dialect::PI, Dialect::PI16, Dialect::OMP] {
        assert_eq!(Dialect::parse(dialect.as_str()), Some(dialect));
        assert_eq!(
            serde_json::to_value(dialect).unwrap(),
            json!(dialect.as_str())
        );
    }
    assert_eq!(Dialect::parse("pi1.6"), None);
    assert!(Dialect::PI16.is_pi_family() && Dialect::PI.is_pi_family());
    assert!(!Dialect::OMP.is_pi_family());
}

#[test]
fn pi16_is_detected_from_1_6_only_entries_and_system_sections() {
    let usage = entry(
        "usage",
        "u",
        None,
        json!({"kind":"cache_warm","provider":"p","model":"m","usage":{"input":1}}),
    );
    let edit = entry(
        "context_edit",
        "e",
        None,
        json!({"targetId":"x","replacement":null}),
    );
    let system_with_sections = entry(
        "message",
        "s",
        None,
        json!({"message":{"role":"system","content":"p","sections":{"a":"b"},"timestamp":1}}),
    );
    let plain_system = entry(
        "message",
        "s",
        None,
        json!({"message":{"role":"system","content":"p","timestamp":1}}),
    );
    assert_eq!(detect_dialect(false, None, [&usage]), Dialect::PI16);
    assert_eq!(detect_dialect(false, None, [&edit]), Dialect::PI16);
    assert_eq!(
        detect_dialect(false, None, [&system_with_sections]),
        Dialect::PI16
    );
    assert_eq!(detect_dialect(false, None, [&plain_system]), Dialect::PI);
    // omp evidence outranks 1.6 evidence.
    assert_eq!(detect_dialect(true, None, [&usage]), Dialect::OMP);
    // The session view reads the first message bodies for system sections.
    let entries = vec![
        user("1", None, "x"),
        json!({"type":"message","id":"2","parentId":"1","timestamp":"2026-01-01T00:00:00.000Z",
               "message":{"role":"system","content":"p","sections":{"a":null},"timestamp":1}}),
    ];
    assert_eq!(
        SessionView::new(entries.as_slice())
            .detect_dialect()
            .unwrap(),
        Dialect::PI16
    );
    let entries = vec![user("1", None, "x"), edit];
    assert_eq!(
        SessionView::new(entries.as_slice())
            .detect_dialect()
            .unwrap(),
        Dialect::PI16
    );
}

#[test]
fn pi_073_ignores_what_pi16_applies() {
    let entries = vec![
        json!({"type":"message","id":"1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",
               "message":{"role":"user","content":null,"timestamp":1}}),
        entry(
            "context_edit",
            "2",
            Some("1"),
            json!({"targetId":"1","replacement":{"content":"edited"}}),
        ),
    ];
    let view = SessionView::new(entries.as_slice());
    let options = Default::default();
    let pi16 = view.context(&leaf("2"), Dialect::PI16, &options).unwrap();
    let pi073 = view.context(&leaf("2"), Dialect::PI, &options).unwrap();
    assert_eq!(pi16.context.messages()[0]["content"], "edited");
    assert_eq!(pi073.context.messages()[0]["content"], json!(null));
}
