//! rho's projection and the provider shapes of every recorded session
//! (fixtures/pi, fixtures/omp): one snapshot per session holding the
//! req_llm messages (compact form), the OpenAI messages and the Anthropic
//! request. omp pictures are read from fixtures/omp/blobs.

use std::path::PathBuf;

use pi_session_context::ProjectOptions;
use pi_session_context::reqllm::to_compact_json;
use pi_session_context::rho::Inputs;
use pi_session_context::{
    NoDocuments, OpenAiOptions, anthropic_messages, context, openai_chat_messages,
};
use pi_session_tree::BlobFolder;
use serde_json::json;

use crate::common::{assert_valid_for_provider, branch_of_leaf, read_entries};

#[test]
fn snapshot_every_recorded_session_projection() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let blobs = BlobFolder::new(root.join("omp/blobs"));
    let mut sessions = 0;
    for folder in ["pi", "omp"] {
        let Ok(dir) = std::fs::read_dir(root.join(folder)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.to_str()
                    .is_some_and(|s| s.ends_with(".jsonl") && !s.ends_with(".reopened.jsonl"))
            })
            .collect();
        files.sort();
        for file in files {
            let path = branch_of_leaf(&read_entries(&file));
            let options = ProjectOptions {
                inputs: Inputs::default(),
                documents: &NoDocuments,
                blobs: Some(&blobs),
                ..ProjectOptions::default()
            };
            let projected = context(&path, &options);
            let name = file.file_stem().unwrap().to_str().unwrap();
            assert_valid_for_provider(&projected, name);
            insta::assert_json_snapshot!(
                format!("recorded__{folder}__{name}"),
                json!({
                    "req_llm": to_compact_json(&projected),
                    "openai": openai_chat_messages(&projected, OpenAiOptions::default()),
                    "anthropic": anthropic_messages(&projected),
                })
            );
            sessions += 1;
        }
    }
    if sessions == 0 {
        eprintln!(
            "NOTICE: no recorded sessions under {}; projection snapshots skipped",
            root.display()
        );
    }
}
