//! rho's projection rules (rho-reqllm.md §A.8, §C.4), one minimal session each.

use std::fs;

use pi_session_context::ProjectOptions;
use pi_session_context::reqllm::{PartType, to_canonical_json};
use pi_session_context::rho::{self, Inputs};
use pi_session_context::{Role, WorkspaceDocuments, context, messages};
use serde_json::json;

use crate::common::{assistant, branch, msg, outline, tool_result, user};

#[test]
fn compaction_summary_is_rendered_byte_exact_and_comes_first() {
    let entries = branch(vec![
        user("old question"),
        assistant("old answer", &[]),
        user("kept question"),
        json!({"type": "compaction", "summary": "Did X.\n\nThen Y.", "firstKeptEntryId": "e3",
               "tokensBefore": 10, "tokensAfter": 2, "method": "soft", "fromExtension": false}),
        user("after"),
    ]);
    let out = context(&entries, &ProjectOptions::default());
    assert_eq!(out[0].role, Role::User);
    assert_eq!(out[0].content.len(), 1);
    assert_eq!(
        out[0].text(),
        "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\nDid X.\n\nThen Y.\n</summary>"
    );
    assert_eq!(outline(&out)[1..], ["user: kept question", "user: after"]);
}

#[test]
fn summary_lists_attachments_it_took_away() {
    let with_attachments = msg(json!({"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "text", "text": "<attachment name=\"r.pdf\" type=\"application/pdf\" path=\"docs/r.pdf\">\n12 pages\n</attachment>"}],
        "attachments": [
            {"kind": "pdf", "name": "r.pdf", "path": "docs/r.pdf", "mimeType": "application/pdf", "about": "12 pages", "pages": 12},
            {"kind": "file", "name": "x.bin", "path": "x.bin", "mimeType": "application/octet-stream"}]}));
    let assistant_with_attachments = msg(
        json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
        "attachments": [{"name": "not-a-user.png"}]}),
    );
    let entries = branch(vec![
        with_attachments,
        assistant_with_attachments,
        json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "missing"}),
        user("next"),
    ]);
    let out = context(&entries, &ProjectOptions::default());
    assert_eq!(
        out[0].text(),
        "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\nS\n</summary>\n\nFiles the user attached before this summary (still in the workspace; read them again with file_read):\n- r.pdf (application/pdf) at docs/r.pdf: 12 pages\n- x.bin (application/octet-stream) at x.bin: "
    );
    assert_eq!(outline(&out)[1..], ["user: next"]);
}

/// rho's context given in parts (`rho::ContextParts`: the head up to the compaction, without
/// its kept range, the ids of the entries after it, then the rest in parts of every size) is
/// `context` of the whole branch: the summary's note leaves out an attachment taken away whose
/// entry shares its id with an entry sent later, and calls left unanswered across a part's
/// border are closed where `context` closes them.
#[test]
fn context_in_parts_is_the_context_of_the_whole_branch() {
    let attached = |id: &str, name: &str| {
        let mut entry = msg(json!({"role": "user", "content": "see",
            "attachments": [{"name": name, "mimeType": "text/plain", "path": name}]}));
        entry["id"] = json!(id);
        entry
    };
    let mut shares_id = user("sent later, same id as an entry taken away");
    shares_id["id"] = json!("dup");
    let entries = branch(vec![
        attached("a1", "away.txt"),
        attached("dup", "hidden.txt"),
        user("kept"),
        assistant("calls", &[("c1", "read")]),
        json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "e3"}),
        user("after"),
        assistant("more", &[("c2", "read")]),
        shares_id,
        tool_result("c2", "read", "late result"),
    ]);
    let options = ProjectOptions::default();
    let whole = context(&entries, &options);
    assert!(whole[0].text().contains("away.txt") && !whole[0].text().contains("hidden.txt"));
    let compaction = 4;
    let head: Vec<_> = vec![
        entries[0].clone(),
        entries[1].clone(),
        entries[compaction].clone(),
    ];
    let rest: Vec<_> = entries[2..compaction]
        .iter()
        .chain(&entries[compaction + 1..])
        .cloned()
        .collect();
    for size in 1..=rest.len() {
        let mut parts = rho::ContextParts::new(&options).unwrap();
        let mut given = Vec::new();
        let mut each = |m| {
            given.push(m);
            Ok::<_, ()>(())
        };
        let ids = rest.iter().map(|e| e["id"].as_str());
        parts.head(&head, ids, &mut each).unwrap();
        for part in rest.chunks(size) {
            parts.part(part, &mut each).unwrap();
        }
        parts.finish(&mut each).unwrap();
        assert_eq!(given, whole, "parts of {size}");
    }
}

#[test]
fn kept_attachments_are_not_listed_and_no_note_without_attachments() {
    let entries = branch(vec![
        msg(json!({"role": "user", "content": "a", "attachments": [{"name": "kept.txt"}]})),
        json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "e1"}),
    ]);
    let out = context(&entries, &ProjectOptions::default());
    assert!(out[0].text().ends_with("<summary>\nS\n</summary>"));
    assert_eq!(outline(&out)[1..], ["user: a"]);
}

#[test]
fn latest_compaction_wins_and_one_without_summary_adds_no_message() {
    let entries = branch(vec![
        user("one"),
        json!({"type": "compaction", "summary": "first", "firstKeptEntryId": "e1"}),
        user("two"),
        json!({"type": "compaction", "summary": null, "firstKeptEntryId": "e3"}),
        user("three"),
    ]);
    let out = context(&entries, &ProjectOptions::default());
    assert_eq!(outline(&out), ["user: two", "user: three"]);
}

#[test]
fn dangling_tool_calls_across_several_assistant_turns_get_aborted_results_in_call_order() {
    let entries = branch(vec![
        user("go"),
        assistant("", &[("c1", "read"), ("c2", "grep"), ("c3", "ls")]),
        tool_result("c2", "grep", "found"),
        assistant("second", &[("c4", "edit")]),
        user("interrupt"),
        assistant("", &[("c5", "bash"), ("c6", "read")]),
        tool_result("c6", "read", "six"),
    ]);
    let out = messages(&entries, &ProjectOptions::default());
    let aborted = rho::ABORTED_TOOL_TEXT;
    assert_eq!(
        outline(&out),
        [
            "user: go".to_owned(),
            "assistant:  [c1,c2,c3]".to_owned(),
            "tool c2: found".to_owned(),
            format!("tool c1: {aborted}"),
            format!("tool c3: {aborted}"),
            "assistant: second [c4]".to_owned(),
            format!("tool c4: {aborted}"),
            "user: interrupt".to_owned(),
            "assistant:  [c5,c6]".to_owned(),
            "tool c6: six".to_owned(),
            format!("tool c5: {aborted}"),
        ]
    );
    assert_eq!(out[3].name.as_deref(), Some("read"));
    assert_eq!(
        rho::ABORTED_TOOL_TEXT,
        "Tool was not executed because the run was aborted."
    );
}

#[test]
fn orphan_tool_results_are_kept() {
    let entries = branch(vec![user("hi"), tool_result("ghost", "read", "stale")]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(outline(&out), ["user: hi", "tool ghost: stale"]);
}

#[test]
fn thinking_is_never_sent_back_and_empty_turns_are_dropped() {
    let entries = branch(vec![
        user("q"),
        msg(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "secret", "thinkingSignature": "sig"},
            {"type": "text", "text": "answer"}], "stopReason": "stop"})),
        msg(
            json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "only thinking"}], "stopReason": "aborted"}),
        ),
        msg(
            json!({"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "boom"}),
        ),
        msg(
            json!({"role": "assistant", "content": [{"type": "text", "text": ""}], "stopReason": "error"}),
        ),
    ]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(outline(&out), ["user: q", "assistant: answer"]);
    let json = to_canonical_json(&out).to_string();
    assert!(
        !json.contains("secret") && !json.contains("thinking"),
        "{json}"
    );
}

#[test]
fn retry_recovery_turns_are_dropped_whatever_they_hold() {
    let entries = branch(vec![
        user("q"),
        msg(
            json!({"role": "assistant", "content": [{"type": "text", "text": "partial"},
            {"type": "toolCall", "id": "r1", "name": "read", "arguments": {}}], "stopReason": "error",
            "retryRecovery": {"kind": "auto-retry", "status": "recovered", "attempt": 1}}),
        ),
        assistant("final", &[]),
    ]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(outline(&out), ["user: q", "assistant: final"]);
}

#[test]
fn whitespace_only_assistant_text_gives_empty_content_but_keeps_calls() {
    let entries = branch(vec![
        msg(
            json!({"role": "assistant", "content": [{"type": "text", "text": "  \n"},
            {"type": "toolCall", "id": "c", "name": "ls", "arguments": null}]}),
        ),
        tool_result("c", "ls", ""),
    ]);
    let out = messages(&entries, &ProjectOptions::default());
    assert!(out[0].content.is_empty());
    let calls = out[0].tool_calls.as_ref().unwrap();
    assert_eq!(calls[0].arguments, "{}");
    assert_eq!(
        out[1].content[0].text.as_deref(),
        Some(""),
        "a tool result keeps its text part even when empty"
    );
}

#[test]
fn tool_arguments_are_re_encoded_with_sorted_keys() {
    let entries = branch(vec![msg(json!({"role": "assistant", "content": [
        {"type": "toolCall", "id": "c", "name": "edit", "arguments": {"z": {"y": 1, "x": [true, null]}, "a": "é/\u{1F600}"}}]}))]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(
        out[0].tool_calls.as_ref().unwrap()[0].arguments,
        "{\"a\":\"é/\u{1F600}\",\"z\":{\"x\":[true,null],\"y\":1}}"
    );
}

#[test]
fn only_message_and_custom_message_entries_contribute() {
    let entries = branch(vec![
        json!({"type": "model_change", "model": "anthropic/claude"}),
        json!({"type": "thinking_level_change", "thinkingLevel": "high"}),
        json!({"type": "custom", "customType": "rho.consult", "data": {"x": 1}}),
        json!({"type": "branch_summary", "summary": "ignored by rho", "fromId": "x"}),
        json!({"type": "custom_message", "customType": "rho.notice", "content": "Stopped by the user.", "display": false}),
        json!({"type": "custom_message", "customType": "rho.notice", "content": [{"type": "text", "text": ""}], "display": true}),
        msg(json!({"role": "developer", "content": "be careful"})),
        msg(json!({"role": "bashExecution", "command": "ls", "output": ""})),
        json!({"type": "totally_new", "message": {"role": "user", "content": "no"}}),
    ]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(
        outline(&out),
        ["user: Stopped by the user.", "user: be careful"]
    );
}

#[test]
fn user_content_drops_empty_text_and_unknown_parts() {
    let entries = branch(vec![
        msg(
            json!({"role": "user", "content": [{"type": "text", "text": ""}, {"type": "audio", "data": "x"}]}),
        ),
        msg(json!({"role": "user", "content": ""})),
        msg(
            json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        ),
    ]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].content.len(), 2);
}

const PNG_B64: &str = "iVBORw0KGgo=";

#[test]
fn a_model_without_pictures_gets_the_note_instead() {
    let entries = branch(vec![
        msg(
            json!({"role": "user", "content": [{"type": "text", "text": "see"},
            {"type": "image", "data": PNG_B64, "mimeType": "image/png"}]}),
        ),
        assistant("", &[("s", "screenshot")]),
        msg(
            json!({"role": "toolResult", "toolCallId": "s", "toolName": "screenshot",
            "content": [{"type": "image", "data": PNG_B64, "mimeType": "image/png"}], "isError": false}),
        ),
    ]);
    let text_only = ProjectOptions {
        inputs: "text".parse::<Inputs>().unwrap(),
        ..ProjectOptions::default()
    };
    let out = messages(&entries, &text_only);
    let note = "(The picture isn't sent: this model doesn't take pictures.)";
    assert_eq!(rho::NO_PICTURES_NOTE, note);
    assert_eq!(out[0].text(), format!("see{note}"));
    assert_eq!(out[2].text(), note);
    assert!(
        out.iter()
            .flat_map(|m| &m.content)
            .all(|p| p.kind == PartType::Text)
    );

    let with_pictures = messages(&entries, &ProjectOptions::default());
    assert_eq!(with_pictures[0].content[1].kind, PartType::Image);
    assert_eq!(
        with_pictures[0].content[1].media_type.as_deref(),
        Some("image/png")
    );
    assert_eq!(
        with_pictures[0].content[1].data.as_deref(),
        Some(&[0x89, b'P', b'N', b'G', 13, 10, 26, 10][..])
    );
    assert_eq!(with_pictures[2].content[0].text.as_deref(), Some(""));
    assert_eq!(with_pictures[2].content[1].kind, PartType::Image);
}

#[test]
fn undecodable_pictures_are_dropped() {
    let entries = branch(vec![msg(
        json!({"role": "user", "content": [{"type": "text", "text": "x"},
        {"type": "image", "data": "blob:sha256:00", "mimeType": "image/png"}]}),
    )]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(out[0].content.len(), 1);
}

#[test]
fn a_reply_that_was_only_pictures_projects_as_made_a_picture_without_bytes() {
    let entries = branch(vec![
        user("draw a cat"),
        msg(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "cats"},
            {"type": "image", "data": PNG_B64, "mimeType": "image/png"}], "stopReason": "stop"})),
        msg(
            json!({"role": "assistant", "content": [{"type": "text", "text": "Here"},
            {"type": "image", "data": PNG_B64, "mimeType": "image/png"}], "stopReason": "stop"}),
        ),
    ]);
    let out = messages(&entries, &ProjectOptions::default());
    assert_eq!(
        outline(&out),
        [
            "user: draw a cat",
            "assistant: (made a picture)",
            "assistant: Here"
        ]
    );
    assert!(
        out[1..]
            .iter()
            .flat_map(|m| &m.content)
            .all(|p| p.data.is_none())
    );
}

/// A sparse file of `len` bytes (fast even for 20 MB).
/// A PDF of `len` bytes: the `%PDF-` magic, then zeros (sparse on disk).
fn sized_file(path: &std::path::Path, len: u64) {
    use std::io::Write as _;
    let mut file = fs::File::create(path).unwrap();
    file.write_all(b"%PDF-").unwrap();
    file.set_len(len.max(5)).unwrap();
}

fn pdf_user(text: &str, pdfs: &[(&str, Option<u64>)]) -> serde_json::Value {
    let attachments: Vec<_> = pdfs
        .iter()
        .map(|(path, pages)| json!({"kind": "pdf", "name": path, "path": path, "mimeType": "application/pdf", "about": "a PDF", "pages": pages}))
        .collect();
    msg(
        json!({"role": "user", "content": [{"type": "text", "text": text}], "attachments": attachments}),
    )
}

#[test]
fn pdf_budget_skips_a_newer_pdf_that_does_not_fit_and_sends_an_older_one() {
    let dir = tempfile::tempdir().unwrap();
    sized_file(&dir.path().join("old.pdf"), 1_000);
    sized_file(&dir.path().join("big.pdf"), 19_999_500);
    sized_file(&dir.path().join("new.pdf"), 600);
    sized_file(&dir.path().join("many-pages.pdf"), 10);
    let entries = branch(vec![
        pdf_user("oldest", &[("old.pdf", None)]),
        pdf_user(
            "big one",
            &[("big.pdf", None), ("many-pages.pdf", Some(99))],
        ),
        pdf_user("newest", &[("new.pdf", Some(1)), ("gone.pdf", Some(1))]),
    ]);
    let docs = WorkspaceDocuments::new(dir.path());
    let options = ProjectOptions {
        inputs: "text,image,pdf".parse().unwrap(),
        documents: &docs,
        blobs: None,
        ..ProjectOptions::default()
    };
    let out = messages(&entries, &options);
    // Newest first: new.pdf (600 B, 1 p) fits; then many-pages.pdf (99 p):
    // 1 + 99 = 100 pages fits; big.pdf: 600 + 10 + 19,999,500 > 20,000,000
    // bytes, skipped; old.pdf (1,000 B, estimated 1 page) would make 101
    // pages, skipped too.
    let describe = |i: usize| -> Vec<String> {
        out[i]
            .content
            .iter()
            .map(|p| match p.kind {
                PartType::File => format!(
                    "file {} {}",
                    p.filename.clone().unwrap(),
                    p.data.as_ref().unwrap().len()
                ),
                _ => p.text.clone().unwrap().into_string(),
            })
            .collect()
    };
    assert_eq!(
        describe(0),
        [
            "oldest",
            "(old.pdf isn't sent as a document this time: newer documents fill the request. It's at old.pdf.)"
        ]
    );
    assert_eq!(
        describe(1),
        [
            "big one",
            "(big.pdf isn't sent as a document this time: newer documents fill the request. It's at big.pdf.)",
            "file many-pages.pdf 10"
        ]
    );
    assert_eq!(
        describe(2),
        [
            "newest",
            "file new.pdf 600",
            "(gone.pdf is no longer at gone.pdf.)"
        ]
    );
    assert_eq!(
        out[2].content[1].metadata,
        json!({"pages": 1}).as_object().unwrap().clone()
    );
}

#[test]
fn pdf_budget_sends_an_older_pdf_when_a_newer_one_is_too_big() {
    let dir = tempfile::tempdir().unwrap();
    sized_file(&dir.path().join("huge.pdf"), 20_000_001);
    sized_file(&dir.path().join("small.pdf"), 2_000);
    let entries = branch(vec![
        pdf_user("small", &[("small.pdf", Some(3))]),
        pdf_user("huge", &[("huge.pdf", Some(3))]),
    ]);
    let docs = WorkspaceDocuments::new(dir.path());
    let options = ProjectOptions {
        inputs: "text,pdf".parse().unwrap(),
        documents: &docs,
        blobs: None,
        ..ProjectOptions::default()
    };
    let out = messages(&entries, &options);
    assert_eq!(out[0].content[1].kind, PartType::File);
    assert_eq!(out[0].content[1].data.as_ref().unwrap().len(), 2_000);
    assert!(
        out[1].content[1]
            .text
            .as_deref()
            .unwrap()
            .starts_with("(huge.pdf isn't sent as a document this time")
    );
}

#[test]
fn pdfs_are_only_read_when_the_model_takes_them() {
    let dir = tempfile::tempdir().unwrap();
    sized_file(&dir.path().join("a.pdf"), 10);
    let entries = branch(vec![pdf_user("doc", &[("a.pdf", None)])]);
    let docs = WorkspaceDocuments::new(dir.path());
    let options = ProjectOptions {
        inputs: Inputs::default(),
        documents: &docs,
        blobs: None,
        ..ProjectOptions::default()
    };
    assert_eq!(outline(&messages(&entries, &options)), ["user: doc"]);
}

#[test]
fn inputs_parse_rejects_unknown_words() {
    let err = "text,video".parse::<Inputs>().unwrap_err();
    assert!(err.to_string().contains("\"video\""), "{err}");
    assert_eq!(Inputs::default(), "image,text".parse().unwrap());
}

#[test]
fn compacted_splits_like_rho() {
    let entries = branch(vec![
        user("a"),
        user("b"),
        json!({"type": "compaction", "summary": "S", "firstKeptEntryId": "e2"}),
        user("c"),
    ]);
    let split = rho::compacted(&entries);
    assert_eq!(
        (split.compaction, split.kept, split.later),
        (Some(2), 1..2, 3..4)
    );
    let none = rho::compacted(&entries[..2]);
    assert_eq!((none.compaction, none.kept, none.later), (None, 0..0, 0..2));
    let numeric = branch(vec![
        user("a"),
        json!({"type": "compaction", "summary": "S", "firstKeptEntryId": 1}),
    ]);
    assert!(rho::compacted(&numeric).kept.is_empty());
}

#[test]
fn picture_without_mime_type_is_dropped_with_and_without_pictures() {
    let png = "iVBORw0KGgo=";
    let entries = branch(vec![msg(json!({"role": "user", "content": [
        {"type": "text", "text": "see"},
        {"type": "image", "data": png},
        {"type": "image", "data": png, "mimeType": "image/png"}]}))]);
    let with = context(&entries, &ProjectOptions::default());
    let kinds: Vec<PartType> = with[0].content.iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [PartType::Text, PartType::Image]);
    let without = context(
        &entries,
        &ProjectOptions {
            inputs: Inputs {
                image: false,
                ..Inputs::default()
            },
            ..ProjectOptions::default()
        },
    );
    let texts: Vec<&str> = without[0]
        .content
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect();
    assert_eq!(
        texts,
        ["see", rho::NO_PICTURES_NOTE],
        "one note, for the picture that has a type"
    );
}

#[test]
fn tool_call_without_a_name_keeps_null_in_canonical_json() {
    let call = json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "arguments": {}}],
        "stopReason": "toolUse"});
    let entries = branch(vec![user("go"), msg(call)]);
    let out = to_canonical_json(&context(&entries, &ProjectOptions::default()));
    assert_eq!(
        out[1]["tool_calls"][0]["function"]["name"],
        serde_json::Value::Null
    );
    assert_eq!(
        out[2]["name"],
        serde_json::Value::Null,
        "the synthetic result has no name either"
    );
}

/// rho reads a `message` line as lists of its members (`RhoEntry::from_listed`, no map made) and
/// any other entry from its value (`RhoEntry::from_value`): both readings of a line are the
/// same entry and project the same messages, with pictures and without. Over every line of
/// every fixture and corpus file, and lines made to trip a reader of members: keys written
/// twice (the later one counts, as in a map), values of other kinds than rules expect, keys
/// spelled with escapes, string items among the blocks.
#[test]
fn a_message_line_read_as_members_projects_as_its_value() {
    use pi_session_types::shallow::listed_entry_with_message_keys;
    let made: &[&[u8]] = &[
        br#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"text","text":"one","text":"two"},{"type":"toolCall","type":"text","text":"x"},{"type":"toolCall","id":"c","name":null,"arguments":false},{"type":"toolCall","id":7,"name":{"n":1},"arguments":{"b":1,"a":[2]}}]}}"#,
        br#"{"type":"message","id":"a","message":{"role":"user","content":["plain","",{"type":"text","text":5},{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"image","data":"aGk="},{"t\u0079pe":"text","te\u0078t":"escaped keys"},null,3]}}"#,
        br#"{"type":"message","id":"a","message":{"role":"toolResult","toolCallId":null,"toolName":3,"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"image","data":"aGk=","mimeType":"image/png"}]}}"#,
        br#"{"type":"message","id":"a","message":{"role":"toolResult","toolCallId":12,"content":"as a string"}}"#,
        br#"{"type":"message","id":"a","message":{"role":"assistant","retryRecovery":null,"content":"dropped"}}"#,
        br#"{"type":"message","id":"a","message":{"role":"assistant","content":{"type":"text","text":"an object"}}}"#,
        br#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"image","data":"x","mimeType":"image/png"}]}}"#,
        br#"{"type":"message","id":"a","message":{"role":["user"],"content":"a role that is not a string"}}"#,
        br#"{"type":"message","id":"a","message":{"role":"developer","content":[{"type":"text","text":"line\n\"quoted\" \u00e9 \ud83d\ude00"}]}}"#,
    ];
    let mut lines: Vec<Vec<u8>> = made.iter().map(|line| line.to_vec()).collect();
    for file in pi_session_test_support::fixture_and_corpus_files() {
        let text = fs::read(&file).unwrap();
        lines.extend(text.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    let with = ProjectOptions::default();
    let without = ProjectOptions {
        inputs: Inputs {
            image: false,
            ..Inputs::default()
        },
        ..ProjectOptions::default()
    };
    let mut listed_lines = 0;
    for line in &lines {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let Some(read) = listed_entry_with_message_keys(line, &rho::MESSAGE_KEYS)
            .and_then(|(listed, _)| rho::RhoEntry::from_listed(listed))
        else {
            continue;
        };
        listed_lines += 1;
        let shown = String::from_utf8_lossy(line);
        assert_eq!(read, rho::RhoEntry::from_value(&value), "{shown}");
        for options in [&with, &without] {
            let stream = rho::MessageStream::new(options).unwrap();
            assert_eq!(
                stream.entry_read(read.clone()),
                stream.entry(&value),
                "{shown}"
            );
        }
    }
    // Every made line and the fixtures' message lines went the listed way.
    assert!(
        listed_lines > made.len() + 500,
        "{listed_lines} lines read as members"
    );
}
