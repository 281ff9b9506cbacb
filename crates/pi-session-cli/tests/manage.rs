//! Context management on the command line: `append --pin/--unpin/--resolution [--cursor]`,
//! `context --budget [--cursor]`, and `stats`' status bar and distributions.

use std::path::Path;

use crate::common::{json, run};
use crate::write::{copy, s};

/// The id of the first `message` entry whose role is `role`.
fn id_of(file: &Path, role: &str) -> String {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["message"]["role"] == role)
        .and_then(|v| v["id"].as_str().map(str::to_owned))
        .unwrap()
}

#[test]
fn stamps_change_nothing_pi_and_omp_see_and_nothing_without_a_budget() {
    for fixture in ["pi/tool-calls.jsonl", "omp/tool-calls.jsonl"] {
        let (_dir, file) = copy(fixture);
        let formats = [
            "agent",
            "llm",
            "omp-agent-loop",
            "req-llm",
            "openai",
            "anthropic",
        ];
        let before: Vec<String> = formats
            .iter()
            .map(|f| run(&["context", s(&file), "--format", f]).stdout)
            .collect();
        let user = id_of(&file, "user");
        let result = id_of(&file, "toolResult");
        let (summarized, outlined) = (format!("{result}=summarized"), format!("{result}=outlined"));
        for args in [
            vec!["--resolution", summarized.as_str()],
            vec!["--pin", user.as_str(), "--cursor", "review"],
            vec!["--resolution", outlined.as_str(), "--cursor", "review"],
        ] {
            let mut all = vec!["append", s(&file)];
            all.extend(args);
            let out = run(&all);
            assert_eq!(out.code, 0, "{out}");
        }
        let unpin = run(&[
            "append",
            s(&file),
            "--unpin",
            &user,
            "--json",
            "--cursor",
            "review",
        ]);
        assert_eq!(
            json(&unpin)["data"]["resolution"],
            serde_json::Value::Null,
            "{unpin}"
        );
        for (format, before) in formats.iter().zip(&before) {
            // omp's agent format carries the leaf, which the stamps moved: compare messages.
            let after = run(&["context", s(&file), "--format", format]).stdout;
            if *format == "agent" {
                let (a, b) = (json_of(&after), json_of(before));
                assert_eq!(a["messages"], b["messages"], "{fixture} {format}");
            } else {
                assert_eq!(&after, before, "{fixture} {format}");
            }
        }
        // With a budget the stamps apply: main's result is summarized, review's outlined.
        let budgeted = |more: &[&str]| {
            let base = [
                "context",
                s(&file),
                "--format",
                "req-llm",
                "--budget",
                "100000",
            ];
            run(&[&base[..], more].concat())
        };
        let main = budgeted(&[]);
        assert!(
            main.stdout.contains("[read result:") || main.stdout.contains("[bash result:"),
            "{main}"
        );
        let review = budgeted(&["--cursor", "review"]);
        assert!(!review.stdout.contains("result: "), "{review}");
    }
}

fn json_of(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn a_budget_without_stamps_that_fits_changes_nothing_and_a_small_one_fits() {
    let (_dir, file) = copy("pi/tool-calls.jsonl");
    for format in ["req-llm", "openai", "anthropic"] {
        let plain = run(&["context", s(&file), "--format", format]);
        let roomy = run(&[
            "context",
            s(&file),
            "--format",
            format,
            "--budget",
            "1000000",
        ]);
        assert_eq!(plain.stdout, roomy.stdout, "{format}");
    }
    let tight = run(&["context", s(&file), "--format", "req-llm", "--budget", "5"]);
    tight.assert_says(0, "over the budget");
}

#[test]
fn bad_stamps_and_formats_are_refused() {
    let (_dir, file) = copy("pi/tool-calls.jsonl");
    let user = id_of(&file, "user");
    let out = run(&["append", s(&file), "--resolution", &format!("{user}=tiny")]);
    out.assert_says(2, "not a resolution level");
    let out = run(&["append", s(&file), "--pin", "nope"]);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.stderr.contains("nope"), "{out}");
    let out = run(&["context", s(&file), "--format", "agent", "--budget", "10"]);
    out.assert_says(2, "--budget");
}

#[test]
fn stats_shows_the_status_bar_and_the_distributions() {
    let (_dir, file) = copy("omp/tool-calls.jsonl");
    let text = run(&["stats", s(&file)]).stdout;
    assert!(
        text.contains("tokens (0%) │") && text.contains("remaining │ 5 messages"),
        "{text}"
    );
    assert!(!text.contains('\x1b'), "no colour when not on a terminal");
    for line in ["by role", "by level", "by phase", "compacted"] {
        assert!(text.contains(line), "{line}: {text}");
    }
    let report = json(&run(&["stats", s(&file), "--json"]));
    let context = &report["context"];
    let sum = |key: &str| -> u64 {
        context[key]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    let estimated = context["estimatedTokens"].as_u64().unwrap();
    assert_eq!(sum("byPhase"), estimated);
    assert_eq!(sum("byRole"), estimated);
    assert_eq!(
        sum("byResolution") + context["compactionTokens"].as_u64().unwrap(),
        estimated
    );
}
