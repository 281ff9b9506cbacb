//! `Session`: new/append/open as rho does them (rho-reqllm.md §A.1–A.5), and the cursors.

use std::path::Path;

use pi_session::types::{Entry, JsonValue, StopReason};
use pi_session::{
    AttachedFile, AttachmentKind, NoticeKind, ProjectOptions, Reply, Session, SessionOptions,
    ToolCall, UserOptions, assistant, compaction, custom, model_change, tool_result, user,
};
use serde_json::json;

const MODEL: &str = "anthropic:claude-sonnet-4-5";

fn lines(path: &Path) -> Vec<JsonValue> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn say(text: &str) -> Entry {
    user(text, UserOptions::new())
}

fn reply(text: &str) -> Entry {
    assistant(
        &Reply {
            text: text.into(),
            ..Reply::default()
        },
        MODEL,
    )
}

#[test]
fn nothing_is_written_until_the_first_append() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::new(dir.path().join("sessions"), MODEL, "/w");
    assert!(!session.is_written());
    assert!(!dir.path().join("sessions").exists(), "not even the folder");
    assert_eq!(session.leaf_id(), None);
}

#[test]
fn the_first_append_writes_header_model_change_and_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path().join("a/b"), MODEL, "/work/proj");
    let written = session.append(say("hello there\nsecond line")).unwrap();
    let path = session.path().unwrap();
    let name = path.file_name().unwrap().to_str().unwrap().to_owned();
    let (stamp, rest) = name.split_once('_').unwrap();
    assert_eq!(stamp.len(), "2026-10-16T07-43-12-345Z".len(), "{name}");
    assert!(
        stamp.ends_with('Z') && !stamp.contains(':') && !stamp.contains('.'),
        "{name}"
    );
    assert_eq!(rest, format!("{}.jsonl", session.id()));
    assert_eq!(&session.id()[14..15], "7", "a UUIDv7 id");

    let file = lines(&path);
    assert_eq!(file.len(), 3);
    let header = file[0].as_object().unwrap();
    let mut keys: Vec<&str> = header.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["cwd", "id", "timestamp", "type", "version"],
        "pi's header keys: no title in a pi file"
    );
    assert_eq!(session.title().as_deref(), Some("hello there"));
    assert_eq!(header["version"], json!(3));
    assert_eq!(header["cwd"], json!("/work/proj"));
    assert_eq!(file[1]["type"], json!("model_change"));
    assert_eq!(file[1]["provider"], json!("anthropic"));
    assert_eq!(file[1]["modelId"], json!("claude-sonnet-4-5"));
    assert_eq!(file[1]["parentId"], JsonValue::Null);
    assert_eq!(file[2]["parentId"], file[1]["id"]);
    assert_eq!(
        serde_json::to_value(&written).unwrap(),
        file[2],
        "append returns the entry as read back"
    );
    let id = written.id().unwrap();
    assert!(
        id.len() == 8
            && id
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()),
        "{id}"
    );
    assert!(written.timestamp().unwrap().ends_with('Z'));
}

#[test]
fn a_set_title_wins_and_other_first_entries_give_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    // omp keeps the title in its header (after the title slot, line 0).
    let omp = SessionOptions {
        dialect: pi_session::tree::Dialect::OMP,
        ..SessionOptions::default()
    };
    let options = SessionOptions {
        title: Some("My title".into()),
        ..omp.clone()
    };
    let mut titled = Session::with_options(dir.path(), MODEL, "/w", options);
    titled.append(say("not this")).unwrap();
    assert_eq!(
        lines(&titled.path().unwrap())[1]["title"],
        json!("My title")
    );
    let reopened = Session::open(titled.path().unwrap(), MODEL).unwrap();
    assert_eq!(reopened.session.title().as_deref(), Some("My title"));

    let mut untitled = Session::with_options(dir.path(), MODEL, "/w", omp);
    untitled.append(custom(NoticeKind::Notice, "hi")).unwrap();
    assert_eq!(lines(&untitled.path().unwrap())[1]["title"], json!(""));

    let mut pictures = Session::new(dir.path(), MODEL, "/w");
    let file =
        AttachedFile::new(AttachmentKind::Image, "a.png", "image/png", "/w/a.png").image(vec![1]);
    pictures
        .append(user("", UserOptions::new().attach(file)))
        .unwrap();
    assert_eq!(pictures.title().as_deref(), Some("a.png"));
}

#[test]
fn a_model_change_switches_the_model_and_open_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), MODEL, "/w");
    session.append(say("hi")).unwrap();
    session.append(model_change("openai_codex:gpt-5")).unwrap();
    assert_eq!(session.model(), "openai_codex:gpt-5");
    let opened = Session::open(session.path().unwrap(), "fallback:model").unwrap();
    assert_eq!(opened.session.model(), "openai_codex:gpt-5");
    assert_eq!(opened.branch.len(), 3);
    assert!(opened.diagnostics.is_empty(), "{:?}", opened.diagnostics);
    assert_eq!(opened.session.title(), None, "a pi file has no title");
}

/// `entries_at` reads a batch as `entry_at` reads each: the file's entries (on every core), the
/// ones appended since, and positions asked out of order; one past the end is an error.
#[test]
fn entries_read_in_a_batch_are_those_read_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), MODEL, "/w");
    for n in 0..40 {
        session.append(say(&format!("question {n}"))).unwrap();
        session.append(reply(&format!("answer {n}"))).unwrap();
    }
    let path = session.path().unwrap().to_owned();
    drop(session);
    let mut opened = Session::open(&path, MODEL).unwrap().session;
    opened.append(say("after the open")).unwrap();
    let all: Vec<usize> = (0..opened.len()).collect();
    let one_by_one: Vec<Entry> = all.iter().map(|&at| opened.entry_at(at).unwrap()).collect();
    assert_eq!(opened.entries_at(&all).unwrap(), one_by_one);
    let scattered = [opened.len() - 1, 3, 0, 3];
    let expected: Vec<Entry> = scattered.iter().map(|&at| one_by_one[at].clone()).collect();
    assert_eq!(opened.entries_at(&scattered).unwrap(), expected);
    assert!(opened.entries_at(&[0, opened.len()]).is_err());
}

#[test]
fn open_falls_back_to_the_default_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n").unwrap();
    let opened = Session::open(&path, "openai:gpt-5").unwrap();
    assert_eq!(opened.session.model(), "openai:gpt-5");
    assert!(opened.branch.is_empty());
    assert_eq!(opened.session.leaf_id(), None);
}

#[test]
fn open_reports_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Session::open(dir.path().join("none.jsonl"), MODEL).unwrap_err();
    assert!(missing.is_io(), "{missing:?}");
    let headless = dir.path().join("headless.jsonl");
    std::fs::write(
        &headless,
        "{\"type\":\"label\",\"id\":\"a\",\"parentId\":null}\n",
    )
    .unwrap();
    let opened = Session::open(&headless, MODEL).unwrap();
    assert_eq!(opened.diagnostics.len(), 1, "{:?}", opened.diagnostics);
    assert_eq!(opened.branch.len(), 1);
    let mut session = opened.session;
    let error = session.append(say("more")).unwrap_err();
    assert!(error.is_not_a_session(), "{error:?}");
    assert!(error.to_string().contains("headless.jsonl"), "{error}");
    assert!(error.to_string().contains("fork_to"), "{error}");
    let damaged = dir.path().join("damaged.jsonl");
    std::fs::write(
        &damaged,
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/w\"}\n{\"type\":\"label\",\"id\":\"a\",\"parentId\":null}\n{not json\n",
    )
    .unwrap();
    let opened = Session::open(&damaged, MODEL).unwrap();
    assert_eq!(opened.branch.len(), 1);
    assert_eq!(opened.diagnostics.len(), 1, "{:?}", opened.diagnostics);
    assert!(
        opened.diagnostics[0]
            .to_string()
            .starts_with("line 3 (byte"),
        "{}",
        opened.diagnostics[0]
    );
}

/// Plays a loop with every kind of entry the builders make.
fn play(session: &mut Session) {
    session.append(say("list the files")).unwrap();
    let call = ToolCall::new("c1", "bash", json!({"z": 1, "a": [1, 2]}));
    let first = Reply {
        thinking: "t".into(),
        tool_calls: vec![call],
        stop_reason: StopReason::ToolUse,
        ..Reply::default()
    };
    session.append(assistant(&first, MODEL)).unwrap();
    session
        .append(tool_result("c1", "bash", "a\nb", false, &[], None))
        .unwrap();
    let kept = session.append(reply("two files")).unwrap();
    session
        .append(custom(NoticeKind::Aside, "by the way"))
        .unwrap();
    session
        .append(compaction("we listed files", kept.id().unwrap(), 900, 100))
        .unwrap();
    let dangling = Reply {
        tool_calls: vec![ToolCall::new("c2", "read", json!({}))],
        ..Reply::default()
    };
    session.append(assistant(&dangling, MODEL)).unwrap();
    session.append(say("never mind")).unwrap();
}

#[test]
fn a_resumed_session_sends_exactly_what_the_live_one_did() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), MODEL, "/w");
    play(&mut session);
    let options = ProjectOptions::default();
    let live = session.context(&options).unwrap();
    let live_entries = session.branch().unwrap();
    let opened = Session::open(session.path().unwrap(), "other:model").unwrap();
    assert_eq!(opened.branch, live_entries);
    assert_eq!(opened.session.context(&options).unwrap(), live);
    assert_eq!(pi_session::context(&opened.branch, &options), live);
    // summary, kept reply, aside, dangling call + its synthetic result, user.
    let roles: Vec<&str> = live.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant", "tool", "user"]
    );
    assert_eq!(live[4].text(), pi_session::aborted_tool_text());
    // Appending after resume continues the same branch (once the live writer is gone).
    drop(session);
    let mut resumed = opened.session;
    let next = resumed.append(say("again")).unwrap();
    assert_eq!(next.parent_id(), live_entries.last().unwrap().id());
}

#[test]
fn in_memory_sessions_behave_the_same() {
    let mut memory = Session::in_memory(MODEL, "/w");
    play(&mut memory);
    assert!(memory.path().is_none());
    assert_eq!(
        memory.entries().unwrap().len(),
        9,
        "model_change + 8 entries"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut file = Session::new(dir.path(), MODEL, "/w");
    play(&mut file);
    let options = ProjectOptions::default();
    assert_eq!(
        memory.context(&options).unwrap(),
        file.context(&options).unwrap()
    );
}

#[test]
fn forks_share_one_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut main = Session::new(dir.path(), MODEL, "/w");
    let root = main.append(say("start")).unwrap();
    let mut side = main.fork();
    main.append(reply("main answer")).unwrap();
    side.append(model_change("openai:gpt-5")).unwrap();
    let side_answer = side.append(reply("side answer")).unwrap();
    assert_eq!(side.model(), "openai:gpt-5");
    assert_eq!(
        main.model(),
        MODEL,
        "a fork's model change stays on its branch"
    );

    let main_texts: Vec<String> = main
        .context(&ProjectOptions::default())
        .unwrap()
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(main_texts, ["start", "main answer"]);
    let side_texts: Vec<String> = side
        .context(&ProjectOptions::default())
        .unwrap()
        .iter()
        .map(|m| m.text())
        .collect();
    assert_eq!(side_texts, ["start", "side answer"]);

    // One file holds both branches; on open the leaf is the last line (the side answer).
    let opened = Session::open(main.path().unwrap(), "x:y").unwrap();
    assert_eq!(opened.session.leaf_id().as_deref(), side_answer.id());
    assert_eq!(opened.session.model(), "openai:gpt-5");
    assert_eq!(
        main.entries().unwrap().len(),
        5,
        "model_change, start, two answers, one model_change"
    );

    // branch_to moves a cursor; its model follows the branch.
    side.branch_to(root.id().unwrap()).unwrap();
    assert_eq!(side.model(), MODEL);
    let error = side.branch_to("nope").unwrap_err();
    assert!(error.is_unknown_entry(), "{error:?}");
    side.reset_leaf();
    assert_eq!(side.leaf_id(), None);
}

#[test]
fn named_branches_follow_their_appends() {
    let dir = tempfile::tempdir().unwrap();
    let mut main = Session::new(dir.path(), MODEL, "/w");
    main.append(say("start")).unwrap();
    let mut experiment = main.fork_named("experiment");
    let tip = experiment.append(reply("try this")).unwrap();
    let again = main.checkout("experiment").unwrap();
    assert_eq!(again.leaf_id().as_deref(), tip.id());
    assert_eq!(again.branch_name(), Some("experiment"));
    assert_eq!(main.branch_names(), ["experiment"]);
    assert!(main.checkout("nope").is_err());
}

#[test]
fn branch_with_summary_appends_a_summary_at_the_new_position() {
    let dir = tempfile::tempdir().unwrap();
    let mut session = Session::new(dir.path(), MODEL, "/w");
    let start = session.append(say("start")).unwrap();
    session.append(reply("a long detour")).unwrap();
    let summary = session
        .branch_with_summary(start.id(), "tried a detour; it failed", None)
        .unwrap();
    assert_eq!(summary.parent_id(), start.id());
    assert_eq!(session.leaf_id().as_deref(), summary.id());
    let value = serde_json::to_value(&summary).unwrap();
    assert_eq!(value["type"], json!("branch_summary"));
    assert_eq!(value["fromId"], json!(start.id().unwrap()));
    assert_eq!(value["summary"], json!("tried a detour; it failed"));
    let ids: Vec<String> = session
        .branch()
        .unwrap()
        .iter()
        .filter_map(|e| e.id().map(str::to_owned))
        .collect();
    assert_eq!(ids.len(), 3, "model_change, start, summary: {ids:?}");
}

#[test]
fn a_second_writer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Session::new(dir.path(), MODEL, "/w");
    first.append(say("one")).unwrap();
    let mut second = Session::open(first.path().unwrap(), MODEL).unwrap().session;
    let error = second.append(say("two")).unwrap_err();
    assert!(error.is_busy(), "{error:?}");
    assert!(error.to_string().contains("close that session"), "{error}");
}

#[test]
fn sessions_can_move_between_threads() {
    fn assert_send<T: Send>(_: &T) {}
    let session = Session::in_memory(MODEL, "/w");
    assert_send(&session);
}

#[test]
fn cursors_made_before_the_first_append_start_after_the_model_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Session::new(dir.path(), MODEL, "/w");
    let mut second = first.fork();
    let mut third = first.fork();
    third.reset_leaf(); // an explicit reset means a new root
    let a = second.append(say("from the second cursor")).unwrap();
    let model_change_id = a.parent_id().unwrap().to_owned();
    assert_eq!(
        first.leaf_id().as_deref(),
        Some(model_change_id.as_str()),
        "follows the session's start"
    );
    let b = first.append(say("from the first cursor")).unwrap();
    assert_eq!(b.parent_id(), Some(model_change_id.as_str()));
    let c = third.append(say("a new root")).unwrap();
    assert_eq!(c.parent_id(), None);
    let opened = Session::open(first.path().unwrap(), "x:y").unwrap();
    assert_eq!(
        opened.session.model(),
        "x:y",
        "the last line is a root without a model_change"
    );
    let mut back = opened.session.fork();
    back.branch_to(b.id().unwrap()).unwrap();
    assert_eq!(back.model(), MODEL);
}

/// A pi 1.6 file (system prompt message, context edit) opened by the facade: its cursor's
/// agent context follows 1.6 under `Dialect::PI16` and 0.73 under `Dialect::PI`.
#[test]
fn a_pi16_file_gives_each_pi_release_its_own_agent_context() {
    use pi_session::tree::{ContextOptions, Dialect};
    let dir = tempfile::tempdir().unwrap();
    let file = pi_session_test_support::write_pi16_session(dir.path(), r#"null"#).unwrap();
    let opened = Session::open(&file, MODEL).unwrap();
    let roles = |dialect| {
        let (context, diagnostics) = opened
            .session
            .agent_context(dialect, &ContextOptions::default())
            .unwrap();
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        context
            .messages()
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(roles(Dialect::PI16), ["system"]);
    assert_eq!(roles(Dialect::PI), ["system", "user"]);
}

/// A host's loop: each turn appends a user message and a reply, then builds the context. The
/// facade keeps the entries of the last context and adds only what was appended; whatever
/// the turn (compactions, model changes, a move back on the branch), the answer is the
/// dialect's `buildSessionContext` over every body of the branch.
#[test]
fn the_agent_context_kept_between_turns_equals_a_fresh_one() {
    use pi_session::tree::{ContextOptions, Dialect, agent_context};
    for dialect in [Dialect::PI, Dialect::PI16, Dialect::OMP] {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::new(dir.path(), MODEL, "/w");
        let mut ids = Vec::new();
        let mut shared_before: Option<std::sync::Arc<Vec<std::sync::Arc<JsonValue>>>> = None;
        for turn in 0..24 {
            let asked = session.append(say(&format!("question {turn}"))).unwrap();
            ids.push(asked.id().unwrap().to_owned());
            session.append(reply(&format!("answer {turn}"))).unwrap();
            match turn {
                7 | 15 => {
                    let kept = &ids[ids.len() - 3];
                    session
                        .append(compaction("summary", kept, 1000, 100))
                        .unwrap();
                }
                11 => {
                    session.append(model_change("openai:gpt-5")).unwrap();
                }
                19 => session.branch_to(&ids[ids.len() - 2]).unwrap(),
                _ => {}
            }
            let (kept, _) = session
                .agent_context(dialect, &ContextOptions::default())
                .unwrap();
            let branch: Vec<JsonValue> = session
                .branch()
                .unwrap()
                .iter()
                .map(|e| serde_json::to_value(e).unwrap())
                .collect();
            let (fresh, _) = agent_context(&branch, dialect, &ContextOptions::default());
            assert_eq!(kept, fresh, "{dialect:?}, turn {turn}");
            let shared = session.turn_context(dialect).unwrap();
            let sent: Vec<JsonValue> = shared.llm.iter().map(|m| (**m).clone()).collect();
            assert_eq!(
                sent,
                pi_session::projection::llm_messages(fresh.messages(), dialect),
                "{dialect:?}, turn {turn}"
            );
            // What the turn before sent is shared (not copied again) when this turn only
            // appended messages (turns 7, 11, 15 and 19 also compact, change model, move).
            if let Some(before) = shared_before.as_ref()
                && ![7, 11, 15, 19].contains(&turn)
            {
                let before: &[std::sync::Arc<JsonValue>] = before.as_slice();
                let last = before.len() - 1;
                assert!(
                    std::sync::Arc::ptr_eq(&before[last], &shared.llm[last]),
                    "{dialect:?}, turn {turn}: a message sent before was copied"
                );
            }
            shared_before = Some(shared.llm);
        }
        let reopened = Session::open(session.path().unwrap(), MODEL).unwrap();
        let (kept, _) = reopened
            .session
            .agent_context(dialect, &ContextOptions::default())
            .unwrap();
        let branch: Vec<JsonValue> = reopened
            .branch
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        assert_eq!(
            kept,
            agent_context(&branch, dialect, &ContextOptions::default()).0
        );
    }
}

/// A host that drops each turn's context before the next one: the lists it is handed are the
/// session's own, extended in place (the same allocation turn after turn, nothing copied),
/// and still equal to a fresh build.
#[test]
fn a_dropped_turn_context_is_extended_in_place() {
    use pi_session::tree::Dialect;
    for dialect in [Dialect::PI, Dialect::OMP] {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::new(dir.path(), MODEL, "/w");
        session.append(say("question 0")).unwrap();
        session.append(reply("answer 0")).unwrap();
        let first = session.turn_context(dialect).unwrap();
        let (messages, llm) = (
            std::sync::Arc::as_ptr(&first.messages) as usize,
            std::sync::Arc::as_ptr(&first.llm) as usize,
        );
        drop(first);
        for turn in 1..6 {
            session.append(say(&format!("question {turn}"))).unwrap();
            session.append(reply(&format!("answer {turn}"))).unwrap();
            let context = session.turn_context(dialect).unwrap();
            assert_eq!(context.messages.len(), 2 * (turn + 1), "{dialect:?}");
            assert_eq!(context.llm.len(), 2 * (turn + 1), "{dialect:?}");
            assert_eq!(std::sync::Arc::as_ptr(&context.messages) as usize, messages);
            assert_eq!(std::sync::Arc::as_ptr(&context.llm) as usize, llm);
        }
    }
}

/// A pi session file: the header, then one chain of entries, each written with `fields` (its
/// keys after `type`, `id`, `parentId` and `timestamp`: e.g. `"message":{…}`).
fn chain_file(dir: &Path, entries: &[(&str, String)]) -> std::path::PathBuf {
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    );
    for (n, (kind, fields)) in entries.iter().enumerate() {
        let parent = match n {
            0 => "null".to_owned(),
            _ => format!("\"e{}\"", n - 1),
        };
        text.push_str(&format!(
            "{{\"type\":\"{kind}\",\"id\":\"e{n}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",{fields}}}\n"
        ));
    }
    let path = dir.join("chain.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

/// The model found at open walks back from the leaf over the few fields the rule reads; on a
/// long chain without an assistant turn (the whole branch read that way) and with one only at
/// the root (its role escaped, its model a lone surrogate, a key repeated), it is rho's
/// `model_from` of the whole branch, and an earlier `model_change` wins over a later
/// assistant turn.
#[test]
fn the_model_at_open_on_a_long_chain_is_model_from_the_whole_branch() {
    let dir = tempfile::tempdir().unwrap();
    let message = |body: &str| ("message", format!("\"message\":{body}"));
    let users: Vec<(&str, String)> = (0..3000)
        .map(|n| {
            let escape = if n % 7 == 0 {
                "\\u00e9 \\n"
            } else {
                "\\\"x\\\""
            };
            message(&format!(
                "{{\"role\":\"user\",\"content\":\"turn {n} {escape}\",\"timestamp\":1}}"
            ))
        })
        .collect();
    let opened_model = |entries: &[(&str, String)]| {
        let path = chain_file(dir.path(), entries);
        let (session, _) =
            Session::read_in(&pi_session::store::Store::Files, &path, "fallback:model").unwrap();
        let whole = pi_session::model_from(&session.branch().unwrap());
        assert_eq!(session.branch().unwrap().len(), entries.len());
        (session.model().to_owned(), whole)
    };

    assert_eq!(opened_model(&users), ("fallback:model".to_owned(), None));

    let roots = [
        (
            r#"{"role":"\u0061ssistant","content":[],"provider":"openai-codex","model":"gpt-5"}"#,
            "openai_codex:gpt-5",
        ),
        (
            r#"{"role":"assistant","content":[],"provider":"anthropic","model":"claude-\ud83d"}"#,
            "anthropic:claude-\u{10F83D}",
        ),
        (
            r#"{"role":"assistant","provider":"p","model":"m1","model":"m2","content":[]}"#,
            "p:m2",
        ),
    ];
    for (root, model) in roots {
        let entries: Vec<(&str, String)> = std::iter::once(message(root))
            .chain(users.iter().cloned())
            .collect();
        assert_eq!(
            opened_model(&entries),
            (model.to_owned(), Some(model.to_owned())),
            "{root}"
        );
    }

    let late = message(r#"{"role":"assistant","content":[],"provider":"a","model":"late"}"#);
    let mut entries = users.clone();
    entries.push(late.clone());
    assert_eq!(opened_model(&entries).0, "a:late");
    entries.insert(
        users.len() / 2,
        (
            "model_change",
            r#""provider":"b","modelId":"early""#.to_owned(),
        ),
    );
    entries.insert(
        users.len() / 3,
        (
            "model_change",
            r#""role":"smol","model":"c/small""#.to_owned(),
        ),
    );
    assert_eq!(
        opened_model(&entries),
        ("b:early".to_owned(), Some("b:early".to_owned()))
    );
}
