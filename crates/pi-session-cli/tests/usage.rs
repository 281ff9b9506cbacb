//! `pi-session usage`: totals equal `stats` summed over the same files, and hand-computed sums
//! on branched fixtures (a turn shared by two branches counted once).

use serde_json::Value;

use crate::common::{fixture_files, json, root, run};

/// The seven numbers the table and `--json` give for a group.
pub fn numbers(group: &Value) -> Vec<f64> {
    [
        "calls",
        "input",
        "output",
        "cacheRead",
        "cacheWrite",
        "totalTokens",
        "cost",
    ]
    .iter()
    .map(|k| group[k].as_f64().unwrap())
    .collect()
}

#[test]
fn totals_equal_stats_summed_over_the_same_files() {
    for folder in ["omp", "pi", "pi16", "cli/usage"] {
        let usage = json(&run(&["usage", &format!("fixtures/{folder}"), "--json"]));
        // Sum `stats` part by part in path order, the order `usage` adds files in.
        let parts = ["assistant", "nestedTools", "sideCalls"];
        let fields = [
            "count",
            "input",
            "output",
            "cacheRead",
            "cacheWrite",
            "totalTokens",
            "costTotal",
        ];
        let mut sums = [[0.0f64; 7]; 3];
        let mut files = 0;
        for file in fixture_files(folder, ".jsonl") {
            let path = file
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let stats = run(&["stats", &path, "--json"]);
            if stats.code != 0 {
                // Not a session at all (no header, no entries): `usage` counts nothing in it.
                assert!(stats.stdout.is_empty(), "{stats}");
                files += 1;
                continue;
            }
            files += 1;
            let stats = json(&stats);
            for (p, part) in parts.iter().enumerate() {
                for (f, field) in fields.iter().enumerate() {
                    sums[p][f] += stats["usage"][part][field].as_f64().unwrap();
                }
            }
        }
        assert_eq!(usage["files"], files, "{folder}");
        let total: Vec<f64> = (0..7)
            .map(|f| sums[0][f] + sums[1][f] + sums[2][f])
            .collect();
        assert_eq!(
            numbers(&usage["total"]),
            total,
            "{folder}: usage total vs. the sum of stats"
        );
        for (p, part) in parts.iter().enumerate() {
            for (f, field) in fields.iter().enumerate() {
                assert_eq!(
                    usage["total"]["parts"][part][field].as_f64().unwrap(),
                    sums[p][f],
                    "{folder}: {part}.{field}"
                );
            }
        }
        assert!(
            usage["total"]["calls"].as_u64().unwrap() > 0,
            "{folder} has usage"
        );
    }
}

#[test]
fn hand_computed_totals_count_a_shared_turn_once() {
    let usage = json(&run(&["usage", "fixtures/cli/usage", "--json"]));
    // a1 (shared by both branches) 1000/100, a2 200/20/50 read, a3 30/3/7 write, compaction
    // 4/1, omp turn 2/2, task result 8/8, model_usage 16/0.
    assert_eq!(
        numbers(&usage["total"]),
        [7.0, 1260.0, 134.0, 50.0, 7.0, 1451.0, 0.9921875]
    );
    assert_eq!(usage["total"]["parts"]["nestedTools"]["count"], 1);
    assert_eq!(usage["total"]["parts"]["sideCalls"]["count"], 2);
    let by = |by: &str, extra: &[&str]| -> Vec<(String, Vec<f64>)> {
        let mut args = vec!["usage", "fixtures/cli/usage", "--json", "--by", by];
        args.extend_from_slice(extra);
        json(&run(&args))["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["key"].as_str().unwrap().to_owned(), numbers(g)))
            .collect()
    };
    assert_eq!(
        by("day", &[]),
        [
            (
                "2026-01-05".into(),
                vec![2.0, 1200.0, 120.0, 50.0, 0.0, 1370.0, 0.75]
            ),
            (
                "2026-01-06".into(),
                vec![2.0, 34.0, 4.0, 0.0, 7.0, 45.0, 0.1875]
            ),
            (
                "2026-01-12".into(),
                vec![2.0, 10.0, 10.0, 0.0, 0.0, 20.0, 0.046875]
            ),
            (
                "2026-02-01".into(),
                vec![1.0, 16.0, 0.0, 0.0, 0.0, 16.0, 0.0078125]
            ),
        ]
    );
    let weeks: Vec<String> = by("week", &[]).into_iter().map(|(k, _)| k).collect();
    assert_eq!(weeks, ["2026-01-05", "2026-01-12", "2026-01-26"]);
    let months: Vec<String> = by("month", &[]).into_iter().map(|(k, _)| k).collect();
    assert_eq!(months, ["2026-01", "2026-02"]);
    let models: Vec<String> = by("model", &[]).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        models,
        [
            "(unknown)",
            "anthropic/claude-haiku-4-5",
            "anthropic/claude-sonnet-4-5",
            "openai/gpt-5"
        ]
    );
    let projects = by("project", &[]);
    assert_eq!(projects[0].0, "/work/alpha");
    assert_eq!(projects[0].1[0], 4.0);
    let sessions: Vec<String> = by("session", &[]).into_iter().map(|(k, _)| k).collect();
    assert_eq!(sessions, ["usage-branched", "usage-omp"]);
    // --since and --until take whole UTC days; --until is inclusive.
    let range = by("day", &["--since", "2026-01-06", "--until", "2026-01-12"]);
    let days: Vec<&str> = range.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(days, ["2026-01-06", "2026-01-12"]);
}

#[test]
fn the_table_and_bad_arguments() {
    let out = run(&["usage", "fixtures/cli/usage", "--by", "month"]);
    assert_eq!(out.code, 0, "{out}");
    insta::assert_snapshot!("usage_by_month", out.to_string());
    let out = run(&["usage", "fixtures/cli/usage", "--since", "last tuesday"]);
    out.assert_says(2, "not a date");
    let out = run(&["usage", "fixtures/cli/none"]);
    out.assert_says(2, "fixtures/cli/none");
}
