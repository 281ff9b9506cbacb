//! `pi-session context` writes the req_llm-based formats and omp's agent loop an element at a
//! time (`projection::rho_items`, `projection::omp_agent_loop_each`), never holding the whole
//! answer: on every fixture and corpus session, the elements gathered are what
//! [`Session::project_at`] gives whole, and what the projection of the whole branch (every
//! body read) gives.

use pi_session::projection::omp_agent_loop_each;
use pi_session::projection::projection::{omp_agent_loop_options, rho_items};
use pi_session::projection::reqllm::{to_canonical_json, to_compact_json};
use pi_session::projection::{anthropic_messages, openai_chat_messages};
use pi_session::tree::{ContextOptions, Dialect};
use pi_session::{Format, ProjectOptions, Session};
use pi_session_test_support::fixture_and_corpus_files;
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
        for inputs in ["text,image", "text"] {
            let options = ProjectOptions {
                inputs: inputs.parse().unwrap(),
                ..ProjectOptions::default()
            };
            let messages = pi_session::context(&branch, &options);
            for format in [
                Format::ReqLlm,
                Format::ReqLlmCompact,
                Format::OpenAi,
                Format::Anthropic,
            ] {
                let (whole, _) = session.project_at(&leaf, format, &options).unwrap();
                let (entries, _) = session.rho_branch_at(&leaf).unwrap();
                let mut items = Vec::new();
                rho_items(&entries, format, &options, |item| {
                    items.push(item.into_value());
                    Ok::<_, ()>(())
                })
                .unwrap();
                let streamed = match format {
                    Format::Anthropic => json!({ "messages": items }),
                    _ => Value::Array(items),
                };
                assert_eq!(streamed, whole, "{} {format:?} {inputs}", path.display());
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
