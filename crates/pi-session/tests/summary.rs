//! Session summaries (what the resume pickers show), read from a bounded prefix and tail.

use std::path::{Path, PathBuf};

use pi_session::{SUMMARY_PREFIX_BYTES, SUMMARY_TAIL_BYTES, SessionStatus, summaries, summarize};
use serde_json::json;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(path)
}

fn line(value: &serde_json::Value) -> String {
    format!("{value}\n")
}

fn header() -> String {
    line(
        &json!({"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}),
    )
}

fn message(id: &str, parent: Option<&str>, message: serde_json::Value) -> String {
    line(
        &json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:01.000Z","message":message}),
    )
}

#[test]
fn pi_session_name_is_the_latest_and_a_blank_one_clears_it() {
    let path = fixture("pi/session-name.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let summary = summarize(&path).unwrap().unwrap();
    // The fixture names the session twice, then clears the name.
    assert_eq!(summary.name, None);
    assert_eq!(summary.label(), Some("name this session"));
    let messages = text
        .lines()
        .filter(|l| l.contains(r#""type":"message""#))
        .count();
    assert_eq!(summary.message_count, messages as u64);
    assert!(summary.message_count_exact);
    assert_eq!(
        summary.model.as_deref(),
        Some("anthropic/claude-sonnet-4-5")
    );
    // Without the clearing line, the second name is the name.
    let dir = tempfile::tempdir().unwrap();
    let named = dir.path().join("named.jsonl");
    let kept: String = text
        .lines()
        .filter(|l| !l.contains(r#""name":"""#))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&named, kept).unwrap();
    let summary = summarize(&named).unwrap().unwrap();
    assert_eq!(summary.name.as_deref(), Some("Second name: ünïcødé 📛"));
    assert_eq!(summary.label(), summary.name.as_deref());
}

#[test]
fn omp_title_slot_names_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let slot = line(
        &json!({"type":"title","v":1,"title":"Slot title","source":"user","updatedAt":"2026-01-01T00:00:00.000Z","pad":"  "}),
    );
    let body = message(
        "u1",
        None,
        json!({"role":"user","content":"hello there","timestamp":5}),
    );
    std::fs::write(&path, format!("{slot}{}{body}", header())).unwrap();
    let summary = summarize(&path).unwrap().unwrap();
    assert_eq!(summary.name.as_deref(), Some("Slot title"));
    assert_eq!(summary.first_message.as_deref(), Some("hello there"));
    assert_eq!(summary.status, SessionStatus::Pending);
}

#[test]
fn first_message_is_the_label_without_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.jsonl");
    let user = message(
        "u1",
        None,
        json!({"role":"user","content":[{"type":"image","data":"x"},{"type":"text","text":"first\nsecond"},{"type":"text","text":"third"}],"timestamp":7}),
    );
    std::fs::write(&path, format!("{}{user}", header())).unwrap();
    let summary = summarize(&path).unwrap().unwrap();
    assert_eq!(summary.name, None);
    assert_eq!(
        summary.first_message.as_deref(),
        Some("first\nsecond third")
    );
    assert_eq!(summary.label(), Some("first"));
    assert_eq!(summary.last_activity, Some(7));
}

/// omp's statuses, one per last message.
#[test]
fn status_is_omps_rule_on_the_last_message() {
    let cases = [
        (
            json!({"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}),
            SessionStatus::Complete,
        ),
        (
            json!({"role":"assistant","content":[{"type":"toolCall","id":"c","name":"x","arguments":{}}],"stopReason":"toolUse"}),
            SessionStatus::Interrupted,
        ),
        (
            json!({"role":"assistant","content":[],"stopReason":"length"}),
            SessionStatus::Interrupted,
        ),
        (
            json!({"role":"assistant","content":[],"stopReason":"aborted"}),
            SessionStatus::Aborted,
        ),
        (
            json!({"role":"assistant","content":[],"stopReason":"error"}),
            SessionStatus::Error,
        ),
        (
            json!({"role":"toolResult","toolCallId":"c","content":[]}),
            SessionStatus::Interrupted,
        ),
        (
            json!({"role":"user","content":"hi"}),
            SessionStatus::Pending,
        ),
        (
            json!({"role":"bashExecution","command":"ls"}),
            SessionStatus::Unknown,
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, (last, status)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("{i}.jsonl"));
        let label = line(
            &json!({"type":"label","id":"l","parentId":"m","timestamp":"2026-01-01T00:00:02.000Z","targetId":"m","label":"x"}),
        );
        std::fs::write(
            &path,
            format!("{}{}{label}", header(), message("m", None, last)),
        )
        .unwrap();
        assert_eq!(
            summarize(&path).unwrap().unwrap().status,
            status,
            "case {i}"
        );
    }
}

/// A file larger than both windows: only the prefix and the tail are read, so a message in the
/// middle is not counted, while the first message, the model and the status still come through.
#[test]
fn a_large_file_is_read_in_two_windows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    let mut text = header();
    text += &message(
        "u0",
        None,
        json!({"role":"user","content":"the first question","timestamp":1}),
    );
    let filler = "x".repeat(1000);
    let mut n = 1;
    let mut parent = "u0".to_owned();
    while (text.len() as u64) < 3 * (SUMMARY_PREFIX_BYTES + SUMMARY_TAIL_BYTES) {
        let id = format!("m{n}");
        let role = if n % 2 == 0 { "user" } else { "assistant" };
        text += &message(
            &id,
            Some(&parent),
            json!({"role":role,"content":filler,"provider":"openai","model":"gpt-5","timestamp":n}),
        );
        parent = id;
        n += 1;
    }
    text += &message(
        "last",
        Some(&parent),
        json!({"role":"assistant","content":[{"type":"text","text":"bye"}],"provider":"anthropic","model":"claude-x","stopReason":"stop","timestamp":999_999}),
    );
    std::fs::write(&path, &text).unwrap();
    let summary = summarize(&path).unwrap().unwrap();
    assert!(!summary.message_count_exact);
    let total = text.lines().count() as u64 - 1;
    assert!(
        summary.message_count < total,
        "{} of {total}",
        summary.message_count
    );
    // The messages on whole lines inside the first and the last window.
    let (prefix, tail) = (SUMMARY_PREFIX_BYTES as usize, SUMMARY_TAIL_BYTES as usize);
    let head = &text[..prefix];
    let head = &head[..head.rfind('\n').unwrap()];
    let end = &text[text.len() - tail..];
    let end = &end[end.find('\n').unwrap() + 1..];
    let in_windows = head
        .lines()
        .chain(end.lines())
        .filter(|l| l.contains(r#""type":"message""#))
        .count();
    assert_eq!(summary.message_count, in_windows as u64);
    assert_eq!(summary.first_message.as_deref(), Some("the first question"));
    assert_eq!(summary.model.as_deref(), Some("anthropic/claude-x"));
    assert_eq!(summary.status, SessionStatus::Complete);
    assert_eq!(summary.last_activity, Some(999_999));
}

#[test]
fn a_folder_lists_sessions_and_skips_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.jsonl"), header()).unwrap();
    std::fs::write(dir.path().join("b.jsonl"), "{\"hello\":1}\n").unwrap();
    std::fs::write(dir.path().join("c.txt"), header()).unwrap();
    let (sessions, skipped) = summaries(dir.path()).unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].status, SessionStatus::Unknown);
    assert_eq!(sessions[0].message_count, 0);
    assert_eq!(skipped.len(), 1);
    assert!(summaries(dir.path().join("missing")).unwrap().0.is_empty());
}

/// Every fixture folder lists the same sessions, in the same order, as the store's listing.
#[test]
fn summaries_agree_with_the_store_listing() {
    for folder in ["omp", "pi", "pi16", "invalid"] {
        let dir = fixture(folder);
        let (listed, problems) = pi_session::list(&dir).unwrap();
        let (summarised, skipped) = summaries(&dir).unwrap();
        let listings: Vec<_> = summarised.into_iter().map(|s| s.listing).collect();
        assert_eq!(listings, listed, "{folder}");
        assert_eq!(skipped, problems, "{folder}");
    }
}
