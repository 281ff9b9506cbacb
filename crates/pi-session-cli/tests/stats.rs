//! `pi-session stats`.

use crate::common::{json, run, snapshot_name};

#[test]
fn outputs() {
    let cases: [&[&str]; 7] = [
        &["stats", "fixtures/cli/mixed/good.jsonl"],
        &["stats", "fixtures/cli/mixed/good.jsonl", "--json"],
        &["stats", "fixtures/omp/compactions-several.jsonl"],
        &["stats", "fixtures/pi/numbers-and-usage.jsonl", "--json"],
        &["stats", "fixtures/cli/mixed/binary.jsonl"],
        &["stats", "fixtures/cli/mixed/empty.jsonl", "--json"],
        &["stats", "fixtures/cli/nope.jsonl"],
    ];
    for args in cases {
        insta::assert_snapshot!(snapshot_name(args), run(args).to_string());
    }
}

#[test]
fn stats_add_up() {
    let report = json(&run(&["stats", "fixtures/cli/mixed/good.jsonl", "--json"]));
    assert_eq!(report["entries"]["total"], 7);
    let by_type: u64 = report["entries"]["byType"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_type, 7);
    assert_eq!(report["branches"]["tips"], 2);
    // The leaf's branch: model_change, user, assistant, the failed tool result.
    assert_eq!(report["branches"]["branchLength"], 4);
    assert_eq!(
        report["totals"]["tokens"], 150.0,
        "only the first assistant turn is on the leaf's branch"
    );
    assert_eq!(
        report["usage"]["assistant"]["totalTokens"], 462.0,
        "both turns in the file"
    );
    let context = &report["context"];
    let by_role: u64 = context["byRole"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(context["estimatedTokens"].as_u64().unwrap(), by_role);
    assert_eq!(context["window"], 200_000);
    // The budget's fields: window less reserve, and what is used and left of it.
    let budget = context["window"].as_u64().unwrap() - context["reserve"].as_u64().unwrap();
    let used = context["estimatedTokens"].as_u64().unwrap();
    assert_eq!(context["promptBudget"].as_u64().unwrap(), budget);
    assert_eq!(
        context["estimatedRemaining"].as_u64().unwrap(),
        budget - used
    );
    let percent = context["utilizationPercent"].as_f64().unwrap();
    assert!((percent - used as f64 * 100.0 / budget as f64).abs() < 1e-9);
    assert!(used > 0 && percent > 0.0);
}
