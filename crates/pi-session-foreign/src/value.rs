//! JavaScript's view of the JSON values omp's importers look at (`isRecord`, `typeof x ===
//! "string"`, `Number.isFinite`), in one place.

use pi_session_types::JsonMap;
use serde_json::{Number, Value};

/// `isRecord(value)`: a non-null, non-array object.
pub(crate) fn record(value: Option<&Value>) -> Option<&JsonMap> {
    value.and_then(Value::as_object)
}

/// `typeof map[key] === "string" ? map[key] : undefined`.
pub(crate) fn string<'a>(map: &'a JsonMap, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// A string that is not empty (Claude's `stringField`).
pub(crate) fn non_empty<'a>(map: &'a JsonMap, key: &str) -> Option<&'a str> {
    string(map, key).filter(|s| !s.is_empty())
}

/// `typeof v === "number" && Number.isFinite(v)` (JSON numbers always are).
pub(crate) fn number(value: Option<&Value>) -> Option<&Number> {
    match value {
        Some(Value::Number(n)) => Some(n),
        _ => None,
    }
}

/// A JSON number for an `f64` computed the JavaScript way (`-0` and integral values print as
/// JavaScript prints them through the `JSON.stringify` writer).
pub(crate) fn f64_value(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// An object from key/value pairs, keys in the given order, `None` values left out (as
/// `JSON.stringify` drops `undefined`).
pub(crate) fn object<const N: usize>(pairs: [(&str, Option<Value>); N]) -> JsonMap {
    let mut map = JsonMap::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    map
}

/// `{ type: "text", text }`.
pub(crate) fn text_block(text: &str) -> Value {
    Value::Object(object([
        ("type", Some("text".into())),
        ("text", Some(text.into())),
    ]))
}

/// The usage of an imported message with no usage: every count and cost 0.
pub(crate) fn usage(
    input: Value,
    output: Value,
    cache_read: Value,
    cache_write: Value,
    total: Value,
) -> Value {
    let zero = || Some(Value::from(0));
    Value::Object(object([
        ("input", Some(input)),
        ("output", Some(output)),
        ("cacheRead", Some(cache_read)),
        ("cacheWrite", Some(cache_write)),
        ("totalTokens", Some(total)),
        (
            "cost",
            Some(Value::Object(object([
                ("input", zero()),
                ("output", zero()),
                ("cacheRead", zero()),
                ("cacheWrite", zero()),
                ("total", zero()),
            ]))),
        ),
    ]))
}

/// `EMPTY_USAGE`.
pub(crate) fn empty_usage() -> Value {
    let zero = || Value::from(0);
    usage(zero(), zero(), zero(), zero(), zero())
}

/// `{type, id, parentId, timestamp, <key>: <value>}`: an entry in the key order omp's importers
/// write (`parentId: null` for a root).
pub(crate) fn entry(
    kind: &str,
    id: &str,
    parent: Option<&str>,
    timestamp: &str,
    (key, value): (&str, Value),
) -> JsonMap {
    object([
        ("type", Some(kind.into())),
        ("id", Some(id.into())),
        ("parentId", Some(parent.map_or(Value::Null, Value::from))),
        ("timestamp", Some(timestamp.into())),
        (key, Some(value)),
    ])
}
