//! OpenAI Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), converted as omp
//! 18.2.3's `CodexSessionStore.load` does (`src/session/codex-session-store.ts`).
//!
//! A rollout is a flat log of `session_meta`, `turn_context`, `response_item`, `event_msg` and
//! `compacted` records. Every converted item becomes its own entry of one linear chain
//! (`codex-1`, `codex-2`, ... numbered in base 36); `event_msg` copies of what a `response_item`
//! already says are left out, `thread_rolled_back` removes turns, and every other record type is
//! skipped quietly.

use crate::records::Record;
use crate::value::{self, empty_usage, object, record, string, text_block};
use crate::{ImportError, Source, TitleRequest, Transcript, js_iso};
use pi_session_types::{JsonMap, TitleSource};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// The model in effect before the first `turn_context` names one.
const INITIAL_MODEL: &str = "codex";

/// One converted item, before it gets its entry id.
#[derive(Debug, Clone, Default)]
enum Item {
    /// A record omp keeps as an item that writes no entry (a title change, a rollback of zero
    /// turns): it still uses up an ordinal, so the next entry's id skips one.
    #[default]
    Nothing,
    Message(JsonMap),
    Model {
        model: String,
        timestamp: f64,
    },
    Compaction {
        compaction: JsonMap,
        timestamp: f64,
    },
}

impl Item {
    fn is_user(&self) -> bool {
        matches!(self, Item::Message(m) if string(m, "role") == Some("user"))
    }
}

/// What one record turns into (omp's `ConvertedRecord`).
#[derive(Default)]
struct Converted {
    item: Item,
    following: Option<JsonMap>,
    rollback_turns: Option<f64>,
    title: Option<String>,
}

impl Converted {
    fn message(message: JsonMap) -> Option<Self> {
        Some(Self {
            item: Item::Message(message),
            ..Self::default()
        })
    }
}

/// `timestampMillis`: numbers below 10¹⁰ are seconds, strings go through `Date.parse`.
fn timestamp_millis(value: Option<&Value>, fallback: f64) -> f64 {
    match value {
        Some(Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(fallback);
            if x < 10_000_000_000.0 { x * 1000.0 } else { x }
        }
        Some(Value::String(s)) => {
            pi_session_types::js::parse_date_string(s).map_or(fallback, |ms| ms as f64)
        }
        _ => fallback,
    }
}

fn ts(ms: f64) -> Value {
    value::f64_value(ms)
}

/// `imageFromUrl`: a `data:<mime>;base64,<data>` URL as an image block.
fn image_from_url(url: Option<&Value>, detail: Option<&Value>) -> Option<Value> {
    let url = url?.as_str()?;
    let rest = url.strip_prefix("data:")?;
    let split = rest.find([';', ','])?;
    let (mime, tail) = rest.split_at(split);
    let data = tail.strip_prefix(";base64,")?;
    if mime.is_empty() || data.is_empty() {
        return None;
    }
    let detail = detail
        .and_then(Value::as_str)
        .filter(|d| matches!(*d, "auto" | "low" | "high" | "original"));
    Some(Value::Object(object([
        ("type", Some("image".into())),
        ("mimeType", Some(mime.into())),
        ("data", Some(data.into())),
        ("detail", detail.map(Value::from)),
    ])))
}

/// `responseContent`: text and image parts of a Responses content array.
fn response_content(value: Option<&Value>) -> Vec<Value> {
    let Some(Value::Array(items)) = value else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items.iter().filter_map(Value::as_object) {
        let kind = string(item, "type");
        if matches!(kind, Some("input_text" | "output_text" | "text"))
            && let Some(text) = string(item, "text")
        {
            out.push(text_block(text));
            continue;
        }
        if kind == Some("input_image")
            && let Some(image) = image_from_url(item.get("image_url"), item.get("detail"))
        {
            out.push(image);
        }
    }
    out
}

fn text_from_content(value: Option<&Value>) -> String {
    response_content(value)
        .iter()
        .filter(|part| part["type"] == "text")
        .filter_map(|part| part["text"].as_str())
        .collect()
}

/// `toolArguments`: an object as is, a string parsed as a JSON object, else `{input: string}`.
fn tool_arguments(value: Option<&Value>) -> Value {
    match value {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        Some(Value::String(text)) => match crate::parse_js_json(text) {
            Some(Value::Object(map)) => Value::Object(map),
            _ => Value::Object(object([("input", Some(text.clone().into()))])),
        },
        _ => Value::Object(JsonMap::new()),
    }
}

/// `toolOutputContent`: structured parts, a string as text, anything else as its JSON.
fn tool_output_content(value: Option<&Value>) -> Vec<Value> {
    let structured = response_content(value);
    if !structured.is_empty() {
        return structured;
    }
    match value {
        Some(Value::String(text)) => vec![text_block(text)],
        None => Vec::new(),
        Some(other) => vec![text_block(
            &pi_session_types::to_js_string(other).unwrap_or_default(),
        )],
    }
}

fn reasoning_content(payload: &JsonMap) -> Vec<Value> {
    let mut parts = Vec::new();
    for key in ["summary", "content"] {
        let Some(Value::Array(items)) = payload.get(key) else {
            continue;
        };
        for item in items.iter().filter_map(Value::as_object) {
            if let Some(text) = string(item, "text").filter(|t| !t.is_empty()) {
                parts.push(Value::Object(object([
                    ("type", Some("thinking".into())),
                    ("thinking", Some(text.into())),
                ])));
            }
        }
    }
    parts
}

fn assistant(content: Vec<Value>, timestamp: f64, model: &str, stop: &str) -> JsonMap {
    object([
        ("role", Some("assistant".into())),
        ("content", Some(Value::Array(content))),
        ("api", Some("openai-codex-responses".into())),
        ("provider", Some("openai-codex".into())),
        ("model", Some(model.into())),
        ("usage", Some(empty_usage())),
        ("stopReason", Some(stop.into())),
        ("timestamp", Some(ts(timestamp))),
    ])
}

fn tool_call(id: &str, name: &str, arguments: Value, custom_wire_name: Option<&str>) -> Value {
    Value::Object(object([
        ("type", Some("toolCall".into())),
        ("id", Some(id.into())),
        ("name", Some(name.into())),
        ("arguments", Some(arguments)),
        ("customWireName", custom_wire_name.map(Value::from)),
    ]))
}

fn tool_result(
    id: &str,
    name: &str,
    content: Vec<Value>,
    is_error: bool,
    timestamp: f64,
) -> JsonMap {
    object([
        ("role", Some("toolResult".into())),
        ("toolCallId", Some(id.into())),
        ("toolName", Some(name.into())),
        ("content", Some(Value::Array(content))),
        ("isError", Some(Value::Bool(is_error))),
        ("timestamp", Some(ts(timestamp))),
    ])
}

fn response_item(
    payload: &JsonMap,
    timestamp: f64,
    model: &str,
    tool_names: &mut HashMap<String, String>,
) -> Option<Converted> {
    let kind = string(payload, "type");
    match kind {
        Some("message") => {
            let content = response_content(payload.get("content"));
            if content.is_empty() {
                return None;
            }
            match string(payload, "role") {
                Some("user") => Converted::message(object([
                    ("role", Some("user".into())),
                    ("content", Some(Value::Array(content))),
                    ("timestamp", Some(ts(timestamp))),
                ])),
                Some("assistant") => {
                    Converted::message(assistant(content, timestamp, model, "stop"))
                }
                _ => None,
            }
        }
        Some("reasoning") => {
            let content = reasoning_content(payload);
            if content.is_empty() {
                return None;
            }
            Converted::message(assistant(content, timestamp, model, "stop"))
        }
        Some(kind @ ("function_call" | "custom_tool_call")) => {
            let call_id = string(payload, "call_id").or_else(|| string(payload, "id"))?;
            let name = string(payload, "name")?;
            if call_id.is_empty() || name.is_empty() {
                return None;
            }
            tool_names.insert(call_id.to_owned(), name.to_owned());
            let custom = kind == "custom_tool_call";
            let arguments = tool_arguments(payload.get(if custom { "input" } else { "arguments" }));
            let call = tool_call(call_id, name, arguments, custom.then_some(name));
            Converted::message(assistant(vec![call], timestamp, model, "toolUse"))
        }
        Some("function_call_output" | "custom_tool_call_output") => {
            let call_id = string(payload, "call_id").filter(|id| !id.is_empty())?;
            let name = tool_names.get(call_id).map_or("unknown", String::as_str);
            let content = tool_output_content(payload.get("output"));
            Converted::message(tool_result(call_id, name, content, false, timestamp))
        }
        Some(kind @ ("web_search_call" | "tool_search_call")) => {
            let call_id = string(payload, "call_id")
                .or_else(|| string(payload, "id"))
                .filter(|id| !id.is_empty())?;
            let web = kind == "web_search_call";
            let name = if web { "web_search" } else { "tool_search" };
            tool_names.insert(call_id.to_owned(), name.to_owned());
            let input = payload.get(if web { "action" } else { "arguments" });
            let call = tool_call(call_id, name, tool_arguments(input), None);
            Converted::message(assistant(vec![call], timestamp, model, "toolUse"))
        }
        Some("tool_search_output") => {
            let call_id = string(payload, "call_id").filter(|id| !id.is_empty())?;
            let name = tool_names
                .get(call_id)
                .map_or("tool_search", String::as_str);
            let content = tool_output_content(payload.get("tools"));
            let failed = payload.get("status") == Some(&Value::from("failed"));
            Converted::message(tool_result(call_id, name, content, failed, timestamp))
        }
        _ => None,
    }
}

/// What the `response_item`s already say, so that `event_msg` copies are left out.
#[derive(Default)]
struct Canonical {
    users: HashSet<String>,
    assistants: HashSet<String>,
    tool_calls: HashSet<String>,
}

fn canonical(records: &[Record]) -> Canonical {
    let mut seen = Canonical::default();
    for Record { value, .. } in records {
        if string(value, "type") != Some("response_item") {
            continue;
        }
        let Some(payload) = record(value.get("payload")) else {
            continue;
        };
        let call_id = string(payload, "call_id").or_else(|| string(payload, "id"));
        if let Some(call_id) = call_id.filter(|id| !id.is_empty())
            && string(payload, "type").is_some_and(|t| t.contains("call"))
        {
            seen.tool_calls.insert(call_id.to_owned());
        }
        match string(payload, "type") {
            Some("message") => {
                let text = text_from_content(payload.get("content"));
                if text.is_empty() {
                    continue;
                }
                match string(payload, "role") {
                    Some("user") => {
                        seen.users.insert(text);
                    }
                    Some("assistant") => {
                        seen.assistants.insert(text);
                    }
                    _ => {}
                }
            }
            Some("reasoning") => {
                for part in reasoning_content(payload) {
                    if let Some(text) = part["thinking"].as_str() {
                        seen.assistants.insert(text.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    seen
}

fn event(
    payload: &JsonMap,
    timestamp: f64,
    model: &str,
    canonical: &Canonical,
    tool_names: &mut HashMap<String, String>,
) -> Option<Converted> {
    let non_empty = |key| string(payload, key).filter(|s: &&str| !s.is_empty());
    match string(payload, "type")? {
        "user_message" => {
            let text = non_empty("message")?;
            if canonical.users.contains(text) {
                return None;
            }
            Converted::message(object([
                ("role", Some("user".into())),
                ("content", Some(text.into())),
                ("timestamp", Some(ts(timestamp))),
            ]))
        }
        kind @ ("agent_message" | "agent_reasoning") => {
            let reasoning = kind == "agent_reasoning";
            let text = non_empty(if reasoning { "text" } else { "message" })?;
            if canonical.assistants.contains(text) {
                return None;
            }
            let block = if reasoning {
                Value::Object(object([
                    ("type", Some("thinking".into())),
                    ("thinking", Some(text.into())),
                ]))
            } else {
                text_block(text)
            };
            Converted::message(assistant(vec![block], timestamp, model, "stop"))
        }
        "dynamic_tool_call_request" => {
            let call_id = string(payload, "callId")
                .or_else(|| string(payload, "call_id"))
                .filter(|id| !id.is_empty())?;
            let name = non_empty("tool")?;
            if canonical.tool_calls.contains(call_id) {
                return None;
            }
            tool_names.insert(call_id.to_owned(), name.to_owned());
            let call = tool_call(
                call_id,
                name,
                tool_arguments(payload.get("arguments")),
                None,
            );
            Converted::message(assistant(vec![call], timestamp, model, "toolUse"))
        }
        "dynamic_tool_call_response" => {
            let call_id = string(payload, "call_id")
                .or_else(|| string(payload, "callId"))
                .filter(|id| !id.is_empty())?;
            if canonical.tool_calls.contains(call_id) {
                return None;
            }
            let error = string(payload, "error");
            let name = tool_names
                .get(call_id)
                .map(String::as_str)
                .or_else(|| string(payload, "tool"))
                .unwrap_or("unknown");
            let content = match error {
                Some(error) if !error.is_empty() => vec![text_block(error)],
                _ => tool_output_content(payload.get("content_items")),
            };
            let is_error = error.is_some() || payload.get("success") == Some(&Value::Bool(false));
            Converted::message(tool_result(call_id, name, content, is_error, timestamp))
        }
        "web_search_end" => {
            let call_id = non_empty("call_id")?;
            let name = tool_names
                .get(call_id)
                .cloned()
                .unwrap_or_else(|| "web_search".to_owned());
            let results = match payload.get("results") {
                None | Some(Value::Null) => payload.get("query"),
                results => results,
            };
            let result = tool_result(
                call_id,
                &name,
                tool_output_content(results),
                false,
                timestamp,
            );
            if canonical.tool_calls.contains(call_id) || tool_names.contains_key(call_id) {
                return Converted::message(result);
            }
            tool_names.insert(call_id.to_owned(), name.clone());
            let input = match payload.get("action") {
                None | Some(Value::Null) => payload.get("query"),
                action => action,
            };
            let call = tool_call(call_id, &name, tool_arguments(input), None);
            Some(Converted {
                item: Item::Message(assistant(vec![call], timestamp, model, "toolUse")),
                following: Some(result),
                ..Converted::default()
            })
        }
        "mcp_tool_call_end" => {
            let call_id = non_empty("call_id")?;
            if canonical.tool_calls.contains(call_id) {
                return None;
            }
            let invocation = record(payload.get("invocation"))?;
            let server = string(invocation, "server").filter(|s| !s.is_empty())?;
            let tool = string(invocation, "tool").filter(|s| !s.is_empty())?;
            let name = format!("{server}/{tool}");
            tool_names.insert(call_id.to_owned(), name.clone());
            let call = tool_call(
                call_id,
                &name,
                tool_arguments(invocation.get("arguments")),
                None,
            );
            let raw = payload.get("result");
            let result = match record(raw).and_then(|r| r.get("Ok")) {
                Some(ok @ Value::Object(_)) => Some(ok),
                _ => raw,
            };
            let error = record(raw).and_then(|r| string(r, "Err"));
            let content = match error {
                Some(error) if !error.is_empty() => vec![text_block(error)],
                _ => tool_output_content(match result {
                    Some(Value::Object(map)) => map.get("content"),
                    other => other,
                }),
            };
            let is_error = error.is_some()
                || record(result).is_some_and(|r| r.get("isError") == Some(&Value::Bool(true)));
            Some(Converted {
                item: Item::Message(assistant(vec![call], timestamp, model, "toolUse")),
                following: Some(tool_result(call_id, &name, content, is_error, timestamp)),
                ..Converted::default()
            })
        }
        "thread_name_updated" => Some(Converted {
            title: string(payload, "thread_name").map(str::to_owned),
            ..Converted::default()
        }),
        "thread_rolled_back" => Some(Converted {
            rollback_turns: Some(
                value::number(payload.get("num_turns"))
                    .and_then(serde_json::Number::as_f64)
                    .unwrap_or(0.0),
            ),
            ..Converted::default()
        }),
        _ => None,
    }
}

fn compacted(payload: &JsonMap, timestamp: f64) -> Option<Converted> {
    let summary = string(payload, "message")
        .map(pi_session_types::js::trim)
        .filter(|s| !s.is_empty());
    let history = match payload.get("replacement_history") {
        Some(Value::Array(items)) if items.iter().all(Value::is_object) => Some(items),
        _ => None,
    };
    if summary.is_none() && history.is_none() {
        return None;
    }
    let compaction_item = history.and_then(|items| {
        items.iter().rev().find(|candidate| {
            let kind = candidate.get("type").and_then(Value::as_str);
            (kind == Some("compaction")
                && candidate
                    .get("encrypted_content")
                    .is_some_and(Value::is_string))
                || kind == Some("compaction_summary")
        })
    });
    let preserve = history.map(|items| {
        Value::Object(object([(
            "openaiRemoteCompaction",
            Some(Value::Object(object([
                ("provider", Some("openai-codex".into())),
                ("replacementHistory", Some(Value::Array(items.clone()))),
                ("compactionItem", compaction_item.cloned()),
            ]))),
        )]))
    });
    let compaction = object([
        (
            "summary",
            Some(summary.unwrap_or("Context compacted by Codex.").into()),
        ),
        ("preserveData", preserve),
    ]);
    Some(Converted {
        item: Item::Compaction {
            compaction,
            timestamp,
        },
        ..Converted::default()
    })
}

/// `rollback`: `turns` times, drop everything from the last user message on.
fn rollback(items: &mut Vec<Item>, turns: f64) {
    let mut remaining = turns;
    while remaining > 0.0 {
        let Some(index) = items.iter().rposition(Item::is_user) else {
            return;
        };
        items.truncate(index);
        remaining -= 1.0;
    }
}

/// Converts a Codex rollout. `listed_cwd`, `listed_title` and `created_ms` come from the listing.
pub(crate) fn convert(
    records: &[Record],
    listed_cwd: &str,
    listed_title: Option<&str>,
    created_ms: f64,
) -> Result<Transcript, ImportError> {
    let cwd = records
        .iter()
        .find(|r| {
            string(&r.value, "type") == Some("session_meta")
                && record(r.value.get("payload")).is_some()
        })
        .and_then(|r| record(r.value.get("payload")))
        .map_or(listed_cwd, |payload| {
            string(payload, "cwd").unwrap_or(listed_cwd)
        });
    let canonical = canonical(records);
    let mut items: Vec<Item> = Vec::new();
    let mut tool_names = HashMap::new();
    let mut model = INITIAL_MODEL.to_owned();
    let mut fallback = created_ms;
    let mut title = listed_title.map(str::to_owned);

    for Record { value, .. } in records {
        let timestamp = timestamp_millis(value.get("timestamp"), fallback);
        fallback = (fallback + 1.0).max(timestamp);
        let Some(payload) = record(value.get("payload")) else {
            continue;
        };
        let converted = match string(value, "type") {
            Some("turn_context") => match string(payload, "model") {
                Some(next) if !next.is_empty() && next != model => {
                    model = next.to_owned();
                    Some(Converted {
                        item: Item::Model {
                            model: model.clone(),
                            timestamp,
                        },
                        ..Converted::default()
                    })
                }
                _ => None,
            },
            Some("response_item") => response_item(payload, timestamp, &model, &mut tool_names),
            Some("event_msg") => event(payload, timestamp, &model, &canonical, &mut tool_names),
            Some("compacted") => compacted(payload, timestamp),
            _ => None,
        };
        let Some(converted) = converted else {
            continue;
        };
        match converted.rollback_turns {
            Some(turns) if turns != 0.0 && !turns.is_nan() => rollback(&mut items, turns),
            _ => items.push(converted.item),
        }
        if let Some(following) = converted.following {
            items.push(Item::Message(following));
        }
        if let Some(new_title) = converted.title.filter(|t| !t.is_empty()) {
            title = Some(new_title);
        }
    }

    let mut entries = Vec::with_capacity(items.len());
    let mut parent: Option<String> = None;
    for (ordinal, item) in (1u64..).zip(items) {
        let id = format!("codex-{}", pi_session_types::js::to_base36(ordinal));
        let parent_id = parent.as_deref();
        let entry = match item {
            Item::Nothing => continue,
            Item::Message(message) => {
                let timestamp = js_iso(message.get("timestamp").unwrap_or(&Value::Null))?;
                let message = ("message", Value::Object(message));
                value::entry("message", &id, parent_id, &timestamp, message)
            }
            Item::Model { model, timestamp } => {
                let model = ("model", format!("openai-codex/{model}").into());
                value::entry(
                    "model_change",
                    &id,
                    parent_id,
                    &js_iso(&ts(timestamp))?,
                    model,
                )
            }
            Item::Compaction {
                mut compaction,
                timestamp,
            } => {
                let summary = compaction.remove("summary").unwrap_or(Value::Null);
                let timestamp = js_iso(&ts(timestamp))?;
                let mut entry = value::entry(
                    "compaction",
                    &id,
                    parent_id,
                    &timestamp,
                    ("summary", summary),
                );
                entry.insert("shortSummary".into(), "Imported Codex compaction".into());
                entry.insert("firstKeptEntryId".into(), id.clone().into());
                entry.insert("tokensBefore".into(), 0.into());
                entry.extend(compaction);
                entry
            }
        };
        entries.push(entry);
        parent = Some(id);
    }
    let title = title.map(|t| TitleRequest::new(&t, TitleSource::Auto, Some("codex-import")));
    Ok(Transcript {
        source: Source::Codex,
        cwd: cwd.to_owned(),
        entries,
        title,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_count_in_base_36() {
        assert_eq!(
            [1, 9, 10, 35, 36, 1295].map(pi_session_types::js::to_base36),
            ["1", "9", "a", "z", "10", "zz"].map(str::to_owned)
        );
    }

    #[test]
    fn timestamps_take_seconds_milliseconds_and_dates() {
        assert_eq!(
            timestamp_millis(Some(&Value::from(1_700_000_000)), 5.0),
            1.7e12
        );
        assert_eq!(timestamp_millis(Some(&Value::from(1.7e12)), 5.0), 1.7e12);
        assert_eq!(
            timestamp_millis(Some(&Value::from("1970-01-01T00:00:01Z")), 5.0),
            1000.0
        );
        assert_eq!(timestamp_millis(Some(&Value::from("nope")), 5.0), 5.0);
    }
}
