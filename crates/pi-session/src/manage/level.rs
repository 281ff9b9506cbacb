//! The resolution levels.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// How much of an entry the model sees (the design's resolution levels). See
/// [`render`](crate::manage::render()) for what each level sends for each kind of entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Resolution {
    /// Verbatim: what pi, omp and rho send for the entry.
    Full,
    /// Structure: tool names and key arguments, texts and outputs cut to their first and last
    /// lines (about 10–20% of the tokens of a long entry).
    Outlined,
    /// One line saying what the entry was (about 5–10%).
    Summarized,
    /// Native resolution (as Full), never downgraded, cut or evicted by the planner.
    Pinned,
    /// Not sent: covered by a compaction (whose summary is sent), or stamped so by the host.
    Compacted,
    /// Text verbatim, every picture and document replaced by a one-line mention of it.
    Attached,
}

impl Resolution {
    /// Every level, in declaration order.
    pub const ALL: [Self; 6] = [
        Self::Full,
        Self::Outlined,
        Self::Summarized,
        Self::Pinned,
        Self::Compacted,
        Self::Attached,
    ];

    /// The level's name as saved in stamps and given on the command line (`full`, `outlined`,
    /// `summarized`, `pinned`, `compacted`, `attached`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Outlined => "outlined",
            Self::Summarized => "summarized",
            Self::Pinned => "pinned",
            Self::Compacted => "compacted",
            Self::Attached => "attached",
        }
    }

    /// The level named `name` (as [`as_str`](Self::as_str) writes it, any case).
    ///
    /// ```
    /// use pi_session::manage::Resolution;
    /// assert_eq!(Resolution::parse("Outlined"), Some(Resolution::Outlined));
    /// assert_eq!(Resolution::parse("tiny"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|level| level.as_str().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for Resolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of [`Resolution::from_str`]: names the levels there are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownResolution(pub String);

impl fmt::Display for UnknownResolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a resolution level; use full, outlined, summarized, pinned, compacted or attached",
            self.0
        )
    }
}

impl std::error::Error for UnknownResolution {}

impl FromStr for Resolution {
    type Err = UnknownResolution;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownResolution(s.to_owned()))
    }
}
