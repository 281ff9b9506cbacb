//! Borrowed typed views over parsed JSON: the one place outside the owned model that knows the
//! keys of a message, a content block, an entry and a usage record (and of omp's output `meta`
//! record a message carries, and of the records omp, its providers and its extensions keep inside
//! an entry: `preserveData`, a compaction's and the task tool's `details`, `providerPayload`).
//!
//! The tree and context crates work on `serde_json::Value` read straight from the line, because
//! `buildSessionContext` and `convertToLlm` hand on every key the file had, in the file's order
//! (see ARCHITECTURE.md, "Bodies are JSON values"). What they *look at* is read through these
//! views instead of string keys, so a field's name is written once, here, beside the owned
//! model ([`crate::message`], [`crate::entry`]) that serde derives from the same names.
//!
//! A view costs nothing (a `Copy` reference) and never fails: a missing key or a non-object is
//! `None`, JavaScript's `undefined`, so the [`crate::js`] rules (`truthy`, `string_of`, `??`)
//! apply to what an accessor returns exactly as they did to `map.get("key")`. Accessors return
//! the raw [`Value`] unless the field is only ever compared as a string (`role`, `type`,
//! `customType`, `stopReason`), which get `&str` accessors.
//!
//! Writing goes through the same names: [`key`] holds every key as a constant, for the few
//! places that insert, remove or rebuild a field.
//!
//! ```
//! use pi_session_types::view::{BlockRef, MessageRef};
//! use serde_json::json;
//!
//! let line = json!({"role": "assistant", "stopReason": "stop",
//!                   "content": [{"type": "text", "text": "hi"}, {"type": "toolCall", "id": "c1"}]});
//! let message = MessageRef::of(&line).unwrap();
//! assert_eq!(message.role(), Some("assistant"));
//! assert_eq!(message.stop_reason(), Some("stop"));
//! let kinds: Vec<_> = message.blocks().map(BlockRef::kind).collect();
//! assert_eq!(kinds, [Some("text"), Some("toolCall")]);
//! assert!(message.blocks().next().unwrap().is("text"));
//! assert_eq!(message.summary(), None); // undefined
//! ```

use serde_json::{Map, Value};

/// The most keys a record may hold for [`lookup`] to scan it rather than hash the key.
const SCANNED_KEYS: usize = 8;

/// `record[key]`: the one lookup of every view. A small record (most entries, messages and
/// blocks hold a handful of keys) is scanned in order (a key's bytes are compared only when its
/// length is the one asked for) instead of hashing the key (SipHash) and probing the map's
/// table: no hash, and no load of the table's memory. The keys of a `Map` are unique, so the scan finds
/// what `Map::get` finds.
#[inline]
fn lookup<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if record.len() <= SCANNED_KEYS {
        record
            .iter()
            .find(|(name, _)| name.as_str() == key)
            .map(|(_, value)| value)
    } else {
        record.get(key)
    }
}

/// Every key the views read, as a constant (for code that writes or removes a field).
pub mod key {
    macro_rules! keys {
        ($($(#[$doc:meta])* $name:ident = $key:literal;)*) => {
            $($(#[$doc])* pub const $name: &str = $key;)*
        };
    }
    keys! {
        /// A message's role.
        ROLE = "role";
        /// A message's content (a string or an array of blocks).
        CONTENT = "content";
        /// A message's or entry's timestamp.
        TIMESTAMP = "timestamp";
        /// A tool result's call id.
        TOOL_CALL_ID = "toolCallId";
        /// A tool result's tool name.
        TOOL_NAME = "toolName";
        /// A tool result's error flag.
        IS_ERROR = "isError";
        /// An assistant message's stop reason.
        STOP_REASON = "stopReason";
        /// An assistant message's error text.
        ERROR_MESSAGE = "errorMessage";
        /// A custom message's or entry's type name.
        CUSTOM_TYPE = "customType";
        /// omp's attribution of a message or custom entry (`user` or `agent`).
        ATTRIBUTION = "attribution";
        /// A block's or an entry's type.
        TYPE = "type";
        /// A text block's text.
        TEXT = "text";
        /// A thinking block's text.
        THINKING = "thinking";
        /// A thinking block's signature.
        THINKING_SIGNATURE = "thinkingSignature";
        /// A thinking block's redaction flag.
        REDACTED = "redacted";
        /// A tool call's (or an entry's) id.
        ID = "id";
        /// A tool call's name.
        NAME = "name";
        /// A tool call's arguments.
        ARGUMENTS = "arguments";
        /// An image block's base64 data (or a custom entry's data).
        DATA = "data";
        /// An image block's MIME type.
        MIME_TYPE = "mimeType";
        /// An entry's message.
        MESSAGE = "message";
        /// An assistant message's provider (and a pi `model_change`'s).
        PROVIDER = "provider";
        /// An assistant message's model.
        MODEL = "model";
        /// An assistant message's (or a tool result's, or a side call's) token usage.
        USAGE = "usage";
        /// A tool result's or custom message's details.
        DETAILS = "details";
        /// A summary message's or entry's summary text.
        SUMMARY = "summary";
        /// omp's provider payload on a message (its replayed wire items).
        PROVIDER_PAYLOAD = "providerPayload";
        /// omp compactions' record of the providers' own compaction state.
        PRESERVE_DATA = "preserveData";
        /// omp's steering flag on a user message.
        STEERING = "steering";
        /// omp's mark of a pruned tool result.
        PRUNED_AT = "prunedAt";
        /// rho's attachments on a user message.
        ATTACHMENTS = "attachments";
        /// omp's and rho's retry-recovery mark on an assistant message.
        RETRY_RECOVERY = "retryRecovery";
        /// A v1 compaction's first kept entry, by index (migrated to `firstKeptEntryId`).
        FIRST_KEPT_ENTRY_INDEX = "firstKeptEntryIndex";
        /// omp's snapcompact archive under `preserveData`.
        SNAPCOMPACT = "snapcompact";
        /// A snapcompact archive's image frames.
        FRAMES = "frames";
        /// A snapcompact archive's oldest verbatim text region.
        TEXT_HEAD = "textHead";
        /// A snapcompact archive's newest verbatim text region.
        TEXT_TAIL = "textTail";
        /// A bash run's command.
        COMMAND = "command";
    }
}

/// Generates raw accessors: `fn name(self) -> Option<&'a Value>` reading `key`.
macro_rules! raw_fields {
    ($($(#[$doc:meta])* $name:ident => $key:expr;)*) => {
        $(
            $(#[$doc])*
            #[inline]
            pub fn $name(self) -> Option<&'a Value> {
                self.get($key)
            }
        )*
    };
}

/// Generates string accessors: `fn name(self) -> Option<&'a str>` reading `key` when it is a
/// JSON string.
macro_rules! str_fields {
    ($($(#[$doc:meta])* $name:ident => $key:expr;)*) => {
        $(
            $(#[$doc])*
            #[inline]
            pub fn $name(self) -> Option<&'a str> {
                self.get($key).and_then(Value::as_str)
            }
        )*
    };
}

/// Generates string views of raw accessors: `fn name(self) -> Option<&'a str>`, the field read by
/// `raw` when it is a JSON string.
macro_rules! str_of_raw {
    ($($(#[$doc:meta])* $name:ident => $raw:ident;)*) => {
        $(
            $(#[$doc])*
            #[inline]
            pub fn $name(self) -> Option<&'a str> {
                self.$raw().and_then(Value::as_str)
            }
        )*
    };
}

/// Generates views of nested records: `fn name(self) -> View<'a>`, the field read by `raw` seen
/// through `View`.
macro_rules! record_fields {
    ($($(#[$doc:meta])* $name:ident => $view:ident($raw:ident);)*) => {
        $(
            $(#[$doc])*
            #[inline]
            pub fn $name(self) -> $view<'a> {
                $view::new(self.$raw())
            }
        )*
    };
}

/// An agent message (`{"role": …}`) seen through its fields; a value that is not an object
/// has none.
#[derive(Clone, Copy, Debug)]
pub struct MessageRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> MessageRef<'a> {
    /// A view of a message value or map (`&Value`, `&&Value`, `Option<&Value>` or `&Map`).
    #[inline]
    pub fn new(message: impl Into<Self>) -> Self {
        message.into()
    }

    /// A view of `value` when it is an object.
    #[inline]
    pub fn of(value: &'a Value) -> Option<Self> {
        value.as_object().map(|map| Self(Some(map)))
    }

    /// The object itself (for passing every key through); `None` for a non-object.
    #[inline]
    pub fn map(self) -> Option<&'a Map<String, Value>> {
        self.0
    }

    str_of_raw! {
        /// `toolCallId` when it is a string (tool results).
        tool_call_id_str => tool_call_id;
        /// `provider` when it is a string (assistant messages).
        provider_str => provider;
        /// `api` when it is a string (assistant messages).
        api_str => api;
        /// `model` when it is a string (assistant messages).
        model_str => model;
        /// `attribution` when it is a string (omp).
        attribution_str => attribution;
    }

    #[inline]
    fn get(self, key: &str) -> Option<&'a Value> {
        lookup(self.0?, key)
    }

    /// `message.role === role`.
    #[inline]
    pub fn is_role(self, role: &str) -> bool {
        self.role() == Some(role)
    }

    /// The content's blocks (none when the content is a string or missing).
    pub fn blocks(self) -> impl Iterator<Item = BlockRef<'a>> + 'a {
        self.block_values().iter().map(BlockRef::from)
    }

    /// The content as an array of block values (empty when it is not an array).
    pub fn block_values(self) -> &'a [Value] {
        match self.content() {
            Some(Value::Array(blocks)) => blocks,
            _ => &[],
        }
    }

    str_fields! {
        /// `role`.
        role => key::ROLE;
        /// `customType` (custom messages).
        custom_type => key::CUSTOM_TYPE;
        /// `stopReason` (assistant messages).
        stop_reason => key::STOP_REASON;
    }

    raw_fields! {
        /// `toolCallId` (tool results).
        tool_call_id => key::TOOL_CALL_ID;
        /// `toolName` (tool results).
        tool_name => key::TOOL_NAME;
        /// `content`: a string or an array of blocks.
        content => key::CONTENT;
        /// `timestamp`.
        timestamp => key::TIMESTAMP;
        /// `isError` (tool results).
        is_error => key::IS_ERROR;
        /// `errorMessage` (assistant messages).
        error_message => key::ERROR_MESSAGE;
        /// `errorId` (omp assistant messages).
        error_id => "errorId";
        /// `stopDetails` (omp assistant messages).
        stop_details => "stopDetails";
        /// `attribution` (omp: who a message is from).
        attribution => key::ATTRIBUTION;
        /// `summary` (summary messages).
        summary => key::SUMMARY;
        /// `excludeFromContext` (bash and python runs).
        exclude_from_context => "excludeFromContext";
        /// `output` (bash and python runs).
        output => "output";
        /// `cancelled` (bash and python runs).
        cancelled => "cancelled";
        /// `exitCode` (bash and python runs).
        exit_code => "exitCode";
        /// `command` (bash runs).
        command => key::COMMAND;
        /// `code` (python runs).
        code => "code";
        /// `truncated` (bash and python runs).
        truncated => "truncated";
        /// `fullOutputPath` (bash and python runs).
        full_output_path => "fullOutputPath";
        /// `meta` (omp's output notice of a run or tool result).
        meta => "meta";
        /// `images` (omp runs and summaries).
        images => "images";
        /// `files` (omp file mentions).
        files => "files";
        /// `blocks` (omp compaction summaries' own blocks).
        summary_blocks => "blocks";
        /// `method` (omp compaction summaries: `handoff` or not).
        method => "method";
        /// `providerPayload` (omp).
        provider_payload => key::PROVIDER_PAYLOAD;
        /// `prunedAt` (omp pruned tool results).
        pruned_at => key::PRUNED_AT;
        /// `synthetic` (omp's user messages the agent wrote).
        synthetic => "synthetic";
        /// `steering` (omp steering user messages).
        steering => key::STEERING;
        /// `details` (tool results, custom messages).
        details => key::DETAILS;
        /// `display` (custom messages).
        display => "display";
        /// `provider` (assistant messages).
        provider => key::PROVIDER;
        /// `model` (assistant messages).
        model => key::MODEL;
        /// `api` (assistant messages).
        api => "api";
        /// `usage` (assistant messages).
        usage => key::USAGE;
        /// `attachments` (rho's user messages).
        attachments => key::ATTACHMENTS;
        /// `sections` (pi 1.6's system messages).
        sections => "sections";
        /// `retryRecovery` (omp's and rho's assistant messages).
        retry_recovery => key::RETRY_RECOVERY;
    }
}

/// One content block (`{"type": …}`) seen through its fields; a non-object block has none.
#[derive(Clone, Copy, Debug)]
pub struct BlockRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> BlockRef<'a> {
    /// A view of a block value or map (`&Value`, `&&Value`, `Option<&Value>` or `&Map`).
    #[inline]
    pub fn new(block: impl Into<Self>) -> Self {
        block.into()
    }

    /// `block.type === kind`.
    #[inline]
    pub fn is(self, kind: &str) -> bool {
        self.kind() == Some(kind)
    }

    /// `type`.
    #[inline]
    pub fn kind(self) -> Option<&'a str> {
        lookup(self.0?, key::TYPE).and_then(Value::as_str)
    }

    str_of_raw! {
        /// `text` when it is a string.
        text_str => text;
        /// `thinking` when it is a string.
        thinking_str => thinking;
        /// `thinkingSignature` when it is a string.
        thinking_signature_str => thinking_signature;
        /// `id` when it is a string (tool calls).
        id_str => id;
        /// `textSignature` when it is a string (text blocks).
        text_signature_str => text_signature;
        /// `thoughtSignature` when it is a string (Gemini's tool calls).
        thought_signature_str => thought_signature;
        /// `customWireName` when it is a string (omp's custom tool calls).
        custom_wire_name_str => custom_wire_name;
        /// `url` when it is a string (omp's image blocks by URL).
        url_str => url;
        /// `data` when it is a string (image blocks).
        data_str => data;
    }

    #[inline]
    fn get(self, key: &str) -> Option<&'a Value> {
        lookup(self.0?, key)
    }

    raw_fields! {
        /// `text` (text blocks).
        text => key::TEXT;
        /// `thinking` (thinking blocks).
        thinking => key::THINKING;
        /// `thinkingSignature` (thinking blocks).
        thinking_signature => key::THINKING_SIGNATURE;
        /// `redacted` (thinking blocks).
        redacted => key::REDACTED;
        /// `textSignature` (text blocks).
        text_signature => "textSignature";
        /// `id` (tool calls).
        id => key::ID;
        /// `name` (tool calls).
        name => key::NAME;
        /// `arguments` (tool calls).
        arguments => key::ARGUMENTS;
        /// `data` (image blocks: base64).
        data => key::DATA;
        /// `mimeType` (image blocks).
        mime_type => key::MIME_TYPE;
        /// `thoughtSignature` (Gemini's tool calls).
        thought_signature => "thoughtSignature";
        /// `customWireName` (omp's custom tool calls: the name on the wire).
        custom_wire_name => "customWireName";
        /// `url` (omp's image blocks by URL).
        url => "url";
        /// `detail` (omp's image blocks: the detail asked of the provider).
        detail => "detail";
    }
}

/// An entry (`{"type": …, "id": …}`) seen through its fields; a value that is not an object
/// has none.
#[derive(Clone, Copy, Debug)]
pub struct EntryRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> EntryRef<'a> {
    /// A view of an entry value or map (`&Value`, `&&Value`, `Option<&Value>` or `&Map`).
    #[inline]
    pub fn new(entry: impl Into<Self>) -> Self {
        entry.into()
    }

    /// `type`.
    #[inline]
    pub fn kind(self) -> Option<&'a str> {
        self.get(key::TYPE).and_then(Value::as_str)
    }

    #[inline]
    fn get(self, key: &str) -> Option<&'a Value> {
        lookup(self.0?, key)
    }

    /// `entry.type === kind`.
    #[inline]
    pub fn is(self, kind: &str) -> bool {
        self.kind() == Some(kind)
    }

    /// `id` when it is a string.
    #[inline]
    pub fn id(self) -> Option<&'a str> {
        self.get(key::ID).and_then(Value::as_str)
    }

    /// The `message` object of a `message` entry, as a view.
    #[inline]
    pub fn message_ref(self) -> Option<MessageRef<'a>> {
        self.message().and_then(MessageRef::of)
    }

    raw_fields! {
        /// `message` (message entries).
        message => key::MESSAGE;
        /// `timestamp`.
        timestamp => key::TIMESTAMP;
        /// `summary` (compaction and branch summaries).
        summary => key::SUMMARY;
        /// `content` (custom message entries).
        content => key::CONTENT;
        /// `data` (custom entries).
        data => key::DATA;
        /// `customType` (custom and custom message entries).
        custom_type => key::CUSTOM_TYPE;
        /// `role` (omp's `model_change`: which model role changed).
        role => key::ROLE;
        /// `display` (custom message entries).
        display => "display";
        /// `details` (custom message entries, summaries).
        details => "details";
        /// `id` as stored, any JSON value (rules compare it with JavaScript's `===`; [`Self::id`]
        /// is the string).
        id_value => key::ID;
        /// `thinkingLevel` (`thinking_level_change`).
        thinking_level => "thinkingLevel";
        /// `provider` (pi's `model_change`).
        provider => "provider";
        /// `modelId` (pi's `model_change`).
        model_id => "modelId";
        /// `firstKeptEntryIndex` (v1 compactions, before migration to `firstKeptEntryId`).
        first_kept_entry_index => key::FIRST_KEPT_ENTRY_INDEX;
        /// `firstKeptEntryId` (compactions).
        first_kept_entry_id => "firstKeptEntryId";
        /// `tokensBefore` (compactions).
        tokens_before => "tokensBefore";
        /// `systemMessage` (pi 1.6 compactions).
        system_message => "systemMessage";
        /// `fromId` (branch summaries).
        from_id => "fromId";
        /// `targetId` (pi 1.6's `context_edit`).
        target_id => "targetId";
        /// `replacement` (pi 1.6's `context_edit`).
        replacement => "replacement";
        /// `model` (omp's `model_change`: `provider/model`).
        model => "model";
        /// `usage` (omp's `model_usage`, pi 1.6's `usage`, summaries: a side call's usage).
        usage => "usage";
        /// `configured` (omp's `thinking_level_change`: the level the user chose).
        configured => "configured";
        /// `serviceTier` (omp's `service_tier_change`).
        service_tier => "serviceTier";
        /// `mode` (omp's `mode_change`).
        mode => "mode";
        /// `injectedRules` (omp's `ttsr_injection`).
        injected_rules => "injectedRules";
        /// `preserveData` (omp compactions: the providers' own compaction records).
        preserve_data => key::PRESERVE_DATA;
        /// `providerReplayThroughEntryId` (omp compactions).
        provider_replay_through_entry_id => "providerReplayThroughEntryId";
        /// `shortSummary` (omp compactions).
        short_summary => "shortSummary";
        /// `tokensAfter` (omp compactions).
        tokens_after => "tokensAfter";
        /// `method` (omp compactions).
        method => "method";
        /// `warning` (omp compactions).
        warning => "warning";
        /// `attribution` (omp's custom message entries: who it is from).
        attribution => key::ATTRIBUTION;
        /// `label` (`label` entries: the label given, or none to clear it).
        label => "label";
        /// `name` (`session_info` entries: the session's name).
        name => key::NAME;
        /// `parentId` (every entry after the header: the parent's id, or `null`).
        parent_id => "parentId";
        /// `archived` (omp's `archive` entries: whether the target is archived).
        archived => "archived";
        /// `title` (omp's header: the session's title).
        title => "title";
    }
}

/// `new`, `map` and the private `get` of a view (the record views below).
macro_rules! view_core {
    ($($view:ident),*) => {$(
        impl<'a> $view<'a> {
            /// A view of a value or map (`&Value`, `&&Value`, `Option<&Value>` or `&Map`).
            #[inline]
            pub fn new(record: impl Into<Self>) -> Self {
                record.into()
            }

            /// The record itself; `None` when it is missing or not an object.
            #[inline]
            pub fn map(self) -> Option<&'a Map<String, Value>> {
                self.0
            }

            #[inline]
            fn get(self, key: &str) -> Option<&'a Value> {
                lookup(self.0?, key)
            }
        }
    )*};
}

/// pi-ai's `Usage` record (an assistant message's or a side call's `usage`) seen through its
/// fields, the keys of [`crate::usage::Usage`]; a value that is not an object has none.
///
/// ```
/// use pi_session_types::view::UsageRef;
/// use serde_json::json;
///
/// let usage = json!({"input": 3, "output": 5, "cost": {"total": 0.25}});
/// let usage = UsageRef::new(&usage);
/// assert_eq!(usage.output(), Some(&json!(5)));
/// assert_eq!(usage.cost_ref().total(), Some(&json!(0.25)));
/// assert_eq!(usage.total_tokens(), None); // undefined
/// ```
#[derive(Clone, Copy, Debug)]
pub struct UsageRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> UsageRef<'a> {
    record_fields! {
        /// The `cost` record, as a view.
        cost_ref => CostRef(cost);
    }

    raw_fields! {
        /// `input`: input tokens (cache reads and writes excluded).
        input => "input";
        /// `output`: output tokens (reasoning included).
        output => "output";
        /// `cacheRead`.
        cache_read => "cacheRead";
        /// `cacheWrite`.
        cache_write => "cacheWrite";
        /// `totalTokens`.
        total_tokens => "totalTokens";
        /// `reasoning` (pi 1.6: reasoning tokens, a part of `output`).
        reasoning => "reasoning";
        /// `reasoningTokens` (omp's name for `reasoning`).
        reasoning_tokens => "reasoningTokens";
        /// `cost`: the record [`Self::cost_ref`] views.
        cost => "cost";
    }
}

/// The `cost` record of pi-ai's `Usage` seen through its fields, the keys of
/// [`crate::usage::Cost`]; a value that is not an object has none.
#[derive(Clone, Copy, Debug)]
pub struct CostRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> CostRef<'a> {
    raw_fields! {
        /// `input`: the cost of the input tokens.
        input => "input";
        /// `output`: the cost of the output tokens.
        output => "output";
        /// `cacheRead`.
        cache_read => "cacheRead";
        /// `cacheWrite`.
        cache_write => "cacheWrite";
        /// `total`, as stored.
        total => "total";
    }
}

/// One of rho's attachments (a user message's `attachments`: a file the user attached, sent by
/// path) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct AttachmentRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> AttachmentRef<'a> {
    raw_fields! {
        /// `name`: the file's name.
        name => key::NAME;
        /// `mimeType`.
        mime_type => key::MIME_TYPE;
        /// `path`: where the file is.
        path => "path";
        /// `about`: what the user said it is.
        about => "about";
        /// `kind` (`pdf`, …).
        kind => "kind";
        /// `pages` (PDFs).
        pages => "pages";
    }
}

/// One of omp's file mentions (a `fileMention` message's `files`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct FileMentionRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> FileMentionRef<'a> {
    raw_fields! {
        /// `path`: the file mentioned.
        path => "path";
        /// `content`: its text, when it was read.
        content => key::CONTENT;
        /// `image`: its image block, when it is a picture.
        image => "image";
    }
}

/// omp's context-notes record (a `custom` entry's `data`: `{version, text}`) seen through its
/// fields.
#[derive(Clone, Copy, Debug)]
pub struct ContextNotesRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> ContextNotesRef<'a> {
    raw_fields! {
        /// `version` (1).
        version => "version";
        /// `text`: the notes.
        text => key::TEXT;
    }
}

/// omp's `OutputMeta` (a run's or tool result's `meta`: `tools/output-meta.ts`) seen through its
/// fields; what `formatOutputNotice` reads.
#[derive(Clone, Copy, Debug)]
pub struct OutputMetaRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> OutputMetaRef<'a> {
    /// The `limits` record's entry `name` (`matchLimit`, `resultLimit`, `headLimit`,
    /// `columnTruncated`: a record [`LimitRef`] views), as stored.
    #[inline]
    pub fn limit(self, name: &str) -> Option<&'a Value> {
        self.limits().and_then(|limits| limits.get(name))
    }

    raw_fields! {
        /// `truncation`: the record [`TruncationRef`] views.
        truncation => "truncation";
        /// `source`: what was truncated ([`SourceRef`]).
        source => "source";
        /// `artifactError`: why the full output was not saved.
        artifact_error => "artifactError";
        /// `limits`: the limit records ([`Self::limit`]).
        limits => "limits";
        /// `diagnostics`: LSP diagnostics ([`DiagnosticsRef`]).
        diagnostics => "diagnostics";
    }
}

/// omp's truncation record (`meta.truncation`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct TruncationRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> TruncationRef<'a> {
    raw_fields! {
        /// `artifactId`: where the full output is.
        artifact_id => "artifactId";
        /// `direction` (`head`, `tail`, `middle`).
        direction => "direction";
        /// `totalLines`.
        total_lines => "totalLines";
        /// `outputLines`.
        output_lines => "outputLines";
        /// `totalBytes`.
        total_bytes => "totalBytes";
        /// `outputBytes`.
        output_bytes => "outputBytes";
        /// `elidedBytes` (middle truncation).
        elided_bytes => "elidedBytes";
        /// `elidedLines` (middle truncation).
        elided_lines => "elidedLines";
        /// `headRange` ([`RangeRef`]).
        head_range => "headRange";
        /// `tailRange` ([`RangeRef`]).
        tail_range => "tailRange";
        /// `shownRange` ([`RangeRef`]).
        shown_range => "shownRange";
        /// `nextOffset`: where reading goes on.
        next_offset => "nextOffset";
        /// `partialLine`: one line shown in part.
        partial_line => "partialLine";
        /// `truncatedBy` (`lines` or `bytes`).
        truncated_by => "truncatedBy";
        /// `maxBytes`.
        max_bytes => "maxBytes";
    }
}

/// One of omp's limit records (`meta.limits.*`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct LimitRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> LimitRef<'a> {
    raw_fields! {
        /// `reached`: the limit that was reached.
        reached => "reached";
        /// `suggestion`: the limit to ask for next.
        suggestion => "suggestion";
        /// `maxColumn` (`columnTruncated`).
        max_column => "maxColumn";
        /// `unit` (`columnTruncated`).
        unit => "unit";
        /// `artifactId` (`columnTruncated`).
        artifact_id => "artifactId";
    }
}

/// A line range of omp's truncation record (`{start, end}`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct RangeRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> RangeRef<'a> {
    raw_fields! {
        /// `start`.
        start => "start";
        /// `end`.
        end => "end";
    }
}

/// What omp's truncation came from (`meta.source`: `{type, value}`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct SourceRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> SourceRef<'a> {
    /// `type` when it is a string (`report`, …; not a content block's type).
    #[inline]
    pub fn kind(self) -> Option<&'a str> {
        self.get(key::TYPE).and_then(Value::as_str)
    }

    raw_fields! {
        /// `value`: the source's name.
        value => "value";
    }
}

/// omp's LSP diagnostics record (`meta.diagnostics`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct DiagnosticsRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> DiagnosticsRef<'a> {
    raw_fields! {
        /// `messages`: the diagnostics, one line each.
        messages => "messages";
        /// `summary`.
        summary => key::SUMMARY;
    }
}

/// omp compactions' `preserveData` (the providers' and extensions' own compaction state kept
/// inside a `compaction` entry) seen through the records omp reads back from it.
///
/// ```
/// use pi_session_types::view::PreserveDataRef;
/// use serde_json::json;
///
/// let preserve = json!({"snapcompact": {"textHead": "h", "frames": []},
///                       "anthropicCompaction": {"provider": "anthropic", "content": "s"}});
/// let preserve = PreserveDataRef::new(&preserve);
/// assert_eq!(preserve.snapcompact_ref().text_head(), Some(&json!("h")));
/// assert_eq!(preserve.anthropic_compaction_ref().provider(), Some(&json!("anthropic")));
/// assert_eq!(preserve.openai_remote_compaction(), None); // undefined
/// ```
#[derive(Clone, Copy, Debug)]
pub struct PreserveDataRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> PreserveDataRef<'a> {
    record_fields! {
        /// The `snapcompact` archive, as a view.
        snapcompact_ref => SnapcompactArchiveRef(snapcompact);
        /// The `openaiRemoteCompaction` record, as a view.
        openai_remote_compaction_ref => OpenAiRemoteCompactionRef(openai_remote_compaction);
        /// The `anthropicCompaction` record, as a view.
        anthropic_compaction_ref => AnthropicCompactionRef(anthropic_compaction);
    }

    raw_fields! {
        /// `snapcompact`: omp's archive ([`SnapcompactArchiveRef`]).
        snapcompact => key::SNAPCOMPACT;
        /// `openaiRemoteCompaction`: OpenAI's remote compaction ([`OpenAiRemoteCompactionRef`]).
        openai_remote_compaction => "openaiRemoteCompaction";
        /// `anthropicCompaction`: Anthropic's compaction ([`AnthropicCompactionRef`]).
        anthropic_compaction => "anthropicCompaction";
    }
}

/// omp's snapcompact archive (`preserveData.snapcompact`, `@oh-my-pi/snapcompact`'s
/// `SnapcompactArchive`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct SnapcompactArchiveRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> SnapcompactArchiveRef<'a> {
    raw_fields! {
        /// `frames`: the image frames, oldest first ([`SnapcompactFrameRef`]).
        frames => key::FRAMES;
        /// `truncatedChars`: source characters dropped.
        truncated_chars => "truncatedChars";
        /// `text`: the full kept source text.
        text => key::TEXT;
        /// `textHead`: the oldest verbatim text region.
        text_head => key::TEXT_HEAD;
        /// `textTail`: the newest verbatim text region.
        text_tail => key::TEXT_TAIL;
    }
}

/// One frame of omp's snapcompact archive (an image of rendered text) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct SnapcompactFrameRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> SnapcompactFrameRef<'a> {
    raw_fields! {
        /// `data`: base64 image data or a blob reference.
        data => key::DATA;
        /// `mimeType`.
        mime_type => key::MIME_TYPE;
        /// `cols`: text columns rendered.
        cols => "cols";
        /// `rows`: text rows rendered.
        rows => "rows";
        /// `chars`: source characters in the frame.
        chars => "chars";
        /// `font` (absent in legacy archives).
        font => "font";
        /// `variant` (absent in legacy archives).
        variant => "variant";
        /// `detail`: the image detail asked of the provider.
        detail => "detail";
    }
}

/// OpenAI's remote compaction record (`preserveData.openaiRemoteCompaction`) seen through its
/// fields.
#[derive(Clone, Copy, Debug)]
pub struct OpenAiRemoteCompactionRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> OpenAiRemoteCompactionRef<'a> {
    raw_fields! {
        /// `provider`: whose compaction it is.
        provider => "provider";
        /// `replacementHistory`: the Responses items replayed in its place.
        replacement_history => "replacementHistory";
    }
}

/// Anthropic's compaction record (`preserveData.anthropicCompaction`) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct AnthropicCompactionRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> AnthropicCompactionRef<'a> {
    raw_fields! {
        /// `provider`: whose compaction it is.
        provider => "provider";
        /// `content`: the compaction's text.
        content => key::CONTENT;
        /// `encryptedContent`.
        encrypted_content => "encryptedContent";
        /// `filesText`: the files the compaction kept.
        files_text => "filesText";
    }
}

/// A compaction's `details` (the compaction extension's own record) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct CompactionDetailsRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> CompactionDetailsRef<'a> {
    raw_fields! {
        /// `kind` (`experimental-context-rollover`, …).
        kind => "kind";
    }
}

/// omp's provider payload (a message's `providerPayload`: `{type, provider, items, dt}`, the
/// provider's own items kept for replay) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct ProviderPayloadRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> ProviderPayloadRef<'a> {
    str_fields! {
        /// `type` when it is a string (`openaiResponsesHistory`, `anthropicCompaction`, …).
        kind => key::TYPE;
    }

    str_of_raw! {
        /// `provider` when it is a string.
        provider_str => provider;
    }

    raw_fields! {
        /// `provider`: whose items they are.
        provider => "provider";
        /// `items`: the provider's wire items (Responses items), replayed as they are.
        items => "items";
        /// `dt`: whether the items were sent as a developer turn.
        dt => "dt";
    }
}

/// pi-ai's text-signature record (a text block's `textSignature` when it is JSON:
/// `{v: 1, id, phase?}`, the Responses message it came from) seen through its fields.
#[derive(Clone, Copy, Debug)]
pub struct TextSignatureRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> TextSignatureRef<'a> {
    str_of_raw! {
        /// `id` when it is a string.
        id_str => id;
        /// `phase` when it is a string (`commentary`, `final_answer`).
        phase_str => phase;
    }

    raw_fields! {
        /// `v`: the record's version (1).
        version => "v";
        /// `id`: the Responses message id.
        id => key::ID;
        /// `phase`.
        phase => "phase";
    }
}

/// The arguments of one of omp's custom tool calls (a tool call block's `arguments` when its
/// tool takes free text: `{input}`) seen through its field.
#[derive(Clone, Copy, Debug)]
pub struct CustomToolArgumentsRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> CustomToolArgumentsRef<'a> {
    raw_fields! {
        /// `input`: the text sent to the tool.
        input => "input";
    }
}

/// omp's task tool's `details` (a `task` tool result's own record) seen through the field the
/// usage report reads.
#[derive(Clone, Copy, Debug)]
pub struct TaskDetailsRef<'a>(Option<&'a Map<String, Value>>);

impl<'a> TaskDetailsRef<'a> {
    raw_fields! {
        /// `usage`: the subagents' usage, a pi-ai `Usage` record ([`UsageRef`]).
        usage => "usage";
    }
}

/// `From` conversions of each view from a value, a reference to one (closure arguments of
/// `filter`) and a map.
macro_rules! view_from {
    ($($view:ident),*) => {$(
        impl<'a> From<&'a Value> for $view<'a> {
            #[inline]
            fn from(value: &'a Value) -> Self {
                Self(value.as_object())
            }
        }
        impl<'a> From<&&'a Value> for $view<'a> {
            #[inline]
            fn from(value: &&'a Value) -> Self {
                Self(value.as_object())
            }
        }
        impl<'a> From<Option<&'a Value>> for $view<'a> {
            #[inline]
            fn from(value: Option<&'a Value>) -> Self {
                Self(value.and_then(Value::as_object))
            }
        }
        impl<'a> From<&'a Map<String, Value>> for $view<'a> {
            #[inline]
            fn from(map: &'a Map<String, Value>) -> Self {
                Self(Some(map))
            }
        }
        impl<'a> From<&&'a Map<String, Value>> for $view<'a> {
            #[inline]
            fn from(map: &&'a Map<String, Value>) -> Self {
                Self(Some(map))
            }
        }
    )*};
}
view_from!(MessageRef, BlockRef, EntryRef);

/// The record views: `new`, `get` and the `From` conversions, from one list.
macro_rules! record_views {
    ($($view:ident),*) => {
        view_core!($($view),*);
        view_from!($($view),*);
    };
}
record_views!(
    AttachmentRef,
    FileMentionRef,
    ContextNotesRef,
    UsageRef,
    CostRef,
    OutputMetaRef,
    TruncationRef,
    LimitRef,
    RangeRef,
    SourceRef,
    DiagnosticsRef,
    PreserveDataRef,
    SnapcompactArchiveRef,
    SnapcompactFrameRef,
    OpenAiRemoteCompactionRef,
    AnthropicCompactionRef,
    CompactionDetailsRef,
    TaskDetailsRef,
    ProviderPayloadRef,
    TextSignatureRef,
    CustomToolArgumentsRef
);
