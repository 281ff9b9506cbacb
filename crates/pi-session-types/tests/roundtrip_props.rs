//! proptest: arbitrary entries (known and unknown types, unknown fields, unicode, huge and tiny
//! numbers, fields of the wrong type) survive serialise -> parse -> serialise unchanged, and
//! keep their JSON value.

use pi_session_types::line::parse_object_line;
use pi_session_types::{json::to_js_string, parse_envelope, parse_line};
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// The typed entry types, and two that are not entries (the header's, rho's title line).
fn known_types() -> Vec<&'static str> {
    let mut types = pi_session_types::ENTRY_TYPES.to_vec();
    types.extend(["session", "title"]);
    types
}

/// Field names the typed model knows (so generated values hit typed fields, right or wrong).
const KNOWN_KEYS: &[&str] = &[
    "model",
    "role",
    "resolvedModelIsFallback",
    "provider",
    "modelId",
    "thinkingLevel",
    "configured",
    "summary",
    "firstKeptEntryId",
    "tokensBefore",
    "details",
    "fromHook",
    "fromId",
    "customType",
    "data",
    "content",
    "display",
    "targetId",
    "label",
    "name",
    "usage",
    "replacement",
    "purpose",
    "serviceTier",
    "archived",
    "title",
    "source",
    "injectedRules",
    "hash",
    "systemPrompt",
    "tools",
    "mode",
    "version",
    "cwd",
    "v",
    "pad",
    "updatedAt",
    "stopReason",
    "timestamp",
    "text",
];

const ROLES: &[&str] = &[
    "user",
    "developer",
    "system",
    "assistant",
    "toolResult",
    "bashExecution",
    "pythonExecution",
    "fileMention",
    "custom",
    "hookMessage",
    "branchSummary",
    "compactionSummary",
    "robot",
];

const BLOCK_TYPES: &[&str] = &[
    "text",
    "thinking",
    "image",
    "toolCall",
    "redactedThinking",
    "x",
];

pub(crate) fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-(1i64 << 53)..(1i64 << 53)).prop_map(|n| Value::Number(n.into())),
        any::<u64>().prop_map(|n| Value::Number(n.into())),
        any::<f64>()
            .prop_filter_map("finite", Number::from_f64)
            .prop_map(Value::Number),
        prop::sample::select(vec![
            0.0,
            -0.0,
            5e-324,
            1e-7,
            0.000001,
            1e21,
            1.7976931348623157e308,
            0.30000000000000004,
            123456789012345680000.0,
            -2.5e-300,
        ])
        .prop_filter_map("finite", Number::from_f64)
        .prop_map(Value::Number),
    ]
}

pub(crate) fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,8}",
        any::<String>(),
        "[\u{0}-\u{1f}\"\\\\/\u{7f}\u{2028}\u{2029}😀é]{0,6}",
        "(0|[1-9][0-9]{0,10})",
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![3 => text(), 2 => prop::sample::select(KNOWN_KEYS).prop_map(str::to_string)]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_value_of(number().boxed(), text().boxed(), key().boxed(), 3)
}

/// JSON values of these numbers, strings and keys, nested up to `depth` (also used by the
/// `canonical` tests).
pub(crate) fn json_value_of(
    number: BoxedStrategy<Value>,
    text: BoxedStrategy<String>,
    key: BoxedStrategy<String>,
    depth: u32,
) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number,
        text.prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, 8 * depth, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

fn block() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(BLOCK_TYPES),
        text(),
        prop::collection::vec((key(), json_value()), 0..3),
    )
        .prop_map(|(kind, body, extra)| {
            let mut map = Map::new();
            map.insert("type".into(), kind.into());
            match kind {
                "text" => drop(map.insert("text".into(), body.into())),
                "thinking" => drop(map.insert("thinking".into(), body.into())),
                "image" => {
                    map.insert("data".into(), body.into());
                    map.insert("mimeType".into(), "image/png".into());
                }
                "toolCall" => {
                    map.insert("id".into(), body.into());
                    map.insert("name".into(), "read".into());
                    map.insert("arguments".into(), serde_json::json!({"path": "a", "1": 2}));
                }
                _ => {}
            }
            map.extend(extra);
            Value::Object(map)
        })
}

fn message() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(ROLES),
        prop_oneof![
            text().prop_map(Value::String),
            prop::collection::vec(block(), 0..4).prop_map(Value::Array)
        ],
        number(),
        prop::collection::vec(block(), 0..3),
        prop::collection::vec((key(), json_value()), 0..4),
    )
        .prop_map(|(role, content, timestamp, images, extra)| {
            let mut map = Map::new();
            map.insert("role".into(), role.into());
            map.insert("content".into(), content);
            map.insert("timestamp".into(), timestamp);
            // Images are typed by move in the one pass too (see `Entry`'s typing).
            if role == "bashExecution" {
                map.insert("images".into(), Value::Array(images));
            }
            map.extend(extra);
            Value::Object(map)
        })
}

fn entry() -> impl Strategy<Value = Value> {
    (
        prop_oneof![4 => prop::sample::select(known_types()).prop_map(str::to_string), 1 => text()],
        prop::option::of(text()),
        prop_oneof![
            Just(None),
            Just(Some(Value::Null)),
            text().prop_map(|t| Some(Value::String(t)))
        ],
        prop::option::of(prop_oneof!["2026-0[1-9]-1[0-9]T0[0-9]:00:00.000Z", text()]),
        message(),
        prop::collection::vec((key(), json_value()), 0..6),
    )
        .prop_map(|(kind, id, parent, timestamp, message, extra)| {
            let mut map = Map::new();
            map.insert("type".into(), Value::String(kind.clone()));
            if let Some(id) = id {
                map.insert("id".into(), id.into());
            }
            if let Some(parent) = parent {
                map.insert("parentId".into(), parent);
            }
            if let Some(timestamp) = timestamp {
                map.insert("timestamp".into(), timestamp.into());
            }
            // The nested parts the one pass types by move: a message, content blocks, and a
            // message typed with fallbacks inside another entry.
            match kind.as_str() {
                "message" => drop(map.insert("message".into(), message)),
                "custom_message" => {
                    let content = message.get("content").cloned().unwrap_or(Value::Null);
                    map.insert("content".into(), content);
                }
                "compaction" => drop(map.insert("systemMessage".into(), message)),
                _ => {}
            }
            for (k, v) in extra {
                if k != "type" {
                    map.insert(k, v);
                }
            }
            Value::Object(map)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn entries_survive_write_parse_write(value in entry()) {
        let first = to_js_string(&value).unwrap();
        let parsed = parse_line(first.as_bytes()).unwrap();
        let second = to_js_string(&parsed.value).unwrap();
        // Same JSON value (the typed model may put known keys in its own order), read as
        // JavaScript reads it: a string of the generator may hold a code point of the carrier
        // range, which our `JSON.stringify` writes as the lone surrogate it carries.
        let a = Value::Object(parse_object_line(first.as_bytes()).unwrap().value);
        let b = Value::Object(parse_object_line(second.as_bytes()).unwrap().value);
        prop_assert_eq!(&a, &b, "value changed\n first {}\nsecond {}", first, second);
        // ... and from then on the bytes are stable.
        let third = to_js_string(&parse_line(second.as_bytes()).unwrap().value).unwrap();
        prop_assert_eq!(&second, &third);
        // The one-pass typing and the fallback-keeping typing agree.
        // (Headers and title-slot candidates are typed by parse_line itself, not by Entry.)
        if let (Some(entry), Value::Object(map)) = (parsed.value.as_entry(), a.clone())
            && !matches!(entry.kind(), "session" | "title")
        {
            prop_assert_eq!(&pi_session_types::Entry::from_map(map), entry);
        }
        // The fast path agrees with the typed view on the envelope.
        let envelope = parse_envelope(first.as_bytes()).unwrap();
        prop_assert_eq!(envelope.kind.as_str(), parsed.value.kind());
        if let Some(entry) = parsed.value.as_entry() {
            prop_assert_eq!(envelope.id.as_deref(), entry.id());
            prop_assert_eq!(envelope.parent_id.as_deref(), entry.parent_id());
            prop_assert_eq!(envelope.timestamp.as_deref(), entry.timestamp());
        }
    }
}
