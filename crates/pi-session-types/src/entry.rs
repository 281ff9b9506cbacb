//! Session entries: every line after the header, typed by `type`.
//!
//! Each known type is a struct holding the envelope (`type`, `id`, `parentId`, `timestamp`),
//! the typed fields of **both** dialects, and `extra` for any other key. Fields are declared in
//! the order omp (else pi) writes them, so a newly built entry serialises in omp's key order;
//! `custom` and `custom_message` put the envelope last, as both dialects do.
//!
//! Rule for field types: only `message.message` and message `content` are required; every other
//! field is an `Option` (absent-or-set) or a [`Field`] (absent, `null` or set, where the formats
//! write `null`). A line whose known fields have unexpected JSON types becomes
//! [`Entry::Unknown`] with a `reason`, keeping all its JSON.

use crate::field::Field;
use crate::message::{AgentMessage, Content};
use crate::tags;
use crate::timestamp::IsoTimestamp;
use crate::usage::Usage;
use crate::{JsonMap, JsonNumber, JsonValue};
use pi_session_types_macros::record;
use serde::{Deserialize, Serialize, Serializer};

/// Read and write access to the envelope every entry carries.
pub trait EntryEnvelope {
    /// The `type` string.
    fn kind(&self) -> &str;
    /// The entry `id`; absent only in v1 files (before ids existed).
    fn id(&self) -> Option<&str>;
    /// The `parentId`; `None` for `null` (a root) and for absent (v1 files).
    fn parent_id(&self) -> Option<&str>;
    /// The ISO `timestamp` string as written.
    fn timestamp(&self) -> Option<&str>;
    /// Sets `id`, `parentId` (`None` writes `null`) and `timestamp`, as an append does.
    fn set_envelope(&mut self, id: String, parent_id: Option<String>, timestamp: IsoTimestamp);
}

macro_rules! entry_struct {
    (
        $(#[$doc:meta])*
        $name:ident, $tag:ty, envelope_first { $($body:tt)* }
    ) => {
        $(#[$doc])*
        #[record]
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        pub struct $name {
            /// The entry's `type` literal.
            #[serde(rename = "type")]
            pub kind: $tag,
            /// Entry id (8 hex chars in current files; any string accepted; absent in v1).
            pub id: Option<String>,
            /// Parent entry id; `null` for a root; absent in v1 files.
            pub parent_id: Field<String>,
            /// ISO-8601 time of the append, kept as written.
            pub timestamp: Option<IsoTimestamp>,
            $($body)*
            /// Unknown keys, kept in order and written back.
            #[serde(flatten)]
            pub extra: JsonMap,
        }
        entry_struct!(@impl $name, $tag);
    };
    (
        $(#[$doc:meta])*
        $name:ident, $tag:ty, envelope_last { $($body:tt)* }
    ) => {
        $(#[$doc])*
        #[record]
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        #[serde(rename_all = "camelCase")]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        pub struct $name {
            /// The entry's `type` literal.
            #[serde(rename = "type")]
            pub kind: $tag,
            $($body)*
            /// Entry id (8 hex chars in current files; any string accepted; absent in v1).
            pub id: Option<String>,
            /// Parent entry id; `null` for a root; absent in v1 files.
            pub parent_id: Field<String>,
            /// ISO-8601 time of the append, kept as written.
            pub timestamp: Option<IsoTimestamp>,
            /// Unknown keys, kept in order and written back.
            #[serde(flatten)]
            pub extra: JsonMap,
        }
        entry_struct!(@impl $name, $tag);
    };
    (@impl $name:ident, $tag:ty) => {
        impl EntryEnvelope for $name {
            fn kind(&self) -> &str {
                <$tag>::VALUE
            }
            fn id(&self) -> Option<&str> {
                self.id.as_deref()
            }
            fn parent_id(&self) -> Option<&str> {
                self.parent_id.as_deref()
            }
            fn timestamp(&self) -> Option<&str> {
                self.timestamp.as_ref().map(IsoTimestamp::as_str)
            }
            fn set_envelope(&mut self, id: String, parent_id: Option<String>, timestamp: IsoTimestamp) {
                self.id = Some(id);
                self.parent_id = Field::from(parent_id);
                self.timestamp = Some(timestamp);
            }
        }
    };
}

entry_struct! {
    /// `message`: one [`AgentMessage`] of the conversation.
    MessageEntry, tags::Message, envelope_first {
        /// The message, typed by `role`.
        pub message: AgentMessage,
    }
}

entry_struct! {
    /// `model_change`: the model in effect changes. pi writes `provider` + `modelId`; omp writes
    /// `model` as `"provider/modelId"` plus `role` and `resolvedModelIsFallback`.
    ModelChangeEntry, tags::ModelChange, envelope_first {
        /// omp: `"<provider>/<modelId>"` (split at the first `/`).
        pub model: Option<String>,
        /// omp: model role (`"default"` when absent; `"temporary"`, `"fallback"`, ...).
        pub role: Option<String>,
        /// omp: informational; always written by omp (default `false`).
        pub resolved_model_is_fallback: Option<bool>,
        /// pi: provider id.
        pub provider: Option<String>,
        /// pi: model id.
        pub model_id: Option<String>,
    }
}

impl ModelChangeEntry {
    /// `(provider, modelId)` from pi's fields, or from omp's `model` split at the first `/`.
    ///
    /// ```
    /// use pi_session_types::ModelChangeEntry;
    /// let e = ModelChangeEntry { model: Some("openrouter/meta/llama".into()), ..Default::default() };
    /// assert_eq!(e.provider_and_model_id(), Some(("openrouter", "meta/llama")));
    /// ```
    pub fn provider_and_model_id(&self) -> Option<(&str, &str)> {
        if let (Some(provider), Some(model_id)) = (&self.provider, &self.model_id) {
            return Some((provider, model_id));
        }
        self.model.as_deref()?.split_once('/')
    }

    /// omp's model role, `"default"` when absent.
    pub fn role_or_default(&self) -> &str {
        self.role.as_deref().unwrap_or("default")
    }
}

entry_struct! {
    /// `thinking_level_change`: the thinking level changes. omp writes both keys, `null` when unset.
    ThinkingLevelChangeEntry, tags::ThinkingLevelChange, envelope_first {
        /// `"off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max"` or any string.
        pub thinking_level: Field<String>,
        /// omp: `"auto"` when auto-thinking chose the level, else the concrete level.
        pub configured: Field<String>,
    }
}

entry_struct! {
    /// `compaction`: a summary that replaces older history on the path (both dialects and v1).
    CompactionEntry, tags::Compaction, envelope_first {
        /// Summary text.
        pub summary: Option<String>,
        /// omp: short summary for display.
        pub short_summary: Option<String>,
        /// Id of the first entry kept verbatim (`""` in omp when nothing is kept; pi 1.6 writes
        /// the compaction's own id for "keep nothing before").
        pub first_kept_entry_id: Option<String>,
        /// v1 files: index into the raw entry array (header included), replaced by
        /// `firstKeptEntryId` when migrating.
        pub first_kept_entry_index: Option<JsonNumber>,
        /// Context tokens before compaction.
        pub tokens_before: Option<JsonNumber>,
        /// omp (and rho): tokens after.
        pub tokens_after: Option<JsonNumber>,
        /// omp: `"remote" | "snapcompact" | "handoff" | "soft" | "shake"` or any string.
        pub method: Option<String>,
        /// omp: provider replay boundary.
        pub provider_replay_through_entry_id: Option<String>,
        /// Opaque details (`{readFiles, modifiedFiles}` or others).
        pub details: Option<JsonValue>,
        /// omp: produced by an extension.
        pub from_extension: Option<bool>,
        /// omp: provider-specific preserved data (opaque object).
        pub preserve_data: Option<JsonValue>,
        /// omp: display-only warning (added later in place).
        pub warning: Option<String>,
        /// pi 1.6: usage of the summarising call.
        pub usage: Option<Usage>,
        /// pi: produced by an extension (legacy name).
        pub from_hook: Option<bool>,
        /// pi 1.6: the system message replayed after the compaction.
        pub system_message: Option<AgentMessage>,
    }
}

entry_struct! {
    /// `branch_summary`: a summary of a branch that was left.
    BranchSummaryEntry, tags::BranchSummary, envelope_first {
        /// Entry the branch was left from, or `"root"` (semantics differ by version; see specs).
        pub from_id: Field<String>,
        /// Summary text; empty for omp's leaf-moving markers.
        pub summary: Option<String>,
        /// Opaque details.
        pub details: Option<JsonValue>,
        /// omp: produced by an extension.
        pub from_extension: Option<bool>,
        /// pi 1.6: usage of the summarising call.
        pub usage: Option<Usage>,
        /// pi: produced by an extension (legacy name).
        pub from_hook: Option<bool>,
    }
}

entry_struct! {
    /// `custom`: opaque extension state, never in the model context. Envelope written last.
    CustomEntry, tags::Custom, envelope_last {
        /// Extension-defined type, e.g. `"tool_execution_start"`.
        pub custom_type: Option<String>,
        /// Opaque data.
        pub data: Option<JsonValue>,
    }
}

entry_struct! {
    /// `custom_message`: an extension message that enters the context as `role:"custom"`.
    /// Envelope written last.
    CustomMessageEntry, tags::CustomMessage, envelope_last {
        /// Extension-defined type.
        pub custom_type: Option<String>,
        /// A string or text/image blocks.
        pub content: Content,
        /// Shown in the UI.
        pub display: Option<bool>,
        /// Opaque details (not sent to the model).
        pub details: Option<JsonValue>,
        /// omp: `"user" | "agent"`.
        pub attribution: Option<String>,
    }
}

entry_struct! {
    /// `label`: sets (or, when `label` is absent or empty, clears) the label of `targetId`.
    LabelEntry, tags::Label, envelope_first {
        /// The labelled entry.
        pub target_id: Option<String>,
        /// The label; absent clears.
        pub label: Option<String>,
    }
}

entry_struct! {
    /// `session_info` (pi): sets the session name; empty clears it.
    SessionInfoEntry, tags::SessionInfo, envelope_first {
        /// The session name.
        pub name: Option<String>,
    }
}

entry_struct! {
    /// `usage` (pi 1.6): usage of an off-transcript model call (e.g. cache warming).
    UsageEntry, tags::Usage, envelope_first {
        /// What the call was for, e.g. `"cache_warm"`.
        #[serde(rename = "kind")]
        pub usage_kind: Option<String>,
        /// Provider id.
        pub provider: Option<String>,
        /// Model id.
        pub model: Option<String>,
        /// Token usage and cost.
        pub usage: Option<Usage>,
        /// Free note.
        pub note: Option<String>,
    }
}

/// `context_edit.replacement` when not `null`: the new content of the target.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ContextReplacement {
    /// Replacement content (string or blocks).
    pub content: Content,
    /// Unknown keys, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

entry_struct! {
    /// `context_edit` (pi 1.6): replaces (or with `null`, omits) a message's content in context.
    ContextEditEntry, tags::ContextEdit, envelope_first {
        /// The edited entry.
        pub target_id: Option<String>,
        /// `null` omits the target; otherwise `{content}`.
        pub replacement: Field<ContextReplacement>,
    }
}

entry_struct! {
    /// `model_usage` (omp): usage of an off-transcript model call (title generation, ...).
    ModelUsageEntry, tags::ModelUsage, envelope_first {
        /// Caller-defined purpose.
        pub purpose: Option<String>,
        /// Model role.
        pub role: Option<String>,
        /// Wire API.
        pub api: Option<String>,
        /// Provider id.
        pub provider: Option<String>,
        /// Model id.
        pub model: Option<String>,
        /// Token usage and cost.
        pub usage: Option<Usage>,
        /// Stop reason.
        pub stop_reason: Option<crate::message::StopReason>,
        /// Error text.
        pub error_message: Option<String>,
    }
}

entry_struct! {
    /// `service_tier_change` (omp): `{openai?, anthropic?, google?}`, a legacy string, or `null`.
    ServiceTierChangeEntry, tags::ServiceTierChange, envelope_first {
        /// The tier per family (opaque), legacy string, or `null`.
        pub service_tier: Field<JsonValue>,
    }
}

entry_struct! {
    /// `reset_boundary` (omp): context emission restarts after the latest one.
    ResetBoundaryEntry, tags::ResetBoundary, envelope_first {}
}

entry_struct! {
    /// `archive` (omp): hides (or shows again) a subtree in the tree UI; last record wins.
    ArchiveEntry, tags::Archive, envelope_first {
        /// Root of the archived subtree.
        pub target_id: Option<String>,
        /// True to archive, false to unarchive.
        pub archived: Option<bool>,
    }
}

entry_struct! {
    /// `title_change` (omp): the session was renamed; the title slot holds the current title.
    TitleChangeEntry, tags::TitleChange, envelope_first {
        /// The new title.
        pub title: Option<String>,
        /// `"auto" | "user"`.
        pub source: Option<String>,
        /// The previous title.
        pub previous_title: Option<String>,
        /// What triggered the rename.
        pub trigger: Option<String>,
    }
}

entry_struct! {
    /// `ttsr_injection` (omp): rules injected into the context (a union over the path).
    TtsrInjectionEntry, tags::TtsrInjection, envelope_first {
        /// Rule names.
        pub injected_rules: Option<Vec<String>>,
    }
}

entry_struct! {
    /// `credential_pin` (omp): the credential pinned for a provider (hash only).
    CredentialPinEntry, tags::CredentialPin, envelope_first {
        /// Provider id.
        pub provider: Option<String>,
        /// Credential hash.
        pub hash: Option<String>,
    }
}

/// `session_init.systemPrompt`: a string (omp 18.3.4) or a list of blocks (newer omp).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(untagged)]
pub enum SystemPrompt {
    /// The prompt blocks joined with `"\n\n"`.
    Text(String),
    /// The prompt blocks.
    Blocks(Vec<String>),
}

impl SystemPrompt {
    /// The prompt as one string (blocks joined with `"\n\n"`).
    pub fn joined(&self) -> String {
        match self {
            SystemPrompt::Text(text) => text.clone(),
            SystemPrompt::Blocks(blocks) => blocks.join("\n\n"),
        }
    }
}

entry_struct! {
    /// `session_init` (omp subagent sessions): how the subagent was set up.
    SessionInitEntry, tags::SessionInit, envelope_first {
        /// System prompt (string or string array).
        pub system_prompt: Option<SystemPrompt>,
        /// The task.
        pub task: Option<String>,
        /// Tool names.
        pub tools: Option<Vec<String>>,
        /// Agent name.
        pub agent: Option<String>,
        /// Model role.
        pub model_role: Option<String>,
        /// Resolved model.
        pub resolved_model: Option<String>,
        /// Read-only subagent.
        pub read_only: Option<bool>,
        /// Spawn policy.
        pub spawns: Option<String>,
        /// Summarise reads.
        pub read_summarize: Option<bool>,
        /// Advisor.
        pub advisor: Option<String>,
        /// `{thresholdPercent, thresholdTokens}` (opaque).
        pub compaction_threshold: Option<JsonValue>,
        /// Output schema (opaque).
        pub output_schema: Option<JsonValue>,
        /// Output schema mode.
        pub output_schema_mode: Option<String>,
        /// Restrict tool names.
        pub restrict_tool_names: Option<bool>,
        /// Isolated subagent.
        pub isolated: Option<bool>,
    }
}

entry_struct! {
    /// `mode_change` (omp): the session mode changes (`"none"` exits).
    ModeChangeEntry, tags::ModeChange, envelope_first {
        /// The mode.
        pub mode: Option<String>,
        /// Opaque mode data.
        pub data: Option<JsonValue>,
    }
}

/// An entry whose `type` is unknown, or a known type that could not be typed; kept as its JSON.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnknownEntry {
    /// The entry object exactly as parsed.
    pub value: JsonMap,
    /// Why a line of a known `type` could not be typed; `None` for unknown types.
    pub reason: Option<String>,
}

impl EntryEnvelope for UnknownEntry {
    fn kind(&self) -> &str {
        self.value
            .get("type")
            .and_then(JsonValue::as_str)
            .unwrap_or("")
    }
    fn id(&self) -> Option<&str> {
        self.value.get("id").and_then(JsonValue::as_str)
    }
    fn parent_id(&self) -> Option<&str> {
        self.value.get("parentId").and_then(JsonValue::as_str)
    }
    fn timestamp(&self) -> Option<&str> {
        self.value.get("timestamp").and_then(JsonValue::as_str)
    }
    fn set_envelope(&mut self, id: String, parent_id: Option<String>, timestamp: IsoTimestamp) {
        self.value.insert("id".into(), JsonValue::String(id));
        self.value.insert(
            "parentId".into(),
            parent_id.map_or(JsonValue::Null, JsonValue::String),
        );
        self.value
            .insert("timestamp".into(), JsonValue::String(timestamp.0));
    }
}

impl Serialize for UnknownEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

/// One session entry (any line after the header), by `type`.
///
/// `#[non_exhaustive]`: a future pi or omp release adds entry types, so a match outside this
/// crate needs a `_` arm (an unknown type is [`Entry::Unknown`] until the schema learns it).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Entry {
    /// `message`.
    Message(MessageEntry),
    /// `model_change`.
    ModelChange(ModelChangeEntry),
    /// `thinking_level_change`.
    ThinkingLevelChange(ThinkingLevelChangeEntry),
    /// `compaction`.
    Compaction(CompactionEntry),
    /// `branch_summary`.
    BranchSummary(BranchSummaryEntry),
    /// `custom`.
    Custom(CustomEntry),
    /// `custom_message`.
    CustomMessage(CustomMessageEntry),
    /// `label`.
    Label(LabelEntry),
    /// `session_info` (pi).
    SessionInfo(SessionInfoEntry),
    /// `usage` (pi 1.6).
    Usage(UsageEntry),
    /// `context_edit` (pi 1.6).
    ContextEdit(ContextEditEntry),
    /// `model_usage` (omp).
    ModelUsage(ModelUsageEntry),
    /// `service_tier_change` (omp).
    ServiceTierChange(ServiceTierChangeEntry),
    /// `reset_boundary` (omp).
    ResetBoundary(ResetBoundaryEntry),
    /// `archive` (omp).
    Archive(ArchiveEntry),
    /// `title_change` (omp).
    TitleChange(TitleChangeEntry),
    /// `ttsr_injection` (omp).
    TtsrInjection(TtsrInjectionEntry),
    /// `credential_pin` (omp).
    CredentialPin(CredentialPinEntry),
    /// `session_init` (omp).
    SessionInit(SessionInitEntry),
    /// `mode_change` (omp).
    ModeChange(ModeChangeEntry),
    /// Any other `type`, or a known type that could not be typed.
    Unknown(UnknownEntry),
}

/// Every entry `type` this crate types into a variant of its own (the ones [`Entry`] names;
/// any other is [`Entry::Unknown`]). A reader may keep a type as its place in this list.
///
/// ```
/// assert!(pi_session_types::ENTRY_TYPES.contains(&"compaction"));
/// ```
pub const ENTRY_TYPES: [&str; 20] = [
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "usage",
    "context_edit",
    "model_usage",
    "service_tier_change",
    "reset_boundary",
    "archive",
    "title_change",
    "ttsr_injection",
    "credential_pin",
    "session_init",
    "mode_change",
];

/// Calls `$go::<Struct>(source, Entry::Variant)` for the struct of a known `type`, else
/// evaluates `$otherwise`.
macro_rules! dispatch_known {
    ($kind:expr, $source:expr, $go:ident, $otherwise:expr) => {
        match $kind {
            "message" => $go($source, Entry::Message),
            "model_change" => $go($source, Entry::ModelChange),
            "thinking_level_change" => $go($source, Entry::ThinkingLevelChange),
            "compaction" => $go($source, Entry::Compaction),
            "branch_summary" => $go($source, Entry::BranchSummary),
            "custom" => $go($source, Entry::Custom),
            "custom_message" => $go($source, Entry::CustomMessage),
            "label" => $go($source, Entry::Label),
            "session_info" => $go($source, Entry::SessionInfo),
            "usage" => $go($source, Entry::Usage),
            "context_edit" => $go($source, Entry::ContextEdit),
            "model_usage" => $go($source, Entry::ModelUsage),
            "service_tier_change" => $go($source, Entry::ServiceTierChange),
            "reset_boundary" => $go($source, Entry::ResetBoundary),
            "archive" => $go($source, Entry::Archive),
            "title_change" => $go($source, Entry::TitleChange),
            "ttsr_injection" => $go($source, Entry::TtsrInjection),
            "credential_pin" => $go($source, Entry::CredentialPin),
            "session_init" => $go($source, Entry::SessionInit),
            "mode_change" => $go($source, Entry::ModeChange),
            _ => $otherwise,
        }
    };
}

macro_rules! for_each_variant {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            Entry::Message($e) => $body,
            Entry::ModelChange($e) => $body,
            Entry::ThinkingLevelChange($e) => $body,
            Entry::Compaction($e) => $body,
            Entry::BranchSummary($e) => $body,
            Entry::Custom($e) => $body,
            Entry::CustomMessage($e) => $body,
            Entry::Label($e) => $body,
            Entry::SessionInfo($e) => $body,
            Entry::Usage($e) => $body,
            Entry::ContextEdit($e) => $body,
            Entry::ModelUsage($e) => $body,
            Entry::ServiceTierChange($e) => $body,
            Entry::ResetBoundary($e) => $body,
            Entry::Archive($e) => $body,
            Entry::TitleChange($e) => $body,
            Entry::TtsrInjection($e) => $body,
            Entry::CredentialPin($e) => $body,
            Entry::SessionInit($e) => $body,
            Entry::ModeChange($e) => $body,
            Entry::Unknown($e) => $body,
        }
    };
}

impl Entry {
    /// The `type` string.
    pub fn kind(&self) -> &str {
        for_each_variant!(self, e => e.kind())
    }
    /// The entry `id`, when present.
    pub fn id(&self) -> Option<&str> {
        for_each_variant!(self, e => e.id())
    }
    /// The `parentId`; `None` for a root (`null`) or a v1 entry without one.
    pub fn parent_id(&self) -> Option<&str> {
        for_each_variant!(self, e => e.parent_id())
    }
    /// The ISO `timestamp` string as written.
    pub fn timestamp(&self) -> Option<&str> {
        for_each_variant!(self, e => e.timestamp())
    }
    /// Sets `id`, `parentId` (`None` writes `null`) and `timestamp`, as an append does.
    pub fn set_envelope(&mut self, id: String, parent_id: Option<String>, timestamp: IsoTimestamp) {
        for_each_variant!(self, e => e.set_envelope(id, parent_id, timestamp))
    }
    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match self {
            Entry::Message(m) => Some(&m.message),
            _ => None,
        }
    }
    /// True for [`Entry::Unknown`].
    pub fn is_unknown(&self) -> bool {
        matches!(self, Entry::Unknown(_))
    }

    /// Types an entry object by its `type`. Never fails: an unknown type, or a known type whose
    /// fields do not match, becomes [`Entry::Unknown`] (with a `reason` in the latter case).
    pub fn from_map(value: JsonMap) -> Entry {
        let kind = value.get("type").and_then(JsonValue::as_str).unwrap_or("");
        match typed_from(kind, &value) {
            Some(Ok(entry)) => entry,
            Some(Err(reason)) => Entry::Unknown(UnknownEntry {
                value,
                reason: Some(reason),
            }),
            None => Entry::Unknown(UnknownEntry {
                value,
                reason: None,
            }),
        }
    }

    /// Types an entry by moving its JSON (its message, content blocks and images too, see
    /// [`crate::field::moved_with`]): any mismatch in those is an error, and the caller retries
    /// with [`Entry::from_map`]. Other nested parts are typed with their usual fallbacks, which
    /// give the same result as the retry would.
    pub(crate) fn from_map_moved(value: JsonMap) -> Result<Entry, serde_json::Error> {
        fn go<T: for<'a> Deserialize<'a>>(
            value: JsonMap,
            wrap: fn(T) -> Entry,
        ) -> Result<Entry, serde_json::Error> {
            serde_json::from_value::<T>(JsonValue::Object(value)).map(wrap)
        }
        let kind = value
            .get("type")
            .and_then(JsonValue::as_str)
            .unwrap_or("")
            .to_owned();
        match kind.as_str() {
            "message" => {
                return crate::field::moved_with(
                    JsonValue::Object(value),
                    "message",
                    |slot| Some(AgentMessage::from_value_moved(slot.take())),
                    |e: &mut MessageEntry, message| e.message = message,
                )
                .map(Entry::Message);
            }
            "custom_message" => {
                return crate::field::moved_with(
                    JsonValue::Object(value),
                    "content",
                    crate::message::blocks_moved,
                    |e: &mut CustomMessageEntry, blocks| e.content = Content::Blocks(blocks),
                )
                .map(Entry::CustomMessage);
            }
            _ => {}
        }
        dispatch_known!(
            kind.as_str(),
            value,
            go,
            Ok(Entry::Unknown(UnknownEntry {
                value,
                reason: None,
            }))
        )
    }

    /// Why this entry (or its message, or a block) could not be typed, for warnings.
    pub fn fallback_reasons(&self) -> Vec<String> {
        match self {
            Entry::Unknown(UnknownEntry {
                reason: Some(reason),
                value,
            }) => {
                let kind = value.get("type").and_then(JsonValue::as_str).unwrap_or("?");
                vec![format!("entry of type {kind:?} kept untyped: {reason}")]
            }
            Entry::Message(m) => m.message.fallback_reasons(),
            _ => Vec::new(),
        }
    }
}

/// `Some(result)` when `kind` is a known type: the typed entry, or why typing failed.
fn typed_from(kind: &str, value: &JsonMap) -> Option<Result<Entry, String>> {
    fn go<T: for<'a> Deserialize<'a>>(
        value: &JsonMap,
        wrap: fn(T) -> Entry,
    ) -> Option<Result<Entry, String>> {
        Some(
            T::deserialize(serde::de::value::MapDeserializer::new(
                value.iter().map(|(k, v)| (k.as_str(), v)),
            ))
            .map(wrap)
            .map_err(|e: serde_json::Error| e.to_string()),
        )
    }
    dispatch_known!(kind, value, go, None)
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        for_each_variant!(self, e => e.serialize(serializer))
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = JsonMap::deserialize(deserializer)?;
        Ok(Entry::from_map(value))
    }
}

#[cfg(test)]
mod entry_types_tests {
    use super::{ENTRY_TYPES, Entry};

    fn known<T>(_: (), _: fn(T) -> Entry) -> bool {
        true
    }

    #[test]
    fn entry_types_are_the_types_typed() {
        for kind in ENTRY_TYPES {
            assert!(dispatch_known!(kind, (), known, false), "{kind}");
        }
        for other in ["session", "Message", "note", ""] {
            assert!(!dispatch_known!(other, (), known, false), "{other}");
        }
        let mut sorted = ENTRY_TYPES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ENTRY_TYPES.len());
    }
}
