//! The agent and llm contexts as JSON text, each message a rule sends unchanged copied from the
//! file instead of printed again (and, where the dialect's rules read only a few keys of such a
//! message, never parsed beyond those keys).
//!
//! pi and omp write their lines with `JSON.stringify`, so the bytes of a `message` entry's
//! `message` are, almost always, exactly what printing the parsed message gives. Where
//! [`is_js_canonical`] says so, and nothing rewrote the message on the way (the dialect's
//! load-time rewrites: [`may_rewrite_message_line`]; a build rule: [`Built::Made`]; omp's or
//! pi's `convertToLlm`: an owned [`Cow`]), the text is copied; everything else is printed from
//! the parsed value. The bytes are taken in the same read as the entry's body; when the
//! dialect's `buildSessionContext` reads only a few keys of a message it sends unchanged
//! ([`message_keys`]: pi 0.73's role, provider and model) and, for llm, `convertToLlm` passes
//! its role through as it is ([`ConvertToLlm::passes_unchanged`]), the copied message is
//! parsed as those keys only ([`entry_with_message_keys`]). The result is byte-equal to
//! printing [`Session::project_at`]'s value (tested on every fixture, each leaf and dialect).

use std::borrow::Cow;
use std::cell::RefCell;

use pi_session_context::dialect::{ConvertToLlm, convert_to_llm};
use pi_session_context::projection::Format;
use pi_session_context::{llm_message, rho};
use pi_session_store::IndexEntry;
use pi_session_tree::built::{Built, agent_context_prepared_indexed};
use pi_session_tree::context::{may_rewrite_message_line, message_keys};
use pi_session_tree::source::context_path_positioned;
use pi_session_tree::{ContextOptions, Dialect, EntrySource, LeafSelector, NodeInfo};
use pi_session_types::JsonValue;
use pi_session_types::json::{is_js_canonical, to_js_vec, top_level_members, value_to_js_vec};
use pi_session_types::shallow::{Keys, canonical_entry_with_message_keys, entry_with_message_keys};
use pi_session_types::view::{EntryRef, MessageRef};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::session::{Log, LogSource, Session};

/// How the printed context of [`Pi`](pi_session_tree::PiContext) and
/// [`Omp`](pi_session_tree::OmpContext) starts when it has no messages (`messages` is the first
/// key of both).
const NO_MESSAGES: &[u8] = b"{\"messages\":[]";

/// One message of a context as [`Session::context_each_at`] hands it out.
#[derive(Debug, Clone, Copy)]
pub enum SentMessage<'a> {
    /// Its compact JSON text, copied from the file: what [`to_js_vec`] prints for it.
    Written(&'a [u8]),
    /// The message, to print.
    Value(&'a JsonValue),
}

impl SentMessage<'_> {
    /// The message as compact JSON text (the copy, or the value printed).
    pub fn to_compact(&self) -> Result<Cow<'_, [u8]>> {
        match self {
            Self::Written(text) => Ok(Cow::Borrowed(text)),
            Self::Value(value) => Ok(Cow::Owned(value_to_js_vec(value))),
        }
    }
}

impl Session {
    /// `format` ([`Format::Agent`] or [`Format::Llm`]) of `dialect` at `leaf` as compact JSON
    /// text, exactly [`to_js_vec`] of what [`Self::project_at`] gives, with the same
    /// diagnostics; `options.blobs` resolves omp's blob pictures. Each message sent as the file
    /// holds it is copied from the file's bytes when they are already what `JSON.stringify`
    /// prints ([`is_js_canonical`]), not printed again; only the bodies the context needs are
    /// read, and no value of the whole answer is built ([`Self::context_each_at`]).
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Format, ProjectOptions, Session, UserOptions, user};
    /// use pi_session::tree::{ContextOptions, Dialect, LeafSelector};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let leaf = LeafSelector::Default;
    /// let (text, _) = session.context_json_at(&leaf, Format::Llm, Dialect::PI, &ContextOptions::default())?;
    /// let options = ProjectOptions { dialect: Dialect::PI, ..ProjectOptions::default() };
    /// let (value, _) = session.project_at(&leaf, Format::Llm, &options)?;
    /// assert_eq!(text, pi_session_types::json::to_js_vec(&value).unwrap());
    /// # Ok(()) }
    /// ```
    pub fn context_json_at(
        &self,
        leaf: &LeafSelector,
        format: Format,
        dialect: Dialect,
        options: &ContextOptions<'_>,
    ) -> Result<(Vec<u8>, Vec<Diagnostic>)> {
        let mut out = Vec::new();
        out.extend_from_slice(match format {
            Format::Llm => b"[",
            _ => b"{\"messages\":[",
        });
        let mut first = true;
        let (rest, diagnostics) =
            self.context_each_at(leaf, format, dialect, options, |message| {
                if !first {
                    out.push(b',');
                }
                first = false;
                out.extend_from_slice(&message.to_compact()?);
                Ok::<(), Error>(())
            })?;
        out.push(b']');
        out.extend_from_slice(&rest);
        Ok((out, diagnostics))
    }

    /// [`Self::context_json_at`] a message at a time: `each` is handed the messages in order
    /// (copied from the file, or to print), and what is returned is the compact text that
    /// follows the messages' array in the answer: for [`Format::Agent`], the context's other
    /// keys and its closing brace (`,"thinkingLevel":"off","model":null}`); for [`Format::Llm`],
    /// nothing (the answer is the array). So a writer that streams the messages never holds
    /// the text of the whole answer.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Format, Session, UserOptions, user};
    /// use pi_session::tree::{ContextOptions, Dialect, LeafSelector};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let mut texts = Vec::new();
    /// let (rest, _) = session.context_each_at(
    ///     &LeafSelector::Default,
    ///     Format::Agent,
    ///     Dialect::PI,
    ///     &ContextOptions::default(),
    ///     |message| {
    ///         texts.push(message.to_compact()?.into_owned());
    ///         Ok::<(), pi_session::Error>(())
    ///     },
    /// )?;
    /// assert_eq!(texts.len(), 1);
    /// assert!(rest.starts_with(br#","thinkingLevel":"off""#));
    /// # Ok(()) }
    /// ```
    pub fn context_each_at<E: From<Error>>(
        &self,
        leaf: &LeafSelector,
        format: Format,
        dialect: Dialect,
        options: &ContextOptions<'_>,
        each: impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(Vec<u8>, Vec<Diagnostic>), E> {
        self.context_each_leaving(leaf, format, dialect, options, each)
            .map(|(rest, diagnostics, _)| (rest, diagnostics))
    }

    /// [`Self::context_each_at`], handing back what the context was built from
    /// ([`ContextLeftovers`]: an entry and a copy per message sent) instead of freeing it, for
    /// a caller about to end (a process gives its memory back whole, not piece by piece).
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Format, Session, UserOptions, user};
    /// use pi_session::tree::{ContextOptions, Dialect, LeafSelector};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let mut count = 0;
    /// let (_, _, leftovers) = session.context_each_leaving(
    ///     &LeafSelector::Default,
    ///     Format::Llm,
    ///     Dialect::PI,
    ///     &ContextOptions::default(),
    ///     |_| {
    ///         count += 1;
    ///         Ok::<(), pi_session::Error>(())
    ///     },
    /// )?;
    /// // The model set when the session was made, and the message.
    /// assert_eq!((count, leftovers.entries()), (1, 2));
    /// std::mem::forget(leftovers); // the process ends here
    /// # Ok(()) }
    /// ```
    pub fn context_each_leaving<E: From<Error>>(
        &self,
        leaf: &LeafSelector,
        format: Format,
        dialect: Dialect,
        options: &ContextOptions<'_>,
        each: impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(Vec<u8>, Vec<Diagnostic>, ContextLeftovers), E> {
        if !matches!(format, Format::Agent | Format::Llm) {
            return Err(Error::invalid_input(format!(
                "context_json_at writes the agent and llm formats, not {format:?}: use project_at"
            ))
            .into());
        }
        let llm = format == Format::Llm;
        let keys = message_keys(dialect);
        let log = self.log();
        let mut branch = log.index.branch_for(leaf);
        let source = CopyingSource {
            log: &log,
            reader: LineReader {
                keys,
                copy: Some(CopyRule {
                    dialect,
                    blobs: options.blobs.is_some(),
                }),
            },
            // A copy spares printing (llm) or parsing (a dialect that reads a few keys);
            // otherwise the agent's messages are printed from the values read anyway.
            copy: llm || keys.is_some(),
            convert: llm.then(|| convert_to_llm(dialect)),
            copies: RefCell::new(Vec::new()),
        };
        let (from, mut path) =
            context_path_positioned(&source, &log.index, &branch.positions, dialect)?;
        let mut by_position = source.copies.into_inner();
        drop(log);
        // Sorted by position, a later copy of a position after an earlier one (a stable sort).
        if !by_position.is_sorted_by_key(|(position, _)| *position) {
            by_position.sort_by_key(|(position, _)| *position);
        }
        let copies: Vec<Option<Copied>> = from
            .iter()
            .map(|position| position.and_then(|p| take_copy(&mut by_position, p)))
            .collect();
        drop(by_position);
        let (context, built, mut diagnostics) =
            agent_context_prepared_indexed(&mut path, dialect, options);
        branch.diagnostics.append(&mut diagnostics);
        let sent = Sent {
            path: &path,
            built: &built,
            copies: &copies,
        };
        let rest = if llm {
            sent.llm(dialect, each)?;
            Vec::new()
        } else {
            sent.agent(&context, each)?
        };
        let leftovers = ContextLeftovers {
            path,
            built,
            copies,
            context,
        };
        Ok((rest, self.located(branch.diagnostics), leftovers))
    }
}

/// What [`Session::context_each_leaving`] built a context from: the branch's entries as read,
/// the built messages and the copies of those sent as written. Dropping it frees them; a
/// caller about to exit may `std::mem::forget` it instead.
pub struct ContextLeftovers {
    path: Vec<JsonValue>,
    built: Vec<Built>,
    copies: Vec<Option<Copied>>,
    context: pi_session_tree::AgentContext,
}

impl ContextLeftovers {
    /// How many entries of the branch were read.
    pub fn entries(&self) -> usize {
        self.path.len()
    }
}

impl std::fmt::Debug for ContextLeftovers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextLeftovers")
            .field("entries", &self.path.len())
            .field("messages", &self.built.len())
            .field("copies", &self.copies.iter().flatten().count())
            .field("context", &self.context)
            .finish()
    }
}

/// Takes the copy last read at `position` out of `copies`, sorted by position (stable): a
/// binary search, no hash (a table keyed by position hashed each of the chain's 100k copies
/// twice, ~4% of its context).
fn take_copy(copies: &mut [(usize, Option<Copied>)], position: usize) -> Option<Copied> {
    let end = copies.partition_point(|(at, _)| *at <= position);
    let (at, copy) = copies.get_mut(end.checked_sub(1)?)?;
    if *at == position { copy.take() } else { None }
}

impl Session {
    /// rho's part of the branch at `positions` (file order positions, root first): only the
    /// entries req_llm and the provider formats built on it read
    /// ([`pi_session_tree::source::rho_sent_path`]); bodies nothing sends are left unread and
    /// their entries out, and a `message` entry is read as the keys rho reads of it
    /// ([`rho::MESSAGE_KEYS`]: the rest of its line is skipped, never built). Nothing is kept.
    pub(crate) fn rho_values_at(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        let log = self.log();
        let source = CopyingSource {
            log: &log,
            reader: LineReader {
                keys: Some(&rho::MESSAGE_KEYS),
                copy: None,
            },
            copy: true,
            convert: None,
            copies: RefCell::new(Vec::new()),
        };
        pi_session_tree::source::rho_sent_path(&source, &log.index, positions)
    }
}

/// A `message` entry's message as its line holds it: the bytes, and whether the entry read
/// holds only the keys the rules read of it (then the bytes are the only whole copy).
struct Copied {
    text: Vec<u8>,
    shallow: bool,
}

/// The log as the tree's entry source for [`Session::context_each_at`] and rho's formats
/// ([`Session::rho_values_at`]): a `message` line is read as the rules' keys only where they
/// read no other, and a line whose message may be copied ([`message_as_written`]) gives its
/// bytes in the same read as its body; every other entry is read as [`Log::values_at`] reads
/// it.
struct CopyingSource<'a> {
    log: &'a Log,
    reader: LineReader,
    /// Whether to read `message` lines through `reader` at all (for copies or for a shallow
    /// value).
    copy: bool,
    /// For llm: the conversion, which must pass a shallow message's role through unchanged.
    convert: Option<&'static dyn ConvertToLlm>,
    /// The copies taken, with their positions, in the order they were read.
    copies: RefCell<Vec<(usize, Option<Copied>)>>,
}

/// What is read of one line by [`CopyingSource`] (on the store's reading threads).
#[derive(Clone, Copy)]
struct LineReader {
    /// What the rules read of a `message` entry ([`message_keys`], [`rho::MESSAGE_KEYS`]).
    keys: Option<&'static Keys>,
    /// When messages are copied, which rewrites may touch one; `None`: no copy is taken (a
    /// `message` line is read as `keys` only, or the ordinary way).
    copy: Option<CopyRule>,
}

/// Whether a message is sent as its line holds it ([`Self::as_written`]).
#[derive(Clone, Copy)]
struct CopyRule {
    dialect: Dialect,
    blobs: bool,
}

impl CopyRule {
    /// Whether `message`, found in `line`, is sent as written: no load-time rewrite of the
    /// dialect may touch it, and its bytes are `JSON.stringify`'s.
    fn as_written(self, line: &[u8], message: &[u8]) -> bool {
        !may_rewrite_message_line(self.dialect, line, self.blobs) && is_js_canonical(message)
    }

    /// [`Self::as_written`] for a message read from `line`, when `canonical` says the whole
    /// line was found to be `JSON.stringify`'s (so is the message within it).
    fn sent_as_written(self, line: &[u8], message: &[u8], canonical: bool) -> bool {
        if canonical {
            !may_rewrite_message_line(self.dialect, line, self.blobs)
        } else {
            self.as_written(line, message)
        }
    }
}

impl LineReader {
    /// One line of a `message` entry: its value (the rules' keys of its message only, when
    /// they read no other) and the copy of its message when copies are taken, or `None` to
    /// read it the ordinary way.
    fn read(self, entry: &IndexEntry, line: &[u8]) -> Option<(JsonValue, Option<Copied>)> {
        // When copies are taken, a line spelled as `JSON.stringify` spells it is read and
        // checked in one pass; any other may still hold a message spelled so.
        let shallow = self.keys.and_then(|keys| match self.copy {
            Some(_) => canonical_entry_with_message_keys(line, keys)
                .map(|read| (read, true))
                .or_else(|| entry_with_message_keys(line, keys).map(|read| (read, false))),
            None => entry_with_message_keys(line, keys).map(|read| (read, false)),
        });
        if let Some(((value, message), canonical)) = shallow {
            // The entry indexed here (as the store checks before it serves a line as parsed),
            // sent as written when copies are taken.
            let envelope = EntryRef::new(&value);
            let same_entry = entry.envelope.kind() == "message"
                && envelope.is("message")
                && entry.envelope.id().is_some()
                && envelope.id() == entry.envelope.id();
            match self.copy {
                None if same_entry => return Some((value, None)),
                Some(rule) if same_entry && rule.sent_as_written(line, message, canonical) => {
                    let copied = Copied {
                        text: message.to_vec(),
                        shallow: true,
                    };
                    return Some((value, Some(copied)));
                }
                _ => {}
            }
        }
        let text = message_as_written(line, entry, self.copy?)?;
        // As the store reads it: a line the parse rejects is repaired there.
        let value = serde_json::from_slice(line).ok()?;
        let copied = Copied {
            text: text.to_vec(),
            shallow: false,
        };
        Some((value, Some(copied)))
    }
}

impl CopyingSource<'_> {
    /// Whether the rules of the format read no more of this entry's message than its shallow
    /// value holds: always for the agent context; for llm, when the conversion passes its role
    /// through as it is.
    fn may_be_shallow(&self, entry: &JsonValue) -> bool {
        let Some(convert) = self.convert else {
            return true;
        };
        let message = EntryRef::new(entry).message();
        MessageRef::new(message)
            .role()
            .is_some_and(|role| convert.passes_unchanged(role))
    }
}

impl EntrySource for CopyingSource<'_> {
    type Error = Error;

    fn entry_count(&self) -> usize {
        self.log.index.len()
    }

    fn envelope(&self, position: usize) -> NodeInfo {
        self.log.node_info(position)
    }

    fn entry_value(&self, position: usize) -> Result<JsonValue> {
        self.entry_values(&[position])?
            .pop()
            .ok_or_else(|| Error::invalid_input(format!("no entry at position {position}")))
    }

    /// As [`Log`]'s own source answers (from the file's bytes).
    fn may_contain(&self, positions: &[usize], needle: &str) -> Result<Vec<bool>> {
        LogSource { log: self.log }.may_contain(positions, needle)
    }

    fn entry_values(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        // A migrated file's entries are not its lines.
        let file = self.log.file.as_ref().filter(|file| !file.is_migrated());
        let (Some(file), true) = (file, self.copy) else {
            return self.log.values_at(positions);
        };
        let candidates: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&position| {
                self.log.in_file(position)
                    && self
                        .log
                        .index
                        .node(position)
                        .is_some_and(|node| node.kind == "message")
            })
            .collect();
        let reader = self.reader;
        let read = file.map_raw(&candidates, |_, entry, line| reader.read(entry, line))?;
        let wanted = candidates.len();
        // The candidates are a part of `positions`, in the same order.
        let mut found = candidates.into_iter().zip(read).peekable();
        let mut copies = self
            .copies
            .try_borrow_mut()
            .map_err(|_| Error::invalid_input("the copies are in use (a bug: please report it)"))?;
        copies.reserve(wanted);
        let mut values: Vec<Option<JsonValue>> = Vec::with_capacity(positions.len());
        let mut rest: Vec<usize> = Vec::new();
        for &position in positions {
            let hit = match found.peek() {
                Some(&(candidate, _)) if candidate == position => {
                    found.next().and_then(|(_, hit)| hit)
                }
                _ => None,
            };
            // A message read shallow that the conversion does not pass through as it is is
            // read again whole, with the rest.
            let shallow = |copied: &Option<Copied>| copied.as_ref().is_none_or(|c| c.shallow);
            match hit.filter(|(value, copied)| !shallow(copied) || self.may_be_shallow(value)) {
                Some((value, copied)) => {
                    if let Some(copied) = copied {
                        copies.push((position, Some(copied)));
                    }
                    values.push(Some(value));
                }
                None => {
                    rest.push(position);
                    values.push(None);
                }
            }
        }
        let mut rest_values = self.log.values_at(&rest)?.into_iter();
        values
            .into_iter()
            .map(|value| match value {
                Some(value) => Ok(value),
                None => rest_values
                    .next()
                    .ok_or_else(|| Error::invalid_input("an entry was not read (a bug)")),
            })
            .collect()
    }
}

/// The bytes of the `message` of the `message` entry `line`, when they are what printing the
/// message read from it gives: the line holds the entry indexed there (as the store checks
/// before it serves a line as parsed) and the message is sent as written
/// ([`CopyRule::as_written`]).
fn message_as_written<'l>(line: &'l [u8], entry: &IndexEntry, rule: CopyRule) -> Option<&'l [u8]> {
    let envelope = &entry.envelope;
    let id = envelope.id()?;
    let [kind, written_id, message] = top_level_members(line, ["type", "id", "message"])?;
    let quoted = |text: &[u8], expected: &str| {
        text.strip_prefix(b"\"")
            .and_then(|t| t.strip_suffix(b"\""))
            .is_some_and(|t| t == expected.as_bytes())
    };
    let same_entry = envelope.kind() == "message"
        && kind.is_some_and(|k| quoted(k, "message"))
        && written_id.is_some_and(|i| quoted(i, id));
    message.filter(|message| same_entry && rule.as_written(line, message))
}

/// A built context's messages with the copies of those sent as written.
struct Sent<'a> {
    path: &'a [JsonValue],
    built: &'a [Built],
    copies: &'a [Option<Copied>],
}

impl Sent<'_> {
    /// The copy of `message`'s text, when it is a path entry's message sent as written.
    fn copy_of(&self, message: &Built) -> Option<&Copied> {
        match message {
            Built::Entry(at) => self.copies.get(*at)?.as_ref(),
            Built::Made(_) => None,
        }
    }

    /// The dialect's `buildSessionContext` result: each message handed to `each`, then the
    /// text of `context` (its messages left out) after its empty messages array.
    fn agent<E: From<Error>>(
        &self,
        context: &pi_session_tree::AgentContext,
        mut each: impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Vec<u8>, E> {
        let skeleton = print(context)?;
        let Some(rest) = skeleton.strip_prefix(NO_MESSAGES) else {
            return Err(Error::invalid_input(
                "the context's text does not start with its messages (a new context shape?)",
            )
            .into());
        };
        for message in self.built {
            match self.copy_of(message) {
                Some(copy) => each(SentMessage::Written(&copy.text))?,
                None => each(SentMessage::Value(message.resolve(self.path)))?,
            }
        }
        Ok(rest.to_vec())
    }

    /// The dialect's `convertToLlm` of the messages, each handed to `each`: one a rule leaves
    /// as it is (borrowed) is its copy when there is one.
    fn llm<E: From<Error>>(
        &self,
        dialect: Dialect,
        mut each: impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let messages: Vec<&JsonValue> = self.built.iter().map(|m| m.resolve(self.path)).collect();
        for (i, (built, &message)) in self.built.iter().zip(&messages).enumerate() {
            let next = messages.get(i + 1).copied();
            let copy = self.copy_of(built);
            for converted in llm_message(message, next, dialect) {
                match (&converted, copy) {
                    (Cow::Borrowed(same), Some(copy)) if std::ptr::eq(*same, message) => {
                        each(SentMessage::Written(&copy.text))?;
                    }
                    // Read as a few keys only because the conversion passes it through as
                    // it is: anything else would print a message cut short.
                    (_, Some(copy)) if copy.shallow => {
                        return Err(Error::invalid_input(
                            "convertToLlm changed a message read as its role only (a bug: please report it)",
                        )
                        .into());
                    }
                    _ => each(SentMessage::Value(converted.as_ref()))?,
                }
            }
        }
        Ok(())
    }
}

fn print<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_js_vec(value)
        .map_err(|e| Error::invalid_input(format!("the context cannot be printed: {e}")))
}
