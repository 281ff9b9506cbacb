//! Entry builders shared by the tests.

use serde_json::{Value, json};

use pi_session_tree::{
    AgentContext, ContextOptions, Dialect, LeafSelector, TreeIndex, agent_context,
};

pub const TS: &str = "2025-01-01T00:00:00Z";

pub fn user(id: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":TS,
           "message":{"role":"user","content":text,"timestamp":1}})
}

pub fn assistant(id: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"type":"message","id":id,"parentId":parent,"timestamp":TS,
           "message":{"role":"assistant","content":[{"type":"text","text":text}],
                      "api":"anthropic-messages","provider":"anthropic","model":"claude-test",
                      "usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,
                               "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
                      "stopReason":"stop","timestamp":1}})
}

pub fn compaction(id: &str, parent: Option<&str>, summary: &str, first_kept: &str) -> Value {
    json!({"type":"compaction","id":id,"parentId":parent,"timestamp":TS,"summary":summary,
           "firstKeptEntryId":first_kept,"tokensBefore":1000})
}

pub fn branch_summary(id: &str, parent: Option<&str>, summary: &str, from: &str) -> Value {
    json!({"type":"branch_summary","id":id,"parentId":parent,"timestamp":TS,"summary":summary,"fromId":from})
}

pub fn entry(kind: &str, id: &str, parent: Option<&str>, fields: Value) -> Value {
    let mut value = json!({"type":kind,"id":id,"parentId":parent,"timestamp":TS});
    if let (Some(map), Value::Object(extra)) = (value.as_object_mut(), fields) {
        map.extend(extra);
    }
    value
}

/// The context for a leaf, the way a session manager builds it: index the
/// entries, walk the branch, run the dialect's builder.
pub fn context_at(entries: &[Value], leaf: LeafSelector, dialect: Dialect) -> AgentContext {
    let index = TreeIndex::from_entries(entries);
    let branch = index.branch_for(&leaf);
    let path: Vec<Value> = branch
        .positions
        .iter()
        .map(|&i| entries[i].clone())
        .collect();
    agent_context(&path, dialect, &ContextOptions::default()).0
}

pub fn pi_context(entries: &[Value], leaf: LeafSelector) -> Value {
    context_at(entries, leaf, Dialect::PI).to_value()
}

pub fn omp_context(entries: &[Value], leaf: LeafSelector) -> Value {
    context_at(entries, leaf, Dialect::OMP).to_value()
}

pub fn leaf(id: &str) -> LeafSelector {
    LeafSelector::Id(id.to_owned())
}

/// Short description of messages: content text, summary, or role.
pub fn describe(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            if let Some(summary) = m.get("summary").and_then(Value::as_str) {
                return format!("{}:{summary}", m["role"].as_str().unwrap());
            }
            match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(""),
                _ => m["role"].as_str().unwrap_or("?").to_owned(),
            }
        })
        .collect()
}

pub use pi_session_test_support::js_equal;
