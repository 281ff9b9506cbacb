//! Contexts that point into their path instead of copying it.
//!
//! Most messages a dialect's `buildSessionContext` returns are a path entry's `message`,
//! unchanged (JavaScript hands out the same object). [`agent_context_indexed`] says so with
//! [`Built::Entry`] (the entry's index in the path) and copies only what a rule makes or
//! changes ([`Built::Made`]), so a host that keeps its messages shared (`Arc`) between turns
//! builds each turn's context without copying a message (see the facade's
//! `Session::turn_context`). [`crate::agent_context`] is this with every message copied out.

use pi_session_types::shallow::KeyedMessage;
use pi_session_types::view::EntryRef;
use serde_json::Value;

use crate::context::{AgentContext, Dialect};
use crate::diagnostic::Diagnostic;
use crate::dialect::omp::context as omp_context;
pub use crate::dialect::omp::context::Release;
use crate::dialect::pi::context as pi_context;

/// One message of a built context.
#[derive(Debug, Clone, PartialEq)]
pub enum Built {
    /// The `message` of the path entry at this index, unchanged.
    Entry(usize),
    /// A message a rule made (a summary, a custom message, an edited or normalised copy).
    Made(Value),
}

/// What an index that names no message resolves to (never the case for
/// [`agent_context_indexed`]'s own output).
static MISSING: Value = Value::Null;

impl Built {
    /// The message, read from `path` for [`Built::Entry`].
    pub fn resolve<'a>(&'a self, path: &'a [Value]) -> &'a Value {
        match self {
            Self::Entry(at) => path
                .get(*at)
                .and_then(|entry| EntryRef::new(entry).message())
                .unwrap_or(&MISSING),
            Self::Made(message) => message,
        }
    }

    /// The message as an owned value (a copy for [`Built::Entry`]).
    pub fn into_value(self, path: &[Value]) -> Value {
        match self {
            Self::Entry(_) => self.resolve(path).clone(),
            Self::Made(message) => message,
        }
    }

    /// The message to change in place: an entry's message is copied first (copy on write).
    pub(crate) fn make_mut(&mut self, path: &[Value]) -> &mut Value {
        match self {
            Self::Made(message) => message,
            Self::Entry(_) => {
                *self = Self::Made(self.resolve(path).clone());
                // Now `Made`: the first arm answers.
                self.make_mut(path)
            }
        }
    }
}

/// Every message copied out of the path (what [`crate::agent_context`] returns).
pub(crate) fn materialise(path: &[Value], messages: Vec<Built>) -> Vec<Value> {
    messages.into_iter().map(|m| m.into_value(path)).collect()
}

/// [`materialise`] for a path the caller drops afterwards: each entry's message is moved out
/// of it (the last time it is named; a copy for any earlier time), so the messages sent are
/// never held twice.
pub(crate) fn materialise_from(path: &mut [Value], messages: Vec<Built>) -> Vec<Value> {
    let mut named = vec![0u32; path.len()];
    for message in &messages {
        if let Built::Entry(at) = message
            && let Some(count) = named.get_mut(*at)
        {
            *count += 1;
        }
    }
    messages
        .into_iter()
        .map(|message| match message {
            Built::Entry(at) => match named.get_mut(at) {
                Some(count) if *count == 1 => {
                    *count = 0;
                    match path
                        .get_mut(at)
                        .and_then(|entry| entry.get_mut(pi_session_types::view::key::MESSAGE))
                    {
                        Some(moved) => moved.take(),
                        None => MISSING.clone(),
                    }
                }
                Some(count) => {
                    *count = count.saturating_sub(1);
                    Built::Entry(at).into_value(path)
                }
                None => MISSING.clone(),
            },
            Built::Made(made) => made,
        })
        .collect()
}

/// The dialect's `buildSessionContext` of `path` (for omp, entries already through
/// [`crate::context::prepare_omp_entry`]), its messages as [`Built`]: the context returned has
/// no messages, they are the second value.
///
/// ```
/// use pi_session_tree::built::{agent_context_indexed, Built};
/// use pi_session_tree::Dialect;
/// use serde_json::json;
///
/// let path = vec![
///     json!({"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",
///            "message":{"role":"user","content":"hi","timestamp":1}}),
///     json!({"type":"branch_summary","id":"b","parentId":"a","fromId":"a",
///            "timestamp":"2025-01-01T00:00:01.000Z","summary":"tried X"}),
/// ];
/// let (_, messages, _) = agent_context_indexed(&path, Dialect::PI);
/// assert_eq!(messages[0], Built::Entry(0));
/// assert!(matches!(messages[1], Built::Made(_)));
/// assert_eq!(messages[0].resolve(&path)["content"], "hi");
/// ```
pub fn agent_context_indexed(
    path: &[Value],
    dialect: Dialect,
) -> (AgentContext, Vec<Built>, Vec<Diagnostic>) {
    let (context, messages, diagnostics, _) = dialect.build_context().build(path, None);
    (context, messages, diagnostics)
}

/// [`agent_context_indexed`] of a path straight from the store: the dialect's load-time
/// rewrites applied to it in place first ([`crate::context::prepare_entries`], blobs resolved
/// through `options.blobs`), their diagnostics first. A [`Built::Entry`] names the message of
/// the *prepared* entry (see [`crate::context::may_rewrite_message_line`] for which entries a
/// rewrite may touch).
pub fn agent_context_prepared_indexed(
    path: &mut [Value],
    dialect: Dialect,
    options: &crate::context::ContextOptions<'_>,
) -> (AgentContext, Vec<Built>, Vec<Diagnostic>) {
    let (context, messages, diagnostics, _) =
        agent_context_prepared_extendable(path, dialect, options);
    (context, messages, diagnostics)
}

/// [`agent_context_prepared_indexed`], with what continuing the build needs
/// ([`Extendable::extend_alone`]: the `message` entries that follow a path read a part at a
/// time, [`crate::source::context_path_streamed`]).
pub fn agent_context_prepared_extendable(
    path: &mut [Value],
    dialect: Dialect,
    options: &crate::context::ContextOptions<'_>,
) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
    let mut diagnostics = dialect.build_context().prepare(path, options.blobs);
    let (context, messages, more, extendable) =
        agent_context_built_extendable(path, dialect, options);
    diagnostics.extend(more);
    (context, messages, diagnostics, extendable)
}

/// [`agent_context_prepared_extendable`] of a path whose entries already went through the
/// dialect's load-time rewrites ([`crate::context::prepare_entries`]): the build alone, with
/// its own diagnostics (a caller that patched a prepared path builds it again so).
pub fn agent_context_built_extendable(
    path: &[Value],
    dialect: Dialect,
    options: &crate::context::ContextOptions<'_>,
) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
    dialect.build_context().build(path, options.blobs)
}

/// [`agent_context_built_extendable`] of a branch's head (the path up to the last entry that
/// is not a `message`, [`crate::source::context_path_streamed`]), to be continued with the
/// `message` entries after it a part at a time ([`Extendable::extend_read`]). For omp, whose
/// passes over the messages reach back, they are left for later: the messages they may still
/// change are held back ([`Extendable::release`]), and [`Extendable::finish_held`] runs them.
/// For pi it is the build itself (nothing to hold back).
///
/// ```
/// use pi_session_tree::built::{
///     Added, Built, Release, agent_context_built_extendable, agent_context_built_streamed,
/// };
/// use pi_session_tree::{ContextOptions, Dialect};
/// use serde_json::json;
///
/// let entry = |id: &str, message: serde_json::Value| json!({"type":"message","id":id,
///     "parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":message});
/// let call = entry("a", json!({"role":"assistant","provider":"p","model":"m","stopReason":"toolUse",
///     "content":[{"type":"toolCall","id":"c1","name":"ls","arguments":{}}]}));
/// let result = entry("b", json!({"role":"toolResult","toolCallId":"c1","content":[]}));
/// let options = ContextOptions::default();
/// // Built alone, the head's call has no result: omp would strip it. Streamed, it waits.
/// let (mut context, head, mut diagnostics, mut streamed) =
///     agent_context_built_streamed(&[call.clone()], Dialect::OMP, &options);
/// assert_eq!(head, [Built::Entry(0)]);
/// assert_eq!(streamed.release(), Release::Hold);
/// let added = streamed.extend_read(&mut context, &[Added::Entry(&result)], &mut diagnostics);
/// assert_eq!(added, Some(vec![Built::Entry(0)]));
/// // The result answers the call: nothing is held back any more, nothing changes.
/// assert_eq!(streamed.release(), Release::Send);
/// let whole = [call, result];
/// let (fresh, all, _, _) = agent_context_built_extendable(&whole, Dialect::OMP, &options);
/// assert_eq!((context, all), (fresh, vec![Built::Entry(0), Built::Entry(1)]));
/// ```
pub fn agent_context_built_streamed(
    path: &[Value],
    dialect: Dialect,
    options: &crate::context::ContextOptions<'_>,
) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
    dialect.build_context().build_streamed(path, options.blobs)
}

/// An entry added to a built path, as [`Extendable::extend_read`] is handed it.
#[derive(Debug, Clone, Copy)]
pub enum Added<'a> {
    /// The entry, read whole (or cut to the keys the build reads, as a value).
    Entry(&'a Value),
    /// A `message` entry (its line checked to be the entry indexed, and to hold a message
    /// object) read as the keys of its message that the build reads
    /// ([`crate::context::message_keys`]); [`Built::Entry`] names it as any other entry, its
    /// message being with the reader (copied from its line).
    Message(&'a KeyedMessage),
}

/// A built context that can be continued with what a host's turn appended
/// ([`agent_context_extendable`], [`Extendable::extend`]).
#[derive(Debug, Clone)]
pub struct Extendable {
    state: Tail,
}

#[derive(Debug, Clone)]
enum Tail {
    Pi(pi_context::PiTail),
    Omp(omp_context::OmpTail),
}

/// [`agent_context_indexed`], with what is needed to continue the build when the path grows by
/// `message` entries ([`Extendable::extend`]).
pub fn agent_context_extendable(
    path: &[Value],
    dialect: Dialect,
) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
    dialect.build_context().build(path, None)
}

impl Extendable {
    /// A pi build's state.
    pub(crate) fn pi(tail: pi_context::PiTail) -> Self {
        Self {
            state: Tail::Pi(tail),
        }
    }

    /// An omp build's state.
    pub(crate) fn omp(tail: omp_context::OmpTail) -> Self {
        Self {
            state: Tail::Omp(tail),
        }
    }

    /// Whether [`Self::extend_alone`] continues this build with any run of `message` entries:
    /// a build of a release whose rules read nothing before such a run (pi's; not omp's, whose
    /// passes reach back), without a rule that reaches forward (pi 1.6's context edits).
    pub fn extends_alone(&self) -> bool {
        match &self.state {
            Tail::Pi(tail) => pi_context::extends_alone(tail),
            Tail::Omp(_) => false,
        }
    }

    /// Whether [`Self::extend_read`] continues this build with the parts of a run of
    /// `message` entries, what it builds sent as [`Self::release`] says: a pi build that
    /// [`Self::extends_alone`], or an omp build made by [`agent_context_built_streamed`]
    /// (its passes over the messages held back).
    pub fn extends_read(&self) -> bool {
        match &self.state {
            Tail::Pi(tail) => pi_context::extends_alone(tail),
            Tail::Omp(tail) => omp_context::streams(tail),
        }
    }

    /// What to do with the messages built so far and not yet sent, as the build goes on
    /// ([`Release`]). Always [`Release::Send`] for pi's builds and for an omp build made whole;
    /// for an omp build made by [`agent_context_built_streamed`], [`Release::Hold`] while a
    /// turn's call waits for its result (it is stripped when none comes), and after a failed
    /// turn (dropped, with its calls' results, or kept by what follows it) until a message no
    /// pass removes ends the run: then [`Release::Finish`].
    pub fn release(&self) -> Release {
        match &self.state {
            Tail::Pi(_) => Release::Send,
            Tail::Omp(tail) => omp_context::release(tail),
        }
    }

    /// For a build made by [`agent_context_built_streamed`], when [`Self::release`] says
    /// [`Release::Finish`] and at the end of the branch: `messages` (those built and not yet
    /// sent, as [`Built`] over `path`) as the passes over the messages leave them (omp's:
    /// dangling calls stripped, failed turns dropped with their results), and the path indices
    /// of the entries whose messages were changed or left out for a dangling call (a message
    /// read cut to a few keys among them is to be read whole and this run again: the same
    /// messages are changed). For any other build, `messages` as they are.
    pub fn finish_held(
        &mut self,
        path: &[Value],
        messages: Vec<Built>,
    ) -> (Vec<Built>, Vec<usize>) {
        match &mut self.state {
            Tail::Pi(_) => (messages, Vec::new()),
            Tail::Omp(tail) => omp_context::finish_held(tail, path, messages),
        }
    }

    /// Whether this build sent a `message` entry's message changed that
    /// [`crate::context::message_keys_of_line`] lets a reader cut down to a few keys: omp's
    /// stripped tool calls (an assistant turn whose calls have no result on the path). Such a
    /// message is always one whose `content` those keys cut
    /// ([`pi_session_types::shallow::Keys::blocks`]): a reader reads those entries again
    /// whole and builds again.
    pub fn rewrote_keyed_messages(&self) -> bool {
        match &self.state {
            Tail::Pi(_) => false,
            Tail::Omp(tail) => omp_context::stripped_calls(tail),
        }
    }

    /// [`Self::extend`] given only the entries added (`message` entries that follow the path
    /// built so far, which is not needed): the [`Built::Entry`] indices returned are into
    /// `added`. `None` when [`Self::extends_alone`] is `false` or `added` holds an entry that
    /// is not a `message`.
    ///
    /// ```
    /// use pi_session_tree::built::{agent_context_extendable, Built};
    /// use pi_session_tree::Dialect;
    /// use serde_json::json;
    ///
    /// let message = |id: &str, role: &str| json!({"type":"message","id":id,"parentId":null,
    ///     "message":{"role":role,"content":"hi","provider":"p","model":"m"}});
    /// let path = vec![message("a", "user"), message("b", "assistant")];
    /// let (mut context, messages, mut diagnostics, mut tail) =
    ///     agent_context_extendable(&path[..1], Dialect::PI);
    /// assert!(tail.extends_alone());
    /// let added = tail.extend_alone(&mut context, &path[1..], &mut diagnostics).unwrap();
    /// assert_eq!(added, [Built::Entry(0)]);
    /// let (fresh, all, _, _) = agent_context_extendable(&path, Dialect::PI);
    /// assert_eq!((context, messages.len() + added.len()), (fresh, all.len()));
    /// let (_, _, _, omp) = agent_context_extendable(&path[..1], Dialect::OMP);
    /// assert!(!omp.extends_alone());
    /// ```
    pub fn extend_alone(
        &mut self,
        context: &mut AgentContext,
        added: &[Value],
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Vec<Built>> {
        if !self.extends_alone() {
            return None;
        }
        // pi's `extend` reads only `path[from..]`.
        self.extend(context, added, 0, diagnostics)
    }

    /// [`Self::extend_alone`] given the entries added as a reader read them ([`Added`]): a
    /// `message` entry may come as the keys of its message that the build reads
    /// ([`Added::Message`], read for [`crate::context::message_keys`]), never parsed into a
    /// value. It also continues an omp build made by [`agent_context_built_streamed`]
    /// ([`Self::extends_read`]): the messages it gives wait for [`Self::release`] (omp's passes
    /// over the messages run later, [`Self::finish_held`]). `None` when
    /// [`Self::extends_read`] is `false`, `added` holds an entry that is not a `message`, or a
    /// message read so that this release reads more of (pi 0.73 and omp read no more than
    /// their keys, omp an error turn whole).
    ///
    /// ```
    /// use pi_session_tree::built::{Added, Built, agent_context_extendable};
    /// use pi_session_tree::Dialect;
    /// use pi_session_types::shallow::{Keys, canonical_keyed_message};
    /// use serde_json::json;
    ///
    /// let path = vec![json!({"type":"message","id":"a","parentId":null,
    ///     "message":{"role":"user","content":"hi"}})];
    /// let line = br#"{"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[],"provider":"p","model":"m"}}"#;
    /// let keys = pi_session_tree::context::message_keys(Dialect::PI).unwrap();
    /// let (message, _) = canonical_keyed_message(line, keys, "b").unwrap();
    /// let (mut context, _, mut diagnostics, mut tail) = agent_context_extendable(&path, Dialect::PI);
    /// let added = tail.extend_read(&mut context, &[Added::Message(&message)], &mut diagnostics);
    /// assert_eq!(added, Some(vec![Built::Entry(0)]));
    /// let whole = [path[0].clone(), serde_json::from_slice(line).unwrap()];
    /// assert_eq!(context, agent_context_extendable(&whole, Dialect::PI).0);
    /// ```
    pub fn extend_read(
        &mut self,
        context: &mut AgentContext,
        added: &[Added<'_>],
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Vec<Built>> {
        if !self.extends_read() {
            return None;
        }
        match (&mut self.state, context) {
            (Tail::Pi(tail), AgentContext::Pi(context)) => {
                pi_context::extend_added(tail, context, added, 0, diagnostics)
            }
            (Tail::Omp(tail), AgentContext::Omp(context)) => {
                omp_context::extend_streamed(tail, context, added, diagnostics)
            }
            _ => None,
        }
    }

    /// Continues a build over `path[..from]` (this one) to all of `path`, when what was added
    /// is `message` entries: returns the messages to put after the ones built so far, and
    /// updates `context` (the settings) and `diagnostics` in place, so that they equal
    /// [`agent_context_extendable`] over the whole `path`. `None` when that cannot be done
    /// without changing a message built before (an entry that is not a `message`, pi 1.6's
    /// context edits, omp's passes reaching back: a result for a call stripped before, failed
    /// turns): then build again. On `None`, `context`, `diagnostics` and this state may be
    /// part-updated and are to be dropped.
    ///
    /// ```
    /// use pi_session_tree::built::{agent_context_extendable, Built};
    /// use pi_session_tree::Dialect;
    /// use serde_json::json;
    ///
    /// let message = |id: &str, role: &str| json!({"type":"message","id":id,"parentId":null,
    ///     "timestamp":"2025-01-01T00:00:00.000Z",
    ///     "message":{"role":role,"content":"hi","timestamp":1,"provider":"p","model":"m"}});
    /// let mut path = vec![message("a", "user")];
    /// let (mut context, mut messages, mut diagnostics, mut tail) =
    ///     agent_context_extendable(&path, Dialect::OMP);
    /// path.push(message("b", "assistant"));
    /// let added = tail.extend(&mut context, &path, 1, &mut diagnostics).unwrap();
    /// messages.extend(added);
    /// let (fresh, all, _, _) = agent_context_extendable(&path, Dialect::OMP);
    /// assert_eq!((context, messages), (fresh, all));
    /// ```
    pub fn extend(
        &mut self,
        context: &mut AgentContext,
        path: &[Value],
        from: usize,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Vec<Built>> {
        match (&mut self.state, context) {
            (Tail::Pi(tail), AgentContext::Pi(context)) => {
                pi_context::extend(tail, context, path, from, diagnostics)
            }
            (Tail::Omp(tail), AgentContext::Omp(context)) => {
                omp_context::extend(tail, context, path, from, diagnostics)
            }
            _ => None,
        }
    }
}
