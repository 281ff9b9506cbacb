//! `pi-session context`: the command's own path on a few recorded scenarios (every recording is
//! checked through the library by `cargo xtask golden`), snapshots of the provider projections,
//! and bad input.

use serde_json::Value;

use crate::common::{js_equal, json, parse_js_json, root, run, snapshot_name};

/// A smoke test of the command over recordings: for each `(recordings, sessions, dialect,
/// scenarios)`, every recorded context of those scenarios through `--format agent`, `llm` and
/// (omp) `omp-agent-loop`, and, for files the implementation wrote itself, auto detection. The
/// full sweep (every scenario, leaf and check, byte for byte) is `cargo xtask golden`; these
/// cover each dialect, a compaction, branches, pictures and facade-written files.
const SMOKE: [(&str, &str, Option<&str>, &[&str]); 6] = [
    (
        "pi",
        "pi",
        None,
        &["tool-calls", "compaction-single", "branches-leaf-not-last"],
    ),
    (
        "omp",
        "omp",
        None,
        &[
            "images",
            "compaction-handoff-and-rollover",
            "branch-summaries",
        ],
    ),
    (
        "pi16",
        "pi16",
        Some("pi16"),
        &["tool-calls", "compaction-single"],
    ),
    ("ours/pi/pi", "ours/pi", None, &["chat-with-tools"]),
    ("ours/pi/pi16", "ours/pi", None, &["compaction"]),
    (
        "ours/pi/omp",
        "ours/pi",
        None,
        &["forks-and-branch-summary"],
    ),
];

fn leaf_arg(context: &Value) -> String {
    match &context["leafId"] {
        Value::String(id) => id.clone(),
        _ => "null".to_owned(),
    }
}

#[test]
fn recorded_contexts_through_the_command() {
    let mut agent_loops = 0;
    for (recordings, sessions, dialect_override, scenarios) in SMOKE {
        for scenario in scenarios {
            let recording = root().join(format!("fixtures/{recordings}/{scenario}.expected.json"));
            let expected = parse_js_json(&std::fs::read_to_string(&recording).unwrap());
            let file = format!("fixtures/{sessions}/{}", expected["file"].as_str().unwrap());
            let dialect = dialect_override.unwrap_or_else(|| expected["dialect"].as_str().unwrap());
            let contexts = expected["contexts"].as_array().unwrap();
            assert!(!contexts.is_empty(), "{recordings}/{scenario}");
            for context in contexts {
                let leaf = leaf_arg(context);
                let mut formats = vec![("agent", "agent"), ("llm", "llm")];
                if context.get("llmAgentLoop").is_some() {
                    formats.push(("omp-agent-loop", "llmAgentLoop"));
                    agent_loops += 1;
                }
                for (format, key) in formats {
                    let out = run(&[
                        "context",
                        &file,
                        "--dialect",
                        dialect,
                        "--leaf",
                        &leaf,
                        "--format",
                        format,
                    ]);
                    assert_eq!(out.code, 0, "{out}");
                    assert!(
                        js_equal(&json(&out), &context[key]),
                        "{file} leaf {leaf} --format {format}:\n{}\n---- expected\n{:#}",
                        out.stdout,
                        context[key]
                    );
                }
            }
            if recordings == sessions && dialect_override.is_none() {
                let out = run(&["context", &file]);
                assert_eq!(out.code, 0, "{out}");
                assert!(
                    js_equal(&json(&out), &contexts[0]["agent"]),
                    "{file}: auto dialect"
                );
            }
        }
    }
    assert!(agent_loops > 0, "no recorded llmAgentLoop was checked");
}

/// A session with 1.6-only marks: auto detection picks pi16 (its context edit and system
/// message apply), `--dialect pi` reads it the 0.73 way.
#[test]
fn auto_dialect_detects_pi16_marks() {
    let dir = tempfile::tempdir().unwrap();
    let file =
        pi_session_test_support::write_pi16_session(dir.path(), r#"{"content":"short"}"#).unwrap();
    let path = file.to_str().unwrap();
    let contents = |args: &[&str]| {
        let out = run(&[&["context", path, "--format", "llm"], args].concat());
        assert_eq!(out.code, 0, "{out}");
        json(&out)
            .as_array()
            .unwrap()
            .iter()
            .map(|m| format!("{}:{}", m["role"].as_str().unwrap(), m["content"]))
            .collect::<Vec<_>>()
    };
    let pi16 = vec![
        r#"system:"prompt""#.to_owned(),
        r#"user:"short""#.to_owned(),
    ];
    assert_eq!(contents(&[]), pi16);
    assert_eq!(contents(&["--dialect", "auto"]), pi16);
    assert_eq!(contents(&["--dialect", "pi16"]), pi16);
    assert_eq!(
        contents(&["--dialect", "pi"]),
        vec![r#"user:"long""#.to_owned()]
    );
}

#[test]
fn provider_projections() {
    let cases: [(&str, &[&str]); 9] = [
        ("fixtures/pi/tool-calls.jsonl", &["--format", "req-llm"]),
        ("fixtures/pi/tool-calls.jsonl", &["--format", "openai"]),
        ("fixtures/pi/tool-calls.jsonl", &["--format", "anthropic"]),
        ("fixtures/omp/images.jsonl", &["--format", "openai"]),
        (
            "fixtures/omp/images.jsonl",
            &["--format", "anthropic", "--inputs", "text"],
        ),
        (
            "fixtures/pi/compaction-single.jsonl",
            &["--format", "req-llm"],
        ),
        (
            "fixtures/cli/mixed/good.jsonl",
            &["--format", "anthropic", "--leaf", "a0000005"],
        ),
        (
            "fixtures/context/pdf_documents.jsonl",
            &[
                "--format",
                "anthropic",
                "--inputs",
                "text,pdf",
                "--root",
                "fixtures/context/workspace",
            ],
        ),
        // omp's image gate for a model without picture input.
        (
            "fixtures/omp/images.jsonl",
            &["--format", "omp-agent-loop", "--inputs", "text"],
        ),
    ];
    for (file, extra) in cases {
        let mut args = vec!["context", file];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(out.code, 0, "{out}");
        insta::assert_snapshot!(snapshot_name(&args), out.to_string());
    }
}

#[test]
fn bad_input_is_refused_on_stderr() {
    let cases: [&[&str]; 8] = [
        &["context", "fixtures/cli/no-such-file.jsonl"],
        &["context", "fixtures/cli/mixed"],
        &["context", "fixtures/cli/mixed/binary.jsonl"],
        &["context", "fixtures/cli/mixed/empty.jsonl"],
        &[
            "context",
            "fixtures/cli/mixed/good.jsonl",
            "--inputs",
            "text,video",
        ],
        &[
            "context",
            "fixtures/cli/mixed/good.jsonl",
            "--format",
            "xml",
        ],
        &["context", "fixtures/cli/mixed/good.jsonl", "--leaf", "nope"],
        &[
            "context",
            "fixtures/pi/linear-chat.jsonl",
            "--dialect",
            "pi",
            "--format",
            "omp-agent-loop",
        ],
    ];
    for args in cases {
        let out = run(args);
        insta::assert_snapshot!(snapshot_name(args), out.to_string());
    }
}

/// The `--format` name of a recorded request's API.
fn request_format(api: &str) -> &'static str {
    match api {
        "openai-completions" => "openai-chat",
        "openai-responses" => "openai-responses",
        "anthropic-messages" => "anthropic",
        _ => "google",
    }
}

#[test]
fn pi_ai_formats_print_the_recorded_request_bodies() {
    // Every model recorded for the default leaf of two pi and two omp sessions, each by its own
    // pi-ai (the full sweep over every context is `cargo xtask golden`).
    let cases = [("pi", "tool-calls"), ("pi", "thinking-signatures")]
        .into_iter()
        .chain([("omp", "tool-calls"), ("omp", "thinking-signatures")]);
    for (dialect, scenario) in cases {
        let requests = parse_js_json(
            &std::fs::read_to_string(
                root().join(format!("fixtures/{dialect}/requests/{scenario}.json")),
            )
            .unwrap(),
        );
        let expected = parse_js_json(
            &std::fs::read_to_string(
                root().join(format!("fixtures/{dialect}/{scenario}.expected.json")),
            )
            .unwrap(),
        );
        let file = format!("fixtures/{dialect}/{scenario}.jsonl");
        let system = requests["systemPrompt"].as_str().unwrap();
        let default_leaf = &expected["leafId"];
        let mut checked = 0;
        for request in requests["requests"].as_array().unwrap() {
            if &request["leafId"] != default_leaf {
                continue;
            }
            let format = request_format(request["api"].as_str().unwrap());
            let args = [
                "context",
                &file,
                "--dialect",
                dialect,
                "--format",
                format,
                "--model",
                request["model"].as_str().unwrap(),
                "--thinking",
                request["thinkingLevel"].as_str().unwrap(),
                "--system-prompt",
                system,
            ];
            let out = run(&args);
            assert_eq!(out.code, 0, "{out}");
            assert!(out.stderr.is_empty(), "no note for any API: {out}");
            assert!(
                js_equal(&json(&out), &request["body"]),
                "{out}\nexpected {}",
                request["body"]
            );
            checked += 1;
        }
        assert_eq!(
            checked, 8,
            "{dialect} {scenario}: one body per recorded model"
        );
    }
}

#[test]
fn pi_ai_formats_explain_bad_models() {
    let file = "fixtures/pi/tool-calls.jsonl";
    let unknown = run(&[
        "context",
        file,
        "--format",
        "anthropic",
        "--model",
        "anthropic/claude-sonet-4-5",
    ]);
    assert_eq!(unknown.code, 2, "{unknown}");
    assert!(
        unknown
            .stderr
            .contains("did you mean anthropic/claude-sonnet-4-5"),
        "{unknown}"
    );
    let missing = run(&["context", file, "--format", "google"]);
    assert_eq!(missing.code, 2, "{missing}");
    assert!(missing.stderr.contains("needs --model"), "{missing}");
    let wrong = run(&[
        "context",
        file,
        "--format",
        "google",
        "--model",
        "openai/gpt-5",
    ]);
    assert_eq!(wrong.code, 2, "{wrong}");
    assert!(
        wrong.stderr.contains("--format openai-responses"),
        "{wrong}"
    );
    let pi16 = run(&[
        "context",
        file,
        "--dialect",
        "pi16",
        "--format",
        "openai-chat",
        "--model",
        "groq/llama-3.3-70b-versatile",
    ]);
    assert_eq!(pi16.code, 2, "{pi16}");
}

#[test]
fn req_llm_shapes_keep_their_old_names() {
    let file = "fixtures/pi/tool-calls.jsonl";
    for (old, new) in [
        ("openai", "req-llm-openai"),
        ("anthropic", "req-llm-anthropic"),
    ] {
        let (a, b) = (
            run(&["context", file, "--format", old]),
            run(&["context", file, "--format", new]),
        );
        assert_eq!((a.code, b.code), (0, 0), "{a}\n{b}");
        assert_eq!(a.stdout, b.stdout, "--format {old} is an alias of {new}");
    }
}
