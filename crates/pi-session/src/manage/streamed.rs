//! [`ContextStats`] of a whole branch a chunk of entries at a time (`Session::context_stats`).
//!
//! Without a budget the planner ([`super::plan`]) changes nothing but the levels the stamps
//! give, so its statistics need no plan: each entry is read, rendered at its stamp's level,
//! projected alone and counted, and dropped. What stays in memory is the index, the ids of the
//! tool calls seen (for the phases) and the counters, however long the branch.
//!
//! The figures are the planner's, exactly (a test compares both on every fixture and corpus
//! file): an entry's tokens are those of its own projection (without the results rho adds for
//! calls answered by other entries), and the total is that of rho's projection of the whole
//! branch ([`MessageStream`] pushes the same messages in the same order and closes unanswered
//! calls as [`rho::messages`] does). Two cases go through the planner instead, because they
//! need the whole branch at once: PDF inputs (documents are chosen over the whole branch,
//! newest first) and a stamp `Compacted` on the branch (a call and its result are left out
//! together unless another member is pinned or in the latest turn).

use std::borrow::Cow;

use pi_session_context::reqllm::Role;
use pi_session_context::rho::{self, MessageStream};
use pi_session_tree::EntrySource;
use pi_session_types::JsonValue;
use pi_session_types::shallow::{Keys, with_key};
use pi_session_types::view::key;
use pi_session_types::view::{EntryRef, MessageRef};

use super::overlay::Overlay;
use super::phase::Phases;
use super::{Resolution, render};
use crate::error::{Error, Result};
use crate::project::ProjectOptions;
use crate::session::{LogSource, Session};
use crate::stats::{
    BYTES_PER_TOKEN, ContextStats, PhaseTokens, ResolutionTokens, RoleTokens, StatsOptions,
    message_tokens,
};

/// Entries read at a time.
const CHUNK: usize = 4096;

/// The keys of a `message` line the statistics read (any other entry is read whole): those
/// rho's projection reads ([`rho::MESSAGE_KEYS`]: the counts are of its messages, and of its
/// content blocks, what rho reads) and those the phases look at (a call's name and arguments
/// are in `content`, a bash run's `command`).
const STATS_MESSAGE_KEYS: Keys = Keys {
    entry: rho::MESSAGE_KEYS.entry,
    message: &STATS_MESSAGE_KEYS_READ,
    // The phases read a call's type, id, name and arguments: rho reads those too.
    blocks: rho::MESSAGE_KEYS.blocks,
};

/// [`STATS_MESSAGE_KEYS`]`.message`: rho's and `command`.
const STATS_MESSAGE_KEYS_READ: [&str; 7] = with_key(key::COMMAND, rho::MESSAGE_KEYS_READ);

/// The branch's statistics, streamed; `None` when they need the planner (see the module).
pub(crate) fn streamed_stats(
    session: &Session,
    overlay: &Overlay,
    project: &ProjectOptions<'_>,
    options: &StatsOptions<'_>,
) -> Result<Option<ContextStats>> {
    let Some(mut stream) = MessageStream::new(project) else {
        return Ok(None);
    };
    if overlay
        .values()
        .any(|level| *level == Resolution::Compacted)
    {
        return Ok(None);
    }
    let default_count = |text: &str| (text.len() as u64).div_ceil(BYTES_PER_TOKEN);
    let count: &dyn Fn(&str) -> u64 = match options.counter {
        Some(counter) => counter,
        None => &default_count,
    };
    let log = session.log();
    let leaf = session.leaf_in(&log);
    let positions = log.branch_positions(leaf.as_deref());
    let entry_count = log.index.len();
    let source = LogSource { log: &log };
    let head = compaction_head(&source, &positions)?;

    let mut by_role = RoleTokens::default();
    let mut by_resolution = ResolutionTokens::default();
    let mut by_phase = PhaseTokens::default();
    let mut messages = 0;
    let summary_tokens = match &head.summary {
        Some(summary) => {
            by_role.add(summary, count);
            messages += 1;
            message_tokens(summary, count)
        }
        None => 0,
    };
    let mut phases = Phases::default();
    let mut out = Vec::new();
    let mut drain = |out: &mut Vec<_>, by_role: &mut RoleTokens| {
        messages += out.len();
        for message in out.drain(..) {
            by_role.add(&message, count);
        }
    };
    // Each entry's level, from its id as the index holds it (before it is read).
    let level_at = |at: usize| {
        log.index
            .id(at)
            .and_then(|id| overlay.get(id).copied())
            .unwrap_or(Resolution::Full)
    };
    for chunk in head.on.chunks(CHUNK) {
        let chunk: Vec<usize> = chunk.iter().map(|&at| positions[at]).collect();
        let levels: Vec<Resolution> = chunk.iter().map(|&at| level_at(at)).collect();
        // An entry the overlay renders at another level is read whole (rendering reads more),
        // the others as the keys the statistics read; each read once.
        let as_is = |level: &Resolution| matches!(level, Resolution::Full | Resolution::Pinned);
        let read = |whole: bool| -> Vec<usize> {
            chunk
                .iter()
                .zip(&levels)
                .filter(|(_, level)| as_is(level) != whole)
                .map(|(&at, _)| at)
                .collect()
        };
        let mut keyed = log
            .values_that_may_hold(&read(false), |_, _| true, &STATS_MESSAGE_KEYS)?
            .into_iter()
            .map(|(_, value)| value);
        let mut whole = log.values_at(&read(true))?.into_iter();
        for &level in &levels {
            // Every position is given (`may_hold` refuses none).
            let value = if as_is(&level) {
                keyed.next()
            } else {
                whole.next()
            }
            .ok_or_else(Error::entry_not_read)?;
            let phase = phases.of(&value);
            // Full and Pinned render as the entry itself: projected as read, not copied.
            let rendered = match level {
                Resolution::Full | Resolution::Pinned => Cow::Borrowed(&value),
                _ => match render(&value, level) {
                    Some(rendered) => Cow::Owned(rendered),
                    None => continue,
                },
            };
            let rendered: &JsonValue = &rendered;
            let is_result = EntryRef::new(rendered)
                .message_ref()
                .and_then(MessageRef::role)
                == Some("toolResult");
            let mut tokens = 0;
            for message in stream.entry(rendered) {
                if is_result || message.role != Role::Tool {
                    tokens += message_tokens(&message, count);
                }
                stream.push(message, &mut out);
            }
            *by_resolution.slot(level) += tokens;
            *by_phase.slot(phase) += tokens;
            drain(&mut out, &mut by_role);
        }
    }
    stream.finish(&mut out);
    drain(&mut out, &mut by_role);
    let mut stats =
        ContextStats::from_role_tokens(by_role, messages, positions.len(), &session.model, options);
    super::plan::complete(
        &mut stats,
        super::plan::Tallies {
            by_resolution,
            by_phase,
            summary_tokens,
            compacted_entries: head.covered,
            evicted_entries: 0,
            entry_count,
        },
    );
    Ok(Some(stats))
}

/// What the latest compaction of a branch decides: the summary message it sends, the entries
/// still sent (indices into the branch: its kept range, then what follows it) and how many it
/// covers.
pub(super) struct Head {
    pub(super) summary: Option<pi_session_context::reqllm::Message>,
    pub(super) on: Vec<usize>,
    pub(super) covered: usize,
}

/// [`Head`] of the branch at `positions`, from the index and the bodies the summary needs (the
/// compaction, and the compacted messages that may name attachments): the same split and
/// summary as [`pi_session_tree::compacted`] and [`rho::summary_message`] over the whole
/// branch, whose other bodies stand as envelopes here.
pub(super) fn compaction_head(source: &LogSource<'_>, positions: &[usize]) -> Result<Head> {
    let kind = |at: usize| source.log.index.kind(positions[at]);
    let Some(latest) = (0..positions.len()).rposition(|at| kind(at) == Some("compaction")) else {
        return Ok(Head {
            summary: None,
            on: (0..positions.len()).collect(),
            covered: 0,
        });
    };
    let read = pi_session_tree::source::rho_path(source, &source.log.index, &positions[..=latest])?;
    let mut values: Vec<JsonValue> = read;
    values.extend(positions[latest + 1..].iter().map(|&at| {
        let node = source.envelope(at);
        serde_json::json!({"type": node.kind, "id": node.id, "parentId": node.parent_id})
    }));
    let split = pi_session_tree::compacted(&values);
    let summary = rho::summary_message(&values, &split);
    let covered = split.compaction.map_or(0, |c| c - split.kept.len());
    Ok(Head {
        summary,
        on: split.kept.chain(split.later).collect(),
        covered,
    })
}

#[cfg(test)]
mod tests {
    use super::STATS_MESSAGE_KEYS;
    use pi_session_context::rho;

    #[test]
    fn the_statistics_read_every_key_rho_reads() {
        let rho = rho::MESSAGE_KEYS;
        assert_eq!(STATS_MESSAGE_KEYS.entry, rho.entry);
        assert!(
            rho.message
                .iter()
                .all(|key| STATS_MESSAGE_KEYS.message.contains(key))
        );
        assert_eq!(STATS_MESSAGE_KEYS.blocks, rho.blocks);
    }
}
