//! omp's `buildSessionContext` (LLM mode), reproduced over the entries of a
//! path, as `@oh-my-pi/pi-coding-agent` 18.2.3 (`session/session-context.ts`)
//! does it.
//!
//! Steps: settings from the whole path (thinking level, configured level,
//! service tier, role→model map, TTSR rules, mode); emission after the latest
//! `reset_boundary` when it follows the latest compaction, else the latest
//! compaction's summary, kept region and tail, else the whole path; the
//! context-notes revision prepended; dangling tool calls stripped; errored and
//! aborted assistant turns removed with their paired results.

use pi_session_types::view::{
    BlockRef, CompactionDetailsRef, EntryRef, MessageRef, PreserveDataRef, key,
};
/// The sets of call ids the passes keep, hashed with `foldhash` as the index's tables are
/// (seeded per set): every call id of a branch's tail goes through one (SipHash cost ~0.6% of a
/// 5 MB `omp-agent-loop`).
type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

use serde::Serialize;
use serde_json::{Map, Value};

use super::notes as omp_notes;
use super::snapcompact;
use crate::built::{Added, Built};
use crate::context::FirstSent;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::dialect::pi::context::branch_summary_message;
use pi_session_types::js::{self, SameValueKey};
use pi_session_types::shallow::Seen;

/// `customType` of omp's hidden interrupted-thinking continuity message.
pub const INTERRUPTED_THINKING_MESSAGE_TYPE: &str = "interrupted-thinking";
/// `custom_message` types omp never replays into the model context.
const SKIPPED_CUSTOM_MESSAGE_TYPES: [&str; 2] = ["prewalk-plan", "vibe-mode-context"];
/// Default `customType` for custom messages without one.
pub const DEFAULT_CUSTOM_MESSAGE_TYPE: &str = "custom-message";

/// What omp's `buildSessionContext` returns in LLM mode, field for field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OmpContext {
    /// The agent messages, in order.
    pub messages: Vec<Value>,
    /// Thinking level in effect: the last change's `thinkingLevel ?? "off"`.
    #[serde(rename = "thinkingLevel")]
    pub thinking_level: Value,
    /// The last change's `configured ?? thinkingLevel`, when set.
    #[serde(
        rename = "configuredThinkingLevel",
        skip_serializing_if = "Option::is_none"
    )]
    pub configured_thinking_level: Option<Value>,
    /// Service tier per provider family, when set.
    #[serde(rename = "serviceTier", skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<Map<String, Value>>,
    /// Model per role (`default`, `temporary`, `fallback`, …), `provider/id`.
    pub models: Map<String, Value>,
    /// Names of TTSR rules injected on the path, first injection order.
    #[serde(rename = "injectedTtsrRules")]
    pub injected_ttsr_rules: Vec<Value>,
    /// The active mode (`"none"` by default); omitted when a `mode_change`
    /// has no `mode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Value>,
    /// The `data` of the last `mode_change`, when it had one.
    #[serde(rename = "modeData", skip_serializing_if = "Option::is_none")]
    pub mode_data: Option<Value>,
}

impl OmpContext {
    /// The result for an empty path or a `null` leaf.
    pub fn empty() -> Self {
        Self {
            messages: Vec::new(),
            thinking_level: Value::from("off"),
            configured_thinking_level: None,
            service_tier: None,
            models: Map::new(),
            injected_ttsr_rules: Vec::new(),
            mode: Some(Value::from("none")),
            mode_data: None,
        }
    }

    /// The `role` of the last `model_change` on a path (`default` when it has
    /// none), which omp's resume logic needs with [`Self::restorable_models`].
    pub fn last_model_change_role(path: &[Value]) -> Option<String> {
        path.iter()
            .rev()
            .find(|e| EntryRef::new(e).is("model_change"))
            .map(|e| {
                js::as_str(EntryRef::new(e).role())
                    .unwrap_or("default")
                    .to_owned()
            })
    }

    /// The model [`Self::models`] names for `role` (`"default"`, `"temporary"` …), when it
    /// is a string.
    fn named_model(&self, role: &str) -> Option<&str> {
        self.models.get(role).and_then(Value::as_str)
    }

    /// omp's `getRestorableSessionModels`: the models to try on resume, in
    /// order. A `fallback` role restores the default, a `temporary` one the
    /// temporary model first.
    pub fn restorable_models(&self, last_role: Option<&str>) -> Vec<String> {
        let text = |role: &str| self.named_model(role).filter(|s| !s.is_empty());
        let default = text("default");
        match last_role {
            None | Some("default") | Some("fallback") => {
                default.map(str::to_owned).into_iter().collect()
            }
            Some(role) => match (text(role), default) {
                (None, default) => default.map(str::to_owned).into_iter().collect(),
                (Some(role_model), Some(default)) if role_model != default => {
                    vec![role_model.to_owned(), default.to_owned()]
                }
                (Some(role_model), _) => vec![role_model.to_owned()],
            },
        }
    }
}

/// Options for the omp builder.
#[derive(Clone, Copy, Default)]
pub struct OmpOptions<'a> {
    /// Resolves snapcompact frame references (`blob:sha256:`), as omp's
    /// session manager does with its blob store. Without it, referenced frames
    /// count as unavailable.
    pub blobs: Option<&'a dyn super::blobs::BlobSource>,
}

impl std::fmt::Debug for OmpOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OmpOptions")
            .field("blobs", &self.blobs.map(|_| "BlobSource"))
            .finish()
    }
}

/// Builds omp's context from the entries of a path (root first).
pub fn build(path: &[Value], options: &OmpOptions<'_>) -> (OmpContext, Vec<Diagnostic>) {
    let (mut context, messages, diagnostics) = build_indexed(path, options);
    context.messages = crate::built::materialise(path, messages);
    (context, diagnostics)
}

/// [`build`] with each message that is a path entry's message, unchanged, given as that entry's
/// index ([`Built::Entry`]); `messages` of the context returned is empty.
pub fn build_indexed(
    path: &[Value],
    options: &OmpOptions<'_>,
) -> (OmpContext, Vec<Built>, Vec<Diagnostic>) {
    let (context, messages, diagnostics, _) = build_extendable(path, options);
    (context, messages, diagnostics)
}

/// What [`extend`] needs to know of the build it extends: the settings pass's state and what
/// the two passes over the messages saw (tool results, dangling calls, failed turns).
#[derive(Debug, Clone)]
pub(crate) struct OmpTail {
    explicit_default: bool,
    /// `toolCallId`s of the tool results among the messages.
    paired: HashSet<SameValueKey>,
    /// Ids of the tool calls stripped for want of a result.
    dangling: HashSet<SameValueKey>,
    /// Errored or aborted assistant turns among the messages.
    failed: usize,
    /// An id compared by identity (an object or array) was seen: always build again.
    opaque: bool,
    /// How many of the diagnostics are the settings pass's (they come first).
    settings_diagnostics: usize,
    /// For a build continued a part at a time ([`build_streamed`]): what the passes over the
    /// messages, run at the end, still wait for.
    stream: Option<Held>,
}

/// A build continued with a branch's tail a part at a time ([`build_streamed`],
/// [`extend_streamed`]). omp's passes over the messages reach back: a call is stripped when no
/// result answers it anywhere, a failed turn is dropped (with the results of its calls that
/// follow it) unless the message after it is an interrupted-thinking mark. So the messages
/// they may still change are held back ([`Release`]) until the passes can tell, and run over
/// them then ([`finish_held`]):
/// - a turn whose calls all have results stays as it is ([`Held::open`]);
/// - a failed turn's fate is told by the messages after it, up to one no pass removes (not a
///   tool result, not a failed turn): with every call answered, the passes run over those
///   held when such a message ends them, and nothing after it changes them;
/// - the results a dropped turn's calls get later are dropped too ([`Held::dropped`]);
/// - a call whose id is an object or array is answered by no result: all from it on waits
///   for the end.
#[derive(Debug, Clone, Default)]
pub(crate) struct Held {
    /// The call ids (compared by value) of the tool results among the messages so far.
    paired: HashSet<SameValueKey>,
    /// The ids of calls among the messages held that no result has answered yet.
    open: HashSet<SameValueKey>,
    /// The call ids of the failed turns dropped among the messages sent: a later result of
    /// one is dropped.
    dropped: HashSet<SameValueKey>,
    /// Among the messages held: a failed turn, or a result of a dropped turn's call.
    passes: bool,
    /// A call whose id is compared by identity was held: all waits for the end.
    to_the_end: bool,
    /// Whether the last message taken is one no pass removes (a pass over those held up to
    /// it reads nothing after it).
    closes: bool,
}

/// What to do with the messages held back by a build continued a part at a time
/// ([`crate::built::Extendable::release`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// Keep holding them: a pass may still change one of them.
    Hold,
    /// Send them as they are: no pass changes any of them.
    Send,
    /// Run the passes over them ([`crate::built::Extendable::finish_held`]) and send what
    /// they leave: nothing after them changes that.
    Finish,
}

impl Held {
    /// Takes into account `message`, the next one of the context.
    fn note(&mut self, message: Seen<'_>) {
        let role = message.str(key::ROLE);
        match role {
            Some("toolResult") => {
                let key = SameValueKey::of(message.get(key::TOOL_CALL_ID));
                // An id by identity answers no call: never paired.
                if !is_by_identity(&key) {
                    self.passes |= self.dropped.contains(&key);
                    self.open.remove(&key);
                    self.paired.insert(key);
                }
            }
            Some("assistant") => {
                self.passes |= is_failed(message);
                let calls = message
                    .blocks()
                    .filter(|block| block.str(key::TYPE) == Some("toolCall"));
                for call in calls {
                    let key = call.same_value_key(key::ID);
                    if is_by_identity(&key) {
                        self.to_the_end = true;
                    } else if !self.paired.contains(&key) {
                        self.open.insert(key);
                    }
                }
            }
            _ => {}
        }
        self.closes = match role {
            Some("toolResult") => false,
            Some("assistant") => !is_failed(message),
            _ => true,
        };
    }

    fn release(&self) -> Release {
        if self.to_the_end || !self.open.is_empty() {
            Release::Hold
        } else if !self.passes {
            Release::Send
        } else if self.closes {
            Release::Finish
        } else {
            Release::Hold
        }
    }
}

/// The build's steps before its passes over the messages: the settings (the context, whether a
/// `model_change` named the default model, how many diagnostics are the settings'), the
/// messages emitted and the context notes before them.
fn emitted<'p>(
    path: &'p [Value],
    options: &OmpOptions<'_>,
) -> (Builder<'p>, OmpContext, bool, usize) {
    let mut builder = Builder {
        path,
        messages: Vec::new(),
        diagnostics: Vec::new(),
        rewritten: Vec::new(),
    };
    let (context, compaction, explicit_default) = builder.settings();
    let settings_diagnostics = builder.diagnostics.len();
    builder.emit_all(compaction, options);
    builder.prepend_context_notes();
    (builder, context, explicit_default, settings_diagnostics)
}

/// [`build_indexed`] and what [`extend`] needs to continue it.
pub(crate) fn build_extendable(
    path: &[Value],
    options: &OmpOptions<'_>,
) -> (OmpContext, Vec<Built>, Vec<Diagnostic>, OmpTail) {
    let (mut builder, context, explicit_default, settings_diagnostics) = emitted(path, options);
    let (paired, dangling) = builder.strip_dangling_tool_calls();
    let (failed, _) = builder.drop_failed_turns();
    let opaque = paired.iter().chain(&dangling).any(is_by_identity);
    let tail = OmpTail {
        explicit_default,
        paired,
        dangling,
        failed,
        opaque,
        settings_diagnostics,
        stream: None,
    };
    (context, builder.messages, builder.diagnostics, tail)
}

/// [`build_extendable`] over a branch's head, to be continued with its tail a part at a time
/// ([`extend_streamed`]): the settings, the messages and the context notes, but not the passes
/// over the messages, which [`finish_held`] runs at the end over those still held back.
pub(crate) fn build_streamed(
    path: &[Value],
    options: &OmpOptions<'_>,
) -> (OmpContext, Vec<Built>, Vec<Diagnostic>, OmpTail) {
    let (builder, context, explicit_default, settings_diagnostics) = emitted(path, options);
    let mut held = Held::default();
    for message in &builder.messages {
        held.note(Seen::Value(message.resolve(path)));
    }
    let tail = OmpTail {
        explicit_default,
        paired: HashSet::default(),
        dangling: HashSet::default(),
        failed: 0,
        opaque: false,
        settings_diagnostics,
        stream: Some(held),
    };
    (context, builder.messages, builder.diagnostics, tail)
}

/// Continues a build made by [`build_streamed`] with the next part of the branch's tail
/// (`message` entries, in order): the messages they add (their [`Built::Entry`] indices into
/// `added`), the settings and diagnostics updated as [`extend`] updates them. None of the
/// passes over the messages is run ([`finish_held`]). `None` for a build not made so, or an
/// entry that is not a `message` read as a value.
pub(crate) fn extend_streamed(
    tail: &mut OmpTail,
    context: &mut OmpContext,
    added: &[Added<'_>],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<Built>> {
    let held = tail.stream.as_mut()?;
    let mut settings = Vec::new();
    for added in added {
        match added {
            Added::Entry(entry) if kind(entry) == Some("message") => {
                settle_message(&mut settings, context, tail.explicit_default, entry);
            }
            Added::Entry(_) => return None,
            Added::Message(message) => settle_model(
                context,
                tail.explicit_default,
                Seen::Keyed(message).str(key::ROLE),
                message.get(key::PROVIDER),
                message.get(key::MODEL),
            ),
        }
    }
    let mut emitted = Vec::new();
    let mut messages = Vec::new();
    for (at, added) in added.iter().enumerate() {
        match added {
            Added::Entry(entry) => {
                let Some(message) = appended(entry, at, &mut emitted) else {
                    continue;
                };
                held.note(Seen::Value(match &message {
                    Built::Entry(_) => EntryRef::new(entry).message().unwrap_or(&Value::Null),
                    Built::Made(made) => made,
                }));
                messages.push(message);
            }
            Added::Message(message) => {
                let seen = Seen::Keyed(message);
                // An error turn is read whole (its blocks tell whether it is left out).
                let error_turn = seen.str(key::STOP_REASON) == Some("error");
                if left_out_turn(seen, || (!error_turn).then_some(false))? {
                    continue;
                }
                held.note(seen);
                messages.push(Built::Entry(at));
            }
        }
    }
    let at = tail.settings_diagnostics.min(diagnostics.len());
    tail.settings_diagnostics += settings.len();
    diagnostics.splice(at..at, settings);
    diagnostics.extend(emitted);
    Some(messages)
}

/// Whether the build was made by [`build_streamed`], to be continued a part at a time.
pub(crate) fn streams(tail: &OmpTail) -> bool {
    tail.stream.is_some()
}

/// What to do with the messages a build made by [`build_streamed`] holds back ([`Release`]);
/// [`Release::Send`] for any other build (its passes have run).
pub(crate) fn release(tail: &OmpTail) -> Release {
    tail.stream.as_ref().map_or(Release::Send, Held::release)
}

/// The passes over the messages of a build made by [`build_streamed`], run over `messages`,
/// those held back (built over `path`, the entries they were read from), when [`release`]
/// says so or at the end of the branch: the dangling calls stripped (a call is answered by a
/// result anywhere among the context's messages), the failed turns dropped with their
/// results, and the results of calls of turns dropped before. Returns the messages, and the
/// path indices of the entries whose messages the first pass changed or left out. The
/// messages sent before are not changed by any pass; those returned are not either, later.
pub(crate) fn finish_held(
    tail: &mut OmpTail,
    path: &[Value],
    messages: Vec<Built>,
) -> (Vec<Built>, Vec<usize>) {
    let Some(held) = &mut tail.stream else {
        return (messages, Vec::new());
    };
    let mut builder = Builder {
        path,
        messages,
        diagnostics: Vec::new(),
        rewritten: Vec::new(),
    };
    builder.strip_dangling_with(&held.paired);
    let dropped = builder.drop_failed_turns_with(&held.dropped);
    held.dropped.extend(dropped);
    held.passes = false;
    (builder.messages, builder.rewritten)
}

/// Whether the build stripped tool calls from an assistant turn (the only message omp's build
/// sends changed; [`crate::built::Extendable::rewrote_keyed_messages`]).
pub(crate) fn stripped_calls(tail: &OmpTail) -> bool {
    !tail.dangling.is_empty()
}

fn is_by_identity(key: &SameValueKey) -> bool {
    matches!(key, SameValueKey::Reference(_))
}

/// The messages `path[from..]` add to a context built over `path[..from]` when those are
/// `message` entries (a host's turn), the settings and diagnostics updated, exactly as a build
/// over the whole `path` gives them: appended messages go last whichever part (reset, kept
/// range, tail) is sent, and the passes over the messages are run for the new ones only.
/// `None` when an earlier message would change (a result for a call stripped before, a turn
/// next to a failed one) or the new part holds a failed turn: the context is built again.
pub(crate) fn extend(
    tail: &mut OmpTail,
    context: &mut OmpContext,
    path: &[Value],
    from: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<Built>> {
    let added = path.get(from..)?;
    if tail.opaque || added.iter().any(|e| kind(e) != Some("message")) {
        return None;
    }
    let mut builder = Builder {
        path,
        messages: Vec::new(),
        diagnostics: Vec::new(),
        rewritten: Vec::new(),
    };
    for entry in added {
        settle_message(
            &mut builder.diagnostics,
            context,
            tail.explicit_default,
            entry,
        );
    }
    let settings_diagnostics = builder.diagnostics.len();
    for at in from..path.len() {
        builder.append(at);
    }
    let mut paired = Vec::new();
    for message in builder.messages.iter().map(|m| m.resolve(path)) {
        match MessageRef::new(message).role() {
            Some("toolResult") => {
                let key = SameValueKey::of(MessageRef::new(message).tool_call_id());
                if tail.failed > 0 || is_by_identity(&key) || tail.dangling.contains(&key) {
                    return None;
                }
                paired.push(key);
            }
            Some("assistant") if is_failed(Seen::Value(message)) => return None,
            Some("custom") if tail.failed > 0 => return None,
            _ => {}
        }
    }
    tail.paired.extend(paired);
    let dangling = builder.strip_dangling_with(&tail.paired);
    if dangling.iter().any(is_by_identity) {
        return None;
    }
    tail.dangling.extend(dangling);
    let mut new = builder.diagnostics;
    let emitted = new.split_off(settings_diagnostics);
    let at = tail.settings_diagnostics.min(diagnostics.len());
    tail.settings_diagnostics += new.len();
    diagnostics.splice(at..at, new);
    diagnostics.extend(emitted);
    Some(builder.messages)
}

/// An errored or aborted assistant turn (omp's `drop_failed_turns` looks at these), as the
/// passes over the messages read it: its value, or the keys of it read from its line
/// ([`Added::Message`]: omp's [`crate::context::message_keys`], which hold those the passes
/// read of a message without a call).
fn is_failed(message: Seen<'_>) -> bool {
    matches!(message.str(key::STOP_REASON), Some("aborted" | "error"))
}

struct Builder<'p> {
    path: &'p [Value],
    messages: Vec<Built>,
    diagnostics: Vec<Diagnostic>,
    /// The path indices of the entries whose messages the pass over dangling calls changed or
    /// left out ([`finish_held`]).
    rewritten: Vec<usize>,
}

fn kind(entry: &Value) -> Option<&str> {
    EntryRef::new(entry).kind()
}

/// Reports `entry` as malformed (what omp would throw on, or skip) in `diagnostics`.
fn malformed(diagnostics: &mut Vec<Diagnostic>, entry: &Value, message: impl Into<String>) {
    diagnostics.push(Diagnostic::at(
        DiagnosticKind::MalformedEntry,
        None,
        EntryRef::new(entry).id(),
        message,
    ));
}

impl<'p> Builder<'p> {
    fn malformed(&mut self, entry: &Value, message: impl Into<String>) {
        malformed(&mut self.diagnostics, entry, message);
    }

    /// One pass over the path: settings, last value wins. Returns the index of
    /// the latest compaction.
    fn settings(&mut self) -> (OmpContext, Option<usize>, bool) {
        let mut context = OmpContext::empty();
        let mut compaction = None;
        let mut explicit_default = false;
        let mut rules_seen = HashSet::default();
        for (index, entry) in self.path.iter().enumerate() {
            match kind(entry) {
                Some("thinking_level_change") => {
                    let level = EntryRef::new(entry).thinking_level();
                    context.thinking_level = js::nullish_or(level, None)
                        .cloned()
                        .unwrap_or_else(|| "off".into());
                    context.configured_thinking_level = js::nullish_or(
                        js::nullish_or(EntryRef::new(entry).configured(), level),
                        None,
                    )
                    .cloned();
                }
                Some("model_change") if js::truthy(EntryRef::new(entry).model()) => {
                    let role = js::nullish_or(EntryRef::new(entry).role(), None)
                        .map_or_else(|| "default".to_owned(), |r| js::string_of(Some(r)));
                    if role == "default" {
                        explicit_default = true;
                    }
                    context.models.insert(
                        role,
                        EntryRef::new(entry).model().cloned().unwrap_or_default(),
                    );
                }
                Some("service_tier_change") => {
                    context.service_tier = coerce_service_tier(EntryRef::new(entry).service_tier());
                }
                Some("message") => {
                    settle_message(&mut self.diagnostics, &mut context, explicit_default, entry)
                }
                Some("compaction") => compaction = Some(index),
                Some("ttsr_injection") => self.collect_rules(entry, &mut context, &mut rules_seen),
                Some("mode_change") => {
                    context.mode = EntryRef::new(entry).mode().cloned();
                    context.mode_data = EntryRef::new(entry).data().cloned();
                }
                _ => {}
            }
        }
        (context, compaction, explicit_default)
    }

    fn collect_rules(
        &mut self,
        entry: &Value,
        context: &mut OmpContext,
        seen: &mut HashSet<SameValueKey>,
    ) {
        let names: Vec<Value> = match EntryRef::new(entry).injected_rules() {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::String(text)) => text.chars().map(|c| Value::from(c.to_string())).collect(),
            _ => {
                self.malformed(
                    entry,
                    "ttsr_injection without an injectedRules array; omp throws here, the entry is ignored",
                );
                return;
            }
        };
        for name in names {
            if seen.insert(SameValueKey::of(Some(&name))) {
                context.injected_ttsr_rules.push(name);
            }
        }
    }

    fn emit_all(&mut self, compaction: Option<usize>, options: &OmpOptions<'_>) {
        let path = self.path;
        let reset = path.iter().rposition(|e| kind(e) == Some("reset_boundary"));
        let compaction_index = compaction.map(|latest| {
            let id = EntryRef::new(&path[latest]).id_value();
            path.iter()
                .position(|e| {
                    kind(e) == Some("compaction") && js::strict_eq(EntryRef::new(e).id_value(), id)
                })
                .unwrap_or(latest)
        });
        match (reset, compaction_index) {
            (Some(reset), c) if c.is_none_or(|c| reset > c) => {
                for at in reset + 1..path.len() {
                    self.append(at);
                }
            }
            (reset, Some(c)) => {
                self.emit_compacted(&path[compaction.unwrap_or(c)], c, reset, options)
            }
            (_, None) => {
                for at in 0..path.len() {
                    self.append(at);
                }
            }
        }
    }

    fn emit_compacted(
        &mut self,
        compaction: &Value,
        at: usize,
        reset: Option<usize>,
        options: &OmpOptions<'_>,
    ) {
        let path = self.path;
        let preserve = EntryRef::new(compaction).preserve_data();
        let remote = openai_remote_payload(preserve);
        let anthropic = anthropic_payload(preserve);
        let first_kept = EntryRef::new(compaction).first_kept_entry_id();

        let mut timestamp_ms = js::date_ms(EntryRef::new(compaction).timestamp());
        if anthropic.is_some() {
            let first_kept_any = path
                .iter()
                .position(|e| js::strict_eq(EntryRef::new(e).id_value(), first_kept));
            let retained = first_kept_any
                .filter(|&i| i < at)
                .map(|i| &path[i])
                .or_else(|| path.get(at + 1));
            if let Some(retained_at) =
                retained.and_then(|e| js::date_ms(EntryRef::new(e).timestamp()))
            {
                timestamp_ms = Some(retained_at - 1).filter(|ms| ms.abs() <= 8_640_000_000_000_000);
            }
        }
        let blocks =
            snapcompact::history_blocks_for(preserve, options.blobs, &mut self.diagnostics);
        let payload = remote.clone().or(anthropic);
        self.messages.push(Built::Made(compaction_summary(
            compaction,
            payload.as_ref(),
            blocks,
            timestamp_ms,
        )));

        let details = EntryRef::new(compaction).details();
        if details.is_some_and(Value::is_object)
            && js::is_str(
                CompactionDetailsRef::new(details).kind(),
                "experimental-context-rollover",
            )
        {
            let first_kept_any = path
                .iter()
                .position(|e| js::strict_eq(EntryRef::new(e).id_value(), first_kept));
            let floor = reset.map_or(0, |r| r + 1);
            for i in (floor..at).rev() {
                if !is_user_request_entry(&path[i]) {
                    continue;
                }
                if first_kept_any.is_some_and(|fk| i < fk) {
                    self.append(i);
                }
                break;
            }
        }

        if remote.is_none() {
            let first_kept_index = path[..at]
                .iter()
                .position(|e| js::strict_eq(EntryRef::new(e).id_value(), first_kept));
            if let Some(start) = first_kept_index {
                for i in start..at {
                    self.append(i);
                }
            }
        } else if js::truthy(EntryRef::new(compaction).provider_replay_through_entry_id()) {
            let through = EntryRef::new(compaction).provider_replay_through_entry_id();
            if let Some(r) = path
                .iter()
                .position(|e| js::strict_eq(EntryRef::new(e).id_value(), through))
                && r < at
            {
                for i in r + 1..at {
                    self.append(i);
                }
            }
        }
        for i in at + 1..path.len() {
            self.append(i);
        }
    }

    /// omp's `appendMessage` in LLM mode ([`appended`]).
    fn append(&mut self, at: usize) {
        if let Some(message) = appended(&self.path[at], at, &mut self.diagnostics) {
            self.messages.push(message);
        }
    }

    fn prepend_context_notes(&mut self) {
        let Some((text, index)) = omp_notes::latest_notes(self.path) else {
            return;
        };
        let rendered = omp_notes::render_notes(text);
        if text.is_empty() || rendered.is_empty() {
            return;
        }
        let id = EntryRef::new(&self.path[index]).id_value();
        let Some(source) = self
            .path
            .iter()
            .find(|e| js::strict_eq(EntryRef::new(e).id_value(), id))
        else {
            return;
        };
        let mut message = Map::new();
        message.insert("role".into(), Value::from("custom"));
        message.insert(
            "customType".into(),
            Value::from(omp_notes::CONTEXT_NOTES_ENTRY_TYPE),
        );
        message.insert("content".into(), Value::from(rendered));
        message.insert("display".into(), Value::from(false));
        message.insert(
            "timestamp".into(),
            js::date_ms_value(EntryRef::new(source).timestamp()),
        );
        self.messages.insert(0, Built::Made(Value::Object(message)));
    }

    /// Tool calls without a result on the path are removed from every
    /// assistant turn; such a turn also loses its `redactedThinking` blocks and
    /// its thinking signatures; a turn left empty is removed.
    /// Returns the results' call ids and the ids of the calls stripped.
    fn strip_dangling_tool_calls(&mut self) -> (HashSet<SameValueKey>, HashSet<SameValueKey>) {
        let path = self.path;
        let paired: HashSet<SameValueKey> = self
            .messages
            .iter()
            .map(|m| m.resolve(path))
            .filter(|m| MessageRef::new(m).is_role("toolResult"))
            .map(|m| SameValueKey::of(MessageRef::new(m).tool_call_id()))
            .collect();
        let dangling = self.strip_dangling_with(&paired);
        (paired, dangling)
    }

    /// [`Self::strip_dangling_tool_calls`] with the results' call ids given; returns the ids
    /// of the calls stripped.
    fn strip_dangling_with(&mut self, paired: &HashSet<SameValueKey>) -> HashSet<SameValueKey> {
        let path = self.path;
        let mut dangling = HashSet::default();
        let is_dangling = |block: &Value| {
            BlockRef::new(block).is("toolCall")
                && !paired.contains(&SameValueKey::of(BlockRef::new(block).id()))
        };
        let mut i = self.messages.len();
        while let Some(at) = self.assistant_before(i) {
            i = at;
            let message = self.messages[i].resolve(path);
            let Some(blocks) = MessageRef::new(message).content().and_then(Value::as_array) else {
                continue;
            };
            if !blocks.iter().any(is_dangling) {
                continue;
            }
            dangling.extend(
                blocks
                    .iter()
                    .filter(|&b| is_dangling(b))
                    .map(|b| SameValueKey::of(BlockRef::new(b).id())),
            );
            let normalized: Vec<Value> = blocks
                .iter()
                .filter(|b| !is_dangling(b) && !BlockRef::new(b).is("redactedThinking"))
                .map(|b| {
                    let mut block = b.clone();
                    if BlockRef::new(b).is("thinking")
                        && js::truthy(BlockRef::new(b).thinking_signature())
                        && let Some(map) = block.as_object_mut()
                    {
                        map.shift_remove(key::THINKING_SIGNATURE);
                    }
                    block
                })
                .collect();
            if let Built::Entry(at) = self.messages[i] {
                self.rewritten.push(at);
            }
            if normalized.is_empty() {
                self.messages.remove(i);
            } else if let Some(map) = self.messages[i].make_mut(path).as_object_mut() {
                map.insert("content".into(), Value::Array(normalized));
            }
        }
        dangling
    }

    /// The position of the last assistant message before `end`. The passes that remove
    /// messages as they go walk back by position with it.
    fn assistant_before(&self, end: usize) -> Option<usize> {
        (0..end.min(self.messages.len()))
            .rev()
            .find(|&i| MessageRef::new(self.messages[i].resolve(self.path)).is_role("assistant"))
    }

    /// Errored and aborted assistant turns leave the model context together
    /// with the tool results paired to their calls, unless an
    /// interrupted-thinking message follows them.
    /// Returns how many failed turns it saw (dropped or kept), and the call ids (compared by
    /// value) of those dropped.
    fn drop_failed_turns(&mut self) -> (usize, HashSet<SameValueKey>) {
        let path = self.path;
        let mut failed = 0;
        let mut all_dropped = HashSet::default();
        let mut i = self.messages.len();
        while let Some(at) = self.assistant_before(i) {
            i = at;
            let message = self.messages[i].resolve(path);
            if !is_failed(Seen::Value(message)) {
                continue;
            }
            failed += 1;
            if let Some(next) = self.messages.get(i + 1).map(|m| m.resolve(path))
                && MessageRef::new(next).is_role("custom")
                && MessageRef::new(next).custom_type() == Some(INTERRUPTED_THINKING_MESSAGE_TYPE)
            {
                continue;
            }
            let dropped: HashSet<SameValueKey> = MessageRef::new(message)
                .content()
                .and_then(Value::as_array)
                .map(|blocks| {
                    blocks
                        .iter()
                        .filter(|b| BlockRef::new(b).is("toolCall"))
                        .map(|b| SameValueKey::of(BlockRef::new(b).id()))
                        .collect()
                })
                .unwrap_or_default();
            self.messages.remove(i);
            if dropped.is_empty() {
                continue;
            }
            all_dropped.extend(dropped.iter().filter(|key| !is_by_identity(key)).cloned());
            let mut j = self.messages.len();
            while j > i {
                j -= 1;
                let candidate = self.messages[j].resolve(path);
                if MessageRef::new(candidate).is_role("toolResult")
                    && dropped
                        .contains(&SameValueKey::of(MessageRef::new(candidate).tool_call_id()))
                {
                    self.messages.remove(j);
                }
            }
        }
        (failed, all_dropped)
    }

    /// [`Self::drop_failed_turns`] over messages that follow those of failed turns dropped
    /// before with the call ids `before`: their results among these go too (after the turns
    /// here are dropped or kept, as the pass, walking back, gets to those turns last). Returns
    /// the call ids of the turns dropped here.
    fn drop_failed_turns_with(&mut self, before: &HashSet<SameValueKey>) -> HashSet<SameValueKey> {
        let (_, dropped) = self.drop_failed_turns();
        if !before.is_empty() {
            let path = self.path;
            self.messages.retain(|message| {
                let view = MessageRef::new(message.resolve(path));
                !(view.is_role("toolResult")
                    && before.contains(&SameValueKey::of(view.tool_call_id())))
            });
        }
        dropped
    }
}

/// omp's `appendMessage` in LLM mode: the message `entry` (the path entry at `at`) adds, if
/// any.
fn appended(entry: &Value, at: usize, diagnostics: &mut Vec<Diagnostic>) -> Option<Built> {
    match kind(entry) {
        Some("message") => {
            let message = EntryRef::new(entry).message().filter(|m| !m.is_null())?;
            let left_out = left_out_turn(Seen::Value(message), || {
                Some(is_empty_error_turn(diagnostics, entry, message))
            });
            (left_out != Some(true)).then_some(Built::Entry(at))
        }
        Some("custom_message") => {
            let custom_type = js::as_str(EntryRef::new(entry).custom_type());
            if custom_type.is_some_and(|t| SKIPPED_CUSTOM_MESSAGE_TYPES.contains(&t)) {
                return None;
            }
            custom_message_from_entry(entry).map(Built::Made)
        }
        Some("branch_summary") if js::truthy(EntryRef::new(entry).summary()) => {
            Some(Built::Made(branch_summary_message(entry)))
        }
        _ => None,
    }
}

/// Whether omp's `appendMessage` leaves `message` out: an assistant turn retried, or one
/// `empty_error_turn` says is an error turn none of whose blocks has content. `None` where
/// that cannot tell (a turn read as keys, its blocks not among them).
fn left_out_turn(
    message: Seen<'_>,
    empty_error_turn: impl FnOnce() -> Option<bool>,
) -> Option<bool> {
    if message.str(key::ROLE) != Some("assistant") {
        return Some(false);
    }
    if js::truthy(message.get(key::RETRY_RECOVERY)) {
        return Some(true);
    }
    empty_error_turn()
}

/// omp's `isEmptyErrorTurn`: an `error` turn none of whose blocks has content. Where
/// JavaScript would throw (malformed blocks), the turn is kept and reported.
fn is_empty_error_turn(diagnostics: &mut Vec<Diagnostic>, entry: &Value, message: &Value) -> bool {
    if MessageRef::new(message).stop_reason() != Some("error") {
        return false;
    }
    let Some(blocks) = MessageRef::new(message).content().and_then(Value::as_array) else {
        malformed(
            diagnostics,
            entry,
            "error turn whose content is not an array; omp throws here, the turn is kept",
        );
        return false;
    };
    for block in blocks {
        match block_has_content(block) {
            Ok(true) => return false,
            Ok(false) => {}
            Err(problem) => {
                malformed(
                    diagnostics,
                    entry,
                    format!("{problem}; omp throws here, the turn is kept"),
                );
                return false;
            }
        }
    }
    true
}

/// A `message` entry's part of the settings: an assistant message names the default model
/// unless a `model_change` did.
fn settle_message(
    diagnostics: &mut Vec<Diagnostic>,
    context: &mut OmpContext,
    explicit_default: bool,
    entry: &Value,
) {
    match EntryRef::new(entry).message() {
        None | Some(Value::Null) => malformed(
            diagnostics,
            entry,
            "message entry has no message object; omp throws here, the entry is ignored",
        ),
        Some(message) => settle_model(
            context,
            explicit_default,
            MessageRef::new(message).role(),
            MessageRef::new(message).provider(),
            MessageRef::new(message).model(),
        ),
    }
}

/// A message's part of the settings, from its `role`, `provider` and `model`: an assistant
/// message names the default model unless a `model_change` did.
fn settle_model(
    context: &mut OmpContext,
    explicit_default: bool,
    role: Option<&str>,
    provider: Option<&Value>,
    model: Option<&Value>,
) {
    if role == Some("assistant") && !explicit_default {
        // Most turns name the model the turn before did: the name is not made again.
        if let (Some(Value::String(provider)), Some(Value::String(model))) = (provider, model)
            && let Some(named) = context.named_model("default")
            && is_joined(named, provider, model)
        {
            return;
        }
        let model = format!("{}/{}", js::string_of(provider), js::string_of(model));
        context.models.insert("default".into(), Value::from(model));
    }
}

/// Whether `joined` is `provider/model`.
fn is_joined(joined: &str, provider: &str, model: &str) -> bool {
    joined
        .strip_prefix(provider)
        .and_then(|rest| rest.strip_prefix('/'))
        == Some(model)
}

fn block_has_content(block: &Value) -> Result<bool, String> {
    let text_of = |key: &str| -> Result<bool, String> {
        match block.get(key) {
            Some(Value::String(s)) => Ok(!js::trim(s).is_empty()),
            _ => Err(format!("a content block's {key:?} is not a string")),
        }
    };
    if block.is_null() {
        return Err("a content block is null".into());
    }
    match BlockRef::new(block).kind() {
        Some("text") => text_of("text"),
        Some("thinking") => {
            if text_of("thinking")? {
                return Ok(true);
            }
            match BlockRef::new(block).thinking_signature() {
                None | Some(Value::Null) => Ok(false),
                Some(Value::String(s)) => Ok(!js::trim(s).is_empty()),
                Some(_) => Err("a thinking block's \"thinkingSignature\" is not a string".into()),
            }
        }
        Some("redactedThinking") => text_of("data"),
        Some("toolCall") => Ok(true),
        Some("fallback") => Ok(false),
        _ => Ok(true),
    }
}

/// `customMessageEntryMessage`: the `custom` message a `custom_message` entry
/// replays as, `None` when its content is neither a string nor an array.
pub fn custom_message_from_entry(entry: &Value) -> Option<Value> {
    let content = EntryRef::new(entry)
        .content()
        .filter(|c| c.is_string() || c.is_array())?;
    let custom_type = match EntryRef::new(entry).custom_type() {
        Some(Value::String(t)) if !t.is_empty() => t.clone(),
        _ => DEFAULT_CUSTOM_MESSAGE_TYPE.to_owned(),
    };
    let display = EntryRef::new(entry)
        .display()
        .filter(|d| d.is_boolean())
        .cloned()
        .unwrap_or(Value::Bool(false));
    let attribution = EntryRef::new(entry).attribution().map(|a| {
        if js::is_str(Some(a), "user") {
            Value::from("user")
        } else {
            Value::from("agent")
        }
    });
    Some(js::object([
        ("role", Some(Value::from("custom"))),
        ("customType", Some(Value::from(custom_type))),
        ("content", Some(content.clone())),
        ("display", Some(display)),
        ("details", EntryRef::new(entry).details().cloned()),
        ("attribution", attribution),
        (
            "timestamp",
            Some(js::date_ms_value(EntryRef::new(entry).timestamp())),
        ),
    ]))
}

/// omp's `isUserTurnInitiator` for a custom message.
fn is_user_turn_initiator(message: &Value) -> bool {
    let custom_type = MessageRef::new(message).custom_type();
    js::is_str(MessageRef::new(message).attribution(), "user")
        && (custom_type == Some("skill-prompt") || custom_type == Some("collab-prompt"))
}

/// omp's `isUserRequestEntry`: a user message, or a user-attributed skill or
/// collab prompt.
pub fn is_user_request_entry(entry: &Value) -> bool {
    match kind(entry) {
        Some("message") => {
            let message = EntryRef::new(entry).message();
            match MessageRef::new(message).role() {
                Some("user") => true,
                Some("custom") => message.is_some_and(is_user_turn_initiator),
                _ => false,
            }
        }
        Some("custom_message") => {
            custom_message_from_entry(entry).is_some_and(|m| is_user_turn_initiator(&m))
        }
        _ => false,
    }
}

fn compaction_summary(
    entry: &Value,
    payload: Option<&Value>,
    blocks: Option<Vec<Value>>,
    timestamp_ms: Option<i64>,
) -> Value {
    let blocks = blocks.filter(|b| !b.is_empty());
    let images: Option<Vec<Value>> = blocks.as_ref().map(|blocks| {
        blocks
            .iter()
            .filter(|b| BlockRef::new(b).is("image"))
            .cloned()
            .collect()
    });
    js::object([
        ("role", Some(Value::from("compactionSummary"))),
        ("summary", EntryRef::new(entry).summary().cloned()),
        (
            "shortSummary",
            EntryRef::new(entry).short_summary().cloned(),
        ),
        (
            "tokensBefore",
            EntryRef::new(entry).tokens_before().cloned(),
        ),
        ("tokensAfter", EntryRef::new(entry).tokens_after().cloned()),
        ("method", EntryRef::new(entry).method().cloned()),
        ("providerPayload", payload.cloned()),
        ("blocks", blocks.map(Value::Array)),
        ("images", images.filter(|i| !i.is_empty()).map(Value::Array)),
        ("warning", EntryRef::new(entry).warning().cloned()),
        (
            "timestamp",
            Some(timestamp_ms.map_or(Value::Null, Value::from)),
        ),
    ])
}

/// Where the part of a path that [`build`] may send begins: after the
/// latest `reset_boundary` when it follows the latest compaction; else the
/// earliest of the compaction, its first kept entry and the entry after its
/// `providerReplayThroughEntryId`; the floor (after the last reset, else 0) for
/// an `experimental-context-rollover` compaction, which may replay an older
/// user request; 0 (or after the reset) without a compaction. Never later
/// than what `emit_all` appends, so bodies before it are not read.
pub(crate) fn first_sent(path: &[Value]) -> FirstSent {
    let reset = path.iter().rposition(|e| kind(e) == Some("reset_boundary"));
    let floor = FirstSent::after(reset);
    let Some(latest) = path.iter().rposition(|e| kind(e) == Some("compaction")) else {
        return floor;
    };
    let compaction = &path[latest];
    let id = EntryRef::new(compaction).id_value();
    let at = path
        .iter()
        .position(|e| {
            kind(e) == Some("compaction") && js::strict_eq(EntryRef::new(e).id_value(), id)
        })
        .unwrap_or(latest);
    if reset.is_some_and(|r| r > at) {
        return floor;
    }
    let details = CompactionDetailsRef::new(EntryRef::new(compaction).details());
    if js::is_str(details.kind(), "experimental-context-rollover") {
        return floor;
    }
    let position_of = |target: Option<&Value>| {
        path.iter()
            .position(|e| js::strict_eq(EntryRef::new(e).id_value(), target))
            .filter(|&i| i < at)
    };
    let mut start = FirstSent::At(at);
    if let Some(kept) = position_of(EntryRef::new(compaction).first_kept_entry_id()) {
        start = start.min(FirstSent::At(kept));
    }
    let through = EntryRef::new(compaction).provider_replay_through_entry_id();
    if js::truthy(through)
        && let Some(r) = position_of(through)
    {
        start = start.min(FirstSent::After(r));
    }
    start
}

fn non_empty_str(value: Option<&Value>) -> Option<&str> {
    js::as_str(value).filter(|s| !s.is_empty())
}

/// `getOpenAiRemoteCompactionPayload`: OpenAI's record in `preserveData`
/// ([`OpenAiRemoteCompactionRef`](pi_session_types::view::OpenAiRemoteCompactionRef)), as omp's provider payload.
fn openai_remote_payload(preserve: Option<&Value>) -> Option<Value> {
    let candidate = PreserveDataRef::new(preserve).openai_remote_compaction_ref();
    candidate.map()?;
    let provider = non_empty_str(candidate.provider())?;
    let history = candidate.replacement_history()?.as_array()?;
    if !history.iter().all(Value::is_object) {
        return None;
    }
    let mut payload = Map::new();
    payload.insert("type".into(), Value::from("openaiResponsesHistory"));
    payload.insert("provider".into(), Value::from(provider));
    payload.insert("items".into(), Value::Array(history.clone()));
    Some(Value::Object(payload))
}

/// `getAnthropicCompactionPayload`: Anthropic's record in `preserveData`
/// ([`AnthropicCompactionRef`](pi_session_types::view::AnthropicCompactionRef)), as omp's provider payload.
fn anthropic_payload(preserve: Option<&Value>) -> Option<Value> {
    let candidate = PreserveDataRef::new(preserve).anthropic_compaction_ref();
    candidate.map()?;
    let provider = non_empty_str(candidate.provider())?;
    let content = non_empty_str(candidate.content())?;
    let mut payload = Map::new();
    payload.insert("type".into(), Value::from("anthropicCompaction"));
    payload.insert("provider".into(), Value::from(provider));
    payload.insert("content".into(), Value::from(content));
    if let Some(encrypted) = non_empty_str(candidate.encrypted_content()) {
        payload.insert("encryptedContent".into(), Value::from(encrypted));
    }
    if let Some(files) = non_empty_str(candidate.files_text()) {
        payload.insert("filesText".into(), Value::from(files));
    }
    Some(Value::Object(payload))
}

/// pi-ai's `coerceServiceTierByFamily`.
pub fn coerce_service_tier(value: Option<&Value>) -> Option<Map<String, Value>> {
    const TIERS: [&str; 5] = ["auto", "default", "flex", "scale", "priority"];
    let mut out = Map::new();
    match value? {
        Value::Null => return None,
        Value::Object(source) => {
            for family in ["openai", "anthropic", "google"] {
                if let Some(tier) = js::as_str(source.get(family)).filter(|t| TIERS.contains(t)) {
                    out.insert(family.into(), Value::from(tier));
                }
            }
        }
        Value::Array(_) => {}
        Value::String(text) => match text.as_str() {
            "priority" => {
                for family in ["openai", "anthropic", "google"] {
                    out.insert(family.into(), Value::from("priority"));
                }
            }
            "openai-only" => {
                out.insert("openai".into(), Value::from("priority"));
            }
            "claude-only" => {
                out.insert("anthropic".into(), Value::from("priority"));
            }
            "auto" | "default" | "flex" | "scale" => {
                out.insert("openai".into(), Value::from(text.as_str()));
            }
            _ => {}
        },
        _ => {}
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// One message entry of a branch: `kind` picks the message, `id` a call id of a small pool
    /// (so results meet calls, of the same turn or of others), `variant` its stop reason.
    fn entry(at: usize, kind: u8, id: u8, variant: u8) -> Value {
        let call = |id: u8| format!("c{id}");
        let stop = ["toolUse", "aborted", "error", "stop"][usize::from(variant % 4)];
        let message = match kind {
            0 => json!({"role": "user", "content": format!("u{at}")}),
            1 => json!({"role": "assistant", "provider": "p", "model": format!("m{at}"),
                "stopReason": stop, "content": [{"type": "text", "text": format!("a{at}")}]}),
            2 | 3 => json!({"role": "assistant", "provider": "p", "model": "m", "stopReason": stop,
            "content": [
                {"type": "thinking", "thinking": "t", "thinkingSignature": "s"},
                {"type": "toolCall", "id": call(id), "name": "ls", "arguments": {}},
                {"type": "toolCall", "id": call(id + 1), "name": "ls", "arguments": {}},
            ]}),
            4 | 5 => json!({"role": "toolResult", "toolCallId": call(id), "content": []}),
            6 => json!({"role": "custom", "customType": INTERRUPTED_THINKING_MESSAGE_TYPE,
                "content": "i", "display": false}),
            7 => json!({"role": "assistant", "provider": "p", "model": "m", "stopReason": "error",
                "content": []}),
            8 => json!({"role": "assistant", "provider": "p", "model": "m", "stopReason": "stop",
                "retryRecovery": true, "content": [{"type": "text", "text": "r"}]}),
            _ => json!({"role": "custom", "customType": "note", "content": "n", "display": true}),
        };
        json!({"type": "message", "id": format!("e{at}"), "parentId": null,
            "timestamp": "2026-01-01T00:00:00.000Z", "message": message})
    }

    /// What a caller streaming `path` gets (its head `path[..head]` built by
    /// [`build_streamed`], the rest in parts cut where `cuts` says, the messages held back
    /// and sent as [`release`] says, the passes run over those held by [`finish_held`]).
    fn streamed(
        path: &[Value],
        head: usize,
        cuts: &[bool],
    ) -> (OmpContext, Vec<Diagnostic>, Vec<Value>) {
        let options = OmpOptions::default();
        let (mut context, built, mut diagnostics, mut tail) =
            build_streamed(&path[..head], &options);
        let mut sent = Vec::new();
        let mut held_path: Vec<Value> = Vec::new();
        let mut held: Vec<Built> = Vec::new();
        let mut take = |part: &[Value], built: Vec<Built>, tail: &mut OmpTail| {
            let offset = held_path.len();
            held_path.extend(part.iter().cloned());
            held.extend(built.into_iter().map(|message| match message {
                Built::Entry(at) => Built::Entry(at + offset),
                made => made,
            }));
            let messages = match release(tail) {
                Release::Hold => return,
                Release::Send => std::mem::take(&mut held),
                Release::Finish => finish_held(tail, &held_path, std::mem::take(&mut held)).0,
            };
            sent.extend(messages.into_iter().map(|m| m.into_value(&held_path)));
            held_path.clear();
        };
        take(&path[..head], built, &mut tail);
        let mut start = head;
        for end in head + 1..=path.len() {
            if end == path.len() || cuts[end % cuts.len()] {
                let part = &path[start..end];
                let added: Vec<Added<'_>> = part.iter().map(Added::Entry).collect();
                let built = extend_streamed(&mut tail, &mut context, &added, &mut diagnostics)
                    .expect("a part of messages extends a streamed build");
                take(part, built, &mut tail);
                start = end;
            }
        }
        let (messages, _) = finish_held(&mut tail, &held_path, std::mem::take(&mut held));
        sent.extend(messages.into_iter().map(|m| m.into_value(&held_path)));
        (context, diagnostics, sent)
    }

    proptest! {
        /// Streamed in parts cut anywhere, after a head of any length, omp's build gives the
        /// context the whole branch gives: the same messages (calls stripped, failed turns
        /// dropped or kept, results dropped with them), settings and diagnostics.
        #[test]
        fn a_branch_streamed_in_any_parts_is_built_as_whole(
            messages in prop::collection::vec((0u8..10, 0u8..3, 0u8..4), 0..40),
            head in 0usize..40,
            cuts in prop::collection::vec(any::<bool>(), 1..6),
        ) {
            let mut path = vec![json!({"type": "model_change", "id": "m", "parentId": null,
                "timestamp": "2026-01-01T00:00:00.000Z", "provider": "p", "modelId": "x"})];
            path.extend(messages.iter().enumerate().map(|(at, &(kind, id, variant))| {
                entry(at, kind, id, variant)
            }));
            let head = 1 + head.min(messages.len());
            let (whole, whole_diagnostics) = build(&path, &OmpOptions::default());
            let (mut context, diagnostics, sent) = streamed(&path, head, &cuts);
            context.messages = sent;
            prop_assert_eq!(context, whole);
            prop_assert_eq!(format!("{diagnostics:?}"), format!("{whole_diagnostics:?}"));
        }
    }

    /// A failed turn that ends a part waits for the message after it: an interrupted-thinking
    /// mark in the next part keeps it (a pass run at the end of its part would drop it).
    #[test]
    fn a_failed_turn_at_the_end_of_a_part_waits_for_the_next() {
        let path: Vec<Value> = [(0, 0, 0), (1, 0, 1), (6, 0, 0), (0, 0, 0)]
            .iter()
            .enumerate()
            .map(|(at, &(kind, id, variant))| entry(at, kind, id, variant))
            .collect();
        let (whole, _) = build(&path, &OmpOptions::default());
        assert_eq!(whole.messages.len(), 4, "the aborted turn is kept");
        for cut in 1..path.len() {
            let cuts: Vec<bool> = (0..path.len()).map(|at| at == cut).collect();
            let (mut context, _, sent) = streamed(&path, 1, &cuts);
            context.messages = sent;
            assert_eq!(context, whole, "cut at {cut}");
        }
    }
}
