//! The fixed script that writes `fixtures/ours/<dialect>/*.jsonl` through our facade
//! (`pi-session`), the way a Rust agent host would: user turns with attachments, assistant
//! replies with thinking and tool calls, tool results, notices, a model switch, a compaction,
//! forks and a branch summary; and, in both dialects, every dialect-aware write (model and
//! thinking-level changes, labels set and cleared, the session name, `custom` and
//! `custom_message` entries, a saved named cursor) and a fork to a new file (`fork_to`).
//!
//! Everything that would vary between runs is fixed: the header id and time, the writer's clock
//! and entry ids ([`FixedStamps`]), and each message's millisecond `timestamp` (set by
//! [`Script::add`] before the append). Writing the script twice gives the same bytes.

use std::path::Path;

use pi_session::store::{SessionWriter, Stamps, WriterOptions, new_header_with};
use pi_session::tree::Dialect;
use pi_session::types::{Entry, IsoTimestamp, JsonMap, StopReason};
use pi_session::{
    AttachedFile, AttachmentKind, CustomEntry, CustomMessage, NoticeKind, Picture, Reply, Session,
    ToolCall, UserOptions, assistant, compaction, custom, model_change, tool_result, user,
};
use serde_json::{Value, json};

/// 2026-01-15T09:00:00.000Z, the recorder's clock start, in Unix milliseconds.
const START_MS: i64 = 1_768_467_600_000;

/// One scripted session: its file name (without `.jsonl`), what it exercises, and the script.
#[derive(Debug, Clone, Copy)]
pub struct Scenario {
    /// The file name without `.jsonl`.
    pub name: &'static str,
    /// What it exercises.
    pub about: &'static str,
    /// The dialect the session is written in (its folder: `fixtures/ours/<dialect>/`).
    pub dialect: Dialect,
    /// Appends its entries.
    pub write: fn(&mut Script) -> pi_session::Result<()>,
}

/// The scenarios, in the order they are written.
pub const SCENARIOS: [Scenario; 13] = [
    Scenario {
        name: "chat-with-tools",
        about: "user turn, assistant thinking + tool call, tool result, answer",
        dialect: Dialect::PI,
        write: chat_with_tools,
    },
    Scenario {
        name: "attachments-and-notices",
        about: "text/picture attachments, notices, steering, an aborted and a failed turn, an error tool result",
        dialect: Dialect::PI,
        write: attachments_and_notices,
    },
    Scenario {
        name: "model-switch-and-unicode",
        about: "a model change mid-session; emoji, CJK, RTL and combining marks",
        dialect: Dialect::PI,
        write: model_switch_and_unicode,
    },
    Scenario {
        name: "compaction",
        about: "a compaction keeping the last turn, then more turns",
        dialect: Dialect::PI,
        write: compaction_script,
    },
    Scenario {
        name: "forks-and-branch-summary",
        about: "two cursors on one log, a branch summary, branch_to an earlier entry",
        dialect: Dialect::PI,
        write: forks_and_summary,
    },
    Scenario {
        name: "host-writes",
        about: "model and thinking-level changes, a label set, cleared and set again, the session name, custom and custom_message entries, a reply, a saved named cursor, in pi's shapes",
        dialect: Dialect::PI,
        write: host_writes,
    },
    Scenario {
        name: "host-writes",
        about: "the same in omp's shapes (model_change {model}, title_change and the title slot, attribution)",
        dialect: Dialect::OMP,
        write: host_writes,
    },
    Scenario {
        name: "fork-to",
        about: "fork_to of a session with a compaction, labels and a side branch, at the main tip: a new file with parentSession, ids and timestamps kept",
        dialect: Dialect::PI,
        write: fork_to_script,
    },
    Scenario {
        name: "fork-to",
        about: "the same written in omp's shapes",
        dialect: Dialect::OMP,
        write: fork_to_script,
    },
    Scenario {
        name: "stamps-and-compaction",
        about: "context management: resolution stamps, pins and an unpin on two cursors, extension state and a custom message, then compact_older_than keeping the last turn",
        dialect: Dialect::PI,
        write: stamps_and_compaction,
    },
    Scenario {
        name: "stamps-and-compaction",
        about: "the same written in omp's shapes",
        dialect: Dialect::OMP,
        write: stamps_and_compaction,
    },
    Scenario {
        name: "migrated-v1",
        about: "Session::migrate of pi's version 1 file (fixtures/pi/v1-format.jsonl): rewritten as version 3, ids assigned, references remapped",
        dialect: Dialect::PI,
        write: migrated_v1,
    },
    Scenario {
        name: "migrated-v2",
        about: "Session::migrate of pi's version 2 file (fixtures/pi/v2-format.jsonl): rewritten as version 3",
        dialect: Dialect::PI,
        write: migrated_v2,
    },
];

/// The folder name of a dialect under `fixtures/ours/`.
pub fn folder(dialect: Dialect) -> &'static str {
    dialect.as_str()
}

/// The deterministic clock and id source handed to the store's writer.
#[derive(Debug)]
pub struct FixedStamps {
    seconds: i64,
    ids: u64,
    seed: u64,
}

impl FixedStamps {
    /// Stamps for the scenario `name` (ids differ between scenarios, never between runs).
    pub fn new(name: &str) -> Self {
        let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        Self {
            seconds: 0,
            ids: 0,
            seed,
        }
    }
}

impl Stamps for FixedStamps {
    fn now(&mut self) -> IsoTimestamp {
        self.seconds += 1;
        IsoTimestamp::from_unix_ms(START_MS + self.seconds * 1000)
            .unwrap_or_else(|| IsoTimestamp::new("2026-01-15T09:00:00.000Z"))
    }

    fn entry_id(&mut self) -> String {
        self.ids += 1;
        format!("{:08x}", splitmix64(self.seed.wrapping_add(self.ids)) >> 32)
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A session being written by the script, with the message clock.
#[derive(Debug)]
pub struct Script {
    /// The main cursor.
    pub session: Session,
    message_ms: i64,
    /// The scenario's file.
    target: std::path::PathBuf,
}

impl Script {
    /// A new session at `path` (which must not exist) for scenario `name`, written in
    /// `dialect` (omp's files have the title slot).
    pub fn new(path: &Path, name: &str, dialect: Dialect) -> Self {
        let header = new_header_with(
            "/work/ours-demo",
            uuid_for(name),
            "2026-01-15T09:00:00.000Z",
        );
        let options = WriterOptions {
            title_slot: dialect.has_title_slot(),
            ..WriterOptions::default()
        };
        let writer =
            SessionWriter::create_at(path, header, options).with_stamps(FixedStamps::new(name));
        let mut session = Session::from_writer(writer, "anthropic:claude-sonnet-4-5", None);
        session.set_dialect(dialect);
        Self {
            session,
            message_ms: START_MS,
            target: path.to_path_buf(),
        }
    }

    /// Appends `entry` through `cursor`, its message `timestamp` set from the script's clock.
    pub fn add_to(&mut self, cursor: &mut Session, entry: Entry) -> pi_session::Result<Entry> {
        self.message_ms += 1000;
        cursor.append(with_message_timestamp(entry, self.message_ms))
    }

    /// Appends `entry` through the main cursor.
    pub fn add(&mut self, entry: Entry) -> pi_session::Result<Entry> {
        self.message_ms += 1000;
        self.session
            .append(with_message_timestamp(entry, self.message_ms))
    }
}

/// A fixed UUID-shaped header id for scenario `name`.
fn uuid_for(name: &str) -> String {
    let h = splitmix64(FixedStamps::new(name).seed);
    let l = splitmix64(h);
    format!(
        "{:08x}-{:04x}-7{:03x}-8{:03x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        (l >> 52) & 0xfff,
        l & 0xffff_ffff_ffff
    )
}

/// `entry` with `message.timestamp` replaced (entries without a message are unchanged).
fn with_message_timestamp(entry: Entry, ms: i64) -> Entry {
    let Ok(Value::Object(mut map)) = serde_json::to_value(&entry) else {
        return entry;
    };
    match map.get_mut("message") {
        Some(Value::Object(message)) if message.contains_key("timestamp") => {
            message.insert("timestamp".into(), ms.into());
        }
        _ => return entry,
    }
    Entry::from_map(map)
}

fn usage(input: u64, output: u64, cost: f64) -> JsonMap {
    let value = json!({"input_tokens": input, "output_tokens": output, "total_cost": cost});
    value.as_object().cloned().unwrap_or_default()
}

fn chat_with_tools(s: &mut Script) -> pi_session::Result<()> {
    s.add(user("What is in README.md?", UserOptions::new()))?;
    let model = s.session.model().to_owned();
    let call = ToolCall::new("toolu_01", "read", json!({"path": "README.md"}));
    let reply = Reply {
        thinking: "The user wants the README; read it first.".into(),
        text: "Let me read it.".into(),
        tool_calls: vec![call],
        stop_reason: StopReason::ToolUse,
        usage: usage(1200, 40, 0.0042),
        ..Reply::default()
    };
    s.add(assistant(&reply, &model))?;
    s.add(tool_result(
        "toolu_01",
        "read",
        "# Demo\n\nA small app that says \"hello\".\n",
        false,
        &[],
        None,
    ))?;
    let answer = Reply {
        text: "README.md describes a small app that says \"hello\".".into(),
        usage: usage(1300, 20, 0.0039),
        ..Reply::default()
    };
    s.add(assistant(&answer, &model))?;
    Ok(())
}

/// A 1×1 transparent PNG.
const PNG: [u8; 67] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

fn attachments_and_notices(s: &mut Script) -> pi_session::Result<()> {
    let model = s.session.model().to_owned();
    let notes = AttachedFile::new(
        AttachmentKind::Text,
        "notes.txt",
        "text/plain",
        "/work/ours-demo/notes.txt",
    )
    .about("42 B")
    .text("remember: <b>bold</b> & \"quotes\"");
    let picture = AttachedFile::new(
        AttachmentKind::Image,
        "dot.png",
        "image/png",
        "/work/ours-demo/dot.png",
    )
    .about("1×1 PNG")
    .image(PNG.to_vec());
    s.add(user(
        "Look at these files.",
        UserOptions::new().attach(notes).attach(picture),
    ))?;
    let aborted = Reply {
        text: "I was about to".into(),
        stop_reason: StopReason::Aborted,
        ..Reply::default()
    };
    s.add(assistant(&aborted, &model))?;
    s.add(custom(NoticeKind::Notice, "Stopped by the user."))?;
    s.add(user(
        "Try again, briefly.",
        UserOptions::new().steering(true),
    ))?;
    let failed = Reply {
        stop_reason: StopReason::Error,
        error: Some("overloaded_error: try later".into()),
        ..Reply::default()
    };
    s.add(assistant(&failed, &model))?;
    s.add(custom(NoticeKind::Error, "The provider was overloaded."))?;
    s.add(custom(NoticeKind::Aside, "Retrying once."))?;
    let call = ToolCall::new("toolu_02", "screenshot", json!({}));
    let calling = Reply {
        tool_calls: vec![call],
        stop_reason: StopReason::ToolUse,
        ..Reply::default()
    };
    s.add(assistant(&calling, &model))?;
    let shot = Picture::new(PNG.to_vec(), "image/png");
    s.add(tool_result(
        "toolu_02",
        "screenshot",
        "captured",
        false,
        &[shot],
        Some(json!({"width": 1, "height": 1})),
    ))?;
    let call = ToolCall::new("toolu_03", "bash", json!({"command": "false"}));
    let calling = Reply {
        tool_calls: vec![call],
        stop_reason: StopReason::ToolUse,
        ..Reply::default()
    };
    s.add(assistant(&calling, &model))?;
    s.add(tool_result(
        "toolu_03",
        "bash",
        "exit status 1",
        true,
        &[],
        None,
    ))?;
    s.add(assistant(
        &Reply {
            text: "A text file and a dot.".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    Ok(())
}

fn model_switch_and_unicode(s: &mut Script) -> pi_session::Result<()> {
    s.add(user("Grüße! 你好 🙂 שלום e\u{301}", UserOptions::new()))?;
    let model = s.session.model().to_owned();
    s.add(assistant(
        &Reply {
            text: "Hallo — 你好 👋🏽 مرحبا".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    s.add(model_change("openai:gpt-5"))?;
    let model = s.session.model().to_owned();
    s.add(user("Same in one word?", UserOptions::new()))?;
    s.add(assistant(
        &Reply {
            thinking: "one word: 👋".into(),
            text: "👋".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    Ok(())
}

fn compaction_script(s: &mut Script) -> pi_session::Result<()> {
    let model = s.session.model().to_owned();
    for (question, answer) in [("one", "1"), ("two", "2")] {
        s.add(user(question, UserOptions::new()))?;
        s.add(assistant(
            &Reply {
                text: answer.into(),
                ..Reply::default()
            },
            &model,
        ))?;
    }
    let kept = s.add(user("three", UserOptions::new()))?;
    s.add(assistant(
        &Reply {
            text: "3".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    let kept_id = kept.id().unwrap_or_default().to_owned();
    s.add(compaction(
        "The user counted: one, two.",
        &kept_id,
        5000,
        1200,
    ))?;
    s.add(user("four", UserOptions::new()))?;
    s.add(assistant(
        &Reply {
            text: "4".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    Ok(())
}

fn forks_and_summary(s: &mut Script) -> pi_session::Result<()> {
    let model = s.session.model().to_owned();
    let question = s.add(user("Pick a name.", UserOptions::new()))?;
    let mut side = s.session.fork();
    let ada = s.add(assistant(
        &Reply {
            text: "Ada".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    s.add_to(
        &mut side,
        assistant(
            &Reply {
                text: "Grace".into(),
                ..Reply::default()
            },
            &model,
        ),
    )?;
    s.add_to(&mut side, user("Why Grace?", UserOptions::new()))?;
    s.add(user("Shorter?", UserOptions::new()))?;
    s.add(assistant(
        &Reply {
            text: "Al".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    let question_id = question.id().unwrap_or_default().to_owned();
    s.session.branch_with_summary(
        Some(&question_id),
        "Tried Ada, then Al.",
        Some(json!({"readFiles": []})),
    )?;
    s.add(assistant(
        &Reply {
            text: "Then: Lin.".into(),
            ..Reply::default()
        },
        &model,
    ))?;
    s.session.branch_to(ada.id().unwrap_or_default())?;
    s.add(user("Back to Ada, then.", UserOptions::new()))?;
    Ok(())
}

fn host_writes(s: &mut Script) -> pi_session::Result<()> {
    let first = s.add(user("Plan the refactor.", UserOptions::new()))?;
    let first_id = first.id().unwrap_or_default().to_owned();
    s.session.set_model("openai:gpt-5")?;
    s.session.set_thinking_level(Some("high"))?;
    s.session.set_label(&first_id, Some("plan"))?;
    s.session.set_label(&first_id, None)?;
    s.session.set_label(&first_id, Some("the plan"))?;
    s.session.set_name("Refactor the parser")?;
    s.session
        .append_custom(&CustomEntry::new("demo-host.checkpoint").data(json!({"step": 1})))?;
    s.message_ms += 1000;
    s.session.append_custom_message(
        &CustomMessage::new("demo-host.reminder", "Keep the tests green.")
            .display(false)
            .details(json!({"rule": 7})),
    )?;
    let reply = Reply {
        text: "Step 1: split the lexer.".into(),
        usage: pi_session::UsageBuilder::new()
            .input(900)
            .output(12)
            .cache_read(400)
            .total_cost(0.001)
            .build(),
        ..Reply::default()
    };
    s.message_ms += 1000;
    let reply = with_message_timestamp(
        pi_session::assistant_in(s.session.dialect(), &reply, s.session.model()),
        s.message_ms,
    );
    s.session.append(reply)?;
    let mut side = s.session.fork_named("alternative");
    s.add_to(&mut side, user("Or rewrite it?", UserOptions::new()))?;
    s.add(user("Go on with step 2.", UserOptions::new()))?;
    Ok(())
}

/// Writes a source session beside the scenario's file, then forks it into that file.
fn fork_to_script(s: &mut Script) -> pi_session::Result<()> {
    let target = s.target.clone();
    let dialect = s.session.dialect();
    let source_path = target.with_file_name(".fork-to-source.jsonl");
    let _ = std::fs::remove_file(&source_path);
    let mut source = Script::new(&source_path, "fork-to-source", dialect);
    let first = source.add(user("Count with me.", UserOptions::new()))?;
    source
        .session
        .set_label(first.id().unwrap_or_default(), Some("start"))?;
    let model = source.session.model().to_owned();
    let mut kept = None;
    for (question, answer) in [("one", "1"), ("two", "2"), ("three", "3")] {
        let asked = source.add(user(question, UserOptions::new()))?;
        kept.get_or_insert(asked);
        source.add(assistant(
            &Reply {
                text: answer.into(),
                ..Reply::default()
            },
            &model,
        ))?;
    }
    let kept = kept
        .and_then(|k| k.id().map(str::to_owned))
        .unwrap_or_default();
    source.add(compaction("Counted to three.", &kept, 900, 100))?;
    let mut side = source.session.fork();
    source.add_to(
        &mut side,
        user("Count backwards instead?", UserOptions::new()),
    )?;
    source.add(user("four", UserOptions::new()))?;
    let mut header = new_header_with(
        "/work/ours-demo",
        uuid_for("fork-to"),
        "2026-01-15T10:00:00.000Z",
    );
    header.parent_session = Some("/work/ours-demo/fork-to-source.jsonl".to_owned());
    source
        .session
        .fork_to_with(&target, None, header)
        .map(|_| ())?;
    drop(source);
    let _ = std::fs::remove_file(pi_session::store::lock_path(&source_path));
    let _ = std::fs::remove_file(&source_path);
    // The fork is the scenario's file; the script's own session stays unwritten.
    Ok(())
}

fn migrated_v1(s: &mut Script) -> pi_session::Result<()> {
    migrated(s, "v1-format")
}

fn migrated_v2(s: &mut Script) -> pi_session::Result<()> {
    migrated(s, "v2-format")
}

/// `Session::migrate` of the recorded pi fixture `name` (a copy, in a scratch folder, so its
/// `.bak` stays there); the migrated file is the scenario's file, the script's own session
/// stays unwritten.
fn migrated(s: &mut Script, name: &str) -> pi_session::Result<()> {
    use pi_session::store::StoreError;
    let source = crate::util::workspace_root()
        .join("fixtures/pi")
        .join(format!("{name}.jsonl"));
    let scratch =
        tempfile::tempdir().map_err(|e| StoreError::io("create", "a scratch folder", e))?;
    let copy = scratch.path().join(format!("{name}.jsonl"));
    std::fs::copy(&source, &copy).map_err(|e| StoreError::io("copy", &source, e))?;
    pi_session::Session::migrate(&copy)?;
    std::fs::copy(&copy, &s.target).map_err(|e| StoreError::io("copy", &copy, e))?;
    Ok(())
}

/// Resolution stamps (`pi_session::manage`) on two cursors, then a compaction written by
/// `compact_older_than`: pi and omp must send what they send without the stamps, and read the
/// compaction as their own.
fn stamps_and_compaction(s: &mut Script) -> pi_session::Result<()> {
    use pi_session::manage::{Resolution, Threshold};
    let model = s.session.model().to_owned();
    let mut ids = Vec::new();
    for n in 0..3 {
        let asked = s.add(user(&format!("Read module {n}."), UserOptions::new()))?;
        ids.push(asked.id().unwrap_or_default().to_owned());
        let call = ToolCall::new(
            format!("call-{n}"),
            "read",
            json!({"path": format!("src/m{n}.rs")}),
        );
        s.add(assistant(
            &Reply {
                tool_calls: vec![call],
                stop_reason: StopReason::ToolUse,
                ..Reply::default()
            },
            &model,
        ))?;
        let output = (0..12)
            .map(|l| format!("{l}: fn f{l}() {{}}"))
            .collect::<Vec<_>>()
            .join("\n");
        let result = s.add(tool_result(
            &format!("call-{n}"),
            "read",
            &output,
            false,
            &[],
            None,
        ))?;
        ids.push(result.id().unwrap_or_default().to_owned());
        s.add(assistant(
            &Reply {
                text: format!("Module {n} defines twelve functions."),
                ..Reply::default()
            },
            &model,
        ))?;
    }
    s.session.pin_entry(&ids[0])?;
    s.session.set_resolution(&ids[1], Resolution::Outlined)?;
    s.session.set_resolution(&ids[3], Resolution::Summarized)?;
    s.session.unpin_entry(&ids[0])?;
    s.session.pin_entry(&ids[2])?;
    let mut review = s.session.fork_named("review");
    review.set_resolution(&ids[1], Resolution::Compacted)?;
    s.session
        .write_custom_state("demo-host.todo", json!({"open": 2}))?;
    s.message_ms += 1000;
    s.session
        .write_custom_message("demo-host.reminder", "Keep the tests green.")?;
    s.session
        .compact_older_than(Threshold::Turns(1), |covered| {
            format!("Read modules 0 and 1 ({} entries).", covered.len())
        })?;
    s.add(user("Summarise module 2.", UserOptions::new()))?;
    Ok(())
}
