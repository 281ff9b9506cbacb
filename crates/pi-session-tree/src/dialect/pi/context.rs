//! pi's `buildSessionContext`, reproduced over the entries of a path, for
//! 0.73 and its successor 1.6 (one set of rules, the differences marked).
//!
//! Rules (pi.md §6 and §10, checked against `core/session-manager.ts` of
//! 0.73.1 and 1.6.0): settings come from the whole path (last
//! `thinking_level_change`; last `model_change` or assistant message for the
//! model). The context entries are the path, or — when the path holds a
//! compaction — the latest compaction, then the path entries from its
//! `firstKeptEntryId` up to it, then everything after it. Each context entry
//! then becomes messages: `message` entries as stored, `custom_message` and
//! `branch_summary` entries as `custom` and `branchSummary` messages, the
//! latest compaction as its `compactionSummary`; an older compaction kept in
//! the range gives nothing.
//!
//! pi 1.6 differs in five ways ([`PiRelease::V1_6`]):
//! - `system` role messages in the kept range are left out;
//! - the compaction's `systemMessage`, when present, comes before its summary;
//! - `null`/missing content is normalised (`""` for `system`, `[]` for
//!   `user`/`assistant`/`toolResult` messages and for custom messages);
//! - `context_edit` entries among the context entries edit their target (the
//!   latest edit per `targetId` wins): a `null` replacement drops the
//!   target's messages, otherwise the content of its
//!   `user`/`assistant`/`toolResult`/`custom` messages is replaced, a string
//!   becoming one text block for `assistant` and `toolResult`;
//! - everything else (settings, compaction choice) is unchanged.

use pi_session_types::view::{EntryRef, MessageRef, key};
use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::built::{Added, Built};
use crate::context::FirstSent;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use pi_session_types::js;

pub use crate::dialect::PiRelease;

/// What pi's `buildSessionContext` returns, serialised field for field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PiContext {
    /// The agent messages, in order.
    pub messages: Vec<Value>,
    /// The thinking level in effect (`"off"` by default). pi copies the
    /// entry's value as is, so a `thinking_level_change` without the key makes
    /// it `undefined` (omitted here).
    #[serde(rename = "thinkingLevel", skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<Value>,
    /// `{provider, modelId}` of the last `model_change` or assistant message on
    /// the path, or `null`.
    pub model: Option<Map<String, Value>>,
}

impl PiContext {
    /// The result for an empty path or a `null` leaf.
    pub fn empty() -> Self {
        Self {
            messages: Vec::new(),
            thinking_level: Some(Value::from("off")),
            model: None,
        }
    }
}

/// Builds pi 0.73's context from the entries of a path (root first).
pub fn build(path: &[Value]) -> (PiContext, Vec<Diagnostic>) {
    build_release(path, PiRelease::V0_73)
}

/// Builds the context of pi `release` from the entries of a path (root first).
///
/// ```
/// use pi_session_tree::dialect::pi::context::{build_release, PiRelease};
/// use serde_json::json;
///
/// let path = vec![
///     json!({"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",
///            "message":{"role":"assistant","content":[{"type":"text","text":"long"}],
///                       "provider":"p","model":"m","timestamp":1}}),
///     json!({"type":"context_edit","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:01.000Z",
///            "targetId":"a","replacement":{"content":"short"}}),
/// ];
/// let (context, _) = build_release(&path, PiRelease::V1_6);
/// assert_eq!(context.messages[0]["content"], json!([{"type":"text","text":"short"}]));
/// let (context, _) = build_release(&path, PiRelease::V0_73);
/// assert_eq!(context.messages[0]["content"], json!([{"type":"text","text":"long"}]));
/// ```
pub fn build_release(path: &[Value], release: PiRelease) -> (PiContext, Vec<Diagnostic>) {
    let (mut context, messages, diagnostics) = build_indexed(path, release);
    context.messages = crate::built::materialise(path, messages);
    (context, diagnostics)
}

/// [`build_release`] with each message that is a path entry's message, unchanged, given as that
/// entry's index ([`Built::Entry`]); `messages` of the context returned is empty.
pub fn build_indexed(
    path: &[Value],
    release: PiRelease,
) -> (PiContext, Vec<Built>, Vec<Diagnostic>) {
    let (context, messages, diagnostics, _) = build_extendable(path, release);
    (context, messages, diagnostics)
}

/// What [`extend`] needs to know of the build it extends.
#[derive(Debug, Clone)]
pub(crate) struct PiTail {
    release: PiRelease,
    /// pi 1.6 only: a `context_edit` is among the context entries (it may name an entry
    /// appended later, so such a context is built again).
    edits: bool,
    /// How many of the diagnostics are the settings pass's (they come first).
    settings_diagnostics: usize,
}

/// [`build_indexed`] and what [`extend`] needs to continue it.
pub(crate) fn build_extendable(
    path: &[Value],
    release: PiRelease,
) -> (PiContext, Vec<Built>, Vec<Diagnostic>, PiTail) {
    let (context, mut diagnostics) = settings(path);
    let settings_diagnostics = diagnostics.len();
    let entries = context_entries(path, release);
    let edits = match release {
        PiRelease::V0_73 => Edits::default(),
        PiRelease::V1_6 => Edits::latest_among(&entries),
    };
    let mut out = Vec::new();
    for (index, &(at, entry)) in entries.iter().enumerate() {
        // Only the latest compaction (always first) speaks; older ones kept in the range
        // contribute nothing.
        if index > 0 && EntryRef::new(entry).is("compaction") {
            continue;
        }
        let from = out.len();
        entry_messages(at, entry, release, &mut out);
        if let Some(edit) = edits.for_entry(entry) {
            let messages = out.split_off(from);
            out.extend(apply_edit(path, messages, edit, &mut diagnostics));
        }
    }
    let tail = PiTail {
        release,
        edits: !edits.by_target.is_empty(),
        settings_diagnostics,
    };
    (context, out, diagnostics, tail)
}

/// Whether [`extend`] continues the build `tail` describes with any run of `message` entries
/// (no pi 1.6 context edit among its entries: one may name an entry added later).
pub(crate) fn extends_alone(tail: &PiTail) -> bool {
    !tail.edits
}

/// The messages `path[from..]` add to a context built over `path[..from]` when those are
/// `message` entries (a host's turn): each entry's messages at the end, the model and the
/// diagnostics updated, exactly as a build over the whole `path` gives them. `None` when the
/// context must be built again (an entry that is not a `message`, or pi 1.6 edits). Nothing
/// of `path[..from]` is read, so `path` may hold only the entries added (`from` 0; their
/// [`Built::Entry`] indices are then into them).
pub(crate) fn extend(
    tail: &mut PiTail,
    context: &mut PiContext,
    path: &[Value],
    from: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<Built>> {
    let added: Vec<Added<'_>> = path.get(from..)?.iter().map(Added::Entry).collect();
    extend_added(tail, context, &added, from, diagnostics)
}

/// [`extend`] with the entries added as a reader read them, the first at index `from` of the
/// path: a message read as the keys pi 0.73 reads of it ([`Added::Message`]) settles the model
/// and is sent as stored, as [`settle`] and [`entry_messages`] do with it whole. `None` for
/// such a message under pi 1.6 (which reads its content).
pub(crate) fn extend_added(
    tail: &mut PiTail,
    context: &mut PiContext,
    added: &[Added<'_>],
    from: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<Built>> {
    let is_message = |added: &Added<'_>| match added {
        Added::Entry(entry) => EntryRef::new(entry).is("message"),
        Added::Message(_) => tail.release == PiRelease::V0_73,
    };
    if tail.edits || !added.iter().all(is_message) {
        return None;
    }
    let mut settings_diagnostics = Vec::new();
    // One message an entry, most often (a custom message's entry may give none).
    let mut out = Vec::with_capacity(added.len());
    for (offset, entry) in added.iter().enumerate() {
        match entry {
            Added::Entry(entry) => {
                settle(context, entry, &mut settings_diagnostics);
                entry_messages(from + offset, entry, tail.release, &mut out);
            }
            Added::Message(message) => {
                settle_message(
                    context,
                    message.get(key::ROLE).and_then(Value::as_str),
                    message.get(key::PROVIDER),
                    message.get(key::MODEL),
                );
                out.push(Built::Entry(from + offset));
            }
        }
    }
    let at = tail.settings_diagnostics.min(diagnostics.len());
    tail.settings_diagnostics += settings_diagnostics.len();
    diagnostics.splice(at..at, settings_diagnostics);
    Some(out)
}

/// `getSessionContextSettings` (0.73 and 1.6 alike), plus a diagnostic for
/// each `message` entry without a message (pi throws there).
fn settings(path: &[Value]) -> (PiContext, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let mut context = PiContext::empty();
    for entry in path {
        settle(&mut context, entry, &mut diagnostics);
    }
    (context, diagnostics)
}

/// One entry's part of [`settings`] (the last value wins).
fn settle(context: &mut PiContext, entry: &Value, diagnostics: &mut Vec<Diagnostic>) {
    match EntryRef::new(entry).kind() {
        Some("thinking_level_change") => {
            context.thinking_level = EntryRef::new(entry).thinking_level().cloned()
        }
        Some("model_change") => {
            context.model = Some(model_object(
                EntryRef::new(entry).provider(),
                EntryRef::new(entry).model_id(),
            ));
        }
        Some("message") => match EntryRef::new(entry).message() {
            None | Some(Value::Null) => diagnostics.push(malformed(
                entry,
                "message entry has no message object; pi throws here, the entry is skipped",
            )),
            Some(message) => settle_message(
                context,
                MessageRef::new(message).role(),
                MessageRef::new(message).provider(),
                MessageRef::new(message).model(),
            ),
        },
        _ => {}
    }
}

/// A message's part of [`settings`], given its `role`, `provider` and `model`: an assistant's
/// names the model.
fn settle_message(
    context: &mut PiContext,
    role: Option<&str>,
    provider: Option<&Value>,
    model: Option<&Value>,
) {
    if role == Some("assistant") {
        context.model = Some(model_object(provider, model));
    }
}

/// `buildContextEntries`: the path, or the latest compaction followed by the
/// kept entries before it and every entry after it.
fn context_entries(path: &[Value], release: PiRelease) -> Vec<(usize, &Value)> {
    let Some((latest, compaction_index)) = latest_compaction(path) else {
        return path.iter().enumerate().collect();
    };
    let compaction = &path[latest];
    let first_kept = EntryRef::new(compaction).first_kept_entry_id();
    let mut entries = vec![(latest, compaction)];
    let mut found = false;
    for (at, kept) in path[..compaction_index].iter().enumerate() {
        if js::strict_eq(EntryRef::new(kept).id_value(), first_kept) {
            found = true;
        }
        if found && !(release == PiRelease::V1_6 && is_system_message(kept)) {
            entries.push((at, kept));
        }
    }
    entries.extend(path.iter().enumerate().skip(compaction_index + 1));
    entries
}

/// The latest compaction on a path and where pi looks it up again by id (the
/// first compaction with that id wins): `(latest, looked_up)`.
fn latest_compaction(path: &[Value]) -> Option<(usize, usize)> {
    let latest = path
        .iter()
        .rposition(|e| EntryRef::new(e).is("compaction"))?;
    let id = EntryRef::new(&path[latest]).id_value();
    let looked_up = path
        .iter()
        .position(|e| {
            EntryRef::new(e).is("compaction") && js::strict_eq(EntryRef::new(e).id_value(), id)
        })
        .unwrap_or(latest);
    Some((latest, looked_up))
}

/// Where the part of a path that [`build_release`] may send begins
/// (either release): the latest compaction's first kept entry, else the
/// compaction itself; 0 without a compaction. Before it, only settings are
/// read: `model_change` and `thinking_level_change` entries and the latest
/// assistant message (see [`crate::source::context_path`]).
pub(crate) fn first_sent(path: &[Value]) -> FirstSent {
    let Some((latest, compaction_index)) = latest_compaction(path) else {
        return FirstSent::Start;
    };
    let first_kept = EntryRef::new(&path[latest]).first_kept_entry_id();
    FirstSent::At(
        path[..compaction_index]
            .iter()
            .position(|e| js::strict_eq(EntryRef::new(e).id_value(), first_kept))
            .unwrap_or(compaction_index),
    )
}

fn is_system_message(entry: &Value) -> bool {
    EntryRef::new(entry).is("message")
        && EntryRef::new(entry)
            .message_ref()
            .is_some_and(|m| m.is_role("system"))
}

/// The latest `context_edit` per `targetId` (a JavaScript `Map`: keys compare
/// like `===`, so object or array ids never match).
#[derive(Default)]
struct Edits<'a> {
    by_target: HashMap<String, &'a Value>,
}

impl<'a> Edits<'a> {
    fn latest_among(entries: &[(usize, &'a Value)]) -> Self {
        let mut by_target = HashMap::new();
        for (_, entry) in entries {
            if EntryRef::new(entry).is("context_edit")
                && let Some(key) = map_key(EntryRef::new(entry).target_id())
            {
                by_target.insert(key, *entry);
            }
        }
        Self { by_target }
    }

    fn for_entry(&self, entry: &Value) -> Option<&'a Value> {
        if self.by_target.is_empty() {
            return None;
        }
        self.by_target
            .get(&map_key(EntryRef::new(entry).id_value())?)
            .copied()
    }
}

/// A `Map` key for a JSON value, `None` for objects and arrays (compared by
/// reference in JavaScript, so never equal to another parsed value).
fn map_key(value: Option<&Value>) -> Option<String> {
    match value {
        None => Some("u".to_owned()),
        Some(Value::Null) => Some("z".to_owned()),
        Some(Value::Bool(b)) => Some(format!("b{b}")),
        Some(Value::Number(n)) => Some(format!("n{}", js::number_to_string(n))),
        Some(Value::String(s)) => Some(format!("s{s}")),
        Some(Value::Array(_) | Value::Object(_)) => None,
    }
}

/// `projectContextEntry`'s edit step.
fn apply_edit(
    path: &[Value],
    messages: Vec<Built>,
    edit: &Value,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Built> {
    let replacement = match EntryRef::new(edit).replacement() {
        Some(Value::Null) => return Vec::new(),
        Some(replacement) => replacement,
        None => {
            if messages.iter().any(|m| is_editable(m.resolve(path))) {
                diagnostics.push(malformed(
                    edit,
                    "context_edit has no replacement (null or {content} expected); pi 1.6 throws here, the edit is ignored",
                ));
            }
            return messages;
        }
    };
    let content = MessageRef::new(replacement).content();
    messages
        .into_iter()
        .map(|message| {
            if !is_editable(message.resolve(path)) {
                return message;
            }
            let message = message.into_value(path);
            let takes_blocks = matches!(
                MessageRef::new(&message).role(),
                Some("assistant" | "toolResult")
            );
            let new_content = match content {
                Some(Value::String(text)) if takes_blocks => {
                    Some(Value::Array(vec![js::text_block(text.as_str())]))
                }
                other => other.cloned(),
            };
            Built::Made(with_content(message, new_content))
        })
        .collect()
}

fn is_editable(message: &Value) -> bool {
    matches!(
        MessageRef::new(message).role(),
        Some("user" | "assistant" | "toolResult" | "custom")
    )
}

/// `{...message, content}`: the key keeps its place when present, is added
/// last otherwise; `undefined` content leaves the key out.
fn with_content(mut message: Value, content: Option<Value>) -> Value {
    if let Some(map) = message.as_object_mut() {
        match content {
            Some(content) => {
                map.insert(key::CONTENT.into(), content);
            }
            None => {
                map.shift_remove(key::CONTENT);
            }
        }
    }
    message
}

fn malformed(entry: &Value, message: &str) -> Diagnostic {
    Diagnostic::at(
        DiagnosticKind::MalformedEntry,
        None,
        EntryRef::new(entry).id(),
        message,
    )
}

fn model_object(provider: Option<&Value>, model_id: Option<&Value>) -> Map<String, Value> {
    let mut model = Map::new();
    if let Some(provider) = provider {
        model.insert("provider".into(), provider.clone());
    }
    if let Some(model_id) = model_id {
        model.insert("modelId".into(), model_id.clone());
    }
    model
}

fn compaction_summary(entry: &Value) -> Value {
    js::object([
        ("role", Some(Value::from("compactionSummary"))),
        ("summary", EntryRef::new(entry).summary().cloned()),
        (
            "tokensBefore",
            EntryRef::new(entry).tokens_before().cloned(),
        ),
        (
            "timestamp",
            Some(js::date_ms_value(EntryRef::new(entry).timestamp())),
        ),
    ])
}

/// `sessionEntryToContextMessages`: the messages one context entry stands for, pushed onto
/// `out` (no list of its own per entry: a long branch is mostly `message` entries, one message
/// each).
fn entry_messages(at: usize, entry: &Value, release: PiRelease, out: &mut Vec<Built>) {
    let pi16 = release == PiRelease::V1_6;
    let messages = match EntryRef::new(entry).kind() {
        Some("message") => {
            match EntryRef::new(entry).message().filter(|m| !m.is_null()) {
                Some(message) if pi16 && js::is_nullish(MessageRef::new(message).content()) => {
                    out.push(Built::Made(normalise_content(message.clone())));
                }
                Some(_) => out.push(Built::Entry(at)),
                None => {}
            }
            return;
        }
        Some("custom_message") => {
            let content = match EntryRef::new(entry).content() {
                Some(Value::Null) | None if pi16 => Some(Value::Array(Vec::new())),
                other => other.cloned(),
            };
            vec![Built::Made(js::object([
                ("role", Some(Value::from("custom"))),
                ("customType", EntryRef::new(entry).custom_type().cloned()),
                ("content", content),
                ("display", EntryRef::new(entry).display().cloned()),
                ("details", EntryRef::new(entry).details().cloned()),
                (
                    "timestamp",
                    Some(js::date_ms_value(EntryRef::new(entry).timestamp())),
                ),
            ]))]
        }
        Some("branch_summary") if js::truthy(EntryRef::new(entry).summary()) => {
            vec![Built::Made(branch_summary_message(entry))]
        }
        Some("compaction") => {
            let mut messages = Vec::with_capacity(2);
            if pi16 && js::truthy(EntryRef::new(entry).system_message()) {
                messages.extend(
                    EntryRef::new(entry)
                        .system_message()
                        .cloned()
                        .map(Built::Made),
                );
            }
            messages.push(Built::Made(compaction_summary(entry)));
            messages
        }
        _ => Vec::new(),
    };
    out.extend(messages);
}

/// pi 1.6: `null`/missing content becomes `""` (system) or `[]`
/// (user/assistant/toolResult); other roles stay as stored.
fn normalise_content(message: Value) -> Value {
    if !js::is_nullish(MessageRef::new(&message).content()) {
        return message;
    }
    let empty = match MessageRef::new(&message).role() {
        Some("system") => Value::from(""),
        Some("user" | "assistant" | "toolResult") => Value::Array(Vec::new()),
        _ => return message,
    };
    with_content(message, Some(empty))
}

/// `createBranchSummaryMessage` (identical in pi and omp).
pub(crate) fn branch_summary_message(entry: &Value) -> Value {
    js::object([
        ("role", Some(Value::from("branchSummary"))),
        ("summary", EntryRef::new(entry).summary().cloned()),
        ("fromId", EntryRef::new(entry).from_id().cloned()),
        (
            "timestamp",
            Some(js::date_ms_value(EntryRef::new(entry).timestamp())),
        ),
    ])
}
