//! `llm_messages` equals the real convertToLlm on every recorded fixture
//! (`fixtures/{pi,omp,pi16}/<scenario>.expected.json`, `contexts[i].llm` for
//! the agent messages `contexts[i].agent.messages`). pi 1.6.0's recordings
//! are checked with the pi rules: its convertToLlm gives the same output on
//! them. omp's recordings also hold `llmAgentLoop`, what its agent loop
//! sends: [`omp_agent_loop_messages`] must equal it byte for byte. Skips with
//! a notice while no recordings exist.

use std::path::{Path, PathBuf};

use pi_session_context::{Dialect, OmpAgentLoopOptions, llm_messages, omp_agent_loop_messages};
use serde_json::Value;

use pi_session_types::line::replace_lone_surrogate_escapes;

fn expected_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(".expected.json")))
        .collect();
    files.sort();
    files
}

#[test]
fn llm_messages_equal_the_recorded_convert_to_llm() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut contexts = 0;
    let mut agent_loops = 0;
    let mut failures = Vec::new();
    for (folder, dialect) in [
        ("pi", Dialect::Pi),
        ("omp", Dialect::Omp),
        ("pi16", Dialect::Pi16),
    ] {
        for file in expected_files(&root.join(folder)) {
            let text = std::fs::read_to_string(&file).unwrap();
            let recorded: Value = match serde_json::from_str(&replace_lone_surrogate_escapes(&text))
            {
                Ok(value) => value,
                Err(e) => {
                    failures.push(format!("{}: not JSON: {e}", file.display()));
                    continue;
                }
            };
            let Some(list) = recorded.get("contexts").and_then(Value::as_array) else {
                // A file the real implementation refused to open has no contexts.
                if recorded.get("openError").is_none() {
                    failures.push(format!("{}: no \"contexts\" array", file.display()));
                }
                continue;
            };
            for (i, context) in list.iter().enumerate() {
                let (Some(agent), Some(llm)) = (
                    context.pointer("/agent/messages").and_then(Value::as_array),
                    context.get("llm"),
                ) else {
                    continue;
                };
                contexts += 1;
                let what = format!("{} context {i}", file.display());
                compare_bytes(&what, &llm_messages(agent, dialect), llm, &mut failures);
                if let Some(sent) = context.get("llmAgentLoop") {
                    agent_loops += 1;
                    let ours = omp_agent_loop_messages(agent, &OmpAgentLoopOptions::default());
                    compare_bytes(&format!("{what} llmAgentLoop"), &ours, sent, &mut failures);
                }
            }
        }
    }
    if contexts == 0 && failures.is_empty() {
        eprintln!(
            "NOTICE: no recorded fixtures under {} yet; recorded convertToLlm check skipped",
            root.display()
        );
        return;
    }
    eprintln!("checked {contexts} recorded contexts ({agent_loops} omp agent loops)");
    assert!(
        agent_loops > 0,
        "omp recordings exist but none holds llmAgentLoop"
    );
    assert!(
        failures.is_empty(),
        "{} of {contexts} recorded contexts differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Pushes a failure when `ours` and `recorded` are not the same JSON bytes (key order counts).
fn compare_bytes(what: &str, ours: &[Value], recorded: &Value, failures: &mut Vec<String>) {
    let actual = serde_json::to_string(ours).unwrap();
    let expected = serde_json::to_string(recorded).unwrap();
    if actual == expected {
        return;
    }
    let at = actual
        .bytes()
        .zip(expected.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let from = at.saturating_sub(80);
    failures.push(format!(
        "{what}: differs at byte {at}\n  ours:     …{}\n  recorded: …{}",
        actual.get(from..(at + 120).min(actual.len())).unwrap_or(""),
        expected
            .get(from..(at + 120).min(expected.len()))
            .unwrap_or("")
    ));
}
