//! Differential tests against the real implementations.
//!
//! `data/{pi,omp}-differential.json` hold random session trees (branches,
//! compactions with `firstKeptEntryId` on and off the path, missing parents,
//! errored/aborted/retried turns, dangling tool calls, custom messages, model
//! roles, reset boundaries, context notes, snapcompact text archives, …) and
//! the JSON that pi 0.73.1's and omp 18.2.3's own `buildSessionContext`
//! returned for each (the trees came from a seeded generator once and are data
//! now). `cargo xtask record` re-records every `expected` answer with the real
//! functions (`xtask/recorder/differential.mjs`, see
//! `xtask/src/record/differential.rs`; `--check` proves the bytes identical).
//! Every case must match exactly, as a JSON value.
//!
//! `data/pi16-differential.json` holds crafted trees for pi 1.6.0's rules
//! (context edits, compaction system messages, system
//! messages around `firstKeptEntryId`, nested compactions, null content) and
//! what 1.6.0's own `buildSessionContext` returned (same recorder). pi
//! 1.6.0 also returned exactly 0.73.1's answers for all 180 inputs of
//! `pi-differential.json` (none uses a 1.6 feature), so those are checked
//! against [`Dialect::PI16`] too.

use pi_session_tree::{
    BlobFolder, ContextOptions, Dialect, LeafSelector, TreeIndex, agent_context,
};
use serde_json::Value;

use crate::common::js_equal;

fn check(file: &str, dialect: Dialect) {
    let path = format!("{}/tests/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    let blobs = BlobFolder::new(format!("{}/tests/data/blobs", env!("CARGO_MANIFEST_DIR")));
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let entries = case["entries"].as_array().unwrap();
        let leaf = match case.get("leafId") {
            None => LeafSelector::Default,
            Some(Value::Null) => LeafSelector::Null,
            Some(id) => LeafSelector::Id(id.as_str().unwrap().to_owned()),
        };
        let index = TreeIndex::from_entries(entries);
        let path: Vec<Value> = index
            .branch_for(&leaf)
            .positions
            .iter()
            .map(|&p| entries[p].clone())
            .collect();
        let (context, _) = agent_context(
            &path,
            dialect,
            &ContextOptions {
                blobs: Some(&blobs),
            },
        );
        let actual = context.to_value();
        if case["expected"].get("throws").is_some() {
            // The real function threw; we only require an answer without a panic.
            continue;
        }
        if !js_equal(&actual, &case["expected"]) {
            failures.push(format!(
                "case {i}:\n  expected {}\n  actual   {}",
                case["expected"], actual
            ));
        }
    }
    println!(
        "{file}: {} of {} cases match",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} mismatches\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn pi_matches_recorded_build_session_context() {
    check("pi-differential.json", Dialect::PI);
}

#[test]
fn pi16_matches_recorded_build_session_context() {
    check("pi16-differential.json", Dialect::PI16);
}

#[test]
fn pi16_agrees_with_pi_073_on_inputs_without_1_6_features() {
    check("pi-differential.json", Dialect::PI16);
}

#[test]
fn pi16_edit_without_replacement_is_diagnosed_where_pi_throws() {
    let path = format!(
        "{}/tests/data/pi16-differential.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let case = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "edit-without-replacement-throws")
        .unwrap();
    assert!(case["expected"]["throws"].is_string(), "pi 1.6 throws here");
    let entries = case["entries"].as_array().unwrap();
    let (context, diagnostics) = agent_context(entries, Dialect::PI16, &ContextOptions::default());
    // The edit is ignored: the target keeps its content.
    assert_eq!(context.messages()[0]["content"], "q");
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(
        diagnostics[0].kind,
        pi_session_tree::DiagnosticKind::MalformedEntry
    );
    assert!(
        diagnostics[0]
            .message
            .contains("context_edit has no replacement")
    );
}

#[test]
fn omp_matches_recorded_build_session_context() {
    check("omp-differential.json", Dialect::OMP);
}
