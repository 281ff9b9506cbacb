//! `pi-session context`: equal to what the real omp and pi return on every recorded fixture,
//! snapshots of the provider projections, and bad input.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{js_equal, json, parse_js_json, root, run};

/// The recorded scenarios of one implementation folder (`fixtures/pi`, `fixtures/omp`), with
/// their expectations; scenarios the implementation could not open are left out.
fn recorded(folder: &str) -> Vec<(String, Value)> {
    let found = recorded_in(folder, folder);
    assert!(
        found.len() >= 25,
        "{folder}: only {} recorded scenarios",
        found.len()
    );
    found
}

/// The recordings in `fixtures/<recordings>` of the sessions in `fixtures/<sessions>`.
fn recorded_in(recordings: &str, sessions: &str) -> Vec<(String, Value)> {
    let dir = root().join("fixtures").join(recordings);
    let mut found: Vec<(String, Value)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".expected.json"))
        .map(|p| {
            let expected = parse_js_json(&std::fs::read_to_string(&p).unwrap());
            let file = format!("fixtures/{sessions}/{}", expected["file"].as_str().unwrap());
            (file, expected)
        })
        .filter(|(_, expected)| expected.get("openError").is_none())
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

fn leaf_arg(context: &Value) -> String {
    match &context["leafId"] {
        Value::String(id) => id.clone(),
        _ => "null".to_owned(),
    }
}

/// For every recorded context: `--format agent` equals `buildSessionContext`, `--format llm`
/// equals `convertToLlm` (the real implementations' own output), and for omp
/// `--format omp-agent-loop` equals what its agent loop sends (`llmAgentLoop`).
fn check_recorded(folder: &str) {
    check_recordings(folder, recorded(folder), None);
}

/// `dialect` overrides the recorded one (pi 1.6 recordings say `"pi"`, the file family).
fn check_recordings(folder: &str, recordings: Vec<(String, Value)>, dialect: Option<&str>) {
    let mut checked = 0;
    let mut agent_loops = 0;
    for (file, expected) in recordings {
        let dialect = dialect.unwrap_or_else(|| expected["dialect"].as_str().unwrap());
        for context in expected["contexts"].as_array().unwrap() {
            let leaf = leaf_arg(context);
            // omp recordings also hold what omp's agent loop sends (`llmAgentLoop`).
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
                let got = json(&out);
                assert!(
                    js_equal(&got, &context[key]),
                    "{file} leaf {leaf} --format {format}:\n{got:#}\n---- expected\n{:#}",
                    context[key]
                );
                checked += 1;
            }
        }
    }
    if folder == "omp" {
        assert!(
            agent_loops > 0,
            "{folder}: no recorded llmAgentLoop was checked"
        );
    }
    println!("{folder}: {checked} outputs equal to the recordings ({agent_loops} agent loops)");
}

#[test]
fn pi_contexts_equal_the_recordings() {
    check_recorded("pi");
}

#[test]
fn omp_contexts_equal_the_recordings() {
    check_recorded("omp");
}

/// pi 1.6 recordings (`fixtures/pi16`) through `--dialect pi16`: agent context and
/// convertToLlm equal 1.6's own.
#[test]
fn pi16_contexts_equal_the_recordings() {
    check_recordings("pi16", recorded("pi16"), Some("pi16"));
}

/// A session with 1.6-only marks: auto detection picks pi16 (its context edit and system
/// message apply), `--dialect pi` reads it the 0.73 way.
#[test]
fn auto_dialect_detects_pi16_marks() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"system","content":"prompt","sections":{"env":"x"},"timestamp":1}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"long","timestamp":2}}"#,
        r#"{"type":"context_edit","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","targetId":"b","replacement":{"content":"short"}}"#,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
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

/// The other direction: sessions the facade wrote from a fixed script (`cargo xtask golden
/// --write-ours` regenerates `fixtures/ours/pi` byte for byte), opened by the real omp, pi 0.73
/// and pi 1.6 (`cargo xtask record --verify fixtures/ours/pi`), read the same by them as by us.
#[test]
fn facade_written_sessions_read_the_same_in_omp_and_pi() {
    for implementation in ["pi", "pi16", "omp"] {
        let recordings = recorded_in(&format!("ours/pi/{implementation}"), "ours/pi");
        assert!(
            recordings.len() >= 5,
            "{implementation}: {}",
            recordings.len()
        );
        check_recordings(implementation, recordings, None);
    }
}

/// Scenarios the recorder wrote by hand instead of through the implementation's API.
const HAND_WRITTEN: [&str; 7] = [
    "v1-format",
    "v2-format",
    "damaged-lines",
    "orphans-and-duplicates",
    "usage-without-cost",
    "pi-written-file",
    "parent-cycle",
];

#[test]
fn auto_dialect_picks_the_recorded_one() {
    for folder in ["pi", "omp"] {
        for (file, expected) in recorded(folder) {
            let out = run(&["context", &file]);
            assert_eq!(out.code, 0, "{out}");
            let default = &expected["contexts"][0];
            // Hand-written scenarios (fixtures/README.md) carry no mark of the implementation
            // that read them, so detection cannot know it (a pi-written file read by omp, say).
            if HAND_WRITTEN.contains(&expected["scenario"].as_str().unwrap()) {
                continue;
            }
            assert!(
                js_equal(&json(&out), &default["agent"]),
                "{file}: auto dialect"
            );
        }
    }
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
    for (i, (file, extra)) in cases.iter().enumerate() {
        let mut args = vec!["context", file];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(out.code, 0, "{out}");
        let name = format!(
            "context_{i}_{}",
            PathBuf::from(file).file_stem().unwrap().to_string_lossy()
        );
        insta::assert_snapshot!(name, out.to_string());
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
    for (i, args) in cases.iter().enumerate() {
        let out = run(args);
        insta::assert_snapshot!(format!("context_bad_{i}"), out.to_string());
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
