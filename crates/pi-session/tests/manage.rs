//! Context management (`pi_session::manage`): the renderings of every level for each kind of
//! entry (one snapshot per fixture of `fixtures/resolution`), the overlay saved in the file,
//! and properties of the planner (fits, deterministic, pinned untouched, tool calls always
//! answered, order kept) and of reopening (a reopened session plans and counts as the live one).

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use pi_session::manage::{PrepareOptions, Resolution, Threshold, render};
use pi_session::projection::rho;
use pi_session::reqllm::{self, Role};
use pi_session::types::StopReason;
use pi_session::{
    ProjectOptions, Reply, Session, StatsOptions, ToolCall, UserOptions, assistant, tool_result,
    user,
};
use proptest::prelude::*;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/resolution")
}

#[test]
fn every_level_of_every_entry_kind_renders_as_documented() {
    let mut seen = 0;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let entry: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut levels = serde_json::Map::new();
        for level in Resolution::ALL {
            let rendered = render(&entry, level);
            let sent = rendered.as_ref().map_or(Value::Null, |r| {
                reqllm::to_canonical_json(&rho::messages(
                    std::slice::from_ref(r),
                    &ProjectOptions::default(),
                ))
            });
            levels.insert(
                level.as_str().into(),
                json!({"entry": rendered, "reqLlm": sent}),
            );
        }
        // Full and Pinned are the entry itself; Compacted sends nothing.
        assert_eq!(levels["full"]["entry"], entry, "{name}");
        assert_eq!(levels["pinned"]["entry"], entry, "{name}");
        assert_eq!(levels["compacted"]["entry"], Value::Null, "{name}");
        // The snapshot: what Full sends, and the three levels that change the entry.
        let full_sent = levels["full"]["reqLlm"].clone();
        for same in ["full", "pinned", "compacted"] {
            levels.remove(same);
        }
        levels.insert("fullReqLlm".into(), full_sent);
        insta::assert_json_snapshot!(name, levels);
        seen += 1;
    }
    assert_eq!(seen, 8, "one fixture per entry kind");
}

#[test]
fn outlined_and_summarized_are_smaller_than_full() {
    for name in [
        "user",
        "assistant-text",
        "tool-result-text",
        "custom-message",
    ] {
        let entry: Value = serde_json::from_str(
            &std::fs::read_to_string(fixtures().join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let size = |level| {
            let rendered = render(&entry, level).unwrap();
            rho::messages(&[rendered], &ProjectOptions::default())
                .iter()
                .map(|m| m.text().len())
                .sum::<usize>()
        };
        let (full, outlined, summarized) = (
            size(Resolution::Full),
            size(Resolution::Outlined),
            size(Resolution::Summarized),
        );
        assert!(outlined < full / 2, "{name}: {outlined} of {full}");
        assert!(summarized < full / 5, "{name}: {summarized} of {full}");
    }
}

#[test]
fn stamps_are_saved_per_cursor_and_restored_on_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut main = Session::new(dir.path(), "anthropic:claude-x", "/w");
    let asked = main.append(user("first", UserOptions::new())).unwrap();
    let id = asked.id().unwrap().to_owned();
    let mut review = main.fork_named("review");
    main.set_resolution(&id, Resolution::Outlined).unwrap();
    main.set_resolution(&id, Resolution::Summarized).unwrap();
    review.pin_entry(&id).unwrap();
    assert_eq!(
        main.resolution_of(&id).unwrap(),
        Some(Resolution::Summarized)
    );
    assert_eq!(review.resolution_of(&id).unwrap(), Some(Resolution::Pinned));
    assert!(
        main.unpin_entry(&id).unwrap().is_none(),
        "not pinned on main"
    );
    let error = main.pin_entry("nope").unwrap_err();
    assert!(error.is_unknown_entry(), "{error}");

    let path = main.path().unwrap();
    drop((main, review));
    let opened = Session::open(&path, "x").unwrap().session;
    assert_eq!(
        opened.resolution_of(&id).unwrap(),
        Some(Resolution::Summarized)
    );
    let mut review = opened.checkout("review").unwrap();
    assert_eq!(review.resolution_of(&id).unwrap(), Some(Resolution::Pinned));
    review.unpin_entry(&id).unwrap().unwrap();
    assert_eq!(review.resolution_of(&id).unwrap(), None);
    // The stamped user message is sent summarized on main, verbatim on review.
    let first = |s: &Session| {
        s.prepare_context(&PrepareOptions::default())
            .unwrap()
            .messages[0]
            .text()
    };
    assert!(
        first(&opened).starts_with("[user: \"first\""),
        "{}",
        first(&opened)
    );
    assert_eq!(first(&review), "first");
}

#[test]
fn custom_state_is_read_from_the_branch() {
    let mut session = Session::in_memory("anthropic:claude-x", "/w");
    session.write_custom_state("ext", json!(1)).unwrap();
    let mut side = session.fork();
    session.write_custom_state("ext", json!(2)).unwrap();
    assert_eq!(session.read_custom_state("ext").unwrap(), Some(json!(2)));
    assert_eq!(side.read_custom_state("ext").unwrap(), Some(json!(1)));
    side.write_custom_message("ext.note", "hello").unwrap();
    assert_eq!(
        side.read_custom_message("ext.note").unwrap(),
        Some(json!("hello"))
    );
    assert_eq!(session.read_custom_message("ext.note").unwrap(), None);
    // State is never sent; the message is.
    assert!(
        session
            .context(&ProjectOptions::default())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        side.context(&ProjectOptions::default()).unwrap()[0].text(),
        "hello"
    );
}

#[test]
fn compact_older_than_keeps_whole_turns() {
    let mut session = Session::in_memory("anthropic:claude-x", "/w");
    let mut covered_len = 0;
    for n in 0..4 {
        turn(&mut session, n, 1);
    }
    let written = session
        .compact_older_than(Threshold::Turns(1), |covered| {
            covered_len = covered.len();
            "S".into()
        })
        .unwrap()
        .unwrap();
    let line = pi_session::types::to_js_string(&written).unwrap();
    assert!(
        line.contains(r#""type":"compaction""#) && line.contains(r#""tokensBefore":"#),
        "{line}"
    );
    let context = session.context(&ProjectOptions::default()).unwrap();
    assert!(context[0].text().contains("<summary>\nS\n</summary>"));
    assert_eq!(context[1].text(), "question 3");
    assert!(
        covered_len >= 9,
        "three turns of three entries, {covered_len}"
    );
    // Nothing older left: no second compaction.
    assert!(
        session
            .compact_older_than(Threshold::Turns(1), |_| "T".into())
            .unwrap()
            .is_none()
    );
    // By age: everything is newer than an hour.
    assert!(
        session
            .compact_older_than(Threshold::Age(std::time::Duration::from_secs(3600)), |_| {
                "U".into()
            })
            .unwrap()
            .is_none()
    );
}

/// One turn: a question, a call answered by a long result, and an answer.
fn turn(session: &mut Session, n: usize, calls: usize) {
    session
        .append(user(&format!("question {n}"), UserOptions::new()))
        .unwrap();
    let tool_calls: Vec<ToolCall> = (0..calls)
        .map(|c| {
            ToolCall::new(
                format!("call-{n}-{c}"),
                "read",
                json!({"path": format!("f{n}.rs")}),
            )
        })
        .collect();
    let reply = Reply {
        text: "let me look".into(),
        tool_calls: tool_calls.clone(),
        stop_reason: StopReason::ToolUse,
        ..Reply::default()
    };
    session.append(assistant(&reply, session.model())).unwrap();
    for (c, call) in tool_calls.iter().enumerate() {
        let output = (0..40)
            .map(|l| format!("{n}:{l} some output line"))
            .collect::<Vec<_>>()
            .join("\n");
        // Some results are errors: a summary of one says so (`isError`, a key the statistics
        // read only of an entry rendered at another level).
        let is_error = (n + c) % 3 == 2;
        session
            .append(tool_result(&call.id, "read", &output, is_error, &[], None))
            .unwrap();
    }
    let answer = Reply {
        text: format!("answer {n}: {}", "ok ".repeat(30)),
        ..Reply::default()
    };
    session.append(assistant(&answer, session.model())).unwrap();
}

/// An entry rendered at another level is rendered from all of its line: a reopened session's
/// statistics read a message's keys only (a result's `isError` is not among them), and the
/// whole line of an entry stamped so. A summarized error result counts as the live one does.
#[test]
fn a_stamped_error_result_counts_the_same_when_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), "anthropic:claude-x", "/w");
    // Turn 2's first result is an error (see `turn`).
    turn(&mut session, 2, 1);
    let ids = message_ids(&session);
    // The question, the call, its result, the answer.
    let result = &ids[2];
    session
        .set_resolution(result, Resolution::Summarized)
        .unwrap();
    let stats = |s: &Session| {
        s.context_stats(&ProjectOptions::default(), &StatsOptions::default())
            .unwrap()
    };
    let live = stats(&session);
    let path = session.path().unwrap();
    drop(session);
    let opened = Session::open(&path, "anthropic:claude-x").unwrap().session;
    assert_eq!(stats(&opened), live);
}

#[derive(Debug, Clone)]
enum Op {
    Turn { calls: usize },
    Stamp { entry: usize, level: usize },
    Pin(usize),
    Unpin(usize),
    Fork(usize),
    Switch(usize),
    Compact(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..3).prop_map(|calls| Op::Turn { calls }),
        2 => (any::<usize>(), 0usize..6).prop_map(|(entry, level)| Op::Stamp { entry, level }),
        2 => any::<usize>().prop_map(Op::Pin),
        1 => any::<usize>().prop_map(Op::Unpin),
        1 => (0usize..2).prop_map(Op::Fork),
        1 => any::<usize>().prop_map(Op::Switch),
        1 => (1usize..4).prop_map(Op::Compact),
    ]
}

/// Plays `ops` on a new session in `dir`; returns the cursors (the first unnamed).
/// The ids of the `message` entries on `session`'s branch, root first.
fn message_ids(session: &Session) -> Vec<String> {
    session
        .branch()
        .unwrap()
        .iter()
        .filter(|e| e.kind() == "message")
        .filter_map(|e| e.id().map(str::to_owned))
        .collect()
}

fn play(dir: &std::path::Path, ops: &[Op]) -> Vec<Session> {
    let mut cursors = vec![Session::new(dir, "anthropic:claude-x", "/w")];
    let mut current = 0;
    let mut turns = 0;
    for op in ops {
        let ids = message_ids(&cursors[current]);
        let pick = |i: &usize| ids.get(i % ids.len().max(1)).cloned();
        let count = cursors.len();
        let session = &mut cursors[current];
        match op {
            Op::Turn { calls } => {
                turn(session, turns, *calls);
                turns += 1;
            }
            Op::Stamp { entry, level } => {
                if let Some(id) = pick(entry) {
                    session
                        .set_resolution(&id, Resolution::ALL[*level])
                        .unwrap();
                }
            }
            Op::Pin(entry) => {
                if let Some(id) = pick(entry) {
                    session.pin_entry(&id).unwrap();
                }
            }
            Op::Unpin(entry) => {
                if let Some(id) = pick(entry) {
                    session.unpin_entry(&id).unwrap();
                }
            }
            Op::Fork(named) => {
                if !session.is_written() {
                    continue;
                }
                let fork = if *named == 1 {
                    session.fork_named(format!("cursor-{count}"))
                } else {
                    session.fork()
                };
                cursors.push(fork);
                current = cursors.len() - 1;
            }
            Op::Switch(i) => current = i % cursors.len(),
            Op::Compact(keep) => {
                session
                    .compact_older_than(Threshold::Turns(*keep), |c| format!("{} entries", c.len()))
                    .unwrap();
            }
        }
    }
    cursors
}

/// The call ids answered and asked in `messages`, and the synthetic results.
fn calls_of(messages: &[reqllm::Message]) -> (Vec<String>, Vec<String>, usize) {
    let asked = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().flatten().map(|c| c.id.clone()))
        .collect();
    let answered = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.tool_call_id.clone())
        .collect();
    let synthetic = messages
        .iter()
        .filter(|m| m.role == Role::Tool && m.text() == rho::ABORTED_TOOL_TEXT)
        .count();
    (asked, answered, synthetic)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_planner_fits_keeps_pins_pairs_and_order(
        ops in prop::collection::vec(op(), 1..30),
        budget in 50u64..4_000,
        percent in prop::sample::select(vec![0u64, 25, 50]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cursors = play(dir.path(), &ops);
        for cursor in &cursors {
            let options = PrepareOptions { budget: Some(budget), tool_result_percent: percent, ..PrepareOptions::default() };
            let planned = cursor.prepare_context(&options).unwrap();
            // Deterministic.
            prop_assert_eq!(&cursor.prepare_context(&options).unwrap(), &planned);
            let unbounded = cursor.prepare_context(&PrepareOptions::default()).unwrap();
            // Fits, or only what may not be touched is left, as small as it may be.
            if planned.fits() {
                prop_assert!(planned.stats.estimated_tokens <= budget);
            } else {
                prop_assert_eq!(planned.over_by, planned.stats.estimated_tokens - budget);
                for entry in planned.entries.iter().filter(|e| e.level != Resolution::Compacted) {
                    prop_assert!(entry.protected, "{:?} could have been evicted", entry);
                    prop_assert!(
                        entry.latest || matches!(entry.level, Resolution::Pinned | Resolution::Summarized),
                        "{:?} could have been downgraded", entry
                    );
                }
            }
            // Pinned entries are untouched: sent at their native resolution, never cut.
            let overlay = cursor.resolutions().unwrap();
            for entry in &planned.entries {
                if entry.id.as_ref().and_then(|id| overlay.get(id)) == Some(&Resolution::Pinned) {
                    prop_assert_eq!(entry.level, Resolution::Pinned);
                    prop_assert!(!entry.evicted && entry.bounded.is_none());
                }
            }
            // Tool calls are answered exactly as without a budget: no new synthetic results,
            // no result without its call.
            let (asked, answered, synthetic) = calls_of(&planned.messages);
            let (_, _, synthetic_before) = calls_of(&unbounded.messages);
            prop_assert!(synthetic <= synthetic_before);
            let asked: HashSet<String> = asked.into_iter().collect();
            for id in &answered {
                prop_assert!(asked.contains(id), "result {} without its call", id);
            }
            for id in &asked {
                prop_assert!(answered.contains(id), "call {} unanswered", id);
            }
            // Order kept: the entries sent are in branch order, and the planned list follows
            // the unbudgeted one.
            let ids = |p: &pi_session::manage::PreparedContext| p.entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
            prop_assert_eq!(ids(&planned), ids(&unbounded));
            // The latest turn is sent exactly as without a budget (bounded results aside).
            if percent == 0 && planned.entries.iter().any(|e| e.kind == "user") {
                let last_user = |p: &pi_session::manage::PreparedContext| {
                    let at = p.messages.iter().rposition(|m| m.role == Role::User && !m.text().starts_with("Prior model work")).unwrap();
                    p.messages[at..].to_vec()
                };
                prop_assert_eq!(last_user(&planned), last_user(&unbounded));
            }
        }
    }

    #[test]
    fn a_reopened_session_plans_and_counts_as_the_live_one(
        ops in prop::collection::vec(op(), 1..30),
        budget in 100u64..3_000,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let cursors = play(dir.path(), &ops);
        let Some(path) = cursors[0].path().filter(|_| cursors[0].is_written()) else {
            return Ok(());
        };
        let options = PrepareOptions { budget: Some(budget), ..PrepareOptions::default() };
        let mut live = BTreeMap::new();
        for cursor in &cursors {
            let key = (cursor.branch_name().map(str::to_owned), cursor.leaf_id());
            live.insert(key, (
                cursor.prepare_context(&options).unwrap(),
                cursor.context_stats(&ProjectOptions::default(), &StatsOptions::default()).unwrap(),
            ));
        }
        drop(cursors);
        let opened = Session::open(&path, "anthropic:claude-x").unwrap().session;
        for ((name, leaf), (prepared, stats)) in &live {
            let mut cursor = match name {
                // A named cursor that never wrote is not saved (and has no stamps).
                Some(name) => match opened.checkout(name) {
                    Ok(cursor) => cursor,
                    Err(_) => continue,
                },
                None => opened.fork(),
            };
            match leaf {
                Some(leaf) => cursor.branch_to(leaf).unwrap(),
                None => cursor.reset_leaf(),
            }
            prop_assert_eq!(&cursor.prepare_context(&options).unwrap(), prepared);
            prop_assert_eq!(
                &cursor.context_stats(&ProjectOptions::default(), &StatsOptions::default()).unwrap(),
                stats
            );
            // The streamed statistics are the planner's (stamps, pins, forks and compactions).
            prop_assert_eq!(
                &cursor.prepare_context(&PrepareOptions::default()).unwrap().stats,
                stats
            );
        }
    }
}
