//! Token usage and cost (`Usage`), as stored on assistant messages and usage entries.
//!
//! Rules (from the specs):
//! - `reasoning` (pi 1.6) and `reasoningTokens` (omp) are a **subset of** `output`;
//! - `cacheWrite1h` (pi 1.6) is a **subset of** `cacheWrite`;
//! - old files may lack `totalTokens` and `cost`: the accessors default them to 0, but an
//!   absent key stays absent when the value is written back.

use crate::JsonMap;
use crate::JsonNumber;
use pi_session_types_macros::record;
use serde::{Deserialize, Serialize};

fn num(value: &Option<JsonNumber>) -> f64 {
    value.as_ref().and_then(JsonNumber::as_f64).unwrap_or(0.0)
}

fn count(value: &Option<JsonNumber>) -> u64 {
    match value {
        Some(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
            .unwrap_or(0),
        None => 0,
    }
}

/// `usage` of an assistant message (and of pi 1.6 `usage` / omp `model_usage` entries):
/// token counts and cost. Numbers are kept as written.
///
/// ```
/// use pi_session_types::Usage;
/// let u: Usage = serde_json::from_str(r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0}"#).unwrap();
/// assert_eq!(u.total_tokens(), 0); // absent reads as 0 ...
/// assert_eq!(serde_json::to_string(&u).unwrap(), r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0}"#); // ... and stays absent
/// ```
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Usage {
    /// Uncached input tokens.
    pub input: Option<JsonNumber>,
    /// Output tokens (includes reasoning tokens).
    pub output: Option<JsonNumber>,
    /// Tokens read from the prompt cache.
    pub cache_read: Option<JsonNumber>,
    /// Tokens written to the prompt cache (includes `cacheWrite1h`).
    pub cache_write: Option<JsonNumber>,
    /// pi 1.6: reasoning tokens, a subset of `output`.
    pub reasoning: Option<JsonNumber>,
    /// Total tokens as reported.
    pub total_tokens: Option<JsonNumber>,
    /// Cost in dollars.
    pub cost: Option<Cost>,
    /// pi 1.6: the part of `cacheWrite` written with a 1-hour TTL (Anthropic only).
    pub cache_write_1h: Option<JsonNumber>,
    /// omp: reasoning tokens, a subset of `output`; absent means unknown.
    pub reasoning_tokens: Option<JsonNumber>,
    /// Every other key (omp's `contextTokens`, `cttl`, `server`, `credits`, ...), kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Usage {
    /// `input`, 0 when absent.
    pub fn input(&self) -> u64 {
        count(&self.input)
    }
    /// `output`, 0 when absent (includes reasoning).
    pub fn output(&self) -> u64 {
        count(&self.output)
    }
    /// `cacheRead`, 0 when absent.
    pub fn cache_read(&self) -> u64 {
        count(&self.cache_read)
    }
    /// `cacheWrite`, 0 when absent (includes `cacheWrite1h`).
    pub fn cache_write(&self) -> u64 {
        count(&self.cache_write)
    }
    /// `cacheWrite1h`, 0 when absent; never more than [`Usage::cache_write`] in a valid file.
    pub fn cache_write_1h(&self) -> u64 {
        count(&self.cache_write_1h)
    }
    /// Reasoning tokens from pi's `reasoning` or omp's `reasoningTokens`, 0 when both absent.
    pub fn reasoning(&self) -> u64 {
        if self.reasoning.is_some() {
            count(&self.reasoning)
        } else {
            count(&self.reasoning_tokens)
        }
    }
    /// `totalTokens`, 0 when absent.
    pub fn total_tokens(&self) -> u64 {
        count(&self.total_tokens)
    }
    /// `cost.total` in dollars, 0 when absent.
    pub fn cost_total(&self) -> f64 {
        self.cost.as_ref().map(|c| c.total()).unwrap_or(0.0)
    }
}

/// `usage.cost`: dollars per token class plus `total`.
#[record]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Cost {
    /// Cost of uncached input.
    pub input: Option<JsonNumber>,
    /// Cost of output.
    pub output: Option<JsonNumber>,
    /// Cost of cache reads.
    pub cache_read: Option<JsonNumber>,
    /// Cost of cache writes.
    pub cache_write: Option<JsonNumber>,
    /// Total cost.
    pub total: Option<JsonNumber>,
    /// pi 1.6: true when `total` is the provider-billed cost.
    pub total_from_provider: Option<bool>,
    /// Every other key, kept in order.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Cost {
    /// `input` cost, 0 when absent.
    pub fn input(&self) -> f64 {
        num(&self.input)
    }
    /// `output` cost, 0 when absent.
    pub fn output(&self) -> f64 {
        num(&self.output)
    }
    /// `cacheRead` cost, 0 when absent.
    pub fn cache_read(&self) -> f64 {
        num(&self.cache_read)
    }
    /// `cacheWrite` cost, 0 when absent.
    pub fn cache_write(&self) -> f64 {
        num(&self.cache_write)
    }
    /// `total` cost, 0 when absent.
    pub fn total(&self) -> f64 {
        num(&self.total)
    }
}
