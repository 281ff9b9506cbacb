//! `context_stats` and the window/reserve rules (rho-reqllm.md §A.12).

use pi_session::reqllm::{ContentPart, Message, ToolCall};
use pi_session::{
    ContextStats, ProjectOptions, Session, StatsOptions, UserOptions, reserve_for, user, window_for,
};

#[test]
fn window_and_reserve_follow_rho() {
    assert_eq!(window_for("anthropic:claude-opus-4-5"), 200_000);
    assert_eq!(window_for("openrouter:anthropic/claude-x"), 200_000);
    assert_eq!(window_for("openai:gpt-5"), 128_000);
    // max(15% of window, reserve or 16 384); 15% when that leaves no room.
    let cases = [
        (200_000, None, 30_000),
        (128_000, None, 19_200),
        (100_000, None, 16_384),
        (100_000, Some(40_000), 40_000),
        (10_000, Some(20_000), 1_500),
        (10_000, None, 1_500),
    ];
    for (window, reserve, expected) in cases {
        assert_eq!(
            reserve_for(window, reserve),
            expected,
            "reserve_for({window}, {reserve:?})"
        );
    }
}

#[test]
fn tokens_are_estimated_per_role() {
    let call = ToolCall {
        id: "c".into(),
        name: Some("read".into()),
        arguments: "{\"p\":1}".into(),
    };
    let messages = vec![
        Message::system_text("12345"), // 2 tokens
        Message::user(vec![
            ContentPart::text("1234"),
            ContentPart::image(vec![0; 10], Some("image/png".into())),
        ]), // 1 + picture
        Message::assistant("123456789", vec![call]), // 3 + 1 + 2
        Message::tool_result("c", Some("read".into()), vec![ContentPart::text("")]), // 0
    ];
    let stats = ContextStats::from_messages(&messages, 7, "openai:gpt-5", &StatsOptions::default());
    assert_eq!(stats.by_role.system, 2);
    assert_eq!(stats.by_role.user, 1 + pi_session::PICTURE_TOKENS);
    assert_eq!(stats.by_role.assistant, 6);
    assert_eq!(stats.by_role.tool, 0);
    assert_eq!(stats.estimated_tokens, 9 + pi_session::PICTURE_TOKENS);
    assert_eq!((stats.messages, stats.entries), (4, 7));
    assert_eq!(stats.threshold, 128_000 - 19_200);
    assert_eq!(stats.remaining, stats.threshold - stats.estimated_tokens);
    let expected_percent = stats.estimated_tokens as f64 * 100.0 / 128_000.0;
    assert!((stats.utilisation_percent - expected_percent).abs() < 1e-9);

    let words = |text: &str| text.split_whitespace().count() as u64;
    let counted = ContextStats::from_messages(
        &[Message::user_text("three small words")],
        1,
        "x",
        &StatsOptions {
            counter: Some(&words),
            window: Some(10),
            reserve_tokens: Some(1),
        },
    );
    assert_eq!(
        (
            counted.estimated_tokens,
            counted.window,
            counted.reserve,
            counted.threshold,
            counted.remaining
        ),
        (3, 10, 1, 9, 6)
    );
}

#[test]
fn a_session_reports_its_own_stats() {
    let mut session = Session::in_memory("anthropic:claude-x", "/w");
    session
        .append(user(&"x".repeat(400), UserOptions::new()))
        .unwrap();
    let stats = session
        .context_stats(&ProjectOptions::default(), &StatsOptions::default())
        .unwrap();
    assert_eq!(
        (
            stats.estimated_tokens,
            stats.window,
            stats.messages,
            stats.entries
        ),
        (100, 200_000, 1, 2)
    );
}

/// `context_stats` streams the branch a chunk at a time (`manage::streamed`); its figures are
/// the planner's (`prepare_context` without a budget, which holds the whole branch) on every
/// fixture and every real session, at every tip, with the default counter and a word counter.
#[test]
fn streamed_stats_equal_the_planners_on_every_file() {
    use pi_session::manage::PrepareOptions;
    use pi_session::store::Store;
    use pi_session_test_support::{corpus_dir, fixtures_dir, jsonl_files};

    let mut files = jsonl_files(&fixtures_dir());
    assert!(files.len() > 50, "the fixtures are in the repository");
    match corpus_dir("real") {
        Some(dir) => files.extend(jsonl_files(&dir)),
        None => println!("skipped the real sessions: ../shared/corpus/real is absent"),
    }
    type Counter<'a> = Option<&'a dyn Fn(&str) -> u64>;
    let words = |text: &str| text.split_whitespace().count() as u64;
    let counters: [Counter<'_>; 2] = [None, Some(&words)];
    let mut compared = 0;
    for path in &files {
        let Ok((session, _)) = Session::read_in(&Store::Files, path, "anthropic:claude-x") else {
            continue;
        };
        let mut cursors = vec![session.fork()];
        cursors.extend(session.tip_cursors().unwrap());
        for cursor in &cursors {
            for counter in counters {
                let stats = StatsOptions {
                    counter,
                    ..StatsOptions::default()
                };
                let planned = cursor
                    .prepare_context(&PrepareOptions {
                        stats,
                        ..PrepareOptions::default()
                    })
                    .unwrap()
                    .stats;
                let streamed = cursor
                    .context_stats(&ProjectOptions::default(), &stats)
                    .unwrap();
                assert_eq!(
                    streamed,
                    planned,
                    "{} at {:?}",
                    path.display(),
                    cursor.leaf_id()
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "only {compared} branches compared");
}

/// What `branch_tally` and `usage_breakdown` (apart, and in one read:
/// `branch_tally_and_usage`) add up from the lines that may count
/// (`branch_facts::may_change_tally`, `may_record_usage`: the other lines are never parsed)
/// equals what every entry adds up to, on every fixture and corpus session at every tip, and
/// on a session whose lines hold each case the rules read from the bytes: a model named
/// without a usage, a usage spelled with an escape, the word `usage` quoted in a text.
#[test]
fn tallies_of_the_lines_that_may_count_are_those_of_every_entry() {
    use pi_session::store::Store;
    use pi_session::tree::{BranchTally, LeafSelector, usage_breakdown};

    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("cases.jsonl");
    std::fs::write(&made, TALLY_CASES).unwrap();
    // A turn written before the turn it answers: the branch is not in file order.
    let reordered = dir.path().join("reordered.jsonl");
    std::fs::write(&reordered, REORDERED).unwrap();
    let mut files = pi_session_test_support::fixture_and_corpus_files();
    files.extend([made.clone(), reordered.clone()]);
    let mut compared = 0;
    for path in &files {
        let Ok((session, _)) = Session::read_in(&Store::Files, path, "anthropic:claude-x") else {
            continue;
        };
        let all: Vec<usize> = (0..session.len()).collect();
        let every = session.values_at(&all).unwrap();
        assert_eq!(
            session.usage_breakdown().unwrap(),
            usage_breakdown(&every),
            "{}",
            path.display()
        );
        let mut leaves = vec![LeafSelector::Default];
        leaves.extend(session.tips().into_iter().map(LeafSelector::Id));
        for leaf in &leaves {
            let (branch, tally) = session.branch_tally(leaf).unwrap();
            let mut whole = BranchTally::default();
            whole.add(&session.values_at(&branch.positions).unwrap());
            assert_eq!(tally, whole, "{} at {leaf:?}", path.display());
            // Both in one read: the same answers.
            let (_, together, usage) = session.branch_tally_and_usage(leaf).unwrap();
            assert_eq!(together, whole, "{} at {leaf:?}", path.display());
            assert_eq!(usage, usage_breakdown(&every), "{}", path.display());
            compared += 1;
        }
        if *path == reordered {
            let child = LeafSelector::Id("c".into());
            let (branch, tally, usage) = session.branch_tally_and_usage(&child).unwrap();
            assert_eq!(branch.positions, [0, 2, 1]);
            assert_eq!(tally.model().as_deref(), Some("p/child"));
            assert_eq!(usage.assistant.count, 2);
        }
        if *path == made {
            let (_, tally) = session.branch_tally(&LeafSelector::Default).unwrap();
            assert_eq!(tally.model().as_deref(), Some("p/named"));
            assert_eq!(tally.totals.tokens, 12.0);
            assert_eq!(session.usage_breakdown().unwrap().assistant.count, 2);
        }
    }
    assert!(compared > 100, "only {compared} branches compared");
}

/// A session for [`tallies_of_the_lines_that_may_count_are_those_of_every_entry`]: the last
/// assistant turn names its model but records no usage; one usage is spelled `us\u0061ge`; a
/// user's text quotes the word `"usage"` (written `\"usage\"`, which is no key).
const TALLY_CASES: &str = concat!(
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"what is \"usage\"?","timestamp":1}}"#,
    "\n",
    r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"first","usage":{"totalTokens":5,"output":1,"cost":{"total":0.5}},"stopReason":"stop","timestamp":2}}"#,
    "\n",
    r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"us\u0061ge":{"totalTokens":7,"output":2,"cost":{"total":0.25}},"stopReason":"stop","timestamp":3}}"#,
    "\n",
    r#"{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"named","stopReason":"stop","timestamp":4}}"#,
    "\n",
);

/// A session whose last turn (`c`, naming `p/child`) is written before its parent (`b`,
/// naming `p/parent`).
const REORDERED: &str = concat!(
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
    "\n",
    r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"child","usage":{"totalTokens":3},"stopReason":"stop","timestamp":3}}"#,
    "\n",
    r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[],"provider":"p","model":"parent","usage":{"totalTokens":2},"stopReason":"stop","timestamp":2}}"#,
    "\n",
);
