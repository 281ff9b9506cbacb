//! Odd input never panics: arbitrary JSON shaped loosely like entries and
//! messages goes through every projection, and rho's output stays valid for
//! a provider.

use pi_session_context::ProjectOptions;
use pi_session_context::rho::Inputs;
use pi_session_context::{
    Dialect, OpenAiOptions, anthropic_messages, context, llm_messages, openai_chat_messages,
};
use pi_session_context::{OmpAgentLoopOptions, OmpImageGate};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::common::assert_valid_for_provider;

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z ]{0,6}".prop_map(Value::from),
        prop::sample::select(vec![
            "text",
            "image",
            "thinking",
            "toolCall",
            "user",
            "assistant",
            "toolResult",
            "custom",
            "developer",
            "bashExecution",
            "compactionSummary",
            "branchSummary",
            "message",
            "custom_message",
            "compaction",
            "aborted",
            "Interrupted by user",
            "c1",
            "c2",
            "e1",
            "pdf",
            "iVBORw0KGgo=",
            "  ",
            "collab-prompt",
            "handoff",
        ])
        .prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let keys = prop::sample::select(vec![
        "type",
        "role",
        "content",
        "text",
        "thinking",
        "id",
        "name",
        "arguments",
        "toolCallId",
        "toolName",
        "message",
        "summary",
        "firstKeptEntryId",
        "attachments",
        "kind",
        "path",
        "data",
        "mimeType",
        "stopReason",
        "retryRecovery",
        "customType",
        "attribution",
        "prunedAt",
        "excludeFromContext",
        "command",
        "output",
        "exitCode",
        "meta",
        "files",
        "image",
        "blocks",
        "errorMessage",
        "steering",
        "method",
        "images",
        "timestamp",
    ]);
    leaf().prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|pairs| {
                Value::Object(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_input_never_panics(items in prop::collection::vec(json_value(), 0..8)) {
        // As entries: wrap some in message envelopes so the deeper paths run.
        let entries: Vec<Value> = items
            .iter()
            .enumerate()
            .map(|(i, v)| if i % 2 == 0 { json!({"type": "message", "id": format!("e{i}"), "message": v}) } else { v.clone() })
            .collect();
        for inputs in ["text", "text,image", "text,image,pdf"] {
            let options = ProjectOptions { inputs: inputs.parse::<Inputs>().unwrap(), ..ProjectOptions::default() };
            let out = context(&entries, &options);
            assert_valid_for_provider(&out, "arbitrary");
            let _ = openai_chat_messages(&out, OpenAiOptions::default());
            let _ = anthropic_messages(&out);
        }
        // As agent messages.
        let _ = llm_messages(&items, Dialect::PI);
        let _ = llm_messages(&items, Dialect::OMP);
        let _ = pi_session_context::dialect::omp::convert::omp_wrap_steering(&items);
        let _ = pi_session_context::dialect::omp::convert::omp_replace_images_with_text(&items, "x");
        let kept = pi_session_context::dialect::omp::convert::omp_filter_provider_replay(&items);
        prop_assert!(kept.len() <= items.len());
        for gate in [OmpImageGate::Allow, OmpImageGate::Blocked, OmpImageGate::ModelWithoutImages] {
            let options = OmpAgentLoopOptions::default().with_images(gate);
            let sent = pi_session_context::omp_agent_loop_messages(&items, &options);
            prop_assert!(!sent.iter().any(pi_session_context::dialect::omp::convert::omp_is_provider_refusal));
        }
    }
}
