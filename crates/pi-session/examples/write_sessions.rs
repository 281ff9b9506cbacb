//! Writes a few sessions with the facade into a folder, so the real omp and pi can be asked to
//! read them (`cargo xtask record --verify DIR`): the other direction of the golden tests.
//!
//! Run it with `cargo run -p pi-session --example write_sessions -- DIR`.
#![allow(clippy::print_stdout, reason = "an example prints what it wrote")]

use std::path::{Path, PathBuf};

use pi_session::prelude::*;
use pi_session::{SessionOptions, custom_in};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .ok_or("usage: write_sessions DIR")?;
    std::fs::create_dir_all(&dir)?;
    for (name, write) in SESSIONS {
        let path = write(&dir)?;
        let target = dir.join(format!("{name}.jsonl"));
        std::fs::rename(&path, &target)?;
        println!("{}", target.display());
    }
    Ok(())
}

type Writer = fn(&Path) -> Result<PathBuf, Error>;

const SESSIONS: [(&str, Writer); 5] = [
    ("rho-tool-loop", tool_loop),
    ("rho-attachments", attachments),
    ("rho-compaction", compacted),
    ("rho-notices-and-models", notices_and_models),
    ("rho-branches", branches),
];

const MODEL: &str = "anthropic:claude-sonnet-4-5";

fn usage(input: u64, output: u64) -> serde_json::Map<String, serde_json::Value> {
    json!({"input_tokens": input, "output_tokens": output, "cached_tokens": 0, "total_cost": 0.001})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn finish(session: &Session) -> Result<PathBuf, Error> {
    Ok(session.path().unwrap_or_default())
}

fn tool_loop(dir: &Path) -> Result<PathBuf, Error> {
    let mut s = Session::new(dir, MODEL, "/work/demo");
    s.append(user("List the files.", UserOptions::new()))?;
    let call = ToolCall::new("toolu_1", "bash", json!({"command": "ls", "timeout": 30}));
    let reply = Reply {
        thinking: "Run ls.".into(),
        text: "Looking.".into(),
        tool_calls: vec![call],
        usage: usage(100, 20),
        stop_reason: StopReason::ToolUse,
        ..Reply::default()
    };
    s.append(assistant(&reply, s.model()))?;
    s.append(tool_result(
        "toolu_1",
        "bash",
        "a.txt\nb.txt",
        false,
        &[],
        Some(json!({"exitCode": 0})),
    ))?;
    let reply = Reply {
        text: "Two files.".into(),
        usage: usage(150, 5),
        ..Reply::default()
    };
    s.append(assistant(&reply, s.model()))?;
    let dangling = Reply {
        tool_calls: vec![ToolCall::new("toolu_2", "read", json!({"path": "a.txt"}))],
        stop_reason: StopReason::Aborted,
        ..Reply::default()
    };
    s.append(assistant(&dangling, s.model()))?;
    s.append(user("Stop.", UserOptions::new().steering(true)))?;
    finish(&s)
}

fn attachments(dir: &Path) -> Result<PathBuf, Error> {
    let mut s = Session::new(dir, "openai_codex:gpt-5", "/work/demo");
    let png: Vec<u8> = vec![0x89, b'P', b'N', b'G', 13, 10, 26, 10];
    let picture = AttachedFile::new(
        AttachmentKind::Image,
        "shot \"1\".png",
        "image/png",
        "/work/demo/shot.png",
    )
    .about("8 B, 1×1 px")
    .image(png.clone());
    let notes = AttachedFile::new(
        AttachmentKind::Text,
        "notes.txt",
        "text/plain",
        "/work/demo/notes.txt",
    )
    .about("12 B")
    .text("hello & <bye>");
    s.append(user(
        "What do these show?",
        UserOptions::new().attach(picture).attach(notes),
    ))?;
    let reply = Reply {
        text: "A picture and a note.".into(),
        images: vec![Picture::new(png, "image/png")],
        usage: usage(900, 10),
        ..Reply::default()
    };
    s.append(assistant(&reply, s.model()))?;
    s.append(user("", UserOptions::new().ask("q-1", "phone-2")))?;
    finish(&s)
}

fn compacted(dir: &Path) -> Result<PathBuf, Error> {
    let options = SessionOptions {
        title: Some("Compaction demo".into()),
        ..SessionOptions::default()
    };
    let mut s = Session::with_options(dir, MODEL, "/work/demo", options);
    s.append(user("one", UserOptions::new()))?;
    s.append(assistant(
        &Reply {
            text: "1".into(),
            ..Reply::default()
        },
        s.model(),
    ))?;
    let kept = s.append(user("two", UserOptions::new()))?;
    s.append(assistant(
        &Reply {
            text: "2".into(),
            ..Reply::default()
        },
        s.model(),
    ))?;
    s.append(compaction(
        "We counted to two.",
        kept.id().unwrap_or_default(),
        5000,
        300,
    ))?;
    s.append(user("three", UserOptions::new()))?;
    s.append(assistant(
        &Reply {
            text: "3".into(),
            ..Reply::default()
        },
        s.model(),
    ))?;
    finish(&s)
}

fn notices_and_models(dir: &Path) -> Result<PathBuf, Error> {
    let mut s = Session::new(dir, MODEL, "/work/demo");
    s.append(user("hi", UserOptions::new()))?;
    s.append(custom(NoticeKind::Notice, "Stopped by the user."))?;
    s.append(custom_in("operator", NoticeKind::Aside, "an aside"))?;
    s.append(model_change("openai_codex:gpt-5"))?;
    let failed = Reply {
        stop_reason: StopReason::Error,
        error: Some("429 Too Many Requests".into()),
        ..Reply::default()
    };
    s.append(assistant(&failed, s.model()))?;
    s.append(assistant(
        &Reply {
            text: "ok".into(),
            ..Reply::default()
        },
        s.model(),
    ))?;
    finish(&s)
}

fn branches(dir: &Path) -> Result<PathBuf, Error> {
    let mut main = Session::new(dir, MODEL, "/work/demo");
    let start = main.append(user("start", UserOptions::new()))?;
    let mut side = main.fork();
    main.append(assistant(
        &Reply {
            text: "main".into(),
            ..Reply::default()
        },
        MODEL,
    ))?;
    side.append(assistant(
        &Reply {
            text: "side".into(),
            ..Reply::default()
        },
        MODEL,
    ))?;
    side.branch_with_summary(start.id(), "The side branch said side.", None)?;
    side.append(user("back", UserOptions::new()))?;
    finish(&main)
}
