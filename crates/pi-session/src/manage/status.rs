//! The one-line status bar of [`ContextStats`]:
//! `[████████████░░░░░░░░] 12.3k/32k tokens (60%) │ 12.8k remaining │ 10 messages`.
//!
//! The bar has [`BAR_CELLS`] cells, one per 5% of the prompt budget (rounded); the numbers are
//! the estimate, the prompt budget ([`ContextStats::prompt_budget`]), the utilisation rounded
//! to a whole percent, the tokens remaining and the message count. Token counts of 1,000 and
//! more are written in thousands with one decimal (`12.3k`, `32k`). With colour, the bar is
//! green below 60%, yellow from 60% to 80%, red above 80% (ANSI escapes: give colour only when
//! the output is a terminal).

use crate::stats::ContextStats;

/// Cells of the bar.
pub const BAR_CELLS: usize = 20;

/// The colour the bar takes at `percent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Below 60%.
    Green,
    /// 60% to 80%.
    Yellow,
    /// Above 80%.
    Red,
}

impl Level {
    /// The level of a utilisation percentage.
    pub fn of(percent: f64) -> Self {
        if percent < 60.0 {
            Self::Green
        } else if percent <= 80.0 {
            Self::Yellow
        } else {
            Self::Red
        }
    }

    fn ansi(self) -> &'static str {
        match self {
            Self::Green => "\x1b[32m",
            Self::Yellow => "\x1b[33m",
            Self::Red => "\x1b[31m",
        }
    }
}

/// `12.3k` for 12,345; `32k` for 32,000; `950` for 950.
///
/// ```
/// use pi_session::manage::status::short_tokens;
/// assert_eq!((short_tokens(12_345), short_tokens(32_000), short_tokens(950)), ("12.3k".into(), "32k".into(), "950".into()));
/// ```
pub fn short_tokens(tokens: u64) -> String {
    if tokens < 1_000 {
        return tokens.to_string();
    }
    let tenths = (tokens + 50) / 100;
    if tenths.is_multiple_of(10) {
        format!("{}k", tenths / 10)
    } else {
        format!("{}.{}k", tenths / 10, tenths % 10)
    }
}

impl ContextStats {
    /// The one-line status bar (see [`crate::manage::status`]); `colour` adds ANSI colour to
    /// the bar.
    ///
    /// ```
    /// use pi_session::{ContextStats, StatsOptions, reqllm::Message};
    /// let options = StatsOptions { window: Some(40_000), reserve_tokens: Some(8_000), counter: None };
    /// let text = "x".repeat(64_000); // 16,000 tokens
    /// let stats = ContextStats::from_messages(&[Message::user_text(text)], 1, "m", &options);
    /// assert_eq!(stats.status_bar(false), "[██████████░░░░░░░░░░] 16k/32k tokens (50%) │ 16k remaining │ 1 message");
    /// ```
    pub fn status_bar(&self, colour: bool) -> String {
        let percent = self.utilization_percent();
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "percent is within 0..=100"
        )]
        let filled = ((percent / 5.0).round() as usize).min(BAR_CELLS);
        let bar = format!("{}{}", "█".repeat(filled), "░".repeat(BAR_CELLS - filled));
        let bar = if colour {
            format!("{}{bar}\x1b[0m", Level::of(percent).ansi())
        } else {
            bar
        };
        format!(
            "[{bar}] {}/{} tokens ({percent:.0}%) │ {} remaining │ {}",
            short_tokens(self.estimated_tokens),
            short_tokens(self.prompt_budget()),
            short_tokens(self.estimated_remaining()),
            super::render::counted(self.messages, "message"),
        )
    }
}
