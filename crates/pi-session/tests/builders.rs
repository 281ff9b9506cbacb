//! Entry builders and reading helpers (rho-reqllm.md §A.6, §A.7, §A.2).

use pi_session::types::{AgentMessage, Entry, JsonValue, StopReason, to_js_string};
use pi_session::{
    AttachedFile, AttachmentKind, NoticeKind, Picture, Reply, ToolCall, UserOptions,
    aborted_tool_text, assistant, attachments, compaction, custom, custom_in, model_change,
    notice_kind, text, thinking, title_for, tool_calls, tool_result, typed, user,
};
use serde_json::json;

/// The entry as JSON, with the message timestamp (the clock) replaced by 0.
fn json_of(entry: &Entry) -> JsonValue {
    let mut value = serde_json::to_value(entry).unwrap();
    if let Some(message) = value.get_mut("message").and_then(JsonValue::as_object_mut) {
        assert!(
            message["timestamp"].as_i64().unwrap() > 1_600_000_000_000,
            "timestamp in ms"
        );
        message.insert("timestamp".into(), json!(0));
    }
    value
}

fn picture() -> AttachedFile {
    AttachedFile::new(
        AttachmentKind::Image,
        "cat \"1\".png",
        "image/png",
        "/w/cat.png",
    )
    .about("2×2 px")
    .image(vec![1, 2, 3])
}

#[test]
fn user_with_attachments_writes_envelopes_then_pictures() {
    let pdf = AttachedFile::new(
        AttachmentKind::Pdf,
        "spec.pdf",
        "application/pdf",
        "/w/spec.pdf",
    )
    .about("3 pages")
    .pages(3);
    let empty = AttachedFile::new(
        AttachmentKind::File,
        "blob.bin",
        "application/octet-stream",
        "/w/blob.bin",
    );
    let entry = user(
        "look",
        UserOptions::new()
            .attach(picture())
            .attach(pdf)
            .attach(empty)
            .steering(true)
            .ask("q-7", "phone-2"),
    );
    assert!(!entry.is_unknown(), "{:?}", entry.fallback_reasons());
    assert_eq!(
        json_of(&entry),
        json!({"type":"message","message":{
            "role":"user",
            "content":[
                {"type":"text","text":"look"},
                {"type":"text","text":"<attachment name=\"cat '1'.png\" type=\"image/png\" path=\"/w/cat.png\">\n2×2 px\n</attachment>"},
                {"type":"image","data":"AQID","mimeType":"image/png"},
                {"type":"text","text":"<attachment name=\"spec.pdf\" type=\"application/pdf\" path=\"/w/spec.pdf\">\n3 pages\n</attachment>"},
                {"type":"text","text":"<attachment name=\"blob.bin\" type=\"application/octet-stream\" path=\"/w/blob.bin\">\n\n</attachment>"}
            ],
            "steering":true,
            "attribution":"user",
            "timestamp":0,
            "attachments":[
                {"kind":"image","name":"cat \"1\".png","path":"/w/cat.png","mimeType":"image/png","about":"2×2 px"},
                {"kind":"pdf","name":"spec.pdf","path":"/w/spec.pdf","mimeType":"application/pdf","about":"3 pages","pages":3},
                {"kind":"file","name":"blob.bin","path":"/w/blob.bin","mimeType":"application/octet-stream","about":""}
            ],
            "ask":"q-7",
            "from":"phone-2"
        }})
    );
    let message = entry.message().unwrap();
    assert_eq!(typed(message), "look");
    assert_eq!(attachments(message).len(), 3);
    assert_eq!(title_for(&entry), "look");
}

#[test]
fn user_fields_appear_only_when_asked_for() {
    let entry = user(
        "",
        UserOptions {
            ask: Some("q".into()),
            ..UserOptions::default()
        },
    );
    let message = &json_of(&entry)["message"];
    assert_eq!(
        message["content"],
        json!([]),
        "empty typed text is left out"
    );
    assert_eq!(
        message["from"],
        json!(""),
        "a missing `from` is written as \"\""
    );
    for absent in ["attachments", "steering"] {
        assert!(message.get(absent).is_none(), "{absent} must be absent");
    }
    let plain = json_of(&user("hi", UserOptions::new()));
    for absent in ["attachments", "steering", "ask", "from"] {
        assert!(
            plain["message"].get(absent).is_none(),
            "{absent} must be absent"
        );
    }
}

#[test]
fn typed_drops_one_envelope_per_attachment() {
    let entry = user("", UserOptions::new().attach(picture()));
    let message = entry.message().unwrap();
    assert_eq!(typed(message), "");
    assert!(
        text(match message {
            AgentMessage::User(u) => &u.content,
            _ => unreachable!(),
        })
        .starts_with("<attachment name=")
    );
    // The title falls back to the attachment names.
    let two = user("", UserOptions::new().attach(picture()).attach(picture()));
    assert_eq!(title_for(&two), "cat \"1\".png, cat \"1\".png");
}

#[test]
fn titles_take_the_first_line_and_sixty_graphemes() {
    let long = "é".repeat(70); // e + combining acute: one grapheme, two chars
    let cases = [
        ("first\nsecond", "first".to_owned()),
        (long.as_str(), "é".repeat(60)),
        ("👩‍👩‍👧 family", "👩‍👩‍👧 family".to_owned()),
    ];
    for (typed_text, expected) in cases {
        assert_eq!(title_for(&user(typed_text, UserOptions::new())), expected);
    }
    assert_eq!(title_for(&custom(NoticeKind::Notice, "x")), "");
}

#[test]
fn assistant_writes_parts_in_rhos_order() {
    let reply = Reply {
        thinking: "hmm".into(),
        text: "here".into(),
        images: vec![Picture::new(vec![255], "image/webp")],
        tool_calls: vec![ToolCall::new("c1", "bash", json!({"cmd": "ls"}))],
        usage: json!({"input_tokens": 3, "output_tokens": 4})
            .as_object()
            .unwrap()
            .clone(),
        stop_reason: StopReason::Error,
        error: Some("boom".into()),
        api: None,
    };
    let entry = assistant(&reply, "anthropic:claude-opus-4-5");
    assert!(!entry.is_unknown(), "{:?}", entry.fallback_reasons());
    assert_eq!(
        json_of(&entry)["message"],
        json!({
            "role":"assistant",
            "content":[
                {"type":"thinking","thinking":"hmm"},
                {"type":"text","text":"here"},
                {"type":"image","data":"/w==","mimeType":"image/webp"},
                {"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":"ls"}}
            ],
            "api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5",
            "usage":{"input":3,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,
                     "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},
            "stopReason":"error","timestamp":0,"errorMessage":"boom"
        })
    );
    let message = entry.message().unwrap();
    assert_eq!(thinking(message), "hmm");
    assert_eq!(
        tool_calls(message)
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        ["c1"]
    );
    let empty = json_of(&assistant(&Reply::default(), "gpt-5"));
    assert_eq!(empty["message"]["content"], json!([]));
    assert_eq!(empty["message"]["provider"], json!("unknown"));
    assert_eq!(empty["message"]["stopReason"], json!("stop"));
    assert!(empty["message"].get("errorMessage").is_none());
}

#[test]
fn tool_results_always_carry_a_text_part() {
    let entry = tool_result(
        "c1",
        "shot",
        "",
        true,
        &[Picture::new(vec![0], "image/png")],
        Some(json!({"exit": 1})),
    );
    assert!(!entry.is_unknown(), "{:?}", entry.fallback_reasons());
    assert_eq!(
        json_of(&entry)["message"],
        json!({"role":"toolResult","toolCallId":"c1","toolName":"shot",
               "content":[{"type":"text","text":""},{"type":"image","data":"AA==","mimeType":"image/png"}],
               "details":{"exit":1},"isError":true,"timestamp":0})
    );
    let plain = json_of(&tool_result("c2", "ls", "a", false, &[], None));
    assert!(plain["message"].get("details").is_none());
    assert_eq!(
        aborted_tool_text(),
        "Tool was not executed because the run was aborted."
    );
}

#[test]
fn notices_are_custom_messages_in_a_namespace() {
    let entry = custom(NoticeKind::Notice, "Stopped by the user.");
    assert_eq!(
        serde_json::to_value(&entry).unwrap(),
        json!({"type":"custom_message","customType":"rho.notice","content":"Stopped by the user.","display":true,"attribution":"agent"})
    );
    assert_eq!(notice_kind(&entry), Some(NoticeKind::Notice));
    for kind in [NoticeKind::Notice, NoticeKind::Error, NoticeKind::Aside] {
        assert_eq!(notice_kind(&custom_in("operator", kind, "x")), Some(kind));
    }
    let other = Entry::from_map(
        json!({"type":"custom_message","customType":"rho.consult","content":"x"})
            .as_object()
            .unwrap()
            .clone(),
    );
    assert_eq!(notice_kind(&other), None);
    let bare = Entry::from_map(
        json!({"type":"custom_message","customType":".notice","content":"x"})
            .as_object()
            .unwrap()
            .clone(),
    );
    assert_eq!(notice_kind(&bare), None);
}

#[test]
fn compaction_and_model_change_are_exact() {
    assert_eq!(
        to_js_string(&compaction("S", "abcd1234", 5000, 700)).unwrap(),
        r#"{"type":"compaction","summary":"S","firstKeptEntryId":"abcd1234","tokensBefore":5000,"tokensAfter":700,"method":"soft","fromExtension":false}"#
    );
    assert_eq!(
        to_js_string(&model_change("anthropic:claude-x")).unwrap(),
        r#"{"type":"model_change","model":"anthropic/claude-x"}"#
    );
}
