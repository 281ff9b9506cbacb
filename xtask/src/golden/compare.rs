//! Comparing our JSON with what the real implementations recorded.
//!
//! - [`parse_recording`] reads an `expected.json` (written by `JSON.stringify`) the way our store
//!   reads session lines: lone UTF-16 surrogate escapes carried as U+10F800+k, nothing lost.
//! - [`diff`] compares two values the way JavaScript sees parsed JSON (numbers by value, object
//!   keys in any order) and returns the first differences, each with its path.
//! - [`IdMap`] lets ids that the real code generates at random (v1 files get fresh entry ids on
//!   every load) be compared by structure: each recorded id must stand for one and the same id
//!   of ours everywhere in a scenario, and no two recorded ids may stand for the same one.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;

/// How many differences one check reports (the rest are counted, not shown).
pub const SHOWN_DIFFERENCES: usize = 4;
/// How many characters of a value a difference shows.
const SHOWN_VALUE_CHARS: usize = 160;

/// Parses a recording written by `JSON.stringify` (lone UTF-16 surrogate escapes carried as
/// U+10F800+k, as our store reads them in session lines, and written back as the same escapes):
/// the one rule in `pi-session-test-support`, shared with every crate's tests.
pub use pi_session_test_support::parse_js_json as parse_recording;

/// Recorded ids that stand for ids we generate ourselves, and what each was matched with.
#[derive(Debug, Default)]
pub struct IdMap {
    generated: HashSet<String>,
    to_ours: HashMap<String, String>,
    to_theirs: HashMap<String, String>,
}

impl IdMap {
    /// A map where no id is generated: every string compares exactly.
    pub fn exact() -> Self {
        Self::default()
    }

    /// A map where each of `generated` (ids the real code minted at random) matches whichever id
    /// of ours is in the same place, consistently across every check that shares the map.
    pub fn structural(generated: impl IntoIterator<Item = String>) -> Self {
        Self {
            generated: generated.into_iter().collect(),
            ..Self::default()
        }
    }

    /// The id of ours a generated recorded id was matched with so far.
    pub fn ours_for(&self, theirs: &str) -> Option<&str> {
        self.to_ours.get(theirs).map(String::as_str)
    }

    /// Whether the recorded string `theirs` in this place matches our `ours`.
    fn matches(&mut self, theirs: &str, ours: &str) -> bool {
        if !self.generated.contains(theirs) {
            return theirs == ours;
        }
        match (self.to_ours.get(theirs), self.to_theirs.get(ours)) {
            (Some(mapped), _) => mapped == ours,
            (None, Some(_)) => false, // `ours` already stands for another recorded id
            (None, None) => {
                self.to_ours.insert(theirs.to_owned(), ours.to_owned());
                self.to_theirs.insert(ours.to_owned(), theirs.to_owned());
                true
            }
        }
    }
}

/// One place where the recording and our value differ.
#[derive(Debug, Clone)]
pub struct Difference {
    /// Where, as `$.messages[3].content[0].text`.
    pub path: String,
    /// The recorded value (`None`: the recording has nothing there).
    pub expected: Option<Value>,
    /// Our value (`None`: we have nothing there).
    pub actual: Option<Value>,
}

/// The differences between a recorded value and ours (empty when they are equal), at most
/// [`SHOWN_DIFFERENCES`] of them plus a count of the rest.
#[derive(Debug, Default)]
pub struct Diff {
    /// The first differences, in document order.
    pub shown: Vec<Difference>,
    /// How many more there were.
    pub more: usize,
}

impl Diff {
    /// No difference found.
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    fn push(&mut self, path: &str, expected: Option<&Value>, actual: Option<&Value>) {
        if self.shown.len() < SHOWN_DIFFERENCES {
            self.shown.push(Difference {
                path: path.to_owned(),
                expected: expected.cloned(),
                actual: actual.cloned(),
            });
        } else {
            self.more += 1;
        }
    }

    /// The differences for a person: one block per difference.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for difference in &self.shown {
            let _ = writeln!(out, "      at {}", difference.path);
            let _ = writeln!(
                out,
                "        expected: {}",
                show(difference.expected.as_ref())
            );
            let _ = writeln!(
                out,
                "        actual:   {}",
                show(difference.actual.as_ref())
            );
        }
        if self.more > 0 {
            let _ = writeln!(out, "      … and {} more difference(s)", self.more);
        }
        out
    }
}

fn show(value: Option<&Value>) -> String {
    let Some(value) = value else {
        return "(absent)".to_owned();
    };
    let text = value.to_string();
    if text.chars().count() <= SHOWN_VALUE_CHARS {
        return text;
    }
    let cut: String = text.chars().take(SHOWN_VALUE_CHARS).collect();
    format!("{cut}… ({} chars)", text.chars().count())
}

/// Compares `expected` (recorded) with `actual` (ours).
pub fn diff(expected: &Value, actual: &Value, ids: &mut IdMap) -> Diff {
    let mut out = Diff::default();
    walk("$", expected, actual, ids, &mut out);
    out
}

fn walk(path: &str, expected: &Value, actual: &Value, ids: &mut IdMap, out: &mut Diff) {
    match (expected, actual) {
        (Value::Number(x), Value::Number(y)) => {
            // JavaScript has one number type: 1 and 1.0 are the same value.
            if x.as_f64() != y.as_f64() {
                out.push(path, Some(expected), Some(actual));
            }
        }
        (Value::String(x), Value::String(y)) => {
            if !ids.matches(x, y) {
                out.push(path, Some(expected), Some(actual));
            }
        }
        (Value::Array(xs), Value::Array(ys)) => {
            if xs.len() != ys.len() {
                out.push(
                    &format!("{path}.length"),
                    Some(&xs.len().into()),
                    Some(&ys.len().into()),
                );
            }
            for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                walk(&format!("{path}[{i}]"), x, y, ids, out);
            }
            for (i, x) in xs.iter().enumerate().skip(ys.len()) {
                out.push(&format!("{path}[{i}]"), Some(x), None);
            }
            for (i, y) in ys.iter().enumerate().skip(xs.len()) {
                out.push(&format!("{path}[{i}]"), None, Some(y));
            }
        }
        (Value::Object(xs), Value::Object(ys)) => {
            for (key, x) in xs {
                let at = member_path(path, key);
                match ys.get(key) {
                    Some(y) => walk(&at, x, y, ids, out),
                    None => out.push(&at, Some(x), None),
                }
            }
            for (key, y) in ys {
                if !xs.contains_key(key) {
                    out.push(&member_path(path, key), None, Some(y));
                }
            }
        }
        _ => {
            if expected != actual {
                out.push(path, Some(expected), Some(actual));
            }
        }
    }
}

fn member_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::from(key))
    }
}

/// JSON with object keys sorted by code point, numbers and strings written as `JSON.stringify`
/// writes them: the text whose SHA-256 the foreign recorder stores instead of a context taken from
/// a real transcript (`xtask/recorder/src/foreign.mjs`, `canonical`).
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|key| {
                    let name = pi_session_types::to_js_string(key).unwrap_or_default();
                    format!("{name}:{}", canonical_json(&map[key]))
                })
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        other => pi_session_types::to_js_string(other).unwrap_or_default(),
    }
}

/// Lowercase hex SHA-256 of `text`.
pub fn sha256_hex(text: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_key_order_is_ignored() {
        let mut ids = IdMap::exact();
        assert!(
            diff(
                &json!({"a": 1, "b": [2.0]}),
                &json!({"b": [2], "a": 1.0}),
                &mut ids
            )
            .is_empty()
        );
    }

    #[test]
    fn differences_name_their_path() {
        let mut ids = IdMap::exact();
        let found = diff(
            &json!({"m": [{"t": "a"}, 1], "odd key": 1}),
            &json!({"m": [{"t": "b"}], "x": 2}),
            &mut ids,
        );
        let paths: Vec<&str> = found.shown.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(
            paths,
            ["$.m.length", "$.m[0].t", "$.m[1]", "$[\"odd key\"]"]
        );
        assert_eq!(
            found.more, 1,
            "the fifth difference ($.x) is counted, not shown"
        );
        assert!(found.render().contains("expected: \"a\""));
    }

    #[test]
    fn generated_ids_must_map_one_to_one() {
        let mut ids = IdMap::structural(["r1".to_owned(), "r2".to_owned()]);
        assert!(
            diff(
                &json!(["r1", "r2", "r1"]),
                &json!(["o1", "o2", "o1"]),
                &mut ids
            )
            .is_empty()
        );
        assert!(
            !diff(&json!(["r1"]), &json!(["o2"]), &mut ids).is_empty(),
            "r1 already stands for o1"
        );
        let mut fresh = IdMap::structural(["r1".to_owned(), "r2".to_owned()]);
        assert!(
            !diff(&json!(["r1", "r2"]), &json!(["o1", "o1"]), &mut fresh).is_empty(),
            "o1 cannot stand for both"
        );
        assert!(
            !diff(&json!(["keep"]), &json!(["other"]), &mut fresh).is_empty(),
            "other strings compare exactly"
        );
    }
}
