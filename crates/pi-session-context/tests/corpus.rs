//! Every real recorded session (../shared/corpus/real) projects without a
//! panic, and rho's projection of each is valid for a provider: every tool
//! call is answered before the next non-tool message. Skips with a notice
//! when the corpus is absent.

use pi_session_context::ProjectOptions;
use pi_session_context::{
    OpenAiOptions, anthropic_messages, context, llm_messages, openai_chat_messages,
};
use pi_session_tree::{ContextOptions, agent_context, detect_dialect};
use serde_json::Value;

use crate::common::{assert_valid_for_provider, branch_of_leaf as branch};

#[test]
fn every_corpus_session_projects_to_a_valid_context() {
    let Some(dir) = pi_session_test_support::corpus_dir("real") else {
        return;
    };
    let files = pi_session_test_support::files_ending_with(&dir, ".jsonl");
    let (mut sessions, mut projected, mut converted) = (0, 0, 0);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v.get("type").is_some_and(Value::is_string))
            .collect();
        let has_title_slot = lines.first().is_some_and(|l| l["type"] == "title");
        let header = lines.iter().find(|l| l["type"] == "session");
        let entries: Vec<Value> = lines
            .iter()
            .filter(|l| !matches!(l["type"].as_str(), Some("session" | "title")))
            .cloned()
            .collect();
        let path = branch(&entries);
        let dialect = detect_dialect(has_title_slot, header, &entries);
        let (agent, _diagnostics) = agent_context(&path, dialect, &ContextOptions::default());
        converted += llm_messages(agent.messages(), dialect).len();

        let out = context(&path, &ProjectOptions::default());
        projected += out.len();
        assert_valid_for_provider(&out, &file.display().to_string());
        let openai = openai_chat_messages(&out, OpenAiOptions::default());
        let anthropic = anthropic_messages(&out);
        assert!(openai.as_array().is_some() && anthropic["messages"].is_array());
        sessions += 1;
    }
    eprintln!(
        "corpus: {sessions} sessions, {projected} req_llm messages, {converted} convertToLlm messages"
    );
    assert!(sessions > 0);
}
