//! Context statistics: how much of the model's window a branch's context uses
//! ([`ContextStats`]), with the distributions of [`crate::manage`]. The window and reserve rules are rho's compaction rules
//! (rho-reqllm.md §A.12); the token estimate is theirs too (4 bytes per token) unless the
//! host gives its own counter.

use pi_session_context::reqllm::{ContentPart, Message, PartType, Role};
use serde::Serialize;

/// Bytes per token in the default estimate (`ceil(bytes / 4)`).
pub const BYTES_PER_TOKEN: u64 = 4;
/// Context window of a model whose spec contains `claude`.
pub const CLAUDE_WINDOW: u64 = 200_000;
/// Context window of any other model.
pub const DEFAULT_WINDOW: u64 = 128_000;
/// Tokens kept free for the reply when the host names no reserve.
pub const DEFAULT_RESERVE_TOKENS: u64 = 16_384;
/// Tokens counted for one picture (an estimate: about what a 1.2 megapixel image costs).
pub const PICTURE_TOKENS: u64 = 1_600;
/// Tokens counted per page of an attached PDF (an estimate).
pub const PDF_PAGE_TOKENS: u64 = 1_500;

/// How [`ContextStats`] are computed.
#[derive(Clone, Copy, Default)]
pub struct StatsOptions<'a> {
    /// The model's context window; default by model name ([`CLAUDE_WINDOW`] or
    /// [`DEFAULT_WINDOW`]).
    pub window: Option<u64>,
    /// Tokens to keep free; default [`DEFAULT_RESERVE_TOKENS`], and never less than 15% of the
    /// window.
    pub reserve_tokens: Option<u64>,
    /// Counts the tokens of a text; default `ceil(bytes / 4)`, which is within 5–6% of OpenAI's
    /// `o200k_base` and `cl100k_base` over whole contexts of real sessions and about a million
    /// times faster (`docs/tokenizer/README.md`). A host wanting exact counts plugs a tokenizer
    /// in here, e.g. `tiktoken-rs`'s `encode_ordinary(text).len()`.
    pub counter: Option<&'a dyn Fn(&str) -> u64>,
}

impl std::fmt::Debug for StatsOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsOptions")
            .field("window", &self.window)
            .field("reserve_tokens", &self.reserve_tokens)
            .field("counter", &self.counter.map(|_| "custom"))
            .finish()
    }
}

/// Estimated tokens by who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RoleTokens {
    /// System messages.
    pub system: u64,
    /// User messages (notices and the compaction summary included).
    pub user: u64,
    /// Assistant turns (text and tool calls; thinking is never sent).
    pub assistant: u64,
    /// Tool results.
    pub tool: u64,
}

impl RoleTokens {
    /// Adds `message`'s tokens (counted with `count`) to its role's.
    pub(crate) fn add(&mut self, message: &Message, count: &dyn Fn(&str) -> u64) {
        let tokens = message_tokens(message, count);
        let slot = match message.role {
            Role::System => &mut self.system,
            Role::User => &mut self.user,
            Role::Assistant => &mut self.assistant,
            Role::Tool => &mut self.tool,
        };
        *slot += tokens;
    }

    /// The tokens of every role.
    pub(crate) fn total(&self) -> u64 {
        self.system + self.user + self.assistant + self.tool
    }
}

/// How full the model's window is with a branch's context.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextStats {
    /// Estimated tokens of the context (the projected messages).
    pub estimated_tokens: u64,
    /// The model's context window.
    pub window: u64,
    /// Tokens kept free for the reply.
    pub reserve: u64,
    /// rho's compaction threshold: `max(0, min(window - 1, window - reserve))`.
    pub threshold: u64,
    /// Tokens left before the threshold (0 when past it).
    pub remaining: u64,
    /// `estimated_tokens` as a percentage of the window.
    pub utilisation_percent: f64,
    /// The estimate split by role.
    pub by_role: RoleTokens,
    /// Number of projected messages.
    pub messages: usize,
    /// Number of entries on the branch (with those a compaction covers).
    pub entries: usize,
    /// Number of entries in the whole log (every branch).
    pub entry_count: usize,
    /// The estimate split by the level entries are sent at (the compaction summary and the
    /// results rho adds for unanswered calls are in none).
    pub by_resolution: ResolutionTokens,
    /// The estimate split by phase of work ([`crate::manage::phase`]); sums to
    /// `estimated_tokens`.
    pub by_phase: PhaseTokens,
    /// Tokens of the compaction summary sent (0 without a compaction).
    pub compaction_tokens: u64,
    /// Entries not sent because a compaction covers them or they are stamped Compacted.
    pub compacted_entries: usize,
    /// Entries the planner evicted to fit a budget
    /// ([`Session::prepare_context`](crate::Session::prepare_context)).
    pub evicted_entries: usize,
}

/// Estimated tokens by resolution level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ResolutionTokens {
    /// Entries sent verbatim.
    pub full: u64,
    /// Entries sent outlined.
    pub outlined: u64,
    /// Entries sent as one line.
    pub summarized: u64,
    /// Pinned entries.
    pub pinned: u64,
    /// Entries sent with their pictures mentioned instead.
    pub attached: u64,
}

impl ResolutionTokens {
    pub(crate) fn slot(&mut self, level: crate::manage::Resolution) -> &mut u64 {
        use crate::manage::Resolution;
        match level {
            Resolution::Full | Resolution::Compacted => &mut self.full,
            Resolution::Outlined => &mut self.outlined,
            Resolution::Summarized => &mut self.summarized,
            Resolution::Pinned => &mut self.pinned,
            Resolution::Attached => &mut self.attached,
        }
    }

    /// The sum.
    pub fn total(&self) -> u64 {
        self.full + self.outlined + self.summarized + self.pinned + self.attached
    }
}

/// Estimated tokens by phase of work ([`crate::manage::phase`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PhaseTokens {
    /// Reading and searching.
    pub exploration: u64,
    /// Changing files, running commands.
    pub execution: u64,
    /// Tests and checks.
    pub verification: u64,
    /// Final answers.
    pub conclusion: u64,
    /// Everything else.
    pub unclassified: u64,
}

impl PhaseTokens {
    pub(crate) fn slot(&mut self, phase: crate::manage::Phase) -> &mut u64 {
        use crate::manage::Phase;
        match phase {
            Phase::Exploration => &mut self.exploration,
            Phase::Execution => &mut self.execution,
            Phase::Verification => &mut self.verification,
            Phase::Conclusion => &mut self.conclusion,
            Phase::Unclassified => &mut self.unclassified,
        }
    }

    /// The sum.
    pub fn total(&self) -> u64 {
        self.exploration + self.execution + self.verification + self.conclusion + self.unclassified
    }
}

impl ContextStats {
    /// Statistics for projected `messages` of a branch of `entries` entries, sent to `model`
    /// (a req_llm spec).
    ///
    /// ```
    /// use pi_session::{ContextStats, StatsOptions, reqllm::Message};
    /// let stats = ContextStats::from_messages(&[Message::user_text("12345678")], 1, "anthropic:claude-x", &StatsOptions::default());
    /// assert_eq!((stats.estimated_tokens, stats.window, stats.reserve), (2, 200_000, 30_000));
    /// assert_eq!(stats.remaining, 170_000 - 2);
    /// ```
    pub fn from_messages(
        messages: &[Message],
        entries: usize,
        model: &str,
        options: &StatsOptions<'_>,
    ) -> Self {
        let count = |text: &str| match options.counter {
            Some(counter) => counter(text),
            None => (text.len() as u64).div_ceil(BYTES_PER_TOKEN),
        };
        let mut by_role = RoleTokens::default();
        for message in messages {
            by_role.add(message, &count);
        }
        Self::from_role_tokens(by_role, messages.len(), entries, model, options)
    }

    /// Statistics for `messages` projected messages whose tokens by role are `by_role` (what
    /// [`ContextStats::from_messages`] adds up, for a caller that streams the messages).
    pub(crate) fn from_role_tokens(
        by_role: RoleTokens,
        messages: usize,
        entries: usize,
        model: &str,
        options: &StatsOptions<'_>,
    ) -> Self {
        let estimated_tokens = by_role.total();
        let window = options.window.unwrap_or_else(|| window_for(model));
        let reserve = reserve_for(window, options.reserve_tokens);
        let threshold = window.saturating_sub(1).min(window.saturating_sub(reserve));
        #[allow(
            clippy::cast_precision_loss,
            reason = "a percentage; token counts are far below 2^52"
        )]
        let utilisation_percent = if window == 0 {
            100.0
        } else {
            estimated_tokens as f64 * 100.0 / window as f64
        };
        Self {
            estimated_tokens,
            window,
            reserve,
            threshold,
            remaining: threshold.saturating_sub(estimated_tokens),
            utilisation_percent,
            by_role,
            messages,
            entries,
            entry_count: entries,
            by_resolution: ResolutionTokens {
                full: estimated_tokens,
                ..ResolutionTokens::default()
            },
            by_phase: PhaseTokens {
                unclassified: estimated_tokens,
                ..PhaseTokens::default()
            },
            compaction_tokens: 0,
            compacted_entries: 0,
            evicted_entries: 0,
        }
    }

    /// The prompt budget: the window less the completion reserve.
    pub fn prompt_budget(&self) -> u64 {
        self.window.saturating_sub(self.reserve)
    }

    /// `estimated_tokens` as a percentage of the prompt budget, 0–100.
    pub fn utilization_percent(&self) -> f64 {
        let budget = self.prompt_budget();
        if budget == 0 {
            return 100.0;
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "a percentage; token counts are far below 2^52"
        )]
        let percent = self.estimated_tokens as f64 * 100.0 / budget as f64;
        percent.min(100.0)
    }

    /// Tokens left in the prompt budget (0 when over it).
    pub fn estimated_remaining(&self) -> u64 {
        self.prompt_budget().saturating_sub(self.estimated_tokens)
    }
}

/// rho's window rule: 200k when the model spec contains `claude`, else 128k.
pub fn window_for(model: &str) -> u64 {
    if model.contains("claude") {
        CLAUDE_WINDOW
    } else {
        DEFAULT_WINDOW
    }
}

/// rho's reserve rule: `max(15% of window, reserve_tokens or 16 384)`, falling back to 15% when
/// that leaves no room.
pub fn reserve_for(window: u64, reserve_tokens: Option<u64>) -> u64 {
    let fifteen_percent = window * 15 / 100;
    let reserve = fifteen_percent.max(reserve_tokens.unwrap_or(DEFAULT_RESERVE_TOKENS));
    if reserve >= window {
        fifteen_percent
    } else {
        reserve
    }
}

/// Estimated tokens of one message: its text parts counted, pictures and documents at their
/// fixed estimates, tool calls by name and arguments.
pub(crate) fn message_tokens(message: &Message, count: &dyn Fn(&str) -> u64) -> u64 {
    let parts: u64 = message
        .content
        .iter()
        .map(|part| part_tokens(part, count))
        .sum();
    let calls: u64 = message
        .tool_calls
        .iter()
        .flatten()
        .map(|call| count(call.name.as_deref().unwrap_or("")) + count(&call.arguments))
        .sum();
    parts + calls
}

fn part_tokens(part: &ContentPart, count: &dyn Fn(&str) -> u64) -> u64 {
    match part.kind {
        PartType::Text | PartType::Thinking => part.text.as_deref().map_or(0, count),
        PartType::Image | PartType::ImageUrl => PICTURE_TOKENS,
        PartType::File => {
            // The part's own metadata (context's `ContentPart`), not the session's schema.
            let pages = part
                .metadata
                .get("pages")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1);
            pages.max(1) * PDF_PAGE_TOKENS
        }
    }
}
