//! A convenience layer over any entry store: index once from envelopes, then
//! load only the bodies each question needs.

use std::collections::BTreeMap;
use std::convert::Infallible;

use pi_session_types::view::{EntryRef, MessageRef};
use serde_json::{Map, Value};

use crate::branch_facts::BranchTally;
use crate::context::{
    AgentContext, ContextOptions, Dialect, DialectEvidence, FirstSent, agent_context_owned,
};
use crate::diagnostic::Diagnostic;
use crate::index::{Branch, LeafSelector, NodeInfo, NodeRef, TreeIndex};
use crate::session_meta::{self, tree_json};
use pi_session_types::js;

/// Entries of one session in file order (header excluded), readable by
/// position. The store's session file implements it; so do slices of JSON
/// values.
pub trait EntrySource {
    /// Why reading a body failed (I/O, a damaged line).
    type Error;

    /// Number of entries.
    fn entry_count(&self) -> usize;

    /// The envelope of the entry at `position` (cheap; no body parse).
    fn envelope(&self, position: usize) -> NodeInfo;

    /// The tree index over every entry. The default builds it from
    /// [`envelope`](Self::envelope)s ([`TreeIndex::from_nodes`]); the store's file shares
    /// its table instead ([`TreeIndex::from_table`]: nothing copied, no id hashed twice).
    fn tree_index(&self) -> TreeIndex {
        TreeIndex::from_nodes((0..self.entry_count()).map(|pos| self.envelope(pos)))
    }

    /// The whole entry at `position` as a JSON object.
    fn entry_value(&self, position: usize) -> Result<Value, Self::Error>;

    /// The entries at `positions`, in that order. Override when the store can
    /// batch reads.
    fn entry_values(&self, positions: &[usize]) -> Result<Vec<Value>, Self::Error> {
        positions.iter().map(|&pos| self.entry_value(pos)).collect()
    }

    /// For each entry at `positions`, whether its line may hold `needle` (a JSON key or
    /// text spelled without escapes): `false` only when the body surely does not, so a
    /// caller can leave it unread. The default reads nothing and says `true`; the store's
    /// file answers from the raw lines without parsing them.
    fn may_contain(&self, positions: &[usize], needle: &str) -> Result<Vec<bool>, Self::Error> {
        let _ = needle;
        Ok(vec![true; positions.len()])
    }

    /// For each entry at `positions`, whether it may hold the key `key` (decoded, as the
    /// JSON object has it) at any depth: `false` only when it surely does not, so a caller can
    /// leave it unread. The default reads nothing and says `true`; the store's file answers
    /// from the key filter its open kept for each line
    /// ([`SessionFile::may_hold_key`](pi_session_store::SessionFile::may_hold_key)), reading
    /// nothing either.
    fn may_hold_key(&self, positions: &[usize], key: &str) -> Result<Vec<bool>, Self::Error> {
        let _ = key;
        Ok(vec![true; positions.len()])
    }

    /// The header line as JSON, when there is one.
    fn header_value(&self) -> Option<Value> {
        None
    }

    /// `Some(title)` when the file starts with a valid omp title slot (an
    /// empty title means "untitled"); `None` without a slot.
    fn title_slot(&self) -> Option<String> {
        None
    }
}

impl EntrySource for [Value] {
    type Error = Infallible;

    fn entry_count(&self) -> usize {
        self.len()
    }

    fn envelope(&self, position: usize) -> NodeInfo {
        self.get(position)
            .map(NodeInfo::from_value)
            .unwrap_or_default()
    }

    fn entry_value(&self, position: usize) -> Result<Value, Infallible> {
        Ok(self.get(position).cloned().unwrap_or_default())
    }
}

impl EntrySource for Vec<Value> {
    type Error = Infallible;

    fn entry_count(&self) -> usize {
        self.len()
    }

    fn envelope(&self, position: usize) -> NodeInfo {
        self.as_slice().envelope(position)
    }

    fn entry_value(&self, position: usize) -> Result<Value, Infallible> {
        self.as_slice().entry_value(position)
    }
}

/// A context with everything that went into it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedContext {
    /// The dialect's `buildSessionContext` result.
    pub context: AgentContext,
    /// The branch it was built from.
    pub branch: Branch,
    /// Problems met on the way (branch walk, malformed entries, blobs).
    pub diagnostics: Vec<Diagnostic>,
}

/// A session opened for questions: its entry source plus the tree index.
#[derive(Debug)]
pub struct SessionView<'s, S: EntrySource + ?Sized> {
    source: &'s S,
    index: TreeIndex,
}

/// Entries read at a time by [`SessionView::branch_tally`].
pub const TALLY_CHUNK: usize = 4096;

/// How many `custom_message` bodies dialect detection reads when nothing else decided it.
const CUSTOM_MESSAGES_SAMPLED: usize = 8;
/// How many leading `message` bodies detection reads looking for pi 1.6's
/// `system` messages (with `sections`).
const MESSAGES_SAMPLED_FOR_SYSTEM: usize = 8;

impl<'s, S: EntrySource + ?Sized> SessionView<'s, S> {
    /// Indexes `source` from its envelopes.
    pub fn new(source: &'s S) -> Self {
        let index = source.tree_index();
        Self { source, index }
    }

    /// The tree index.
    pub fn index(&self) -> &TreeIndex {
        &self.index
    }

    /// The tree index, kept after the view (a live session grows it with [`TreeIndex::push`]).
    pub fn into_index(self) -> TreeIndex {
        self.index
    }

    /// Bodies of the entries at `positions`, in that order.
    pub fn load(&self, positions: &[usize]) -> Result<Vec<Value>, S::Error> {
        self.source.entry_values(positions)
    }

    /// The dialect: detected from the title slot, header, entry types and
    /// `model_change` shapes (only `model_change` bodies are loaded).
    pub fn detect_dialect(&self) -> Result<Dialect, S::Error> {
        let mut evidence = DialectEvidence::new();
        if self.source.title_slot().is_some() {
            evidence.title_slot();
        }
        if let Some(header) = self.source.header_value() {
            evidence.header(&header);
        }
        // The evidence of a type is whether it occurs: each type once.
        for kind in self.index.kinds_present() {
            evidence.kind(kind);
        }
        if evidence.is_final() {
            return Ok(evidence.dialect());
        }
        self.weigh_bodies(&mut evidence, "model_change", usize::MAX, None)?;
        if !evidence.is_decided() {
            // No header mark and no model_change shape (e.g. a headerless excerpt): omp's
            // custom messages carry `attribution`. A few bodies suffice.
            self.weigh_bodies(
                &mut evidence,
                "custom_message",
                CUSTOM_MESSAGES_SAMPLED,
                Some("attribution"),
            )?;
        }
        if evidence.may_be_pi16() {
            // pi 1.6 records its system prompt as a `system` message near the start of a
            // session; the first few message bodies tell a 1.6 file without 1.6-only entry
            // types apart.
            self.weigh_bodies(
                &mut evidence,
                "message",
                MESSAGES_SAMPLED_FOR_SYSTEM,
                Some("sections"),
            )?;
        }
        Ok(evidence.dialect())
    }

    /// Feeds the bodies of the first `limit` entries of type `kind` to `evidence`: with a
    /// `key` (the member the evidence of such an entry needs), only those that may hold it
    /// ([`EntrySource::may_hold_key`]: the store's file answers from the key filter its open
    /// kept, so a pi file's first messages are not read at all, ~0.07 ms of a 5 MB
    /// `context`), the others telling nothing.
    fn weigh_bodies(
        &self,
        evidence: &mut DialectEvidence,
        kind: &str,
        limit: usize,
        key: Option<&str>,
    ) -> Result<(), S::Error> {
        let mut positions: Vec<usize> = self.index.positions_of_kind(kind).take(limit).collect();
        if let Some(key) = key {
            let may_hold = self.source.may_hold_key(&positions, key)?;
            let mut may = may_hold.into_iter();
            positions.retain(|_| may.next().unwrap_or(true));
        }
        for entry in self.load(&positions)? {
            evidence.entry(&entry);
        }
        Ok(())
    }

    /// The entries on the branch a selector picks, root first.
    pub fn branch_entries(&self, leaf: &LeafSelector) -> Result<(Branch, Vec<Value>), S::Error> {
        let branch = self.index.branch_for(leaf);
        let entries = self.load(&branch.positions)?;
        Ok((branch, entries))
    }

    /// The entries on the branch a selector picks as rho's `context/2` reads them: only the
    /// bodies it may send or name are read ([`rho_path`]).
    pub fn rho_entries(&self, leaf: &LeafSelector) -> Result<(Branch, Vec<Value>), S::Error> {
        let branch = self.index.branch_for(leaf);
        let entries = rho_path(self.source, &self.index, &branch.positions)?;
        Ok((branch, entries))
    }

    /// [`BranchTally`] of the branch a selector picks: its bodies are read
    /// [`TALLY_CHUNK`] entries at a time and dropped, so memory stays with the
    /// index however long the branch is.
    pub fn branch_tally(&self, leaf: &LeafSelector) -> Result<(Branch, BranchTally), S::Error> {
        let branch = self.index.branch_for(leaf);
        let mut tally = BranchTally::default();
        for chunk in branch.positions.chunks(TALLY_CHUNK) {
            tally.add(&self.load(chunk)?);
        }
        Ok((branch, tally))
    }

    /// The dialect's `buildSessionContext` for a leaf. Only the bodies it needs are read
    /// ([`context_path`]).
    pub fn context(
        &self,
        leaf: &LeafSelector,
        dialect: Dialect,
        options: &ContextOptions<'_>,
    ) -> Result<ResolvedContext, S::Error> {
        let branch = self.index.branch_for(leaf);
        let path = context_path(self.source, &self.index, &branch.positions, dialect)?;
        let (context, mut diagnostics) = agent_context_owned(path, dialect, options);
        let mut all = branch.diagnostics.clone();
        all.append(&mut diagnostics);
        Ok(ResolvedContext {
            context,
            branch,
            diagnostics: all,
        })
    }

    /// Labels in effect (only `label` bodies are loaded).
    pub fn labels(&self) -> Result<Map<String, Value>, S::Error> {
        let positions: Vec<usize> = self.index.positions_of_kind("label").collect();
        Ok(session_meta::labels(&self.load(&positions)?))
    }

    /// The session's name: omp's title (slot, else header) for omp, the latest
    /// `session_info` name for pi.
    pub fn name(&self, dialect: Dialect) -> Result<Option<String>, S::Error> {
        if dialect.has_title_slot() {
            Ok(session_meta::omp_session_title(
                self.source.title_slot().as_deref(),
                self.source.header_value().as_ref(),
            ))
        } else {
            let positions: Vec<usize> = self.index.positions_of_kind("session_info").collect();
            Ok(session_meta::pi_session_name(&self.load(&positions)?))
        }
    }

    /// omp `archive` records in effect (only `archive` bodies are loaded).
    pub fn archived(&self) -> Result<Map<String, Value>, S::Error> {
        let positions: Vec<usize> = self.index.positions_of_kind("archive").collect();
        Ok(session_meta::archived(&self.load(&positions)?))
    }

    /// Tips not hidden by an omp `archive` record on their branch (the tips
    /// omp's tree views show), in file order.
    pub fn visible_tips(&self) -> Result<Vec<usize>, S::Error> {
        let archived = self.archived()?;
        Ok(self
            .index
            .tips()
            .into_iter()
            .filter(|&tip| {
                !self.index.branch(tip).positions.iter().any(|&pos| {
                    self.index
                        .node(pos)
                        .and_then(|n| n.id)
                        .is_some_and(|id| archived.contains_key(id))
                })
            })
            .collect())
    }

    /// `{"leafId", "branchIds", "tips", "labels"}`.
    pub fn tree_json(&self) -> Result<Value, S::Error> {
        Ok(tree_json(&self.index, &self.labels()?))
    }
}

/// `role` of the message in a placeholder entry ([`context_path`]): no rule of any dialect
/// matches it, so a placeholder stands for "a message that is not the latest assistant turn".
pub const UNREAD_ROLE: &str = "(unread)";

/// Bodies are read from the end of the branch backwards, this many at a time, when the
/// latest assistant message lies before the part that is sent.
const BACKWARD_BATCH: usize = 32;

/// Keys of non-message entries that name another entry by id, which the dialects look up
/// by position on the path (a compaction's kept range and omp's provider replay).
const ID_REFERENCES: [&str; 2] = ["firstKeptEntryId", "providerReplayThroughEntryId"];

/// The entries of a branch (`positions`, root first) as [`crate::agent_context`] needs
/// them for `dialect`, reading only the bodies it looks at; the answer is a sub-sequence of
/// the branch, in branch order.
///
/// - Every entry that is not a `message` is read (settings, compactions, summaries, custom
///   entries: small and few), and so is every entry without a string id.
/// - `message` bodies are read from the first entry the dialect may send onwards (after the
///   latest compaction: its first kept entry; see `dialect::pi::context::first_sent` and
///   `dialect::omp::context::first_sent`).
/// - When none of those is an assistant turn, the latest assistant message before them is
///   read too (it sets the model), scanning backwards.
/// - A `message` before the sent part that a compaction names (`firstKeptEntryId`,
///   `providerReplayThroughEntryId`) stays as a placeholder: its envelope (`type`, `id`,
///   `parentId`) and `{"role": UNREAD_ROLE}`, so that lookups by id find it where it is.
/// - Every other `message` before the sent part is left out: no rule reads it, and none
///   of its bytes are parsed.
///
/// `agent_context` over the result equals `agent_context` over every body of the branch,
/// except that a `message` entry without a message object before the sent part is not
/// reported (its body is not read).
///
/// ```
/// use pi_session_tree::{agent_context, ContextOptions, Dialect, TreeIndex, EntrySource};
/// use pi_session_tree::source::context_path;
/// use serde_json::json;
///
/// let entries = vec![
///     json!({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"old"}}),
///     json!({"type":"message","id":"b","parentId":"a",
///            "message":{"role":"assistant","content":[],"provider":"p","model":"m"}}),
///     json!({"type":"compaction","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:00.000Z",
///            "summary":"s","firstKeptEntryId":"b","tokensBefore":1}),
/// ];
/// let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
/// let path = context_path(&entries, &index, &[0, 1, 2], Dialect::PI).unwrap();
/// assert_eq!(path, entries[1..]); // "a" is not sent and not read
/// let (lazy, _) = agent_context(&path, Dialect::PI, &ContextOptions::default());
/// let (full, _) = agent_context(&entries, Dialect::PI, &ContextOptions::default());
/// assert_eq!(lazy, full);
/// ```
pub fn context_path<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
    dialect: Dialect,
) -> Result<Vec<Value>, S::Error> {
    Ok(context_path_positioned(source, index, positions, dialect)?.1)
}

/// A path with the position each entry was read from ([`context_path_positioned`]).
pub type PositionedPath = (Vec<Option<usize>>, Vec<Value>);

/// [`context_path`], with the position each entry was read from: `None` for a message left
/// unread but named by an entry read (its envelope stands in for it), so a caller can copy a
/// sent message's bytes from where the entry is stored.
pub fn context_path_positioned<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
    dialect: Dialect,
) -> Result<PositionedPath, S::Error> {
    Ok(context_path_split(source, index, positions, dialect, false)?.0)
}

/// [`context_path_positioned`] cut in two for a caller that reads and sends the end of a long
/// branch a part at a time: the path up to the last entry that is not a `message` (the
/// head, read), and the positions of the `message` entries after it (the tail, left unread),
/// when the dialect continues a build with such entries a part at a time
/// (`BuildContext::extends_by_messages`: pi and omp), after a compaction as well (the head then
/// holds it; when nothing in the head names the model, the tail is read with the head, since
/// an assistant among its messages decides whether the messages before the sent part are read
/// for it). The messages right after that entry that the dialect's build reads stay with the
/// head (omp's first one: an Anthropic compaction's summary is dated by it). The head
/// followed by the tail's entries, read in order, is [`context_path_positioned`]'s path; the
/// tail is empty where the dialect or the branch does not allow the cut. A caller builds over
/// the head ([`crate::built::agent_context_built_streamed`]) and continues with each part of
/// the tail ([`crate::built::Extendable::extend_read`]), sending the messages as
/// [`crate::built::Extendable::release`] says, so only the parts not sent yet are held (one,
/// mostly).
///
/// ```
/// use pi_session_tree::{Dialect, TreeIndex, EntrySource};
/// use pi_session_tree::source::{context_path_positioned, context_path_streamed};
/// use serde_json::json;
///
/// let entries = vec![
///     json!({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"1"}}),
///     json!({"type":"model_change","id":"b","parentId":"a","provider":"p","modelId":"m"}),
///     json!({"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"2"}}),
///     json!({"type":"message","id":"d","parentId":"c","message":{"role":"user","content":"3"}}),
/// ];
/// let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
/// let ((from, head), tail) = context_path_streamed(&entries, &index, &[0, 1, 2, 3], Dialect::PI).unwrap();
/// assert_eq!((from, &head[..], tail), (vec![Some(0), Some(1)], &entries[..2], vec![2, 3]));
/// // omp keeps the message after the model change with the head.
/// let ((from, _), tail) = context_path_streamed(&entries, &index, &[0, 1, 2, 3], Dialect::OMP).unwrap();
/// assert_eq!((from, tail), (vec![Some(0), Some(1), Some(2)], vec![3]));
/// ```
pub fn context_path_streamed<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
    dialect: Dialect,
) -> Result<(PositionedPath, Vec<usize>), S::Error> {
    context_path_split(source, index, positions, dialect, true)
}

/// [`context_path_streamed`] in two steps, for a caller that starts reading the tail before
/// the head is read: the plan ([`ContextPlan`]: the entries that are not `message`s read, the
/// sent part found, the tail known) and then the head's messages ([`ContextPlan::read_head`]).
/// The plan's tail ([`ContextPlan::tail`]) is what [`context_path_streamed`] gives, unless the
/// head's read joins it to the head (then its tail is empty): only when a compaction comes
/// before the sent part and no assistant turn is among the head's messages, since an
/// assistant among the tail's then decides whether the messages before the sent part are read
/// for the model.
///
/// ```
/// use pi_session_tree::{Dialect, TreeIndex, EntrySource};
/// use pi_session_tree::source::{context_path_planned, context_path_streamed};
/// use serde_json::json;
///
/// let entries = vec![
///     json!({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"1"}}),
///     json!({"type":"model_change","id":"b","parentId":"a","provider":"p","modelId":"m"}),
///     json!({"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"2"}}),
/// ];
/// let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
/// let plan = context_path_planned(&entries, &index, &[0, 1, 2], Dialect::PI).unwrap();
/// assert_eq!(plan.tail(), vec![2]);
/// // The head's messages, read by whatever the caller reads with (here: the slice itself).
/// let read = plan.read_head(|positions| entries.entry_values(positions)).unwrap();
/// assert_eq!(read, context_path_streamed(&entries, &index, &[0, 1, 2], Dialect::PI).unwrap());
/// ```
pub fn context_path_planned<'p, S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &'p [usize],
    dialect: Dialect,
) -> Result<ContextPlan<'p>, S::Error> {
    ContextPlan::new(source, index, positions, dialect, true)
}

/// [`context_path_positioned`], and with `split` [`context_path_streamed`]'s tail.
fn context_path_split<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
    dialect: Dialect,
    split: bool,
) -> Result<(PositionedPath, Vec<usize>), S::Error> {
    ContextPlan::new(source, index, positions, dialect, split)?
        .read_head(|wanted| source.entry_values(wanted))
}

/// What [`context_path_planned`] learnt of a branch before the head's messages are read: the
/// entries that are not `message`s (read) and the stand-ins of those named by them, where the
/// sent part starts, and which `message` entries go with the head and which with the tail.
#[derive(Debug)]
pub struct ContextPlan<'p> {
    /// The branch's positions, root first.
    positions: &'p [usize],
    /// For each path index, whether it is a `message` with an id (read only when sent).
    unread: Vec<bool>,
    /// The path indices of `sparse`, ascending.
    sparse_at: Vec<usize>,
    /// The entries read (every one that is not such a `message`) and the stand-ins.
    sparse: Vec<Value>,
    /// The path indices of the stand-ins, ascending.
    stand_ins: Vec<usize>,
    /// The path index of the first entry the dialect may send.
    start: usize,
    /// The `message`s read with the head (path indices, ascending).
    sent: Vec<usize>,
    /// The `message`s left to the caller (path indices, ascending).
    tail: Vec<usize>,
}

impl<'p> ContextPlan<'p> {
    fn new<S: EntrySource + ?Sized>(
        source: &S,
        index: &TreeIndex,
        positions: &'p [usize],
        dialect: Dialect,
        split: bool,
    ) -> Result<Self, S::Error> {
        let node = |at: usize| index.node(positions[at]);
        // Asked once a position: the walks below ask again and again (5,529 questions, ~90
        // instructions each, for the 2,471 entries of the 5 MB bench session's branch).
        let unread: Vec<bool> = positions
            .iter()
            .map(|&position| index.is_message_with_id(position))
            .collect();
        // Every list below holds path indices in ascending order (the last one once
        // reversed), so the path is merged from them at the end, without a map of every entry.
        let others: Vec<usize> = (0..positions.len()).filter(|&at| !unread[at]).collect();
        let other_values = read(source, positions, &others)?;
        let named: Vec<&str> = other_values
            .iter()
            .flat_map(|entry| {
                ID_REFERENCES
                    .iter()
                    .filter_map(|key| entry.get(*key)?.as_str())
            })
            .collect();
        let mut stand_ins = index.path_indices_with_ids(positions, &named);
        stand_ins.retain(|&at| unread[at]);
        // The entries read so far and the stand-ins, in path order.
        let mut sparse_at: Vec<usize> = Vec::with_capacity(others.len() + stand_ins.len());
        let mut sparse: Vec<Value> = Vec::with_capacity(others.len() + stand_ins.len());
        {
            let mut read_so_far = others.iter().copied().zip(other_values).peekable();
            let mut stand_ins = stand_ins.iter().copied().peekable();
            loop {
                let take_read = match (read_so_far.peek(), stand_ins.peek()) {
                    (Some((read_at, _)), Some(stand_in)) => read_at < stand_in,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => break,
                };
                if take_read {
                    if let Some((at, entry)) = read_so_far.next() {
                        sparse_at.push(at);
                        sparse.push(entry);
                    }
                } else if let Some(at) = stand_ins.next()
                    && let Some(n) = node(at)
                {
                    sparse_at.push(at);
                    sparse.push(placeholder(n));
                }
            }
        }
        // Left-out messages are read by no rule that finds the first sent entry, so the
        // answer on this shorter path is the same entry.
        let first = dialect.build_context().first_sent(&sparse);
        let start = match first {
            FirstSent::Start => 0,
            FirstSent::At(i) => sparse_at.get(i).copied().unwrap_or(positions.len()),
            FirstSent::After(i) => sparse_at.get(i).map_or(positions.len(), |at| at + 1),
        };
        // Made as large as it may grow at once: growing a list of a long branch's messages
        // doubling by doubling touched twice its pages (each page's first touch a fault).
        let mut sent: Vec<usize> = Vec::with_capacity(positions.len().saturating_sub(start));
        sent.extend((start..positions.len()).filter(|&at| unread[at]));
        // The messages after every entry of `sparse` come last on the path, in order: they
        // may be left to the caller.
        let tail: Vec<usize> = if split && dialect.build_context().extends_by_messages() {
            let last = sparse_at.last().copied();
            let cut = sent.partition_point(|&at| last.is_some_and(|last| at < last));
            // The messages right after it that the build reads stay with the head.
            let read_after = match last {
                Some(_) => dialect.build_context().messages_read_after_others(),
                None => 0,
            };
            // The tail, most often nearly all of them, keeps the list; the head is copied out.
            let head_len = (cut + read_after).min(sent.len());
            let head = sent[..head_len].to_vec();
            sent.drain(..head_len);
            std::mem::replace(&mut sent, head)
        } else {
            Vec::new()
        };
        Ok(Self {
            positions,
            unread,
            sparse_at,
            sparse,
            stand_ins,
            start,
            sent,
            tail,
        })
    }

    /// The positions of the `message` entries the plan leaves to the caller, in branch order
    /// (empty where the dialect or the branch does not allow the cut): the tail
    /// [`Self::read_head`] gives unless it joins them to the head.
    pub fn tail(&self) -> Vec<usize> {
        self.tail.iter().map(|&at| self.positions[at]).collect()
    }

    /// The head read: [`context_path_streamed`]'s answer, the bodies of the head's messages
    /// (and of any message the plan's answer depends on) read by `read` (given positions,
    /// answering their entries in that order). The tail is [`Self::tail`], or empty when
    /// the head's read joined it to the head (see [`context_path_planned`]).
    pub fn read_head<E>(
        self,
        mut read: impl FnMut(&[usize]) -> Result<Vec<Value>, E>,
    ) -> Result<(PositionedPath, Vec<usize>), E> {
        let (positions, start, unread) = (self.positions, self.start, self.unread);
        let (sparse_at, sparse, stand_ins) = (self.sparse_at, self.sparse, self.stand_ins);
        let (mut sent, mut tail) = (self.sent, self.tail);
        let mut read_at = |at: &[usize]| read_with(positions, at, &mut read);
        let is_stand_in = |at: usize| stand_ins.binary_search(&at).is_ok();
        let mut sent_values = read_at(&sent)?;
        let is_assistant =
            |entry: &Value| MessageRef::new(EntryRef::new(entry).message()).is_role("assistant");
        // Read backwards from `start`, batch by batch: path indices descending.
        let mut before_at: Vec<usize> = Vec::new();
        let mut before_values: Vec<Value> = Vec::new();
        let sparse_assistant = sparse_at
            .iter()
            .zip(&sparse)
            .any(|(&at, entry)| at >= start && !is_stand_in(at) && is_assistant(entry));
        let mut assistant_sent = sparse_assistant || sent_values.iter().any(is_assistant);
        if !assistant_sent && start > 0 && !tail.is_empty() {
            // Whether the messages before the sent part are read (for the model) depends on
            // an assistant among the tail's: read here, the path is the one the uncut read
            // gives.
            let tail_values = read_at(&tail)?;
            assistant_sent = tail_values.iter().any(is_assistant);
            sent.append(&mut tail);
            sent_values.extend(tail_values);
        }
        let tail: Vec<usize> = tail.into_iter().map(|at| positions[at]).collect();
        if !assistant_sent {
            let mut before: Vec<usize> = (0..start).rev().filter(|&at| unread[at]).collect();
            while !before.is_empty() {
                let batch: Vec<usize> = before.drain(..before.len().min(BACKWARD_BATCH)).collect();
                let values = read_at(&batch)?;
                let found = values.iter().any(is_assistant);
                before_at.extend(batch);
                before_values.extend(values);
                if found {
                    break;
                }
            }
        }
        before_at.reverse();
        before_values.reverse();
        // Every unread message at or after `start` was read (`sent`), and so was each one in
        // `before`: a stand-in of those gives way to the entry read.
        let read_at = before_at.into_iter().chain(sent);
        let read_values = before_values.into_iter().chain(sent_values);
        if sparse.is_empty() {
            let path = read_at
                .map(|at| Some(positions[at]))
                .zip(read_values)
                .unzip();
            return Ok((path, tail));
        }
        let total = sparse.len() + read_values.size_hint().0;
        let mut from: Vec<Option<usize>> = Vec::with_capacity(total);
        let mut path: Vec<Value> = Vec::with_capacity(total);
        let mut sparse = sparse_at.into_iter().zip(sparse).peekable();
        let mut reads = read_at.zip(read_values).peekable();
        loop {
            let (next, was_read) = match (sparse.peek(), reads.peek()) {
                (Some((at, _)), Some((read, _))) if at == read => {
                    // A stand-in replaced by the entry read.
                    sparse.next();
                    (reads.next(), true)
                }
                (Some((at, _)), Some((read, _))) if at > read => (reads.next(), true),
                (Some(_), _) => (sparse.next(), false),
                (None, Some(_)) => (reads.next(), true),
                (None, None) => break,
            };
            if let Some((at, entry)) = next {
                from.push((was_read || !is_stand_in(at)).then(|| positions[at]));
                path.push(entry);
            }
        }
        Ok(((from, path), tail))
    }
}

/// The entries of the branch `positions` that rho's `context/2` reads (req_llm messages, and
/// the OpenAI and Anthropic bodies made from them), every other one an envelope only.
///
/// rho sends, after the latest compaction, its summary, the kept range and what follows; the
/// summary names the attachments of user messages that are no longer sent. So the bodies read
/// are the latest compaction's, every entry from its first kept entry on, and of the earlier
/// `message` entries only those that may hold an `attachments` key
/// ([`EntrySource::may_hold_key`]: the store's file answers from the key filters its open
/// kept, nothing read again). Every other
/// entry is its envelope (`type`, `id`, `parentId`), which no rho rule looks past. Without a
/// compaction everything is sent and read.
///
/// `compacted` and rho's `context` over the result equal them over every body of the branch.
///
/// ```
/// use pi_session_tree::{compacted, TreeIndex, EntrySource};
/// use pi_session_tree::source::rho_path;
/// use serde_json::json;
///
/// let entries = vec![
///     json!({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"old"}}),
///     json!({"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"kept"}}),
///     json!({"type":"compaction","id":"c","parentId":"b","summary":"s","firstKeptEntryId":"b"}),
/// ];
/// let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
/// let path = rho_path(&entries, &index, &[0, 1, 2]).unwrap();
/// assert_eq!(path[1..], entries[1..]);
/// assert_eq!(compacted(&path), compacted(&entries));
/// ```
pub fn rho_path<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
) -> Result<Vec<Value>, S::Error> {
    let Some(mut path) = rho_bodies(source, index, positions)? else {
        return source.entry_values(positions);
    };
    Ok((0..positions.len())
        .map(|at| {
            path.remove(&at)
                .unwrap_or_else(|| index.node(positions[at]).map_or(Value::Null, envelope_only))
        })
        .collect())
}

/// [`rho_path`] without the envelopes: only the entries whose bodies it reads, in branch
/// order. rho's `context` over it equals it over [`rho_path`]: the compaction split finds the
/// first kept entry among the entries read (no earlier entry has its id), and an envelope
/// names no attachment. For a caller that projects rho's context and nothing else (an
/// envelope of every entry before the compaction costs more than the bodies sent).
///
/// ```
/// use pi_session_tree::{TreeIndex, EntrySource};
/// use pi_session_tree::source::{rho_path, rho_sent_path};
/// use serde_json::json;
///
/// let entries = vec![
///     json!({"type":"model_change","id":"a","parentId":null,"provider":"p","modelId":"m"}),
///     json!({"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"kept"}}),
///     json!({"type":"compaction","id":"c","parentId":"b","summary":"s","firstKeptEntryId":"b"}),
/// ];
/// let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
/// assert_eq!(rho_sent_path(&entries, &index, &[0, 1, 2]).unwrap(), entries[1..]);
/// let path = rho_path(&entries, &index, &[0, 1, 2]).unwrap();
/// assert_eq!(path[0], json!({"type":"model_change","id":"a","parentId":null})); // its envelope
/// assert_eq!(path[1..], entries[1..]);
/// ```
pub fn rho_sent_path<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
) -> Result<Vec<Value>, S::Error> {
    match rho_bodies(source, index, positions)? {
        Some(path) => Ok(path.into_values().collect()),
        None => source.entry_values(positions),
    }
}

/// The bodies [`rho_path`] reads, by index into `positions`, or `None` when the branch has no
/// compaction (everything is read).
fn rho_bodies<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
) -> Result<Option<BTreeMap<usize, Value>>, S::Error> {
    let RhoRead {
        compaction: Some((latest, compaction)),
        away,
        kept,
        later,
    } = rho_read(source, index, positions)?
    else {
        return Ok(None);
    };
    let mut path: BTreeMap<usize, Value> = BTreeMap::new();
    let read: Vec<usize> = away.into_iter().chain(kept).chain(later).collect();
    fill(source, positions, &mut path, &read)?;
    path.insert(latest, compaction);
    Ok(Some(path))
}

/// What rho's formats read of a branch ([`rho_sent_path`]), planned from its envelopes and its
/// latest compaction alone: for a caller that reads the rest a part at a time. The entries
/// [`rho_sent_path`] gives are `away`'s, `kept`'s, `compaction`'s, then `later`'s, in that
/// order (indices into the branch's positions).
#[derive(Debug, Clone, PartialEq)]
pub struct RhoRead {
    /// The latest compaction (its index into the branch's positions) and its entry, read.
    pub compaction: Option<(usize, Value)>,
    /// The `message` entries before the compaction's kept range that may hold attachments
    /// (the summary names them), in order. Empty without a compaction.
    pub away: Vec<usize>,
    /// The compaction's kept range (empty without a compaction, or when the entry it names is
    /// not before it on the branch).
    pub kept: std::ops::Range<usize>,
    /// The entries after the compaction: every one (the whole branch without one).
    pub later: std::ops::Range<usize>,
}

/// [`RhoRead`] of the branch at `positions`: reads the latest compaction's body and asks the
/// source which earlier messages may hold `attachments`; no other body is read.
///
/// ```
/// use pi_session_tree::{TreeIndex, EntrySource};
/// use pi_session_tree::source::rho_read;
/// use serde_json::json;
///
/// let entries = vec![
///     json!({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"old"}}),
///     json!({"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"kept"}}),
///     json!({"type":"compaction","id":"c","parentId":"b","summary":"s","firstKeptEntryId":"b"}),
///     json!({"type":"message","id":"d","parentId":"c","message":{"role":"user","content":"new"}}),
/// ];
/// let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
/// let read = rho_read(&entries, &index, &[0, 1, 2, 3]).unwrap();
/// assert_eq!(read.compaction, Some((2, entries[2].clone())));
/// // "a" (before the kept range) is read as a message that may hold attachments (a slice of
/// // values cannot tell: a file's key filters can).
/// assert_eq!((read.away, read.kept, read.later), (vec![0], 1..2, 3..4));
/// ```
pub fn rho_read<S: EntrySource + ?Sized>(
    source: &S,
    index: &TreeIndex,
    positions: &[usize],
) -> Result<RhoRead, S::Error> {
    let kind = |at: usize| index.kind(positions[at]);
    let Some(latest) = (0..positions.len()).rposition(|at| kind(at) == Some("compaction")) else {
        return Ok(RhoRead {
            compaction: None,
            away: Vec::new(),
            kept: 0..0,
            later: 0..positions.len(),
        });
    };
    let compaction = source.entry_value(positions[latest])?;
    let first_kept = js::as_str(EntryRef::new(&compaction).first_kept_entry_id());
    let start = first_kept
        .and_then(|first| {
            let found = index.path_indices_with_ids(&positions[..latest], &[first]);
            found.first().copied()
        })
        .unwrap_or(latest);
    let away: Vec<usize> = (0..start)
        .filter(|&at| kind(at) == Some("message"))
        .collect();
    let away_positions: Vec<usize> = away.iter().map(|&at| positions[at]).collect();
    let may_attach = source.may_hold_key(&away_positions, "attachments")?;
    let away = away
        .into_iter()
        .zip(may_attach)
        .filter_map(|(at, may)| may.then_some(at))
        .collect();
    Ok(RhoRead {
        compaction: Some((latest, compaction)),
        away,
        kept: start..latest,
        later: latest + 1..positions.len(),
    })
}

/// An entry as its envelope alone (`type`, `id`, `parentId`).
fn envelope_only(node: NodeRef<'_>) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), Value::from(node.kind));
    map.insert("id".into(), node.id.map_or(Value::Null, Value::from));
    map.insert(
        "parentId".into(),
        node.parent_id.map_or(Value::Null, Value::from),
    );
    Value::Object(map)
}

/// The bodies of the path entries `at` (indices into `positions`), in that order.
fn read<S: EntrySource + ?Sized>(
    source: &S,
    positions: &[usize],
    at: &[usize],
) -> Result<Vec<Value>, S::Error> {
    read_with(positions, at, |wanted| source.entry_values(wanted))
}

/// [`read`] through `read` (given positions, answering their entries in that order); nothing
/// asked for no entry.
fn read_with<E>(
    positions: &[usize],
    at: &[usize],
    read: impl FnOnce(&[usize]) -> Result<Vec<Value>, E>,
) -> Result<Vec<Value>, E> {
    if at.is_empty() {
        return Ok(Vec::new());
    }
    let wanted: Vec<usize> = at.iter().map(|&a| positions[a]).collect();
    read(&wanted)
}

/// Reads the bodies of the path entries `at` (indices into `positions`) into `path`.
fn fill<S: EntrySource + ?Sized>(
    source: &S,
    positions: &[usize],
    path: &mut BTreeMap<usize, Value>,
    at: &[usize],
) -> Result<(), S::Error> {
    let wanted: Vec<usize> = at.iter().map(|&a| positions[a]).collect();
    path.extend(at.iter().copied().zip(source.entry_values(&wanted)?));
    Ok(())
}

/// A `message` entry whose body is not read: its envelope and `{"role": UNREAD_ROLE}`.
fn placeholder(node: NodeRef<'_>) -> Value {
    let mut entry = Map::new();
    entry.insert("type".into(), Value::from("message"));
    entry.insert("id".into(), node.id.map_or(Value::Null, Value::from));
    entry.insert(
        "parentId".into(),
        node.parent_id.map_or(Value::Null, Value::from),
    );
    let mut message = Map::new();
    message.insert("role".into(), Value::from(UNREAD_ROLE));
    entry.insert("message".into(), Value::Object(message));
    Value::Object(entry)
}

#[cfg(test)]
mod tests {
    use super::{
        UNREAD_ROLE, context_path_planned, context_path_positioned, context_path_streamed,
    };
    use crate::{Dialect, EntrySource, SessionView, TreeIndex};
    use serde_json::{Value, json};
    use std::cell::RefCell;

    /// Entries that answer which keys each may hold, as a file's key filters do (exactly:
    /// whether the key is a member of an object anywhere in the entry), and remember whose
    /// bodies were read.
    struct Keyed {
        entries: Vec<Value>,
        read: RefCell<Vec<usize>>,
    }

    fn holds_key(value: &Value, key: &str) -> bool {
        match value {
            Value::Object(map) => map.iter().any(|(k, v)| k == key || holds_key(v, key)),
            Value::Array(items) => items.iter().any(|item| holds_key(item, key)),
            _ => false,
        }
    }

    impl EntrySource for Keyed {
        type Error = std::convert::Infallible;
        fn entry_count(&self) -> usize {
            self.entries.len()
        }
        fn envelope(&self, position: usize) -> crate::NodeInfo {
            self.entries[..].envelope(position)
        }
        fn entry_value(&self, position: usize) -> Result<Value, Self::Error> {
            self.read.borrow_mut().push(position);
            Ok(self.entries[position].clone())
        }
        fn may_hold_key(&self, positions: &[usize], key: &str) -> Result<Vec<bool>, Self::Error> {
            Ok(positions
                .iter()
                .map(|&at| holds_key(&self.entries[at], key))
                .collect())
        }
    }

    /// Detection reads the sampled `message` and `custom_message` bodies only where the key
    /// their evidence needs may be (`sections`, `attribution`), and decides as it did when it
    /// read them all: a pi file's first messages are not read at all.
    #[test]
    fn dialect_detection_reads_only_the_bodies_that_may_hold_its_evidence() {
        let system = |id: &str, sections: bool| {
            let mut message = json!({"role":"system","content":"p","timestamp":1});
            if sections {
                message["sections"] = json!([]);
            }
            json!({"type":"message","id":id,"parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",
                   "message":message})
        };
        let custom = |id: &str, attribution: bool| {
            let mut entry = json!({"type":"custom_message","id":id,"parentId":null,
                "timestamp":"2025-01-01T00:00:00.000Z","customType":"t","content":"c",
                "display":true});
            if attribution {
                entry["attribution"] = json!("user");
            }
            entry
        };
        let cases = [
            (
                vec![
                    message("a", None, "user"),
                    message("b", Some("a"), "assistant"),
                ],
                Dialect::PI,
                vec![],
            ),
            (
                vec![message("a", None, "user"), system("s", false)],
                Dialect::PI,
                vec![],
            ),
            (
                vec![message("a", None, "user"), system("s", true)],
                Dialect::PI16,
                vec![1],
            ),
            (
                vec![custom("c", false), message("a", None, "user")],
                Dialect::PI,
                vec![],
            ),
            (
                vec![custom("c", true), message("a", None, "user")],
                Dialect::OMP,
                vec![0],
            ),
        ];
        for (entries, dialect, read) in cases {
            let every_body: Vec<&Value> = entries.iter().collect();
            assert_eq!(crate::detect_dialect(false, None, every_body), dialect);
            let source = Keyed {
                entries,
                read: RefCell::new(Vec::new()),
            };
            let view = SessionView::new(&source);
            assert_eq!(view.detect_dialect().unwrap(), dialect);
            assert_eq!(*source.read.borrow(), read, "{dialect:?}");
        }
    }

    fn message(id: &str, parent: Option<&str>, role: &str) -> Value {
        json!({"type":"message","id":id,"parentId":parent,"timestamp":"2025-01-01T00:00:00.000Z",
               "message":{"role":role,"content":"t","provider":"p","model":"m","timestamp":1}})
    }

    fn compaction(id: &str, parent: &str, first_kept: &str) -> Value {
        json!({"type":"compaction","id":id,"parentId":parent,"timestamp":"2025-01-01T00:00:00.000Z",
               "summary":"s","firstKeptEntryId":first_kept,"tokensBefore":1})
    }

    /// x is named by an older compaction before the sent part (a stand-in, no position), y is
    /// left out, z (named by the latest compaction) is read in place of its stand-in; with
    /// no assistant turn after the cut, the messages before it are read backwards instead.
    #[test]
    fn stand_ins_and_reads_are_merged_in_path_order() {
        let path_of = |last_role: &str| {
            let entries = vec![
                message("x", None, "user"),
                compaction("c1", "x", "x"),
                message("y", Some("c1"), "assistant"),
                message("z", Some("y"), "user"),
                compaction("c2", "z", "z"),
                message("w", Some("c2"), last_role),
            ];
            let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
            let read =
                context_path_positioned(&entries[..], &index, &[0, 1, 2, 3, 4, 5], Dialect::PI);
            (entries.clone(), read.unwrap())
        };
        let (entries, (from, path)) = path_of("assistant");
        assert_eq!(from, [None, Some(1), Some(3), Some(4), Some(5)]);
        assert_eq!(path[0]["id"], "x");
        assert_eq!(path[0]["message"], json!({"role": UNREAD_ROLE}));
        assert_eq!(
            path[1..],
            [&entries[1], &entries[3], &entries[4], &entries[5]].map(Clone::clone)
        );
        let (entries, (from, path)) = path_of("user");
        assert_eq!(from, [Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)]);
        assert_eq!(path, entries);
    }

    /// The plan's tail is the streamed read's, unless the head holds no assistant turn after a
    /// compaction: then the head's read joins the tail to it (an assistant among the tail's
    /// decides whether the messages before the sent part are read) and the tail is empty.
    /// Either way the read equals `context_path_streamed`'s, and the head followed by the
    /// tail's entries is the uncut path.
    #[test]
    fn a_planned_tail_is_joined_to_the_head_only_when_the_head_names_no_model() {
        for head_role in ["user", "assistant"] {
            for last_role in ["user", "assistant"] {
                let entries = vec![
                    message("a", None, "user"),
                    message("b", Some("a"), "assistant"),
                    message("k", Some("b"), head_role),
                    compaction("c", "k", "k"),
                    message("w", Some("c"), last_role),
                    message("v", Some("w"), "user"),
                ];
                let index = TreeIndex::from_nodes((0..entries.len()).map(|p| entries.envelope(p)));
                let positions: Vec<usize> = (0..entries.len()).collect();
                let case = format!("head {head_role}, last {last_role}");
                let plan =
                    context_path_planned(&entries[..], &index, &positions, Dialect::PI).unwrap();
                let planned = plan.tail();
                assert_eq!(planned, [4, 5], "{case}");
                let mut asked = Vec::new();
                let read = plan
                    .read_head(|wanted| {
                        asked.push(wanted.to_vec());
                        entries.entry_values(wanted)
                    })
                    .unwrap();
                let streamed =
                    context_path_streamed(&entries[..], &index, &positions, Dialect::PI).unwrap();
                assert_eq!(read, streamed, "{case}");
                let ((from, mut path), tail) = read;
                match head_role {
                    "assistant" => {
                        assert_eq!(tail, planned, "{case}");
                        assert_eq!(asked, [vec![2]], "{case}: the head's message alone");
                    }
                    _ => {
                        assert!(tail.is_empty(), "{case}");
                        assert_eq!(asked[..2], [vec![2], vec![4, 5]], "{case}");
                    }
                }
                path.extend(tail.iter().map(|&position| entries[position].clone()));
                let (whole_from, whole) =
                    context_path_positioned(&entries[..], &index, &positions, Dialect::PI).unwrap();
                assert_eq!(path, whole, "{case}");
                assert_eq!(from[..], whole_from[..from.len()], "{case}");
            }
        }
    }
}
