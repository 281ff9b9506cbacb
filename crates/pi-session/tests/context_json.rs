//! `Session::context_json_at` (the agent and llm contexts as text, messages sent as written
//! copied from the file) and `Session::omp_agent_loop_each_leaving` (omp's agent loop's
//! messages, the same way) print exactly what printing `project_at`'s value gives: on every
//! fixture and corpus session (up to 4 MB), at each tip, the default leaf and `null`, in each
//! dialect, with and without a blob folder; and on lines written in other spellings than
//! `JSON.stringify`'s (whitespace, escapes, numbers, duplicate keys, lone surrogates), where
//! the copy must not be taken.

use std::path::Path;

use pi_session::projection::projection::omp_agent_loop_options;
use pi_session::store::Store;
use pi_session::tree::{BlobFolder, BlobSource, ContextOptions, Dialect, LeafSelector};
use pi_session::{ErrorKind, Format, Inputs, ProjectOptions, Session, UserOptions};
use pi_session_test_support::{LinearSession, fixture_and_corpus_files};
use pi_session_types::json::to_js_vec;
use serde_json::Value;

const LARGEST: u64 = 4 << 20;

/// Compares both paths at every leaf, dialect and format of the session at `path`; returns how
/// many comparisons were made.
fn compare_all(path: &Path) -> usize {
    let Ok((session, _)) = Session::read_in(&Store::Files, path, "anthropic:claude-x") else {
        return 0;
    };
    let mut leaves = vec![LeafSelector::Default, LeafSelector::Null];
    leaves.extend(session.tips().into_iter().map(LeafSelector::Id));
    let blob_dir = tempfile::tempdir().unwrap();
    let folder = BlobFolder::new(blob_dir.path());
    let mut compared = 0;
    for leaf in &leaves {
        for dialect in [Dialect::PI, Dialect::PI16, Dialect::OMP] {
            for blobs in [None, Some(&folder as &dyn BlobSource)] {
                for format in [Format::Agent, Format::Llm] {
                    let options = ProjectOptions {
                        dialect,
                        blobs,
                        ..ProjectOptions::default()
                    };
                    let (value, diagnostics) = session.project_at(leaf, format, &options).unwrap();
                    let (text, text_diagnostics) = session
                        .context_json_at(leaf, format, dialect, &ContextOptions { blobs })
                        .unwrap();
                    let case = format!("{leaf:?} {dialect:?} {format:?} blobs={}", blobs.is_some());
                    assert_same(
                        path,
                        &case,
                        (&text, &text_diagnostics),
                        (&value, &diagnostics),
                    );
                    compared += 1;
                }
            }
        }
        for blobs in [None, Some(&folder as &dyn BlobSource)] {
            for image in [true, false] {
                compare_agent_loop(&session, path, leaf, blobs, image);
                compared += 1;
            }
        }
    }
    compared
}

/// omp's agent loop a message at a time (`omp_agent_loop_each_leaving`) against printing
/// `project_at`'s value of `Format::OmpAgentLoop`, for a model that takes pictures or not.
fn compare_agent_loop(
    session: &Session,
    path: &Path,
    leaf: &LeafSelector,
    blobs: Option<&dyn BlobSource>,
    image: bool,
) {
    let inputs = Inputs {
        image,
        ..Inputs::default()
    };
    let options = ProjectOptions {
        dialect: Dialect::OMP,
        blobs,
        inputs,
        ..ProjectOptions::default()
    };
    let (value, diagnostics) = session
        .project_at(leaf, Format::OmpAgentLoop, &options)
        .unwrap();
    let mut text = b"[".to_vec();
    let (text_diagnostics, _) = session
        .omp_agent_loop_each_leaving(
            leaf,
            &omp_agent_loop_options(inputs),
            &ContextOptions { blobs },
            |message| {
                if text.len() > 1 {
                    text.push(b',');
                }
                text.extend_from_slice(&message.to_compact()?);
                Ok::<(), pi_session::Error>(())
            },
        )
        .unwrap();
    text.push(b']');
    let case = format!(
        "{leaf:?} omp-agent-loop image={image} blobs={}",
        blobs.is_some()
    );
    assert_same(
        path,
        &case,
        (&text, &text_diagnostics),
        (&value, &diagnostics),
    );
}

/// Asserts that the text written a message at a time (and its diagnostics) is what printing
/// the projected value gives (and as many diagnostics).
fn assert_same<D, E>(path: &Path, case: &str, written: (&[u8], &[D]), projected: (&Value, &[E])) {
    let (text, text_diagnostics) = written;
    let (value, diagnostics) = projected;
    let printed = to_js_vec(value).unwrap();
    assert!(
        text == printed,
        "{} {case}:\n  copied:  {}\n  printed: {}",
        path.display(),
        String::from_utf8_lossy(text),
        String::from_utf8_lossy(&printed),
    );
    assert_eq!(
        text_diagnostics.len(),
        diagnostics.len(),
        "{} {case}",
        path.display()
    );
}

#[test]
fn copied_text_is_the_printed_value_on_every_session() {
    let mut compared = 0;
    for path in fixture_and_corpus_files() {
        if std::fs::metadata(&path).is_ok_and(|m| m.len() <= LARGEST) {
            compared += compare_all(&path);
        }
    }
    assert!(compared > 1000, "only {compared} comparisons");
}

/// A pi session whose messages are written in spellings `JSON.stringify` does not use.
const SPELLINGS: &str = concat!(
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{ "role" : "user", "content" : "spaced", "timestamp" : 1 }}"#,
    "\n",
    r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"caf\u00e9 \/ \uD83D \ud83d\ude00 \ud83d"}],"provider":"p","model":"m","usage":{"input":1.0,"output":1e1,"cost":{"total":-0}},"stopReason":"stop","timestamp":2}}"#,
    "\n",
    r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"first","content":"second","timestamp":3,"1":"x","0":"y"}}"#,
    "\n",
    r#"{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"lone \udc00 and \ud800","timestamp":4}}"#,
    "\n",
    r#"{"type":"message","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"dup message key","timestamp":5},"message":{"role":"user","content":"the later one","timestamp":5}}"#,
    "\n",
    r#"{"type":"message","id":"f","parentId":"e","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"plain","timestamp":6}}"#,
    "\n",
);

#[test]
fn other_spellings_print_as_the_parsed_value() {
    let dir = tempfile::tempdir().unwrap();
    let (session, path) = crate::written_and_read(dir.path(), "spellings.jsonl", SPELLINGS);
    assert!(compare_all(&path) > 0);
    let (text, _) = session
        .context_json_at(
            &LeafSelector::Default,
            Format::Agent,
            Dialect::PI,
            &ContextOptions::default(),
        )
        .unwrap();
    let text = String::from_utf8(text).unwrap();
    // Printed as JSON.stringify prints them, not as written.
    for expected in [
        r#"{"role":"user","content":"spaced","timestamp":1}"#,
        r#""text":"café / \ud83d 😀 \ud83d""#,
        r#""usage":{"input":1,"output":10,"cost":{"total":0}}"#,
        r#"{"0":"y","1":"x","role":"user","content":"second","timestamp":3}"#,
        r#""content":"lone \udc00 and \ud800""#,
        r#"{"role":"user","content":"the later one","timestamp":5}"#,
        r#"{"role":"user","content":"plain","timestamp":6}"#,
    ] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
}

/// An omp session whose messages omp's `convertToLlm` and agent loop change in ways a few
/// keys do not tell alone: an assistant turn whose thinking an `interrupted-thinking` message
/// after it strips (the message read as a few keys must be read again whole), a `null`
/// attribution (replaced in place, not added), a pruned tool result, a steering message and
/// pictures (for a model that takes none).
const OMP_RULES: &str = concat!(
    r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"null attribution","attribution":null,"timestamp":1}}"#,
    "\n",
    r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Starting"},{"type":"thinking","thinking":"partial thought"}],"provider":"anthropic","model":"claude-x","usage":{"input":1,"output":1},"stopReason":"stop","timestamp":2}}"#,
    "\n",
    r#"{"type":"custom_message","customType":"interrupted-thinking","content":"Your previous turn was interrupted while thinking.","display":false,"attribution":"agent","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z"}"#,
    "\n",
    r#"{"type":"message","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"steer","steering":true,"timestamp":4}}"#,
    "\n",
    r#"{"type":"message","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t1","name":"bash","arguments":{"command":"ls"}}],"provider":"anthropic","model":"claude-x","usage":{"input":1,"output":1},"stopReason":"toolUse","timestamp":5}}"#,
    "\n",
    r#"{"type":"message","id":"f","parentId":"e","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"long "},{"type":"text","text":"output"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":false,"prunedAt":6,"timestamp":6}}"#,
    "\n",
    r#"{"type":"message","id":"g","parentId":"f","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"attribution":"user","timestamp":7}}"#,
    "\n",
    r#"{"type":"message","id":"h","parentId":"g","timestamp":"2026-01-01T00:00:08.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"anthropic","model":"claude-x","usage":{"input":1,"output":1},"stopReason":"stop","timestamp":8}}"#,
    "\n",
);

#[test]
fn omp_rules_that_read_more_than_a_few_keys_print_as_the_parsed_value() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("omp-rules.jsonl");
    std::fs::write(&path, OMP_RULES).unwrap();
    assert!(compare_all(&path) > 0);
    // The case is real: omp's llm messages strip the thinking its agent context holds.
    let (session, _) = Session::read_in(&Store::Files, &path, "anthropic:claude-x").unwrap();
    let text = |format| {
        let (text, _) = session
            .context_json_at(
                &LeafSelector::Default,
                format,
                Dialect::OMP,
                &ContextOptions::default(),
            )
            .unwrap();
        String::from_utf8(text).unwrap()
    };
    assert!(text(Format::Agent).contains("partial thought"));
    let llm = text(Format::Llm);
    assert!(!llm.contains("partial thought"), "{llm}");
    assert!(
        llm.contains(r#""content":"null attribution","attribution":"user""#),
        "{llm}"
    );
}

/// A pi session of `count` message entries after a few entries of other types: mostly short
/// user turns, an assistant turn (a new model) and a tool result now and then, some lines
/// spelled otherwise than `JSON.stringify` writes them, and `message` entries without a
/// message (diagnostics). With `edit`, a pi 1.6 `context_edit` before them names one of them;
/// with `kept`, a compaction after the 50th keeps them from the one with that id on.
fn long_branch(count: usize, edit: bool, kept: Option<&str>) -> String {
    let mut session = LinearSession::new();
    session.push("m0", r#""model_change","provider":"p0","modelId":"first""#);
    session.push(
        "c0",
        r#""custom_message","customType":"note","content":"remember","display":true"#,
    );
    if edit {
        session.push(
            "e0",
            r#""context_edit","targetId":"u7","replacement":{"content":"edited"}"#,
        );
    }
    for i in 0..count {
        if let Some(kept) = kept.filter(|_| i == 50) {
            // The branch's last entry that is not a message: the messages after it are read
            // in parts after a head that holds a compaction.
            session.push(
                "k0",
                &format!(
                    r#""compaction","summary":"before","firstKeptEntryId":"{kept}","tokensBefore":100"#
                ),
            );
        }
        let id = format!("u{i}");
        let body = match i % 1000 {
            17 => format!(
                r#""message","message":{{"role":"assistant","content":[{{"type":"text","text":"a{i}"}}],"provider":"p{i}","model":"m{i}","stopReason":"stop","timestamp":{i}}}"#
            ),
            18 => format!(
                r#""message","message":{{"role":"toolResult","toolCallId":"t{i}","toolName":"bash","content":[{{"type":"text","text":"ok"}}],"isError":false,"timestamp":{i}}}"#
            ),
            // A role pi's conversion makes a user message of: read whole for llm.
            19 => format!(
                r#""message","message":{{"role":"bashExecution","command":"ls","output":"a{i}","exitCode":0,"cancelled":false,"truncated":false,"timestamp":{i}}}"#
            ),
            400 => {
                format!(r#""message","message":{{ "role" : "user", "content" : "spaced {i}" }}"#)
            }
            // Left out with a diagnostic when read (the one at 30 lies before the sent part of
            // a compaction keeping from the 40th on).
            30 | 401 => r#""message","message":null"#.to_owned(),
            _ => format!(
                r#""message","message":{{"role":"user","content":"turn {i} \"q\"","timestamp":{i}}}"#
            ),
        };
        session.push(&id, &body);
    }
    session.into_text()
}

/// Asserts that `context_json_at` of the default leaf (the branch read in parts) prints what
/// `project_at` gives (the branch read whole), with the same diagnostics; returns that value.
fn printed_as_whole(session: &Session, format: Format, dialect: Dialect, case: &str) -> Value {
    let options = ProjectOptions {
        dialect,
        ..ProjectOptions::default()
    };
    let leaf = LeafSelector::Default;
    let (value, diagnostics) = session.project_at(&leaf, format, &options).unwrap();
    let (text, text_diagnostics) = session
        .context_json_at(&leaf, format, dialect, &ContextOptions::default())
        .unwrap();
    assert!(
        text == to_js_vec(&value).unwrap(),
        "{case}: the branch read in parts differs"
    );
    assert_eq!(
        format!("{text_diagnostics:?}"),
        format!("{diagnostics:?}"),
        "{case}"
    );
    value
}

/// A branch much longer than one part of what `context_each_at` reads at a time after the
/// last entry of another type: every message, the model (set late in the branch), the
/// diagnostics and, for llm, each conversion are what the whole branch read at once gives, in
/// every dialect; with a pi 1.6 context edit naming a later message, and with a compaction
/// before the messages read in parts (its kept range holding the assistant turn `u17`, or
/// not: then the head names no model and the tail is read with it).
#[test]
fn a_long_branch_read_in_parts_is_the_whole_branch() {
    let dir = tempfile::tempdir().unwrap();
    for (edit, kept) in [
        (false, None),
        (true, None),
        (false, Some("u10")),
        (false, Some("u40")),
    ] {
        let name = format!("long-{edit}-{kept:?}.jsonl");
        let text = long_branch(9_500, edit, kept);
        let (session, _) = crate::written_and_read(dir.path(), &name, &text);
        for dialect in [Dialect::PI, Dialect::PI16, Dialect::OMP] {
            for format in [Format::Agent, Format::Llm] {
                let case = format!("{dialect:?} {format:?} edit={edit} kept={kept:?}");
                let value = printed_as_whole(&session, format, dialect, &case);
                if format == Format::Agent && dialect == Dialect::PI {
                    assert_eq!(value["model"]["modelId"], "m9017");
                    // Every message (20 without one) and the custom one, or the summary
                    // and the messages from the kept one on.
                    let messages = value["messages"].as_array().unwrap();
                    match kept {
                        Some(_) => assert_eq!(messages[0]["role"], "compactionSummary"),
                        None => assert_eq!(messages.len(), 9_481),
                    }
                    assert!(messages.len() > 9_400, "{}", messages.len());
                }
            }
        }
    }
}

/// The parts of a long branch are read on threads of their own without the log's lock held
/// while their lines are read; a cursor of the same log appending to the file meanwhile (from
/// the callback that receives the messages, between parts) neither waits for the reads nor
/// changes what they give: the messages are those of the branch as it was asked for.
#[test]
fn appends_by_another_cursor_while_a_long_branch_is_read_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, long_branch(9_500, false, None)).unwrap();
    let session = Session::open(&path, "anthropic:claude-x").unwrap().session;
    let leaf = LeafSelector::Default;
    for format in [Format::Agent, Format::Llm] {
        let options = ProjectOptions::default();
        let (value, _) = session.project_at(&leaf, format, &options).unwrap();
        let mut side = session.fork();
        let (mut sent, mut appended) = (Vec::new(), 0);
        let context = ContextOptions::default();
        session
            .context_each_at(&leaf, format, Dialect::PI, &context, |message| {
                sent.push(serde_json::from_slice::<Value>(&message.to_compact()?)?);
                if sent.len() % 500 == 0 {
                    side.append(pi_session::user("meanwhile", UserOptions::new()))?;
                    appended += 1;
                }
                Ok::<(), Box<dyn std::error::Error>>(())
            })
            .unwrap();
        let messages = match format {
            Format::Agent => &value["messages"],
            _ => &value,
        };
        assert_eq!(Some(&sent), messages.as_array(), "{format:?}");
        assert!(
            sent.len() > 9_000 && appended == sent.len() / 500,
            "{format:?}"
        );
    }
}

/// A line rewritten in place after the open (the same length, another id) is no longer the
/// entry indexed there: no reader of the parts serves it, whichever way it reads the line (as
/// its keys, its copy, or rho's lists of members); the context ends with the store's "changed"
/// error, as a read of the whole entry does.
#[test]
fn a_line_rewritten_in_place_is_not_served_as_the_entry_indexed_there() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    let text = long_branch(9_500, false, None);
    std::fs::write(&path, &text).unwrap();
    let session = Session::open(&path, "anthropic:claude-x").unwrap().session;
    let rewritten = text.replace(r#""id":"u9000""#, r#""id":"x9000""#);
    assert_eq!(rewritten.len(), text.len());
    std::fs::write(&path, rewritten).unwrap();
    let leaf = LeafSelector::Default;
    let changed = |result: Result<(), pi_session::Error>, case: &str| match result {
        Err(error) => assert_eq!(error.kind(), ErrorKind::Changed, "{case}: {error}"),
        Ok(()) => panic!("{case}: the rewritten line was served"),
    };
    for dialect in [Dialect::PI, Dialect::PI16, Dialect::OMP] {
        for format in [Format::Agent, Format::Llm] {
            let context = ContextOptions::default();
            let read = session.context_json_at(&leaf, format, dialect, &context);
            changed(read.map(drop), &format!("{dialect:?} {format:?}"));
        }
    }
    for format in [Format::ReqLlm, Format::OpenAi, Format::Anthropic] {
        let options = ProjectOptions::default();
        let read =
            session.rho_items_each(&leaf, format, &options, |_| Ok::<_, pi_session::Error>(()));
        changed(read.map(drop), &format!("{format:?}"));
    }
}

/// Every conversion's keys ([`ConvertToLlm::reads`]) are among those its dialect's build reads
/// of a message (pi 0.73's and omp's), so the conversions take messages read as those keys: were one missing, every
/// message sent would be parsed whole (slower, and the same output, so nothing else fails).
#[test]
fn the_conversions_read_keys_the_build_reads() {
    use pi_session::projection::OmpAgentLoop;
    use pi_session::projection::dialect::{ConvertToLlm, convert_to_llm};
    use pi_session::projection::{OmpAgentLoopOptions, OmpImageGate};
    use pi_session::tree::context::message_keys;
    let looped = [
        OmpImageGate::Allow,
        OmpImageGate::Blocked,
        OmpImageGate::ModelWithoutImages,
    ]
    .map(|gate| {
        let options = OmpAgentLoopOptions::default().with_images(gate);
        (
            Dialect::OMP,
            OmpAgentLoop::of(&options) as &dyn ConvertToLlm,
        )
    });
    let conversions = [Dialect::PI, Dialect::PI16, Dialect::OMP]
        .map(|dialect| (dialect, convert_to_llm(dialect)))
        .into_iter()
        .chain(looped);
    for (dialect, convert) in conversions {
        let Some(keys) = message_keys(dialect) else {
            // pi 1.6's build reads whole messages (its context edits): nothing to check.
            assert_eq!(dialect, Dialect::PI16);
            continue;
        };
        assert!(!convert.reads().is_empty(), "{dialect:?}");
        for key in convert.reads() {
            assert!(keys.message.contains(key), "{dialect:?}: {key}");
        }
    }
}

/// A long omp branch of turns that omp's passes over the messages change: calls answered in
/// the next part or never (stripped, with their turn's thinking signatures), failed turns
/// (aborted or errors, empty or not) dropped with their results, or kept by an
/// interrupted-thinking mark after them, results of a dropped turn's calls coming after a user
/// message, retried turns, results of no call. `seed` picks the turns.
fn omp_branch(seed: u64, count: usize, compaction: bool, late_change: bool) -> String {
    let mut state = seed.max(1);
    let mut next = move |below: u64| {
        // xorshift64: the same branch for the same seed.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    let mut session = LinearSession::new();
    session.push(
        "m0",
        r#""model_change","provider":"anthropic","modelId":"claude-x""#,
    );
    let mut calls: Vec<String> = Vec::new();
    for i in 0..count {
        if compaction && i == 120 {
            session.push(
                "k0",
                r#""compaction","summary":"before","firstKeptEntryId":"e100","tokensBefore":100"#,
            );
        }
        if late_change && i == count - 40 {
            session.push("t0", r#""thinking_level_change","thinkingLevel":"high""#);
        }
        let assistant = |content: String, stop: &str, extra: &str| {
            format!(
                r#""message","message":{{"role":"assistant","content":[{content}],"provider":"p","model":"m{i}","stopReason":"{stop}"{extra},"timestamp":{i}}}"#
            )
        };
        let body = match next(100) {
            0..=29 => {
                // omp's conversions add a user message's attribution when it has none, keep
                // one it has, change one that is `null` and wrap a steering message.
                let extra = match next(12) {
                    0 => r#","attribution":"agent""#,
                    1 => r#","attribution":null"#,
                    2 => r#","steering":true"#,
                    _ => "",
                };
                format!(
                    r#""message","message":{{"role":"user","content":"turn {i}"{extra},"timestamp":{i}}}"#
                )
            }
            30..=44 => {
                // A turn ending in thinking without a signature, which omp's conversions strip
                // when an interrupted-thinking mark follows it.
                let thinking = match next(2) {
                    0 => format!(r#",{{"type":"thinking","thinking":"u{i}"}}"#),
                    _ => String::new(),
                };
                assistant(
                    format!(r#"{{"type":"text","text":"a{i}"}}{thinking}"#),
                    "stop",
                    "",
                )
            }
            45..=64 => {
                // A turn with calls (answered below, later, or never).
                let mut content = vec![format!(
                    r#"{{"type":"thinking","thinking":"t{i}","thinkingSignature":"s{i}"}}"#
                )];
                for k in 0..=next(2) {
                    let id = format!("c{i}_{k}");
                    content.push(format!(
                        r#"{{"type":"toolCall","id":"{id}","name":"ls","arguments":{{"k":{k}}}}}"#
                    ));
                    calls.push(id);
                }
                let stop = match next(10) {
                    0 => "aborted",
                    1 => "error",
                    _ => "toolUse",
                };
                assistant(content.join(","), stop, "")
            }
            65..=84 => {
                // A result: mostly of the latest call, else of an older one or of none.
                let id = match (next(8), calls.len()) {
                    (_, 0) | (0, _) => format!("none{i}"),
                    (1, n) => calls[next(n as u64) as usize].clone(),
                    (_, n) => calls[n - 1].clone(),
                };
                // A pruned result is collapsed by omp's conversions.
                let pruned = match next(10) {
                    0 => format!(r#","prunedAt":{i}"#),
                    _ => String::new(),
                };
                format!(
                    r#""message","message":{{"role":"toolResult","toolCallId":"{id}","toolName":"ls","content":[{{"type":"text","text":"r{i}"}}],"isError":false{pruned},"timestamp":{i}}}"#
                )
            }
            85..=89 => assistant(format!(r#"{{"type":"text","text":"x{i}"}}"#), "aborted", ""),
            90..=91 => assistant(format!(r#"{{"type":"text","text":"e{i}"}}"#), "error", ""),
            92 => assistant(String::new(), "error", ""),
            93 => assistant(
                format!(r#"{{"type":"text","text":"r{i}"}}"#),
                "stop",
                r#","retryRecovery":true"#,
            ),
            94..=96 => format!(
                r#""message","message":{{"role":"custom","customType":"interrupted-thinking","content":"i{i}","display":false,"timestamp":{i}}}"#
            ),
            _ => format!(
                r#""message","message":{{"role":"custom","customType":"note","content":"n{i}","display":true,"timestamp":{i}}}"#
            ),
        };
        session.push(&format!("e{i}"), &body);
    }
    session.into_text()
}

/// omp's build of a branch read in parts (its passes over the messages holding back the
/// messages they may still change, run over them once they can tell) gives what the branch
/// read whole gives: the agent context, its llm messages and omp's agent loop, with the same
/// diagnostics, on branches long enough to be read in many parts, with and without a head
/// (a compaction, a late entry that is not a message). The conversions read most messages of
/// such a part as a few keys, each asked again with the message after it (omp's
/// interrupted-thinking mark after a turn, in the same part or the next).
#[test]
fn an_omp_branch_read_in_parts_is_the_whole_branch() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases = 0;
    for seed in 1..=12_u64 {
        let compaction = seed % 3 != 0;
        let late_change = seed % 4 == 0;
        let text = omp_branch(seed, 3_000, compaction, late_change);
        assert!(text.len() > 400_000, "long enough for many parts");
        let name = format!("omp-{seed}.jsonl");
        let (session, _) = crate::written_and_read(dir.path(), &name, &text);
        let leaf = LeafSelector::Default;
        for format in [Format::Agent, Format::Llm] {
            printed_as_whole(
                &session,
                format,
                Dialect::OMP,
                &format!("seed {seed} {format:?}"),
            );
            cases += 1;
        }
        compare_agent_loop(&session, &dir.path().join(&name), &leaf, None, true);
    }
    assert_eq!(cases, 24);
}
