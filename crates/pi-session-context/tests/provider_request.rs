//! pi-ai's request rules (`provider_request`), one minimal context each. The full proof is
//! `cargo xtask golden` against bodies recorded from the real pi-ai; these pin single rules.

use pi_session_context::provider_request::{
    Api, PiAi, RequestError, RequestOptions, build, build_for, lookup,
};
use serde_json::{Value, json};

fn options(level: &str) -> RequestOptions {
    RequestOptions {
        system_prompt: Some("sys".into()),
        thinking_level: level.into(),
        max_tokens: None,
    }
}

fn body(model: &str, messages: &[Value], level: &str) -> Value {
    let model = lookup(PiAi::Pi, model).unwrap();
    build(messages, &model, PiAi::Pi, &options(level)).unwrap()
}

fn anthropic_call(id: &str) -> Value {
    json!({"role": "assistant", "provider": "openai", "api": "openai-responses", "model": "gpt-5",
        "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "toolCall", "id": id, "name": "ls", "arguments": {}}],
        "stopReason": "toolUse", "timestamp": 1})
}

#[test]
fn cross_model_tool_call_ids_are_normalised_per_api_and_unanswered_calls_get_a_result() {
    let messages = [
        json!({"role": "user", "content": "go", "timestamp": 1}),
        anthropic_call("call_1|fc+x/y"),
    ];
    let anthropic = body("anthropic/claude-sonnet-4-5", &messages, "off");
    let turn = &anthropic["messages"][1]["content"];
    assert_eq!(
        turn[0],
        json!({"type": "text", "text": "hmm"}),
        "foreign thinking becomes text"
    );
    assert_eq!(turn[1]["id"], "call_1_fc_x_y");
    let result = &anthropic["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "call_1_fc_x_y");
    assert_eq!(result["content"], "No result provided");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["cache_control"], json!({"type": "ephemeral"}));
    let chat = body("groq/llama-3.3-70b-versatile", &messages, "off");
    assert_eq!(chat["messages"][2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        chat["tools"],
        json!([]),
        "tool history without tools sends tools: []"
    );
}

#[test]
fn errored_turns_are_skipped_and_images_get_placeholders_without_vision() {
    let messages = [
        json!({"role": "user", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"}], "timestamp": 1}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "partial"}], "stopReason": "error",
            "provider": "x", "api": "y", "model": "z", "timestamp": 2}),
    ];
    let chat = body("groq/llama-3.3-70b-versatile", &messages, "off");
    assert_eq!(
        chat["messages"],
        json!([{"role": "system", "content": "sys"},
               {"role": "user", "content": [{"type": "text", "text": "(image omitted: model does not support images)"}]}])
    );
}

#[test]
fn thinking_level_sets_the_reasoning_keys() {
    let messages = [json!({"role": "user", "content": "hi", "timestamp": 1})];
    let high = body("anthropic/claude-sonnet-4-5", &messages, "high");
    assert_eq!(
        high["thinking"],
        json!({"type": "enabled", "budget_tokens": 16384, "display": "summarized"})
    );
    assert_eq!(
        body("anthropic/claude-sonnet-4-5", &messages, "off")["thinking"],
        json!({"type": "disabled"})
    );
    let responses = body("openai/gpt-5", &messages, "low");
    assert_eq!(
        responses["reasoning"],
        json!({"effort": "low", "summary": "auto"})
    );
    assert_eq!(
        responses["input"][0],
        json!({"role": "developer", "content": "sys"})
    );
    assert!(
        body("openai/gpt-5", &messages, "off")
            .get("reasoning")
            .is_none(),
        "gpt-5 maps off to null"
    );
    let google = body("google/gemini-2.5-pro", &messages, "off");
    assert_eq!(
        google["generationConfig"],
        json!({"thinkingConfig": {"thinkingBudget": 0}})
    );
    let keys: Vec<&String> = google.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["contents", "systemInstruction", "generationConfig"],
        "the SDK's key order"
    );
}

#[test]
fn google_refuses_empty_contents_and_wrong_api_is_named() {
    let model = lookup(PiAi::Pi, "google/gemini-2.5-pro").unwrap();
    let refused = build(&[], &model, PiAi::Pi, &options("off")).unwrap_err();
    assert!(matches!(refused, RequestError::Refused(_)), "{refused}");
    let wrong = build_for(Api::OpenAiChat, &[], &model, PiAi::Pi, &options("off")).unwrap_err();
    assert!(wrong.to_string().contains("--format google"), "{wrong}");
}
