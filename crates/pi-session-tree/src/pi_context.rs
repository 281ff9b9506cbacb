//! pi 0.73's `buildSessionContext`, reproduced over the entries of a path.
//!
//! Rules (pi.md §6, checked against `core/session-manager.ts` of 0.73.1):
//! settings come from the whole path (last `thinking_level_change`; last
//! `model_change` or assistant message for the model); only the latest
//! compaction counts: its summary first, then the path entries from its
//! `firstKeptEntryId` up to it, then everything after it. Messages are emitted
//! as stored; `custom_message` and `branch_summary` entries become `custom` and
//! `branchSummary` messages.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::js;

/// What pi 0.73's `buildSessionContext` returns, serialised field for field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PiContext {
    /// The agent messages, in order.
    pub messages: Vec<Value>,
    /// The thinking level in effect (`"off"` by default). pi copies the
    /// entry's value as is, so a `thinking_level_change` without the key makes
    /// it `undefined` (omitted here).
    #[serde(rename = "thinkingLevel", skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<Value>,
    /// `{provider, modelId}` of the last `model_change` or assistant message on
    /// the path, or `null`.
    pub model: Option<Map<String, Value>>,
}

impl PiContext {
    /// The result for an empty path or a `null` leaf.
    pub fn empty() -> Self {
        Self {
            messages: Vec::new(),
            thinking_level: Some(Value::from("off")),
            model: None,
        }
    }
}

/// Builds pi's context from the entries of a path (root first).
pub fn build(path: &[Value]) -> (PiContext, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut context = PiContext::empty();
    let mut compaction: Option<usize> = None;

    for (index, entry) in path.iter().enumerate() {
        match js::as_str(entry.get("type")) {
            Some("thinking_level_change") => context.thinking_level = entry.get("thinkingLevel").cloned(),
            Some("model_change") => {
                context.model = Some(model_object(entry.get("provider"), entry.get("modelId")));
            }
            Some("message") => match entry.get("message") {
                None | Some(Value::Null) => diagnostics.push(malformed(
                    entry,
                    "message entry has no message object; pi 0.73.1 throws here, the entry is skipped",
                )),
                Some(message) => {
                    if js::is_str(message.get("role"), "assistant") {
                        context.model = Some(model_object(message.get("provider"), message.get("model")));
                    }
                }
            },
            Some("compaction") => compaction = Some(index),
            _ => {}
        }
    }

    match compaction {
        Some(latest) => {
            let entry = &path[latest];
            context.messages.push(compaction_summary(entry));
            let compaction_index = path
                .iter()
                .position(|e| {
                    js::is_str(e.get("type"), "compaction")
                        && js::strict_eq(e.get("id"), entry.get("id"))
                })
                .unwrap_or(latest);
            let first_kept = entry.get("firstKeptEntryId");
            let mut found = false;
            for kept in &path[..compaction_index] {
                if js::strict_eq(kept.get("id"), first_kept) {
                    found = true;
                }
                if found {
                    emit(kept, &mut context.messages);
                }
            }
            for later in &path[compaction_index + 1..] {
                emit(later, &mut context.messages);
            }
        }
        None => {
            for entry in path {
                emit(entry, &mut context.messages);
            }
        }
    }
    (context, diagnostics)
}

fn malformed(entry: &Value, message: &str) -> Diagnostic {
    Diagnostic::at(
        DiagnosticKind::MalformedEntry,
        None,
        js::as_str(entry.get("id")),
        message,
    )
}

fn model_object(provider: Option<&Value>, model_id: Option<&Value>) -> Map<String, Value> {
    let mut model = Map::new();
    if let Some(provider) = provider {
        model.insert("provider".into(), provider.clone());
    }
    if let Some(model_id) = model_id {
        model.insert("modelId".into(), model_id.clone());
    }
    model
}

fn compaction_summary(entry: &Value) -> Value {
    js::object([
        ("role", Some(Value::from("compactionSummary"))),
        ("summary", entry.get("summary").cloned()),
        ("tokensBefore", entry.get("tokensBefore").cloned()),
        ("timestamp", Some(js::date_ms_value(entry.get("timestamp")))),
    ])
}

fn emit(entry: &Value, messages: &mut Vec<Value>) {
    match js::as_str(entry.get("type")) {
        Some("message") => {
            if let Some(message) = entry.get("message").filter(|m| !m.is_null()) {
                messages.push(message.clone());
            }
        }
        Some("custom_message") => messages.push(js::object([
            ("role", Some(Value::from("custom"))),
            ("customType", entry.get("customType").cloned()),
            ("content", entry.get("content").cloned()),
            ("display", entry.get("display").cloned()),
            ("details", entry.get("details").cloned()),
            ("timestamp", Some(js::date_ms_value(entry.get("timestamp")))),
        ])),
        Some("branch_summary") if js::truthy(entry.get("summary")) => {
            messages.push(branch_summary_message(entry));
        }
        _ => {}
    }
}

/// `createBranchSummaryMessage` (identical in pi and omp).
pub(crate) fn branch_summary_message(entry: &Value) -> Value {
    js::object([
        ("role", Some(Value::from("branchSummary"))),
        ("summary", entry.get("summary").cloned()),
        ("fromId", entry.get("fromId").cloned()),
        ("timestamp", Some(js::date_ms_value(entry.get("timestamp")))),
    ])
}
