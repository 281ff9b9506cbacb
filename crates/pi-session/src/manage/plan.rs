//! `Session::prepare_context`: the selective eviction planner, and bounded tool results.
//!
//! The plan for a cursor's branch, in this order:
//! 1. **Levels from the overlay.** Entries the latest compaction covers are not sent (its
//!    summary is). Every other entry starts at its stamp ([`Session::set_resolution`]), else
//!    Full. A tool call and its results are one *group*: they are sent or left out together. A
//!    group with a member stamped Compacted is left out, unless another member is pinned or in
//!    the latest turn; then the member stamped Compacted is sent Summarized instead.
//! 2. **Bounded tool results** (with a budget): the output of an unpinned tool result at Full
//!    or Attached longer than `tool_result_percent` of the budget (in bytes, at
//!    [`BYTES_PER_TOKEN`]) is cut at the last newline before that limit ([`bound_text`]); the
//!    entry itself keeps the whole output.
//! 3. **Downgrades** while the estimate is over the budget: oldest first, every entry that is
//!    neither pinned nor in the latest turn (from the last user message on) goes Full (or
//!    Attached) → Outlined; then, oldest first again, Outlined → Summarized.
//! 4. **Eviction** while still over: whole turns, oldest first (a turn starts at a user
//!    message; what comes before the first is turn 0), each with every group it touches,
//!    except groups with a pinned member or a member in the latest turn.
//!
//! Steps 3 and 4 run twice. The first pass works on estimates (`estimate`: byte lengths of
//! what each level would send, from the entry's JSON, nothing rendered; for a file's lines,
//! from their `Sketch`, nothing parsed), so every entry's level is decided without building
//! its renderings, and an entry not sent is never parsed. Then only the entries kept are rendered, once,
//! and counted with the real counter; while that count is over, the same ladder goes on from
//! where the first pass left it, with real counts. A long branch thus costs a walk over its
//! JSON plus the projection of what fits, not three renderings of every entry.
//!
//! It stops as soon as the count fits, so it does no more than the estimates ask. What is left
//! (the compaction summary, pinned entries and the latest turn) is never touched: when that
//! alone is over the budget, [`PreparedContext::over_by`] says by how much. The plan is a pure
//! function of the branch, the overlay and the options: the same inputs give the same plan.

use pi_session_types::view::{BlockRef, EntryRef, MessageRef, key};
use std::borrow::Cow;
use std::collections::HashMap;

use pi_session_context::reqllm::{Message, Role};
use pi_session_context::rho::{self, MessageStream};
use pi_session_types::JsonValue;
use serde::Serialize;

use super::estimate::estimate;
use super::overlay::Overlay;
use super::phase::{Phase, Phases};
use super::sketch::{Facts, Sketch};
use super::{Resolution, render};
use crate::error::{Error, Result};
use crate::project::ProjectOptions;
use crate::session::Session;
use crate::stats::{
    BYTES_PER_TOKEN, ContextStats, PhaseTokens, ResolutionTokens, RoleTokens, StatsOptions,
    message_tokens,
};

/// The default share of the budget one tool result may take before it is cut (percent).
pub const DEFAULT_TOOL_RESULT_PERCENT: u64 = 25;

/// How [`Session::prepare_context`] plans.
#[derive(Debug, Clone, Copy)]
pub struct PrepareOptions<'a> {
    /// The prompt budget in tokens; `None`: no downgrades, cuts or evictions (only the
    /// cursor's stamps apply).
    pub budget: Option<u64>,
    /// The share of the budget (percent) above which a tool result is cut; 0: never.
    pub tool_result_percent: u64,
    /// How entries are projected (inputs, documents, blobs).
    pub project: ProjectOptions<'a>,
    /// Window, reserve and token counter of the statistics (the counter is the planner's too).
    pub stats: StatsOptions<'a>,
}

impl Default for PrepareOptions<'_> {
    fn default() -> Self {
        Self {
            budget: None,
            tool_result_percent: DEFAULT_TOOL_RESULT_PERCENT,
            project: ProjectOptions::default(),
            stats: StatsOptions::default(),
        }
    }
}

/// What was cut from a bounded tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bounded {
    /// Bytes of the output kept.
    pub kept_bytes: usize,
    /// Bytes cut.
    pub cut_bytes: usize,
    /// Lines cut.
    pub cut_lines: usize,
}

/// One entry of the branch after the latest compaction, as planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedEntry {
    /// The entry's id.
    pub id: Option<String>,
    /// Its `type` (`message` entries: the message's role).
    pub kind: String,
    /// The cursor's stamp on it.
    pub stamp: Option<Resolution>,
    /// The level it is sent at (Compacted: not sent).
    pub level: Resolution,
    /// Whether the planner evicted it (its level is then Compacted).
    pub evicted: bool,
    /// In the latest turn (from the last user message on): never downgraded or evicted.
    pub latest: bool,
    /// Never evicted: pinned, in the latest turn, or the call or result of one that is.
    pub protected: bool,
    /// Estimated tokens it is sent with (0 when not sent).
    pub tokens: u64,
    /// Its phase ([`crate::manage::phase`]).
    pub phase: Phase,
    /// What was cut from its output, for a bounded tool result.
    pub bounded: Option<Bounded>,
}

/// The context to send, fitted to a budget, with its plan and statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedContext {
    /// The req_llm messages (rho's projection of the planned entries).
    pub messages: Vec<Message>,
    /// The plan, one per entry from the latest compaction's kept range on, root first.
    pub entries: Vec<PlannedEntry>,
    /// The budget planned for.
    pub budget: Option<u64>,
    /// Tokens over the budget after the plan (0: it fits). Only pinned entries, the compaction
    /// summary and the latest turn are left when this is not 0.
    pub over_by: u64,
    /// The statistics of [`messages`](Self::messages).
    pub stats: ContextStats,
}

impl PreparedContext {
    /// Whether the messages fit the budget (always true without one).
    pub fn fits(&self) -> bool {
        self.over_by == 0
    }
}

/// The context to send, fitted to a budget, with its statistics: what
/// [`Session::fit_context`] gives, [`PreparedContext`] without the plan of each entry.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedContext {
    /// The req_llm messages (rho's projection of the planned entries).
    pub messages: Vec<Message>,
    /// The budget planned for.
    pub budget: Option<u64>,
    /// Tokens over the budget after the plan (0: it fits); see [`PreparedContext::over_by`].
    pub over_by: u64,
    /// The statistics of [`messages`](Self::messages).
    pub stats: ContextStats,
    /// The planner's items, freed with the context.
    spent: Spent,
}

/// The planner's working memory (an item per entry planned, with the lines' sketches and
/// renderings it made), kept with the [`FittedContext`] made of it instead of freed before it
/// is handed out: a caller about to exit may then forget the context whole (as the CLI does)
/// rather than free it piece by piece. No part of the context's value: a clone has none, and
/// equality ignores it.
#[derive(Default)]
struct Spent(
    #[expect(dead_code, reason = "held to be freed with the context, never read")] Vec<Item>,
);

impl Clone for Spent {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for Spent {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spent")
    }
}

impl FittedContext {
    /// Whether the messages fit the budget (always true without one).
    pub fn fits(&self) -> bool {
        self.over_by == 0
    }
}

impl From<PreparedContext> for FittedContext {
    fn from(prepared: PreparedContext) -> Self {
        Self {
            messages: prepared.messages,
            budget: prepared.budget,
            over_by: prepared.over_by,
            stats: prepared.stats,
            spent: Spent::default(),
        }
    }
}

impl From<Planned> for FittedContext {
    fn from(planned: Planned) -> Self {
        let Planned { context, items } = planned;
        Self {
            spent: Spent(items),
            ..context.into()
        }
    }
}

/// A plan made: the context without the plan of each entry (`entries` empty), and the
/// planner's items it is listed from ([`Planned::prepared`]).
pub(crate) struct Planned {
    context: PreparedContext,
    items: Vec<Item>,
}

impl Planned {
    /// The context with the plan of each entry.
    pub(crate) fn prepared(self) -> PreparedContext {
        let Planned { context, items } = self;
        PreparedContext {
            entries: items
                .into_iter()
                .map(|i| PlannedEntry {
                    id: i.id,
                    kind: i.kind,
                    stamp: i.stamp,
                    level: i.level,
                    evicted: i.evicted,
                    latest: i.latest,
                    protected: i.protected,
                    tokens: i.tokens,
                    phase: i.phase,
                    bounded: i.bounded,
                })
                .collect(),
            ..context
        }
    }
}

/// `text` cut to at most `limit` bytes at the last newline before the limit (at the last
/// character boundary when there is none): never inside a UTF-8 sequence, and so never inside
/// a character that JavaScript holds as a surrogate pair. `None` when it fits.
///
/// ```
/// use pi_session::manage::bound_text;
/// let (kept, cut) = bound_text("one\ntwo\nthree\n", 9).unwrap();
/// assert_eq!(kept, "one\ntwo");
/// assert_eq!((cut.kept_bytes, cut.cut_bytes, cut.cut_lines), (7, 7, 1));
/// assert_eq!(bound_text("héllo", 2).unwrap().0, "h"); // é is two bytes
/// assert!(bound_text("short", 10).is_none());
/// ```
pub fn bound_text(text: &str, limit: usize) -> Option<(String, Bounded)> {
    if text.len() <= limit {
        return None;
    }
    let mut boundary = limit;
    while !text.is_char_boundary(boundary) {
        boundary -= 1;
    }
    let kept = text[..boundary].rfind('\n').unwrap_or(boundary);
    let cut = text[kept..].trim_start_matches('\n');
    Some((
        text[..kept].to_owned(),
        Bounded {
            kept_bytes: kept,
            cut_bytes: text.len() - kept,
            cut_lines: if cut.is_empty() {
                0
            } else {
                cut.trim_end_matches('\n').split('\n').count()
            },
        },
    ))
}

/// The note that ends a bounded output.
fn cut_note(cut: &Bounded) -> String {
    format!(
        "\n[… {} cut ({} bytes) to fit the context; the whole output is kept in the session …]",
        super::render::counted(cut.cut_lines, "line"),
        cut.cut_bytes
    )
}

/// A tool result (entry JSON) with its text output bounded to `limit` bytes, and what was cut.
fn bound_result(entry: &JsonValue, limit: usize) -> Option<(JsonValue, Bounded)> {
    let message = EntryRef::new(entry).message()?;
    if MessageRef::new(message).role() != Some("toolResult") {
        return None;
    }
    let text = rho::text(MessageRef::new(message).content());
    let (kept, cut) = bound_text(&text, limit)?;
    let mut out = entry.clone();
    let pictures: Vec<JsonValue> = MessageRef::new(message)
        .content()
        .and_then(JsonValue::as_array)
        .into_iter()
        .flatten()
        .filter(|p| BlockRef::new(p).is("image"))
        .cloned()
        .collect();
    let mut content = vec![serde_json::json!({"type": "text", "text": kept + &cut_note(&cut)})];
    content.extend(pictures);
    out[key::MESSAGE][key::CONTENT] = JsonValue::Array(content);
    Some((out, cut))
}

/// One entry of the branch as the planner gets it.
pub(crate) enum Body {
    /// Parsed.
    Value(JsonValue),
    /// A line of the file (its position in the log) with its [`Sketch`] once measured: estimated
    /// from the sketch, read and parsed only when sent. A line left unmeasured is one the first
    /// pass is shown to evict whatever it weighs ([`Ladder::evicts_all_before`]): its estimates
    /// are 0.
    Line(usize, Option<Box<Sketch>>),
}

/// The entries a plan is given, root first, each with its facts (boxed: the list is moved
/// whole while the plan's items are made of it).
pub(crate) type Bodies = Vec<(Box<Facts>, Body)>;

/// Reads entries of the log again by position, for a plan of a file's lines.
pub(crate) trait Lines {
    /// The entries at these positions, parsed.
    fn values(&self, positions: &[usize]) -> Result<Vec<JsonValue>>;
    /// The sketches of the lines at these positions (`None`: only a parse can tell).
    fn sketches(&self, positions: &[usize]) -> Result<Vec<Option<Sketch>>>;
}

/// A plan of parsed values reads no line.
struct NoLines;

impl Lines for NoLines {
    fn values(&self, _: &[usize]) -> Result<Vec<JsonValue>> {
        Ok(Vec::new())
    }
    fn sketches(&self, _: &[usize]) -> Result<Vec<Option<Sketch>>> {
        Ok(Vec::new())
    }
}

struct Item {
    body: Body,
    id: Option<String>,
    kind: String,
    stamp: Option<Resolution>,
    level: Resolution,
    sent: bool,
    evicted: bool,
    latest: bool,
    protected: bool,
    turn: usize,
    group: usize,
    tokens: u64,
    phase: Phase,
    bounded: Option<Bounded>,
    rendered: Rendered,
    /// rho's messages of the entry as rendered, counted by `settle` and sent as they are
    /// (none when the projection takes PDF documents, chosen over the whole branch).
    messages: Vec<Message>,
}

/// An entry as it is sent, once settled.
enum Rendered {
    /// Not sent.
    None,
    /// The entry itself (Full or Pinned, not bounded): sent as parsed, not copied.
    Body,
    /// A rendering of it.
    Value(JsonValue),
}

impl Item {
    /// A line whose sketch is not read yet.
    fn unmeasured(&self) -> bool {
        matches!(self.body, Body::Line(_, None))
    }

    /// The log position of a line (0 for a parsed entry, which is never read again).
    fn position(&self) -> usize {
        match self.body {
            Body::Line(position, _) => position,
            Body::Value(_) => 0,
        }
    }

    /// The entry as it is sent, if it is.
    fn rendered(&self) -> Option<&JsonValue> {
        match (&self.rendered, &self.body) {
            (Rendered::Value(value), _) | (Rendered::Body, Body::Value(value)) => Some(value),
            _ => None,
        }
    }
}

struct Planner<'o, 'a> {
    options: &'o PrepareOptions<'a>,
    count: &'o dyn Fn(&str) -> u64,
}

impl Planner<'_, '_> {
    /// Renders `item` at its level (bounded when asked) and counts its tokens.
    fn settle(&self, item: &mut Item, limit: Option<usize>) {
        self.settle_rendered(item, limit, None);
    }

    /// [`settle`](Self::settle), with the rendering of a line sent Summarized from its sketch
    /// when already made ([`settle_kept`]).
    fn settle_rendered(&self, item: &mut Item, limit: Option<usize>, made: Option<JsonValue>) {
        item.rendered = Rendered::None;
        item.tokens = 0;
        item.bounded = None;
        item.messages = Vec::new();
        if !item.sent {
            return;
        }
        let value = match &item.body {
            Body::Value(value) => value,
            // A line left unparsed by `parse_sent`: Summarized, rendered from its sketch.
            Body::Line(_, sketch) => {
                if item.level == Resolution::Summarized
                    && let Some(sketch) = sketch
                {
                    let rendered = made.unwrap_or_else(|| sketch.summarized());
                    (item.tokens, item.messages) = self.tokens_of(&rendered);
                    item.rendered = Rendered::Value(rendered);
                }
                return;
            }
        };
        // Full and Pinned render as the entry itself ([`render`]): used as parsed unless a
        // long result is bounded.
        let as_is = matches!(item.level, Resolution::Full | Resolution::Pinned);
        let rendered = if as_is {
            Some(Cow::Borrowed(value))
        } else {
            render(value, item.level).map(Cow::Owned)
        };
        let bounded = match (limit, rendered.as_deref()) {
            (Some(limit), Some(value))
                if matches!(item.level, Resolution::Full | Resolution::Attached) =>
            {
                bound_result(value, limit)
            }
            _ => None,
        };
        item.rendered = match (bounded, rendered) {
            (Some((bounded, cut)), _) => {
                item.bounded = Some(cut);
                Rendered::Value(bounded)
            }
            (None, Some(Cow::Borrowed(_))) => Rendered::Body,
            (None, Some(Cow::Owned(value))) => Rendered::Value(value),
            (None, None) => Rendered::None,
        };
        if let Some((tokens, messages)) = item.rendered().map(|value| self.tokens_of(value)) {
            (item.tokens, item.messages) = (tokens, messages);
        }
    }

    /// Tokens of one rendered entry: the messages rho makes of it (without the synthetic
    /// results it adds for calls whose results are other entries); and those messages, kept
    /// to be sent (none when the projection takes PDF documents: [`assemble`] projects the
    /// entries sent again).
    fn tokens_of(&self, value: &JsonValue) -> (u64, Vec<Message>) {
        let is_result = EntryRef::new(value)
            .message_ref()
            .and_then(MessageRef::role)
            == Some("toolResult");
        let counted = |m: &&Message| is_result || m.role != Role::Tool;
        match MessageStream::new(&self.options.project) {
            Some(stream) => {
                let messages = stream.entry(value);
                let tokens = messages
                    .iter()
                    .chain(&rho::aborted_results(&messages))
                    .filter(counted)
                    .map(|m| message_tokens(m, self.count))
                    .sum();
                (tokens, messages)
            }
            None => {
                let tokens = rho::messages(std::slice::from_ref(value), &self.options.project)
                    .iter()
                    .filter(counted)
                    .map(|m| message_tokens(m, self.count))
                    .sum();
                (tokens, Vec::new())
            }
        }
    }
}

/// Plans `values` (a branch, root first) under `overlay` (see the module's rules).
pub(crate) fn plan(
    values: Vec<JsonValue>,
    overlay: &Overlay,
    entry_count: usize,
    model: &str,
    options: &PrepareOptions<'_>,
) -> Result<PreparedContext> {
    let branch_len = values.len();
    let split = pi_session_tree::compacted(&values);
    let summary = rho::summary_message(&values, &split);
    let covered = split.compaction.map_or(0, |c| c - split.kept.len());
    let on: Vec<usize> = split.kept.clone().chain(split.later.clone()).collect();
    let mut values: Vec<Option<JsonValue>> = values.into_iter().map(Some).collect();
    let bodies = on
        .into_iter()
        .filter_map(|at| values.get_mut(at).and_then(Option::take))
        .map(|value| (Box::new(Facts::of(&value)), Body::Value(value)))
        .collect();
    let head = Head {
        summary,
        covered,
        branch_len,
        evicted_before: 0,
    };
    plan_bodies(bodies, &NoLines, head, overlay, entry_count, model, options)?
        .map(Planned::prepared)
        .ok_or_else(reread_failed)
}

/// What the latest compaction of the branch leaves: its summary message, how many entries it
/// covers, and the branch's length; and how many entries it leaves before the bodies planned
/// (a budgeted plan of the newest turns only, [`Session::fit_context`]).
pub(crate) struct Head {
    pub(crate) summary: Option<Message>,
    pub(crate) covered: usize,
    pub(crate) branch_len: usize,
    /// Entries the compaction leaves before the bodies, left out unread as evicted: `None`
    /// from the plan when its first pass would not evict every one of them whatever they
    /// weigh (see [`Session::fit_context`] for what else that needs).
    pub(crate) evicted_before: usize,
}

/// Plans `bodies` (the entries the latest compaction leaves, root first, each with its facts)
/// after `head`; `lines` reads the lines of `Body::Line`s again. `None` only with
/// `head.evicted_before` (the entries before the bodies are not shown to be evicted).
pub(crate) fn plan_bodies(
    bodies: Bodies,
    lines: &dyn Lines,
    head: Head,
    overlay: &Overlay,
    entry_count: usize,
    model: &str,
    options: &PrepareOptions<'_>,
) -> Result<Option<Planned>> {
    let default_count = |text: &str| (text.len() as u64).div_ceil(BYTES_PER_TOKEN);
    let count: &dyn Fn(&str) -> u64 = match options.stats.counter {
        Some(counter) => counter,
        None => &default_count,
    };
    let planner = Planner { options, count };
    let Head {
        summary,
        covered,
        branch_len,
        evicted_before,
    } = head;
    let summary_tokens = summary.as_ref().map_or(0, |m| message_tokens(m, count));

    // 1. Items, turns, groups, phases and levels from the overlay.
    let mut phases = Phases::default();
    let mut calls: HashMap<String, usize> = HashMap::new();
    let mut items: Vec<Item> = Vec::with_capacity(bodies.len());
    let mut turn = 0;
    for (facts, body) in bodies {
        let Facts {
            id,
            kind,
            tool_call_id,
            call_ids,
            phase,
        } = *facts;
        if kind == "user" && !items.is_empty() {
            turn += 1;
        }
        let index = items.len();
        let mut group = index;
        if kind == "toolResult"
            && let Some(owner) = tool_call_id.as_deref().and_then(|id| calls.get(id))
        {
            group = *owner;
        }
        if kind == "assistant" {
            for call_id in call_ids {
                calls.insert(call_id, index);
            }
        }
        let stamp = id.as_deref().and_then(|id| overlay.get(id).copied());
        items.push(Item {
            phase: phases.of_input(phase),
            body,
            id,
            kind,
            stamp,
            level: stamp.unwrap_or(Resolution::Full),
            sent: true,
            evicted: false,
            latest: false,
            protected: false,
            turn,
            group,
            tokens: 0,
            bounded: None,
            rendered: Rendered::None,
            messages: Vec::new(),
        });
    }
    let latest_turn = turn;
    let facts = FinishFacts {
        summary_tokens,
        covered,
        branch_len,
        entry_count,
        evicted_before,
        model,
    };
    let mut turn_starts: Vec<usize> = Vec::with_capacity(latest_turn + 1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
    for (at, item) in items.iter().enumerate() {
        if turn_starts.len() <= item.turn {
            turn_starts.push(at);
        }
        members[item.group].push(at);
    }
    let mut kept_groups = vec![false; items.len()];
    let mut compacted_groups = vec![false; items.len()];
    for item in &mut items {
        item.latest = item.turn == latest_turn;
        if item.latest || item.level == Resolution::Pinned {
            kept_groups[item.group] = true;
        }
        if item.level == Resolution::Compacted {
            compacted_groups[item.group] = true;
        }
    }
    for item in &mut items {
        item.protected = kept_groups[item.group];
        if compacted_groups[item.group] {
            if kept_groups[item.group] {
                if item.level == Resolution::Compacted {
                    item.level = Resolution::Summarized;
                }
            } else {
                item.level = Resolution::Compacted;
                item.sent = false;
            }
        }
    }

    // 2. The limit of bounded tool results.
    let limit = options.budget.and_then(|budget| {
        let bytes = budget
            .saturating_mul(options.tool_result_percent)
            .saturating_mul(BYTES_PER_TOKEN)
            / 100;
        (options.tool_result_percent > 0).then(|| usize::try_from(bytes).unwrap_or(usize::MAX))
    });
    let summarized_from_sketch = !options.project.inputs.pdf;
    let Some(budget) = options.budget else {
        parse_sent(&mut items, lines, summarized_from_sketch)?;
        for item in &mut items {
            planner.settle(item, limit);
        }
        if evicted_before > 0 {
            return Ok(None);
        }
        let messages = assemble(summary.as_ref(), &mut items, options);
        let mut by_role = RoleTokens::default();
        for message in &messages {
            by_role.add(message, count);
        }
        let counted = Counted { messages, by_role };
        return Ok(Some(finish(counted, items, options, facts)));
    };
    let ladder = Ladder {
        budget,
        latest_turn,
        turn_starts: &turn_starts,
        members: &members,
        kept_groups: &kept_groups,
    };

    // 3. The first pass, on estimates: every entry's level decided from its estimated sizes
    // (nothing rendered or projected). Lines are measured newest first, until what is measured
    // shows that the older turns are evicted whatever they weigh.
    let sizes = Sizing {
        ladder: &ladder,
        summary_tokens,
        limit,
    };
    sizes.measure(&mut items, lines, false)?;
    // The entries left out before the bodies are evicted by the first pass of the whole
    // branch's plan whatever they weigh (counted as 0, as lines not measured are): then the
    // bodies' plan is that plan's (see `Session::fit_context`).
    if evicted_before > 0 && !ladder.evicts_all_before(&items, 0, &sizes) {
        return Ok(None);
    }
    let start: Vec<(Resolution, bool)> = items.iter().map(|i| (i.level, i.sent)).collect();
    sizes.first_pass(&mut items);
    if items.iter().any(|i| i.sent && i.unmeasured()) {
        // Not reached (what `evicts_all_before` shows): measured in full and planned again.
        sizes.measure(&mut items, lines, true)?;
        for (item, (level, sent)) in items.iter_mut().zip(start) {
            (item.level, item.sent, item.evicted) = (level, sent, false);
        }
        sizes.first_pass(&mut items);
    }

    // 4. Only what is kept is rendered and counted; while that is over, the same ladder goes
    // on from there with the real counts, and the final messages are counted again.
    parse_sent(&mut items, lines, summarized_from_sketch)?;
    settle_kept(&planner, &mut items, limit);
    let mut total = summary_tokens + items.iter().map(|i| i.tokens).sum::<u64>();
    let mut next_turn = 0;
    loop {
        next_turn = ladder.climb(&mut items, &mut total, next_turn, |item| {
            planner.settle(item, limit);
        });
        // Counted from the messages `settle` kept (the same ones, in the same order, as
        // `assemble` sends), or from the messages projected again.
        // Counted by role, as the statistics count the messages sent (kept for them).
        let (by_role, messages) = if MessageStream::new(&options.project).is_some() {
            let kept = || {
                items
                    .iter()
                    .filter(|i| i.rendered().is_some())
                    .flat_map(|i| &i.messages)
            };
            let aborted = rho::aborted_results(kept());
            let mut by_role = RoleTokens::default();
            for message in summary.iter().chain(kept()).chain(&aborted) {
                by_role.add(message, count);
            }
            (by_role, None)
        } else {
            let messages = assemble(summary.as_ref(), &mut items, options);
            let mut by_role = RoleTokens::default();
            for message in &messages {
                by_role.add(message, count);
            }
            (by_role, Some(messages))
        };
        let counted = by_role.total();
        if counted <= budget || next_turn >= latest_turn {
            let messages =
                messages.unwrap_or_else(|| assemble(summary.as_ref(), &mut items, options));
            let counted = Counted { messages, by_role };
            return Ok(Some(finish(counted, items, options, facts)));
        }
        total = counted;
    }
}

/// The estimated tokens of `item` at its level (0 when not sent).
fn estimated(item: &Item, limit: Option<usize>) -> u64 {
    if item.sent {
        estimated_at(item, item.level, limit)
    } else {
        0
    }
}

/// The estimated tokens of `item` sent at `level` (0 for a line not measured).
fn estimated_at(item: &Item, level: Resolution, limit: Option<usize>) -> u64 {
    let limit = bound_limit(level, limit);
    match &item.body {
        Body::Value(value) => estimate(value, level, limit),
        Body::Line(_, Some(sketch)) => sketch.estimate(level, limit),
        Body::Line(_, None) => 0,
    }
}

/// The first pass's sizing: which lines are measured, and the ladder on their estimates.
struct Sizing<'l> {
    ladder: &'l Ladder<'l>,
    summary_tokens: u64,
    limit: Option<usize>,
}

impl Sizing<'_> {
    /// Every entry's tokens estimated at its level, then the ladder climbed on estimates.
    fn first_pass(&self, items: &mut [Item]) {
        for item in items.iter_mut() {
            item.tokens = estimated(item, self.limit);
        }
        let mut total: u64 = self.summary_tokens + items.iter().map(|i| i.tokens).sum::<u64>();
        self.ladder.climb(items, &mut total, 0, |item| {
            item.tokens = estimated(item, self.limit);
        });
    }

    /// Sketches the lines the first pass needs (`all`: every line): the members of kept groups
    /// (the latest turn, pinned entries) first, then whole turns newest first, until
    /// [`Ladder::evicts_all_before`] the oldest turn measured. The number of turns read next is
    /// extrapolated from the Summarized estimates of those measured.
    fn measure(&self, items: &mut [Item], lines: &dyn Lines, all: bool) -> Result<()> {
        let ladder = self.ladder;
        let wanted: Vec<usize> = (0..items.len())
            .filter(|&at| items[at].unmeasured() && (all || ladder.kept_groups[items[at].group]))
            .collect();
        measure_lines(items, &wanted, lines)?;
        let mut from = ladder.latest_turn;
        while from > 0 && !ladder.evicts_all_before(items, from, self) {
            // Extrapolated from the turns measured before the latest: the floor of what
            // they would send, against what is left of the budget.
            let start = ladder.turn_start(from, items.len());
            let end = ladder.turn_start(ladder.latest_turn, items.len());
            let measured = (ladder.latest_turn - from) as u64;
            let floor: u64 = items[start..end]
                .iter()
                .map(|i| ladder.floor_estimate(i, self.limit))
                .sum();
            let left = ladder.budget.saturating_sub(floor + self.summary_tokens);
            let more = match floor.checked_div(measured) {
                Some(per_turn) if per_turn > 0 => left / per_turn + left / per_turn / 10 + 2,
                _ => measured.max(8),
            };
            let next = from.saturating_sub(usize::try_from(more).unwrap_or(usize::MAX));
            let wanted: Vec<usize> = (ladder.turn_start(next, items.len())..start)
                .filter(|&at| items[at].unmeasured())
                .collect();
            measure_lines(items, &wanted, lines)?;
            from = next;
        }
        Ok(())
    }
}

/// Sketches the lines of `items` at `wanted` (parsed instead when a sketch cannot tell).
fn measure_lines(items: &mut [Item], wanted: &[usize], lines: &dyn Lines) -> Result<()> {
    let positions: Vec<usize> = wanted.iter().map(|&at| items[at].position()).collect();
    let sketches = lines.sketches(&positions)?;
    if sketches.len() != wanted.len() {
        return Err(reread_failed());
    }
    let mut refused = Vec::new();
    for (&at, sketch) in wanted.iter().zip(sketches) {
        match sketch {
            Some(sketch) => {
                if let Body::Line(_, measured) = &mut items[at].body {
                    *measured = Some(Box::new(sketch));
                }
            }
            None => refused.push(at),
        }
    }
    parse_lines(items, lines, refused)
}

/// Parses the lines of the items at `at` (each still a [`Body::Line`]), read in one pass.
fn parse_lines(items: &mut [Item], lines: &dyn Lines, at: Vec<usize>) -> Result<()> {
    let positions: Vec<usize> = at.iter().map(|&i| items[i].position()).collect();
    let values = lines.values(&positions)?;
    if values.len() != at.len() {
        return Err(reread_failed());
    }
    for (i, value) in at.into_iter().zip(values) {
        items[i].body = Body::Value(value);
    }
    Ok(())
}

fn reread_failed() -> Error {
    Error::invalid_input("the sketched entries could not be read again; reopen the session")
}

/// Parses the line of every entry sent, read in one pass (the others are never parsed), but
/// those sent Summarized when `summarized_from_sketch`: their renderings are built from their
/// sketches ([`Sketch::summarized`]; not when rho reads attachments, for PDF inputs).
fn parse_sent(items: &mut [Item], lines: &dyn Lines, summarized_from_sketch: bool) -> Result<()> {
    let at: Vec<usize> = items
        .iter()
        .enumerate()
        .filter_map(|(at, item)| match &item.body {
            // Rendered from the sketch (a line sent is measured: one that is not is parsed).
            Body::Line(_, Some(_))
                if summarized_from_sketch && item.level == Resolution::Summarized =>
            {
                None
            }
            Body::Line(..) if item.sent => Some(at),
            _ => None,
        })
        .collect();
    parse_lines(items, lines, at)
}

/// The lines sent Summarized from their sketches: from this many on, their renderings are made
/// on two threads.
const PARALLEL_SUMMARIES: usize = 256;

/// Each item settled ([`Planner::settle_rendered`]), a line sent Summarized and sketched with
/// its rendering made from the sketch ([`Sketch::summarized`], which reads nothing else); with
/// many, the newer half's renderings are made on a second thread while this one makes and
/// settles the older half.
fn settle_kept(planner: &Planner<'_, '_>, items: &mut [Item], limit: Option<usize>) {
    fn sketch_of(item: &Item) -> Option<&Sketch> {
        match &item.body {
            Body::Line(_, Some(sketch)) if item.sent && item.level == Resolution::Summarized => {
                Some(sketch)
            }
            _ => None,
        }
    }
    let render = |items: &[Item]| -> Vec<Option<JsonValue>> {
        items
            .iter()
            .map(|item| sketch_of(item).map(|sketch| sketch.summarized()))
            .collect()
    };
    let settle = |items: &mut [Item], made: Vec<Option<JsonValue>>| {
        for (item, made) in items.iter_mut().zip(made) {
            planner.settle_rendered(item, limit, made);
        }
    };
    let many = items.iter().filter(|i| sketch_of(i).is_some()).count();
    if many < PARALLEL_SUMMARIES {
        let made = render(items);
        return settle(items, made);
    }
    // Split where half of them are before.
    let half = items
        .iter()
        .scan(0, |seen, item| {
            *seen += usize::from(sketch_of(item).is_some());
            Some(*seen)
        })
        .position(|seen| seen * 2 >= many)
        .map_or(items.len(), |at| at + 1);
    let (older, newer) = items.split_at_mut(half);
    let newer_made = std::thread::scope(|scope| {
        let newer = &*newer;
        // Without a second thread (none could be made), or if it failed: made here.
        let second = pi_session_store::StarterCore::current()
            .spawn_scoped(std::thread::Builder::new(), scope, || render(newer))
            .ok();
        let made = render(older);
        settle(older, made);
        match second.map(std::thread::ScopedJoinHandle::join) {
            Some(Ok(made)) => made,
            _ => render(newer),
        }
    });
    settle(newer, newer_made);
}

/// The bound of an output sent at `level`: tool results at Full or Attached only.
fn bound_limit(level: Resolution, limit: Option<usize>) -> Option<usize> {
    limit.filter(|_| matches!(level, Resolution::Full | Resolution::Attached))
}

/// The downgrades and evictions of the plan (the module's steps 3 and 4), with a way of sizing
/// an entry that the caller chooses (estimates, or rendering and counting).
struct Ladder<'p> {
    budget: u64,
    latest_turn: usize,
    turn_starts: &'p [usize],
    members: &'p [Vec<usize>],
    kept_groups: &'p [bool],
}

/// The ladder's downgrades, each a pass over the entries oldest first: Full/Attached →
/// Outlined, then Outlined → Summarized.
const DOWNGRADES: [(&[Resolution], Resolution); 2] = [
    (
        &[Resolution::Full, Resolution::Attached],
        Resolution::Outlined,
    ),
    (&[Resolution::Outlined], Resolution::Summarized),
];

impl Ladder<'_> {
    /// The first item of `turn` (`len`, the number of items, past the last turn).
    fn turn_start(&self, turn: usize, len: usize) -> usize {
        self.turn_starts.get(turn).copied().unwrap_or(len)
    }

    /// `item`'s level before the downgrades, after the first and after both (its level when
    /// the ladder does not downgrade it).
    fn downgrades(&self, item: &Item) -> [Resolution; 3] {
        let mut levels = [item.level; 3];
        if item.sent && !item.latest {
            for (step, (from, to)) in DOWNGRADES.into_iter().enumerate() {
                let level = levels[step];
                levels[step + 1] = if from.contains(&level) { to } else { level };
            }
        }
        levels
    }

    /// `item`'s estimated tokens once every downgrade is made (0 when not sent).
    fn floor_estimate(&self, item: &Item, limit: Option<usize>) -> u64 {
        if item.sent {
            estimated_at(item, self.downgrades(item)[2], limit)
        } else {
            0
        }
    }

    /// Whether the first pass evicts every turn before `turn` (but the groups it keeps) however
    /// much the lines not measured weigh, from the estimates of the entries from `turn` on and
    /// of the kept groups' members (all measured): then a line before `turn` outside the kept
    /// groups need not be measured (its estimates are 0 for the pass). Two things show it,
    /// counting every line not measured as 0 (estimates are never negative):
    /// - every total the downgrades go through is over the budget, so they run to the end
    ///   (each pass changes the entries oldest first: the totals are the sums over the
    ///   entries of the prefix sums of their changes);
    /// - the total once the turns before `turn` are evicted is still over the budget, so each
    ///   of them is evicted (evicting a turn only takes tokens away, and it evicts every group
    ///   it starts: a group's first member is its call).
    fn evicts_all_before(&self, items: &[Item], turn: usize, sizing: &Sizing<'_>) -> bool {
        let limit = sizing.limit;
        let start = self.turn_start(turn, items.len());
        let tokens = |item: &Item| {
            if item.sent {
                self.downgrades(item)
                    .map(|level| i128::from(estimated_at(item, level, limit)))
            } else {
                [0; 3]
            }
        };
        let summary = i128::from(sizing.summary_tokens);
        // The kept groups' members before `turn` are never evicted: each at its lightest.
        let mut base = summary;
        let mut left = summary;
        for item in items[..start].iter().filter(|i| self.kept_groups[i.group]) {
            let [before, after_one, after_both] = tokens(item);
            base += before.min(after_one).min(after_both);
            left += after_both;
        }
        let (mut totals, mut changes, mut lowest) = ([base; 3], [0i128; 2], [0i128; 2]);
        for item in &items[start..] {
            let [before, after_one, after_both] = tokens(item);
            totals[0] += before;
            totals[1] += after_one;
            totals[2] += after_both;
            changes[0] += after_one - before;
            changes[1] += after_both - after_one;
            lowest[0] = lowest[0].min(changes[0]);
            lowest[1] = lowest[1].min(changes[1]);
            let survives = self.kept_groups[item.group]
                || items.get(item.group).is_some_and(|g| g.turn >= turn);
            if survives {
                left += after_both;
            }
        }
        let budget = i128::from(self.budget);
        totals[0] + lowest[0] > budget && totals[1] + lowest[1] > budget && left > budget
    }

    /// Downgrades then evicts (turns from `next_turn` on) while `total` is over the budget;
    /// `size` sets an item's tokens for its level. Returns the next turn to evict.
    fn climb(
        &self,
        items: &mut [Item],
        total: &mut u64,
        mut next_turn: usize,
        mut size: impl FnMut(&mut Item),
    ) -> usize {
        // Downgrades, oldest first: Full/Attached → Outlined, then Outlined → Summarized.
        'downgrade: for (from, to) in DOWNGRADES {
            for item in items.iter_mut() {
                if *total <= self.budget {
                    break 'downgrade;
                }
                if item.sent && !item.latest && from.contains(&item.level) {
                    *total -= item.tokens;
                    item.level = to;
                    size(item);
                    *total += item.tokens;
                }
            }
        }
        // Eviction of whole turns, oldest first.
        while *total > self.budget && next_turn < self.latest_turn {
            let start = self
                .turn_starts
                .get(next_turn)
                .copied()
                .unwrap_or(items.len());
            let end = self
                .turn_starts
                .get(next_turn + 1)
                .copied()
                .unwrap_or(items.len());
            for at in start..end {
                let group = items[at].group;
                if self.kept_groups[group] {
                    continue;
                }
                for &member in &self.members[group] {
                    let item = &mut items[member];
                    if item.sent {
                        *total -= item.tokens;
                        item.sent = false;
                        item.evicted = true;
                        item.level = Resolution::Compacted;
                        size(item);
                    }
                }
            }
            next_turn += 1;
        }
        next_turn
    }
}

/// The summary, then rho's messages of the entries sent, as rendered.
/// The messages `settle` kept are taken from the items (rho's messages of each entry alone,
/// then its results for the calls left unanswered); with PDF documents the entries sent are
/// projected again, together.
fn assemble(
    summary: Option<&Message>,
    items: &mut [Item],
    options: &PrepareOptions<'_>,
) -> Vec<Message> {
    let mut messages: Vec<Message> = summary.cloned().into_iter().collect();
    match MessageStream::new(&options.project) {
        Some(mut stream) => {
            for item in items.iter_mut().filter(|i| i.rendered().is_some()) {
                for message in std::mem::take(&mut item.messages) {
                    stream.push(message, &mut messages);
                }
            }
            stream.finish(&mut messages);
        }
        None => {
            let sent: Vec<&JsonValue> = items.iter().filter_map(Item::rendered).collect();
            messages.extend(rho::messages_of(&sent, &options.project));
        }
    }
    messages
}

#[derive(Clone, Copy)]
struct FinishFacts<'m> {
    summary_tokens: u64,
    covered: usize,
    branch_len: usize,
    entry_count: usize,
    evicted_before: usize,
    model: &'m str,
}

/// What the entries sent add up to, beside the messages' own statistics.
pub(crate) struct Tallies {
    pub(crate) by_resolution: ResolutionTokens,
    pub(crate) by_phase: PhaseTokens,
    pub(crate) summary_tokens: u64,
    pub(crate) compacted_entries: usize,
    pub(crate) evicted_entries: usize,
    pub(crate) entry_count: usize,
}

/// `stats` (of the messages sent) completed with the distributions of the entries sent: what
/// no entry accounts for (the compaction summary, rho's results for unanswered calls) is
/// unclassified.
pub(crate) fn complete(stats: &mut ContextStats, tallies: Tallies) {
    let Tallies {
        by_resolution,
        mut by_phase,
        summary_tokens,
        ..
    } = tallies;
    let attributed = summary_tokens + by_phase.total();
    by_phase.unclassified += summary_tokens + stats.estimated_tokens.saturating_sub(attributed);
    stats.entry_count = tallies.entry_count;
    stats.by_resolution = by_resolution;
    stats.by_phase = by_phase;
    stats.compaction_tokens = summary_tokens;
    stats.compacted_entries = tallies.compacted_entries;
    stats.evicted_entries = tallies.evicted_entries;
}

/// The messages sent and their tokens by role (the messages' own counts, added up).
struct Counted {
    messages: Vec<Message>,
    by_role: RoleTokens,
}

fn finish(
    counted: Counted,
    items: Vec<Item>,
    options: &PrepareOptions<'_>,
    facts: FinishFacts<'_>,
) -> Planned {
    let Counted { messages, by_role } = counted;
    let mut stats = ContextStats::from_role_tokens(
        by_role,
        messages.len(),
        facts.branch_len,
        facts.model,
        &options.stats,
    );
    let mut by_resolution = ResolutionTokens::default();
    let mut by_phase = PhaseTokens::default();
    let mut compacted = facts.covered;
    for item in &items {
        if !item.sent {
            if !item.evicted {
                compacted += 1;
            }
            continue;
        }
        *by_resolution.slot(item.level) += item.tokens;
        *by_phase.slot(item.phase) += item.tokens;
    }
    complete(
        &mut stats,
        Tallies {
            by_resolution,
            by_phase,
            summary_tokens: facts.summary_tokens,
            compacted_entries: compacted,
            evicted_entries: facts.evicted_before + items.iter().filter(|i| i.evicted).count(),
            entry_count: facts.entry_count,
        },
    );
    let over_by = options
        .budget
        .map_or(0, |budget| stats.estimated_tokens.saturating_sub(budget));
    Planned {
        context: PreparedContext {
            messages,
            entries: Vec::new(),
            budget: options.budget,
            over_by,
            stats,
        },
        items,
    }
}

impl Session {
    /// This cursor's context fitted to `options.budget` with its stamps applied (see the
    /// module's rules), with the plan and its statistics. Without a budget only the stamps
    /// apply; without stamps either, the messages are exactly [`Session::context`]'s.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::manage::PrepareOptions;
    /// use pi_session::{ProjectOptions, Reply, Session, UserOptions, assistant, user};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// for n in 0..20 {
    ///     session.append(user(&format!("question {n}: {}", "why? ".repeat(40)), UserOptions::new()))?;
    ///     session.append(assistant(&Reply { text: "because. ".repeat(60), ..Reply::default() }, session.model()))?;
    /// }
    /// let full = session.prepare_context(&PrepareOptions::default())?;
    /// assert_eq!(full.messages, session.context(&ProjectOptions::default())?);
    /// let fitted = session.prepare_context(&PrepareOptions { budget: Some(1_000), ..PrepareOptions::default() })?;
    /// assert!(fitted.fits() && fitted.stats.estimated_tokens <= 1_000);
    /// assert_eq!(fitted.messages.last(), full.messages.last()); // the latest turn is untouched
    /// # Ok(()) }
    /// ```
    pub fn prepare_context(&self, options: &PrepareOptions<'_>) -> Result<PreparedContext> {
        let overlay = self.resolutions()?;
        let entry_count = self.log().index.len();
        if options.budget.is_some()
            && let Some((bodies, head)) = self.sketched_branch()?
        {
            return plan_bodies(
                bodies,
                &FileLines(self),
                head,
                &overlay,
                entry_count,
                &self.model,
                options,
            )?
            .map(Planned::prepared)
            .ok_or_else(reread_failed);
        }
        // rho's part of the branch: what the plan reads (the kept range, what follows, and the
        // compacted messages that may name attachments); the rest stays unread.
        let values = self.rho_branch_values()?;
        plan(values, &overlay, entry_count, &self.model, options)
    }

    /// [`prepare_context`](Self::prepare_context)'s messages and statistics, without the plan
    /// of each entry: with a budget, of a long branch only the newest lines the plan keeps
    /// are read, when that is shown to plan the same.
    ///
    /// The plan is made of the newest entries only (from a user message on; first a line per
    /// 16 tokens of the budget, at least 1,024, four times more each time that is not enough)
    /// when its first pass is shown to evict every older entry whatever it weighs (as for
    /// the lines it does not measure, `Ladder::evicts_all_before`), no older entry is stamped
    /// (none is pinned, nor left out by its stamp) and every tool result of the newest
    /// entries answers a call among them (so no group or phase reaches the older ones): the
    /// whole branch's plan then evicts each older entry and plans the newest as alone. Else
    /// the whole branch is planned. A test compares both on every fixture and corpus file.
    pub fn fit_context(&self, options: &PrepareOptions<'_>) -> Result<FittedContext> {
        let first_tail = options.budget.map_or(0, |budget| {
            usize::try_from(budget / TAIL_TOKENS_PER_LINE)
                .unwrap_or(usize::MAX)
                .max(MIN_TAIL_LINES)
        });
        Ok(self.fit_from(options, first_tail)?.0)
    }

    /// [`fit_context`](Self::fit_context) planning first the newest `first_tail` entries (then
    /// four times more each time), and how many entries before them it left out unread.
    fn fit_from(
        &self,
        options: &PrepareOptions<'_>,
        first_tail: usize,
    ) -> Result<(FittedContext, usize)> {
        let whole = || Ok((self.prepare_context(options)?.into(), 0));
        if options.budget.is_none() || options.project.inputs.pdf {
            return whole();
        }
        let Some((positions, head)) = self.budget_branch()? else {
            return whole();
        };
        let overlay = self.resolutions()?;
        let entry_count = self.log().index.len();
        let mut tail = first_tail.max(1);
        while tail < positions.len() {
            let from = positions.len() - tail;
            // Nearly every line of a tail that is long enough is measured: read with its
            // sketch in one pass.
            let bodies = self.bodies_of(&positions[from..], true)?;
            if let Some(start) = bodies.iter().position(|(facts, _)| facts.kind == "user") {
                let cut = from + start;
                if self.stamped_any(&overlay, &positions[..cut]) {
                    break;
                }
                let bodies: Bodies = bodies.into_iter().skip(start).collect();
                if answered_within(&bodies) {
                    let tail_head = Head {
                        summary: head.summary.clone(),
                        covered: head.covered,
                        branch_len: head.branch_len,
                        evicted_before: cut,
                    };
                    let planned = plan_bodies(
                        bodies,
                        &FileLines(self),
                        tail_head,
                        &overlay,
                        entry_count,
                        &self.model,
                        options,
                    )?;
                    if let Some(planned) = planned {
                        return Ok((planned.into(), cut));
                    }
                }
            }
            tail = tail.saturating_mul(4);
        }
        let bodies = self.bodies_of(&positions, false)?;
        plan_bodies(
            bodies,
            &FileLines(self),
            head,
            &overlay,
            entry_count,
            &self.model,
            options,
        )?
        .map(|planned| (planned.into(), 0))
        .ok_or_else(reread_failed)
    }

    /// Whether this cursor stamped an entry at one of `positions`.
    fn stamped_any(&self, overlay: &Overlay, positions: &[usize]) -> bool {
        if overlay.is_empty() {
            return false;
        }
        let log = self.log();
        positions.iter().any(|&at| {
            log.index
                .node(at)
                .and_then(|node| node.id)
                .is_some_and(|id| overlay.contains_key(id))
        })
    }

    /// The branch for a plan with a budget, with what its latest compaction leaves: the
    /// [`Facts`] of every line the compaction leaves read without its texts, the line left to
    /// be [sketched](Sketch) when the plan needs its sizes (an entry appended since opening, or
    /// one that only a parse can read, parsed); the compaction's split and summary read only
    /// the bodies they need ([`super::streamed::compaction_head`]). `None` when the file is
    /// migrated (its entries are not its lines).
    fn sketched_branch(&self) -> Result<Option<(Bodies, Head)>> {
        let Some((positions, head)) = self.budget_branch()? else {
            return Ok(None);
        };
        Ok(Some((self.bodies_of(&positions, false)?, head)))
    }

    /// The log positions of the entries the branch's latest compaction leaves, and its head;
    /// `None` when the file is migrated (its entries are not its lines).
    fn budget_branch(&self) -> Result<Option<(Vec<usize>, Head)>> {
        let log = self.log();
        let leaf = self.leaf_in(&log);
        let branch = log.branch_positions(leaf.as_deref());
        if log.file.as_ref().is_none_or(|f| f.is_migrated()) {
            return Ok(None);
        }
        let compaction =
            super::streamed::compaction_head(&crate::session::LogSource { log: &log }, &branch)?;
        let head = Head {
            summary: compaction.summary,
            covered: compaction.covered,
            branch_len: branch.len(),
            evicted_before: 0,
        };
        let positions = compaction.on.iter().map(|&at| branch[at]).collect();
        Ok(Some((positions, head)))
    }

    /// The entries at `positions` (the log's) for a plan: each line's [`Facts`] read without
    /// its texts and the line left to be sketched (with `sketched`: read with its sketch in
    /// the same pass, [`Facts::sketched`], when that pass reads it); an entry appended since
    /// opening, or one that only a parse can read, parsed.
    fn bodies_of(&self, positions: &[usize], sketched: bool) -> Result<Bodies> {
        let log = self.log();
        let Some(file) = log.file.as_ref() else {
            return Ok(Vec::new());
        };
        let in_file: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&at| log.in_file(at))
            .collect();
        let mut sketched = file
            .map_raw(&in_file, |position, at, line| {
                let kind = at.envelope.kind();
                if kind == "title" || kind == "session" {
                    return None;
                }
                let id = at.envelope.id();
                if sketched && let Some((facts, sketch)) = Facts::sketched(line, kind, id) {
                    return Some((
                        Box::new(facts),
                        Body::Line(position, Some(Box::new(sketch))),
                    ));
                }
                let facts = Facts::of_line(line, kind, id)?;
                Some((Box::new(facts), Body::Line(position, None)))
            })?
            .into_iter();
        let mut bodies: Vec<Option<(Box<Facts>, Body)>> = positions
            .iter()
            .map(|&at| {
                if log.in_file(at) {
                    sketched.next().flatten()
                } else {
                    None
                }
            })
            .collect();
        let unread: Vec<usize> = (0..positions.len())
            .filter(|&at| bodies[at].is_none())
            .collect();
        let unread_positions: Vec<usize> = unread.iter().map(|&at| positions[at]).collect();
        for (at, value) in unread.into_iter().zip(log.values_at(&unread_positions)?) {
            bodies[at] = Some((Box::new(Facts::of(&value)), Body::Value(value)));
        }
        Ok(bodies.into_iter().flatten().collect())
    }
}

/// [`Session::fit_context`] plans first a line of the newest entries per this many tokens of
/// the budget.
const TAIL_TOKENS_PER_LINE: u64 = 16;

/// The fewest lines [`Session::fit_context`] plans first.
const MIN_TAIL_LINES: usize = 1024;

/// Whether every tool result among `bodies` (and every entry naming a call) answers a call of
/// an assistant message before it among them: no group or phase reaches an entry before.
fn answered_within(bodies: &Bodies) -> bool {
    let mut calls: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (facts, _) in bodies {
        if let Some(id) = &facts.tool_call_id
            && !calls.contains(id.as_str())
        {
            return false;
        }
        if facts.kind == "assistant" {
            calls.extend(facts.call_ids.iter().map(String::as_str));
        }
    }
    true
}

/// The lines of a session's file, read again by position.
struct FileLines<'s>(&'s Session);

impl Lines for FileLines<'_> {
    fn values(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
        self.0.values_at(positions)
    }

    fn sketches(&self, positions: &[usize]) -> Result<Vec<Option<Sketch>>> {
        let log = self.0.log();
        let Some(file) = log.file.as_ref() else {
            return Ok(positions.iter().map(|_| None).collect());
        };
        Ok(file.map_raw(positions, |_, at, line| {
            Sketch::of_line(line, at.envelope.kind(), at.envelope.id())
        })?)
    }
}

#[cfg(test)]
mod tests {
    use pi_session_test_support::fixture_and_corpus_files;

    use super::*;
    use crate::store::Store;

    /// The plan of a file's lines (sketched, the older turns only as far as the plan needs
    /// them, the compaction's head read apart) equals the plan of the parsed branch, on every
    /// fixture and corpus file, at every tip.
    #[test]
    fn sketched_plans_equal_the_parsed_plans() {
        let mut compared = 0;
        for path in fixture_and_corpus_files() {
            let Ok((session, _)) = Session::read_in(&Store::Files, &path, "anthropic:claude-x")
            else {
                continue;
            };
            let mut cursors = vec![session.fork()];
            cursors.extend(session.tip_cursors().unwrap());
            for cursor in &cursors {
                for budget in [50, 300, 2_000, 30_000] {
                    let options = PrepareOptions {
                        budget: Some(budget),
                        ..PrepareOptions::default()
                    };
                    let sketched = cursor.prepare_context(&options).unwrap();
                    let parsed = plan(
                        cursor.rho_branch_values().unwrap(),
                        &cursor.resolutions().unwrap(),
                        cursor.log().index.len(),
                        &cursor.model,
                        &options,
                    )
                    .unwrap();
                    assert_eq!(sketched, parsed, "{} at {budget}", path.display());
                    compared += 1;
                }
            }
        }
        assert!(compared > 10, "{compared}");
    }

    /// The context fitted from the newest entries only equals the whole branch's plan's, on
    /// every fixture and corpus file, at every tip, for budgets from tiny to larger than the
    /// file, from every first tail (1 entry: most plans take several tries).
    #[test]
    fn fitted_contexts_equal_the_plans_of_the_whole_branch() {
        let (mut compared, mut tails) = (0, 0);
        for path in fixture_and_corpus_files() {
            let Ok((session, _)) = Session::read_in(&Store::Files, &path, "anthropic:claude-x")
            else {
                continue;
            };
            let mut cursors = vec![session.fork()];
            cursors.extend(session.tip_cursors().unwrap());
            for cursor in &cursors {
                for budget in [40, 300, 2_000, 30_000, 300_000] {
                    let options = PrepareOptions {
                        budget: Some(budget),
                        ..PrepareOptions::default()
                    };
                    let planned = FittedContext::from(cursor.prepare_context(&options).unwrap());
                    assert_eq!(
                        cursor.fit_context(&options).unwrap(),
                        planned,
                        "{} at {budget}",
                        path.display()
                    );
                    for first_tail in [1, 7] {
                        let (fitted, unread) = cursor.fit_from(&options, first_tail).unwrap();
                        assert_eq!(fitted, planned, "{} at {budget}", path.display());
                        tails += usize::from(unread > 0);
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 10 && tails > 10, "{compared} {tails}");
    }

    /// [`FileLines`], counting the lines sketched.
    struct Counted<'s>(FileLines<'s>, std::cell::Cell<usize>);

    impl Lines for Counted<'_> {
        fn values(&self, positions: &[usize]) -> Result<Vec<JsonValue>> {
            self.0.values(positions)
        }
        fn sketches(&self, positions: &[usize]) -> Result<Vec<Option<Sketch>>> {
            self.1.set(self.1.get() + positions.len());
            self.0.sketches(positions)
        }
    }

    /// A long session fitted to a small budget measures only its newest turns (and the pinned
    /// entry of an old one, with its call), and plans as if every line were measured.
    #[test]
    fn a_long_session_under_a_small_budget_measures_only_what_it_keeps() {
        use crate::{Reply, ToolCall, UserOptions, assistant, tool_result, user};
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::new(dir.path(), "anthropic:claude-x", "/w");
        let mut pinned = None;
        for n in 0..200 {
            session
                .append(user(&format!("question {n}"), UserOptions::new()))
                .unwrap();
            let call = ToolCall::new(
                format!("call-{n}"),
                "read",
                serde_json::json!({"path": "a"}),
            );
            let reply = Reply {
                text: "let me look".into(),
                tool_calls: vec![call],
                ..Reply::default()
            };
            session.append(assistant(&reply, session.model())).unwrap();
            let output = (0..40)
                .map(|l| format!("{n}:{l} output"))
                .collect::<Vec<_>>();
            let result = tool_result(
                &format!("call-{n}"),
                "read",
                &output.join("\n"),
                false,
                &[],
                None,
            );
            let result = session.append(result).unwrap();
            if n == 3 {
                pinned = result.id().map(str::to_owned);
            }
        }
        let pinned_id = pinned.unwrap();
        session.pin_entry(&pinned_id).unwrap();
        let path = session.path().unwrap().to_owned();
        let (opened, _) = Session::read_in(&Store::Files, &path, "anthropic:claude-x").unwrap();
        for budget in [2_000, 6_000, 20_000, 200_000] {
            let options = PrepareOptions {
                budget: Some(budget),
                ..PrepareOptions::default()
            };
            let (bodies, head) = opened.sketched_branch().unwrap().unwrap();
            let lines = Counted(FileLines(&opened), std::cell::Cell::new(0));
            let overlay = opened.resolutions().unwrap();
            let count = opened.log().index.len();
            let planned = plan_bodies(
                bodies,
                &lines,
                head,
                &overlay,
                count,
                &opened.model,
                &options,
            )
            .unwrap()
            .unwrap()
            .prepared();
            let parsed = plan(
                opened.rho_branch_values().unwrap(),
                &overlay,
                count,
                &opened.model,
                &options,
            )
            .unwrap();
            assert_eq!(planned, parsed, "{budget}");
            // Fitted from the newest entries: the same, and with the pinned entry unstamped
            // (below) the older ones are left unread.
            let (fitted, unread) = opened.fit_from(&options, 64).unwrap();
            assert_eq!(fitted, FittedContext::from(parsed), "{budget}");
            assert_eq!(unread, 0, "{budget}: an older entry is pinned");
            let sent = planned
                .entries
                .iter()
                .filter(|e| e.level != Resolution::Compacted);
            let measured = lines.1.get();
            if budget <= 6_000 {
                assert!(planned.entries.iter().any(|e| e.evicted), "{budget}");
                assert!(measured >= sent.count(), "{budget}: {measured}");
            }
            if budget == 2_000 {
                // About a fifth of the turns fit: a third of the lines at most are measured.
                assert!(measured < planned.entries.len() / 3, "{budget}: {measured}");
            }
        }
        // Unpinned, a small budget's context is planned from the newest entries only.
        session.unpin_entry(&pinned_id).unwrap();
        let (opened, _) = Session::read_in(&Store::Files, &path, "anthropic:claude-x").unwrap();
        for budget in [1_000, 2_000] {
            let options = PrepareOptions {
                budget: Some(budget),
                ..PrepareOptions::default()
            };
            let planned = opened.prepare_context(&options).unwrap();
            let (fitted, unread) = opened.fit_from(&options, 64).unwrap();
            assert_eq!(fitted, FittedContext::from(planned), "{budget}");
            assert!(unread > 100, "{budget}: {unread}");
            // The writer's session holds its entries as appended, not as lines: the same.
            let planned = session.prepare_context(&options).unwrap();
            let (fitted, _) = session.fit_from(&options, 64).unwrap();
            assert_eq!(fitted, FittedContext::from(planned), "{budget}");
        }
    }
}
