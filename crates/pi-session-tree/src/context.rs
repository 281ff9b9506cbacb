//! `agent_context`: each dialect's `buildSessionContext`, behind one entry
//! point, plus dialect detection.

use pi_session_types::view::{EntryRef, MessageRef};
use serde::Serialize;
use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::dialect::BuildContext;
use crate::dialect::omp::blobs::BlobSource;
use crate::dialect::omp::context::OmpContext;
use crate::dialect::pi::context::PiContext;

pub use crate::dialect::Dialect;
pub use crate::dialect::omp::prepare_omp_entry;

/// Entry types only omp writes.
const OMP_ONLY_TYPES: [&str; 9] = [
    "model_usage",
    "service_tier_change",
    "reset_boundary",
    "title_change",
    "ttsr_injection",
    "credential_pin",
    "session_init",
    "mode_change",
    "archive",
];

/// Entry types only pi 1.6 writes (pi.md §10).
const PI16_ONLY_TYPES: [&str; 2] = ["usage", "context_edit"];

/// Collects evidence for [`Dialect`] detection while a session is read.
///
/// Rules, strongest first: an omp title slot, or an omp-only header key
/// (`title`, `titleSource`, `providerPromptCacheKey`,
/// `additionalDirectories`, `previousSessionFiles`), or an omp-only entry type
/// (`reset_boundary`, `title_change`, `mode_change`, …), or a `model_change`
/// with a `model` string, means omp. Otherwise a `model_change` with
/// `provider`/`modelId`, a `session_info` entry, or nothing at all means pi:
/// pi is the documented default, because pi's layout (header first, no slot)
/// is the one every tool understands. Among pi files, a 1.6-only entry type
/// (`usage`, `context_edit`) or a `system` message with `sections` means
/// [`Dialect::PI16`]; omp evidence outranks it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DialectEvidence {
    omp: bool,
    pi: bool,
    pi16: bool,
}

impl DialectEvidence {
    /// Starts with no evidence.
    pub fn new() -> Self {
        Self::default()
    }

    /// The file starts with an omp title slot.
    pub fn title_slot(&mut self) -> &mut Self {
        self.omp = true;
        self
    }

    /// Looks at the header object.
    pub fn header(&mut self, header: &Value) -> &mut Self {
        const OMP_HEADER_KEYS: [&str; 5] = [
            "title",
            "titleSource",
            "providerPromptCacheKey",
            "additionalDirectories",
            "previousSessionFiles",
        ];
        if OMP_HEADER_KEYS.iter().any(|k| header.get(*k).is_some()) {
            self.omp = true;
        }
        self
    }

    /// Looks at an entry's type alone (cheap: envelopes suffice).
    pub fn kind(&mut self, kind: &str) -> &mut Self {
        if OMP_ONLY_TYPES.contains(&kind) {
            self.omp = true;
        } else if PI16_ONLY_TYPES.contains(&kind) {
            self.pi16 = true;
        } else if kind == "session_info" {
            self.pi = true;
        }
        self
    }

    /// Looks at a whole entry (needed for `model_change` shapes).
    pub fn entry(&mut self, entry: &Value) -> &mut Self {
        let kind = EntryRef::new(entry).kind().unwrap_or_default();
        self.kind(kind);
        if kind == "model_change" {
            let change = EntryRef::new(entry);
            if change.model().is_some_and(Value::is_string) {
                self.omp = true;
            } else if change.provider().is_some() || change.model_id().is_some() {
                self.pi = true;
            }
        }
        // omp's appendCustomMessageEntry always writes `attribution` ("user" or "agent");
        // pi 0.73 and 1.6 never do. This tells headerless omp excerpts apart.
        if kind == "custom_message" && EntryRef::new(entry).attribution().is_some() {
            self.omp = true;
        }
        // pi 1.6's system messages; `sections` exists in no earlier pi nor in omp.
        if kind == "message" {
            let message = EntryRef::new(entry).message();
            if MessageRef::new(message).is_role("system")
                && MessageRef::new(message).sections().is_some()
            {
                self.pi16 = true;
            }
        }
        self
    }

    /// The verdict: omp when any omp evidence was seen, else pi 1.6 when any
    /// 1.6-only evidence was seen, else pi.
    pub fn dialect(&self) -> Dialect {
        if self.omp {
            Dialect::OMP
        } else if self.pi16 {
            Dialect::PI16
        } else {
            Dialect::PI
        }
    }

    /// Whether the verdict is pi 0.73 only for want of 1.6 evidence (no omp or 1.6 mark yet):
    /// a 1.6 file's early `system` message would still tell.
    pub fn may_be_pi16(&self) -> bool {
        !self.omp && !self.pi16
    }

    /// Whether more evidence cannot change the verdict: omp evidence outranks every other, so
    /// a reader that has seen it needs no entry body.
    pub fn is_final(&self) -> bool {
        self.omp
    }

    /// Whether anything decisive was seen (false means "pi by default").
    pub fn is_decided(&self) -> bool {
        self.omp || self.pi || self.pi16
    }
}

/// Detects the dialect of a whole session given as JSON values.
pub fn detect_dialect<'a>(
    has_title_slot: bool,
    header: Option<&Value>,
    entries: impl IntoIterator<Item = &'a Value>,
) -> Dialect {
    let mut evidence = DialectEvidence::new();
    if has_title_slot {
        evidence.title_slot();
    }
    if let Some(header) = header {
        evidence.header(header);
    }
    for entry in entries {
        evidence.entry(entry);
    }
    evidence.dialect()
}

/// Where the part of a path that a dialect's `buildSessionContext` may send begins (see
/// [`crate::source::context_path`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FirstSent {
    /// At the first entry of the path.
    Start,
    /// At this entry.
    At(usize),
    /// Just after this entry (a `reset_boundary`, omp's replay-through entry).
    After(usize),
}

impl FirstSent {
    /// Orders the two kinds on one scale: `After(i)` comes before `At(i + 1)`, whatever
    /// entries lie between them on a longer path.
    fn key(self) -> usize {
        match self {
            Self::Start => 0,
            Self::At(i) => 2 * i + 1,
            Self::After(i) => 2 * i + 2,
        }
    }

    /// The earlier of two.
    pub(crate) fn min(self, other: Self) -> Self {
        if other.key() < self.key() {
            other
        } else {
            self
        }
    }

    /// After `reset` when there is one, else [`Self::Start`].
    pub(crate) fn after(reset: Option<usize>) -> Self {
        reset.map_or(Self::Start, Self::After)
    }
}

/// What a dialect's `buildSessionContext` returns; serialises to exactly that
/// JSON document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AgentContext {
    /// pi 0.73 and 1.6: `{messages, thinkingLevel, model}`.
    Pi(PiContext),
    /// omp: `{messages, thinkingLevel, configuredThinkingLevel?, serviceTier?,
    /// models, injectedTtsrRules, mode, modeData?}`.
    Omp(OmpContext),
}

impl AgentContext {
    /// The messages.
    pub fn messages(&self) -> &[Value] {
        match self {
            Self::Pi(context) => &context.messages,
            Self::Omp(context) => &context.messages,
        }
    }

    /// Sets the messages (a build gives them apart, as [`crate::built::Built`]).
    pub(crate) fn set_messages(&mut self, messages: Vec<Value>) {
        match self {
            Self::Pi(context) => context.messages = messages,
            Self::Omp(context) => context.messages = messages,
        }
    }

    /// Moves the messages out, leaving none: a caller that takes them apart (e.g. the export
    /// page, which refers to entries) then has the rest of the context ([`Self::to_value`])
    /// without a copy of every message.
    pub fn take_messages(&mut self) -> Vec<Value> {
        match self {
            Self::Pi(context) => std::mem::take(&mut context.messages),
            Self::Omp(context) => std::mem::take(&mut context.messages),
        }
    }

    /// The context as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Pi(context) => serde_json::to_value(context),
            Self::Omp(context) => serde_json::to_value(context),
        }
        .unwrap_or(Value::Null)
    }
}

/// Options for [`agent_context`].
#[derive(Clone, Copy, Default)]
pub struct ContextOptions<'a> {
    /// omp only: where `blob:sha256:` references are read from (omp's
    /// `<agent dir>/blobs`). Without it, references stay in place (reported).
    pub blobs: Option<&'a dyn BlobSource>,
}

impl std::fmt::Debug for ContextOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextOptions")
            .field("blobs", &self.blobs.map(|_| "BlobSource"))
            .finish()
    }
}

/// Builds the agent context of a path (the entries from the root to the leaf,
/// root first; empty for a `null` leaf) with the rules of `dialect`.
///
/// The path is what [`crate::TreeIndex::branch_for`] selects. For omp, each
/// entry first goes through omp's load-time rewrites ([`prepare_omp_entry`]).
///
/// ```
/// use pi_session_tree::{agent_context, ContextOptions, Dialect};
/// use serde_json::json;
///
/// let path = vec![
///     json!({"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",
///            "message":{"role":"user","content":"hi","timestamp":1}}),
///     json!({"type":"thinking_level_change","id":"b","parentId":"a",
///            "timestamp":"2025-01-01T00:00:01.000Z","thinkingLevel":"high"}),
/// ];
/// let (context, diagnostics) = agent_context(&path, Dialect::PI, &ContextOptions::default());
/// assert!(diagnostics.is_empty());
/// assert_eq!(
///     context.to_value(),
///     json!({"messages":[{"role":"user","content":"hi","timestamp":1}],
///            "thinkingLevel":"high","model":null})
/// );
/// ```
pub fn agent_context(
    path: &[Value],
    dialect: Dialect,
    options: &ContextOptions<'_>,
) -> (AgentContext, Vec<Diagnostic>) {
    let rules = dialect.build_context();
    if rules.prepares() {
        return agent_context_owned(path.to_vec(), dialect, options);
    }
    built_out(path, rules, options)
}

/// [`agent_context`] for a path the caller no longer needs: omp's load-time
/// rewrites are applied in place instead of on a copy (large branches are
/// not held twice).
pub fn agent_context_owned(
    mut path: Vec<Value>,
    dialect: Dialect,
    options: &ContextOptions<'_>,
) -> (AgentContext, Vec<Diagnostic>) {
    let (mut context, messages, diagnostics) =
        crate::built::agent_context_prepared_indexed(&mut path, dialect, options);
    // The path is the caller's to give up: each message sent moves out of its entry.
    context.set_messages(crate::built::materialise_from(&mut path, messages));
    (context, diagnostics)
}

/// Whether the dialect's load-time rewrites ([`prepare_entries`]) may change the `message` of
/// the `message` entry whose line, as written, is `line` (`blobs`: a blob folder is given).
/// `false` means the message built from it is the one the line holds: pi has no rewrites, omp
/// rewrites only lines that name a blob or github-copilot.
pub fn may_rewrite_message_line(dialect: Dialect, line: &[u8], blobs: bool) -> bool {
    dialect
        .build_context()
        .may_rewrite_message_line(line, blobs)
}

/// The keys of a `message` entry and of its message that `dialect`'s `buildSessionContext`
/// reads, when it reads no other and sends such a message only unchanged
/// ([`crate::built::Built::Entry`]) or not at all, for the lines [`message_keys_of_line`]
/// gives them to (pi 0.73: the entry's `type`, `id` and `message`, the message's `role`,
/// `provider` and `model`, every line; omp 18.2: a few more, lines without a tool call or
/// an error turn); `None` when it may read or copy the whole entry (pi 1.6).
pub fn message_keys(dialect: Dialect) -> Option<&'static pi_session_types::shallow::Keys> {
    dialect.build_context().message_keys()
}

/// [`message_keys_of_line`] and [`may_rewrite_message_line`] of one `message` line, answered
/// in one look at it ([`message_line`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageLine {
    /// [`message_keys_of_line`]'s answer.
    pub keys: Option<&'static pi_session_types::shallow::Keys>,
    /// [`may_rewrite_message_line`]'s answer.
    pub may_rewrite: bool,
}

/// [`message_keys_of_line`] and [`may_rewrite_message_line`] of `line`, for a caller that asks
/// both of each line it copies: what both read of the line (omp: its message's role) is read
/// once.
///
/// ```
/// use pi_session_tree::Dialect;
/// use pi_session_tree::context::{may_rewrite_message_line, message_keys_of_line, message_line};
/// let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{}}],"provider":"github-copilot"}}"#;
/// for dialect in Dialect::ALL {
///     let read = message_line(dialect, line, false);
///     assert_eq!(read.keys, message_keys_of_line(dialect, line));
///     assert_eq!(read.may_rewrite, may_rewrite_message_line(dialect, line, false));
/// }
/// assert!(message_line(Dialect::OMP, line, false).may_rewrite);
/// ```
pub fn message_line(dialect: Dialect, line: &[u8], blobs: bool) -> MessageLine {
    message_line_of_role(
        dialect,
        line,
        pi_session_types::shallow::laid_out_role(line),
        blobs,
    )
}

/// [`message_line`] of a line whose message's role the caller read first: `role` is
/// [`pi_session_types::shallow::laid_out_role`] of `line` (a caller that found the line's
/// layout, [`pi_session_types::shallow::LaidOut`], to read its message's keys next, takes it
/// from there instead of reading the line's head again).
///
/// ```
/// use pi_session_tree::Dialect;
/// use pi_session_tree::context::{message_line, message_line_of_role};
/// use pi_session_types::shallow::laid_out_role;
/// let line = br#"{"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"c"}]}}"#;
/// for dialect in Dialect::ALL {
///     let role = laid_out_role(line);
///     assert_eq!(message_line_of_role(dialect, line, role, false), message_line(dialect, line, false));
/// }
/// ```
pub fn message_line_of_role(
    dialect: Dialect,
    line: &[u8],
    role: Option<&[u8]>,
    blobs: bool,
) -> MessageLine {
    dialect.build_context().message_line(line, role, blobs)
}

/// [`message_keys`] for the `message` entry whose line is `line`, when its message is spelled
/// as `JSON.stringify` spells it; `None` when the build may read more of this one (omp: its
/// content, for a tool call or an error turn) or of any. A caller that copies the messages it
/// sends from such lines may read only these keys of them
/// ([`pi_session_types::shallow::entry_with_message_keys`]).
pub fn message_keys_of_line(
    dialect: Dialect,
    line: &[u8],
) -> Option<&'static pi_session_types::shallow::Keys> {
    dialect.build_context().message_keys_of_line(line)
}

/// [`agent_context`] of a path whose entries already went through the dialect's load-time
/// rewrites ([`prepare_omp_entry`] for omp; pi has none).
pub fn agent_context_prepared(
    path: &[Value],
    dialect: Dialect,
    options: &ContextOptions<'_>,
) -> (AgentContext, Vec<Diagnostic>) {
    built_out(path, dialect.build_context(), options)
}

/// The dialect's load-time rewrites of `entries`, in place ([`prepare_omp_entry`] for omp; pi
/// has none), with what they report.
pub fn prepare_entries(
    entries: &mut [Value],
    dialect: Dialect,
    blobs: Option<&dyn BlobSource>,
) -> Vec<Diagnostic> {
    dialect.build_context().prepare(entries, blobs)
}

/// The dialect's build with every message copied out of the path.
fn built_out(
    path: &[Value],
    rules: &dyn BuildContext,
    options: &ContextOptions<'_>,
) -> (AgentContext, Vec<Diagnostic>) {
    let (mut context, messages, diagnostics, _) = rules.build(path, options.blobs);
    context.set_messages(crate::built::materialise(path, messages));
    (context, diagnostics)
}
