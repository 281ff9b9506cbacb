//! The model-spec mapping, against the edge-case table of rho-reqllm.md §A.9.

use pi_session::{from_pi_model, pi_api, split_model, to_pi_model};

/// (req_llm spec, pi model, pi api) — the "to pi" rows of the table.
const TO_PI: &[(&str, &str, &str)] = &[
    (
        "openai_codex:gpt-5",
        "openai-codex/gpt-5",
        "openai-codex-responses",
    ),
    (
        "anthropic:claude-opus-4-5",
        "anthropic/claude-opus-4-5",
        "anthropic-messages",
    ),
    (
        "openrouter:anthropic/claude-haiku-4.5",
        "openrouter/anthropic/claude-haiku-4.5",
        "openai-completions",
    ),
    (
        "amazon_bedrock:anthropic.claude-opus-4-1-20250805-v1:0",
        "amazon_bedrock/anthropic.claude-opus-4-1-20250805-v1:0",
        "amazon_bedrock",
    ),
    (
        "google_vertex:gemini-2.5-pro",
        "google_vertex/gemini-2.5-pro",
        "google_vertex",
    ),
    ("gpt-5", "unknown/gpt-5", "unknown"),
    ("a:", "a/", "a"),
    (":x", "/x", ""),
];

/// (pi model, req_llm spec) — the "from pi" rows.
const FROM_PI: &[(&str, &str)] = &[
    ("openai-codex/gpt-5", "openai_codex:gpt-5"),
    (
        "openrouter/anthropic/claude-x",
        "openrouter:anthropic/claude-x",
    ),
    (
        "amazon_bedrock/anthropic.claude-opus-4-1-20250805-v1:0",
        "amazon_bedrock:anthropic.claude-opus-4-1-20250805-v1:0",
    ),
    ("google-vertex/gemini", "google-vertex:gemini"),
    ("openai-codex-mini/x", "openai-codex-mini:x"),
    ("gpt-5", "gpt-5"),
    ("/x", ":x"),
    ("a/", "a:"),
];

#[test]
fn to_pi_follows_the_table() {
    for (spec, pi, api) in TO_PI {
        assert_eq!(to_pi_model(spec), *pi, "to_pi_model({spec:?})");
        let (provider, _) = split_model(spec);
        assert_eq!(pi_api(&provider), *api, "api for {spec:?}");
    }
}

#[test]
fn from_pi_follows_the_table() {
    for (pi, spec) in FROM_PI {
        assert_eq!(from_pi_model(pi), *spec, "from_pi_model({pi:?})");
    }
}

#[test]
fn a_spec_without_provider_does_not_come_back() {
    // rho's table: gpt-5 → unknown/gpt-5 → unknown:gpt-5 (not restored).
    assert_eq!(from_pi_model(&to_pi_model("gpt-5")), "unknown:gpt-5");
}

#[test]
fn specs_with_a_provider_round_trip() {
    for (spec, _, _) in TO_PI.iter().filter(|(s, _, _)| s.contains(':')) {
        assert_eq!(from_pi_model(&to_pi_model(spec)), *spec);
    }
}

/// rho's `model_from/1` passes the session's own `provider/id` string to `from_pi_model`, so
/// every "from pi" row holds for a branch naming that model, whether in a `model_change` or
/// on an assistant turn (`provider` + `model`). `"/x"` gives `":x"`, not `"x"`.
#[test]
fn model_from_maps_the_session_string_like_rho() {
    use pi_session::model_from;
    use pi_session::types::Entry;
    let parse = |value: serde_json::Value| serde_json::from_value::<Entry>(value).unwrap();
    for (pi, spec) in FROM_PI {
        let change = parse(serde_json::json!({"type":"model_change","id":"1","model":pi}));
        assert_eq!(
            model_from(&[change]).as_deref(),
            Some(*spec),
            "model_change {pi:?}"
        );
        if let Some((provider, model)) = pi.split_once('/') {
            let turn = parse(serde_json::json!({"type":"message","id":"2","message":{
                "role":"assistant","content":[],"provider":provider,"model":model}}));
            assert_eq!(
                model_from(&[turn]).as_deref(),
                Some(*spec),
                "assistant {pi:?}"
            );
        }
    }
}
