//! Property tests: random Claude Code and Codex record sequences never make the importer panic,
//! and the entries keep omp's order and parent rules.
//!
//! - Claude: ids are unique; every parent is `null` or an entry written before; entries come in
//!   record order, and the messages of one record chain one after the other.
//! - Codex: one linear chain, ids `codex-<n in base 36>` increasing (a gap only where omp keeps an
//!   item that writes nothing), each entry the child of the one before.
//! - Both: the import writes a file our store reads back with no damage, same entry count.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_session_foreign::{
    Env, ForeignSessionInfo, ImportOptions, Source, convert, read_records, write,
};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::HashSet;

fn uuid() -> impl Strategy<Value = Option<String>> {
    prop_oneof![Just(None), (0u8..24).prop_map(|n| Some(format!("u{n}")))]
}

fn claude_block() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[a-z ]{0,8}".prop_map(|t| json!({"type": "text", "text": t})),
        "[a-z]{0,5}".prop_map(|t| json!({"type": "thinking", "thinking": t, "signature": "s"})),
        (0u8..4, "[A-Za-z]{0,4}")
            .prop_map(|(n, name)| json!({"type": "tool_use", "id": format!("t{n}"), "name": name, "input": {"k": n}})),
        (0u8..4, any::<bool>()).prop_map(|(n, e)| json!({"type": "tool_result", "tool_use_id": format!("t{n}"), "content": "r", "is_error": e})),
        Just(json!({"type": "image", "source": {"data": "AAAA", "media_type": "image/png"}})),
        Just(json!({"type": "document"})),
        Just(json!(42)),
    ]
}

fn claude_record() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        Just("user"),
        Just("assistant"),
        Just("progress"),
        Just("system"),
        Just("ai-title"),
        Just("custom-title"),
        Just("summary")
    ];
    let content = prop_oneof![
        "[a-z]{0,6}".prop_map(Value::from),
        prop::collection::vec(claude_block(), 0..4).prop_map(Value::Array),
        Just(Value::Null),
    ];
    let model = prop_oneof![
        Just(None),
        Just(Some("m1")),
        Just(Some("m2")),
        Just(Some("<synthetic>"))
    ];
    (
        kind,
        any::<bool>(),
        uuid(),
        content,
        model,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            Just(json!("2026-01-01T00:00:00Z")),
            Just(json!(1_700_000_000_000u64)),
            Just(Value::Null),
            Just(json!("bad"))
        ],
    )
        .prop_map(
            |(kind, has_uuid, parent, content, model, sidechain, error, timestamp)| {
                let mut record = json!({
                    "type": kind, "parentUuid": parent, "isSidechain": sidechain && error,
                    "timestamp": timestamp, "message": {"role": kind, "content": content},
                    "aiTitle": "a title", "customTitle": "  ", "cwd": "/w",
                });
                // Replaced by a uuid unique to the record (see `unique_uuids`).
                record["uuid"] = has_uuid.into();
                if let Some(model) = model {
                    record["message"]["model"] = model.into();
                }
                if error {
                    record["error"] = "boom".into();
                    record["isApiErrorMessage"] = true.into();
                }
                record
            },
        )
}

fn codex_record() -> impl Strategy<Value = Value> {
    let call = (0u8..3).prop_map(|n| format!("c{n}"));
    let payload = prop_oneof![
        "[a-z]{0,5}".prop_map(|t| json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]})),
        "[a-z]{0,5}".prop_map(|t| json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t}]})),
        "[a-z]{0,5}".prop_map(|t| json!({"type": "reasoning", "summary": [{"text": t}]})),
        call.clone().prop_map(|c| json!({"type": "function_call", "name": "shell", "arguments": "{\"a\":1}", "call_id": c})),
        call.clone().prop_map(|c| json!({"type": "function_call_output", "call_id": c, "output": "ok"})),
        call.clone().prop_map(|c| json!({"type": "custom_tool_call", "name": "patch", "input": "x", "call_id": c})),
        "[a-z]{0,5}".prop_map(|t| json!({"type": "user_message", "message": t})),
        "[a-z]{0,5}".prop_map(|t| json!({"type": "agent_message", "message": t})),
        call.clone().prop_map(|c| json!({"type": "web_search_end", "call_id": c, "query": "q"})),
        call.prop_map(|c| json!({"type": "mcp_tool_call_end", "call_id": c, "invocation": {"server": "s", "tool": "t"}, "result": {"Err": "e"}})),
        (-1i8..3).prop_map(|n| json!({"type": "thread_rolled_back", "num_turns": n})),
        Just(json!({"type": "thread_name_updated", "thread_name": "T"})),
        Just(json!({"model": "gpt-x"})),
        Just(json!({"message": " sum ", "replacement_history": []})),
        Just(Value::Null),
    ];
    let kind = prop_oneof![
        Just("response_item"),
        Just("event_msg"),
        Just("turn_context"),
        Just("compacted"),
        Just("other")
    ];
    let timestamp = prop_oneof![
        Just(json!("2026-01-01T00:00:00Z")),
        Just(json!(1_700_000_000u64)),
        Just(Value::Null)
    ];
    (kind, payload, timestamp)
        .prop_map(|(kind, payload, timestamp)| json!({"type": kind, "payload": payload, "timestamp": timestamp}))
}

/// Gives every record that has a uuid its own (`u<index>`); parents point anywhere in the pool.
fn unique_uuids(mut records: Vec<Value>) -> Vec<Value> {
    for (index, record) in records.iter_mut().enumerate() {
        if record["uuid"] == true {
            record["uuid"] = format!("u{index}").into();
        } else if let Some(map) = record.as_object_mut() {
            map.remove("uuid");
        }
    }
    records
}

/// `claude-<u<i>|line-<n>>-<message|user-<i>|tool-<i>>-<count>`: (record part, count).
fn claude_message_id(id: &str) -> Option<(String, u64)> {
    let rest = id.strip_prefix("claude-")?;
    let (record, rest) = match rest.strip_prefix("line-") {
        Some(after) => {
            let (n, rest) = after.split_once('-')?;
            (format!("line-{n}"), rest)
        }
        None => {
            let (uuid, rest) = rest.split_once('-')?;
            (uuid.to_owned(), rest)
        }
    };
    let rest = rest
        .strip_prefix("message-")
        .or_else(|| {
            rest.strip_prefix("user-")
                .and_then(|r| r.split_once('-').map(|(_, r)| r))
        })
        .or_else(|| {
            rest.strip_prefix("tool-")
                .and_then(|r| r.split_once('-').map(|(_, r)| r))
        })?;
    Some((record, rest.parse().ok()?))
}

fn jsonl(records: &[Value], torn: bool) -> Vec<u8> {
    let mut text: String = records.iter().map(|r| format!("{r}\n")).collect();
    if torn {
        text.push_str("{\"type\":");
    }
    text.into_bytes()
}

fn id(entry: &serde_json::Map<String, Value>) -> String {
    entry["id"].as_str().unwrap().to_owned()
}

/// Imports into a temp folder and reads the file back with our store.
fn import_and_reopen(info: &ForeignSessionInfo, bytes: &[u8]) {
    let loaded = convert(info, bytes, 1_700_000_000_000.0).unwrap();
    let count = loaded.transcript.entries.len();
    let dir = tempfile::tempdir().unwrap();
    let env = Env::new(dir.path().join("home"), dir.path(), dir.path().join("tmp"));
    let options = ImportOptions {
        session_dir: Some(dir.path().join("out")),
        blobs_dir: Some(dir.path().join("blobs")),
        ..ImportOptions::default()
    };
    let title = loaded.transcript.title.clone();
    let imported = write(loaded, info, &env, options).unwrap();
    let (session, diagnostics) = pi_session_store::open(&imported.path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let titled = title.is_some_and(|t| pi_session_types::header::clean_title(&t.title).is_some());
    assert_eq!(session.len(), count + 1 + usize::from(titled));
    assert_eq!(
        session.leaf_id(),
        session.index().last().and_then(|e| e.envelope.id())
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let (records, diagnostics) = read_records(&bytes);
        prop_assert!(records.len() + diagnostics.len() <= bytes.len() + 1);
        for source in [Source::Claude, Source::Codex] {
            let info = ForeignSessionInfo::new(source, "x", "/x.jsonl", "/w");
            let _ = convert(&info, &bytes, 0.0);
        }
    }

    #[test]
    fn claude_entries_keep_order_and_parents(records in prop::collection::vec(claude_record(), 0..24), torn in any::<bool>()) {
        let info = ForeignSessionInfo::new(Source::Claude, "s", "/c/s.jsonl", "/listed");
        let records = unique_uuids(records);
        let bytes = jsonl(&records, torn);
        let Ok(loaded) = convert(&info, &bytes, 1_700_000_000_000.0) else {
            // Only an empty file of nothing but a torn line is refused (no readable records).
            prop_assert!(records.is_empty());
            return Ok(());
        };
        let entries = &loaded.transcript.entries;
        let mut seen = HashSet::new();
        for entry in entries {
            let parent = entry["parentId"].as_str();
            prop_assert!(parent.is_none_or(|p| seen.contains(p)), "parent {parent:?} not written before");
            prop_assert!(seen.insert(id(entry)), "duplicate id {}", id(entry));
        }
        // Messages keep the record order: their running count is 1, 2, 3, ... in file order.
        let messages: Vec<(String, u64)> = entries
            .iter()
            .filter(|e| e["type"] == "message")
            .map(|e| claude_message_id(&id(e)).expect("a message id omp's way"))
            .collect();
        let counts: Vec<u64> = messages.iter().map(|(_, n)| *n).collect();
        prop_assert_eq!(counts, (1..=messages.len() as u64).collect::<Vec<_>>());
        // The messages of one record chain: each is the child of the entry just before it.
        for pair in entries.windows(2) {
            let (Some((a, _)), Some((b, _))) = (claude_message_id(&id(&pair[0])), claude_message_id(&id(&pair[1]))) else {
                continue;
            };
            let before = id(&pair[0]);
            if a == b {
                prop_assert_eq!(pair[1]["parentId"].as_str(), Some(before.as_str()));
            }
        }
        if !entries.is_empty() {
            import_and_reopen(&info, &bytes);
        }
    }

    #[test]
    fn codex_entries_form_one_chain(records in prop::collection::vec(codex_record(), 0..24), torn in any::<bool>()) {
        let mut all = vec![json!({"type": "session_meta", "payload": {"id": "r", "cwd": "/w"}})];
        all.extend(records);
        let info = ForeignSessionInfo::new(Source::Codex, "r", "/c/r.jsonl", "/w");
        let bytes = jsonl(&all, torn);
        let loaded = convert(&info, &bytes, 1_700_000_000_000.0).unwrap();
        let entries = &loaded.transcript.entries;
        let mut previous: Option<(u64, String)> = None;
        for entry in entries {
            let ordinal = u64::from_str_radix(id(entry).strip_prefix("codex-").unwrap(), 36).unwrap();
            match &previous {
                None => prop_assert!(entry["parentId"].is_null()),
                Some((before, before_id)) => {
                    prop_assert!(ordinal > *before);
                    let parent = entry["parentId"].as_str();
                    prop_assert_eq!(parent, Some(before_id.as_str()));
                }
            }
            if entry["type"] == "compaction" {
                prop_assert_eq!(&entry["firstKeptEntryId"], &entry["id"]);
            }
            previous = Some((ordinal, id(entry)));
        }
        import_and_reopen(&info, &bytes);
    }
}
