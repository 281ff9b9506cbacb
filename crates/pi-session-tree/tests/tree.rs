//! The tree index, labels, names, mutations and the JSON answer (the drawing is the CLI's).

use std::collections::HashSet;

use pi_session_tree::{
    DiagnosticKind, Dialect, LeafSelector, SessionView, TreeError, TreeIndex, branch_to,
    branch_with_summary, compacted, model_in_effect, pi_model_from, plan_fork, session_meta,
    thinking_level, totals, usage_breakdown,
};
use serde_json::{Value, json};

use crate::common::*;

fn ids(index: &TreeIndex, positions: &[usize]) -> Vec<String> {
    positions
        .iter()
        .map(|&p| index.node(p).unwrap().id.unwrap().to_owned())
        .collect()
}

fn branched() -> Vec<Value> {
    vec![
        user("1", None, "start"),
        assistant("2", Some("1"), "r1"),
        user("3", Some("2"), "a"),
        user("4", Some("2"), "b"),
        entry(
            "label",
            "5",
            Some("4"),
            json!({"targetId":"3","label":"checkpoint"}),
        ),
        assistant("6", Some("3"), "r-a"),
    ]
}

#[test]
fn leaf_is_the_last_entry_and_branch_is_root_first() {
    let entries = branched();
    let index = TreeIndex::from_entries(&entries);
    assert_eq!(index.leaf_id(), Some("6"));
    let branch = index.branch(index.leaf_position().unwrap());
    assert_eq!(ids(&index, &branch.positions), ["1", "2", "3", "6"]);
    assert!(branch.diagnostics.is_empty());
    assert_eq!(ids(&index, index.children("2")), ["3", "4"]);
    assert_eq!(ids(&index, &index.tips()), ["5", "6"]);
    assert_eq!(ids(&index, &index.roots()), ["1"]);
}

#[test]
fn entries_without_ids_are_on_no_branch() {
    let entries = vec![
        user("1", None, "x"),
        json!({"type":"title","title":"slot-like"}),
    ];
    let index = TreeIndex::from_entries(&entries);
    assert_eq!(index.leaf_id(), Some("1"));
    assert_eq!(ids(&index, &index.tips()), ["1"]);
}

#[test]
fn cycles_and_missing_parents_end_the_walk_with_diagnostics() {
    let entries = vec![
        user("a", Some("b"), "a"),
        user("b", Some("a"), "b"),
        user("c", Some("gone"), "c"),
    ];
    let index = TreeIndex::from_entries(&entries);
    let cycle = index.branch(1);
    assert_eq!(ids(&index, &cycle.positions), ["a", "b"]);
    assert_eq!(cycle.diagnostics[0].kind, DiagnosticKind::Cycle);
    let orphan = index.branch(2);
    assert_eq!(ids(&index, &orphan.positions), ["c"]);
    assert_eq!(orphan.diagnostics[0].kind, DiagnosticKind::MissingParent);
    let self_parent = TreeIndex::from_entries(&[user("s", Some("s"), "s")]);
    assert_eq!(self_parent.branch(0).positions, [0]);
    assert_eq!(self_parent.roots(), [0]);
}

#[test]
fn duplicate_ids_last_wins_with_a_diagnostic() {
    let entries = vec![
        user("a", None, "first"),
        user("b", Some("a"), "b"),
        user("a", None, "second"),
    ];
    let index = TreeIndex::from_entries(&entries);
    assert_eq!(index.position_of("a"), Some(2));
    assert_eq!(index.diagnostics().len(), 1);
    assert_eq!(index.diagnostics()[0].kind, DiagnosticKind::DuplicateId);
    // b's parent resolves to the later "a".
    assert_eq!(index.branch(1).positions, [2, 1]);
}

#[test]
fn unknown_leaf_falls_back_with_a_diagnostic() {
    let entries = branched();
    let index = TreeIndex::from_entries(&entries);
    let branch = index.branch_for(&leaf("nope"));
    assert_eq!(branch.positions.last(), Some(&5));
    assert_eq!(branch.diagnostics[0].kind, DiagnosticKind::UnknownLeaf);
    assert!(index.branch_for(&LeafSelector::Null).positions.is_empty());
}

#[test]
fn labels_names_and_archives_are_file_global() {
    let entries = vec![
        entry("label", "1", None, json!({"targetId":"x","label":"one"})),
        entry("session_info", "2", Some("1"), json!({"name":"first"})),
        entry("label", "3", Some("2"), json!({"targetId":"x"})),
        entry(
            "label",
            "4",
            Some("3"),
            json!({"targetId":"y","label":"why"}),
        ),
        entry(
            "archive",
            "5",
            Some("4"),
            json!({"targetId":"t1","archived":true}),
        ),
        entry(
            "archive",
            "6",
            Some("5"),
            json!({"targetId":"t2","archived":true}),
        ),
        entry(
            "archive",
            "7",
            Some("6"),
            json!({"targetId":"t1","archived":false}),
        ),
        entry("session_info", "8", Some("7"), json!({"name":"  second "})),
    ];
    assert_eq!(
        Value::Object(session_meta::labels(&entries)),
        json!({"y":"why"})
    );
    assert_eq!(
        session_meta::pi_session_name(&entries).as_deref(),
        Some("second")
    );
    assert_eq!(
        Value::Object(session_meta::archived(&entries)),
        json!({"t2":true})
    );
    assert_eq!(
        session_meta::omp_session_title(Some(""), Some(&json!({"title":"stale"}))),
        None
    );
    assert_eq!(
        session_meta::omp_session_title(None, Some(&json!({"title":"hdr"}))).as_deref(),
        Some("hdr")
    );
}

#[test]
fn tree_json_shape() {
    let entries = branched();
    let view = SessionView::new(entries.as_slice());
    assert_eq!(
        view.tree_json().unwrap(),
        json!({"leafId":"6","branchIds":["1","2","3","6"],"tips":["5","6"],"labels":{"3":"checkpoint"}})
    );
}

#[test]
fn branch_to_and_branch_with_summary() {
    let entries = branched();
    let index = TreeIndex::from_entries(&entries);
    assert_eq!(branch_to(&index, "3").unwrap().as_deref(), Some("3"));
    assert_eq!(
        branch_to(&index, "zz"),
        Err(TreeError::EntryNotFound("zz".into()))
    );
    let plan = branch_with_summary(
        &index,
        Some("2"),
        "tried b",
        Some(json!({"readFiles":[]})),
        Some(false),
        Dialect::PI,
    )
    .unwrap();
    assert_eq!(plan.leaf.as_deref(), Some("2"));
    assert_eq!(
        plan.entry,
        json!({"type":"branch_summary","id":"","parentId":"2","timestamp":"","fromId":"2","summary":"tried b",
               "details":{"readFiles":[]},"fromHook":false})
    );
    let root = branch_with_summary(&index, None, "s", None, Some(true), Dialect::OMP).unwrap();
    assert_eq!(root.entry["fromId"], "root");
    assert_eq!(root.entry["fromExtension"], true);
    assert_eq!(root.entry["parentId"], Value::Null);
}

#[test]
fn fork_rechains_parents_across_labels() {
    let entries = vec![
        user("1", None, "q"),
        entry(
            "label",
            "L",
            Some("1"),
            json!({"targetId":"1","label":"start"}),
        ),
        assistant("2", Some("L"), "a"),
        compaction("3", Some("2"), "S", "L"),
        user("4", Some("3"), "next"),
    ];
    let index = TreeIndex::from_entries(&entries);
    let path: Vec<Value> = index
        .branch(4)
        .positions
        .iter()
        .map(|&p| entries[p].clone())
        .collect();
    let labels: Vec<Value> = entries
        .iter()
        .filter(|e| e["type"] == "label")
        .cloned()
        .collect();
    let mut counter = 0;
    let mut new_id = |taken: &HashSet<String>| loop {
        counter += 1;
        let id = format!("{counter:08x}");
        if !taken.contains(&id) {
            return id;
        }
    };
    let fork = plan_fork(&path, &labels, &mut new_id);
    let chain: Vec<(Value, Value)> = fork
        .iter()
        .map(|e| (e["id"].clone(), e["parentId"].clone()))
        .collect();
    assert_eq!(
        chain,
        [
            (json!("1"), Value::Null),
            (json!("2"), json!("1")),
            (json!("3"), json!("2")),
            (json!("4"), json!("3")),
            (json!("00000001"), json!("4")),
        ]
    );
    assert_eq!(fork[2]["firstKeptEntryId"], "2");
    assert_eq!(fork[4]["label"], "start");
    assert_eq!(fork[4]["timestamp"], TS);
    // The fork reloads with the whole conversation (pi 0.73.1's fork would cut it at the label).
    let context = pi_context(&fork, LeafSelector::Default);
    assert_eq!(
        describe(&context["messages"]),
        ["compactionSummary:S", "a", "next"]
    );
}

#[test]
fn compacted_partitions_with_rhos_rule() {
    let entries = vec![
        user("1", None, "a"),
        user("2", Some("1"), "b"),
        compaction("3", Some("2"), "S", "2"),
        user("4", Some("3"), "c"),
        compaction("5", Some("4"), "T", "nowhere"),
        user("6", Some("5"), "d"),
    ];
    let split = compacted(&entries);
    assert_eq!(
        (split.compaction, split.kept.clone(), split.later.clone()),
        (Some(4), 4..4, 5..6)
    );
    assert_eq!(split.away().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    let split = compacted(&entries[..4]);
    assert_eq!(
        (split.compaction, split.kept, split.later),
        (Some(2), 1..2, 3..4)
    );
    let none = compacted(&entries[..2]);
    assert_eq!((none.compaction, none.kept, none.later), (None, 0..0, 0..2));
}

#[test]
fn model_thinking_and_totals() {
    let entries = vec![
        user("1", None, "q"),
        assistant("2", Some("1"), "a"),
        entry(
            "model_change",
            "3",
            Some("2"),
            json!({"model":"openai/gpt/5","role":"temporary"}),
        ),
        entry(
            "thinking_level_change",
            "4",
            Some("3"),
            json!({"thinkingLevel":"high"}),
        ),
    ];
    let model = model_in_effect(&entries).unwrap();
    assert_eq!(
        (model.provider.as_str(), model.model_id.as_str()),
        ("anthropic", "claude-test")
    );
    let mut with_default = entries.clone();
    with_default.push(entry(
        "model_change",
        "5",
        Some("4"),
        json!({"model":"openai-codex/gpt/5"}),
    ));
    let model = model_in_effect(&with_default).unwrap();
    assert_eq!(model.model_id, "gpt/5");
    assert_eq!(model.req_llm_spec(), "openai_codex:gpt/5");
    assert_eq!(model_in_effect(&entries[..1]), None);
    assert_eq!(pi_model_from(&entries[..1]), None);
    assert_eq!(
        pi_model_from(&with_default).as_deref(),
        Some("openai-codex/gpt/5")
    );
    assert_eq!(
        pi_model_from(&entries).as_deref(),
        Some("anthropic/claude-test")
    );
    // rho hands the string itself to from_pi_model: "/x" keeps its empty
    // provider (req_llm ":x"), which a ModelRef cannot tell from "x".
    let slash = entry("model_change", "6", Some("5"), json!({"model":"/x"}));
    assert_eq!(
        pi_model_from(std::slice::from_ref(&slash)).as_deref(),
        Some("/x")
    );
    assert_eq!(model_in_effect(&[slash]).unwrap().pi_string(), "x");
    let no_slash = entry("model_change", "7", None, json!({"model":"x"}));
    assert_eq!(pi_model_from(&[no_slash]).as_deref(), Some("x"));
    let pi_shape = entry(
        "model_change",
        "8",
        None,
        json!({"provider":"","modelId":"y"}),
    );
    assert_eq!(pi_model_from(&[pi_shape]).as_deref(), Some("/y"));
    assert_eq!(thinking_level(&entries), "high");
    assert_eq!(thinking_level(&entries[..2]), "off");
    let t = totals(&[assistant("a", None, "x"), assistant("b", Some("a"), "y")]);
    assert_eq!((t.tokens, t.output, t.cost), (4.0, 2.0, 0.0));
}

#[test]
fn usage_breakdown_reports_nested_and_side_usage_apart() {
    let usage = json!({"input":10,"output":5,"cacheRead":2,"cacheWrite":1,"totalTokens":18,"reasoning":3,
                       "cost":{"input":0.1,"output":0.2,"cacheRead":0.0,"cacheWrite":0.0,"total":0.3}});
    let entries = vec![
        entry(
            "message",
            "1",
            None,
            json!({"message":{"role":"assistant","usage":usage}}),
        ),
        entry(
            "message",
            "2",
            Some("1"),
            json!({"message":{"role":"toolResult","toolName":"task","details":{"usage":usage}}}),
        ),
        entry("model_usage", "3", Some("2"), json!({"usage":usage})),
        entry(
            "message",
            "4",
            Some("3"),
            json!({"message":{"role":"toolResult","toolName":"bash","details":{"usage":usage}}}),
        ),
    ];
    let breakdown = usage_breakdown(&entries);
    assert_eq!(breakdown.assistant.count, 1);
    assert_eq!(breakdown.assistant.reasoning, 3.0);
    assert_eq!(breakdown.nested_tools.count, 1);
    assert_eq!(breakdown.side_calls.count, 1);
    assert_eq!(breakdown.total().total_tokens, 54.0);
    assert!((breakdown.total().cost_total - 0.9).abs() < 1e-12);
}

#[test]
fn view_loads_only_what_it_needs() {
    use std::cell::RefCell;
    struct Counting<'a> {
        entries: &'a [Value],
        loaded: RefCell<Vec<usize>>,
    }
    impl pi_session_tree::EntrySource for Counting<'_> {
        type Error = std::convert::Infallible;
        fn entry_count(&self) -> usize {
            self.entries.len()
        }
        fn envelope(&self, position: usize) -> pi_session_tree::NodeInfo {
            pi_session_tree::NodeInfo::from_value(&self.entries[position])
        }
        fn entry_value(&self, position: usize) -> Result<Value, Self::Error> {
            self.loaded.borrow_mut().push(position);
            Ok(self.entries[position].clone())
        }
    }
    let entries = branched();
    let source = Counting {
        entries: &entries,
        loaded: RefCell::new(Vec::new()),
    };
    let view = SessionView::new(&source);
    let resolved = view
        .context(
            &leaf("4"),
            Dialect::PI,
            &pi_session_tree::ContextOptions::default(),
        )
        .unwrap();
    assert_eq!(
        describe(&resolved.context.to_value()["messages"]),
        ["start", "r1", "b"]
    );
    assert_eq!(*source.loaded.borrow(), [0, 1, 3]);
}

#[test]
fn archived_tips_are_hidden() {
    let mut entries = branched();
    entries.push(entry(
        "archive",
        "7",
        Some("6"),
        json!({"targetId":"4","archived":true}),
    ));
    let view = SessionView::new(entries.as_slice());
    let visible: Vec<String> = view
        .visible_tips()
        .unwrap()
        .into_iter()
        .map(|p| entries[p]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(visible, ["7"]);
}

/// rho's bodies read from the store's file, whose key filters leave unread the old messages
/// that hold no `attachments` key, are the bodies read from every entry: the fixtures with
/// attachments before a compaction, held in memory and read from a file in parts.
#[test]
fn rho_reads_from_the_key_filters_what_it_reads_from_every_body() {
    use pi_session_tree::EntrySource;
    use pi_session_tree::source::{rho_path, rho_sent_path};
    let root = pi_session_test_support::workspace_root();
    for name in [
        "fixtures/context/compaction_with_attachments.jsonl",
        "fixtures/context/pdf_documents.jsonl",
        "fixtures/ours/pi/attachments-and-notices.jsonl",
    ] {
        let path = root.join(name);
        let in_parts = pi_session_store::OpenOptions {
            keep_in_memory_up_to: 0,
            buffer_bytes: 64,
            threads: 2,
        };
        for options in [pi_session_store::OpenOptions::default(), in_parts] {
            let (file, _) = pi_session_store::open_with(&path, &options).unwrap();
            let index = file.tree_index();
            let all: Vec<usize> = (0..file.len()).collect();
            let values = file.values_for(&all).unwrap();
            let Some(leaf) = index.leaf_position() else {
                continue;
            };
            let positions = index.branch(leaf).positions;
            // An attachments key is held by some message of the branch, and found.
            let holds: Vec<bool> = values
                .iter()
                .map(|v| v["message"].get("attachments").is_some())
                .collect();
            assert!(holds.contains(&true), "{name}");
            let may = file.may_hold_key(&all, "attachments");
            for (at, (&holds, &may)) in holds.iter().zip(&may).enumerate() {
                assert!(!holds || may, "{name}: entry {at} holds attachments");
            }
            // What rho sends is the same (the envelopes stand in for bodies it does not read),
            // and some old message was left unread.
            let from_filters = rho_path(&file, &index, &positions).unwrap();
            let from_bodies = rho_path(&values[..], &index, &positions).unwrap();
            assert_eq!(compacted(&from_filters), compacted(&from_bodies), "{name}");
            for (read, body) in from_filters.iter().zip(&from_bodies) {
                if body["message"].get("attachments").is_some() {
                    assert_eq!(read, body, "{name}: a message with attachments left unread");
                }
            }
            // The bodies alone: those read (an envelope stand-in has its three keys only).
            let read: Vec<Value> = from_filters
                .iter()
                .filter(|entry| entry.as_object().is_some_and(|o| o.len() > 3))
                .cloned()
                .collect();
            let sent = rho_sent_path(&file, &index, &positions).unwrap();
            assert_eq!(sent, read, "{name}");
            if name.contains("compaction_with_attachments") {
                let unread = from_filters
                    .iter()
                    .filter(|entry| entry["type"] == "message" && entry.get("message").is_none())
                    .count();
                assert!(unread > 0, "{name}: every old message was read");
            }
        }
    }
}
