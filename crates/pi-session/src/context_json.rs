//! The agent and llm contexts as JSON text, each message a rule sends unchanged copied from the
//! file instead of printed again.
//!
//! pi and omp write their lines with `JSON.stringify`, so the bytes of a `message` entry's
//! `message` are, almost always, exactly what printing the parsed message gives. Where
//! [`is_js_canonical`] says so, and nothing rewrote the message on the way (the dialect's
//! load-time rewrites: [`may_rewrite_message_line`]; a build rule: [`Built::Made`]; omp's or
//! pi's `convertToLlm`: an owned [`Cow`]), the text is copied; everything else is printed from
//! the parsed value. The result is byte-equal to printing [`Session::project_at`]'s value
//! (tested on every fixture, each leaf and dialect).

use std::borrow::Cow;

use pi_session_context::llm_message;
use pi_session_context::projection::Format;
use pi_session_store::IndexEntry;
use pi_session_tree::built::{Built, agent_context_prepared_indexed};
use pi_session_tree::context::may_rewrite_message_line;
use pi_session_tree::{ContextOptions, Dialect, LeafSelector};
use pi_session_types::JsonValue;
use pi_session_types::json::{is_js_canonical, to_js_vec, top_level_members};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::session::{Log, Session};

/// How the printed context of [`Pi`](pi_session_tree::PiContext) and
/// [`Omp`](pi_session_tree::OmpContext) starts when it has no messages (`messages` is the first
/// key of both).
const NO_MESSAGES: &[u8] = b"{\"messages\":[]";

impl Session {
    /// `format` ([`Format::Agent`] or [`Format::Llm`]) of `dialect` at `leaf` as compact JSON
    /// text, exactly [`to_js_vec`] of what [`Self::project_at`] gives, with the same
    /// diagnostics; `options.blobs` resolves omp's blob pictures. Each message sent as the file
    /// holds it is copied from the file's bytes when they are already what `JSON.stringify`
    /// prints ([`is_js_canonical`]), not printed again; only the bodies the context needs are
    /// read, and no value of the whole answer is built.
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
        if !matches!(format, Format::Agent | Format::Llm) {
            return Err(Error::invalid_input(format!(
                "context_json_at writes the agent and llm formats, not {format:?}: use project_at"
            )));
        }
        let log = self.log();
        let mut branch = log.index.branch_for(leaf);
        let (from, mut path) = log.context_path_positioned(&branch.positions, dialect)?;
        let (context, built, mut diagnostics) =
            agent_context_prepared_indexed(&mut path, dialect, options);
        let copies = messages_as_written(&log, &from, &built, dialect, options.blobs.is_some())?;
        drop(log);
        branch.diagnostics.append(&mut diagnostics);
        let sent = Sent {
            path: &path,
            built: &built,
            copies: &copies,
        };
        let text = match format {
            Format::Llm => sent.llm(dialect)?,
            _ => sent.agent(&context)?,
        };
        Ok((text, self.located(branch.diagnostics)))
    }
}

/// For each entry of the path, the text of its `message` when a [`Built::Entry`] sends it and
/// the file's line holds it as `JSON.stringify` prints it (`None` otherwise).
fn messages_as_written(
    log: &Log,
    from: &[Option<usize>],
    built: &[Built],
    dialect: Dialect,
    blobs: bool,
) -> Result<Vec<Option<Vec<u8>>>> {
    let mut copies = vec![None; from.len()];
    // A migrated file's entries are not its lines.
    let Some(file) = log.file.as_ref().filter(|file| !file.is_migrated()) else {
        return Ok(copies);
    };
    let mut wanted: Vec<(usize, usize)> = built
        .iter()
        .filter_map(|message| match message {
            Built::Entry(at) => from
                .get(*at)
                .copied()
                .flatten()
                .filter(|&position| log.in_file(position))
                .map(|position| (position, *at)),
            Built::Made(_) => None,
        })
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let positions: Vec<usize> = wanted.iter().map(|&(position, _)| position).collect();
    let read = file.map_raw(&positions, |_, entry, line| {
        message_as_written(line, entry, dialect, blobs)
    })?;
    for (&(_, at), copy) in wanted.iter().zip(read) {
        copies[at] = copy;
    }
    Ok(copies)
}

/// The bytes of the `message` of the `message` entry `line`, when they are what printing the
/// message read from it gives: the line holds the entry indexed there (as the store checks
/// before it serves a line as parsed), no load-time rewrite of the dialect may touch it, and
/// the bytes are `JSON.stringify`'s.
fn message_as_written(
    line: &[u8],
    entry: &IndexEntry,
    dialect: Dialect,
    blobs: bool,
) -> Option<Vec<u8>> {
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
    let message = message.filter(|_| same_entry)?;
    if may_rewrite_message_line(dialect, line, blobs) || !is_js_canonical(message) {
        return None;
    }
    Some(message.to_vec())
}

/// A built context's messages with the copies of those sent as written.
struct Sent<'a> {
    path: &'a [JsonValue],
    built: &'a [Built],
    copies: &'a [Option<Vec<u8>>],
}

impl Sent<'_> {
    /// The copy of `message`'s text, when it is a path entry's message sent as written.
    fn copy_of(&self, message: &Built) -> Option<&[u8]> {
        match message {
            Built::Entry(at) => self.copies.get(*at)?.as_deref(),
            Built::Made(_) => None,
        }
    }

    /// The dialect's `buildSessionContext` result: `context` (its messages left out) with the
    /// messages written in.
    fn agent(&self, context: &pi_session_tree::AgentContext) -> Result<Vec<u8>> {
        let skeleton = print(context)?;
        let Some(rest) = skeleton.strip_prefix(NO_MESSAGES) else {
            return Err(Error::invalid_input(
                "the context's text does not start with its messages (a new context shape?)",
            ));
        };
        let mut out = Vec::with_capacity(self.size_hint() + skeleton.len());
        out.extend_from_slice(b"{\"messages\":[");
        for (i, message) in self.built.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match self.copy_of(message) {
                Some(copy) => out.extend_from_slice(copy),
                None => out.extend_from_slice(&print(message.resolve(self.path))?),
            }
        }
        out.push(b']');
        out.extend_from_slice(rest);
        Ok(out)
    }

    /// The dialect's `convertToLlm` of the messages: one a rule leaves as it is (borrowed) is
    /// its copy when there is one.
    fn llm(&self, dialect: Dialect) -> Result<Vec<u8>> {
        let messages: Vec<&JsonValue> = self.built.iter().map(|m| m.resolve(self.path)).collect();
        let mut out = Vec::with_capacity(self.size_hint());
        out.push(b'[');
        let mut first = true;
        for (i, (built, &message)) in self.built.iter().zip(&messages).enumerate() {
            let next = messages.get(i + 1).copied();
            for converted in llm_message(message, next, dialect) {
                if !first {
                    out.push(b',');
                }
                first = false;
                let copy = match &converted {
                    Cow::Borrowed(same) if std::ptr::eq(*same, message) => self.copy_of(built),
                    _ => None,
                };
                match copy {
                    Some(copy) => out.extend_from_slice(copy),
                    None => out.extend_from_slice(&print(converted.as_ref())?),
                }
            }
        }
        out.push(b']');
        Ok(out)
    }

    fn size_hint(&self) -> usize {
        self.copies.iter().flatten().map(Vec::len).sum::<usize>() + self.built.len() * 2
    }
}

fn print<T: serde::Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    to_js_vec(value)
        .map_err(|e| Error::invalid_input(format!("the context cannot be printed: {e}")))
}
