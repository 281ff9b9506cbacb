//! convertToLlm per dialect against outputs of the real functions.
//!
//! `fixtures/context/llm/<dialect>_*.input.json` holds agent messages that
//! exercise every role and branch of the conversion; the `.expected.json`
//! next to it is what the real function returned for them, recorded once by
//! running omp 18.2.3 (`session/messages.ts` `convertToLlm`, under bun) and
//! pi 0.73.1 (`dist/core/messages.js` `convertToLlm`, under node) with
//! `JSON.stringify` of the result. `omp_steering`, `omp_image_gate` and
//! `omp_output_notice` check omp's `wrapSteeringForModel`,
//! `replaceLlmImagesWithText` and `formatOutputNotice` the same way;
//! `omp_agent_loop` checks the whole agent-loop pipeline
//! (`filterProviderReplayMessages(convertToLlm(wrapSteeringForModel(m)))`).
//! The comparison is byte for byte, so key order and left-out `undefined`s
//! count too.

use std::path::PathBuf;

use pi_session_context::dialect::omp::convert::{
    OMP_IMAGES_UNSUPPORTED, OmpAgentLoopOptions, omp_agent_loop_messages,
    omp_replace_images_with_text, omp_wrap_steering,
};
use pi_session_context::{Dialect, format_output_notice, llm_messages};
use serde_json::{Value, json};

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/context/llm")
}

#[test]
fn conversion_equals_the_real_functions_byte_for_byte() {
    let mut checked = 0;
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(stem) = name.strip_suffix(".input.json") else {
            continue;
        };
        let input: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let expected =
            std::fs::read_to_string(path.with_file_name(format!("{stem}.expected.json"))).unwrap();
        let ours = match stem {
            "omp_steering" => omp_wrap_steering(&input),
            "omp_image_gate" => omp_replace_images_with_text(&input, OMP_IMAGES_UNSUPPORTED),
            "omp_agent_loop" => omp_agent_loop_messages(&input, &OmpAgentLoopOptions::default()),
            "omp_output_notice" => input
                .iter()
                .map(|meta| Value::String(format_output_notice(Some(meta))))
                .collect(),
            omp if omp.starts_with("omp") => llm_messages(&input, Dialect::OMP),
            _ => llm_messages(&input, Dialect::PI),
        };
        let recorded: Vec<Value> = serde_json::from_str(&expected).unwrap();
        for (i, (a, e)) in ours.iter().zip(&recorded).enumerate() {
            assert_eq!(
                serde_json::to_string(a).unwrap(),
                serde_json::to_string(e).unwrap(),
                "{name}: message {i} differs"
            );
        }
        assert_eq!(ours.len(), recorded.len(), "{name}: message count");
        // Written the way JavaScript writes it, the bytes are the real ones.
        let written = pi_session_types::json::to_js_string(&ours).unwrap();
        assert_eq!(written, expected.trim_end(), "{name}: bytes differ");
        checked += 1;
    }
    assert!(
        checked >= 6,
        "expected the pi and omp cases, found {checked}"
    );
}

/// pi 1.6.0's `convertToLlm` (`tests/data/pi16_llm.*`: every agent message
/// the pi 1.6 differential cases of pi-session-tree produced, plus bash,
/// custom, summary, block-content system and unknown-role messages),
/// recorded by `cargo xtask record` (`xtask/recorder/differential.mjs pi16 llm`). Byte for byte.
#[test]
fn pi16_conversion_equals_the_real_function_byte_for_byte() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let input: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("pi16_llm.input.json")).unwrap())
            .unwrap();
    let expected = std::fs::read_to_string(dir.join("pi16_llm.expected.json")).unwrap();
    let ours = llm_messages(&input, Dialect::PI16);
    let written = pi_session_types::json::to_js_string(&ours).unwrap();
    assert_eq!(written, expected.trim_end());
    let systems = |messages: &[Value]| messages.iter().filter(|m| m["role"] == "system").count();
    assert!(
        systems(&ours) >= 5,
        "the data must exercise system messages"
    );
    // pi 0.73 drops them; everything else converts the same.
    let pi073 = llm_messages(&input, Dialect::PI);
    assert_eq!(systems(&pi073), 0);
    let without_system: Vec<Value> = ours.into_iter().filter(|m| m["role"] != "system").collect();
    assert_eq!(pi073, without_system);
}

#[test]
fn pi_passes_core_roles_through_untouched_and_drops_unknown_roles() {
    let user = json!({"role": "user", "content": "x", "weird": [1], "timestamp": 1});
    let out = llm_messages(
        &[
            user.clone(),
            json!({"role": "developer", "content": "d"}),
            json!("not an object"),
        ],
        Dialect::PI,
    );
    assert_eq!(out, vec![user]);
}

#[test]
fn omp_fills_attribution_in_place_or_at_the_end() {
    let out = llm_messages(
        &[
            json!({"role": "user", "attribution": null, "content": "a", "timestamp": 1}),
            json!({"role": "developer", "content": "b", "timestamp": 2}),
        ],
        Dialect::OMP,
    );
    assert_eq!(
        serde_json::to_string(&out[0]).unwrap(),
        r#"{"role":"user","attribution":"user","content":"a","timestamp":1}"#
    );
    assert_eq!(
        serde_json::to_string(&out[1]).unwrap(),
        r#"{"role":"developer","content":"b","timestamp":2,"attribution":"agent"}"#
    );
}

#[test]
fn omp_user_interrupted_turn_with_only_unsigned_thinking_disappears() {
    let interrupted = json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "half a thought"},
        {"type": "text", "text": " "}], "stopReason": "aborted", "errorMessage": "Interrupted by user"});
    assert!(llm_messages(std::slice::from_ref(&interrupted), Dialect::OMP).is_empty());
    // Followed by its continuity marker, the stripped turn stays (empty).
    let marker = json!({"role": "custom", "customType": "interrupted-thinking", "content": "c", "display": false});
    let out = llm_messages(&[interrupted, marker], Dialect::OMP);
    assert_eq!(out[0]["content"], json!([]));
    assert_eq!(out[1]["role"], "developer");
}

#[test]
fn omp_summary_templates_are_normalised_like_omp() {
    let out = llm_messages(
        &[
            json!({"role": "compactionSummary", "summary": "a \n\n\n```\nx  \n\n\n```\n\n</b>", "tokensBefore": 1, "timestamp": 5}),
        ],
        Dialect::OMP,
    );
    assert_eq!(
        out[0]["content"][0]["text"],
        "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\na\n```\nx\n\n\n```\n</b>\n</summary>"
    );
    assert_eq!(out[0]["historyRewriteAt"], 5);
}
