//! The phase of work an entry belongs to, for the statistics' distribution by phase.
//!
//! The rule, from tool names and position:
//! - A tool call's phase comes from its tool's name (any case): [`EXPLORATION_TOOLS`] explore;
//!   [`EXECUTION_TOOLS`] execute, except that a call whose command (`command`, `cmd` or `code`
//!   argument) runs tests or checks ([`VERIFICATION_WORDS`], as a word of the command) verifies;
//!   a tool named `test…`/`…_test(s)` verifies; any other tool is unclassified.
//! - An assistant message with tool calls takes the phase of its first classified call; its
//!   results take the phase of the call they answer (by `toolCallId`; else by `toolName`).
//! - An assistant message without tool calls is a final answer: conclusion.
//! - A bash run of the user's (`bashExecution`) verifies when its command does, else executes.
//! - Everything else (user messages, custom messages, summaries, the compaction summary) is
//!   unclassified.

use pi_session_types::view::{BlockRef, EntryRef, MessageRef};
use std::collections::HashMap;

use pi_session_types::JsonValue;
use serde::Serialize;

/// A phase of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Reading and searching.
    Exploration,
    /// Changing files, running commands.
    Execution,
    /// Running tests and checks.
    Verification,
    /// The final answer.
    Conclusion,
    /// None of these.
    Unclassified,
}

/// Tools that explore.
pub const EXPLORATION_TOOLS: [&str; 16] = [
    "read",
    "grep",
    "glob",
    "find",
    "ls",
    "list",
    "search",
    "web_search",
    "websearch",
    "web_fetch",
    "webfetch",
    "fetch",
    "lsp",
    "view",
    "cat",
    "tree",
];
/// Tools that execute.
pub const EXECUTION_TOOLS: [&str; 13] = [
    "edit",
    "write",
    "multiedit",
    "multi_edit",
    "apply_patch",
    "patch",
    "bash",
    "shell",
    "python",
    "notebook",
    "create",
    "delete",
    "task",
];
/// Words of a command that make it a verification.
pub const VERIFICATION_WORDS: [&str; 12] = [
    "test", "tests", "pytest", "jest", "vitest", "check", "clippy", "lint", "tsc", "mypy",
    "nextest", "verify",
];

/// The phase of one call of tool `name` with `arguments`.
///
/// ```
/// use pi_session::manage::{Phase, phase::call_phase};
/// use serde_json::json;
/// assert_eq!(call_phase("read", &json!({"path": "a.rs"})), Phase::Exploration);
/// assert_eq!(call_phase("bash", &json!({"command": "ls -la"})), Phase::Execution);
/// assert_eq!(call_phase("bash", &json!({"command": "cargo test -p x"})), Phase::Verification);
/// assert_eq!(call_phase("deploy", &json!({})), Phase::Unclassified);
/// ```
pub fn call_phase(name: &str, arguments: &JsonValue) -> Phase {
    let name = name.to_ascii_lowercase();
    if name.starts_with("test") || name.ends_with("_test") || name.ends_with("_tests") {
        return Phase::Verification;
    }
    if EXPLORATION_TOOLS.contains(&name.as_str()) {
        return Phase::Exploration;
    }
    if EXECUTION_TOOLS.contains(&name.as_str()) {
        let command = ["command", "cmd", "code"]
            .iter()
            .find_map(|k| arguments.get(*k).and_then(JsonValue::as_str));
        return match command {
            Some(command) if runs_checks(command) => Phase::Verification,
            _ => Phase::Execution,
        };
    }
    Phase::Unclassified
}

/// Whether a command runs tests or checks (a word of it is in [`VERIFICATION_WORDS`]).
pub fn runs_checks(command: &str) -> bool {
    command
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| VERIFICATION_WORDS.contains(&word.to_ascii_lowercase().as_str()))
}

/// Phases of a branch's entries, in order (the calls seen so far decide their results').
#[derive(Debug, Default)]
pub(crate) struct Phases {
    calls: HashMap<String, Phase>,
}

/// What [`Phases`] reads of an entry: its tool calls (id and phase), a tool result's call id
/// and tool name, or whether a shell command runs checks.
#[derive(Debug)]
pub(crate) enum PhaseInput {
    /// Not a message, or a message of another role.
    Other,
    /// An assistant message, with its calls' ids and phases.
    Assistant(Vec<(String, Phase)>),
    /// A tool result, with its call id and tool name (when strings).
    ToolResult {
        call_id: Option<String>,
        tool_name: Option<String>,
    },
    /// A `bashExecution` message: whether its command runs checks.
    Shell(bool),
}

impl PhaseInput {
    /// What `entry` (a file entry as JSON) gives [`Phases`].
    pub(crate) fn of(entry: &JsonValue) -> Self {
        if EntryRef::new(entry).kind() != Some("message") {
            return Self::Other;
        }
        let Some(message) = EntryRef::new(entry).message() else {
            return Self::Other;
        };
        match MessageRef::new(message).role() {
            Some("assistant") => Self::Assistant(
                MessageRef::new(message)
                    .content()
                    .and_then(JsonValue::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|p| BlockRef::new(p).is("toolCall"))
                    .map(|call| {
                        let call = BlockRef::new(call);
                        let name = call.name().and_then(JsonValue::as_str).unwrap_or("");
                        let arguments = call.arguments().unwrap_or(&JsonValue::Null);
                        let id = call.id_str().unwrap_or("");
                        (id.to_owned(), call_phase(name, arguments))
                    })
                    .collect(),
            ),
            Some("toolResult") => Self::ToolResult {
                call_id: MessageRef::new(message)
                    .tool_call_id()
                    .and_then(JsonValue::as_str)
                    .map(str::to_owned),
                tool_name: MessageRef::new(message)
                    .tool_name()
                    .and_then(JsonValue::as_str)
                    .map(str::to_owned),
            },
            Some("bashExecution") => Self::Shell(runs_checks(
                MessageRef::new(message)
                    .command()
                    .and_then(JsonValue::as_str)
                    .unwrap_or(""),
            )),
            _ => Self::Other,
        }
    }
}

impl Phases {
    /// The phase of `entry` (a file entry as JSON).
    pub(crate) fn of(&mut self, entry: &JsonValue) -> Phase {
        self.of_input(PhaseInput::of(entry))
    }

    /// The phase of the entry that gives `input`.
    pub(crate) fn of_input(&mut self, input: PhaseInput) -> Phase {
        match input {
            PhaseInput::Other => Phase::Unclassified,
            PhaseInput::Assistant(calls) => {
                if calls.is_empty() {
                    return Phase::Conclusion;
                }
                let first = calls
                    .iter()
                    .map(|(_, p)| *p)
                    .find(|p| *p != Phase::Unclassified)
                    .unwrap_or(Phase::Unclassified);
                self.calls.extend(calls);
                first
            }
            PhaseInput::ToolResult { call_id, tool_name } => call_id
                .and_then(|id| self.calls.get(&id).copied())
                .unwrap_or_else(|| {
                    call_phase(tool_name.as_deref().unwrap_or(""), &JsonValue::Null)
                }),
            PhaseInput::Shell(true) => Phase::Verification,
            PhaseInput::Shell(false) => Phase::Execution,
        }
    }
}
