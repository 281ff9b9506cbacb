//! pi's `convertToLlm` (`pi-coding-agent/src/core/messages.ts`), for every [`PiRelease`]:
//! `bashExecution` and `custom` become `user` messages, the two summaries get pi's wrapper
//! text, `user`/`assistant`/`toolResult` pass through untouched, every other role is dropped.
//! The one difference between the releases (pi's release axis is the tree crate's
//! [`PiRelease`], one enum for both stages): 1.6 passes `system` messages through too.

use std::borrow::Cow;

use serde_json::Value;

use pi_session_tree::PiRelease;
use pi_session_types::js::{object, string_of, text_block, truthy};
use pi_session_types::shallow::Seen;
use pi_session_types::view::{MessageRef, key};

use super::run_text::{bash_text_head, string_to_blocks};
use super::{ConvertToLlm, Passed};
use crate::provider_request::PiAi;

/// pi's text before a compaction summary.
pub const PI_COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// pi's text after a compaction summary.
pub const PI_COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// pi's text before a branch summary.
pub const PI_BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// pi's text after a branch summary (no newline before it, unlike compaction).
pub const PI_BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// pi's `convertToLlm` of one release.
#[derive(Debug, Clone, Copy)]
pub struct Pi {
    /// `system` messages pass through (1.6), or are dropped like every unknown role (0.73).
    system_passes: bool,
    /// The pi-ai its requests follow (pi 1.6's is not reproduced).
    pi_ai: Option<PiAi>,
}

/// pi 0.73's.
static PI_0_73: Pi = Pi {
    system_passes: false,
    pi_ai: Some(PiAi::Pi),
};
/// pi 1.6's.
static PI_1_6: Pi = Pi {
    system_passes: true,
    pi_ai: None,
};

impl Pi {
    /// The rules of `release`. A release this crate does not know yet gets the latest rules
    /// (recording it with `cargo xtask record` shows where it differs).
    pub fn of(release: PiRelease) -> &'static Self {
        match release {
            PiRelease::V0_73 => &PI_0_73,
            _ => &PI_1_6,
        }
    }
}

impl ConvertToLlm for Pi {
    fn convert<'a>(&self, message: &'a Value, _next: Option<&Value>) -> Vec<Cow<'a, Value>> {
        pi_convert(message, self).into_iter().collect()
    }

    /// The role alone decides.
    fn reads(&self) -> &'static [&'static str] {
        &[key::ROLE]
    }

    /// A `user`, `assistant` or `toolResult` message (and pi 1.6's `system`) passes as it is:
    /// the role alone decides, and no rule of pi's reads the next message.
    fn passes(&self, message: Seen<'_>, _next: Option<Seen<'_>>) -> Option<Passed> {
        let role = message.str(key::ROLE)?;
        self.passes_unchanged(role).then_some(Passed::Unchanged)
    }

    fn pi_ai(&self) -> Option<PiAi> {
        self.pi_ai
    }
}

impl Pi {
    /// Whether a message of `role` comes back as it is, whatever else it holds.
    fn passes_unchanged(&self, role: &str) -> bool {
        matches!(role, "user" | "assistant" | "toolResult")
            || (role == "system" && self.system_passes)
    }
}

/// pi's `convertToLlm` for one message.
fn pi_convert<'a>(message: &'a Value, rules: &Pi) -> Option<Cow<'a, Value>> {
    let m = MessageRef::of(message)?;
    let role = m.role()?;
    if rules.passes_unchanged(role) {
        return Some(Cow::Borrowed(message));
    }
    let timestamp = m.timestamp().cloned();
    let made = match role {
        "bashExecution" => {
            if truthy(m.exclude_from_context()) {
                return None;
            }
            Some(object([
                ("role", Some("user".into())),
                (
                    "content",
                    Some(Value::Array(vec![text_block(pi_bash_text(m))])),
                ),
                ("timestamp", timestamp),
            ]))
        }
        "custom" => Some(object([
            ("role", Some("user".into())),
            ("content", string_to_blocks(m.content())),
            ("timestamp", timestamp),
        ])),
        "branchSummary" => Some(summary_user(
            format!(
                "{PI_BRANCH_SUMMARY_PREFIX}{}{PI_BRANCH_SUMMARY_SUFFIX}",
                string_of(m.summary())
            ),
            timestamp,
        )),
        "compactionSummary" => Some(summary_user(
            format!(
                "{PI_COMPACTION_SUMMARY_PREFIX}{}{PI_COMPACTION_SUMMARY_SUFFIX}",
                string_of(m.summary())
            ),
            timestamp,
        )),
        _ => None,
    };
    made.map(Cow::Owned)
}

fn summary_user(text: String, timestamp: Option<Value>) -> Value {
    object([
        ("role", Some("user".into())),
        ("content", Some(Value::Array(vec![text_block(text)]))),
        ("timestamp", timestamp),
    ])
}

/// pi's `bashExecutionToText`.
fn pi_bash_text(m: MessageRef<'_>) -> String {
    let mut text = bash_text_head(m);
    if truthy(m.truncated()) && truthy(m.full_output_path()) {
        text += &format!(
            "\n\n[Output truncated. Full output: {}]",
            string_of(m.full_output_path())
        );
    }
    text
}
