//! rho's projection of a branch into req_llm messages (`Rho.Session.context/2`
//! and `messages/2`, rho-reqllm.md §A.8).
//!
//! Input: the entries of one branch, root first, as JSON objects (what the
//! file holds). Output: [`Message`]s that are always valid for a provider:
//! thinking is never sent back, empty and superseded assistant turns are
//! dropped, and every tool call gets a result.

use std::collections::HashSet;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use pi_session_tree::dialect::omp::blobs::parse_blob_ref;

use crate::documents::{DocumentSource, is_pdf};
use crate::projection::ProjectOptions;
use crate::reqllm::{ContentPart, Message, Role, SortedValue, ToolCall};
use pi_session_types::js::is_nullish;
use pi_session_types::js_string::JsString;
use pi_session_types::shallow::{Keys, ListedEntry};
use pi_session_types::value_read::{Element, Field, Listed, Members};
use pi_session_types::view::{AttachmentRef, BlockRef, EntryRef, MessageRef, key};

/// What rho reads of a `message` entry (its `type`, its `id`, which a compaction names, and
/// its `message`) and of the message (`Projector`'s rules and the summary's attachments:
/// `role`, `content`, `toolCallId`, `toolName`, `retryRecovery`, `attachments`), and of each
/// block of its content ([`BLOCK_KEYS_READ`]). A reader
/// may hand rho's projection a `message` entry cut down to these keys
/// ([`pi_session_types::shallow::entry_with_message_keys`]), or read as lists of them
/// ([`RhoEntry::from_listed`]): it projects the same.
pub const MESSAGE_KEYS: Keys = Keys {
    entry: &[key::TYPE, key::ID, key::MESSAGE],
    message: &MESSAGE_KEYS_READ,
    blocks: &BLOCK_KEYS_READ,
};

/// The keys of a content block rho reads ([`MESSAGE_KEYS`]`.blocks`; what [`RhoEntry`]
/// holds): a block's other members (a thinking block's text and signature: a fifth of the bytes
/// of the real sessions in the corpus) are stepped over, never decoded.
pub const BLOCK_KEYS_READ: [&str; 7] = [
    key::TYPE,
    key::TEXT,
    key::MIME_TYPE,
    key::DATA,
    key::ID,
    key::NAME,
    key::ARGUMENTS,
];

/// The keys of a message rho reads ([`MESSAGE_KEYS`]`.message`), as an array: a reader that
/// reads these and more makes its list from it ([`pi_session_types::shallow::with_key`]).
pub const MESSAGE_KEYS_READ: [&str; 6] = [
    key::ROLE,
    key::CONTENT,
    key::TOOL_CALL_ID,
    key::TOOL_NAME,
    key::RETRY_RECOVERY,
    key::ATTACHMENTS,
];

/// The result text rho gives a tool call that never got a result.
pub const ABORTED_TOOL_TEXT: &str = "Tool was not executed because the run was aborted.";

/// What a picture becomes for a model that takes no pictures.
pub const NO_PICTURES_NOTE: &str = "(The picture isn't sent: this model doesn't take pictures.)";

/// What an assistant reply that was only pictures projects as.
pub const MADE_A_PICTURE: &str = "(made a picture)";

/// The text before a compaction summary (omp's `compaction-summary-context.md`
/// as rho renders it).
pub const COMPACTION_CONTEXT_PREFIX: &str = "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\n";

/// The text after a compaction summary (no trailing newline).
pub const COMPACTION_CONTEXT_SUFFIX: &str = "\n</summary>";

/// The heading of the note listing attachments a summary took away.
pub const ATTACHMENTS_NOTE_HEADING: &str = "\n\nFiles the user attached before this summary (still in the workspace; read them again with file_read):\n";

/// The most bytes of PDF documents one request carries.
pub const MAX_DOCUMENT_BYTES: u64 = 20_000_000;

/// The most PDF pages one request carries.
pub const MAX_DOCUMENT_PAGES: u64 = 100;

/// Bytes per page assumed for a PDF whose page count is unknown.
pub const BYTES_PER_ESTIMATED_PAGE: u64 = 100_000;

/// What the model takes as input (`Rho.Models.inputs/1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inputs {
    /// Text (always on in practice).
    pub text: bool,
    /// Pictures.
    pub image: bool,
    /// PDF documents.
    pub pdf: bool,
}

impl Default for Inputs {
    /// rho's default: text and image.
    fn default() -> Self {
        Inputs {
            text: true,
            image: true,
            pdf: false,
        }
    }
}

/// A word in an inputs list that is not `text`, `image` or `pdf`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown input kind {0:?}: use a comma-separated list of text, image and pdf")]
pub struct UnknownInput(pub String);

impl std::str::FromStr for Inputs {
    type Err = UnknownInput;

    /// Parses `"text,image,pdf"` (any subset, any order).
    fn from_str(list: &str) -> Result<Self, Self::Err> {
        let mut inputs = Inputs {
            text: false,
            image: false,
            pdf: false,
        };
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "text" => inputs.text = true,
                "image" => inputs.image = true,
                "pdf" => inputs.pdf = true,
                other => return Err(UnknownInput(other.to_owned())),
            }
        }
        Ok(inputs)
    }
}

pub use pi_session_tree::{Compacted, compacted};

/// rho's `context/2`: with a compaction on the branch, one user message with
/// the summary (and the attachments it took away) first, then the messages
/// of the kept and later entries; without one, `messages(entries)`.
///
/// ```
/// use pi_session_context::{ProjectOptions, rho::context};
/// use serde_json::json;
/// let branch = vec![
///     json!({"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"old"}]}}),
///     json!({"type":"compaction","id":"c","summary":"S","firstKeptEntryId":"b"}),
///     json!({"type":"message","id":"d","message":{"role":"user","content":"new"}}),
/// ];
/// let out = context(&branch, &ProjectOptions::default());
/// assert_eq!(out.len(), 2);
/// assert!(out[0].text().ends_with("<summary>\nS\n</summary>"));
/// assert_eq!(out[1].text(), "new");
/// ```
pub fn context(entries: &[Value], options: &ProjectOptions<'_>) -> Vec<Message> {
    let split = compacted(entries);
    let rest: Vec<&Value> = entries[split.kept.clone()]
        .iter()
        .chain(&entries[split.later.clone()])
        .collect();
    let mut out: Vec<Message> = summary_message(entries, &split).into_iter().collect();
    out.extend(project(&rest, options));
    out
}

/// [`context`] a message at a time: `each` is given every message in order, so a caller
/// that writes them out as they come never holds the messages already sent. The entries are
/// borrowed: a caller about to end may leave them to the process's end instead of freeing
/// them piece by piece (what freeing the parsed entries cost was ~10% of the req_llm
/// formats' main thread at 200 MB). With
/// `options.inputs.pdf` (documents are chosen over the whole branch, newest first) the
/// messages are made first, then given. The first error of `each` ends the walk.
///
/// ```
/// use pi_session_context::{ProjectOptions, rho::{context, context_each}};
/// use serde_json::json;
/// let branch = vec![
///     json!({"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{}}]}}),
///     json!({"type":"message","id":"b","message":{"role":"user","content":"next"}}),
/// ];
/// let options = ProjectOptions::default();
/// let mut seen = Vec::new();
/// context_each(&branch, &options, |m| Ok::<_, ()>(seen.push(m))).unwrap();
/// assert_eq!(seen, context(&branch, &options)); // with rho's result for the aborted call
/// ```
pub fn context_each<E>(
    entries: &[Value],
    options: &ProjectOptions<'_>,
    mut each: impl FnMut(Message) -> Result<(), E>,
) -> Result<(), E> {
    let Some(mut parts) = ContextParts::new(options) else {
        return context(entries, options).into_iter().try_for_each(each);
    };
    parts.head(entries, [], &mut each)?;
    parts.finish(&mut each)
}

/// [`context_each`] of a branch read in parts, for a caller that reads a long branch a part
/// at a time and frees each part once its messages are given: [`head`](Self::head) takes the
/// branch up to its latest compaction (with the ids of the entries after it, which the
/// summary's attachments note reads), [`part`](Self::part) each later part in order, and
/// [`finish`](Self::finish) closes the calls still unanswered. The messages given are
/// [`context_each`]'s over the whole branch. The head may leave out the compaction's kept
/// range (then given in parts, its ids among those after the head) and any entry before it
/// that names no attachment: the summary is the same.
///
/// ```
/// use pi_session_context::{ProjectOptions, rho::{ContextParts, context}};
/// use serde_json::json;
/// let branch = vec![
///     json!({"type":"message","id":"a","message":{"role":"user","content":"old"}}),
///     json!({"type":"compaction","id":"c","summary":"S","firstKeptEntryId":"a"}),
///     json!({"type":"message","id":"d","message":{"role":"user","content":"new"}}),
/// ];
/// let options = ProjectOptions::default();
/// let mut parts = ContextParts::new(&options).unwrap();
/// let mut seen = Vec::new();
/// let mut each = |m| Ok::<_, ()>(seen.push(m));
/// parts.head(&branch[..2], [Some("d")], &mut each).unwrap();
/// parts.part(&branch[2..], &mut each).unwrap();
/// parts.finish(&mut each).unwrap();
/// assert_eq!(seen, context(&branch, &options));
/// ```
#[derive(Debug)]
pub struct ContextParts<'a> {
    stream: MessageStream<'a>,
    /// Messages made and not yet given (reused from entry to entry).
    out: Vec<Message>,
}

impl<'a> ContextParts<'a> {
    /// A projection with `options`; `None` when they take PDF documents (chosen over the whole
    /// branch, newest first: [`context`] alone can say).
    pub fn new(options: &'a ProjectOptions<'a>) -> Option<Self> {
        MessageStream::new(options).map(|stream| Self {
            stream,
            out: Vec::new(),
        })
    }

    /// Gives `each` the messages of `head`, the branch up to its latest compaction or further
    /// (the whole branch when it has none): the summary message first when it holds one, then
    /// the messages of the kept and later entries. `later_ids` are the ids of the branch's
    /// entries after `head` (the summary's note leaves out the attachments of an entry that
    /// shares an id with an entry sent).
    pub fn head<'e, E>(
        &mut self,
        head: &'e [Value],
        later_ids: impl IntoIterator<Item = Option<&'e str>>,
        each: &mut impl FnMut(Message) -> Result<(), E>,
    ) -> Result<(), E> {
        let split = compacted(head);
        if let Some(summary) = summary_with(head, &split, later_ids) {
            each(summary)?;
        }
        self.part(&head[split.kept.clone()], each)?;
        self.part(&head[split.later], each)
    }

    /// Gives `each` the messages of `entries`, the next entries of the branch after the head
    /// and the parts before (a compaction among them is not sent, as in [`context_each`]).
    pub fn part<E>(
        &mut self,
        entries: &[Value],
        each: &mut impl FnMut(Message) -> Result<(), E>,
    ) -> Result<(), E> {
        self.part_read(entries.iter().map(RhoEntry::from_value), each)
    }

    /// [`Self::part`] of entries read as rho reads them ([`RhoEntry`]: from their lines, no
    /// value made of them), their texts moved into the messages.
    pub fn part_read<E>(
        &mut self,
        entries: impl IntoIterator<Item = RhoEntry>,
        each: &mut impl FnMut(Message) -> Result<(), E>,
    ) -> Result<(), E> {
        for entry in entries {
            for message in self.stream.entry_read(entry) {
                self.stream.push(message, &mut self.out);
            }
            self.out.drain(..).try_for_each(&mut *each)?;
        }
        Ok(())
    }

    /// Gives `each` rho's results for the calls still unanswered at the end.
    pub fn finish<E>(mut self, each: &mut impl FnMut(Message) -> Result<(), E>) -> Result<(), E> {
        self.stream.finish(&mut self.out);
        self.out.into_iter().try_for_each(each)
    }
}

/// The first message of [`context`] when `split` (of `entries`) has a compaction: one user
/// message with the summary and the attachments it took away.
pub fn summary_message(entries: &[Value], split: &Compacted) -> Option<Message> {
    summary_with(entries, split, [])
}

/// [`summary_message`] of a branch whose entries after `entries` (all sent) have the ids
/// `later_ids`.
fn summary_with<'e>(
    entries: &'e [Value],
    split: &Compacted,
    later_ids: impl IntoIterator<Item = Option<&'e str>>,
) -> Option<Message> {
    let summary = split
        .compaction
        .and_then(|c| entries.get(c))
        .and_then(|c| EntryRef::new(c).summary())
        .and_then(Value::as_str)?;
    // The note names the attachments of user messages no longer sent: most often there are
    // none, and the ids of the entries sent (a set of hundreds) are not gathered at all.
    let attaching: Vec<&Value> = entries.iter().filter(|e| names_attachments(e)).collect();
    let note = if attaching.is_empty() {
        String::new()
    } else {
        let ids: HashSet<Option<&str>> = entries[split.kept.clone()]
            .iter()
            .chain(&entries[split.later.clone()])
            .map(|e| EntryRef::new(e).id())
            .chain(later_ids)
            .collect();
        attachments_note(
            attaching
                .into_iter()
                .filter(|e| !ids.contains(&EntryRef::new(e).id())),
        )
    };
    Some(Message::user_text(compaction_context(summary) + &note))
}

/// The summary text as pi/rho render it, with no trailing newline.
pub fn compaction_context(summary: &str) -> String {
    format!("{COMPACTION_CONTEXT_PREFIX}{summary}{COMPACTION_CONTEXT_SUFFIX}")
}

/// Whether `entry` is a user message whose attachments [`attachments_note`] would name.
fn names_attachments(entry: &Value) -> bool {
    user_message(entry).is_some_and(|m| !attachments_of(m).is_empty())
}

/// The message of `entry` when it is a user message.
fn user_message(entry: &Value) -> Option<MessageRef<'_>> {
    (kind(entry) == Some("message"))
        .then(|| EntryRef::new(entry).message_ref())
        .flatten()
        .filter(|m| m.is_role("user"))
}

/// The note listing the attachments of the user messages in `away`, or `""`
/// when there are none.
pub fn attachments_note<'a>(away: impl IntoIterator<Item = &'a Value>) -> String {
    let lines: Vec<String> = away
        .into_iter()
        .filter_map(user_message)
        .flat_map(attachments_of)
        .map(|a| {
            format!(
                "- {} ({}) at {}: {}",
                interpolate(a.name()),
                interpolate(a.mime_type()),
                interpolate(a.path()),
                interpolate(a.about())
            )
        })
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("{ATTACHMENTS_NOTE_HEADING}{}", lines.join("\n"))
    }
}

/// rho's `messages/2`: `message` and `custom_message` entries become req_llm
/// messages; every other entry is ignored; dangling tool calls are closed.
pub fn messages(entries: &[Value], options: &ProjectOptions<'_>) -> Vec<Message> {
    let entries: Vec<&Value> = entries.iter().collect();
    project(&entries, options)
}

/// [`messages`] of entries held elsewhere (a caller that sends some entries as they are and
/// others rendered gathers references, not copies).
pub fn messages_of(entries: &[&Value], options: &ProjectOptions<'_>) -> Vec<Message> {
    project(entries, options)
}

fn project(entries: &[&Value], options: &ProjectOptions<'_>) -> Vec<Message> {
    let chosen = if options.inputs.pdf {
        choose_documents(entries, options.documents)
    } else {
        HashSet::new()
    };
    let projector = Projector {
        options,
        chosen: &chosen,
    };
    close_dangling_calls(
        entries
            .iter()
            .filter_map(|e| projector.entry(RhoEntry::from_value(e)))
            .flatten(),
    )
}

/// rho's [`messages`] an entry at a time, for a caller that walks a long branch in chunks and
/// keeps none of it: [`entry`](Self::entry) projects one entry alone, [`push`](Self::push)
/// adds its messages to the output as [`messages`] would (closing the calls left unanswered
/// before the next message that is not a tool result), and [`finish`](Self::finish) closes
/// what is still open at the end. Pushing every entry's messages in order, then finishing,
/// gives exactly [`messages`] of all of them.
///
/// ```
/// use pi_session_context::rho::{MessageStream, messages};
/// use pi_session_context::ProjectOptions;
/// use serde_json::json;
/// let entries = vec![
///     json!({"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{}}]}}),
///     json!({"type":"message","id":"b","message":{"role":"user","content":"next"}}),
/// ];
/// let options = ProjectOptions::default();
/// let mut stream = MessageStream::new(&options).unwrap();
/// let mut out = Vec::new();
/// for entry in &entries {
///     for message in stream.entry(entry) {
///         stream.push(message, &mut out);
///     }
/// }
/// stream.finish(&mut out);
/// assert_eq!(out, messages(&entries, &options)); // with rho's result for the aborted call
/// ```
#[derive(Debug)]
pub struct MessageStream<'a> {
    options: &'a ProjectOptions<'a>,
    chosen: HashSet<String>,
    open: OpenCalls,
}

impl<'a> MessageStream<'a> {
    /// A stream projecting with `options`; `None` when they take PDF documents (which are
    /// chosen over the whole branch, newest first, so one entry alone cannot say).
    pub fn new(options: &'a ProjectOptions<'a>) -> Option<Self> {
        (!options.inputs.pdf).then(|| Self {
            options,
            chosen: HashSet::new(),
            open: OpenCalls::default(),
        })
    }

    /// The messages rho makes of `entry` alone, before unanswered calls are closed.
    pub fn entry(&self, entry: &Value) -> Vec<Message> {
        self.entry_read(RhoEntry::from_value(entry))
    }

    /// [`Self::entry`] of an entry read as rho reads it ([`RhoEntry`]), its texts moved into
    /// the messages.
    pub fn entry_read(&self, entry: RhoEntry) -> Vec<Message> {
        Projector {
            options: self.options,
            chosen: &self.chosen,
        }
        .entry(entry)
        .unwrap_or_default()
    }

    /// Adds `message` to `out`, after rho's results for the calls the messages before it left
    /// unanswered when it is not a tool result.
    pub fn push(&mut self, message: Message, out: &mut Vec<Message>) {
        self.open.push(message, out);
    }

    /// Adds rho's results for the calls still unanswered at the end.
    pub fn finish(mut self, out: &mut Vec<Message>) {
        self.open.close(out);
    }
}

/// rho's results for the calls `messages` leave unanswered (an aborted run): what
/// [`MessageStream::push`] and [`MessageStream::finish`] add among these messages, without
/// the messages themselves.
///
/// ```
/// use pi_session_context::rho::{MessageStream, aborted_results};
/// use pi_session_context::ProjectOptions;
/// use serde_json::json;
/// let entry = json!({"type":"message","id":"a","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"read","arguments":{}}]}});
/// let options = ProjectOptions::default();
/// let stream = MessageStream::new(&options).unwrap();
/// let results = aborted_results(&stream.entry(&entry));
/// assert_eq!(results.len(), 1);
/// assert_eq!(results[0].tool_call_id.as_deref(), Some("c"));
/// ```
pub fn aborted_results<'m>(messages: impl IntoIterator<Item = &'m Message>) -> Vec<Message> {
    let mut open = OpenCalls::default();
    let mut out = Vec::new();
    for message in messages {
        open.note(message, &mut out);
    }
    open.close(&mut out);
    out
}

/// The calls of the latest assistant message that no tool result has answered yet.
#[derive(Debug, Default)]
struct OpenCalls(Vec<(String, Option<String>)>);

impl OpenCalls {
    fn push(&mut self, message: Message, out: &mut Vec<Message>) {
        self.note(&message, out);
        out.push(message);
    }

    /// Takes `message` into account: adds to `out` rho's results for the calls it closes
    /// (any but a tool result closes those still open), not the message itself.
    fn note(&mut self, message: &Message, out: &mut Vec<Message>) {
        if message.role == Role::Tool {
            if let Some(id) = &message.tool_call_id {
                self.0.retain(|(open_id, _)| open_id != id);
            }
            return;
        }
        self.close(out);
        self.0 = message
            .tool_calls
            .iter()
            .flatten()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
    }

    /// rho's result for each open call (the run was aborted).
    fn close(&mut self, out: &mut Vec<Message>) {
        for (id, name) in self.0.drain(..) {
            out.push(Message::tool_result(
                id,
                name,
                vec![ContentPart::text(ABORTED_TOOL_TEXT)],
            ));
        }
    }
}

struct Projector<'a> {
    options: &'a ProjectOptions<'a>,
    chosen: &'a HashSet<String>,
}

impl Projector<'_> {
    fn entry(&self, entry: RhoEntry) -> Option<Vec<Message>> {
        match entry.0 {
            Read::Message(message) => {
                let message = message?;
                match message.role.as_deref()? {
                    "user" | "developer" => self.user(message).map(|m| vec![m]),
                    "assistant" => assistant(message).map(|m| vec![m]),
                    "toolResult" => Some(vec![self.tool_result(message)]),
                    _ => None,
                }
            }
            Read::Custom(content) => {
                let text = content.map(Content::text).unwrap_or_default();
                (!text.is_empty()).then(|| vec![Message::user_text(text)])
            }
            Read::Other => None,
        }
    }

    fn user(&self, message: RhoMessage) -> Option<Message> {
        let mut parts: Vec<ContentPart> = Vec::new();
        for item in message.content.map(Content::items).unwrap_or_default() {
            match item {
                Item::Text(text) if !text.is_empty() => parts.push(ContentPart::text(text)),
                Item::Block(block) => match block.kind.as_deref() {
                    Some("text") => {
                        let text = block.into_text();
                        if !text.is_empty() {
                            parts.push(ContentPart::text(text));
                        }
                    }
                    Some("image") => parts.extend(self.picture(&block)),
                    _ => {}
                },
                _ => {}
            }
        }
        if self.options.inputs.pdf {
            parts.extend(self.pdf_parts(message.attachments.as_ref()));
        }
        match parts.len() {
            0 => None,
            _ => Some(Message::user(parts)),
        }
    }

    /// A picture part: dropped without a `mimeType` (a provider rejects an
    /// image without a media type, and no note stands for it either); the
    /// no-pictures note when the model takes none.
    fn picture(&self, block: &Block) -> Option<ContentPart> {
        let mime = block.mime_type.as_ref().and_then(Value::as_str)?.to_owned();
        if !self.options.inputs.image {
            return Some(ContentPart::text(NO_PICTURES_NOTE));
        }
        let data = block.data.as_ref().and_then(Value::as_str)?;
        let bytes = match (parse_blob_ref(data), self.options.blobs) {
            (Some(hash), Some(blobs)) => blobs.read_blob(hash).ok()??,
            _ => STANDARD.decode(data).ok()?,
        };
        Some(ContentPart::image(bytes, Some(mime)))
    }

    fn pdf_parts(&self, attachments: Option<&Value>) -> Vec<ContentPart> {
        attachments_in(attachments)
            .iter()
            .filter(|a| a.kind().and_then(Value::as_str) == Some("pdf"))
            .map(|a| {
                let name = interpolate(a.name());
                let path = interpolate(a.path());
                let gone = || ContentPart::text(format!("({name} is no longer at {path}.)"));
                if self.options.documents.size(&path).is_none() {
                    return gone();
                }
                if !self.chosen.contains(&path) {
                    return ContentPart::text(format!(
                        "({name} isn't sent as a document this time: newer documents fill the request. It's at {path}.)"
                    ));
                }
                match self.options.documents.read(&path) {
                    // Only a PDF goes out as a PDF: anything else at that path
                    // (a key file renamed `.pdf`, a swapped file) stays home.
                    Some(bytes) if !is_pdf(&bytes) => ContentPart::text(format!(
                        "({name} at {path} is not a PDF, so it isn't sent.)"
                    )),
                    Some(bytes) => {
                        let mut metadata = Map::new();
                        metadata.insert("pages".into(), a.pages().cloned().unwrap_or(Value::Null));
                        ContentPart::file(bytes, name.clone(), "application/pdf", metadata)
                    }
                    None => gone(),
                }
            })
            .collect()
    }

    fn tool_result(&self, message: RhoMessage) -> Message {
        // rho's `text/1` of the content, and its pictures in order.
        let mut images: Vec<ContentPart> = Vec::new();
        let text = message.content.map_or_else(JsString::default, |content| {
            content.split(|block| {
                if block.kind.as_deref() == Some("image") {
                    images.extend(self.picture(&block));
                }
            })
        });
        let mut content = vec![ContentPart::text(text)];
        content.extend(images);
        let mut result = Message::tool_result(
            interpolate(message.tool_call_id.as_ref()),
            message
                .tool_name
                .as_ref()
                .and_then(Value::as_str)
                .map(str::to_owned),
            content,
        );
        // A result without a call id projects with `tool_call_id: nil`, as
        // rho's `m["toolCallId"]` gives.
        if is_nullish(message.tool_call_id.as_ref()) {
            result.tool_call_id = None;
        }
        result
    }
}

fn assistant(message: RhoMessage) -> Option<Message> {
    if message.retry_recovery {
        return None;
    }
    let mut calls: Vec<ToolCall> = Vec::new();
    let mut made_pictures = false;
    let mut text = message.content.map_or_else(JsString::default, |content| {
        content.split(|block| match block.kind.as_deref() {
            Some("toolCall") => calls.push(ToolCall {
                id: interpolate(block.id.as_ref()),
                name: match &block.name {
                    None | Some(Value::Null) => None,
                    name => Some(interpolate(name.as_ref())),
                },
                arguments: encode_arguments(block.arguments.as_ref()),
            }),
            Some("image") => made_pictures = true,
            _ => {}
        })
    });
    if text.is_empty() && made_pictures {
        text = MADE_A_PICTURE.into();
    }
    if text.is_empty() && calls.is_empty() {
        return None;
    }
    Some(Message::assistant(text, calls))
}

/// `Jason.encode!(arguments || %{})`: keys sorted at every level.
fn encode_arguments(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) | Some(Value::Bool(false)) => "{}".to_owned(),
        // Written as it is read, its keys sorted on the way: no sorted copy made.
        // A JSON value always serialises (its keys are strings): the default is never taken.
        Some(other) => serde_json::to_string(&SortedValue(other)).unwrap_or_default(),
    }
}

/// Inserts the synthetic aborted result for every call still open when the
/// next non-tool message comes (or the list ends), in call order.
fn close_dangling_calls(projected: impl Iterator<Item = Message>) -> Vec<Message> {
    let mut out = Vec::new();
    let mut open = OpenCalls::default();
    for message in projected {
        open.push(message, &mut out);
    }
    open.close(&mut out);
    out
}

/// The PDF paths that go into this request as documents: user messages
/// newest first, their PDFs last first, while the running totals stay within
/// [`MAX_DOCUMENT_BYTES`] and [`MAX_DOCUMENT_PAGES`]. A PDF that does not fit
/// is skipped and older ones are still tried.
fn choose_documents(entries: &[&Value], documents: &dyn DocumentSource) -> HashSet<String> {
    let mut chosen = HashSet::new();
    let (mut bytes, mut pages) = (0u64, 0u64);
    let user_messages = entries
        .iter()
        .rev()
        .filter(|e| kind(e) == Some("message"))
        .filter_map(|e| EntryRef::new(e).message_ref())
        .filter(|m| m.is_role("user"));
    for message in user_messages {
        for attachment in attachments_of(message).iter().rev() {
            if attachment.kind().and_then(Value::as_str) != Some("pdf") {
                continue;
            }
            let path = interpolate(attachment.path());
            let Some(size) = documents.size(&path) else {
                continue;
            };
            let doc_pages = attachment
                .pages()
                .and_then(Value::as_u64)
                .unwrap_or_else(|| (size / BYTES_PER_ESTIMATED_PAGE).max(1));
            if bytes + size <= MAX_DOCUMENT_BYTES && pages + doc_pages <= MAX_DOCUMENT_PAGES {
                bytes += size;
                pages += doc_pages;
                chosen.insert(path);
            }
        }
    }
    chosen
}

/// An entry of a branch as rho's projection reads it: of a `message`, the keys of its message
/// rho reads ([`MESSAGE_KEYS_READ`]) with its content's items; of a `custom_message`, its
/// content; of any other entry, nothing (rho sends nothing of it). Made from the entry's value
/// ([`Self::from_value`]) or from its line read as lists of members, no map made of the
/// message or its blocks ([`Self::from_listed`]); rho's projection gives the same messages of
/// both ([`MessageStream::entry_read`], [`ContextParts::part_read`]).
///
/// ```
/// use pi_session_context::ProjectOptions;
/// use pi_session_context::rho::{MESSAGE_KEYS, MessageStream, RhoEntry};
/// use pi_session_types::shallow::listed_entry_with_message_keys;
/// let line = br#"{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}"#;
/// let (listed, _) = listed_entry_with_message_keys(line, &MESSAGE_KEYS).unwrap();
/// let read = RhoEntry::from_listed(listed).unwrap();
/// let value: serde_json::Value = serde_json::from_slice(line).unwrap();
/// assert_eq!(read, RhoEntry::from_value(&value));
/// let options = ProjectOptions::default();
/// let stream = MessageStream::new(&options).unwrap();
/// assert_eq!(stream.entry_read(read), stream.entry(&value));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RhoEntry(Read);

/// What [`RhoEntry`] holds.
#[derive(Debug, Clone, PartialEq)]
enum Read {
    /// A `message` entry: its message, when that is an object.
    Message(Option<RhoMessage>),
    /// A `custom_message` entry: its `content`.
    Custom(Option<Content>),
    /// Any other entry.
    Other,
}

/// The keys of a message rho reads.
#[derive(Debug, Clone, PartialEq, Default)]
struct RhoMessage {
    /// `role`, when it is a string.
    role: Option<String>,
    content: Option<Content>,
    tool_call_id: Option<Value>,
    tool_name: Option<Value>,
    /// Whether it holds `retryRecovery` (any value).
    retry_recovery: bool,
    attachments: Option<Value>,
}

/// A message's (or a custom message's) `content`.
#[derive(Debug, Clone, PartialEq)]
enum Content {
    /// A string.
    Text(JsString),
    /// An array.
    Items(Vec<Item>),
    /// Anything else.
    Other,
}

/// An item of a content array.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    /// A string.
    Text(JsString),
    /// An object.
    Block(Block),
    /// Anything else.
    Other,
}

/// The keys of a content block rho reads, each as the block holds it (the last, for a key
/// written twice, as `serde_json`'s map keeps it).
#[derive(Debug, Clone, PartialEq, Default)]
struct Block {
    /// `type`, when it is a string.
    kind: Option<String>,
    text: Option<Field>,
    mime_type: Option<Value>,
    data: Option<Value>,
    id: Option<Value>,
    name: Option<Value>,
    arguments: Option<Value>,
}

impl RhoEntry {
    /// The entry `entry` (a JSON value, as a branch's entries are held) as rho reads it; its
    /// strings copied.
    pub fn from_value(entry: &Value) -> Self {
        let view = EntryRef::new(entry);
        Self(match view.kind() {
            Some("message") => Read::Message(view.message_ref().map(RhoMessage::of_ref)),
            Some("custom_message") => Read::Custom(
                view.content()
                    .map(|content| Content::of_value(content, Block::of_map)),
            ),
            _ => Read::Other,
        })
    }

    /// A `message` entry read from its line as lists of members
    /// ([`pi_session_types::shallow::listed_entry_with_message_keys`] with [`MESSAGE_KEYS`]),
    /// its values moved in; `None` when the line's entry is not a `message` (or its keys are
    /// not [`MESSAGE_KEYS`]'s, which a reader cannot tell apart from a message without them).
    pub fn from_listed(listed: ListedEntry) -> Option<Self> {
        let kind = listed
            .entry
            .iter()
            .rev()
            .find(|(name, _)| *name == key::TYPE);
        if kind.and_then(|(_, kind)| kind.as_str()) != Some("message") {
            return None;
        }
        let mut message = RhoMessage {
            content: listed.content.map(Content::of_listed),
            ..RhoMessage::default()
        };
        for (name, value) in listed.message {
            match name {
                key::ROLE => message.role = into_string(value),
                key::TOOL_CALL_ID => message.tool_call_id = Some(value),
                key::TOOL_NAME => message.tool_name = Some(value),
                key::RETRY_RECOVERY => message.retry_recovery = true,
                key::ATTACHMENTS => message.attachments = Some(value),
                // The content comes apart; a list of other keys is not rho's.
                _ => return None,
            }
        }
        Some(Self(Read::Message(Some(message))))
    }
}

impl RhoMessage {
    fn of_ref(message: MessageRef<'_>) -> Self {
        Self {
            role: message.role().map(str::to_owned),
            content: message
                .content()
                .map(|content| Content::of_value(content, Block::of_map)),
            tool_call_id: message.tool_call_id().cloned(),
            tool_name: message.tool_name().cloned(),
            retry_recovery: message.retry_recovery().is_some(),
            attachments: message.attachments().cloned(),
        }
    }
}

impl Content {
    /// `content` as rho reads it, each block read by `block`.
    fn of_value(content: &Value, block: fn(&Map<String, Value>) -> Block) -> Self {
        match content {
            Value::String(text) => Content::Text(text.into()),
            Value::Array(items) => Content::Items(
                items
                    .iter()
                    .map(|item| match item {
                        Value::String(text) => Item::Text(text.into()),
                        Value::Object(map) => Item::Block(block(map)),
                        _ => Item::Other,
                    })
                    .collect(),
            ),
            _ => Content::Other,
        }
    }

    /// A content read with its blocks as lists of members, moved in.
    fn of_listed(content: Listed) -> Self {
        match content {
            Listed::Array(items) => Content::Items(
                items
                    .into_iter()
                    .map(|item| match item {
                        Element::Object(members) => Item::Block(Block::of_members(members)),
                        Element::Other(Field::Text(text)) => Item::Text(text),
                        Element::Other(Field::Other(_)) => Item::Other,
                    })
                    .collect(),
            ),
            Listed::Other(Field::Text(text)) => Content::Text(text),
            Listed::Other(Field::Other(other)) => Content::of_value(&other, Block::of_map),
        }
    }

    /// The items of the content: a string content is one item.
    fn items(self) -> Vec<Item> {
        match self {
            Content::Text(text) => vec![Item::Text(text)],
            Content::Items(items) => items,
            Content::Other => Vec::new(),
        }
    }

    /// rho's `text/1`: a string as is; the `text` of every text block, concatenated;
    /// otherwise `""`.
    fn text(self) -> JsString {
        self.split(|_| {})
    }

    /// [`Content::text`], handing every block that is not a text block to `other`, in order
    /// (the projections read pictures and tool calls from them). The first text is taken as
    /// it is, not copied.
    fn split(self, mut other: impl FnMut(Block)) -> JsString {
        match self {
            Content::Text(text) => text,
            Content::Items(items) => {
                let mut text = JsString::default();
                for block in items.into_iter().filter_map(Item::into_block) {
                    if block.kind.as_deref() != Some("text") {
                        other(block);
                    } else if text.is_empty() {
                        text = block.into_text();
                    } else {
                        text.push(&block.into_text());
                    }
                }
                text
            }
            Content::Other => JsString::default(),
        }
    }
}

impl Item {
    fn into_block(self) -> Option<Block> {
        match self {
            Item::Block(block) => Some(block),
            _ => None,
        }
    }
}

impl Block {
    /// The keys rho reads of a block `map`.
    fn of_map(map: &Map<String, Value>) -> Self {
        let view = BlockRef::new(map);
        Self {
            kind: view.kind().map(str::to_owned),
            text: view.text().cloned().map(Field::from),
            mime_type: view.mime_type().cloned(),
            data: view.data().cloned(),
            id: view.id().cloned(),
            name: view.name().cloned(),
            arguments: view.arguments().cloned(),
        }
    }

    /// The keys [`Content::text`] reads of a block `map` (its type and text).
    fn text_of_map(map: &Map<String, Value>) -> Self {
        let view = BlockRef::new(map);
        Self {
            kind: view.kind().map(str::to_owned),
            text: view.text().cloned().map(Field::from),
            ..Self::default()
        }
    }

    /// The keys rho reads of a block listed as its `members`, moved in (a key written twice
    /// gives its later value, as a map of them holds).
    fn of_members(members: Members) -> Self {
        let mut block = Self::default();
        for (name, value) in members {
            match &*name {
                key::TYPE => block.kind = into_string(value.into_value()),
                key::TEXT => block.text = Some(value),
                key::MIME_TYPE => block.mime_type = Some(value.into_value()),
                key::DATA => block.data = Some(value.into_value()),
                key::ID => block.id = Some(value.into_value()),
                key::NAME => block.name = Some(value.into_value()),
                key::ARGUMENTS => block.arguments = Some(value.into_value()),
                _ => {}
            }
        }
        block
    }

    /// The block's text as rho's `text/1` takes it: a string as is, anything else
    /// interpolated.
    fn into_text(self) -> JsString {
        match self.text {
            Some(Field::Text(text)) => text,
            other => interpolate(other.map(Field::into_value).as_ref()).into(),
        }
    }
}

/// The string `value` holds, moved out of it.
fn into_string(value: Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text),
        _ => None,
    }
}

fn kind(entry: &Value) -> Option<&str> {
    EntryRef::new(entry).kind()
}

/// rho's `text/1`: a string as is; the `text` of every text part of a list,
/// concatenated; otherwise `""`.
pub fn text(content: Option<&Value>) -> String {
    content
        .map(|content| {
            Content::of_value(content, Block::text_of_map)
                .text()
                .into_string()
        })
        .unwrap_or_default()
}

/// rho's `attachments/1` of a message's `attachments`. Its records' own keys (`kind`, `name`,
/// `mimeType`, `path`, `about`, `pages`) are rho's attachment schema, read only in this file.
fn attachments_in(attachments: Option<&Value>) -> Vec<AttachmentRef<'_>> {
    match attachments {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_object)
            .map(AttachmentRef::new)
            .collect(),
        _ => Vec::new(),
    }
}

/// rho's `attachments/1` on a message.
fn attachments_of<'a>(message: MessageRef<'a>) -> Vec<AttachmentRef<'a>> {
    attachments_in(message.attachments())
}

/// Elixir string interpolation of a decoded JSON value: `nil` (or a missing
/// key) is `""`, a string is itself, anything else its JSON text.
fn interpolate(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}
