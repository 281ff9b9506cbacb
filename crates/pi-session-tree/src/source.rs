//! A convenience layer over any entry store: index once from envelopes, then
//! load only the bodies each question needs.

use std::convert::Infallible;

use serde_json::{Map, Value};

use crate::context::{AgentContext, ContextOptions, Dialect, DialectEvidence, agent_context_owned};
use crate::diagnostic::Diagnostic;
use crate::index::{Branch, LeafSelector, NodeInfo, TreeIndex};
use crate::render::{RenderOptions, render_tree, tree_json};
use crate::session_meta;

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

    /// The whole entry at `position` as a JSON object.
    fn entry_value(&self, position: usize) -> Result<Value, Self::Error>;

    /// The entries at `positions`, in that order. Override when the store can
    /// batch reads.
    fn entry_values(&self, positions: &[usize]) -> Result<Vec<Value>, Self::Error> {
        positions.iter().map(|&pos| self.entry_value(pos)).collect()
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

/// How many `custom_message` bodies dialect detection reads when nothing else decided it.
const CUSTOM_MESSAGES_SAMPLED: usize = 8;
/// How many leading `message` bodies detection reads looking for pi 1.6's
/// `system` messages (with `sections`).
const MESSAGES_SAMPLED_FOR_SYSTEM: usize = 8;

impl<'s, S: EntrySource + ?Sized> SessionView<'s, S> {
    /// Indexes `source` from its envelopes.
    pub fn new(source: &'s S) -> Self {
        let index =
            TreeIndex::from_nodes((0..source.entry_count()).map(|pos| source.envelope(pos)));
        Self { source, index }
    }

    /// The tree index.
    pub fn index(&self) -> &TreeIndex {
        &self.index
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
        for node in self.index.nodes() {
            evidence.kind(&node.kind);
        }
        if evidence.dialect() == Dialect::Omp {
            return Ok(Dialect::Omp);
        }
        self.weigh_bodies(&mut evidence, "model_change", usize::MAX)?;
        if !evidence.is_decided() {
            // No header mark and no model_change shape (e.g. a headerless excerpt): omp's
            // custom messages carry `attribution`. A few bodies suffice.
            self.weigh_bodies(&mut evidence, "custom_message", CUSTOM_MESSAGES_SAMPLED)?;
        }
        if evidence.dialect() == Dialect::Pi {
            // pi 1.6 records its system prompt as a `system` message near the start of a
            // session; the first few message bodies tell a 1.6 file without 1.6-only entry
            // types apart.
            self.weigh_bodies(&mut evidence, "message", MESSAGES_SAMPLED_FOR_SYSTEM)?;
        }
        Ok(evidence.dialect())
    }

    /// Feeds the bodies of the first `limit` entries of type `kind` to `evidence`.
    fn weigh_bodies(
        &self,
        evidence: &mut DialectEvidence,
        kind: &str,
        limit: usize,
    ) -> Result<(), S::Error> {
        let positions: Vec<usize> = self.index.positions_of_kind(kind).take(limit).collect();
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

    /// The dialect's `buildSessionContext` for a leaf.
    pub fn context(
        &self,
        leaf: &LeafSelector,
        dialect: Dialect,
        options: &ContextOptions<'_>,
    ) -> Result<ResolvedContext, S::Error> {
        let (branch, path) = self.branch_entries(leaf)?;
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
        match dialect {
            Dialect::Omp => Ok(session_meta::omp_session_title(
                self.source.title_slot().as_deref(),
                self.source.header_value().as_ref(),
            )),
            Dialect::Pi | Dialect::Pi16 => {
                let positions: Vec<usize> = self.index.positions_of_kind("session_info").collect();
                Ok(session_meta::pi_session_name(&self.load(&positions)?))
            }
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
                        .and_then(|n| n.id.as_deref())
                        .is_some_and(|id| archived.contains_key(id))
                })
            })
            .collect())
    }

    /// `{"leafId", "branchIds", "tips", "labels"}`.
    pub fn tree_json(&self) -> Result<Value, S::Error> {
        Ok(tree_json(&self.index, &self.labels()?))
    }

    /// The tree drawn for a person, each entry described by `describe`.
    pub fn render(
        &self,
        describe: &dyn Fn(usize) -> String,
        options: RenderOptions,
    ) -> Result<String, S::Error> {
        Ok(render_tree(&self.index, &self.labels()?, describe, options))
    }
}
