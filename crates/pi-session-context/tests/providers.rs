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

/// A call's `input` is its arguments as `serde_json` reads them (an object), whatever reader
/// reads them first; anything else gives `{}`.
#[test]
fn anthropic_reads_arguments_as_serde_json_does() {
    for arguments in [
        r#"{"b":1,"a":[2,{"c":null}]}"#,
        r#" { "b" : 1.50 , "a\u0041" : "x\ny\u00e9" } "#,
        r#"{"a":"\ud83d\ude00"}"#,
        r#"{"a":"\ud83d"}"#,
        r#"{"a":1e400}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"a":1} x"#,
        "[1]",
        "\"s\"",
        "{",
        "",
    ] {
        let mut projected = messages(
            &branch(vec![assistant("x", &[("c", "t")])]),
            &ProjectOptions::default(),
        );
        projected[0].tool_calls.as_mut().unwrap()[0].arguments = arguments.into();
        let out = anthropic_messages(&projected);
        let expected = serde_json::from_str::<serde_json::Value>(arguments)
            .ok()
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| json!({}));
        assert_eq!(
            out["messages"][0]["content"][1]["input"], expected,
            "{arguments}"
        );
    }
}

/// Messages with every kind of part, several texts (one empty) in a tool result, names and
/// ids: what a stream moves out of a message it owns.
fn every_part() -> Vec<pi_session_context::reqllm::Message> {
    use pi_session_context::reqllm::{ContentPart, Message, Role, ToolCall};
    let mut parts = vec![
        ContentPart::text("a"),
        ContentPart::image(vec![1, 2, 3], Some("image/png".into())),
        ContentPart::text(""),
        ContentPart::thinking("hm"),
        ContentPart::image_url("https://x/y.png"),
        ContentPart::file(vec![4], "a.pdf", "application/pdf", Default::default()),
        ContentPart::text("b"),
    ];
    parts.push(ContentPart {
        text: None,
        ..ContentPart::text("")
    });
    let mut system = Message::system_text("be brief");
    system.content.push(ContentPart::text("twice"));
    let calls = vec![ToolCall {
        id: "c1".into(),
        name: Some("read".into()),
        arguments: r#"{"path":"x"}"#.into(),
    }];
    let mut named = Message::tool_result("c2", Some("grep".into()), parts.clone());
    named.role = Role::Tool;
    vec![
        system,
        Message::user(parts.clone()),
        Message::assistant("one text", calls),
        Message::tool_result("c1", Some("read".into()), parts.clone()),
        named,
        Message::tool_result("c3", None, vec![ContentPart::thinking("only")]),
        Message::user_text("lone"),
        Message::assistant("  ", Vec::new()),
        Message::user(parts),
    ]
}

/// A stream's `each` that gathers what it is given into `out`.
fn into<T>(out: &mut Vec<T>) -> impl FnMut(T) -> Result<(), ()> + '_ {
    |value| {
        out.push(value);
        Ok(())
    }
}

/// OpenAI's stream with its switches off and on.
const OPENAI_SWITCHES: [OpenAiOptions; 2] = [
    OpenAiOptions {
        assistant_after_tool_result: false,
        tool_result_name: false,
    },
    OpenAiOptions {
        assistant_after_tool_result: true,
        tool_result_name: true,
    },
];

#[test]
fn a_stream_gives_the_same_messages_for_a_message_lent_or_given() {
    use pi_session_context::providers::{AnthropicStream, OpenAiStream};
    let messages = every_part();
    for options in OPENAI_SWITCHES {
        let (mut lent, mut given): (Vec<serde_json::Value>, Vec<serde_json::Value>) =
            (Vec::new(), Vec::new());
        let (mut by_ref, mut by_value) = (OpenAiStream::new(options), OpenAiStream::new(options));
        for message in &messages {
            let before = message.clone();
            by_ref.push(message, &mut into(&mut lent)).unwrap();
            assert_eq!(message, &before, "a lent message is left as it was");
            by_value
                .push(message.clone(), &mut into(&mut given))
                .unwrap();
        }
        by_ref.finish(&mut into(&mut lent)).unwrap();
        by_value.finish(&mut into(&mut given)).unwrap();
        assert_eq!(lent, given);
        // Every part in its place (thinking dropped), a text without one as `""`.
        assert_eq!(
            lent[1]["content"],
            json!([
                {"type": "text", "text": "a"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AQID"}},
                {"type": "text", "text": ""},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                {"type": "file", "file": {"filename": "a.pdf",
                    "file_data": "data:application/pdf;base64,BA=="}},
                {"type": "text", "text": "b"},
                {"type": "text", "text": ""},
            ])
        );
        // The texts of a tool result are joined with a newline, the empty one included.
        assert!(
            lent.iter().any(|m| m["content"] == json!("a\n\nb")),
            "{lent:?}"
        );
        assert!(lent.iter().any(|m| m["name"] == json!("grep")) == options.tool_result_name);
    }
    let (mut lent, mut given): (Vec<serde_json::Value>, Vec<serde_json::Value>) =
        (Vec::new(), Vec::new());
    let (mut by_ref, mut by_value) = (AnthropicStream::default(), AnthropicStream::default());
    for message in &messages {
        by_ref.push(message, &mut into(&mut lent)).unwrap();
        by_value
            .push(message.clone(), &mut into(&mut given))
            .unwrap();
    }
    let system = by_ref.finish(&mut into(&mut lent)).unwrap();
    assert_eq!(by_value.finish(&mut into(&mut given)).unwrap(), system);
    assert_eq!(lent, given);
    assert_eq!(system.len(), 2);
    let blocks = |m: &serde_json::Value| m["content"].as_array().cloned().unwrap_or_default();
    assert!(
        lent.iter()
            .flat_map(blocks)
            .any(|block| block == json!({"type": "thinking", "thinking": "hm"}))
    );
    // The whole-answer functions give what the streams give.
    assert_eq!(
        anthropic_messages(&messages)["messages"],
        serde_json::Value::Array(lent)
    );
    assert_eq!(
        openai_chat_messages(&messages, OpenAiOptions::default()),
        openai_chat_messages(messages.clone(), OpenAiOptions::default())
    );
}

/// A stream's request messages taken as it makes them ([`Element`]) are written as those it
/// gives as values are, byte for byte, and are those values: every kind of part, calls with and
/// without a name, a failed tool result, both OpenAI switches.
#[test]
fn elements_are_written_as_the_values_the_streams_give() {
    use pi_session_context::providers::{AnthropicStream, Element, OpenAiStream};
    use pi_session_context::reqllm::{Message, ToolCall};
    use pi_session_types::json::to_js_vec;
    let mut messages = every_part();
    let mut failed = Message::tool_result("c4", None, Vec::new());
    failed.metadata.insert("is_error".into(), json!(true));
    messages.push(Message::assistant(
        "",
        vec![
            ToolCall {
                id: "c4".into(),
                name: None,
                arguments: r#"{"b":[1,2],"a":"\u00e9"}"#.into(),
            },
            ToolCall {
                id: "c5".into(),
                name: Some("ls".into()),
                arguments: "[]".into(),
            },
            // Keys `JSON.stringify` moves to the front.
            ToolCall {
                id: "c6".into(),
                name: Some("put".into()),
                arguments: r#"{"b":0,"2":"x","1":{"z":1,"0":2}}"#.into(),
            },
        ],
    ));
    messages.push(failed);
    let same = |elements: Vec<Element>, values: &[serde_json::Value]| {
        assert_eq!(elements.len(), values.len());
        for (element, value) in elements.into_iter().zip(values) {
            assert_eq!(
                String::from_utf8(to_js_vec(&element).unwrap()).unwrap(),
                String::from_utf8(to_js_vec(value).unwrap()).unwrap()
            );
            assert_eq!(&element.into_value(), value);
        }
    };
    for options in OPENAI_SWITCHES {
        let (mut values, mut elements): (Vec<serde_json::Value>, Vec<Element>) =
            (Vec::new(), Vec::new());
        let (mut by_value, mut by_element) =
            (OpenAiStream::new(options), OpenAiStream::new(options));
        for message in &messages {
            by_value.push(message, &mut into(&mut values)).unwrap();
            by_element.push(message, &mut into(&mut elements)).unwrap();
        }
        by_value.finish(&mut into(&mut values)).unwrap();
        by_element.finish(&mut into(&mut elements)).unwrap();
        same(elements, &values);
    }
    let (mut values, mut elements): (Vec<serde_json::Value>, Vec<Element>) =
        (Vec::new(), Vec::new());
    let (mut by_value, mut by_element) = (AnthropicStream::default(), AnthropicStream::default());
    for message in &messages {
        by_value.push(message, &mut into(&mut values)).unwrap();
        by_element.push(message, &mut into(&mut elements)).unwrap();
    }
    let system = by_value.finish(&mut into(&mut values)).unwrap();
    assert_eq!(system.len(), 2, "the system blocks come back apart");
    let none = by_element.finish(&mut into(&mut elements)).unwrap();
    assert_eq!(none, system);
    assert!(
        values
            .iter()
            .any(|m| m["content"][0]["is_error"] == json!(true)),
        "{values:?}"
    );
    same(elements, &values);
}
