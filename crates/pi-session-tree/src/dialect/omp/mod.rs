//! omp's rules in this crate, for every [`OmpRelease`]: its `buildSessionContext`
//! ([`context`]) with the context notes it prepends ([`notes`]: their template, rendered with
//! omp's prompt formatter, [`prompt`], which the context crate's templates use too), the load-time rewrites of its entries ([`prepare_omp_entry`]:
//! snapcompact's frames, [`snapcompact`]; the blob store its entries point into, [`blobs`]).

pub mod blobs;
pub mod context;
pub mod notes;
pub mod prompt;
pub mod snapcompact;

use pi_session_types::needle::Needle;
use pi_session_types::shallow::{Keys, laid_out_role, with_key};
use pi_session_types::view::{BlockRef, EntryRef, MessageRef, key};
use serde_json::Value;

use self::blobs::{BlobSource, resolve_entry_blobs};
use super::{BuildContext, OmpRelease, SessionRules};
use crate::built::{Built, Extendable};
use crate::context::{AgentContext, FirstSent, MessageLine};
use crate::diagnostic::Diagnostic;
use pi_session_types::js;

/// omp's `buildSessionContext` of one release.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Omp(pub(crate) OmpRelease);

impl SessionRules for Omp {
    fn branch_summary_flag_key(&self) -> &'static str {
        "fromExtension"
    }

    fn has_title_slot(&self) -> bool {
        true
    }
}

impl BuildContext for Omp {
    fn first_sent(&self, path: &[Value]) -> FirstSent {
        context::first_sent(path)
    }

    fn prepares(&self) -> bool {
        true
    }

    /// A `message` entry is rewritten only for a blob reference (when a blob folder resolves
    /// it) or github-copilot's replayed history ([`prepare_omp_entry`]); snapcompact's repair
    /// touches compactions only. Either needs its word in the line, spelled plainly (an escaped
    /// spelling is not `JSON.stringify`'s, so such a line is not copied anyway), and the
    /// replayed history an assistant's turn ([`may_be_assistant`]).
    fn may_rewrite_message_line(&self, line: &[u8], blobs: bool) -> bool {
        may_rewrite_as(line, blobs, may_be_assistant(line))
    }

    /// omp 18.2 reads of a `message` entry its type and id (kept ranges, replay ends and
    /// notes are found by id), its timestamp (an Anthropic compaction's summary is dated by
    /// the entry it keeps), and of its message: the role; an assistant's provider and model
    /// (the default model), `retryRecovery` and `stopReason` (turns left out or dropped as
    /// failed); a tool result's `toolCallId`; a custom message's `customType` and
    /// `attribution` (an interrupted-thinking mark, a user request). Of a turn with tool calls
    /// it reads the `type` and `id` of its content's blocks too, and of an error turn all of
    /// it ([`Self::message_keys_of_line`]). It sends a message changed only when it strips
    /// tool calls from it, which the build reports
    /// ([`crate::built::Extendable::rewrote_keyed_messages`]). The load-time rewrites are the
    /// copy rule's ([`Self::may_rewrite_message_line`]).
    fn message_keys(&self) -> Option<&'static Keys> {
        match self.0 {
            OmpRelease::V18_2 => Some(&OMP_18_2),
        }
    }

    /// A line without a tool call block or an error turn's stop reason (as `JSON.stringify`
    /// spells them: `"toolCall"`, which a tool result's `"toolCallId"` is not, and
    /// `"stopReason":"error"`) gives [`Self::message_keys`]; one with a tool call, those and
    /// its blocks' `type` and `id` (the content of a tool result, most of a file, is left
    /// unread); an error turn is read whole (an empty one is left out). Only an assistant's
    /// turn calls tools or fails: the line of another role is not searched
    /// ([`may_be_assistant`]; tool results are most of a session's bytes).
    fn message_keys_of_line(&self, line: &[u8]) -> Option<&'static Keys> {
        self.message_keys_as(line, may_be_assistant(line))
    }

    /// Both answers, the role read once.
    fn message_line(&self, line: &[u8], role: Option<&[u8]>, blobs: bool) -> MessageLine {
        let assistant = role.is_none_or(|role| role == b"assistant");
        MessageLine {
            keys: self.message_keys_as(line, assistant),
            may_rewrite: may_rewrite_as(line, blobs, assistant),
        }
    }

    /// Continued a part at a time, the passes over the messages wait for the end
    /// ([`context::build_streamed`]); the load-time rewrites go entry by entry.
    fn extends_by_messages(&self) -> bool {
        true
    }

    /// An Anthropic compaction's summary is dated by the entry after the compaction when its
    /// kept range starts after it.
    fn messages_read_after_others(&self) -> usize {
        1
    }

    fn build_streamed(
        &self,
        path: &[Value],
        blobs: Option<&dyn BlobSource>,
    ) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
        built(context::build_streamed(
            path,
            &context::OmpOptions { blobs },
        ))
    }

    fn prepare(&self, path: &mut [Value], blobs: Option<&dyn BlobSource>) -> Vec<Diagnostic> {
        path.iter_mut()
            .flat_map(|entry| prepare_omp_entry(entry, blobs))
            .collect()
    }

    fn build(
        &self,
        path: &[Value],
        blobs: Option<&dyn BlobSource>,
    ) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
        built(context::build_extendable(
            path,
            &context::OmpOptions { blobs },
        ))
    }
}

/// An omp build as [`BuildContext::build`] gives it.
fn built(
    (context, messages, diagnostics, tail): (
        context::OmpContext,
        Vec<Built>,
        Vec<Diagnostic>,
        context::OmpTail,
    ),
) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
    (
        AgentContext::Omp(context),
        messages,
        diagnostics,
        Extendable::omp(tail),
    )
}

impl Omp {
    /// [`BuildContext::message_keys_of_line`] of `line`, whose message `assistant` says may be
    /// an assistant's turn ([`may_be_assistant`]).
    fn message_keys_as(&self, line: &[u8], assistant: bool) -> Option<&'static Keys> {
        if !assistant {
            return self.message_keys();
        }
        if ERROR_TURN.is_in(line) {
            return None;
        }
        if TOOL_CALL.is_in(line) {
            return Some(&OMP_18_2_CALLS);
        }
        self.message_keys()
    }
}

/// [`BuildContext::may_rewrite_message_line`] of `line`, whose message `assistant` says may be
/// an assistant's turn ([`may_be_assistant`]).
fn may_rewrite_as(line: &[u8], blobs: bool, assistant: bool) -> bool {
    (blobs && BLOB_REF.is_in(line)) || (assistant && COPILOT.is_in(line))
}

/// Whether the `message` line `line` may hold an assistant's turn: `false` only when it is laid
/// out as pi and omp write one and its message's role is another ([`laid_out_role`]). A line
/// that gives `message` twice, or whose message gives `role` twice, may say `false` of an
/// assistant's turn; the readers of a message's keys, which hold `message` and `role`, refuse
/// such a line, and it is read whole.
fn may_be_assistant(line: &[u8]) -> bool {
    laid_out_role(line).is_none_or(|role| role == b"assistant")
}

/// The words [`Omp::may_rewrite_message_line`] and [`Omp::message_keys_of_line`] look for in
/// a line, as `JSON.stringify` spells them.
static BLOB_REF: Needle = Needle::new(blobs::BLOB_REF_PREFIX.as_bytes());
static COPILOT: Needle = Needle::new(b"github-copilot");
static ERROR_TURN: Needle = Needle::new(br#""stopReason":"error""#);
static TOOL_CALL: Needle = Needle::new(br#""toolCall""#);

/// What omp 18.2's build reads of a `message` entry ([`Omp::message_keys`]).
const OMP_18_2: Keys = Keys {
    entry: &[key::TYPE, key::ID, key::TIMESTAMP, key::MESSAGE],
    message: &OMP_18_2_MESSAGE,
    blocks: &[],
};

/// [`OMP_18_2`] of a turn with tool calls: its blocks' `type` and `id` too.
const OMP_18_2_CALLS: Keys = Keys {
    entry: OMP_18_2.entry,
    message: &with_key::<10, 11>(key::CONTENT, OMP_18_2_MESSAGE),
    blocks: &[key::TYPE, key::ID],
};

/// The message's keys of [`OMP_18_2`]: those the build reads, and `prunedAt` and
/// `steering`, which omp's `convertToLlm` and its agent loop read to tell whether they pass a
/// message on as it is (the context crate's `ConvertToLlm::reads`; the facade's tests check
/// that these hold them), so a message sent unchanged is read as these keys in every format.
const OMP_18_2_MESSAGE: [&str; 10] = [
    key::ROLE,
    key::PROVIDER,
    key::MODEL,
    key::STOP_REASON,
    key::RETRY_RECOVERY,
    key::TOOL_CALL_ID,
    key::CUSTOM_TYPE,
    key::ATTRIBUTION,
    key::PRUNED_AT,
    key::STEERING,
];

/// Applies omp's load-time rewrites to one entry in place: snapcompact frame
/// repair, blob references resolved, Copilot replay metadata stripped.
pub fn prepare_omp_entry(entry: &mut Value, blobs: Option<&dyn BlobSource>) -> Vec<Diagnostic> {
    snapcompact::repair_truncated_frames(entry);
    let diagnostics = match blobs {
        Some(blobs) => resolve_entry_blobs(entry, blobs),
        None => Vec::new(),
    };
    sanitize_copilot_replay(entry);
    diagnostics
}

/// omp's `sanitizeRehydratedOpenAIResponsesAssistantMessage`.
fn sanitize_copilot_replay(entry: &mut Value) {
    if !EntryRef::new(&*entry).is("message") {
        return;
    }
    let Some(message) = entry.get_mut(key::MESSAGE).and_then(Value::as_object_mut) else {
        return;
    };
    let view = MessageRef::new(&*message);
    let is_copilot_history = view.is_role("assistant")
        && js::is_str(
            // omp's provider payload kind, not a block type.
            js::get(view.provider_payload(), key::TYPE),
            "openaiResponsesHistory",
        )
        && js::is_str(view.provider(), "github-copilot");
    if !is_copilot_history {
        return;
    }
    if let Some(Value::Array(blocks)) = message.get_mut(key::CONTENT) {
        for block in blocks.iter_mut() {
            if BlockRef::new(&*block).is("thinking")
                && let Some(map) = block.as_object_mut()
            {
                map.shift_remove(key::THINKING_SIGNATURE);
            }
        }
    }
    message.shift_remove(key::PROVIDER_PAYLOAD);
}
