//! JavaScript value semantics the TypeScript implementations rely on.
//!
//! pi and omp build their messages with template strings, `??`, truthiness and
//! `String.prototype.trim`. Reproducing their output byte for byte means
//! reproducing those rules on JSON values, and this module is the one place
//! they live. A missing key is `None` here (JavaScript's `undefined`).

use serde_json::{Map, Number, Value};

/// JavaScript truthiness of a JSON value (`None` is `undefined`).
pub(crate) fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_)) | Some(Value::Object(_)) => true,
    }
}

/// `value ?? fallback`: the value unless it is `undefined` or `null`.
pub(crate) fn nullish(value: Option<&Value>) -> bool {
    matches!(value, None | Some(Value::Null))
}

/// What a JavaScript template literal (`${value}`) prints for a JSON value.
pub(crate) fn template(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => number(n),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => template(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".to_owned(),
    }
}

/// `Number.prototype.toString()` of a JSON number.
pub(crate) fn number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64()
        && u <= (1u64 << 53)
    {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    ryu_js::Buffer::new().format(f).to_owned()
}

/// JavaScript's whitespace set (`\s`, `trim`): ECMAScript WhiteSpace and
/// LineTerminator. It differs from Rust's `char::is_whitespace` in two places:
/// U+FEFF is whitespace in JavaScript, U+0085 is not.
pub(crate) fn is_js_whitespace(c: char) -> bool {
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
pub(crate) fn trim(s: &str) -> &str {
    s.trim_matches(is_js_whitespace)
}

/// `String.prototype.trimEnd`.
pub(crate) fn trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_whitespace)
}

/// `String.prototype.trimStart`.
pub(crate) fn trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_whitespace)
}

/// The string at `key`, if the key holds a string.
pub(crate) fn str_at<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    object.get(key).and_then(Value::as_str)
}

/// A text block `{type:"text", text}` in pi's key order.
pub(crate) fn text_block(text: impl Into<String>) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), Value::String("text".into()));
    block.insert("text".into(), Value::String(text.into()));
    Value::Object(block)
}

/// Builds a JSON object from `(key, value)` pairs in order, leaving out the
/// pairs whose value is `None` (JavaScript's `undefined`, which
/// `JSON.stringify` omits).
pub(crate) fn object<const N: usize>(pairs: [(&str, Option<Value>); N]) -> Value {
    let mut map = Map::new();
    for (key, value) in pairs {
        if let Some(value) = value {
            map.insert(key.to_owned(), value);
        }
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn template_literals_match_javascript() {
        assert_eq!(template(None), "undefined");
        assert_eq!(template(Some(&json!(null))), "null");
        assert_eq!(template(Some(&json!(2))), "2");
        assert_eq!(template(Some(&json!(2.5))), "2.5");
        assert_eq!(template(Some(&json!(1e21))), "1e+21");
        assert_eq!(template(Some(&json!([1, null, "a"]))), "1,,a");
        assert_eq!(template(Some(&json!({"a": 1}))), "[object Object]");
    }

    #[test]
    fn truthiness_matches_javascript() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&json!(0))));
        assert!(!truthy(Some(&json!(""))));
        assert!(truthy(Some(&json!([]))));
        assert!(truthy(Some(&json!("0"))));
    }

    #[test]
    fn whitespace_set_is_javascripts() {
        assert_eq!(trim("\u{feff} a \u{85}"), "a \u{85}");
    }
}
