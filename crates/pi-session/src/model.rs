//! Model specs: req_llm's `provider:id` and the `provider/id` that pi and omp sessions hold
//! (rho-reqllm.md §A.9).
//!
//! Only the first separator splits (`:` one way, `/` the other); every later one belongs to the
//! model id. The only provider renamed is `openai_codex` ↔ `openai-codex`.

use pi_session_tree::branch_facts::{pi_provider, req_llm_provider};

/// The provider rho writes when a spec has no `:`.
pub const UNKNOWN_PROVIDER: &str = "unknown";

/// Splits a req_llm spec into the pi provider and the model id (rho's `split_model`): at the
/// first `:` only; no `:` gives provider `"unknown"`.
///
/// ```
/// use pi_session::split_model;
/// assert_eq!(split_model("openai_codex:gpt-5"), ("openai-codex".to_owned(), "gpt-5".to_owned()));
/// assert_eq!(split_model("gpt-5"), ("unknown".to_owned(), "gpt-5".to_owned()));
/// ```
pub fn split_model(spec: &str) -> (String, String) {
    match spec.split_once(':') {
        Some((provider, id)) => (pi_provider(provider).to_owned(), id.to_owned()),
        None => (UNKNOWN_PROVIDER.to_owned(), spec.to_owned()),
    }
}

/// req_llm spec → the `provider/id` a session file holds (rho's `to_pi_model`).
///
/// ```
/// use pi_session::to_pi_model;
/// assert_eq!(to_pi_model("openai_codex:gpt-5"), "openai-codex/gpt-5");
/// assert_eq!(to_pi_model("amazon_bedrock:anthropic.claude-v1:0"), "amazon_bedrock/anthropic.claude-v1:0");
/// ```
pub fn to_pi_model(spec: &str) -> String {
    let (provider, id) = split_model(spec);
    format!("{provider}/{id}")
}

/// `provider/id` from a session file → req_llm spec (rho's `from_pi_model`): split at the first
/// `/` only; the provider is renamed only when it is exactly a pi spelling from the table; text
/// without `/` is returned unchanged.
///
/// ```
/// use pi_session::from_pi_model;
/// assert_eq!(from_pi_model("openai-codex/gpt-5"), "openai_codex:gpt-5");
/// assert_eq!(from_pi_model("openrouter/anthropic/claude-x"), "openrouter:anthropic/claude-x");
/// assert_eq!(from_pi_model("gpt-5"), "gpt-5");
/// ```
pub fn from_pi_model(pi: &str) -> String {
    match pi.split_once('/') {
        Some((provider, id)) => format!("{}:{id}", req_llm_provider(provider)),
        None => pi.to_owned(),
    }
}

/// The `api` pi writes on an assistant message for a pi provider: pi's catalog's
/// ([`api_for`](crate::api_for)), else the provider's own name.
///
/// ```
/// assert_eq!(pi_session::pi_api("anthropic"), "anthropic-messages");
/// assert_eq!(pi_session::pi_api("openrouter"), "openai-completions");
/// assert_eq!(pi_session::pi_api("my-proxy"), "my-proxy");
/// ```
pub fn pi_api(pi_provider: &str) -> &str {
    crate::api_table::api_for(pi_session_tree::Dialect::PI, pi_provider).unwrap_or(pi_provider)
}
