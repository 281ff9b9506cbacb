//! One insta snapshot per hand-written fixture session (fixtures/context/)
//! and output format: req_llm canonical JSON, OpenAI messages, Anthropic
//! request. `pdf_*` sessions are projected for a model that takes PDFs,
//! reading documents from fixtures/context/workspace.

use std::path::{Path, PathBuf};

use pi_session_context::ProjectOptions;
use pi_session_context::rho::Inputs;
use pi_session_context::{
    NoDocuments, OpenAiOptions, WorkspaceDocuments, anthropic_messages, context,
    openai_chat_messages, reqllm::to_canonical_json,
};
use serde_json::Value;

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/context")
}

/// The entries on the branch of the last entry with an id, root first
/// (a small stand-in for the tree crate: the fixtures are simple).
fn branch_of(path: &Path) -> Vec<Value> {
    let entries: Vec<Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &Value| !matches!(e["type"].as_str(), Some("session" | "title")))
        .collect();
    let by_id = |id: &str| entries.iter().find(|e| e["id"] == id);
    let mut out = Vec::new();
    let mut cursor = entries.iter().rev().find(|e| e["id"].is_string());
    while let Some(entry) = cursor {
        out.push(entry.clone());
        cursor = entry["parentId"].as_str().and_then(by_id);
    }
    out.reverse();
    out
}

#[test]
fn snapshot_every_fixture_session() {
    let mut sessions: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    sessions.sort();
    assert!(
        sessions.len() >= 5,
        "fixture sessions missing: {sessions:?}"
    );
    let workspace = WorkspaceDocuments::new(fixtures_dir().join("workspace"));
    for path in sessions {
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let options = if name.starts_with("pdf_") {
            ProjectOptions {
                inputs: "text,image,pdf".parse::<Inputs>().unwrap(),
                documents: &workspace,
                blobs: None,
                ..ProjectOptions::default()
            }
        } else {
            ProjectOptions {
                inputs: Inputs::default(),
                documents: &NoDocuments,
                blobs: None,
                ..ProjectOptions::default()
            }
        };
        let projected = context(&branch_of(&path), &options);
        insta::assert_json_snapshot!(format!("{name}__req_llm"), to_canonical_json(&projected));
        insta::assert_json_snapshot!(
            format!("{name}__openai"),
            openai_chat_messages(&projected, OpenAiOptions::default())
        );
        insta::assert_json_snapshot!(format!("{name}__anthropic"), anthropic_messages(&projected));
    }
}
