//! `pi-session context` writes the req_llm-based formats and omp's agent loop an element at a
//! time (`Session::rho_items_each`, `projection::omp_agent_loop_each`), never holding the whole
//! answer: on every fixture and corpus session, at every leaf, the elements gathered are what
//! [`Session::project_at`] gives whole, and what the projection of the whole branch (every
//! body read) gives; on a branch much longer than one part read at a time, too.

use pi_session::projection::omp_agent_loop_each;
use pi_session::projection::projection::{RhoItem, omp_agent_loop_options};
use pi_session::projection::reqllm::{to_canonical_json, to_compact_json};
use pi_session::projection::{anthropic_messages, openai_chat_messages};
use pi_session::tree::{ContextOptions, Dialect, LeafSelector};
use pi_session::{Format, ProjectOptions, Session};
use pi_session_test_support::{LinearSession, fixture_and_corpus_files};
use serde_json::{Value, json};

#[test]
fn streamed_projections_equal_the_whole_answer_on_every_session() {
    let files = fixture_and_corpus_files();
    assert!(files.len() > 50, "the fixtures are in the repository");
    let mut projected = 0;
    for path in files {
        // Files the facade refuses (not a file, unreadable) have no context to compare.
        let Ok(opened) = Session::open(&path, "anthropic:claude-x") else {
            continue;
        };
        let session = opened.session;
        // Every body of the branch read: what the entries left out must not change.
        let branch = opened.branch;
        // The cursor's leaf: the one `opened.branch` ends at.
        let leaf = session.leaf_selector();
        // With PDFs, documents are chosen over the whole branch: read whole, then projected.
        for inputs in ["text,image", "text", "text,pdf"] {
            let options = ProjectOptions {
                inputs: inputs.parse().unwrap(),
                ..ProjectOptions::default()
            };
            let messages = pi_session::context(&branch, &options);
            for format in RHO_FORMATS {
                let streamed = rho_items_each(&session, &leaf, format, &options);
                let read_whole = match format {
                    Format::ReqLlm => to_canonical_json(&messages),
                    Format::ReqLlmCompact => to_compact_json(&messages),
                    Format::OpenAi => openai_chat_messages(&messages, options.openai),
                    _ => anthropic_messages(&messages),
                };
                assert_eq!(
                    streamed,
                    read_whole,
                    "{} {format:?} {inputs}",
                    path.display()
                );
            }
            let mut leaves = vec![LeafSelector::Null];
            leaves.extend(session.tips().into_iter().map(LeafSelector::Id));
            for leaf in std::iter::once(&leaf).chain(&leaves) {
                for format in RHO_FORMATS {
                    let (whole, _) = session.project_at(leaf, format, &options).unwrap();
                    let streamed = rho_items_each(&session, leaf, format, &options);
                    assert_eq!(
                        streamed,
                        whole,
                        "{} {leaf:?} {format:?} {inputs}",
                        path.display()
                    );
                }
            }
            let (whole, _) = session
                .project_at(&leaf, Format::OmpAgentLoop, &options)
                .unwrap();
            let (context, _) = session
                .agent_context_at(&leaf, Dialect::OMP, &ContextOptions::default())
                .unwrap();
            let mut items = Vec::new();
            omp_agent_loop_each(
                context.messages(),
                &omp_agent_loop_options(options.inputs),
                |message| {
                    items.push(message.into_owned());
                    Ok::<_, ()>(())
                },
            )
            .unwrap();
            assert_eq!(Value::Array(items), whole, "{} {inputs}", path.display());
            projected += 1;
        }
    }
    assert!(projected > 100, "{projected} projections compared");
}

const RHO_FORMATS: [Format; 4] = [
    Format::ReqLlm,
    Format::ReqLlmCompact,
    Format::OpenAi,
    Format::Anthropic,
];

/// `format`'s answer gathered from [`Session::rho_items_each`], as [`Session::project_at`]
/// holds it.
fn rho_items_each(
    session: &Session,
    leaf: &LeafSelector,
    format: Format,
    options: &ProjectOptions<'_>,
) -> Value {
    let mut items = Vec::new();
    session
        .rho_items_each(leaf, format, options, |item: RhoItem| {
            items.push(item.into_value());
            Ok::<_, pi_session::Error>(())
        })
        .unwrap();
    match format {
        Format::Anthropic => json!({ "messages": items }),
        _ => Value::Array(items),
    }
}

/// A pi session of `count` message entries: user turns, an assistant turn calling a tool now
/// and then (answered, or left unanswered for rho to close, some across the border of two
/// parts read), custom messages, user messages with attachments, and with `compaction` a
/// compaction after two thirds of them that keeps the last third before it.
fn long_rho_branch(count: usize, compaction: bool) -> String {
    let mut session = LinearSession::new();
    for i in 0..count {
        let id = format!("u{i}");
        let call = format!(
            r#""message","message":{{"role":"assistant","content":[{{"type":"text","text":"a{i}"}},{{"type":"toolCall","id":"t{i}","name":"bash","arguments":{{"command":"ls {i}"}}}}],"provider":"p","model":"m","stopReason":"toolUse","timestamp":{i}}}"#
        );
        let body = match i % 97 {
            // Unanswered: the next message is a user turn (at 1023 and 2047, the last of a part).
            _ if i % 1024 == 1023 => call,
            10 => call,
            11 => format!(
                r#""message","message":{{"role":"toolResult","toolCallId":"t{}","toolName":"bash","content":[{{"type":"text","text":"out {i}"}}],"isError":false,"timestamp":{i}}}"#,
                i - 1
            ),
            20 => call,
            30 => format!(
                r#""custom_message","customType":"note","content":"note {i}","display":true"#
            ),
            40 => format!(
                r#""message","message":{{"role":"user","content":[{{"type":"text","text":"see {i}"}}],"attachments":[{{"name":"f{i}.txt","mimeType":"text/plain","path":"/w/f{i}.txt","about":"file {i}"}}],"timestamp":{i}}}"#
            ),
            _ => format!(
                r#""message","message":{{"role":"user","content":"turn {i} \"q\"","timestamp":{i}}}"#
            ),
        };
        session.push(&id, &body);
        if compaction && i == count * 2 / 3 {
            let kept = format!("u{}", count / 3);
            session.push(
                "c",
                &format!(
                    r#""compaction","summary":"what happened","firstKeptEntryId":"{kept}","tokensBefore":1000"#
                ),
            );
        }
    }
    session.into_text()
}

/// A branch much longer than one part of what `rho_items_each` reads at a time (with and
/// without a compaction): the elements are what the whole branch read at once gives.
#[test]
fn a_long_branch_read_in_parts_projects_as_the_whole_branch() {
    let dir = tempfile::tempdir().unwrap();
    for compaction in [false, true] {
        let name = format!("long-{compaction}.jsonl");
        let text = long_rho_branch(5_000, compaction);
        let (session, path) = crate::written_and_read(dir.path(), &name, &text);
        let opened = Session::open(&path, "anthropic:claude-x").unwrap();
        let options = ProjectOptions::default();
        let messages = pi_session::context(&opened.branch, &options);
        let leaf = LeafSelector::Default;
        for format in RHO_FORMATS {
            let streamed = rho_items_each(&session, &leaf, format, &options);
            let (whole, _) = session.project_at(&leaf, format, &options).unwrap();
            assert_eq!(streamed, whole, "{format:?} compaction={compaction}");
            if format == Format::ReqLlm {
                assert_eq!(streamed, to_canonical_json(&messages));
                let sent = streamed.as_array().map_or(0, Vec::len);
                // Every message sent, or the last third and the kept one, with the summary
                // and rho's results for the calls left unanswered.
                assert!(sent > if compaction { 3_000 } else { 5_000 }, "{sent}");
                let first = &streamed[0];
                let summary = first["content"][0]["text"].as_str().unwrap_or_default();
                assert_eq!(
                    summary.contains("f40.txt"),
                    compaction,
                    "the attachments note names an attachment taken away: {summary:.300}"
                );
            }
        }
    }
}
