//! Reading a session at any leaf, picked the way pi and omp pick it ([`LeafSelector`]: the
//! file's last entry, none, or an id, an unknown id falling back to the last entry with a
//! diagnostic), and the whole-file facts a report needs. These answer from the live log
//! without moving the cursor, reading only the bodies each answer needs and keeping none:
//! `pi-session context`, `stats` and `check` stand on them.

use std::collections::BTreeMap;

use pi_session_context::projection::{self, agent_dialect, project_context};
use pi_session_context::provider_request::{self, PiAi};
use pi_session_tree::branch_facts::{TALLY_MESSAGE_KEYS, may_change_tally_in, may_record_usage_in};
use pi_session_tree::{
    AgentContext, Branch, BranchTally, ContextOptions, Dialect, LeafSelector, UsageBreakdown,
    context::agent_context_owned,
};
use pi_session_types::needle::LineKeys;
use pi_session_types::{Entry, JsonValue, TitleSlot};

use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::formats::Projection;
use crate::project::ProjectOptions;
use crate::session::Session;

/// Entries read at a time for [`Session::usage_breakdown`], so memory stays bounded.
const USAGE_CHUNK: usize = 4096;

impl Session {
    /// The branch `leaf` picks, root first, with what cut it short (a cycle, a missing parent)
    /// and an unknown leaf id; its positions are entry positions in the log ([`Self::locate`],
    /// [`Self::values_at`]).
    pub fn branch_at(&self, leaf: &LeafSelector) -> Branch {
        self.log().index.branch_for(leaf)
    }

    /// The entries at `positions` (file order positions, as [`Self::branch_at`] gives them) as
    /// JSON values with the file's keys in the file's order. Nothing is kept.
    pub fn values_at(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        self.log().values_at(positions)
    }

    /// The dialect's `buildSessionContext` at `leaf`, as [`Self::agent_context`] gives it for
    /// the cursor's leaf, with the branch's diagnostics first, then the resolver's. Only the
    /// bodies the context needs are read, and none is kept (one-shot readers pay for nothing
    /// they do not print).
    pub fn agent_context_at(
        &self,
        leaf: &LeafSelector,
        dialect: Dialect,
        options: &ContextOptions<'_>,
    ) -> Result<(AgentContext, Vec<Diagnostic>)> {
        let log = self.log();
        let mut branch = log.index.branch_for(leaf);
        let path = log.context_path(&branch.positions, dialect)?;
        drop(log);
        let (context, mut diagnostics) = agent_context_owned(path, dialect, options);
        branch.diagnostics.append(&mut diagnostics);
        Ok((context, self.located(branch.diagnostics)))
    }

    /// rho's part of the branch `leaf` picks, root first, with the branch's diagnostics: the
    /// entries the req_llm-based formats read ([`pi_session_tree::source::rho_sent_path`]);
    /// the others are left out unread. What [`Self::project_at`]
    /// projects for those formats; [`crate::projection::rho_items`] writes it out an element
    /// at a time.
    pub fn rho_branch_at(&self, leaf: &LeafSelector) -> Result<(Vec<JsonValue>, Vec<Diagnostic>)> {
        let branch = self.branch_at(leaf);
        let values = self.rho_values_at(&branch.positions)?;
        Ok((values, self.located(branch.diagnostics)))
    }

    /// [`Session::project`] at `leaf` instead of the cursor's leaf, with the branch's
    /// diagnostics (every format) and the resolver's (agent-based formats and request bodies).
    /// `options.blobs` resolves omp's blob pictures for every format.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Format, ProjectOptions, Session, UserOptions, user};
    /// use pi_session::tree::LeafSelector;
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// let first = session.append(user("one", UserOptions::new()))?;
    /// session.append(user("two", UserOptions::new()))?;
    /// let at = LeafSelector::Id(first.id().unwrap().to_owned());
    /// let (openai, _) = session.project_at(&at, Format::OpenAi, &ProjectOptions::default())?;
    /// assert_eq!(openai, serde_json::json!([{"role": "user", "content": "one"}]));
    /// let (empty, _) = session.project_at(&LeafSelector::Null, Format::OpenAi, &ProjectOptions::default())?;
    /// assert_eq!(empty, serde_json::json!([]));
    /// # Ok(()) }
    /// ```
    pub fn project_at(
        &self,
        leaf: &LeafSelector,
        format: impl Into<Projection>,
        options: &ProjectOptions<'_>,
    ) -> Result<(JsonValue, Vec<Diagnostic>)> {
        let context_options = ContextOptions {
            blobs: options.blobs,
        };
        match format.into() {
            Projection::Format(format) => match agent_dialect(format, options.dialect) {
                Some(dialect) => {
                    let (context, diagnostics) =
                        self.agent_context_at(leaf, dialect, &context_options)?;
                    Ok((project_context(&context, format, options), diagnostics))
                }
                None => {
                    let (values, diagnostics) = self.rho_branch_at(leaf)?;
                    let (value, _) = projection::project(&values, format, options);
                    Ok((value, diagnostics))
                }
            },
            Projection::Request {
                api,
                model,
                options: request,
            } => {
                PiAi::for_dialect(options.dialect)
                    .map_err(|e| Error::invalid_input(e.to_string()))?;
                let (context, diagnostics) =
                    self.agent_context_at(leaf, options.dialect, &context_options)?;
                let body = provider_request::for_agent_context(
                    api,
                    options.dialect,
                    &context,
                    &model,
                    &request,
                )
                .map_err(|e| Error::invalid_input(e.to_string()))?;
                Ok((body, diagnostics))
            }
        }
    }

    /// [`BranchTally`] of the branch `leaf` picks (its totals, model and compactions): the
    /// bodies are read a chunk of entries at a time and dropped, so memory stays with the
    /// index however long the branch is, a message whose line can neither record a usage nor
    /// name a model is never parsed ([`pi_session_tree::branch_facts::may_change_tally`]) and
    /// another is read as the few keys the tally reads
    /// ([`pi_session_tree::branch_facts::TALLY_MESSAGE_KEYS`]).
    pub fn branch_tally(&self, leaf: &LeafSelector) -> Result<(Branch, BranchTally)> {
        let branch = self.branch_at(leaf);
        let mut tally = BranchTally::default();
        for chunk in branch.positions.chunks(USAGE_CHUNK) {
            tally.add(&values_of(self.tally_read(chunk, may_change_tally_in)?));
        }
        Ok((branch, tally))
    }

    /// [`Self::branch_tally`] and [`Self::usage_breakdown`] in one read of the log's lines
    /// (`pi-session stats` asks both): the same answers as the two apart. A branch whose
    /// entries are not in file order (a child written before its parent) is read as they
    /// read it, twice.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, UserOptions, user};
    /// use pi_session::tree::LeafSelector;
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let leaf = LeafSelector::Default;
    /// let (branch, tally, usage) = session.branch_tally_and_usage(&leaf)?;
    /// assert_eq!((branch, tally), session.branch_tally(&leaf)?);
    /// assert_eq!(usage, session.usage_breakdown()?);
    /// # Ok(()) }
    /// ```
    pub fn branch_tally_and_usage(
        &self,
        leaf: &LeafSelector,
    ) -> Result<(Branch, BranchTally, UsageBreakdown)> {
        let branch = self.branch_at(leaf);
        if !branch.positions.is_sorted() {
            let (branch, tally) = self.branch_tally(leaf)?;
            return Ok((branch, tally, self.usage_breakdown()?));
        }
        let mut on_branch = vec![false; self.len()];
        for &at in &branch.positions {
            if let Some(slot) = on_branch.get_mut(at) {
                *slot = true;
            }
        }
        let all: Vec<usize> = (0..self.len()).collect();
        let (mut tally, mut usage) = (BranchTally::default(), UsageBreakdown::default());
        for chunk in all.chunks(USAGE_CHUNK) {
            // The entries either rule may count: `may_change_tally_in` lets through every line
            // `may_record_usage_in` does. What one rule cannot count adds nothing to it.
            let read = self.tally_read(chunk, may_change_tally_in)?;
            let (positions, values): (Vec<usize>, Vec<JsonValue>) = read.into_iter().unzip();
            // The usage in file order, as `usage_breakdown` adds it; the branch's entries in
            // its order, which is the file's.
            usage.add_entries(&values);
            let branch_entries: Vec<JsonValue> = positions
                .into_iter()
                .zip(values)
                .filter(|(at, _)| on_branch.get(*at).copied().unwrap_or(false))
                .map(|(_, value)| value)
                .collect();
            tally.add(&branch_entries);
        }
        Ok((branch, tally, usage))
    }

    /// The entries at `positions` that `may_hold` says may count, with their positions (the
    /// log's `values_that_may_hold`, messages read as [`TALLY_MESSAGE_KEYS`]).
    fn tally_read(
        &self,
        positions: &[usize],
        may_hold: impl Fn(&str, LineKeys<'_>) -> bool + Sync,
    ) -> Result<Vec<(usize, JsonValue)>> {
        self.log()
            .values_that_may_hold(positions, may_hold, &TALLY_MESSAGE_KEYS)
    }

    /// The entry at `position` in file order (the file's entries, then those appended since),
    /// typed. An entry the typed model cannot read is an error for that entry only.
    pub fn entry_at(&self, position: usize) -> Result<Entry> {
        self.log().entry(position)
    }

    /// The entries at `positions` (ascending, as in file order), typed, read in one batch:
    /// the file's lines on every core, which a caller that reads many entries (`cat`) wants
    /// rather than [`Self::entry_at`] for each. The first entry the typed model cannot read
    /// makes it an error; a caller that must report each then asks [`Self::entry_at`].
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, UserOptions, user};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("one", UserOptions::new()))?;
    /// session.append(user("two", UserOptions::new()))?;
    /// let entries = session.entries_at(&[0, 1])?;
    /// assert_eq!(entries, vec![session.entry_at(0)?, session.entry_at(1)?]);
    /// # Ok(()) }
    /// ```
    pub fn entries_at(&self, positions: &[usize]) -> Result<Vec<Entry>> {
        if !positions.is_sorted() {
            return positions.iter().map(|&at| self.entry_at(at)).collect();
        }
        self.log().entries_at(positions)
    }

    /// omp's title slot (line 1 of an omp file) as the file holds it, if it has one.
    pub fn title_slot(&self) -> Option<TitleSlot> {
        self.log().file.as_ref()?.title_slot().cloned()
    }

    /// How many entries of each `type` the log holds.
    pub fn count_by_type(&self) -> BTreeMap<String, usize> {
        let log = self.log();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for node in log.index.nodes() {
            *counts.entry(node.kind).or_insert(0) += 1;
        }
        counts
            .into_iter()
            .map(|(kind, count)| (kind.to_owned(), count))
            .collect()
    }

    /// The usage of every entry of the log, every branch (the tree's `usage_record` rule, as
    /// [`crate::file_usage`] sums it), read a chunk of entries at a time; a line that cannot
    /// record a usage is never parsed ([`pi_session_tree::branch_facts::may_record_usage`]),
    /// a message read as the few keys the rule reads
    /// ([`pi_session_tree::branch_facts::TALLY_MESSAGE_KEYS`]).
    pub fn usage_breakdown(&self) -> Result<UsageBreakdown> {
        let all: Vec<usize> = (0..self.len()).collect();
        let mut usage = UsageBreakdown::default();
        for chunk in all.chunks(USAGE_CHUNK) {
            usage.add_entries(&values_of(self.tally_read(chunk, may_record_usage_in)?));
        }
        Ok(usage)
    }
}

/// The values of entries read with their positions, in order.
fn values_of(read: Vec<(usize, JsonValue)>) -> Vec<JsonValue> {
    read.into_iter().map(|(_, value)| value).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{UserOptions, user};
    use pi_session_context::projection::Format;

    #[test]
    fn project_at_the_cursor_leaf_is_project() -> Result<()> {
        let mut session = Session::in_memory("anthropic:claude-x", "/w");
        session.append(user("one", UserOptions::new()))?;
        session.append(user("two", UserOptions::new()))?;
        let options = ProjectOptions::default();
        for format in [
            Format::Agent,
            Format::Llm,
            Format::ReqLlm,
            Format::ReqLlmCompact,
            Format::OpenAi,
            Format::Anthropic,
            Format::OmpAgentLoop,
        ] {
            let at = session.project_at(&session.leaf_selector(), format, &options)?;
            let (whole, _) = projection::project(&session.branch_values()?, format, &options);
            assert_eq!(at.0, whole, "{format:?}");
        }
        Ok(())
    }

    #[test]
    fn an_unknown_leaf_falls_back_to_the_last_entry_with_a_diagnostic() -> Result<()> {
        let mut session = Session::in_memory("anthropic:claude-x", "/w");
        session.append(user("one", UserOptions::new()))?;
        let unknown = LeafSelector::Id("nope".into());
        let (value, diagnostics) =
            session.project_at(&unknown, Format::OpenAi, &ProjectOptions::default())?;
        assert_eq!(
            value,
            serde_json::json!([{"role": "user", "content": "one"}])
        );
        assert_eq!(diagnostics.len(), 1);
        Ok(())
    }
}
