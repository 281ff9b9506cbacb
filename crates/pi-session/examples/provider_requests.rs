//! The requests a provider is sent for a session: OpenAI Chat Completions messages, Anthropic
//! Messages, and what pi and omp themselves would send (`convertToLlm`). Run it with
//! `cargo run -p pi-session --example provider_requests`.
#![allow(clippy::print_stdout, reason = "an example prints what it shows")]

use pi_session::prelude::*;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    print!("{}", play()?);
    Ok(())
}

/// A short tool-using session, projected for each provider.
pub fn play() -> Result<String, Error> {
    let mut session = Session::in_memory("anthropic:claude-sonnet-4-5", "/work/app");
    session.append(user("What is in README.md?", UserOptions::new()))?;
    let call = ToolCall::new("call-1", "read", json!({"path": "README.md"}));
    session.append_reply(&Reply {
        tool_calls: vec![call],
        stop_reason: StopReason::ToolUse,
        usage: UsageBuilder::new().input(1200).output(30).build(),
        ..Reply::default()
    })?;
    session.append(ToolResult::new("call-1", "read", "# App\nSays hello.").entry())?;

    let options = ProjectOptions {
        dialect: session.dialect(),
        ..ProjectOptions::default()
    };
    let mut out = String::new();
    for (name, format) in [("openai", Format::OpenAi), ("anthropic", Format::Anthropic)] {
        let (request, _) = session.project(format, &options)?;
        out.push_str(&format!(
            "{name}:\n{}\n",
            serde_json::to_string_pretty(&request).unwrap_or_default()
        ));
    }
    // pi's and omp's own messages carry the time each was written; show their roles.
    for (name, dialect) in [("pi", Dialect::PI), ("omp", Dialect::OMP)] {
        let options = ProjectOptions { dialect, ..options };
        let (messages, _) = session.project(Format::Llm, &options)?;
        let roles: Vec<&str> = messages
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["role"].as_str())
            .collect();
        out.push_str(&format!("{name}'s convertToLlm: {}\n", roles.join(", ")));
    }
    Ok(out)
}
