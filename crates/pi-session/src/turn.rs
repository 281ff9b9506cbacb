//! A host's turn: the context for the model, shared between turns instead of copied.
//!
//! A host runs, per turn: append the user message, append the reply, build the context and
//! convert it for the model. [`Session::turn_context`] keeps what it built (in the log's
//! context cache, with the branch entries it read) and hands out messages as `Arc`s: each
//! path entry's message is copied once, the first time it is sent, and shared on every later
//! turn; `convertToLlm` runs once per message (a message its rule leaves unchanged is the same
//! `Arc`), so a turn costs what it appends plus a walk over the messages sent, not a copy of
//! them.

use std::collections::HashMap;
use std::sync::Arc;

use pi_session_tree::built::{Built, agent_context_indexed};
use pi_session_tree::{AgentContext, Dialect};
use pi_session_types::JsonValue;

use crate::error::Result;
use crate::session::{ContextCache, Session};

/// The context of a turn ([`Session::turn_context`]): the dialect's `buildSessionContext` and
/// its `convertToLlm`, each message shared (`Arc`) with the session's cache and the next turns.
#[derive(Debug, Clone)]
pub struct TurnContext {
    /// The dialect's `buildSessionContext` without its messages (thinking level, model, …):
    /// `settings.messages()` is empty, the messages are [`TurnContext::messages`].
    pub settings: AgentContext,
    /// `buildSessionContext`'s messages (the agent messages), in order.
    pub messages: Vec<Arc<JsonValue>>,
    /// `convertToLlm(messages)` of the dialect: what the agent loop hands its provider.
    pub llm: Vec<Arc<JsonValue>>,
    /// What the resolver reported.
    pub diagnostics: Vec<pi_session_tree::Diagnostic>,
}

/// What a [`ContextCache`] keeps for [`Session::turn_context`].
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Per path entry, its message once it was sent.
    messages: Vec<Option<Arc<JsonValue>>>,
    /// `convertToLlm` per message sent (by the message's address and whether omp's
    /// interrupted-thinking message follows it); the key's message is kept alive beside it,
    /// so an address is never reused while it is a key.
    llm: HashMap<(usize, bool), Converted>,
}

#[derive(Debug)]
struct Converted {
    source: Arc<JsonValue>,
    out: Vec<Arc<JsonValue>>,
}

impl ContextCache {
    /// The turn's context from the kept path: built with indices ([`agent_context_indexed`]),
    /// messages shared, conversions reused.
    pub(crate) fn turn(&mut self) -> TurnContext {
        let dialect = self.dialect;
        let (settings, built, diagnostics) = agent_context_indexed(&self.path, dialect);
        let shared = &mut self.shared;
        shared.messages.resize(self.path.len(), None);
        let messages: Vec<Arc<JsonValue>> = built
            .into_iter()
            .map(|message| match message {
                Built::Entry(at) => {
                    let path = &self.path;
                    shared.messages[at]
                        .get_or_insert_with(|| Arc::new(Built::Entry(at).resolve(path).clone()))
                        .clone()
                }
                Built::Made(message) => Arc::new(message),
            })
            .collect();
        let mut kept = HashMap::with_capacity(messages.len());
        let mut llm = Vec::with_capacity(messages.len());
        for (i, message) in messages.iter().enumerate() {
            let next = messages.get(i + 1).map(|m| &**m);
            let key = (
                Arc::as_ptr(message) as usize,
                interrupted_next(dialect, next),
            );
            let converted = match shared.llm.remove(&key) {
                Some(known) if Arc::ptr_eq(&known.source, message) => known,
                _ => Converted {
                    source: Arc::clone(message),
                    out: convert(message, next, dialect),
                },
            };
            llm.extend(converted.out.iter().cloned());
            kept.insert(key, converted);
        }
        shared.llm = kept;
        TurnContext {
            settings,
            messages,
            llm,
            diagnostics,
        }
    }
}

/// Whether omp's conversion of a message depends on `next` (what the key records).
fn interrupted_next(dialect: Dialect, next: Option<&JsonValue>) -> bool {
    dialect == Dialect::Omp
        && next.is_some_and(|next| {
            next.get("role").and_then(JsonValue::as_str) == Some("custom")
                && next.get("customType").and_then(JsonValue::as_str)
                    == Some(pi_session_context::llm::INTERRUPTED_THINKING_TYPE)
        })
}

/// `convertToLlm` of one message: unchanged output shares the message's `Arc`.
fn convert(
    message: &Arc<JsonValue>,
    next: Option<&JsonValue>,
    dialect: Dialect,
) -> Vec<Arc<JsonValue>> {
    pi_session_context::llm::llm_message(message, next, dialect)
        .into_iter()
        .map(|out| match out {
            std::borrow::Cow::Borrowed(_) => Arc::clone(message),
            std::borrow::Cow::Owned(made) => Arc::new(made),
        })
        .collect()
}

impl Session {
    /// The context a host sends this turn, shared: the dialect's `buildSessionContext` for this
    /// cursor's branch and its `convertToLlm`, as [`Session::agent_context`] and
    /// [`pi_session_context::llm::llm_messages`] give them, with every message an `Arc`.
    ///
    /// Made for a host's loop (append the user message, append the reply, build the context):
    /// what was read and built is kept, so a turn reads only what was appended, copies no
    /// message that was sent before and converts only the new ones. Blob references are left
    /// in place (use [`Session::agent_context`] with a blob folder to resolve them).
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, UserOptions, user};
    /// use pi_session::tree::Dialect;
    /// let mut session = Session::in_memory("anthropic:claude-sonnet-4-5", "/work");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let first = session.turn_context(Dialect::Pi)?;
    /// session.append(user("again", UserOptions::new()))?;
    /// let second = session.turn_context(Dialect::Pi)?;
    /// assert_eq!(second.llm.len(), 2);
    /// // The first message is the same allocation on both turns: nothing was copied.
    /// assert!(std::sync::Arc::ptr_eq(&first.llm[0], &second.llm[0]));
    /// # Ok(()) }
    /// ```
    pub fn turn_context(&self, dialect: Dialect) -> Result<TurnContext> {
        let mut log = self.log();
        let leaf = self.leaf_in(&log);
        let positions = log.branch_positions(leaf.as_deref());
        Ok(log.cached_context(positions, dialect)?.turn())
    }
}
