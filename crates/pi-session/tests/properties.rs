//! Property: whatever a host appends through any cursor, reopening the file gives every branch
//! exactly the context the live cursor had (the resume promise), and the builders' entries
//! always type as known entries.

use pi_session::tree::{ContextOptions, Dialect};
use pi_session::types::StopReason;
use pi_session::{
    CustomMessage, NoticeKind, ProjectOptions, Reply, Session, ThinkingLevelChange, ToolCall,
    UserOptions, assistant, compaction, custom, model_change, tool_result, user,
};
use proptest::prelude::*;
use serde_json::json;

#[derive(Debug, Clone)]
enum Op {
    User(String),
    Assistant {
        text: String,
        thinking: bool,
        calls: u8,
        /// 0 and 1: as the calls say; 2: `error`; 3: `aborted`.
        stop: u8,
    },
    ToolResult {
        call: usize,
        error: bool,
    },
    Notice(u8),
    Compaction {
        kept: usize,
    },
    ModelChange(u8),
    /// A thinking level change (0 clears it).
    Thinking(u8),
    /// omp's interrupted-thinking message: a `custom_message` entry (`true`) or a `message`
    /// entry whose message has the `custom` role.
    Interrupted(bool),
    Fork,
    Switch(usize),
    BranchTo(usize),
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a",
            "b",
            " ",
            "\n",
            "é",
            "👩‍👩‍👧",
            "\"",
            "<x>",
            "\u{202e}",
        ]),
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => text().prop_map(Op::User),
        3 => (text(), any::<bool>(), 0u8..3, 0u8..4).prop_map(|(text, thinking, calls, stop)| Op::Assistant { text, thinking, calls, stop }),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(call, error)| Op::ToolResult { call, error }),
        1 => (0u8..3).prop_map(Op::Notice),
        1 => any::<usize>().prop_map(|kept| Op::Compaction { kept }),
        1 => (0u8..3).prop_map(Op::ModelChange),
        1 => (0u8..3).prop_map(Op::Thinking),
        1 => any::<bool>().prop_map(Op::Interrupted),
        1 => Just(Op::Fork),
        1 => any::<usize>().prop_map(Op::Switch),
        1 => any::<usize>().prop_map(Op::BranchTo),
    ]
}

/// omp's interrupted-thinking `customType` (keeps an errored turn in omp's context).
const INTERRUPTED: &str = "interrupted-thinking";

const MODELS: [&str; 3] = [
    "anthropic:claude-x",
    "openai_codex:gpt-5",
    "openrouter:meta/llama:free",
];

/// What the last append left: its entry id and the model of the cursor that made it.
struct LastWrite {
    id: String,
    model: String,
}

/// Plays `ops`; returns the cursors and the last write (`None` when nothing was appended).
fn play(dir: &std::path::Path, ops: &[Op]) -> (Vec<Session>, Option<LastWrite>) {
    play_checked(dir, ops, &mut |_| {})
}

/// [`play`], calling `check` with the cursor written to after each append.
fn play_checked(
    dir: &std::path::Path,
    ops: &[Op],
    check: &mut dyn FnMut(&Session),
) -> (Vec<Session>, Option<LastWrite>) {
    let mut cursors = vec![Session::new(dir, MODELS[0], "/w")];
    let mut current = 0;
    let mut last = None;
    let mut calls: Vec<(String, String)> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut counter = 0;
    for op in ops {
        let session = &mut cursors[current];
        let entry = match op {
            Op::User(text) => Some(user(text, UserOptions::new())),
            Op::Assistant {
                text,
                thinking,
                calls: n,
                stop,
            } => {
                let tool_calls: Vec<ToolCall> = (0..*n)
                    .map(|_| {
                        counter += 1;
                        let id = format!("call-{counter}");
                        calls.push((id.clone(), "bash".to_owned()));
                        ToolCall::new(id, "bash", json!({"n": counter, "z": [1, "x"]}))
                    })
                    .collect();
                let stop_reason = match stop {
                    2 => StopReason::Error,
                    3 => StopReason::Aborted,
                    _ if tool_calls.is_empty() => StopReason::Stop,
                    _ => StopReason::ToolUse,
                };
                let reply = Reply {
                    text: text.clone(),
                    thinking: if *thinking {
                        "hmm".into()
                    } else {
                        String::new()
                    },
                    tool_calls,
                    stop_reason,
                    ..Reply::default()
                };
                Some(assistant(&reply, session.model()))
            }
            Op::ToolResult { call, error } => calls
                .get(call % calls.len().max(1))
                .map(|(id, name)| tool_result(id, name, "out", *error, &[], None)),
            Op::Notice(kind) => {
                let kind =
                    [NoticeKind::Notice, NoticeKind::Error, NoticeKind::Aside][usize::from(*kind)];
                Some(custom(kind, "note"))
            }
            Op::Compaction { kept } => {
                let first_kept = ids
                    .get(kept % ids.len().max(1))
                    .cloned()
                    .unwrap_or_else(|| "missing".to_owned());
                Some(compaction("summary", &first_kept, 1000, 100))
            }
            Op::ModelChange(i) => Some(model_change(MODELS[usize::from(*i)])),
            Op::Thinking(level) => Some(
                ThinkingLevelChange {
                    level: [None, Some("high"), Some("low")][usize::from(*level)]
                        .map(str::to_owned),
                }
                .entry(Dialect::OMP),
            ),
            Op::Interrupted(true) => Some(
                CustomMessage::new(INTERRUPTED, "the turn was interrupted").entry(Dialect::OMP),
            ),
            Op::Interrupted(false) => {
                let serde_json::Value::Object(map) = json!({"type": "message", "message": {
                    "role": "custom", "customType": INTERRUPTED,
                    "content": "the turn was interrupted", "display": false, "timestamp": 1}})
                else {
                    unreachable!("a json! object literal")
                };
                Some(pi_session::types::Entry::from_map(map))
            }
            Op::Fork => {
                let fork = cursors[current].fork();
                cursors.push(fork);
                current = cursors.len() - 1;
                None
            }
            Op::Switch(i) => {
                current = i % cursors.len();
                None
            }
            Op::BranchTo(i) => {
                if let Some(id) = ids.get(i % ids.len().max(1)) {
                    cursors[current].branch_to(id).unwrap();
                }
                None
            }
        };
        if let Some(entry) = entry {
            let written = cursors[current].append(entry).unwrap();
            assert!(!written.is_unknown(), "{:?}", written.fallback_reasons());
            ids.push(written.id().unwrap().to_owned());
            last = Some(LastWrite {
                id: ids[ids.len() - 1].clone(),
                model: cursors[current].model().to_owned(),
            });
            check(&cursors[current]);
        }
    }
    (cursors, last)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_branch_resumes_with_the_live_context(ops in prop::collection::vec(op(), 1..24)) {
        let dir = tempfile::tempdir().unwrap();
        let (cursors, last) = play(dir.path(), &ops);
        let options = ProjectOptions::default();
        let Some(last) = last else {
            // Nothing was appended: nothing is written.
            prop_assert!(cursors.iter().all(|c| !c.is_written()));
            prop_assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
            return Ok(());
        };
        let path = cursors[0].path().unwrap();
        // The file's leaf is the last entry written; a live cursor there sends this:
        let mut at_last = cursors[0].fork();
        at_last.branch_to(&last.id).unwrap();
        let at_last = at_last.context(&options).unwrap();
        let lives: Vec<_> =
            cursors.iter().map(|c| (c.leaf_id(), c.context(&options).unwrap())).collect();
        for cursor in &cursors {
            assert_lazy_agent_context(cursor)?;
        }
        drop(cursors);
        let opened = Session::open(&path, "default:model").unwrap();
        prop_assert!(opened.diagnostics.is_empty(), "{:?}", opened.diagnostics);
        prop_assert_eq!(&pi_session::context(&opened.branch, &options), &at_last);
        prop_assert_eq!(&opened.session.context(&options).unwrap(), &at_last);
        for (leaf, live) in &lives {
            let mut cursor = opened.session.fork();
            match leaf {
                Some(id) => cursor.branch_to(id).unwrap(),
                None => cursor.reset_leaf(),
            }
            prop_assert_eq!(&cursor.context(&options).unwrap(), live);
            assert_lazy_agent_context(&cursor)?;
        }
        prop_assert_eq!(opened.session.model(), last.model.as_str());
    }
}

/// The cursor's branch, every body as JSON.
fn branch_values(cursor: &Session) -> Vec<serde_json::Value> {
    cursor
        .branch()
        .unwrap()
        .iter()
        .map(|entry| serde_json::to_value(entry).unwrap())
        .collect()
}

/// The facade's `agent_context`, which reads only the bodies it sends (placeholders for the
/// rest), equals each dialect's `buildSessionContext` over every body of the branch.
fn assert_lazy_agent_context(cursor: &Session) -> Result<(), TestCaseError> {
    let branch = branch_values(cursor);
    for dialect in [Dialect::PI, Dialect::PI16, Dialect::OMP] {
        let (lazy, lazy_diagnostics) = cursor
            .agent_context(dialect, &ContextOptions::default())
            .unwrap();
        let (full, full_diagnostics) =
            pi_session::tree::agent_context(&branch, dialect, &ContextOptions::default());
        prop_assert_eq!(lazy, full, "{:?}", dialect);
        let lazy_diagnostics: Vec<_> = lazy_diagnostics.iter().filter_map(|d| d.tree()).collect();
        prop_assert_eq!(
            lazy_diagnostics,
            full_diagnostics.iter().collect::<Vec<_>>()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A host asking for the shared turn context after every append (one dialect per run, so
    /// the kept context grows turn by turn) gets each dialect's `buildSessionContext` over every
    /// body of the branch and its `convertToLlm`, whatever the appends were.
    #[test]
    fn the_shared_turn_context_is_the_full_one(
        ops in prop::collection::vec(op(), 1..24),
        dialect in prop::sample::select(vec![Dialect::PI, Dialect::PI16, Dialect::OMP]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut failure = None;
        play_checked(dir.path(), &ops, &mut |cursor| {
            if failure.is_none() {
                failure = turn_context_differs(cursor, dialect);
            }
        });
        prop_assert!(failure.is_none(), "{:?}", failure);
    }
}

/// What differs between `Session::turn_context` and the full build, if anything.
fn turn_context_differs(cursor: &Session, dialect: Dialect) -> Option<String> {
    let branch = branch_values(cursor);
    let (full, _) = pi_session::tree::agent_context(&branch, dialect, &ContextOptions::default());
    let turn = cursor.turn_context(dialect).unwrap();
    let messages: Vec<serde_json::Value> = turn.messages.iter().map(|m| (**m).clone()).collect();
    let llm: Vec<serde_json::Value> = turn.llm.iter().map(|m| (**m).clone()).collect();
    let mut settings = full.clone();
    match &mut settings {
        pi_session::tree::AgentContext::Pi(c) => c.messages.clear(),
        pi_session::tree::AgentContext::Omp(c) => c.messages.clear(),
    }
    if messages != full.messages() {
        return Some(format!("messages: {messages:?} != {:?}", full.messages()));
    }
    if llm != pi_session::projection::llm_messages(full.messages(), dialect) {
        return Some(format!("llm: {llm:?}"));
    }
    (turn.settings != settings).then(|| format!("settings: {:?} != {settings:?}", turn.settings))
}
