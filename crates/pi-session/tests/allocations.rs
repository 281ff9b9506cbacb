//! A context costs what it sends: the bytes allocated while projecting a branch grow with the
//! part that is sent, not with the file. Two sessions share the same sent part (a compaction,
//! its kept range and what follows) and differ only in what came before the compaction: 60
//! against 400 long turns (both larger than the 1 MiB the store holds whole, so both are read
//! the same way: by offset, through the same buffers). Projecting the long one may allocate a little more per entry
//! (branch positions, envelopes), never its unsent bodies (about 8 MB here).

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::System;

use pi_session::tree::Dialect;
use pi_session::{
    Format, ProjectOptions, Reply, Session, UserOptions, assistant, compaction, user,
};
use pi_session_test_support::LinearSession;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const MODEL: &str = "anthropic:claude-sonnet-4-5";

/// Held while a test measures (see [`allocates_what_it_sends`]).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A test's turn to measure (held until dropped) and a folder of its own.
fn measuring() -> (std::sync::MutexGuard<'static, ()>, tempfile::TempDir) {
    let turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    (turn, tempfile::tempdir().unwrap())
}

/// A session file of `before` long turns (10 KB each way), then a compaction keeping the last
/// short turn, then one more short turn.
fn session_with(dir: &std::path::Path, before: usize) -> std::path::PathBuf {
    let mut session = Session::new(dir, MODEL, "/w");
    let long = "x".repeat(10_000);
    for _ in 0..before {
        session.append(user(&long, UserOptions::new())).unwrap();
        let reply = Reply {
            text: long.clone(),
            ..Reply::default()
        };
        session.append(assistant(&reply, MODEL)).unwrap();
    }
    let kept = session
        .append(user("the kept question", UserOptions::new()))
        .unwrap();
    let reply = Reply {
        text: "the kept answer".into(),
        ..Reply::default()
    };
    session.append(assistant(&reply, MODEL)).unwrap();
    session
        .append(compaction(
            "what came before",
            kept.id().unwrap(),
            1000,
            100,
        ))
        .unwrap();
    session
        .append(user("a new question", UserOptions::new()))
        .unwrap();
    let reply = Reply {
        text: "a new answer".into(),
        ..Reply::default()
    };
    session.append(assistant(&reply, MODEL)).unwrap();
    session.path().unwrap()
}

/// Bytes allocated projecting the session at `path` to `format` (open not counted), and the
/// answer's length.
fn bytes_allocated(path: &std::path::Path, format: Format, dialect: Dialect) -> (usize, usize) {
    let (session, _) = Session::resume(path, MODEL).unwrap();
    let options = ProjectOptions {
        dialect,
        ..ProjectOptions::default()
    };
    let region = Region::new(GLOBAL);
    let (value, _) = session.project(format, &options).unwrap();
    let allocated = region.change().bytes_allocated;
    (allocated, value.to_string().len())
}

/// Bytes allocated writing the session at `path` as `format` text with
/// `Session::context_json_at` (open not counted), and the text's length.
fn text_bytes_allocated(
    path: &std::path::Path,
    format: Format,
    dialect: Dialect,
) -> (usize, usize) {
    let (session, _) = Session::resume(path, MODEL).unwrap();
    let region = Region::new(GLOBAL);
    let (text, _) = session
        .context_json_at(
            &pi_session::tree::LeafSelector::Default,
            format,
            dialect,
            &pi_session::tree::ContextOptions::default(),
        )
        .unwrap();
    (region.change().bytes_allocated, text.len())
}

/// Measures each of `cases` with `measure` on a session of 60 and one of 400 long turns
/// before the same sent part: the long one may allocate a little more per entry, never its
/// unsent bodies.
fn allocates_what_it_sends(
    cases: &[(Format, Dialect)],
    measure: fn(&std::path::Path, Format, Dialect) -> (usize, usize),
) {
    // The allocator's counts are the whole process's: the tests take turns.
    let (_turn, dir) = measuring();
    let short = session_with(&dir.path().join("short"), 60);
    let long = session_with(&dir.path().join("long"), 400);
    let unsent = std::fs::metadata(&long).unwrap().len() - std::fs::metadata(&short).unwrap().len();
    assert!(
        unsent > 7_000_000,
        "the long session has {unsent} more bytes"
    );
    for &(format, dialect) in cases {
        let (small, small_answer) = measure(&short, format, dialect);
        let (large, large_answer) = measure(&long, format, dialect);
        // The same part is sent (only the model's timestamps differ): the answers have the
        // same length.
        assert_eq!(small_answer, large_answer, "{format:?}");
        // 680 more entries before the compaction: at most ~700 bytes each of bookkeeping
        // (positions, envelopes), against 10 KB per unsent body.
        let extra = large.saturating_sub(small);
        assert!(
            extra < 680 * 700,
            "{format:?}/{dialect:?}: {large} bytes allocated against {small} ({extra} more for {unsent} unsent bytes)"
        );
    }
}

#[test]
fn a_context_allocates_what_it_sends_not_the_file() {
    allocates_what_it_sends(
        &[
            (Format::Agent, Dialect::PI),
            (Format::Agent, Dialect::OMP),
            (Format::Llm, Dialect::PI),
            (Format::OmpAgentLoop, Dialect::OMP),
            (Format::ReqLlm, Dialect::PI),
            (Format::OpenAi, Dialect::PI),
            (Format::Anthropic, Dialect::PI),
        ],
        bytes_allocated,
    );
}

#[test]
fn context_text_allocates_what_it_sends_not_the_file() {
    allocates_what_it_sends(
        &[
            (Format::Agent, Dialect::PI),
            (Format::Agent, Dialect::OMP),
            (Format::Llm, Dialect::PI),
            (Format::Llm, Dialect::OMP),
        ],
        text_bytes_allocated,
    );
}

/// Bytes allocated handing out the messages of the session at `path` as `format` with
/// `Session::context_each_at` (open not counted; nothing kept), and the messages' length.
fn each_bytes_allocated(
    path: &std::path::Path,
    format: Format,
    dialect: Dialect,
) -> (usize, usize) {
    let (session, _) = Session::resume(path, MODEL).unwrap();
    let (allocated, length, _) = each_allocated(&session, format, dialect);
    (allocated.bytes_allocated, length)
}

/// What handing out the messages of `session` as `format` with `Session::context_each_at`
/// allocates (nothing kept), the messages' length and their count.
fn each_allocated(
    session: &Session,
    format: Format,
    dialect: Dialect,
) -> (stats_alloc::Stats, usize, usize) {
    let region = Region::new(GLOBAL);
    let (mut length, mut count) = (0, 0);
    let leaf = pi_session::tree::LeafSelector::Default;
    let options = pi_session::tree::ContextOptions::default();
    let each = |message: pi_session::SentMessage<'_>| {
        length += message.to_compact()?.len();
        count += 1;
        Ok::<(), pi_session::Error>(())
    };
    if format == Format::OmpAgentLoop {
        let loop_options = pi_session::projection::OmpAgentLoopOptions::default();
        session
            .omp_agent_loop_each_leaving(&leaf, &loop_options, &options, each)
            .unwrap();
    } else {
        session
            .context_each_at(&leaf, format, dialect, &options, each)
            .unwrap();
    }
    (region.change(), length, count)
}

/// pi 0.73's rules read a message's role, provider and model only, and send it as stored: a
/// message sent as written is copied from its line and the rest of it is never built. pi 1.6's
/// read more (the whole message is parsed, and printed): the same session costs about twice
/// the bytes there.
#[test]
fn pi_messages_sent_as_written_are_read_as_their_role_only() {
    let (_turn, dir) = measuring();
    let mut session = Session::new(dir.path(), MODEL, "/w");
    let long = "x".repeat(10_000);
    for _ in 0..40 {
        session.append(user(&long, UserOptions::new())).unwrap();
        let reply = Reply {
            text: long.clone(),
            ..Reply::default()
        };
        session.append(assistant(&reply, MODEL)).unwrap();
    }
    let path = session.path().unwrap();
    drop(session);
    for format in [Format::Agent, Format::Llm] {
        let (shallow, length) = each_bytes_allocated(&path, format, Dialect::PI);
        let (whole, same_length) = each_bytes_allocated(&path, format, Dialect::PI16);
        assert_eq!(length, same_length, "{format:?}");
        assert!(length > 800_000, "{format:?}: {length}");
        // The copies (one message's text each) and bookkeeping; a message parsed whole
        // would add its own size again.
        assert!(
            shallow < length + length / 2,
            "{format:?}: {shallow} bytes allocated for {length} bytes of messages (pi 1.6: {whole})"
        );
    }
}

/// A chain of `turns` short user turns, written to a file in `dir` and read; with `compaction`,
/// a compaction after the 20th keeps them from the 10th on (the 15th an assistant's turn, as a
/// kept range holds: it names the model).
fn chain_of(dir: &std::path::Path, turns: usize, compaction: bool) -> Session {
    let path = dir.join(format!("chain-{turns}-{compaction}.jsonl"));
    let mut session = LinearSession::new();
    for i in 0..turns {
        if compaction && i == 15 {
            session.push(
                "a0",
                r#""message","message":{"role":"assistant","content":[],"provider":"p","model":"m","timestamp":1}"#,
            );
        }
        if compaction && i == 20 {
            session.push(
                "k0",
                r#""compaction","summary":"before","firstKeptEntryId":"m10","tokensBefore":100"#,
            );
        }
        session.push(
            &format!("m{i}"),
            &format!(
                r#""message","message":{{"role":"user","content":"turn {i}: a short question of about a hundred bytes, as a long chain holds","timestamp":{i}}}"#
            ),
        );
    }
    std::fs::write(&path, session.into_text()).unwrap();
    Session::read_in(&pi_session::store::Store::Files, &path, MODEL)
        .unwrap()
        .0
}

/// The most bytes held (allocated and not yet freed) while the messages of a chain of `turns`
/// short user turns are handed out as `format` (open not counted), and the messages' length.
fn held_for_chain(
    dir: &std::path::Path,
    turns: usize,
    compaction: bool,
    format: Format,
) -> (usize, usize) {
    let session = chain_of(dir, turns, compaction);
    let region = Region::new(GLOBAL);
    let (mut length, mut held) = (0usize, 0usize);
    let mut sent = |text: &[u8]| {
        length += text.len();
        let change = region.change();
        // A reallocation is counted in both as what it added or gave back.
        held = held.max(
            change
                .bytes_allocated
                .saturating_sub(change.bytes_deallocated),
        );
    };
    let leaf = pi_session::tree::LeafSelector::Default;
    if matches!(format, Format::Agent | Format::Llm) {
        session
            .context_each_at(
                &leaf,
                format,
                Dialect::PI,
                &pi_session::tree::ContextOptions::default(),
                |message| {
                    sent(&message.to_compact()?);
                    Ok::<(), pi_session::Error>(())
                },
            )
            .unwrap();
    } else {
        session
            .rho_items_each(&leaf, format, &ProjectOptions::default(), |item| {
                sent(&serde_json::to_vec(&item).unwrap());
                Ok::<(), pi_session::Error>(())
            })
            .unwrap();
    }
    (held, length)
}

/// A long branch of `message` entries is read, built on (projected, for rho's formats) and
/// sent a part at a time, each part freed once sent: what is held while the messages are
/// handed out grows with the branch by its positions (a few words an entry: ~64 bytes), not
/// by its entries and copies (~1 KB an entry read whole). 30,000 more short turns (~3.6 MB more
/// of messages) hold less memory more than those messages' size (read whole: ~30 MB more).
/// The agent and llm contexts likewise when a compaction comes before the messages.
#[test]
fn a_long_branch_is_held_a_part_at_a_time() {
    let (_turn, dir) = measuring();
    let cases = [Format::Agent, Format::Llm, Format::ReqLlm, Format::OpenAi]
        .map(|format| (format, false))
        .into_iter()
        .chain([(Format::Agent, true), (Format::Llm, true)]);
    for (format, compaction) in cases {
        let (short_held, short_length) = held_for_chain(dir.path(), 10_000, compaction, format);
        let (long_held, long_length) = held_for_chain(dir.path(), 40_000, compaction, format);
        let more = long_length - short_length;
        assert!(more > 3_000_000, "{format:?} {compaction}: {more}");
        assert!(
            long_held.saturating_sub(short_held) < more,
            "{format:?} compaction={compaction}: {short_held} then {long_held} bytes held for {short_length} then {long_length} bytes of messages"
        );
    }
}

/// The allocations made handing out `format` of `dialect` for a chain of `turns` short user
/// turns (open not counted), per message.
fn allocations_per_message(
    dir: &std::path::Path,
    turns: usize,
    format: Format,
    dialect: Dialect,
) -> f64 {
    let session = chain_of(dir, turns, false);
    let (allocated, _, sent) = each_allocated(&session, format, dialect);
    assert_eq!(sent, turns);
    allocated.allocations as f64 / turns as f64
}

/// The messages of a long branch sent as written are read as the keys the dialect's rules (and
/// its `convertToLlm`, and omp's agent loop) read of their messages, into a list, never into a
/// value of the entry (two maps, a key and a value string each member: 13 allocations a
/// message here for pi, 15 for omp): the list, its role and the copy of the message's text
/// come to three a message (omp's conversions, which add an attribution to a user message,
/// one more: the copy with it), the bookkeeping to a few a part.
#[test]
fn a_long_branch_sent_as_written_builds_no_value_per_message() {
    let (_turn, dir) = measuring();
    let cases = [
        (Format::Agent, Dialect::PI),
        (Format::Llm, Dialect::PI),
        (Format::Agent, Dialect::OMP),
        (Format::Llm, Dialect::OMP),
        (Format::OmpAgentLoop, Dialect::OMP),
    ];
    for (format, dialect) in cases {
        let per_message = allocations_per_message(dir.path(), 20_000, format, dialect);
        assert!(
            per_message < 6.0,
            "{format:?} {dialect:?}: {per_message} allocations a message"
        );
    }
}
