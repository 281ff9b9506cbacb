//! The model registries pi-ai resolves `provider/id` with, generated from the
//! pinned packages by `cargo xtask record` (`xtask/recorder/requests.mjs`)
//! into `data/models-pi.json` (pi 0.73.1's `getModels`) and
//! `data/models-omp.json` (omp 18.2.3's bundled `@oh-my-pi/pi-catalog`).
//! Never edit them by hand: re-record.
//!
//! Each row keeps what a request body depends on: `api`, `baseUrl`,
//! `reasoning`, `input` (text/image), `maxTokens`, pi's `thinkingLevelMap`,
//! omp's `thinking` and the `compat` flags (shared through a table).

use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::{Map, Value};

use super::PiAi;

static PI_TABLE: &str = include_str!("../../data/models-pi.json");
static OMP_TABLE: &str = include_str!("../../data/models-omp.json");

/// One model of a registry.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The provider (`anthropic`, `openai`, `groq`, …).
    pub provider: String,
    /// The model id within the provider.
    pub id: String,
    /// The API the model is sent through (`openai-completions`, …).
    pub api: String,
    /// The provider's base URL (some compat rules look at it).
    pub base_url: String,
    /// Whether the model reasons (thinking settings apply).
    pub reasoning: bool,
    /// The input modalities (`text`, `image`).
    pub input: Vec<String>,
    /// The model's output token limit.
    pub max_tokens: Option<u64>,
    /// pi's `thinkingLevelMap` (level → provider value, `null` = unsupported).
    pub thinking_level_map: Option<Map<String, Value>>,
    /// omp's `thinking` descriptor (`mode`, `efforts`, budgets).
    pub thinking: Option<Thinking>,
    /// The compat flags as the registry gives them (omp: fully resolved; pi:
    /// only the overrides, the rest is detected from provider and URL). Shared
    /// between the models that have the same flags.
    pub compat: Option<Arc<Map<String, Value>>>,
}

impl Model {
    /// `provider/id`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }

    /// Whether the model takes pictures.
    pub fn takes_images(&self) -> bool {
        self.input.iter().any(|m| m == "image")
    }

    /// A compat flag (`None` when the registry does not set it).
    pub fn compat(&self, key: &str) -> Option<&Value> {
        self.compat.as_ref().and_then(|c| c.get(key))
    }

    /// A boolean compat flag.
    pub fn compat_bool(&self, key: &str) -> Option<bool> {
        self.compat(key).and_then(Value::as_bool)
    }

    /// A string compat flag.
    pub fn compat_str(&self, key: &str) -> Option<&str> {
        self.compat(key).and_then(Value::as_str)
    }
}

/// omp's `thinking` descriptor of a model (`@oh-my-pi/pi-catalog`'s `ThinkingConfig`), typed
/// when the registry is loaded: the fields the request builders read, each key spelled once
/// (serde's camelCase of the field name). A record of the model registry, not of a session.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Thinking {
    /// `mode`: how thinking is asked for (`anthropic-adaptive`, `anthropic-budget-effort`,
    /// `budget`, `google-level`, …).
    pub mode: Option<String>,
    /// `efforts`: the levels the model takes, lowest first.
    pub efforts: Vec<String>,
    /// `effortMap`: level → the provider's effort name.
    pub effort_map: Option<Map<String, Value>>,
    /// `effortBudgets`: level → thinking token budget (Gemini).
    pub effort_budgets: Option<Map<String, Value>>,
    /// `supportsDisplay`: Anthropic's adaptive thinking takes `display`.
    pub supports_display: bool,
    /// `prefixBinding`: thinking signatures bind the prefix (Anthropic).
    pub prefix_binding: bool,
    /// `requiresEffort`: thinking cannot be switched off (Gemini).
    pub requires_effort: bool,
    /// `suppressWhenOff`: "off" asks the provider to think as little as it can (Gemini).
    pub suppress_when_off: bool,
}

/// A `provider/id` that is not in the registry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model {name:?} for {package}{}", suggestions(.close))]
pub struct UnknownModel {
    /// What was asked for.
    pub name: String,
    /// The registry's package.
    pub package: &'static str,
    /// Registry names close to it, best first.
    pub close: Vec<String>,
}

fn suggestions(close: &[String]) -> String {
    if close.is_empty() {
        "; give PROVIDER/ID as in the registry (e.g. anthropic/claude-sonnet-4-5)".to_owned()
    } else {
        format!("; did you mean {}?", close.join(", "))
    }
}

#[derive(Deserialize)]
struct Table {
    compats: Vec<Map<String, Value>>,
    models: Vec<Row>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Row {
    provider: String,
    id: String,
    api: String,
    #[serde(default)]
    base_url: String,
    #[serde(default)]
    reasoning: bool,
    #[serde(default)]
    input: Vec<String>,
    max_tokens: Option<u64>,
    thinking_level_map: Option<Map<String, Value>>,
    thinking: Option<Thinking>,
    compat: Option<usize>,
}

fn parse(text: &str) -> Vec<Model> {
    let Ok(table) = serde_json::from_str::<Table>(text) else {
        return Vec::new();
    };
    let compats: Vec<Arc<Map<String, Value>>> = table.compats.into_iter().map(Arc::new).collect();
    table
        .models
        .into_iter()
        .map(|row| Model {
            compat: row.compat.and_then(|i| compats.get(i).cloned()),
            provider: row.provider,
            id: row.id,
            api: row.api,
            base_url: row.base_url,
            reasoning: row.reasoning,
            input: row.input,
            max_tokens: row.max_tokens,
            thinking_level_map: row.thinking_level_map,
            thinking: row.thinking,
        })
        .collect()
}

/// Every model of `pi_ai`'s registry, sorted by provider then id.
pub fn models(pi_ai: PiAi) -> &'static [Model] {
    static PI: OnceLock<Vec<Model>> = OnceLock::new();
    static OMP: OnceLock<Vec<Model>> = OnceLock::new();
    match pi_ai {
        PiAi::Pi => PI.get_or_init(|| parse(PI_TABLE)),
        PiAi::Omp => OMP.get_or_init(|| parse(OMP_TABLE)),
    }
}

/// The model `provider/id` (the id may itself contain `/`).
///
/// ```
/// use pi_session_context::provider_request::{lookup, PiAi};
/// let model = lookup(PiAi::Omp, "openai/gpt-5").unwrap();
/// assert_eq!(model.api, "openai-responses");
/// let error = lookup(PiAi::Pi, "anthropic/claude-sonet-4-5").unwrap_err();
/// assert!(error.close.contains(&"anthropic/claude-sonnet-4-5".to_owned()));
/// ```
pub fn lookup(pi_ai: PiAi, name: &str) -> Result<Model, UnknownModel> {
    let all = models(pi_ai);
    if let Some((provider, id)) = name.split_once('/')
        && let Some(model) = all.iter().find(|m| m.provider == provider && m.id == id)
    {
        return Ok(model.clone());
    }
    Err(UnknownModel {
        name: name.to_owned(),
        package: pi_ai.package(),
        close: close_matches(all, name),
    })
}

/// Up to five registry names near `name`: by edit distance, then names that
/// contain the asked id.
fn close_matches(all: &[Model], name: &str) -> Vec<String> {
    let wanted = name.to_lowercase();
    let id_part = wanted.split_once('/').map_or(wanted.as_str(), |(_, id)| id);
    let limit = (wanted.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, String)> = all
        .iter()
        .filter_map(|m| {
            let full = m.name();
            let lower = full.to_lowercase();
            let distance =
                edit_distance(&lower, &wanted).min(edit_distance(&m.id.to_lowercase(), id_part));
            if distance <= limit {
                Some((distance, full))
            } else if !id_part.is_empty() && lower.contains(id_part) {
                Some((limit + 1, full))
            } else {
                None
            }
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = substitute.min(previous + 1).min(row[j] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_registries_load_and_know_the_recorded_models() {
        for pi_ai in [PiAi::Pi, PiAi::Omp] {
            assert!(models(pi_ai).len() > 500, "{pi_ai:?} registry is too small");
            for name in [
                "groq/meta-llama/llama-4-scout-17b-16e-instruct",
                "openai/gpt-5",
                "anthropic/claude-sonnet-4-5",
                "google/gemini-2.5-pro",
            ] {
                assert!(lookup(pi_ai, name).is_ok(), "{pi_ai:?} lacks {name}");
            }
        }
    }

    #[test]
    fn unknown_model_names_close_matches() {
        let error = lookup(PiAi::Pi, "openai/gpt5").unwrap_err();
        assert!(error.close.iter().any(|n| n == "openai/gpt-5"), "{error}");
        assert!(error.to_string().contains("did you mean"), "{error}");
        let none = lookup(PiAi::Pi, "zzzz").unwrap_err();
        assert!(none.close.is_empty());
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
