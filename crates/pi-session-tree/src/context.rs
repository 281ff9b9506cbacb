//! `agent_context`: each dialect's `buildSessionContext`, behind one entry
//! point, plus dialect detection.

use pi_session_types::view::{BlockRef, EntryRef, MessageRef, key};
use serde::Serialize;
use serde_json::Value;

use crate::blobs::{BlobSource, resolve_entry_blobs};
use crate::diagnostic::Diagnostic;
use crate::js;
use crate::omp_context::{self, OmpContext, OmpOptions};
use crate::pi_context::{self, PiContext, PiRelease};
use crate::snapcompact;

/// Which implementation's rules to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// Upstream pi (`@mariozechner/pi-coding-agent` 0.73).
    #[default]
    Pi,
    /// pi's successor `@earendil-works/pi-coding-agent` 1.6: `context_edit`
    /// entries, compaction `systemMessage`s, `system` role messages (pi.md §10).
    Pi16,
    /// oh-my-pi (`@oh-my-pi/pi-coding-agent` 18.2.3). Reads pi-written files
    /// the way omp does (e.g. ignores pi's `{provider, modelId}` model changes).
    Omp,
}

impl Dialect {
    /// Parses `pi`, `pi16` or `omp`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "pi" => Some(Self::Pi),
            "pi16" => Some(Self::Pi16),
            "omp" => Some(Self::Omp),
            _ => None,
        }
    }

    /// `"pi"`, `"pi16"` or `"omp"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pi => "pi",
            Self::Pi16 => "pi16",
            Self::Omp => "omp",
        }
    }

    /// Whether this is one of the pi releases (0.73 or 1.6), which share the
    /// file layout, session naming and `{messages, thinkingLevel, model}`.
    pub fn is_pi_family(self) -> bool {
        matches!(self, Self::Pi | Self::Pi16)
    }
}

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
/// [`Dialect::Pi16`]; omp evidence outranks it.
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
            if entry.get("model").is_some_and(Value::is_string) {
                self.omp = true;
            } else if entry.get("provider").is_some() || entry.get("modelId").is_some() {
                self.pi = true;
            }
        }
        // omp's appendCustomMessageEntry always writes `attribution` ("user" or "agent");
        // pi 0.73 and 1.6 never do. This tells headerless omp excerpts apart.
        if kind == "custom_message" && entry.get("attribution").is_some() {
            self.omp = true;
        }
        // pi 1.6's system messages; `sections` exists in no earlier pi nor in omp.
        if kind == "message" {
            let message = EntryRef::new(entry).message();
            if MessageRef::new(message).is_role("system") && js::get(message, "sections").is_some()
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
            Dialect::Omp
        } else if self.pi16 {
            Dialect::Pi16
        } else {
            Dialect::Pi
        }
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
    message.shift_remove("providerPayload");
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
/// let (context, diagnostics) = agent_context(&path, Dialect::Pi, &ContextOptions::default());
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
    match dialect {
        Dialect::Pi => {
            let (context, diagnostics) = pi_context::build(path);
            (AgentContext::Pi(context), diagnostics)
        }
        Dialect::Pi16 => {
            let (context, diagnostics) = pi_context::build_release(path, PiRelease::V1_6);
            (AgentContext::Pi(context), diagnostics)
        }
        Dialect::Omp => agent_context_owned(path.to_vec(), dialect, options),
    }
}

/// [`agent_context`] for a path the caller no longer needs: omp's load-time
/// rewrites are applied in place instead of on a copy (large branches are
/// not held twice).
pub fn agent_context_owned(
    mut path: Vec<Value>,
    dialect: Dialect,
    options: &ContextOptions<'_>,
) -> (AgentContext, Vec<Diagnostic>) {
    match dialect {
        Dialect::Pi | Dialect::Pi16 => {
            let release = if dialect == Dialect::Pi16 {
                PiRelease::V1_6
            } else {
                PiRelease::V0_73
            };
            let (mut context, messages, diagnostics) = pi_context::build_indexed(&path, release);
            context.messages = crate::built::materialise_from(&mut path, messages);
            (AgentContext::Pi(context), diagnostics)
        }
        Dialect::Omp => {
            let mut diagnostics = Vec::new();
            for entry in &mut path {
                diagnostics.extend(prepare_omp_entry(entry, options.blobs));
            }
            let (mut context, messages, more) = omp_context::build_indexed(
                &path,
                &OmpOptions {
                    blobs: options.blobs,
                },
            );
            context.messages = crate::built::materialise_from(&mut path, messages);
            diagnostics.extend(more);
            (AgentContext::Omp(context), diagnostics)
        }
    }
}
