//! Plays a short agent loop against a temporary folder and prints what the model would be sent.
//!
//! user → assistant (a tool call) → tool result → assistant (another call) → tool result →
//! assistant → compaction → user; then the session is resumed from disk and its context, which
//! must equal the live one, is printed as req_llm JSON with the context statistics.
//!
//! Run it with `cargo run -p pi-session --example agent_loop`.
#![allow(clippy::print_stdout, reason = "an example prints what it shows")]

use std::path::Path;

use pi_session::prelude::*;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    print!("{}", play(dir.path())?);
    Ok(())
}

/// Plays the loop in `dir` and returns the report to print.
pub fn play(dir: &Path) -> Result<String, Error> {
    let model = "anthropic:claude-sonnet-4-5";
    let mut session = Session::new(dir, model, "/work/demo");

    let notes = AttachedFile::new(
        AttachmentKind::Text,
        "notes.txt",
        "text/plain",
        "/work/demo/notes.txt",
    )
    .about("24 B, 2 lines")
    .text("ship on Friday\nno Mondays");
    session.append(user(
        "Summarise README.md and my notes.",
        UserOptions::new().attach(notes),
    ))?;

    let ls = ToolCall::new("call-1", "bash", json!({"command": "ls"}));
    let reply = Reply {
        thinking: "I should look at the files first.".into(),
        text: "Let me look.".into(),
        tool_calls: vec![ls],
        usage: usage_map(1200, 40),
        stop_reason: StopReason::ToolUse,
        ..Reply::default()
    };
    session.append(assistant(&reply, session.model()))?;
    session.append(tool_result(
        "call-1",
        "bash",
        "README.md\nsrc",
        false,
        &[],
        None,
    ))?;

    let read = ToolCall::new("call-2", "read", json!({"path": "README.md"}));
    let reply = Reply {
        tool_calls: vec![read],
        usage: usage_map(1300, 20),
        stop_reason: StopReason::ToolUse,
        ..Reply::default()
    };
    let second_turn = session.append(assistant(&reply, session.model()))?;
    session.append(tool_result(
        "call-2",
        "read",
        "# Demo\nA tiny demo app.",
        false,
        &[],
        None,
    ))?;

    let reply = Reply {
        text: "README: a tiny demo app. Notes: ship on Friday.".into(),
        usage: usage_map(1400, 30),
        ..Reply::default()
    };
    session.append(assistant(&reply, session.model()))?;

    let summary = "The user asked for a summary of README.md and notes.txt; I listed the files.";
    let kept = second_turn.id().unwrap_or_default();
    session.append(compaction(summary, kept, 4_000, 600))?;
    session.append(user("Thanks. Now add a test.", UserOptions::new()))?;

    let options = ProjectOptions::default();
    let live = session.context(&options)?;
    let path = session.path().unwrap_or_default(); // a session made with `new` has a file
    let resumed = Session::open(&path, "openai:gpt-5")?;
    let context = resumed.session.context(&options)?;
    let stats = resumed
        .session
        .context_stats(&options, &StatsOptions::default())?;

    let mut out = String::new();
    out.push_str(&format!(
        "resumed context equals live context: {}\n",
        context == live
    ));
    out.push_str(&format!("model on resume: {}\n", resumed.session.model()));
    out.push_str(&format!("title: {}\n", session.title().unwrap_or_default()));
    out.push_str(&format!(
        "branch: {} entries, diagnostics: {}\n",
        resumed.branch.len(),
        resumed.diagnostics.len()
    ));
    out.push_str(&format!(
        "totals: {:?}\n",
        pi_session::totals(&resumed.branch)
    ));
    out.push_str(&format!(
        "stats: {} messages, ~{} tokens of a {} window ({} reserved, {} remaining)\n",
        stats.messages, stats.estimated_tokens, stats.window, stats.reserve, stats.remaining
    ));
    out.push_str("context (req_llm JSON, compact form):\n");
    let json = pi_session::reqllm::to_compact_json(&context);
    out.push_str(&serde_json::to_string_pretty(&json).unwrap_or_default());
    out.push('\n');
    Ok(out)
}

/// A req_llm usage map as a provider reports it.
fn usage_map(input: u64, output: u64) -> serde_json::Map<String, serde_json::Value> {
    let value = json!({"input_tokens": input, "output_tokens": output, "cached_tokens": 0, "total_cost": 0.0021});
    value.as_object().cloned().unwrap_or_default()
}
