//! rho's `usage/1`, `totals/1` and `add_usage/2` (rho-reqllm.md §A.10).

use pi_session::{Reply, add_usage, assistant, totals, types::JsonValue, usage};
use serde_json::json;

fn convert(map: JsonValue) -> JsonValue {
    serde_json::to_value(usage(map.as_object().unwrap())).unwrap()
}

/// An object's keys, in order.
fn keys(object: &JsonValue) -> Vec<&str> {
    object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

#[test]
fn the_key_sets_are_rhos() {
    let out = convert(json!({}));
    assert_eq!(
        keys(&out),
        [
            "input",
            "output",
            "cacheRead",
            "cacheWrite",
            "totalTokens",
            "cost"
        ]
    );
    assert_eq!(
        keys(&out["cost"]),
        ["input", "output", "cacheRead", "cacheWrite", "total"]
    );
    assert_eq!(
        out,
        json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,
        "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}})
    );
}

/// (req_llm usage map, expected pi usage).
fn cases() -> Vec<(JsonValue, JsonValue)> {
    vec![
        // Cache reads and writes come out of input.
        (
            json!({"input_tokens": 1000, "output_tokens": 50, "cache_read_tokens": 600, "cache_write_tokens": 100}),
            json!({"input":300,"output":50,"cacheRead":600,"cacheWrite":100,"totalTokens":1050,
                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}),
        ),
        // The first PRESENT key wins, even when it is 0 (Elixir's ||), not the first non-zero.
        (
            json!({"input_tokens": 10, "cache_read_tokens": 0, "cached_tokens": 7, "cache_creation_tokens": 2}),
            json!({"input":8,"output":0,"cacheRead":0,"cacheWrite":2,"totalTokens":10,
                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}),
        ),
        // null falls through to the alternative.
        (
            json!({"input_tokens": 10, "cache_read_tokens": null, "cached_tokens": 4}),
            json!({"input":6,"output":0,"cacheRead":4,"cacheWrite":0,"totalTokens":10,
                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}),
        ),
        // Input never goes below 0.
        (
            json!({"input_tokens": 5, "cached_tokens": 9}),
            json!({"input":0,"output":0,"cacheRead":9,"cacheWrite":0,"totalTokens":9,
                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}),
        ),
        // Costs: numbers kept; total_cost before cost; a map `cost` (current req_llm) counts 0.
        (
            json!({"input_cost": 0.25, "output_cost": 1.5, "total_cost": 1.75, "cost": 9}),
            json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,
                   "cost":{"input":0.25,"output":1.5,"cacheRead":0,"cacheWrite":0,"total":1.75}}),
        ),
        (
            json!({"cost": {"tokens": 1, "total": 2}}),
            json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,
                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}),
        ),
        (
            json!({"cost": 0.5, "input_cost": "n/a"}),
            json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,
                   "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}}),
        ),
    ]
}

#[test]
fn usage_converts_req_llm_maps() {
    for (input, expected) in cases() {
        assert_eq!(convert(input.clone()), expected, "usage({input})");
    }
}

#[test]
fn totals_add_every_assistant_turn() {
    let reply = |input: u64, output: u64, cost: f64| Reply {
        usage: json!({"input_tokens": input, "output_tokens": output, "total_cost": cost})
            .as_object()
            .unwrap()
            .clone(),
        ..Reply::default()
    };
    let entries = vec![
        assistant(&reply(100, 10, 0.5), "anthropic:claude-x"),
        pi_session::user("hi", pi_session::UserOptions::new()),
        assistant(&reply(200, 20, 0.25), "anthropic:claude-x"),
    ];
    let sum = totals(&entries);
    assert_eq!((sum.tokens, sum.output, sum.cost), (330.0, 30.0, 0.75));
    let one = usage(
        json!({"input_tokens": 1, "output_tokens": 2})
            .as_object()
            .unwrap(),
    );
    let more = add_usage(sum, &one);
    assert_eq!((more.tokens, more.output, more.cost), (333.0, 32.0, 0.75));
}
