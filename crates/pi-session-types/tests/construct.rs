//! Entries built in Rust (struct literal + `set_envelope`, as the store's append does) are
//! written in the key order omp (else pi) writes them.

use pi_session_types::{
    AgentMessage, AssistantMessage, Content, ContentBlock, CustomEntry, CustomMessageEntry, Entry,
    EntryEnvelope, Field, IsoTimestamp, LabelEntry, MessageEntry, ModelChangeEntry, StopReason,
    TextBlock, ThinkingLevelChangeEntry, Usage, UserMessage, to_js_string,
};
use serde_json::json;

fn stamp(entry: &mut Entry, parent: Option<&str>) {
    entry.set_envelope(
        "a1b2c3d4".into(),
        parent.map(str::to_string),
        IsoTimestamp::new("2026-01-15T09:00:05.000Z"),
    );
}

#[test]
fn built_entries_use_the_writers_key_order() {
    let mut cases: Vec<(Entry, &str)> = vec![
        (
            Entry::ModelChange(ModelChangeEntry {
                model: Some("anthropic/claude-sonnet-4-5".into()),
                role: Some("default".into()),
                resolved_model_is_fallback: Some(false),
                ..Default::default()
            }),
            r#"{"type":"model_change","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-15T09:00:05.000Z","model":"anthropic/claude-sonnet-4-5","role":"default","resolvedModelIsFallback":false}"#,
        ),
        (
            Entry::ThinkingLevelChange(ThinkingLevelChangeEntry {
                thinking_level: Field::Value("medium".into()),
                configured: Field::Null,
                ..Default::default()
            }),
            r#"{"type":"thinking_level_change","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-15T09:00:05.000Z","thinkingLevel":"medium","configured":null}"#,
        ),
        (
            Entry::Custom(CustomEntry {
                custom_type: Some("experimental_context_notes".into()),
                data: Some(json!({"version": 1, "text": "- tabs"})),
                ..Default::default()
            }),
            r#"{"type":"custom","customType":"experimental_context_notes","data":{"version":1,"text":"- tabs"},"id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-15T09:00:05.000Z"}"#,
        ),
        (
            Entry::CustomMessage(CustomMessageEntry {
                custom_type: Some("reminder".into()),
                content: Content::Text("Run the tests.".into()),
                display: Some(true),
                attribution: Some("agent".into()),
                ..Default::default()
            }),
            r#"{"type":"custom_message","customType":"reminder","content":"Run the tests.","display":true,"attribution":"agent","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-15T09:00:05.000Z"}"#,
        ),
        (
            Entry::Label(LabelEntry { target_id: Some("e1".into()), label: None, ..Default::default() }),
            r#"{"type":"label","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-15T09:00:05.000Z","targetId":"e1"}"#,
        ),
        (
            Entry::Message(MessageEntry {
                message: AgentMessage::User(UserMessage {
                    content: Content::Blocks(vec![ContentBlock::Text(TextBlock::new("hi"))]),
                    attribution: Some("user".into()),
                    timestamp: Some(serde_json::Number::from(1768467602000u64).into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-15T09:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"attribution":"user","timestamp":1768467602000}}"#,
        ),
        (
            Entry::Message(MessageEntry {
                message: AgentMessage::Assistant(AssistantMessage {
                    content: Content::Blocks(vec![]),
                    api: Some("anthropic-messages".into()),
                    provider: Some("anthropic".into()),
                    model: Some("claude".into()),
                    usage: Some(serde_json::from_value::<Usage>(json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}})).unwrap()),
                    stop_reason: Some(StopReason::Aborted),
                    timestamp: Some(serde_json::Number::from(1u8).into()),
                    error_message: Some("Previous OMP process exited before completing the turn.".into()),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            r#"{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-15T09:00:05.000Z","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"aborted","timestamp":1,"errorMessage":"Previous OMP process exited before completing the turn."}}"#,
        ),
    ];
    for (entry, expected) in &mut cases {
        stamp(entry, None);
        assert_eq!(to_js_string(entry).unwrap(), *expected);
        assert_eq!(entry.id(), Some("a1b2c3d4"));
        assert_eq!(entry.parent_id(), None);
        // Parsing the written line gives the same typed value back.
        let reparsed = pi_session_types::parse_line(expected.as_bytes()).unwrap();
        assert_eq!(reparsed.value.as_entry(), Some(&*entry));
        assert!(reparsed.warnings.is_empty());
    }
}

#[test]
fn set_envelope_on_unknown_entries_and_parents() {
    let mut entry = Entry::from_map(serde_json::from_str(r#"{"type":"future","x":1}"#).unwrap());
    stamp(&mut entry, Some("p1"));
    assert_eq!(
        to_js_string(&entry).unwrap(),
        r#"{"type":"future","x":1,"id":"a1b2c3d4","parentId":"p1","timestamp":"2026-01-15T09:00:05.000Z"}"#
    );
    assert_eq!((entry.kind(), entry.parent_id()), ("future", Some("p1")));
    let mut label = LabelEntry::default();
    label.set_envelope("x".into(), Some("y".into()), IsoTimestamp::new("t"));
    assert_eq!(label.parent_id, Field::Value("y".to_string()));
    assert_eq!(EntryEnvelope::kind(&label), "label");
}

#[test]
fn accessors_default_and_split() {
    let change = ModelChangeEntry {
        provider: Some("p".into()),
        model_id: Some("m/x".into()),
        ..Default::default()
    };
    assert_eq!(change.provider_and_model_id(), Some(("p", "m/x")));
    assert_eq!(change.role_or_default(), "default");
    let usage: Usage = serde_json::from_value(
        json!({"input":3,"output":10.0,"reasoning":4,"cacheWrite":5,"cacheWrite1h":2}),
    )
    .unwrap();
    assert_eq!(
        (
            usage.input(),
            usage.output(),
            usage.reasoning(),
            usage.cache_write_1h(),
            usage.total_tokens()
        ),
        (3, 10, 4, 2, 0)
    );
    assert_eq!(usage.cost_total(), 0.0);
    let omp_usage: Usage =
        serde_json::from_value(json!({"output":10,"reasoningTokens":7})).unwrap();
    assert_eq!(omp_usage.reasoning(), 7);
    assert_eq!(StopReason::from("weird"), StopReason::Other("weird".into()));
    assert_eq!(StopReason::from("pending").as_str(), "pending");
}
