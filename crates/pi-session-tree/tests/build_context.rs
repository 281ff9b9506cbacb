//! The cases of pi's `build-context.test.ts` (pi.md §6), for both dialects
//! where omp agrees, plus pi's exact output shape.

use pi_session_tree::LeafSelector;
use serde_json::{Value, json};

use crate::common::*;

fn texts(context: &Value) -> Vec<String> {
    describe(&context["messages"])
}

#[test]
fn empty_session_gives_empty_context() {
    assert_eq!(
        pi_context(&[], LeafSelector::Default),
        json!({"messages":[],"thinkingLevel":"off","model":null})
    );
    assert_eq!(
        omp_context(&[], LeafSelector::Default),
        json!({"messages":[],"thinkingLevel":"off","models":{},"injectedTtsrRules":[],"mode":"none"})
    );
}

#[test]
fn null_leaf_gives_empty_context() {
    let entries = [user("1", None, "hello")];
    assert_eq!(
        pi_context(&entries, LeafSelector::Null)["messages"],
        json!([])
    );
    assert_eq!(
        omp_context(&entries, LeafSelector::Null)["messages"],
        json!([])
    );
}

#[test]
fn single_user_message() {
    let entries = [user("1", None, "hello")];
    let context = pi_context(&entries, LeafSelector::Default);
    assert_eq!(context["messages"], json!([entries[0]["message"]]));
}

#[test]
fn simple_conversation_keeps_order() {
    let entries = [
        user("1", None, "hello"),
        assistant("2", Some("1"), "hi there"),
        user("3", Some("2"), "how are you"),
        assistant("4", Some("3"), "great"),
    ];
    let context = pi_context(&entries, LeafSelector::Default);
    let roles: Vec<&str> = context["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
}

#[test]
fn thinking_level_changes_are_tracked() {
    let entries = [
        user("1", None, "hello"),
        entry(
            "thinking_level_change",
            "2",
            Some("1"),
            json!({"thinkingLevel":"high"}),
        ),
        assistant("3", Some("2"), "thinking hard"),
    ];
    let context = pi_context(&entries, LeafSelector::Default);
    assert_eq!(context["thinkingLevel"], "high");
    assert_eq!(texts(&context), ["hello", "thinking hard"]);
}

#[test]
fn model_comes_from_the_assistant_message() {
    let entries = [user("1", None, "hello"), assistant("2", Some("1"), "hi")];
    let context = pi_context(&entries, LeafSelector::Default);
    assert_eq!(
        context["model"],
        json!({"provider":"anthropic","modelId":"claude-test"})
    );
}

#[test]
fn later_assistant_overrides_model_change_and_later_change_overrides_assistant() {
    let mut entries = vec![
        user("1", None, "hello"),
        entry(
            "model_change",
            "2",
            Some("1"),
            json!({"provider":"openai","modelId":"gpt-4"}),
        ),
        assistant("3", Some("2"), "hi"),
    ];
    assert_eq!(
        pi_context(&entries, LeafSelector::Default)["model"],
        json!({"provider":"anthropic","modelId":"claude-test"})
    );
    entries.push(entry(
        "model_change",
        "4",
        Some("3"),
        json!({"provider":"openai","modelId":"gpt-5"}),
    ));
    assert_eq!(
        pi_context(&entries, LeafSelector::Default)["model"],
        json!({"provider":"openai","modelId":"gpt-5"})
    );
}

#[test]
fn compaction_summary_comes_before_kept_messages() {
    let entries = [
        user("1", None, "first"),
        assistant("2", Some("1"), "response1"),
        user("3", Some("2"), "second"),
        assistant("4", Some("3"), "response2"),
        compaction("5", Some("4"), "Summary of first two turns", "3"),
        user("6", Some("5"), "third"),
        assistant("7", Some("6"), "response3"),
    ];
    let expected = [
        "compactionSummary:Summary of first two turns",
        "second",
        "response2",
        "third",
        "response3",
    ];
    assert_eq!(
        texts(&pi_context(&entries, LeafSelector::Default)),
        expected
    );
    assert_eq!(
        texts(&omp_context(&entries, LeafSelector::Default)),
        expected
    );
    // pi's summary message shape, field for field (Date.parse of the entry timestamp).
    assert_eq!(
        pi_context(&entries, LeafSelector::Default)["messages"][0],
        json!({"role":"compactionSummary","summary":"Summary of first two turns","tokensBefore":1000,
               "timestamp":1_735_689_600_000_i64})
    );
}

#[test]
fn compaction_keeping_from_the_first_message() {
    let entries = [
        user("1", None, "first"),
        assistant("2", Some("1"), "response"),
        compaction("3", Some("2"), "Empty summary", "1"),
        user("4", Some("3"), "second"),
    ];
    assert_eq!(
        texts(&pi_context(&entries, LeafSelector::Default)),
        [
            "compactionSummary:Empty summary",
            "first",
            "response",
            "second"
        ]
    );
}

#[test]
fn only_the_latest_compaction_counts() {
    let entries = [
        user("1", None, "a"),
        assistant("2", Some("1"), "b"),
        compaction("3", Some("2"), "First summary", "1"),
        user("4", Some("3"), "c"),
        assistant("5", Some("4"), "d"),
        compaction("6", Some("5"), "Second summary", "4"),
        user("7", Some("6"), "e"),
    ];
    let expected = ["compactionSummary:Second summary", "c", "d", "e"];
    assert_eq!(
        texts(&pi_context(&entries, LeafSelector::Default)),
        expected
    );
    assert_eq!(
        texts(&omp_context(&entries, LeafSelector::Default)),
        expected
    );
}

#[test]
fn first_kept_entry_off_the_path_keeps_nothing_before_the_compaction() {
    let entries = [
        user("1", None, "a"),
        assistant("2", Some("1"), "b"),
        user("x", Some("1"), "sibling"),
        compaction("3", Some("2"), "S", "x"),
        user("4", Some("3"), "c"),
    ];
    assert_eq!(
        texts(&pi_context(&entries, LeafSelector::Default)),
        ["compactionSummary:S", "c"]
    );
    assert_eq!(
        texts(&omp_context(&entries, LeafSelector::Default)),
        ["compactionSummary:S", "c"]
    );
}

#[test]
fn follows_the_path_to_the_given_leaf() {
    let entries = [
        user("1", None, "start"),
        assistant("2", Some("1"), "response"),
        user("3", Some("2"), "branch A"),
        user("4", Some("2"), "branch B"),
    ];
    assert_eq!(
        texts(&pi_context(&entries, leaf("3"))),
        ["start", "response", "branch A"]
    );
    assert_eq!(
        texts(&pi_context(&entries, leaf("4"))),
        ["start", "response", "branch B"]
    );
}

#[test]
fn branch_summary_appears_in_position() {
    let entries = [
        user("1", None, "start"),
        assistant("2", Some("1"), "response"),
        user("3", Some("2"), "abandoned path"),
        branch_summary("4", Some("2"), "Summary of abandoned work", "3"),
        user("5", Some("4"), "new direction"),
    ];
    let context = pi_context(&entries, leaf("5"));
    assert_eq!(
        texts(&context),
        [
            "start",
            "response",
            "branchSummary:Summary of abandoned work",
            "new direction"
        ]
    );
    assert_eq!(
        context["messages"][2],
        json!({"role":"branchSummary","summary":"Summary of abandoned work","fromId":"3","timestamp":1_735_689_600_000_i64})
    );
}

#[test]
fn complex_tree_with_branches_and_compaction() {
    let entries = [
        user("1", None, "start"),
        assistant("2", Some("1"), "r1"),
        user("3", Some("2"), "q2"),
        assistant("4", Some("3"), "r2"),
        compaction("5", Some("4"), "Compacted history", "3"),
        user("6", Some("5"), "q3"),
        assistant("7", Some("6"), "r3"),
        user("8", Some("3"), "wrong path"),
        assistant("9", Some("8"), "wrong response"),
        branch_summary("10", Some("3"), "Tried wrong approach", "9"),
        user("11", Some("10"), "better approach"),
    ];
    assert_eq!(
        texts(&pi_context(&entries, leaf("7"))),
        [
            "compactionSummary:Compacted history",
            "q2",
            "r2",
            "q3",
            "r3"
        ]
    );
    assert_eq!(
        texts(&pi_context(&entries, leaf("11"))),
        [
            "start",
            "r1",
            "q2",
            "branchSummary:Tried wrong approach",
            "better approach"
        ]
    );
}

#[test]
fn unknown_leaf_falls_back_to_the_last_entry() {
    let entries = [user("1", None, "hello"), assistant("2", Some("1"), "hi")];
    assert_eq!(
        texts(&pi_context(&entries, leaf("nonexistent"))),
        ["hello", "hi"]
    );
}

#[test]
fn orphaned_entry_gives_only_the_reachable_suffix() {
    let entries = [
        user("1", None, "hello"),
        assistant("2", Some("missing"), "orphan"),
    ];
    assert_eq!(texts(&pi_context(&entries, leaf("2"))), ["orphan"]);
}

#[test]
fn two_node_cycle_terminates() {
    // pi 0.73.1 loops forever here; newer upstream tests and omp stop at the repeat.
    let entries = [
        user("a", Some("b"), "from-a"),
        assistant("b", Some("a"), "from-b"),
    ];
    assert_eq!(
        texts(&pi_context(&entries, leaf("b"))),
        ["from-a", "from-b"]
    );
    assert_eq!(
        texts(&omp_context(&entries, leaf("b"))),
        ["from-a", "from-b"]
    );
}

#[test]
fn longer_cycle_terminates() {
    let entries = [
        user("a", Some("c"), "cycle-a"),
        assistant("b", Some("a"), "cycle-b"),
        user("c", Some("b"), "cycle-c"),
    ];
    assert_eq!(
        texts(&pi_context(&entries, leaf("c"))),
        ["cycle-a", "cycle-b", "cycle-c"]
    );
}

#[test]
fn custom_message_entries_become_custom_messages() {
    let entries = [
        user("1", None, "hi"),
        json!({"type":"custom_message","customType":"note","content":"n","display":true,
               "id":"2","parentId":"1","timestamp":"bogus"}),
    ];
    let context = pi_context(&entries, LeafSelector::Default);
    // Date.parse("bogus") is NaN, written as null.
    assert_eq!(
        context["messages"][1],
        json!({"role":"custom","customType":"note","content":"n","display":true,"timestamp":null})
    );
}

#[test]
fn empty_branch_summary_is_skipped_but_stays_a_node() {
    let entries = [
        user("1", None, "hi"),
        branch_summary("2", Some("1"), "", "1"),
        user("3", Some("2"), "next"),
    ];
    assert_eq!(
        texts(&pi_context(&entries, LeafSelector::Default)),
        ["hi", "next"]
    );
}

#[test]
fn thinking_level_change_without_a_level_makes_it_undefined_in_pi() {
    let entries = [entry("thinking_level_change", "1", None, json!({}))];
    assert_eq!(
        pi_context(&entries, LeafSelector::Default),
        json!({"messages":[],"model":null})
    );
}
