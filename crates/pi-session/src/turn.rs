//! A host's turn: the context for the model, shared between turns instead of copied.
//!
//! A host runs, per turn: append the user message, append the reply, build the context and
//! convert it for the model. [`Session::turn_context`] keeps what it built (in the log's
//! context cache, with the branch entries it read) and hands out messages as `Arc`s: each
//! path entry's message is copied once, the first time it is sent, and shared on every later
//! turn; `convertToLlm` runs once per message (a message its rule leaves unchanged is the same
//! `Arc`). When the branch only grew by messages, the kept build is continued with the appended
//! entries ([`Extendable::extend`]) instead of built again, so a turn costs what it appends (the
//! two lists are shared with the cache, extended in place when the host dropped the last
//! turn's context); where a dialect rule reaches back (see `extend`), the turn
//! is built again over the kept path, still sharing every message copied before.

use std::collections::HashMap;
use std::sync::Arc;

use pi_session_tree::built::{Built, Extendable, agent_context_extendable};
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
    ///
    /// The list itself is shared with the session's cache, so handing it out costs nothing:
    /// the next turn extends it in place when this context was dropped, and copies the list
    /// (not the messages) once when it is still held.
    pub messages: Arc<Vec<Arc<JsonValue>>>,
    /// `convertToLlm(messages)` of the dialect: what the agent loop hands its provider. Shared
    /// with the session's cache like [`TurnContext::messages`].
    pub llm: Arc<Vec<Arc<JsonValue>>>,
    /// What the resolver reported.
    pub diagnostics: Vec<crate::Diagnostic>,
}

/// What a [`ContextCache`] keeps for [`Session::turn_context`]: the last turn's context, and
/// how to continue it ([`Extendable`]).
#[derive(Debug)]
pub(crate) struct TurnState {
    settings: AgentContext,
    diagnostics: Vec<pi_session_tree::Diagnostic>,
    tail: Extendable,
    /// How many path entries it was built over.
    built_to: usize,
    /// The messages, in order (the list handed out as [`TurnContext::messages`]).
    messages: Arc<Vec<Arc<JsonValue>>>,
    /// `convertToLlm` of each message (aligned with `messages`).
    llm: Vec<Converted>,
    /// Every conversion's output in order: `llm`'s `out`s one after the other (the list handed
    /// out as [`TurnContext::llm`]).
    llm_flat: Arc<Vec<Arc<JsonValue>>>,
    /// Per path entry, its message once it was sent (so a build again shares it).
    entries: Vec<Option<Arc<JsonValue>>>,
}

/// One message's `convertToLlm`, and whether omp's interrupted-thinking message followed it
/// (the one thing besides the message its conversion depends on).
#[derive(Debug)]
struct Converted {
    /// The message converted (kept alive, so its address is never reused while it is a key).
    source: Arc<JsonValue>,
    interrupted: bool,
    out: Vec<Arc<JsonValue>>,
}

impl ContextCache {
    /// The turn's context from the kept path: the last turn's continued with the entries
    /// appended since when only messages were ([`Extendable::extend`]), else built again
    /// ([`agent_context_extendable`]); messages shared, conversions reused.
    pub(crate) fn turn(&mut self) -> (TurnContext, Vec<pi_session_tree::Diagnostic>) {
        let dialect = self.dialect;
        let path = &self.path;
        let continued = match self.turn.take() {
            Some(mut state) if state.built_to <= path.len() => {
                match state.tail.extend(
                    &mut state.settings,
                    path,
                    state.built_to,
                    &mut state.diagnostics,
                ) {
                    Some(added) => {
                        state.built_to = path.len();
                        let kept = state.messages.len();
                        let messages = state.share(path, added);
                        Arc::make_mut(&mut state.messages).extend(messages);
                        // The last message kept may now have a next one its conversion
                        // depends on.
                        let from = kept.saturating_sub(1);
                        let old: Vec<Converted> = state.llm.drain(from..).collect();
                        state.convert_from(from, old, dialect);
                        Ok(state)
                    }
                    None => Err(Some(state)),
                }
            }
            other => Err(other),
        };
        let state = continued.unwrap_or_else(|old| TurnState::build(path, dialect, old));
        let context = TurnContext {
            settings: state.settings.clone(),
            messages: Arc::clone(&state.messages),
            llm: Arc::clone(&state.llm_flat),
            diagnostics: Vec::new(),
        };
        let diagnostics = state.diagnostics.clone();
        self.turn = Some(state);
        (context, diagnostics)
    }
}

impl TurnState {
    /// The dialect's build over all of `path`, sharing what `old` had made and converted.
    fn build(path: &[JsonValue], dialect: Dialect, old: Option<TurnState>) -> Self {
        let (settings, built, diagnostics, tail) = agent_context_extendable(path, dialect);
        // What the last build shared and converted stays valid for the same path (a build
        // again only reorders or changes which messages are sent).
        let (entries, old_llm) = match old {
            Some(old) if old.entries.len() <= path.len() => (old.entries, old.llm),
            _ => (Vec::new(), Vec::new()),
        };
        let mut state = Self {
            settings,
            diagnostics,
            tail,
            built_to: path.len(),
            messages: Arc::default(),
            llm: Vec::new(),
            llm_flat: Arc::default(),
            entries,
        };
        state.messages = Arc::new(state.share(path, built));
        state.convert_from(0, old_llm, dialect);
        state
    }

    /// Each built message as an `Arc`: a path entry's message is copied the first time it is
    /// sent and shared after that.
    fn share(&mut self, path: &[JsonValue], built: Vec<Built>) -> Vec<Arc<JsonValue>> {
        self.entries.resize(path.len(), None);
        let entries = &mut self.entries;
        built
            .into_iter()
            .map(|message| match message {
                Built::Entry(at) => entries[at]
                    .get_or_insert_with(|| Arc::new(Built::Entry(at).resolve(path).clone()))
                    .clone(),
                Built::Made(message) => Arc::new(message),
            })
            .collect()
    }

    /// Converts the messages from `from` on (`llm` holds the conversions of those before it),
    /// reusing the conversions in `old` of the same message (by address) with the same
    /// next-message flag; `llm_flat` follows.
    fn convert_from(&mut self, from: usize, old: Vec<Converted>, dialect: Dialect) {
        let kept: usize = self.llm.iter().map(|c| c.out.len()).sum();
        let flat = Arc::make_mut(&mut self.llm_flat);
        flat.truncate(kept);
        let mut known: HashMap<(usize, bool), Converted> = old
            .into_iter()
            .map(|c| ((Arc::as_ptr(&c.source) as usize, c.interrupted), c))
            .collect();
        for i in from..self.messages.len() {
            let message = &self.messages[i];
            let next = self.messages.get(i + 1).map(|m| &**m);
            let interrupted = interrupted_next(dialect, next);
            let out = match known.remove(&(Arc::as_ptr(message) as usize, interrupted)) {
                Some(known) if Arc::ptr_eq(&known.source, message) => known.out,
                _ => convert(message, next, dialect),
            };
            flat.extend(out.iter().cloned());
            let source = Arc::clone(message);
            self.llm.push(Converted {
                source,
                interrupted,
                out,
            });
        }
    }
}

/// Whether the dialect's conversion of a message depends on `next` (what the key records).
fn interrupted_next(dialect: Dialect, next: Option<&JsonValue>) -> bool {
    pi_session_context::dialect::convert_to_llm(dialect).depends_on_next(next)
}

/// `convertToLlm` of one message: unchanged output shares the message's `Arc`.
fn convert(
    message: &Arc<JsonValue>,
    next: Option<&JsonValue>,
    dialect: Dialect,
) -> Vec<Arc<JsonValue>> {
    pi_session_context::llm_message(message, next, dialect)
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
    /// [`pi_session_context::llm_messages`] give them, with every message an `Arc`.
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
    /// let first = session.turn_context(Dialect::PI)?;
    /// session.append(user("again", UserOptions::new()))?;
    /// let second = session.turn_context(Dialect::PI)?;
    /// assert_eq!(second.llm.len(), 2);
    /// // The first message is the same allocation on both turns: nothing was copied.
    /// assert!(std::sync::Arc::ptr_eq(&first.llm[0], &second.llm[0]));
    /// # Ok(()) }
    /// ```
    pub fn turn_context(&self, dialect: Dialect) -> Result<TurnContext> {
        let (turn, diagnostics) = {
            let mut log = self.log();
            let leaf = self.leaf_in(&log);
            log.cached_context_at(leaf.as_deref(), dialect)?.turn()
        };
        Ok(TurnContext {
            diagnostics: self.located(diagnostics),
            ..turn
        })
    }
}
