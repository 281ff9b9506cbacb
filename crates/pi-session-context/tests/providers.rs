//! OpenAI and Anthropic request shapes (rho-reqllm.md §C.2–C.3).

use pi_session_context::ProjectOptions;
use pi_session_context::{OpenAiOptions, anthropic_messages, messages, openai_chat_messages};
use serde_json::json;

use crate::common::{assistant, branch, msg, tool_result, user};

const PNG_B64: &str = "iVBORw0KGgo=";

fn session() -> Vec<serde_json::Value> {
    branch(vec![
        user("hi"),
        assistant("", &[("a", "screenshot"), ("b", "read")]),
        msg(
            json!({"role": "toolResult", "toolCallId": "a", "toolName": "screenshot",
            "content": [{"type": "image", "data": PNG_B64, "mimeType": "image/png"}], "isError": false}),
        ),
        tool_result("b", "read", "text"),
        user("thanks"),
    ])
}

#[test]
fn openai_moves_tool_pictures_into_one_user_turn_after_the_run() {
    let projected = messages(&session(), &ProjectOptions::default());
    let out = openai_chat_messages(&projected, OpenAiOptions::default());
    assert_eq!(
        out,
        json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"function": {"arguments": "{\"a\":2,\"b\":1}", "name": "screenshot"}, "id": "a", "type": "function"},
                {"function": {"arguments": "{\"a\":2,\"b\":1}", "name": "read"}, "id": "b", "type": "function"}]},
            {"role": "tool", "content": "(see attached image)", "tool_call_id": "a"},
            {"role": "tool", "content": "text", "tool_call_id": "b"},
            {"role": "user", "content": [
                {"type": "text", "text": "Attached image(s) from tool result:"},
                {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG_B64}")}}]},
            {"role": "user", "content": "thanks"}
        ])
    );
    let bridged = openai_chat_messages(
        &projected,
        OpenAiOptions {
            assistant_after_tool_result: true,
            tool_result_name: true,
        },
    );
    assert_eq!(bridged[2]["name"], "screenshot");
    assert_eq!(
        bridged[4],
        json!({"role": "assistant", "content": "I have processed the tool results."})
    );
}

#[test]
fn anthropic_groups_tool_results_and_drops_empty_text() {
    let projected = messages(&session(), &ProjectOptions::default());
    let out = anthropic_messages(&projected);
    assert_eq!(
        out,
        json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "screenshot", "input": {"a": 2, "b": 1}},
                {"type": "tool_use", "id": "b", "name": "read", "input": {"a": 2, "b": 1}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}]},
                {"type": "tool_result", "tool_use_id": "b", "content": "text"}]},
            {"role": "user", "content": "thanks"}
        ]})
    );
}

#[test]
fn anthropic_undecodable_arguments_become_an_empty_input() {
    let mut projected = messages(
        &branch(vec![assistant("x", &[("c", "t")])]),
        &ProjectOptions::default(),
    );
    projected[0].tool_calls.as_mut().unwrap()[0].arguments = "not json".into();
    let out = anthropic_messages(&projected);
    assert_eq!(out["messages"][0]["content"][1]["input"], json!({}));
    assert_eq!(
        out["messages"][0]["content"][0],
        json!({"type": "text", "text": "x"})
    );
}
