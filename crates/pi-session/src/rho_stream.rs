//! rho's formats (`req-llm`, `openai`, `anthropic` and req_llm's compact form) written an
//! element at a time while the branch is read a part at a time: the entries rho sends are
//! read on threads of their own while this one projects and writes the part before, so
//! reading and projecting overlap (as the agent context's [`Session::context_each_leaving`]
//! does, with the same reading threads).

use std::convert::Infallible;

use pi_session_context::ProjectOptions;
use pi_session_context::projection::{Format, RhoItem, RhoItems, rho_items};
use pi_session_context::reqllm::Message;
use pi_session_context::rho::ContextParts;
use pi_session_tree::source::rho_read;
use pi_session_tree::{EntrySource, LeafSelector};

use crate::context_json::{CopyingSource, PartReader};
use crate::turns::read_parts_in_turn;
use crate::{Diagnostic, Error, Session};

impl Session {
    /// The req_llm-based `format` of the branch `leaf` picks, an element at a time: `each` is
    /// given the elements of the answer's array in order (for [`Format::Anthropic`], of its
    /// `messages`), as [`crate::projection::rho_items`] gives them over
    /// [`Self::rho_branch_at`]'s entries, and the branch's diagnostics are returned. Only the
    /// bodies rho reads are read ([`pi_session_tree::source::rho_read`]); those it sends (from
    /// the latest compaction's kept range on) a part at a time on threads of their own
    /// (without the session's lock), each `message` line as lists of the members rho reads
    /// (no map made of it: [`pi_session_context::rho::RhoEntry`]), whose texts move into the
    /// messages, so neither the entries nor the answer are ever held whole. The
    /// session is not locked while `each` runs. With `options.inputs.pdf` (documents are
    /// chosen over the whole branch) the branch is read first, then projected. The first error
    /// of `each` ends the walk.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Format, ProjectOptions, Session, UserOptions, user};
    /// use pi_session::tree::LeafSelector;
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("hello", UserOptions::new()))?;
    /// let mut items = Vec::new();
    /// let options = ProjectOptions::default();
    /// session.rho_items_each(&LeafSelector::Default, Format::OpenAi, &options, |item| {
    ///     items.push(item.into_value());
    ///     Ok::<_, pi_session::Error>(())
    /// })?;
    /// let (whole, _) = session.project_at(&LeafSelector::Default, Format::OpenAi, &options)?;
    /// assert_eq!(serde_json::Value::Array(items), whole);
    /// # Ok(()) }
    /// ```
    pub fn rho_items_each<E: From<Error>>(
        &self,
        leaf: &LeafSelector,
        format: Format,
        options: &ProjectOptions<'_>,
        mut each: impl FnMut(RhoItem) -> std::result::Result<(), E>,
    ) -> std::result::Result<Vec<Diagnostic>, E> {
        let Some(mut parts) = ContextParts::new(options) else {
            let (entries, diagnostics) = self.rho_branch_at(leaf)?;
            rho_items(&entries, format, options, each)?;
            return Ok(diagnostics);
        };
        let mut items = RhoItems::new(format, options);
        // The head (the messages before the kept range that may hold attachments, and the
        // latest compaction) read and projected under the lock: the summary, given after it.
        // Its note needs the ids of the entries sent, which the index holds.
        let (branch, later, first, (reading, parts_read)) = {
            let log = self.log();
            let branch = log.index.branch_for(leaf);
            let source = CopyingSource::for_rho(&log);
            let read = rho_read(&source, &log.index, &branch.positions)?;
            let wanted: Vec<usize> = read.away.iter().map(|&at| branch.positions[at]).collect();
            let mut head = source.entry_values(&wanted)?;
            head.extend(read.compaction.map(|(_, compaction)| compaction));
            let later: Vec<usize> = branch.positions[read.kept]
                .iter()
                .chain(&branch.positions[read.later])
                .copied()
                .collect();
            let later_ids = later
                .iter()
                .map(|&position| log.index.node(position).and_then(|node| node.id));
            let mut first: Vec<Message> = Vec::new();
            let gathered = parts.head(&head, later_ids, &mut |message| {
                first.push(message);
                Ok::<(), Infallible>(())
            });
            let Ok(()) = gathered;
            let reading = PartReader::of(&source, &later);
            (branch, later, first, reading)
        };
        for message in first {
            items.push(message, &mut each)?;
        }
        // The entries sent: read a part at a time on a thread per core (this one among them),
        // without the session's lock, while this one projects and writes the parts in order.
        let chunks: Vec<&[usize]> = parts_read.into_iter().map(|part| &later[part]).collect();
        read_parts_in_turn(
            &chunks,
            reading.threads(),
            |part, read_by| Ok((reading.rho_entries(self, part)?, read_by)),
            |(_, read_by)| *read_by,
            |(entries, _)| {
                parts.part_read(entries, &mut |message| items.push(message, &mut each))?;
                Ok::<_, E>(None::<(Vec<_>, usize)>)
            },
        )?;
        parts.finish(&mut |message| items.push(message, &mut each))?;
        items.finish(&mut each)?;
        Ok(self.located(branch.diagnostics))
    }
}
