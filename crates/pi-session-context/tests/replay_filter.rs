//! omp's `filterProviderReplayMessages` one rule at a time, and the agent-loop
//! pipeline around it. The real function's output for a mixed input is pinned
//! in `llm_convert` (`fixtures/context/llm/omp_agent_loop.*`).

use pi_session_context::dialect::omp::convert::{
    OMP_IMAGES_BLOCKED, OMP_IMAGES_UNSUPPORTED, OmpAgentLoopOptions, OmpImageGate,
    omp_agent_loop_messages, omp_filter_provider_replay, omp_is_provider_refusal,
};
use serde_json::{Value, json};

/// An assistant turn that ended with `stop_reason` and `stop_details`
/// (`None`: no `stopDetails` key).
fn assistant(stop_reason: &str, stop_details: Option<Value>) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": [{"type": "text", "text": "x"}],
        "stopReason": stop_reason,
        "timestamp": 1
    });
    if let Some(details) = stop_details {
        message["stopDetails"] = details;
    }
    message
}

fn kept(message: &Value) -> bool {
    let out = omp_filter_provider_replay(std::slice::from_ref(message));
    assert_eq!(out.len(), usize::from(!omp_is_provider_refusal(message)));
    match out.as_slice() {
        [] => false,
        [only] => {
            assert_eq!(only, message, "a kept message is passed through untouched");
            true
        }
        more => panic!("one message in, {} out", more.len()),
    }
}

#[test]
fn an_error_with_a_refusal_is_dropped() {
    assert!(!kept(&assistant("error", Some(json!({"type": "refusal"})))));
}

#[test]
fn an_error_flagged_sensitive_is_dropped() {
    assert!(!kept(&assistant(
        "error",
        Some(json!({"type": "sensitive", "x": 1}))
    )));
}

#[test]
fn an_error_without_stop_details_is_kept() {
    assert!(kept(&assistant("error", None)));
}

#[test]
fn an_error_with_another_stop_type_is_kept() {
    for other in [
        json!({"type": "other"}),
        json!({"type": "Refusal"}),
        json!({}),
    ] {
        assert!(kept(&assistant("error", Some(other))));
    }
}

#[test]
fn stop_details_that_are_not_an_object_keep_the_message() {
    // `stopDetails?.type` is undefined for null, strings and arrays.
    for details in [json!(null), json!("refusal"), json!(["refusal"]), json!(7)] {
        assert!(kept(&assistant("error", Some(details))));
    }
}

#[test]
fn a_refusal_type_without_stop_reason_error_is_kept() {
    for reason in ["stop", "aborted", "length", "toolUse", "ERROR", ""] {
        assert!(kept(&assistant(reason, Some(json!({"type": "refusal"})))));
    }
    let mut no_reason = assistant("error", Some(json!({"type": "refusal"})));
    no_reason.as_object_mut().unwrap().remove("stopReason");
    assert!(kept(&no_reason));
}

#[test]
fn only_assistant_messages_are_filtered() {
    for role in ["user", "developer", "toolResult", "Assistant"] {
        let mut message = assistant("error", Some(json!({"type": "refusal"})));
        message["role"] = json!(role);
        assert!(kept(&message), "{role}");
    }
    let mut no_role = assistant("error", Some(json!({"type": "refusal"})));
    no_role.as_object_mut().unwrap().remove("role");
    assert!(kept(&no_role));
}

#[test]
fn everything_else_keeps_its_order_and_values_that_are_not_objects_stay() {
    let messages = vec![
        json!({"role": "user", "content": "a", "timestamp": 1}),
        assistant("error", Some(json!({"type": "refusal"}))),
        json!("not a message"),
        assistant("stop", None),
        assistant("error", Some(json!({"type": "sensitive"}))),
        json!(null),
        json!({"role": "user", "content": "b", "timestamp": 2}),
    ];
    let out = omp_filter_provider_replay(&messages);
    let expected: Vec<Value> = [0, 2, 3, 5, 6]
        .iter()
        .map(|&i| messages[i].clone())
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn the_pipeline_wraps_steering_converts_and_then_filters() {
    let agent = vec![
        json!({"role": "user", "content": "hi", "steering": true, "timestamp": 1}),
        assistant("error", Some(json!({"type": "refusal"}))),
        json!({"role": "custom", "customType": "note", "content": "n", "display": true, "timestamp": 2}),
    ];
    let out = omp_agent_loop_messages(&agent, &OmpAgentLoopOptions::default());
    assert_eq!(out.len(), 2, "{out:#?}");
    let text = out[0]["content"].as_str().unwrap();
    assert!(
        text.starts_with("<system-notice>") && text.ends_with("\nhi"),
        "{text}"
    );
    assert_eq!(out[0].get("steering"), None);
    assert_eq!(out[0]["attribution"], "user");
    assert_eq!(out[1]["role"], "developer");
}

fn with_picture() -> Vec<Value> {
    vec![json!({"role": "user", "content": [
        {"type": "text", "text": "see"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"}
    ], "timestamp": 1})]
}

#[test]
fn the_image_gate_follows_the_options() {
    let cases = [
        (OmpImageGate::Allow, None),
        (OmpImageGate::Blocked, Some(OMP_IMAGES_BLOCKED)),
        (
            OmpImageGate::ModelWithoutImages,
            Some(OMP_IMAGES_UNSUPPORTED),
        ),
    ];
    for (gate, placeholder) in cases {
        let options = OmpAgentLoopOptions::default().with_images(gate);
        let out = omp_agent_loop_messages(&with_picture(), &options);
        let second = &out[0]["content"][1];
        match placeholder {
            None => assert_eq!(second["type"], "image", "{gate:?}"),
            Some(text) => assert_eq!(second, &json!({"type": "text", "text": text}), "{gate:?}"),
        }
    }
}

#[test]
fn blocked_pictures_win_over_the_model_like_omp_checks_them() {
    assert_eq!(OmpImageGate::for_model(true, true), OmpImageGate::Blocked);
    assert_eq!(OmpImageGate::for_model(false, true), OmpImageGate::Blocked);
    assert_eq!(
        OmpImageGate::for_model(false, false),
        OmpImageGate::ModelWithoutImages
    );
    assert_eq!(OmpImageGate::for_model(true, false), OmpImageGate::Allow);
    assert_eq!(OmpImageGate::default(), OmpImageGate::Allow);
}

#[test]
fn project_offers_the_agent_loop_by_omp_rules_whatever_the_dialect() {
    use pi_session_context::{Dialect, Format, ProjectOptions, project};
    assert_eq!(
        "omp-agent-loop".parse::<Format>().unwrap(),
        Format::OmpAgentLoop
    );
    let branch = vec![
        json!({"type": "message", "id": "a", "parentId": null,
               "message": {"role": "user", "content": "hi", "timestamp": 1}}),
        json!({"type": "message", "id": "b", "parentId": "a",
               "message": assistant("error", Some(json!({"type": "refusal"})))}),
        json!({"type": "custom_message", "id": "c", "parentId": "b", "customType": "note",
               "content": "n", "display": true}),
    ];
    let options = ProjectOptions {
        dialect: Dialect::PI,
        ..ProjectOptions::default()
    };
    let (out, _) = project(&branch, Format::OmpAgentLoop, &options);
    let roles: Vec<&str> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // omp: the custom message is `developer` (pi would make it `user`); the refusal is gone.
    assert_eq!(roles, ["user", "developer"]);
}
