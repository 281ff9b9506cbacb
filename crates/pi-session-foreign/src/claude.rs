//! Claude Code transcripts (`~/.claude/projects/<dir>/<session>.jsonl`), converted as omp
//! 18.2.3's `ClaudeSessionStore.load` does (`src/session/claude-session-store.ts`).
//!
//! Claude Code writes one record per line with a `uuid` and a `parentUuid`; only `user` and
//! `assistant` records with an object `message` (not `isSidechain`, not `isMeta`) become entries.
//! Every other record type (`system`, `attachment`, `progress`, `summary`, `ai-title`, ...) is
//! skipped quietly, but still counts when the tree is rebuilt: an entry's parent is the nearest
//! *converted* ancestor found by walking `parentUuid` through all records.

use crate::records::Record;
use crate::value::{self, f64_value, non_empty, object, record, text_block};
use crate::{ImportError, Source, TitleRequest, Transcript, js_iso};
use pi_session_types::{JsonMap, TitleSource};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// One converted message and the suffix of its entry id.
struct Converted {
    message: JsonMap,
    suffix: String,
}

/// `timestampMs`: a number as is, a string through `Date.parse`, else the fallback.
fn timestamp_ms(value: Option<&Value>, fallback: f64) -> Value {
    match value {
        Some(Value::Number(n)) => Value::Number(n.clone()),
        Some(Value::String(s)) => {
            pi_session_types::js::parse_date_string(s).map_or(f64_value(fallback), Value::from)
        }
        _ => f64_value(fallback),
    }
}

fn image(block: &JsonMap) -> Option<Value> {
    if value::string(block, "type") != Some("image") {
        return None;
    }
    let source = record(block.get("source"))?;
    let data = non_empty(source, "data")?;
    let mime = non_empty(source, "media_type")?;
    Some(Value::Object(object([
        ("type", Some("image".into())),
        ("data", Some(data.into())),
        ("mimeType", Some(mime.into())),
    ])))
}

/// `userPart`: a text block or an image block.
fn user_part(block: &Value) -> Option<Value> {
    let block = block.as_object()?;
    if value::string(block, "type") == Some("text")
        && let Some(text) = value::string(block, "text")
    {
        return Some(text_block(text));
    }
    image(block)
}

fn tool_result_content(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(text)) => vec![text_block(text)],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(Value::as_object)
            .filter_map(|block| {
                if value::string(block, "type") == Some("text")
                    && let Some(text) = value::string(block, "text")
                {
                    return Some(text_block(text));
                }
                image(block)
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn assistant_content(
    content: Option<&Value>,
    tool_names: &mut HashMap<String, String>,
) -> Vec<Value> {
    let Some(Value::Array(blocks)) = content else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for block in blocks.iter().filter_map(Value::as_object) {
        match value::string(block, "type") {
            Some("text") => {
                if let Some(text) = value::string(block, "text") {
                    out.push(text_block(text));
                }
            }
            Some("thinking") => {
                if let Some(thinking) = value::string(block, "thinking") {
                    out.push(Value::Object(object([
                        ("type", Some("thinking".into())),
                        ("thinking", Some(thinking.into())),
                        (
                            "thinkingSignature",
                            value::string(block, "signature").map(Value::from),
                        ),
                    ])));
                }
            }
            Some("tool_use") => {
                let (Some(id), Some(name)) = (non_empty(block, "id"), non_empty(block, "name"))
                else {
                    continue;
                };
                let arguments = match block.get("input") {
                    Some(Value::Object(input)) => Value::Object(input.clone()),
                    _ => Value::Object(JsonMap::new()),
                };
                out.push(Value::Object(object([
                    ("type", Some("toolCall".into())),
                    ("id", Some(id.into())),
                    ("name", Some(name.into())),
                    ("arguments", Some(arguments)),
                ])));
                tool_names.insert(id.to_owned(), name.to_owned());
            }
            _ => {}
        }
    }
    out
}

/// `numberField`: the number, or 0.
fn count(usage: &JsonMap, key: &str) -> (Value, f64) {
    match value::number(usage.get(key)) {
        Some(n) => (Value::Number(n.clone()), n.as_f64().unwrap_or(0.0)),
        None => (Value::from(0), 0.0),
    }
}

fn claude_usage(usage: Option<&Value>) -> Value {
    let Some(usage) = record(usage) else {
        return value::empty_usage();
    };
    let (input, a) = count(usage, "input_tokens");
    let (output, b) = count(usage, "output_tokens");
    let (cache_read, c) = count(usage, "cache_read_input_tokens");
    let (cache_write, d) = count(usage, "cache_creation_input_tokens");
    value::usage(
        input,
        output,
        cache_read,
        cache_write,
        f64_value(a + b + c + d),
    )
}

fn stop_reason(value: Option<&Value>) -> &'static str {
    match value {
        Some(Value::String(s)) if s == "tool_use" => "toolUse",
        Some(Value::String(s)) if s == "max_tokens" => "length",
        Some(Value::String(s))
            if matches!(s.as_str(), "end_turn" | "stop_sequence" | "pause_turn") =>
        {
            "stop"
        }
        None | Some(Value::Null) => "stop",
        Some(_) => "error",
    }
}

fn convert_record(
    record_value: &JsonMap,
    fallback_ms: f64,
    tool_names: &mut HashMap<String, String>,
) -> Vec<Converted> {
    let kind = value::string(record_value, "type");
    if !matches!(kind, Some("user" | "assistant"))
        || record_value.get("isSidechain") == Some(&Value::Bool(true))
        || record_value.get("isMeta") == Some(&Value::Bool(true))
    {
        return Vec::new();
    }
    let Some(message) = record(record_value.get("message")) else {
        return Vec::new();
    };
    let timestamp = timestamp_ms(record_value.get("timestamp"), fallback_ms);
    if kind == Some("assistant") {
        let content = assistant_content(message.get("content"), tool_names);
        let error_message = non_empty(record_value, "error");
        if content.is_empty() && error_message.is_none() {
            return Vec::new();
        }
        let stop = if record_value.get("isApiErrorMessage") == Some(&Value::Bool(true)) {
            "error"
        } else {
            stop_reason(message.get("stop_reason"))
        };
        let message = object([
            ("role", Some("assistant".into())),
            ("content", Some(Value::Array(content))),
            ("api", Some("anthropic-messages".into())),
            ("provider", Some("anthropic".into())),
            (
                "model",
                Some(non_empty(message, "model").unwrap_or("unknown").into()),
            ),
            ("usage", Some(claude_usage(message.get("usage")))),
            ("stopReason", Some(stop.into())),
            ("timestamp", Some(timestamp)),
            ("responseId", non_empty(message, "id").map(Value::from)),
            ("errorMessage", error_message.map(Value::from)),
            (
                "errorStatus",
                value::number(record_value.get("apiErrorStatus")).map(|n| Value::Number(n.clone())),
            ),
        ]);
        return vec![Converted {
            message,
            suffix: "message".to_owned(),
        }];
    }
    let user = |content: Value| {
        object([
            ("role", Some("user".into())),
            ("content", Some(content)),
            ("timestamp", Some(timestamp.clone())),
        ])
    };
    match message.get("content") {
        Some(Value::Array(blocks)) => {
            let mut results = Vec::new();
            let mut run: Vec<Value> = Vec::new();
            let mut run_start = 0usize;
            let flush = |run: &mut Vec<Value>, start: usize, results: &mut Vec<Converted>| {
                if !run.is_empty() {
                    results.push(Converted {
                        message: user(Value::Array(std::mem::take(run))),
                        suffix: format!("user-{start}"),
                    });
                }
            };
            for (index, block) in blocks.iter().enumerate() {
                if let Some(part) = user_part(block) {
                    if run.is_empty() {
                        run_start = index;
                    }
                    run.push(part);
                    continue;
                }
                let Some(block) = block.as_object() else {
                    continue;
                };
                if value::string(block, "type") != Some("tool_result") {
                    continue;
                }
                let Some(call_id) = non_empty(block, "tool_use_id") else {
                    continue;
                };
                flush(&mut run, run_start, &mut results);
                let tool_name = tool_names.get(call_id).map_or("unknown", String::as_str);
                results.push(Converted {
                    message: object([
                        ("role", Some("toolResult".into())),
                        ("toolCallId", Some(call_id.into())),
                        ("toolName", Some(tool_name.into())),
                        (
                            "content",
                            Some(Value::Array(tool_result_content(block.get("content")))),
                        ),
                        (
                            "isError",
                            Some(Value::Bool(
                                block.get("is_error") == Some(&Value::Bool(true)),
                            )),
                        ),
                        ("timestamp", Some(timestamp.clone())),
                    ]),
                    suffix: format!("tool-{index}"),
                });
            }
            flush(&mut run, run_start, &mut results);
            // An array with neither parts nor results converts to nothing (`userContent` would
            // find no parts either).
            results
        }
        Some(Value::String(text)) if !text.is_empty() => vec![Converted {
            message: user(Value::String(text.clone())),
            suffix: "message".to_owned(),
        }],
        _ => Vec::new(),
    }
}

/// `uniqueEntryId`: `base`, else `base-2`, `base-3`, ...
fn unique_id(base: String, used: &mut HashSet<String>) -> String {
    let mut id = base.clone();
    let mut n = 2u64;
    while used.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    used.insert(id.clone());
    id
}

/// Converts a Claude Code transcript. `listed_cwd` and `listed_title` come from the listing
/// (used when the transcript has none); `mtime_ms` (the file's `mtimeMs`) stands in for
/// missing record timestamps.
pub(crate) fn convert(
    records: &[Record],
    listed_cwd: &str,
    listed_title: Option<&str>,
    mtime_ms: f64,
) -> Result<Transcript, ImportError> {
    let mut source_parents: HashMap<&str, Option<&str>> = HashMap::new();
    let mut source_cwd = None;
    let mut custom_title = None;
    let mut ai_title = None;
    for Record { value, .. } in records {
        if let Some(uuid) = non_empty(value, "uuid") {
            source_parents.insert(uuid, non_empty(value, "parentUuid"));
        }
        if source_cwd.is_none() {
            source_cwd = non_empty(value, "cwd");
        }
        match value::string(value, "type") {
            Some("custom-title") => {
                custom_title = non_empty(value, "customTitle").or(custom_title);
            }
            Some("ai-title") => ai_title = non_empty(value, "aiTitle").or(ai_title),
            _ => {}
        }
    }

    let mut entries: Vec<JsonMap> = Vec::new();
    let mut source_tails: HashMap<String, String> = HashMap::new();
    let mut used = HashSet::new();
    let mut tool_names = HashMap::new();
    let mut last_model: Option<String> = None;
    let mut synthetic = 0u64;
    let resolve_parent = |tails: &HashMap<String, String>, start: Option<&str>| {
        let mut seen = HashSet::new();
        let mut cursor = start;
        while let Some(id) = cursor {
            if !seen.insert(id) {
                break;
            }
            if let Some(retained) = tails.get(id) {
                return Some(retained.clone());
            }
            cursor = source_parents.get(id).copied().flatten();
        }
        None
    };

    for Record { value, line, .. } in records {
        let converted = convert_record(value, mtime_ms, &mut tool_names);
        if converted.is_empty() {
            continue;
        }
        let source_uuid =
            non_empty(value, "uuid").map_or_else(|| format!("line-{line}"), str::to_owned);
        let mut parent = resolve_parent(&source_tails, non_empty(value, "parentUuid"));
        let timestamp = js_iso(&timestamp_ms(value.get("timestamp"), mtime_ms))?;
        if value::string(value, "type") == Some("assistant")
            && let Some(message) = record(value.get("message"))
            && let Some(model) = non_empty(message, "model")
            && last_model.as_deref() != Some(model)
        {
            let id = unique_id(format!("claude-{source_uuid}-model"), &mut used);
            let model_ref = format!("anthropic/{model}");
            entries.push(value::entry(
                "model_change",
                &id,
                parent.as_deref(),
                &timestamp,
                ("model", model_ref.into()),
            ));
            parent = Some(id);
            last_model = Some(model.to_owned());
        }
        for item in converted {
            synthetic += 1;
            let id = unique_id(
                format!("claude-{source_uuid}-{}-{synthetic}", item.suffix),
                &mut used,
            );
            entries.push(value::entry(
                "message",
                &id,
                parent.as_deref(),
                &timestamp,
                ("message", Value::Object(item.message)),
            ));
            parent = Some(id);
        }
        if let Some(parent) = parent {
            source_tails.insert(source_uuid, parent);
        }
    }

    let title = match (custom_title, ai_title.or(listed_title)) {
        (Some(title), _) => Some(TitleRequest::new(title, TitleSource::User, None)),
        (None, Some(title)) => Some(TitleRequest::new(title, TitleSource::Auto, None)),
        (None, None) => None,
    };
    Ok(Transcript {
        source: Source::Claude,
        cwd: source_cwd.unwrap_or(listed_cwd).to_owned(),
        entries,
        title,
    })
}
