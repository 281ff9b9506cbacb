//! What both dialects' `convertToLlm` share: the text of a bash or Python run, and
//! `typeof content === "string" ? [text block] : content`.

use serde_json::Value;

use pi_session_types::js::{string_of, text_block, truthy};
use pi_session_types::view::MessageRef;

/// `typeof content === "string" ? [{type:"text", text: content}] : content`.
pub(crate) fn string_to_blocks(content: Option<&Value>) -> Option<Value> {
    match content {
        Some(Value::String(s)) => Some(Value::Array(vec![text_block(s.clone())])),
        other => other.cloned(),
    }
}

/// The words a bash or Python run's text uses; how the text is put together is the same
/// ([`run_outcome_text`]).
pub(crate) struct RunWording {
    /// Put before the output (the output is then closed with "\n```").
    pub(crate) output_opening: &'static str,
    /// The line for a cancelled run.
    pub(crate) cancelled: &'static str,
    /// The start of the line for a failed run; the exit code follows.
    pub(crate) failed: &'static str,
}

pub(crate) const BASH_WORDING: RunWording = RunWording {
    output_opening: "```\n",
    cancelled: "\n\n(command cancelled)",
    failed: "\n\nCommand exited with code ",
};

pub(crate) const PYTHON_WORDING: RunWording = RunWording {
    output_opening: "Output:\n```\n",
    cancelled: "\n\n(execution cancelled)",
    failed: "\n\nExecution failed with code ",
};

/// A run's output (or "(no output)") and how it ended: cancelled, or failed with its exit code.
pub(crate) fn run_outcome_text(m: MessageRef<'_>, wording: &RunWording) -> String {
    let mut text = if truthy(m.output()) {
        format!("{}{}\n```", wording.output_opening, string_of(m.output()))
    } else {
        "(no output)".to_owned()
    };
    if truthy(m.cancelled()) {
        text += wording.cancelled;
    } else if exit_code_failed(m.exit_code()) {
        text += wording.failed;
        text += &string_of(m.exit_code());
    }
    text
}

/// The head of both dialects' bash text: command, output, and how it ended.
pub(crate) fn bash_text_head(m: MessageRef<'_>) -> String {
    format!("Ran `{}`\n", string_of(m.command())) + &run_outcome_text(m, &BASH_WORDING)
}

/// `exitCode !== null && exitCode !== undefined && exitCode !== 0`.
pub(crate) fn exit_code_failed(exit_code: Option<&Value>) -> bool {
    match exit_code {
        None | Some(Value::Null) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(_) => true,
    }
}
