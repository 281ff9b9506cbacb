//! Stamps change nothing pi and omp send: for every file of ours carrying resolution stamps
//! (`custom` entries of type [`RESOLUTION_CUSTOM_TYPE`]), a stamp-free copy is committed beside
//! it (`<name>-unstamped.jsonl`, written by `--write-ours`), and the real implementations'
//! recordings of both must give the same contexts.
//!
//! - `unstamped bytes`: the committed copy is exactly [`strip_stamps`] of the stamped file.
//! - `unstamped <impl>`: for each implementation that recorded both, every recorded context
//!   (the default leaf's, each tip's) has the same `agent` and `llm` answers in both files. A
//!   leaf that is a stamp is compared with the copy's context at its nearest ancestor that is
//!   not (where the copy's tip is).

use std::collections::HashMap;
use std::path::Path;

use pi_session::manage::RESOLUTION_CUSTOM_TYPE;
use serde_json::Value;

use super::report::{Outcome, Report, Row};

/// The name of the stamp-free copy of scenario `name`.
pub fn copy_name(name: &str) -> String {
    format!("{name}-unstamped")
}

/// Whether `id`'s line is a resolution stamp.
fn is_stamp(entry: &Value) -> bool {
    entry.get("type").and_then(Value::as_str) == Some("custom")
        && entry.get("customType").and_then(Value::as_str) == Some(RESOLUTION_CUSTOM_TYPE)
}

/// `text` (a session file) without its resolution stamps: each stamp's line is dropped and the
/// entries below it are hung on its parent. Every other line keeps its bytes but for its
/// `parentId`. `None` when the file has no stamp. Maps each stamp's id to the ancestor that
/// stands for it in the copy (`None`: the root).
pub fn strip_stamps(text: &str) -> Option<(String, HashMap<String, Option<String>>)> {
    let mut replaced: HashMap<String, Option<String>> = HashMap::new();
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            out.push_str(line);
            continue;
        };
        let parent = entry
            .get("parentId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let new_parent = match &parent {
            Some(parent) => replaced
                .get(parent)
                .cloned()
                .unwrap_or_else(|| Some(parent.clone())),
            None => None,
        };
        if is_stamp(&entry) {
            if let Some(id) = entry.get("id").and_then(Value::as_str) {
                replaced.insert(id.to_owned(), new_parent);
            }
            continue;
        }
        match (&parent, &new_parent) {
            (Some(old), new) if Some(old) != new.as_ref() => {
                let new = new
                    .as_ref()
                    .map_or_else(|| "null".to_owned(), |n| format!("{n:?}"));
                out.push_str(&line.replacen(
                    &format!("\"parentId\":{old:?}"),
                    &format!("\"parentId\":{new}"),
                    1,
                ));
            }
            _ => out.push_str(line),
        }
    }
    (!replaced.is_empty()).then_some((out, replaced))
}

/// Checks every stamped scenario file of `dir` (`fixtures/ours/<dialect>`) against its copy.
pub fn check(report: &mut Report, dir: &Path, dialect: &str, names: &[&str]) {
    for name in names {
        let stamped = dir.join(format!("{name}.jsonl"));
        let Ok(text) = std::fs::read_to_string(&stamped) else {
            continue;
        };
        let Some((stripped, replaced)) = strip_stamps(&text) else {
            continue;
        };
        let copy = copy_name(name);
        let mut row = Row::new(format!("ours/{dialect}"), format!("{name} (stamp-free)"));
        let bytes = match std::fs::read_to_string(dir.join(format!("{copy}.jsonl"))) {
            Ok(committed) if committed == stripped => Outcome::Pass,
            Ok(_) => Outcome::Fail(format!(
                "      {copy}.jsonl is not {name}.jsonl without its stamps; run `cargo xtask golden --write-ours` then `cargo xtask record --verify {}`\n",
                dir.display()
            )),
            Err(error) => Outcome::Fail(format!(
                "      cannot read {copy}.jsonl ({error}); run `cargo xtask golden --write-ours`\n"
            )),
        };
        report.record(&mut row, "unstamped bytes", "", bytes);
        for (implementation, column) in [
            ("omp", "unstamped omp"),
            ("pi", "unstamped pi"),
            ("pi16", "unstamped pi16"),
        ] {
            let recordings = dir.join(implementation);
            let read = |n: &str| -> Option<Value> {
                let text =
                    std::fs::read_to_string(recordings.join(format!("{n}.expected.json"))).ok()?;
                serde_json::from_str(&text).ok()
            };
            let (Some(with), Some(without)) = (read(name), read(&copy)) else {
                if recordings.join(format!("{name}.expected.json")).exists() {
                    report.record(
                        &mut row,
                        column,
                        "",
                        Outcome::Fail(format!(
                            "      no recording of {copy}.jsonl by {implementation}; run `cargo xtask record --verify {}`\n",
                            dir.display()
                        )),
                    );
                }
                continue;
            };
            let outcome = same_contexts(&with, &without, &replaced);
            report.record(&mut row, column, "", outcome);
        }
        report.push_row(row);
    }
}

/// Whether every context of `with` (a recording of the stamped file) is answered the same in
/// `without` (of the copy).
fn same_contexts(
    with: &Value,
    without: &Value,
    replaced: &HashMap<String, Option<String>>,
) -> Outcome {
    let contexts = |v: &Value| v.get("contexts").and_then(Value::as_array).cloned();
    let (Some(stamped), Some(copy)) = (contexts(with), contexts(without)) else {
        return Outcome::Fail("      a recording has no contexts\n".to_owned());
    };
    let mut failures = String::new();
    for context in &stamped {
        let kind = context.get("kind").and_then(Value::as_str).unwrap_or("");
        let leaf = context.get("leafId").and_then(Value::as_str);
        let stands_for = match leaf {
            Some(leaf) => replaced
                .get(leaf)
                .cloned()
                .unwrap_or_else(|| Some(leaf.to_owned())),
            None => None,
        };
        let twin = copy.iter().find(|c| {
            if kind == "default" {
                c.get("kind").and_then(Value::as_str) == Some("default")
            } else {
                c.get("leafId").and_then(Value::as_str) == stands_for.as_deref()
            }
        });
        let Some(twin) = twin else {
            failures.push_str(&format!(
                "      the copy's recording has no context for {kind} leaf {leaf:?} (as {stands_for:?})\n"
            ));
            continue;
        };
        for answer in ["agent", "llm"] {
            if context.get(answer) != twin.get(answer) {
                failures.push_str(&format!(
                    "      {kind} leaf {leaf:?}: `{answer}` differs without the stamps\n"
                ));
            }
        }
    }
    if failures.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_dropped_and_children_rehung() {
        let text = concat!(
            "{\"type\":\"session\",\"id\":\"s\"}\n",
            "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n",
            "{\"type\":\"custom\",\"customType\":\"pi-session.resolution\",\"id\":\"s1\",\"parentId\":\"a\"}\n",
            "{\"type\":\"custom\",\"customType\":\"pi-session.resolution\",\"id\":\"s2\",\"parentId\":\"s1\"}\n",
            "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"s2\"}\n",
            "{\"type\":\"custom\",\"customType\":\"pi-session.resolution\",\"id\":\"s3\",\"parentId\":null}\n",
            "{\"type\":\"message\",\"id\":\"c\",\"parentId\":\"s3\"}\n",
        );
        let (stripped, replaced) = strip_stamps(text).unwrap();
        assert_eq!(
            stripped,
            concat!(
                "{\"type\":\"session\",\"id\":\"s\"}\n",
                "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null}\n",
                "{\"type\":\"message\",\"id\":\"b\",\"parentId\":\"a\"}\n",
                "{\"type\":\"message\",\"id\":\"c\",\"parentId\":null}\n",
            )
        );
        assert_eq!(replaced["s2"], Some("a".to_owned()));
        assert_eq!(replaced["s3"], None);
        assert!(strip_stamps("{\"type\":\"session\"}\n").is_none());
    }
}
