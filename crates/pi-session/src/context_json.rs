//! The agent and llm contexts (and omp's agent loop's messages) as JSON text, each message a
//! rule sends unchanged copied from the file instead of printed again (and, where the rules
//! read only a few keys of such a message, never parsed beyond those keys).
//!
//! pi and omp write their lines with `JSON.stringify`, so the bytes of a `message` entry's
//! `message` are, almost always, exactly what printing the parsed message gives. Where
//! [`is_js_canonical`](pi_session_types::json::is_js_canonical) says so, and nothing rewrote the message on the way (the dialect's
//! load-time rewrites: [`may_rewrite_message_line`]; a build rule: [`Built::Made`]; a
//! conversion that changes it), the text is copied; everything else is printed from the parsed
//! value. The bytes are taken in the same read as the entry's body; when the dialect's
//! `buildSessionContext` reads only a few keys of a message it sends unchanged
//! ([`message_keys_of_line`]: pi 0.73's role, provider and model; omp 18.2's few more, with a
//! tool-call turn's blocks cut to their type and id) and, for a conversion (`convertToLlm`,
//! omp's agent loop), those keys tell it how it passes the message on
//! ([`ConvertToLlm::passes`]: as it is, or with omp's default `attribution` added at its
//! end, which is then added to the copy's text), the copied message is parsed as those keys
//! only ([`entry_with_message_keys`]). When the build changes a message whose content was cut
//! (omp's stripped tool calls), those entries are read again whole and the context built
//! again; when the message after one read so changes how the conversion passes it on (omp's
//! interrupted thinking), that entry is read again whole and converted. The result is
//! byte-equal to printing [`Session::project_at`]'s value (tested on every fixture, each leaf
//! and dialect).

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;

use pi_session_context::dialect::{ConvertToLlm, Passed, convert_to_llm};
use pi_session_context::projection::Format;
use pi_session_context::{OmpAgentLoop, OmpAgentLoopOptions, rho};
use pi_session_store::{IndexEntry, SessionFile, SharedBytes};
use pi_session_tree::built::{
    Added, Built, Extendable, Release, agent_context_built_extendable, agent_context_built_streamed,
};
use pi_session_tree::context::prepare_entries;
use pi_session_tree::context::{
    may_rewrite_message_line, message_keys, message_keys_of_line, message_line_of_role,
};
use pi_session_tree::source::{context_path_planned, context_path_positioned};
use pi_session_tree::{ContextOptions, Dialect, EntrySource, KindQuery, LeafSelector, NodeInfo};
use pi_session_types::JsonValue;
use pi_session_types::envelope_scan::MessageAt;
use pi_session_types::json::{
    Strings, is_js_canonical_given, to_js_vec, top_level_members, value_to_js_vec,
};
use pi_session_types::shallow::{
    KeyedMessage, Keys, LaidOut, Seen, canonical_entry_with_message_keys_given,
    canonical_keyed_message_laid, entry_with_message_keys, listed_entry_with_message_keys_given,
    listed_entry_with_message_keys_proven,
};
use pi_session_types::view::{EntryRef, key};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::session::{Log, LogSource, Session};
use crate::turns::{TAKER, walk_parts_in_turn};

/// How the printed context of [`Pi`](pi_session_tree::PiContext) and
/// [`Omp`](pi_session_tree::OmpContext) starts when it has no messages (`messages` is the first
/// key of both).
const NO_MESSAGES: &[u8] = b"{\"messages\":[]";

/// One message of a context as [`Session::context_each_at`] hands it out.
#[derive(Debug, Clone, Copy)]
pub enum SentMessage<'a> {
    /// Its compact JSON text, copied from the file: what [`to_js_vec`] prints for it.
    Written(&'a [u8]),
    /// The compact JSON text of a message copied from the file (`text`), sent with one string
    /// member added after its last (omp's agent loop: `{...m, attribution: "agent"}`): what
    /// [`to_js_vec`] prints for it is `text` with `,"key":"value"` before its closing brace
    /// ([`Self::to_compact`]). Handed out so, not copied: a writer that lays the message out
    /// writes the two parts one after the other.
    WrittenWith {
        /// The message's text as the file holds it.
        text: &'a [u8],
        /// The key added (plain ASCII: written as it is).
        key: &'static str,
        /// Its string value (plain ASCII: written as it is).
        value: &'static str,
    },
    /// The message, to print.
    Value(&'a JsonValue),
}

impl SentMessage<'_> {
    /// The message as compact JSON text (the copy, the copy with its member added, or the
    /// value printed).
    pub fn to_compact(&self) -> Result<Cow<'_, [u8]>> {
        match self {
            Self::Written(text) => Ok(Cow::Borrowed(text)),
            Self::WrittenWith { text, key, value } => Ok(Cow::Owned(with_member(text, key, value))),
            Self::Value(value) => Ok(Cow::Owned(value_to_js_vec(value))),
        }
    }

    /// A message copied from the file as two parts that make its compact text one after the
    /// other: the file's text (of `WrittenWith`, before its closing brace) and what follows
    /// it (nothing, or `,"key":"value"}`); `None` for a value. A writer writes them as they
    /// are, the file's text not copied.
    ///
    /// ```
    /// use pi_session::SentMessage;
    /// let sent = SentMessage::WrittenWith { text: br#"{"a":1}"#, key: "k", value: "v" };
    /// let (text, rest) = sent.written_parts().unwrap();
    /// assert_eq!([text, &rest[..]].concat(), sent.to_compact().unwrap().into_owned());
    /// assert_eq!(rest, br#","k":"v"}"#);
    /// let empty = SentMessage::WrittenWith { text: b"{}", key: "k", value: "v" };
    /// assert_eq!(empty.to_compact().unwrap().into_owned(), br#"{"k":"v"}"#);
    /// assert_eq!(SentMessage::Written(b"{}").written_parts(), Some((&b"{}"[..], Vec::new())));
    /// ```
    pub fn written_parts(&self) -> Option<(&[u8], Vec<u8>)> {
        match self {
            Self::Written(text) => Some((text, Vec::new())),
            Self::WrittenWith { text, key, value } => Some(member_added(text, key, value)),
            Self::Value(_) => None,
        }
    }
}

impl Session {
    /// `format` ([`Format::Agent`] or [`Format::Llm`]) of `dialect` at `leaf` as compact JSON
    /// text, exactly [`to_js_vec`] of what [`Self::project_at`] gives, with the same
    /// diagnostics; `options.blobs` resolves omp's blob pictures. Each message sent as the file
    /// holds it is copied from the file's bytes when they are already what `JSON.stringify`
    /// prints ([`is_js_canonical`](pi_session_types::json::is_js_canonical)), not printed again; only the bodies the context needs are
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
        let convert = match format {
            Format::Agent => None,
            Format::Llm => Some(convert_to_llm(dialect)),
            _ => {
                return Err(Error::invalid_input(format!(
                    "context_json_at writes the agent and llm formats, not {format:?}: use project_at"
                ))
                .into());
            }
        };
        self.context_each_converted(leaf, dialect, convert, options, each)
    }

    /// The messages omp's agent loop hands its provider ([`Format::OmpAgentLoop`]: omp's
    /// agent context, its `convertToLlm` and the loop's steps around it, with `loop_options`)
    /// a message at a time, as [`Self::context_each_leaving`] hands out llm messages: those
    /// sent as the file holds them copied from it (with the attribution omp adds), the others
    /// to print. The same messages as [`Self::project_at`] with that format and options.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, UserOptions, user};
    /// use pi_session::projection::OmpAgentLoopOptions;
    /// use pi_session::tree::{ContextOptions, LeafSelector};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let mut texts = Vec::new();
    /// let (_, leftovers) = session.omp_agent_loop_each_leaving(
    ///     &LeafSelector::Default,
    ///     &OmpAgentLoopOptions::default(),
    ///     &ContextOptions::default(),
    ///     |message| {
    ///         texts.push(message.to_compact()?.into_owned());
    ///         Ok::<(), pi_session::Error>(())
    ///     },
    /// )?;
    /// assert_eq!(texts.len(), 1);
    /// assert!(texts[0].starts_with(br#"{"role":"user","content":[{"type":"text","text":"hi"}]"#));
    /// # drop(leftovers);
    /// # Ok(()) }
    /// ```
    pub fn omp_agent_loop_each_leaving<E: From<Error>>(
        &self,
        leaf: &LeafSelector,
        loop_options: &OmpAgentLoopOptions,
        options: &ContextOptions<'_>,
        each: impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(Vec<Diagnostic>, ContextLeftovers), E> {
        let convert: &'static dyn ConvertToLlm = OmpAgentLoop::of(loop_options);
        self.context_each_converted(leaf, Dialect::OMP, Some(convert), options, each)
            .map(|(_, diagnostics, leftovers)| (diagnostics, leftovers))
    }

    /// [`Self::context_each_leaving`] with `convert` applied to the agent context's messages
    /// (`None`: the agent context itself).
    fn context_each_converted<E: From<Error>>(
        &self,
        leaf: &LeafSelector,
        dialect: Dialect,
        convert: Option<&'static dyn ConvertToLlm>,
        options: &ContextOptions<'_>,
        mut each: impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(Vec<u8>, Vec<Diagnostic>, ContextLeftovers), E> {
        // The branch and its plan (the entries that are not messages read, the tail known)
        // under the log's lock; then the tail's parts are read on the other threads while this
        // one reads the head's messages, builds them and sends them ([`walk_parts_in_turn`]).
        let mut branch;
        let (plan, taken, reading) = {
            let log = self.log();
            branch = log.index.branch_for(leaf);
            let source =
                CopyingSource::for_context(&log, dialect, convert, options.blobs.is_some());
            let plan = context_path_planned(&source, &log.index, &branch.positions, dialect)?;
            let tail = plan.tail();
            let reading = (!tail.is_empty()).then(|| (PartReader::of(&source, &tail), tail));
            (plan, source.taken(), reading)
        };
        let parts: Vec<&[usize]> = match &reading {
            Some(((_, parts), tail)) => parts.iter().map(|part| &tail[part.clone()]).collect(),
            None => Vec::new(),
        };
        let threads = reading
            .as_ref()
            .map_or(1, |((reader, _), _)| reader.threads());
        let walked = walk_parts_in_turn(
            &parts,
            threads,
            |part, read_by| match &reading {
                Some(((reader, _), _)) => self.read_part(reader, part, read_by),
                None => Err(Error::invalid_input("no part to read (a bug)")),
            },
            |segment| segment.read_by,
            |turns| -> std::result::Result<Option<Streamed>, E> {
                let (((from, path), tail), copies) = {
                    let log = self.log();
                    let source =
                        CopyingSource::for_context(&log, dialect, convert, options.blobs.is_some())
                            .with_taken(taken);
                    let read = plan.read_head(|positions| source.entry_values(positions))?;
                    let copies = source.copies_along(&read.0.0);
                    (read, copies)
                };
                // The tail joined the head when the head's read found it must (then the parts
                // read meanwhile are dropped).
                let streamed = !tail.is_empty();
                // The load-time rewrites' diagnostics come before the build's, as for a branch
                // prepared whole: each part's go after the head's.
                let BuiltRead {
                    mut context,
                    segment: head,
                    prepared: mut diagnostics,
                    diagnostics: mut built_diagnostics,
                    mut extendable,
                } = self.build_read(path, &from, copies, dialect, options, streamed)?;
                if streamed && !extendable.extends_read() {
                    // A rule of this build reaches forward (pi 1.6's context edits): the branch
                    // is read and built whole instead.
                    return Ok(None);
                }
                let reread = |position| self.whole_entry(position);
                let mut stream = Stream::new(convert, &reread);
                // The segments whose messages may still change (omp's passes over the messages
                // reach back: [`Extendable::release`]), in order, sent once they cannot.
                let mut held = Held::default();
                held.push(head, &mut extendable, self, &mut stream, &mut each)?;
                // The messages after the head, built on and sent in order.
                while let Some(segment) = streamed.then(|| turns.next()).flatten() {
                    let mut segment = segment?;
                    diagnostics.extend(prepare_entries(&mut segment.path, dialect, options.blobs));
                    segment.built = extendable
                        .extend_read(&mut context, &segment.added(), &mut built_diagnostics)
                        .ok_or_else(|| {
                            Error::invalid_input(
                                "a build refused the branch's last messages (a bug)",
                            )
                        })?;
                    if let Some(done_with) =
                        held.push(segment, &mut extendable, self, &mut stream, &mut each)?
                    {
                        turns.done_with(done_with);
                    }
                }
                if let Some(last) = held.finish(self, &mut extendable)? {
                    stream.push(last, &mut each)?;
                }
                diagnostics.append(&mut built_diagnostics);
                let (rest, leftovers) = stream.close(context, &mut each)?;
                Ok(Some((rest, diagnostics, leftovers)))
            },
        )?;
        let Some((rest, mut diagnostics, leftovers)) = walked else {
            return self.context_each_whole(&mut branch, dialect, convert, options, each);
        };
        branch.diagnostics.append(&mut diagnostics);
        Ok((rest, self.located(branch.diagnostics), leftovers))
    }

    /// The dialect's build over `path` (read from the positions `from`, with its `copies`),
    /// its load-time rewrites applied in place. When the build sent changed a message whose
    /// `content` was read cut to a few keys ([`Copied::cut`]; omp's stripped tool calls,
    /// [`Extendable::rewrote_keyed_messages`]), those entries are read again whole and the
    /// (prepared) path built again: a message is never sent cut short. The load-time rewrites'
    /// diagnostics are given apart from the build's ([`BuiltRead`]).
    fn build_read(
        &self,
        mut path: Vec<JsonValue>,
        from: &[Option<usize>],
        copies: Vec<Option<Copied>>,
        dialect: Dialect,
        options: &ContextOptions<'_>,
        streamed: bool,
    ) -> Result<BuiltRead> {
        let prepared = prepare_entries(&mut path, dialect, options.blobs);
        let build = match streamed {
            true => agent_context_built_streamed,
            false => agent_context_built_extendable,
        };
        let mut segment = Segment {
            path,
            from: from.to_vec(),
            built: Vec::new(),
            copies,
            read_by: TAKER,
        };
        let (mut context, mut built, mut diagnostics, mut extendable) =
            build(&segment.path, dialect, options);
        let cut = segment.cut(0..segment.path.len());
        if extendable.rewrote_keyed_messages() && !cut.is_empty() {
            segment.read_whole(self, &cut)?;
            (context, built, diagnostics, extendable) = build(&segment.path, dialect, options);
        }
        segment.built = built;
        Ok(BuiltRead {
            context,
            segment,
            prepared,
            diagnostics,
            extendable,
        })
    }

    /// [`Self::context_each_leaving`] over the whole branch read at once and built in one go.
    fn context_each_whole<E: From<Error>>(
        &self,
        branch: &mut pi_session_tree::Branch,
        dialect: Dialect,
        convert: Option<&'static dyn ConvertToLlm>,
        options: &ContextOptions<'_>,
        mut each: impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(Vec<u8>, Vec<Diagnostic>, ContextLeftovers), E> {
        let log = self.log();
        let source = CopyingSource::for_context(&log, dialect, convert, options.blobs.is_some());
        let (from, path) =
            context_path_positioned(&source, &log.index, &branch.positions, dialect)?;
        let copies = source.copies_along(&from);
        drop(log);
        let BuiltRead {
            context,
            segment,
            prepared: mut diagnostics,
            diagnostics: mut built,
            ..
        } = self.build_read(path, &from, copies, dialect, options, false)?;
        diagnostics.append(&mut built);
        branch.diagnostics.append(&mut diagnostics);
        let reread = |position| self.whole_entry(position);
        let mut stream = Stream::new(convert, &reread);
        stream.push(segment, &mut each)?;
        let (rest, leftovers) = stream.close(context, &mut each)?;
        Ok((
            rest,
            self.located(std::mem::take(&mut branch.diagnostics)),
            leftovers,
        ))
    }

    /// The entry at `position` read whole, as the log reads it (for a message read as a few
    /// keys that a conversion turns out to read more of).
    fn whole_entry(&self, position: usize) -> Result<JsonValue> {
        self.log()
            .values_at(&[position])?
            .pop()
            .ok_or_else(Error::entry_not_read)
    }

    /// The entries at `positions` (`message` entries of the branch, in order) read as
    /// [`Self::context_each_leaving`] reads the branch, with their copies; no message built.
    /// The log's lock is taken only to read those that are not the file's lines (or that the
    /// lines do not answer), as [`PartReader::read`] says. `read_by`: the reading thread.
    fn read_part(
        &self,
        reading: &PartReader,
        positions: &[usize],
        read_by: usize,
    ) -> Result<Segment> {
        let (path, copies) = reading.values(self, positions)?;
        let from: Vec<Option<usize>> = positions.iter().copied().map(Some).collect();
        Ok(Segment {
            path,
            from,
            built: Vec::new(),
            copies,
            read_by,
        })
    }
}

/// What [`Session::context_each_leaving`]'s walk over the parts gives: the text after the
/// messages, the diagnostics of the head's and the parts' load-time rewrites and builds, and
/// what the conversion left.
type Streamed = (Vec<u8>, Vec<pi_session_tree::Diagnostic>, ContextLeftovers);

/// How [`Session::context_each_leaving`]'s reading threads read the parts of a branch's tail:
/// what its [`CopyingSource`] reads them with, taken once under the log's lock.
pub(crate) struct PartReader {
    /// The file whose `message` lines are read through `reader` ([`lines_read_from`],
    /// shared: the store's index behind an `Arc`, the lines read by position), `None`: every
    /// entry is read as the log reads it.
    file: Option<SessionFile>,
    reader: LineReader,
    /// How many threads read the parts, the one that takes them included.
    threads: usize,
    /// Those of the positions to read that are not `message` lines of the file (read as the
    /// log reads them; most often none), ascending: learnt under the log's lock once, so
    /// that the threads reading the parts take it only to read those.
    not_lines: Vec<usize>,
    /// Whether the parts' copies keep ranges of the windows their lines were read in
    /// ([`LineReader::read_lines`]): for a long tail ([`LONG_TAIL_BYTES`] or more), whose
    /// windows' buffers are used again part after part; a short tail's would mostly be fresh
    /// memory, zeroed before it is read into (the 5 MB session's 16 parts: ~0.7M instructions
    /// of `memset` more), for fewer copies.
    windows: bool,
}

impl PartReader {
    /// What `source` reads `positions` with (a branch's tail, in order), and the parts it
    /// reads them in ([`STREAMED_ENTRIES`] entries and [`part_bytes`] of lines at most, one
    /// entry at least), on one thread per core (the caller's included) up to
    /// [`READING_THREADS`] when they are more than one and read without the log's lock, else
    /// on the caller's alone. Read on several, each part is
    /// read on its thread alone (not split again across threads of the store's, which would
    /// start a thread for every part over 1 MiB and keep more threads busy than there are
    /// cores).
    pub(crate) fn of(source: &CopyingSource<'_>, positions: &[usize]) -> (Self, Vec<Range<usize>>) {
        let mut file = lines_read_from(source.log, source.copy).cloned();
        let bytes_of = |position: usize| {
            file.as_ref()
                .and_then(|file| file.index().get(position))
                .map_or(0, |entry| entry.byte_len)
        };
        // Summed only as far as `part_bytes` looks: a long tail (the chain's 100k entries) is
        // not read through twice.
        let mut total = 0;
        for &position in positions {
            total += bytes_of(position);
            if total >= LONG_TAIL_BYTES {
                break;
            }
        }
        let parts = parts_of(positions, part_bytes(total), bytes_of);
        let threads = match &mut file {
            Some(file) if parts.len() > 1 => {
                let threads = file.read_threads().clamp(1, READING_THREADS);
                if threads > 1 {
                    file.set_read_threads(1);
                }
                // One handle for every part, not an `open` each (the 100k chain's 196). When
                // it cannot be kept, each part opens the file and says why it cannot read it.
                file.keep_open().ok();
                threads
            }
            _ => 1,
        };
        // The parts are built on by `Extendable::extend_read`, which takes a message as its
        // keys (and a conversion asked as those, `LineReader::read_keyed`).
        let reader = LineReader {
            keyed: source.reader.copy.is_some(),
            ..source.reader
        };
        let is_line = is_message_line(source.log);
        let mut not_lines: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&position| !is_line(position))
            .collect();
        not_lines.sort_unstable();
        let reader = Self {
            file,
            reader,
            threads,
            not_lines,
            windows: total >= LONG_TAIL_BYTES,
        };
        (reader, parts)
    }

    /// The entries at `positions` of `session`'s log, read as its [`CopyingSource`] reads them,
    /// each copy taken handed to `copied` with its place in `positions` (some of those
    /// [`Self::of`] was given). The log's lock is taken only to read those that are not the
    /// file's lines (or that the lines do not answer; most often none): not while the lines
    /// are read and parsed, so threads reading parts at once do not take turns, and they read
    /// while the thread that takes the parts holds the lock to read the head.
    fn read(
        &self,
        session: &Session,
        positions: &[usize],
        copied: impl FnMut(usize, Copied),
    ) -> Result<Vec<JsonValue>> {
        let Some(file) = &self.file else {
            return session.log().values_at(positions);
        };
        let candidates = self.lines_among(positions);
        let read = self.reader.read_lines(file, &candidates, self.windows)?;
        gather(
            positions,
            candidates,
            read,
            self.reader.convert,
            copied,
            |rest| session.log().values_at(rest),
        )
    }

    /// [`Self::read`] with the copy taken of each entry (`None` where none is), in the same
    /// order.
    fn values(
        &self,
        session: &Session,
        positions: &[usize],
    ) -> Result<(Vec<JsonValue>, Vec<Option<Copied>>)> {
        let mut copies: Vec<Option<Copied>> = std::iter::repeat_with(|| None)
            .take(positions.len())
            .collect();
        let values = self.read(session, positions, |at, copy| copies[at] = Some(copy))?;
        Ok((values, copies))
    }

    /// The entries at `positions` of `session`'s log as rho's projection reads them
    /// ([`rho::RhoEntry`]): a `message` line of the file as lists of the members rho reads
    /// ([`listed_entry_with_message_keys`], [`rho::MESSAGE_KEYS`]: no map made of the message
    /// or its blocks), when it is the entry indexed there; every other entry read as the log
    /// reads it. The log's lock is held as [`Self::read`] holds it.
    pub(crate) fn rho_entries(
        &self,
        session: &Session,
        positions: &[usize],
    ) -> Result<Vec<rho::RhoEntry>> {
        let of_values =
            |values: Vec<JsonValue>| values.iter().map(rho::RhoEntry::from_value).collect();
        let Some(file) = &self.file else {
            return session.log().values_at(positions).map(of_values);
        };
        let candidates = self.lines_among(positions);
        let read = file.map_raw(&candidates, |index, entry, line| {
            rho_line(entry, line, file.strings(index), file.message_at(index))
        })?;
        merge_read(
            positions,
            candidates,
            read,
            |_, entry| Some(entry),
            || rho::RhoEntry::from_value(&JsonValue::Null),
            |rest| session.log().values_at(rest).map(of_values),
        )
    }

    /// Those of `positions` (some of those [`Self::of`] was given) that are `message` lines
    /// of the file, in the same order ([`message_lines`], as it answered then).
    fn lines_among(&self, positions: &[usize]) -> Vec<usize> {
        positions
            .iter()
            .copied()
            .filter(|position| self.not_lines.binary_search(position).is_err())
            .collect()
    }

    /// How many threads read the parts ([`Self::of`]).
    pub(crate) fn threads(&self) -> usize {
        self.threads
    }
}

/// `positions` cut in order into parts (ranges of it) of at most [`STREAMED_ENTRIES`] entries
/// and, past their first, at most `max_bytes` bytes (`bytes_of` an entry: its line's length).
fn parts_of(
    positions: &[usize],
    max_bytes: u64,
    bytes_of: impl Fn(usize) -> u64,
) -> Vec<Range<usize>> {
    let mut parts = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (at, &position) in positions.iter().enumerate() {
        let more = bytes_of(position);
        if at > start && (at - start == STREAMED_ENTRIES || bytes + more > max_bytes) {
            parts.push(start..at);
            (start, bytes) = (at, 0);
        }
        bytes += more;
    }
    if start < positions.len() {
        parts.push(start..positions.len());
    }
    parts
}

/// The most threads [`Session::context_each_leaving`] reads a branch's tail on, the one that
/// builds and sends included ([`read_parts_in_turn`]): one per core up to three (the parts are
/// short and each one read alone, [`STREAMED_ENTRIES`]).
const READING_THREADS: usize = 3;

/// How many `message` entries [`Session::context_each_leaving`] reads at a time past the
/// last entry of another type (a long branch's tail), on each reading thread: ~140 KB of
/// lines for short turns ([`STREAMED_BYTES`] bounds a part of long ones). Measured on the 100k
/// chain with one reading thread: 1,024 and 2,048 alike;
/// 8,192 cost ~15% more CPU (parts read on two more threads, their memory freed across
/// threads, more pages); with two, 512 holds ~3 MB less than 1,024 at the same wall time.
pub(crate) const STREAMED_ENTRIES: usize = 512;

/// The most bytes of lines in a part of a branch's tail ([`STREAMED_ENTRIES`]), so that a part
/// of long messages (tool results of ~10 KB) is not read whole into a few MB of values: the
/// memory of the part before is used again while it is still in the caches. Measured on the
/// 200 MB session's `req-llm` (~1,650 messages, ~17 MB): parts of 512 entries (~5 MB) cost ~9
/// ms more CPU than parts of 128 (~1.3 MB); 256 KiB as little as 128 entries, 1 MiB no less
/// than 512. The 100k chain's short turns are cut by the count alone (128 entries a part cost
/// it ~12 ms more CPU).
const STREAMED_BYTES: u64 = 1 << 18;

/// How many parts a short tail is cut into at least ([`part_bytes`]).
const TAIL_PARTS: u64 = 16;

/// The fewest bytes of lines a part of a short tail may be cut down to ([`part_bytes`]).
const MIN_PART_BYTES: u64 = 1 << 16;

/// The most bytes of lines in a part of a branch's tail whose lines hold `total` bytes:
/// [`STREAMED_BYTES`], less for a tail shorter than [`TAIL_PARTS`] such parts, so that it is
/// still cut into about that many, down to [`MIN_PART_BYTES`]. The taking thread waits for the
/// first part to be read, and the last part is laid out and written after every read has
/// ended: with a few long parts (the 5 MB bench session's 1.2 MB tail made five) that is about
/// two fifths of the tail's time on one thread. Parts of 64–128 KiB there cut a 5 MB context by
/// 7–15% (`docs/perf.md`, round 24).
fn part_bytes(total: u64) -> u64 {
    (total / TAIL_PARTS).clamp(MIN_PART_BYTES, STREAMED_BYTES)
}

/// The bytes from which a tail is cut into parts of [`STREAMED_BYTES`] ([`part_bytes`]).
const LONG_TAIL_BYTES: u64 = TAIL_PARTS * STREAMED_BYTES;

/// The text of `context` (its messages left out) after its empty messages array.
fn rest_of(context: &pi_session_tree::AgentContext) -> Result<Vec<u8>> {
    let skeleton = print(context)?;
    skeleton
        .strip_prefix(NO_MESSAGES)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| {
            Error::invalid_input(
                "the context's text does not start with its messages (a new context shape?)",
            )
        })
}

/// What [`Session::context_each_leaving`] built a context from: the entries of the branch as
/// read last, the messages built of them and the copies of those sent as written (earlier
/// parts of a long branch are freed as they are sent). Dropping it frees them; a caller about
/// to exit may `std::mem::forget` it instead.
pub struct ContextLeftovers {
    entries: usize,
    last: Option<Segment>,
    context: pi_session_tree::AgentContext,
}

impl ContextLeftovers {
    /// How many entries of the branch were read.
    pub fn entries(&self) -> usize {
        self.entries
    }
}

impl std::fmt::Debug for ContextLeftovers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let last = self.last.as_ref();
        f.debug_struct("ContextLeftovers")
            .field("entries", &self.entries)
            .field("messages", &last.map_or(0, |s| s.built.len()))
            .field(
                "copies",
                &last.map_or(0, |s| s.copies.iter().flatten().count()),
            )
            .field("context", &self.context)
            .finish()
    }
}

/// Takes the copy last read at `position` out of `copies`, sorted by position (stable): a
/// binary search, no hash (a table keyed by position hashed each of the chain's 100k copies
/// twice, ~4% of its context). With the copy, where the copies of later positions start.
fn take_copy(copies: &mut [(usize, Option<Copied>)], position: usize) -> (Option<Copied>, usize) {
    let end = copies.partition_point(|(at, _)| *at <= position);
    let copy = end
        .checked_sub(1)
        .and_then(|last| copies.get_mut(last))
        .filter(|(at, _)| *at == position)
        .and_then(|(_, copy)| copy.take());
    (copy, end)
}

impl Session {
    /// rho's part of the branch at `positions` (file order positions, root first): only the
    /// entries req_llm and the provider formats built on it read
    /// ([`pi_session_tree::source::rho_sent_path`]); bodies nothing sends are left unread and
    /// their entries out, and a `message` entry is read as the keys rho reads of it
    /// ([`rho::MESSAGE_KEYS`]: the rest of its line is skipped, never built). Nothing is kept.
    pub(crate) fn rho_values_at(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        let log = self.log();
        let source = CopyingSource::for_rho(&log);
        pi_session_tree::source::rho_sent_path(&source, &log.index, positions)
    }
}

/// Copies taken as lines are read, with their positions, in the order they were read.
type CopiesTaken = Vec<(usize, Option<Copied>)>;

/// A `message` entry's message as its line holds it: the bytes, and whether the entry read
/// holds only the keys the rules read of it (then the bytes are the only whole copy).
struct Copied {
    text: CopiedText,
    shallow: bool,
    /// Read with its message's `content` cut to a few keys of each block ([`Keys::blocks`]):
    /// the only kind of message a build may send changed ([`BuildContext`'s
    /// `message_keys`](pi_session_tree::context::message_keys)).
    cut: bool,
    /// The keys the rules read of the message, when the entry was read as those alone
    /// ([`LineReader::keyed`]): its value in the path is then a `null` in its place, never
    /// read ([`Segment::added`]).
    keyed: Option<KeyedMessage>,
}

/// The bytes of a [`Copied`] message: its range of the file the session holds in memory (no
/// copy made: most of a context's bytes are its messages as the file holds them), or a copy
/// of them (a file re-read by range).
enum CopiedText {
    Held(SharedBytes, std::ops::Range<usize>),
    Copy(Vec<u8>),
}

impl CopiedText {
    /// `text` (bytes of a line `map_raw` handed out), as a range of `held` when it lies there.
    fn of(text: &[u8], held: Option<&SharedBytes>) -> Self {
        if let Some(held) = held {
            let start = (text.as_ptr() as usize).wrapping_sub(held.as_ptr() as usize);
            if let Some(end) = start.checked_add(text.len())
                && end <= held.len()
            {
                return Self::Held(SharedBytes::clone(held), start..end);
            }
        }
        Self::Copy(text.to_vec())
    }
}

impl std::ops::Deref for CopiedText {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Self::Held(bytes, range) => bytes.get(range.clone()).unwrap_or_default(),
            Self::Copy(text) => text,
        }
    }
}

/// The log as the tree's entry source for [`Session::context_each_at`] and rho's formats
/// ([`Session::rho_values_at`]): a `message` line is read as the rules' keys only where they
/// read no other, and a line whose message may be copied ([`message_as_written`]) gives its
/// bytes in the same read as its body; every other entry is read as [`Log::values_at`] reads
/// it.
pub(crate) struct CopyingSource<'a> {
    log: &'a Log,
    reader: LineReader,
    /// Whether to read `message` lines through `reader` at all (for copies or for a shallow
    /// value).
    copy: bool,
    /// The copies taken, with their positions, in the order they were read.
    copies: RefCell<CopiesTaken>,
}

/// What is read of one line by [`CopyingSource`] (on the store's reading threads).
#[derive(Clone, Copy)]
struct LineReader {
    /// What the rules read of a `message` entry ([`message_keys_of_line`],
    /// [`rho::MESSAGE_KEYS`]).
    keys: Option<LineKeys>,
    /// When messages are copied, which rewrites may touch one; `None`: no copy is taken (a
    /// `message` line is read as `keys` only, or the ordinary way).
    copy: Option<CopyRule>,
    /// Whether a line whose message is sent as written is read as the keys of its message
    /// alone ([`canonical_keyed_message_laid`]: no value built, the entry's own keys checked
    /// against the index), for a build continued with [`Extendable::extend_read`]: a branch's
    /// tail read a part at a time ([`PartReader::of`]). With a conversion, only a message it
    /// passes on as read so ([`ConvertToLlm::passes`]).
    keyed: bool,
    /// The conversion of the messages sent, if any: a line is read as `keys` only when they
    /// hold those it reads to tell how it passes a message on ([`ConvertToLlm::reads`]), and
    /// only when it tells so ([`ConvertToLlm::passes`]) is the message kept read so.
    convert: Option<&'static dyn ConvertToLlm>,
}

/// Which keys of a `message` line [`LineReader`] reads.
#[derive(Clone, Copy)]
enum LineKeys {
    /// These, of every line (rho's).
    Every(&'static Keys),
    /// The dialect's rules', line by line ([`message_keys_of_line`]: a line whose message is
    /// not `JSON.stringify`'s is never sent as read, [`CopyRule::sent_as_written`]).
    Rules(Dialect),
}

/// What is read of one `message` line ([`LineReader::rules_of`]).
#[derive(Clone, Copy)]
struct LineRules {
    /// The keys read of it, `None`: the line is read whole.
    keys: Option<&'static Keys>,
    /// Whether the dialect's load-time rewrites may touch its message (copies taken only).
    rewrites: bool,
}

/// Whether a message is sent as its line holds it ([`Self::as_written`]).
#[derive(Clone, Copy)]
struct CopyRule {
    dialect: Dialect,
    blobs: bool,
}

impl CopyRule {
    /// Whether `message` is sent as written: no load-time rewrite of the dialect may touch it
    /// (`rewrites`, of its line: [`LineRules::rewrites`]), and its bytes are
    /// `JSON.stringify`'s. `strings`: what the open's scan proved of the line's strings.
    fn as_written(rewrites: bool, message: &[u8], strings: Strings) -> bool {
        !rewrites && is_js_canonical_given(message, strings)
    }

    /// [`Self::as_written`] for a message read from its line, when `canonical` says the
    /// message was found to be `JSON.stringify`'s as it was read
    /// ([`canonical_entry_with_message_keys_given`]).
    fn sent_as_written(rewrites: bool, message: &[u8], canonical: bool, strings: Strings) -> bool {
        if canonical {
            !rewrites
        } else {
            Self::as_written(rewrites, message, strings)
        }
    }
}

impl LineReader {
    /// What is read of `line` ([`LineRules`]): the dialect's rules asked once for both
    /// answers where both are wanted ([`message_line`]).
    fn rules_of(self, laid: &LaidOut<'_>) -> LineRules {
        let line = laid.line();
        match (self.keys, self.copy) {
            (Some(LineKeys::Rules(dialect)), Some(rule)) if dialect == rule.dialect => {
                let role = laid.role();
                let read = message_line_of_role(dialect, line, role, rule.blobs);
                LineRules {
                    keys: read.keys,
                    rewrites: read.may_rewrite,
                }
            }
            (keys, copy) => LineRules {
                keys: keys.and_then(|keys| match keys {
                    LineKeys::Every(keys) => Some(keys),
                    LineKeys::Rules(dialect) => message_keys_of_line(dialect, line),
                }),
                rewrites: copy
                    .is_some_and(|rule| may_rewrite_message_line(rule.dialect, line, rule.blobs)),
            },
        }
    }

    /// The lines of `file` at `positions` ([`Self::read`] of each). `windows`: whether a copy
    /// may keep its range of the window its line was read in ([`SessionFile::map_raw_held`]),
    /// for lines whose copies are dropped once their part is sent (a branch's tail read a part
    /// at a time, [`PartReader`]); else only of the file the session holds in memory.
    fn read_lines(
        self,
        file: &SessionFile,
        positions: &[usize],
        windows: bool,
    ) -> Result<Vec<LineRead>> {
        let proof = |at| (file.strings(at), file.message_at(at));
        if windows {
            return Ok(file.map_raw_held(positions, |at, entry, line, held| {
                self.read(entry, line, proof(at), held)
            })?);
        }
        let held = file.held_bytes();
        Ok(file.map_raw(positions, |at, entry, line| {
            self.read(entry, line, proof(at), held)
        })?)
    }

    /// The copy of a `message` line's message with the keys `keys` of it ([`Copied::keyed`]),
    /// when messages are read so ([`Self::keyed`]), the line is the entry indexed, its message
    /// spelled as `JSON.stringify` spells it and sent as written, and the conversion, if any,
    /// tells from those keys how it passes the message on ([`ConvertToLlm::passes`], asked
    /// again with the message after it when it is sent). Keys of the content's blocks (omp's
    /// turns with tool calls: a pass over the messages may strip a call) cut the content to
    /// those ([`Copied::cut`]): a message a pass changes is read again whole ([`Held::finish`]).
    /// `laid`: the line as [`Self::read`] found its head; `held`: as [`Self::read`] takes it.
    fn read_keyed(
        self,
        (entry, laid, strings): (&IndexEntry, &LaidOut<'_>, Strings),
        (keys, rewrites): (&Keys, bool),
        held: Option<&SharedBytes>,
    ) -> Option<Copied> {
        self.copy.filter(|_| self.keyed)?;
        if entry.envelope.kind() != "message" {
            return None;
        }
        let (keyed, message) =
            canonical_keyed_message_laid(laid, strings, keys, entry.envelope.id()?)?;
        if let Some(convert) = self.convert
            && convert.passes(Seen::Keyed(&keyed), None).is_none()
        {
            return None;
        }
        CopyRule::sent_as_written(rewrites, message, true, strings).then(|| Copied {
            text: CopiedText::of(message, held),
            shallow: true,
            cut: !keys.blocks.is_empty(),
            keyed: Some(keyed),
        })
    }

    /// One line of a `message` entry: its value (the rules' keys of its message only, when
    /// they read no other) and the copy of its message when copies are taken, or `None` to
    /// read it the ordinary way.
    /// `strings`: what the open's scan proved of the line's strings
    /// ([`SessionFile::strings`]): where it found them spelled as `JSON.stringify` spells them,
    /// the checks of a message's spelling step over them; `message_at`: where it found the
    /// line's message ([`SessionFile::message_at`]), so that the members around it are not
    /// read again. `held`: the file the session holds
    /// in memory, whose range a copy keeps instead of its bytes ([`CopiedText`]).
    fn read(
        self,
        entry: &IndexEntry,
        line: &[u8],
        (strings, message_at): (Strings, Option<MessageAt>),
        held: Option<&SharedBytes>,
    ) -> Option<(JsonValue, Option<Copied>)> {
        // When copies are taken, a line whose message is spelled as `JSON.stringify` spells it
        // is read and checked in one pass; any other may still hold a message spelled so.
        // The line's head (its members before the message) is found once, for the role the
        // rules ask and for the message's keys read next.
        // Where the scan found the message of a `message` entry's line, it is read from there
        // (the keyed read checks that the line still holds the entry's id there).
        let laid = match message_at {
            Some(at) if entry.envelope.kind() == "message" => LaidOut::proven(line, at),
            _ => LaidOut::of(line),
        };
        let LineRules { keys, rewrites } = self.rules_of(&laid);
        let keys = keys.filter(|keys| {
            let reads = self.convert.map_or(&[][..], |convert| convert.reads());
            reads.iter().all(|key| keys.message.contains(key))
        });
        if let Some(copied) =
            keys.and_then(|keys| self.read_keyed((entry, &laid, strings), (keys, rewrites), held))
        {
            return Some((JsonValue::Null, Some(copied)));
        }
        let shallow = keys.and_then(|keys| match self.copy {
            Some(_) => canonical_entry_with_message_keys_given(line, strings, keys)
                .map(|read| (read, true))
                .or_else(|| entry_with_message_keys(line, keys).map(|read| (read, false))),
            None => entry_with_message_keys(line, keys).map(|read| (read, false)),
        });
        if let Some(((value, message), canonical)) = shallow {
            // The entry indexed here, sent as written when copies are taken.
            let envelope = EntryRef::new(&value);
            let same_entry = is_indexed_message(entry, envelope.kind(), envelope.id());
            match self.copy {
                None if same_entry => return Some((value, None)),
                Some(_)
                    if same_entry
                        && CopyRule::sent_as_written(rewrites, message, canonical, strings) =>
                {
                    let copied = Copied {
                        text: CopiedText::of(message, held),
                        shallow: true,
                        cut: keys.is_some_and(|keys| !keys.blocks.is_empty()),
                        keyed: None,
                    };
                    return Some((value, Some(copied)));
                }
                _ => {}
            }
        }
        self.copy?;
        let text = message_as_written(line, entry, rewrites, strings)?;
        // As the store reads it: a line the parse rejects is repaired there.
        let value = serde_json::from_slice(line).ok()?;
        let copied = Copied {
            text: CopiedText::of(text, held),
            shallow: false,
            cut: false,
            keyed: None,
        };
        Some((value, Some(copied)))
    }
}

impl<'a> CopyingSource<'a> {
    /// The source rho's formats read `log` through: a `message` line as the keys rho reads of
    /// it ([`rho::MESSAGE_KEYS`]), no copy taken.
    pub(crate) fn for_rho(log: &'a Log) -> Self {
        CopyingSource {
            log,
            reader: LineReader {
                keys: Some(LineKeys::Every(&rho::MESSAGE_KEYS)),
                copy: None,
                keyed: false,
                convert: None,
            },
            copy: true,
            copies: RefCell::new(Vec::new()),
        }
    }

    /// The source [`Session::context_each_leaving`] reads `log` through for `dialect`'s agent
    /// context or (`convert`) a conversion of its messages.
    /// `blobs`: whether omp's blob references are resolved.
    fn for_context(
        log: &'a Log,
        dialect: Dialect,
        convert: Option<&'static dyn ConvertToLlm>,
        blobs: bool,
    ) -> Self {
        // A conversion that tells from no keys how it passes a message on
        // ([`ConvertToLlm::passes`]) would have every message read as keys read again whole.
        // (Whether a line's keys hold those the conversion reads is checked line by line,
        // [`LineReader::read`].)
        let keys = message_keys(dialect)
            .filter(|_| convert.is_none_or(|convert| !convert.reads().is_empty()));
        CopyingSource {
            log,
            reader: LineReader {
                keys: keys.map(|_| LineKeys::Rules(dialect)),
                copy: Some(CopyRule { dialect, blobs }),
                keyed: false,
                convert,
            },
            // A copy spares printing (a conversion) or parsing (a dialect that reads a few
            // keys); otherwise the agent's messages are printed from the values read anyway.
            copy: convert.is_some() || keys.is_some(),
            copies: RefCell::new(Vec::new()),
        }
    }

    /// The copies taken, one slot per entry of a path read from the positions `from`.
    fn copies_along(self, from: &[Option<usize>]) -> Vec<Option<Copied>> {
        copies_along(self.copies.into_inner(), from)
    }

    /// The copies taken so far, for a source that reads on from the same log later
    /// ([`Self::with_taken`]).
    fn taken(self) -> CopiesTaken {
        self.copies.into_inner()
    }

    /// This source, holding the copies `taken` by an earlier one as its own.
    fn with_taken(self, taken: CopiesTaken) -> Self {
        self.copies.replace(taken);
        self
    }
}

/// The copies `by_position` (with their positions, in the order they were read), one slot per
/// entry of a path read from the positions `from`.
fn copies_along(mut by_position: CopiesTaken, from: &[Option<usize>]) -> Vec<Option<Copied>> {
    // Sorted by position, a later copy of a position after an earlier one (a stable sort).
    if !by_position.is_sorted_by_key(|(position, _)| *position) {
        by_position.sort_by_key(|(position, _)| *position);
    }
    // A path read in file order (the usual) looks for each position's copy past the one
    // before it, not among them all.
    let sorted = from.iter().flatten().is_sorted();
    let mut past = 0;
    from.iter()
        .map(|position| {
            let position = (*position)?;
            let start = if sorted { past } else { 0 };
            let (copy, end) = take_copy(by_position.get_mut(start..)?, position);
            past = start + end;
            copy
        })
        .collect()
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

    /// As [`Log`]'s own source answers (from the file's key filters).
    fn may_hold_key(&self, positions: &[usize], key: &str) -> Result<Vec<bool>> {
        LogSource { log: self.log }.may_hold_key(positions, key)
    }

    fn entry_values(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        let Some(file) = lines_read_from(self.log, self.copy) else {
            return self.log.values_at(positions);
        };
        let candidates = message_lines(self.log, positions);
        let read = self.reader.read_lines(file, &candidates, false)?;
        let mut copies = self
            .copies
            .try_borrow_mut()
            .map_err(|_| Error::invalid_input("the copies are in use (a bug: please report it)"))?;
        copies.reserve(candidates.len());
        gather(
            positions,
            candidates,
            read,
            self.reader.convert,
            |at, copy| copies.push((positions[at], Some(copy))),
            |rest| self.log.values_at(rest),
        )
    }
}

/// The file whose `message` lines [`CopyingSource`] reads through its [`LineReader`] (when it
/// reads them that way at all, `copy`): `None` for a migrated file (its entries are not its
/// lines) or no file.
fn lines_read_from(log: &Log, copy: bool) -> Option<&SessionFile> {
    log.file.as_ref().filter(|file| copy && !file.is_migrated())
}

/// Those of `positions` that are `message` entries still as the file has them (the lines a
/// [`LineReader`] reads), in the same order.
fn message_lines(log: &Log, positions: &[usize]) -> Vec<usize> {
    let is_line = is_message_line(log);
    positions
        .iter()
        .copied()
        .filter(|&position| is_line(position))
        .collect()
}

/// Whether a position of `log` is a `message` entry still as the file has it (a line a
/// [`LineReader`] reads): the one test of [`message_lines`] and of [`PartReader::of`].
fn is_message_line(log: &Log) -> impl Fn(usize) -> bool + '_ {
    let message = KindQuery::new("message");
    move |position| log.in_file(position) && log.index.is_kind(position, message)
}

/// What a [`LineReader`] read of one line ([`LineReader::read`]).
type LineRead = Option<(JsonValue, Option<Copied>)>;

/// The entries at `positions`: those of `candidates` (a part of `positions`, in the same
/// order) that `read` holds, each copy handed to `copied` with its place in `positions`; the
/// others (not read, or read as a few keys that `convert` does not pass on as they are) read
/// by `rest` in one batch.
fn gather(
    positions: &[usize],
    candidates: Vec<usize>,
    read: Vec<LineRead>,
    convert: Option<&'static dyn ConvertToLlm>,
    mut copied: impl FnMut(usize, Copied),
    rest: impl FnOnce(&[usize]) -> Result<Vec<JsonValue>>,
) -> Result<Vec<JsonValue>> {
    // A message read shallow that the conversion does not pass through as it is is read
    // again whole, with the rest.
    let shallow = |copy: &Option<Copied>| copy.as_ref().is_none_or(|c| c.shallow);
    merge_read(
        positions,
        candidates,
        read,
        |at, (value, copy)| {
            if shallow(&copy) && !may_be_shallow(convert, &value, &copy) {
                return None;
            }
            if let Some(copy) = copy {
                copied(at, copy);
            }
            Some(value)
        },
        || JsonValue::Null,
        rest,
    )
}

/// The entries at `positions`: those of `candidates` (a part of `positions`, in the same
/// order) whose line `read` answers for and `keep` keeps (given the place in `positions`),
/// the others read by `rest` in one batch, each into a place held for it (by `hold`'s value).
fn merge_read<R, T>(
    positions: &[usize],
    candidates: Vec<usize>,
    read: Vec<Option<R>>,
    mut keep: impl FnMut(usize, R) -> Option<T>,
    hold: impl Fn() -> T,
    rest: impl FnOnce(&[usize]) -> Result<Vec<T>>,
) -> Result<Vec<T>> {
    let mut found = candidates.into_iter().zip(read).peekable();
    let mut entries: Vec<T> = Vec::with_capacity(positions.len());
    // The places in `entries` held for the entries `rest` reads, and those entries.
    let (mut held, mut others) = (Vec::new(), Vec::new());
    for (at, &position) in positions.iter().enumerate() {
        let hit = match found.peek() {
            Some(&(candidate, _)) if candidate == position => found.next().and_then(|(_, hit)| hit),
            _ => None,
        };
        match hit.and_then(|hit| keep(at, hit)) {
            Some(entry) => entries.push(entry),
            None => {
                held.push(entries.len());
                others.push(position);
                entries.push(hold());
            }
        }
    }
    if others.is_empty() {
        return Ok(entries);
    }
    let read = rest(&others)?;
    if read.len() != held.len() {
        return Err(Error::entry_not_read());
    }
    for (at, entry) in held.into_iter().zip(read) {
        entries[at] = entry;
    }
    Ok(entries)
}

/// A `message` line as rho reads it ([`PartReader::rho_entries`]), when it is the entry the
/// index holds at that place (as the store checks before it serves a line as parsed): its
/// type is `message` and its id the index's, as written.
fn rho_line(
    entry: &IndexEntry,
    line: &[u8],
    strings: Strings,
    message_at: Option<MessageAt>,
) -> Option<rho::RhoEntry> {
    // Only `message` lines come here (`message_lines`): the kind is checked once, below. A
    // line the open proved spelled as `JSON.stringify` spells it has its texts found by their
    // quotes; one whose message the open found is read from there, when it still holds the
    // entry's id where the open found it.
    let proven = message_at.zip(entry.envelope.id()).and_then(|(at, id)| {
        listed_entry_with_message_keys_proven(line, at, id, strings, &rho::MESSAGE_KEYS)
    });
    let (listed, _) = match proven {
        Some(read) => read,
        None => listed_entry_with_message_keys_given(line, strings, &rho::MESSAGE_KEYS)?,
    };
    let read = |name: &str| {
        let member = listed.entry.iter().find(|(kept, _)| *kept == name);
        member.and_then(|(_, value)| value.as_str())
    };
    is_indexed_message(entry, read(key::TYPE), read(key::ID))
        .then(|| rho::RhoEntry::from_listed(listed))
        .flatten()
}

/// Whether a line whose `type` and `id` read `kind` and `id` holds the entry the index holds
/// at its place, as the store checks before it serves a line as parsed: a `message`, with the
/// index's id.
fn is_indexed_message(entry: &IndexEntry, kind: Option<&str>, id: Option<&str>) -> bool {
    entry.envelope.kind() == "message"
        && kind == Some("message")
        && id.is_some()
        && id == entry.envelope.id()
}

/// Whether the rules of the format read no more of this entry's message than its shallow
/// value holds: always for the agent context (`convert` is `None`); for a conversion, when it
/// tells from those keys how it passes the message on (the message after it aside: when that
/// one changes the answer, the message is read again whole then, [`Segment::convert`]).
/// A message read as its keys into a list ([`Copied::keyed`]) was read so only where the
/// conversion answers for it ([`LineReader::read_keyed`]): not asked again.
fn may_be_shallow(
    convert: Option<&'static dyn ConvertToLlm>,
    entry: &JsonValue,
    copied: &Option<Copied>,
) -> bool {
    let Some(convert) = convert else {
        return true;
    };
    if copied.as_ref().is_some_and(|copied| copied.keyed.is_some()) {
        return true;
    }
    EntryRef::new(entry)
        .message()
        .is_some_and(|message| convert.passes(Seen::Value(message), None).is_some())
}

/// The bytes of the `message` of the `message` entry `line`, when they are what printing the
/// message read from it gives: the line holds the entry indexed there (as the store checks
/// before it serves a line as parsed) and the message is sent as written
/// ([`CopyRule::as_written`]).
fn message_as_written<'l>(
    line: &'l [u8],
    entry: &IndexEntry,
    rewrites: bool,
    strings: Strings,
) -> Option<&'l [u8]> {
    let [kind, id, message] = top_level_members(line, ["type", "id", "message"])?;
    // A string as written between its quotes: one spelled with an escape is not the index's
    // text, and the line is read the ordinary way.
    let quoted = |text: &'l [u8]| {
        let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
        std::str::from_utf8(inner).ok()
    };
    let same_entry = is_indexed_message(entry, kind.and_then(quoted), id.and_then(quoted));
    message.filter(|message| same_entry && CopyRule::as_written(rewrites, message, strings))
}

/// What [`Session::build_read`] gives: the build of a path as read, its segment, and the
/// diagnostics of the load-time rewrites (which come first) apart from the build's.
struct BuiltRead {
    context: pi_session_tree::AgentContext,
    segment: Segment,
    prepared: Vec<pi_session_tree::Diagnostic>,
    diagnostics: Vec<pi_session_tree::Diagnostic>,
    extendable: Extendable,
}

/// A part of a branch as read (a path, with the positions its entries were read from), the
/// messages built of it and the copies of those sent as written (by path index).
struct Segment {
    path: Vec<JsonValue>,
    from: Vec<Option<usize>>,
    built: Vec<Built>,
    copies: Vec<Option<Copied>>,
    /// The reading thread it goes back to, to be freed ([`Session::read_part`]; 0 for one
    /// read on the caller's thread).
    read_by: usize,
}

/// The segments of a streamed build whose messages may still change ([`Extendable::release`]:
/// omp's passes over the messages reach back), in order: sent once none can, or once the
/// passes can run over them ([`Extendable::finish_held`]), else at the end.
#[derive(Default)]
struct Held {
    segments: Vec<Segment>,
}

impl Held {
    /// Takes `segment` (built on by `extendable`): held, or sent with those held before it as
    /// [`Extendable::release`] says. Gives back a segment no longer needed, to free.
    fn push<E: From<Error>>(
        &mut self,
        segment: Segment,
        extendable: &mut Extendable,
        session: &Session,
        stream: &mut Stream<'_>,
        each: &mut impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<Segment>, E> {
        let release = extendable.release();
        if self.segments.is_empty() && release == Release::Send {
            return stream.push(segment, each);
        }
        self.segments.push(segment);
        match release {
            Release::Hold => Ok(None),
            Release::Send => {
                let mut freed = None;
                for segment in std::mem::take(&mut self.segments) {
                    // One goes back to its reading thread; the others are freed here.
                    freed = stream.push(segment, each)?.or(freed);
                }
                Ok(freed)
            }
            Release::Finish => match self.finish(session, extendable)? {
                Some(joined) => stream.push(joined, each),
                None => Ok(None),
            },
        }
    }

    /// The segments held, joined, their messages as the passes over the messages leave them
    /// (when [`Extendable::release`] says they can run, and at the end of the branch); `None`
    /// when nothing is held. A message those changed that was read cut to a few keys
    /// ([`Copied::cut`]) is read whole first (a message is never sent cut short).
    fn finish(
        &mut self,
        session: &Session,
        extendable: &mut Extendable,
    ) -> Result<Option<Segment>> {
        if self.segments.is_empty() {
            return Ok(None);
        }
        let mut joined = Segment::joined(std::mem::take(&mut self.segments));
        // A message read as its keys is a placeholder in the path: the passes read those keys
        // (of a turn with calls, its content cut to the blocks' types and ids).
        for (entry, copy) in joined.path.iter_mut().zip(&joined.copies) {
            if let Some(keyed) = copy.as_ref().and_then(|copy| copy.keyed.as_ref()) {
                *entry = serde_json::json!({"type": "message", "message": keyed.to_value()});
            }
        }
        let held = std::mem::take(&mut joined.built);
        let (built, rewritten) = extendable.finish_held(&joined.path, held.clone());
        let cut = joined.cut(rewritten);
        if cut.is_empty() {
            joined.built = built;
            return Ok(Some(joined));
        }
        joined.read_whole(session, &cut)?;
        (joined.built, _) = extendable.finish_held(&joined.path, held);
        Ok(Some(joined))
    }
}

/// Reads the entry at a position whole ([`Session::whole_entry`]).
type Reread<'r> = &'r dyn Fn(usize) -> Result<JsonValue>;

impl Segment {
    /// Those of the path indices `at` whose messages were read cut to a few keys of their
    /// content ([`Copied::cut`]).
    fn cut(&self, at: impl IntoIterator<Item = usize>) -> Vec<usize> {
        at.into_iter()
            .filter(|&at| {
                self.copies
                    .get(at)
                    .and_then(Option::as_ref)
                    .is_some_and(|copy| copy.cut)
            })
            .collect()
    }

    /// Reads the entries at the path indices `cut` ([`Self::cut`]) again whole, in their
    /// places, for a build that changed their messages (a message is never sent cut short). A
    /// line read as keys is one no load-time rewrite touches: read whole, it is prepared as it
    /// is.
    fn read_whole(&mut self, session: &Session, cut: &[usize]) -> Result<()> {
        let positions = cut
            .iter()
            .map(|&at| self.from.get(at).copied().flatten())
            .collect::<Option<Vec<usize>>>()
            .ok_or_else(|| Error::invalid_input("a copy of no line (a bug: please report it)"))?;
        let whole = session.log().values_at(&positions)?;
        if whole.len() != cut.len() {
            return Err(Error::entry_not_read());
        }
        for (&at, entry) in cut.iter().zip(whole) {
            if let (Some(slot), Some(Some(copy))) = (self.path.get_mut(at), self.copies.get_mut(at))
            {
                *slot = entry;
                copy.shallow = false;
                copy.cut = false;
                copy.keyed = None;
            }
        }
        Ok(())
    }

    /// `segments` (in order) as one: their paths one after the other, each message naming
    /// its entry in the joined path.
    fn joined(segments: Vec<Segment>) -> Segment {
        let mut joined = Segment {
            path: Vec::new(),
            from: Vec::new(),
            built: Vec::new(),
            copies: Vec::new(),
            read_by: TAKER,
        };
        for segment in segments {
            let offset = joined.path.len();
            joined.copies.resize_with(offset, || None);
            joined
                .built
                .extend(segment.built.into_iter().map(|message| match message {
                    Built::Entry(at) => Built::Entry(at + offset),
                    made => made,
                }));
            joined.path.extend(segment.path);
            joined.from.extend(segment.from);
            joined.copies.extend(segment.copies);
        }
        joined
    }

    /// Its entries as [`Extendable::extend_read`] takes them: a message read as its keys
    /// ([`Copied::keyed`]) as those, any other entry as its value.
    fn added(&self) -> Vec<Added<'_>> {
        self.path
            .iter()
            .zip(self.copies.iter().map(Some).chain(std::iter::repeat(None)))
            .map(
                |(entry, copy)| match copy.and_then(|copy| copy.as_ref()?.keyed.as_ref()) {
                    Some(keyed) => Added::Message(keyed),
                    None => Added::Entry(entry),
                },
            )
            .collect()
    }

    /// The copy of `message`'s text, when it is a path entry's message sent as written.
    fn copy_of(&self, message: &Built) -> Option<&Copied> {
        match message {
            Built::Entry(at) => self.copies.get(*at)?.as_ref(),
            Built::Made(_) => None,
        }
    }

    /// Its built messages in `range`, each handed to `each` (the dialect's
    /// `buildSessionContext` result).
    fn agent<E: From<Error>>(
        &self,
        range: std::ops::Range<usize>,
        each: &mut impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        for message in self.built.get(range).unwrap_or_default() {
            match self.copy_of(message) {
                Some(copy) => each(SentMessage::Written(&copy.text))?,
                None => each(SentMessage::Value(message.resolve(&self.path)))?,
            }
        }
        Ok(())
    }

    /// `convert` of its built messages in `range`, each handed to `each`. A message with a
    /// copy that the conversion passes on as it is, or with members added
    /// ([`ConvertToLlm::passes`], asked of the keys read of it and of the message after it), is
    /// sent as its copy; one read as a few keys that it does not pass so (the message after it
    /// decided) is read again whole (`reread`) and converted. The message after the last one
    /// of the segment is `after` (the first of the next part).
    fn convert<E: From<Error>>(
        &self,
        convert: &dyn ConvertToLlm,
        range: std::ops::Range<usize>,
        after: Option<Seen<'_>>,
        reread: Reread<'_>,
        each: &mut impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        for i in range {
            let Some(built) = self.built.get(i) else {
                break;
            };
            let next = match self.built.get(i + 1) {
                Some(next) => Some(self.seen(next)),
                None => after,
            };
            // A conversion reads of the next message only the keys `passes` reads
            // ([`ConvertToLlm::reads`]): one read as those is handed over as a value of them.
            let next_value = || next.map(Seen::to_value);
            let Some(copy) = self.copy_of(built) else {
                let next = next_value();
                for converted in convert.convert(built.resolve(&self.path), next.as_deref()) {
                    each(SentMessage::Value(converted.as_ref()))?;
                }
                continue;
            };
            match convert.passes(self.seen(built), next) {
                Some(Passed::Unchanged) => each(SentMessage::Written(&copy.text))?,
                Some(Passed::Appended { key, value }) => {
                    each(SentMessage::WrittenWith {
                        text: &copy.text,
                        key,
                        value,
                    })?;
                }
                None if copy.shallow => {
                    let whole = self.whole_message(built, reread)?;
                    let next = next_value();
                    for converted in convert.convert(&whole, next.as_deref()) {
                        each(SentMessage::Value(converted.as_ref()))?;
                    }
                }
                None => {
                    let message = built.resolve(&self.path);
                    let next = next_value();
                    for converted in convert.convert(message, next.as_deref()) {
                        match &converted {
                            Cow::Borrowed(same) if std::ptr::eq(*same, message) => {
                                each(SentMessage::Written(&copy.text))?;
                            }
                            _ => each(SentMessage::Value(converted.as_ref()))?,
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The built message `built` as a conversion sees it: the keys read of its line when it
    /// was read as those ([`Copied::keyed`]: its value in the path is a placeholder), else its
    /// value.
    fn seen<'s>(&'s self, built: &'s Built) -> Seen<'s> {
        match self.copy_of(built).and_then(|copy| copy.keyed.as_ref()) {
            Some(keyed) => Seen::Keyed(keyed),
            None => Seen::Value(built.resolve(&self.path)),
        }
    }

    /// The message of the path entry `built` resolves to, read again whole.
    fn whole_message(&self, built: &Built, reread: Reread<'_>) -> Result<JsonValue> {
        let position = match built {
            Built::Entry(at) => self.from.get(*at).copied().flatten(),
            Built::Made(_) => None,
        }
        .ok_or_else(|| Error::invalid_input("a copy of no line (a bug: please report it)"))?;
        let mut entry = reread(position)?;
        Ok(entry
            .get_mut(key::MESSAGE)
            .map(JsonValue::take)
            .unwrap_or_default())
    }
}

/// `message`'s compact text with the string member `key: value` added after its last one
/// (both plain ASCII, as [`Passed::Appended`] says): what `JSON.stringify` prints for
/// `{...m, key: value}`.
fn with_member(message: &[u8], key: &str, value: &str) -> Vec<u8> {
    let (body, member) = member_added(message, key, value);
    let mut out = Vec::with_capacity(body.len() + member.len());
    out.extend_from_slice(body);
    out.extend_from_slice(&member);
    out
}

/// [`with_member`] as two parts, the message's text before its closing brace and what follows
/// it (`,"key":"value"}`, no comma after `{`): for a writer that writes them one after the
/// other, laid out, the message's text is not copied.
///
fn member_added<'m>(message: &'m [u8], key: &str, value: &str) -> (&'m [u8], Vec<u8>) {
    let body = message.strip_suffix(b"}").unwrap_or(message);
    let mut member = Vec::with_capacity(key.len() + value.len() + 7);
    if body.len() > 1 {
        member.push(b',');
    }
    member.push(b'"');
    member.extend_from_slice(key.as_bytes());
    member.extend_from_slice(b"\":\"");
    member.extend_from_slice(value.as_bytes());
    member.extend_from_slice(b"\"}");
    (body, member)
}

/// The messages of a context handed out segment by segment, in order. A conversion's last
/// message of a segment waits for the next segment's first (the conversion of a message may
/// read the one after it), so the last segment with messages is kept until then.
struct Stream<'r> {
    /// The conversion of the messages sent (`None`: the agent context's messages as built).
    convert: Option<&'static dyn ConvertToLlm>,
    /// Reads an entry whole, for a message read as a few keys the conversion reads more of.
    reread: Reread<'r>,
    /// The last segment pushed that holds messages (for a conversion its last message not
    /// yet sent).
    last: Option<Segment>,
    /// How many entries the segments held.
    entries: usize,
}

impl<'r> Stream<'r> {
    /// Sends what `segment` holds (for a conversion, all but its last message, and the one
    /// waiting before it), and hands back the segment no longer needed, to free.
    fn push<E: From<Error>>(
        &mut self,
        segment: Segment,
        each: &mut impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<Segment>, E> {
        self.entries += segment.path.len();
        let count = segment.built.len();
        if count == 0 {
            // Nothing to send; a message waiting for its conversion still waits for a next one.
            if self.last.is_none() {
                self.last = Some(segment);
                return Ok(None);
            }
            return Ok(Some(segment));
        }
        match self.convert {
            Some(convert) => {
                if let Some(last) = &self.last {
                    let first = segment.built.first().map(|m| segment.seen(m));
                    let end = last.built.len();
                    let range = end.saturating_sub(1)..end;
                    last.convert(convert, range, first, self.reread, each)?;
                }
                segment.convert(convert, 0..count - 1, None, self.reread, each)?;
            }
            None => segment.agent(0..count, each)?,
        }
        Ok(self.last.replace(segment))
    }

    /// A stream of an agent context's messages, `convert`ed if given; `reread` reads an entry
    /// whole.
    fn new(convert: Option<&'static dyn ConvertToLlm>, reread: Reread<'r>) -> Self {
        Self {
            convert,
            reread,
            last: None,
            entries: 0,
        }
    }

    /// Ends the stream of `context`'s messages: sends what waits (a conversion's last
    /// message) and gives the text of `context` after its messages (agent; nothing for a
    /// conversion) and what was built.
    fn close<E: From<Error>>(
        self,
        context: pi_session_tree::AgentContext,
        each: &mut impl FnMut(SentMessage<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(Vec<u8>, ContextLeftovers), E> {
        let rest = match self.convert {
            Some(convert) => {
                if let Some(last) = &self.last {
                    let end = last.built.len();
                    let range = end.saturating_sub(1)..end;
                    last.convert(convert, range, None, self.reread, each)?;
                }
                Vec::new()
            }
            None => rest_of(&context)?,
        };
        let leftovers = ContextLeftovers {
            entries: self.entries,
            last: self.last,
            context,
        };
        Ok((rest, leftovers))
    }
}

fn print<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_js_vec(value)
        .map_err(|e| Error::invalid_input(format!("the context cannot be printed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::{
        Copied, MIN_PART_BYTES, STREAMED_BYTES, STREAMED_ENTRIES, TAIL_PARTS, copies_along,
        part_bytes, parts_of, take_copy,
    };

    fn copy(text: &str) -> Option<Copied> {
        Some(Copied {
            text: super::CopiedText::Copy(text.as_bytes().to_vec()),
            shallow: false,
            cut: false,
            keyed: None,
        })
    }

    /// A message's bytes that lie in the file the session holds are kept as their range of it
    /// (no copy); any others are copied.
    #[test]
    fn a_copy_keeps_its_range_of_the_held_file() {
        use super::{CopiedText, SharedBytes};
        let held: SharedBytes = std::sync::Arc::new(b"{\"message\":{\"role\":\"user\"}}".to_vec());
        let message = &held[11..held.len() - 1];
        let text = CopiedText::of(message, Some(&held));
        assert!(matches!(&text, CopiedText::Held(_, range) if *range == (11..held.len() - 1)));
        assert_eq!(&*text, message);
        let elsewhere = message.to_vec();
        assert!(matches!(
            CopiedText::of(&elsewhere, Some(&held)),
            CopiedText::Copy(_)
        ));
        assert!(matches!(CopiedText::of(message, None), CopiedText::Copy(copy) if copy == message));
        // Bytes just past the held ones are not in them.
        let longer = [&held[..], b"x"].concat();
        assert!(matches!(
            CopiedText::of(&longer, Some(&held)),
            CopiedText::Copy(_)
        ));
    }

    /// The copies along a path in file order (one walk) are those taken a position at a time
    /// (`take_copy`): each position's last copy, once, none for a position without one.
    #[test]
    fn copies_along_a_path_in_order_are_each_positions_last() {
        let taken = || {
            vec![
                (1, copy("1")),
                (3, copy("3 first")),
                (3, copy("3 last")),
                (4, None),
                (7, copy("7")),
                (9, copy("9")),
            ]
        };
        let texts = |copies: Vec<Option<Copied>>| -> Vec<Option<String>> {
            copies
                .into_iter()
                .map(|copy| copy.map(|copy| String::from_utf8(copy.text.to_vec()).unwrap()))
                .collect()
        };
        let paths: [&[Option<usize>]; 4] = [
            &[
                Some(0),
                Some(1),
                None,
                Some(3),
                Some(3),
                Some(4),
                Some(7),
                Some(8),
                Some(10),
            ],
            &[Some(3), Some(9)],
            &[None, None],
            // Out of order: the copies are still each position's.
            &[Some(9), Some(1), Some(3)],
        ];
        for from in paths {
            let mut one_by_one = taken();
            let expected: Vec<Option<Copied>> = from
                .iter()
                .map(|position| position.and_then(|p| take_copy(&mut one_by_one, p).0))
                .collect();
            assert_eq!(
                texts(copies_along(taken(), from)),
                texts(expected),
                "{from:?}"
            );
        }
        assert_eq!(
            texts(copies_along(taken(), &[Some(1), Some(3), Some(3), Some(9)])),
            [
                Some("1".into()),
                Some("3 last".into()),
                None,
                Some("9".into())
            ]
        );
    }

    /// Parts end at the count or before the entry that would take them past the bytes, a part
    /// holds one entry at least however long, and every position is in one part, in order.
    #[test]
    fn a_tail_is_cut_by_count_and_by_bytes() {
        let short: Vec<usize> = (0..STREAMED_ENTRIES * 2 + 3).collect();
        let parts = parts_of(&short, STREAMED_BYTES, |_| 100);
        assert_eq!(
            parts,
            [
                0..STREAMED_ENTRIES,
                STREAMED_ENTRIES..STREAMED_ENTRIES * 2,
                STREAMED_ENTRIES * 2..STREAMED_ENTRIES * 2 + 3
            ]
        );
        let quarter = STREAMED_BYTES / 4;
        // Lengths by position: four of a quarter fill a part; a long one stands alone.
        let lengths = [
            quarter,
            quarter,
            quarter,
            quarter,
            quarter,
            STREAMED_BYTES * 3,
            1,
            1,
        ];
        let positions: Vec<usize> = (0..lengths.len()).collect();
        assert_eq!(
            parts_of(&positions, STREAMED_BYTES, |at| lengths[at]),
            [0..4, 4..5, 5..6, 6..8]
        );
        assert!(parts_of(&[], STREAMED_BYTES, |_| 1).is_empty());
    }

    /// A long tail is cut into parts of [`STREAMED_BYTES`]; a short one into about
    /// [`TAIL_PARTS`] parts, none cut below [`MIN_PART_BYTES`].
    #[test]
    fn a_short_tail_is_cut_into_smaller_parts() {
        assert_eq!(part_bytes(100 * STREAMED_BYTES), STREAMED_BYTES);
        assert_eq!(part_bytes(TAIL_PARTS * STREAMED_BYTES), STREAMED_BYTES);
        assert_eq!(part_bytes(1_200_000), 75_000);
        assert_eq!(part_bytes(10_000), MIN_PART_BYTES);
        assert_eq!(part_bytes(0), MIN_PART_BYTES);
        // The 5 MB bench session's tail: 546 messages of ~2.2 KB, 1.2 MB.
        let positions: Vec<usize> = (0..546).collect();
        let total = 546 * 2_200;
        let parts = parts_of(&positions, part_bytes(total), |_| 2_200);
        assert_eq!(parts.len(), 17);
        assert!(parts.iter().all(|part| part.len() <= 34));
    }
}
