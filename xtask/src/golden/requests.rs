//! Provider request bodies (`fixtures/<impl>/requests/<scenario>.json`, recorded by
//! `xtask/recorder/requests.mjs` from pi-ai's real `streamSimple`): for every recorded context ×
//! model, our `provider_request::from_agent_messages` on the recorded `buildSessionContext`
//! messages must give the captured body: equal as JSON, and byte for byte as `JSON.stringify`
//! writes it (key order included). A body pi-ai's client refused to send (`refused`) must be
//! refused by us too.

use std::collections::HashMap;
use std::path::Path;

use pi_session::projection::provider_request::{
    PiAi, RequestError, RequestOptions, from_agent_messages, lookup,
};
use pi_session::types::json::to_js_string;
use serde_json::Value;

use super::compare::{IdMap, diff, parse_recording};
use super::report::{Outcome, Report, Row};

/// The folders with recorded requests and whose pi-ai recorded them.
pub const FOLDERS: [(&str, PiAi); 2] = [("omp", PiAi::Omp), ("pi", PiAi::Pi)];

/// Checks every request recording of `fixtures/<folder>/requests/`.
pub fn check(report: &mut Report, fixtures: &Path, only: Option<&str>) {
    for (folder, pi_ai) in FOLDERS {
        let dir = fixtures.join(folder).join("requests");
        let Ok(listing) = std::fs::read_dir(&dir) else {
            report.notice(format!(
                "{folder}/requests: {} is absent; skipped",
                dir.display()
            ));
            continue;
        };
        let mut files: Vec<_> = listing
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for file in files {
            let scenario = file
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("?")
                .to_owned();
            if only.is_some_and(|only| !scenario.contains(only)) {
                continue;
            }
            let mut row = Row::new(format!("{folder}/requests"), scenario.clone());
            let expected = fixtures
                .join(folder)
                .join(format!("{scenario}.expected.json"));
            check_file(report, &mut row, &file, &expected, pi_ai);
            report.push_row(row);
        }
    }
}

fn read(path: &Path) -> Result<Value, String> {
    std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
        .and_then(|t| parse_recording(&t))
}

fn check_file(report: &mut Report, row: &mut Row, file: &Path, expected: &Path, pi_ai: PiAi) {
    let (requests, recording) = match (read(file), read(expected)) {
        (Ok(r), Ok(e)) => (r, e),
        (Err(reason), _) | (_, Err(reason)) => {
            report.record(
                row,
                "request",
                "",
                Outcome::Fail(format!("      {reason}\n")),
            );
            return;
        }
    };
    let contexts: HashMap<String, &Value> = recording["contexts"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|c| (c["leafId"].to_string(), &c["agent"]["messages"]))
                .collect()
        })
        .unwrap_or_default();
    let system_prompt = requests["systemPrompt"].as_str().map(str::to_owned);
    for request in requests["requests"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
    {
        let model_name = request["model"].as_str().unwrap_or("");
        let api = request["api"].as_str().unwrap_or("?");
        let check = check_name(api);
        let what = format!(
            "leaf {} {model_name} thinking {}",
            request["leafId"], request["thinkingLevel"]
        );
        let Some(messages) = contexts
            .get(&request["leafId"].to_string())
            .and_then(|m| m.as_array())
        else {
            report.record(
                row,
                check,
                &what,
                Outcome::Fail("      no recorded context for this leaf\n".into()),
            );
            continue;
        };
        let model = match lookup(pi_ai, model_name) {
            Ok(model) => model,
            Err(error) => {
                report.record(row, check, &what, Outcome::Fail(format!("      {error}\n")));
                continue;
            }
        };
        let options = RequestOptions {
            system_prompt: system_prompt.clone(),
            thinking_level: request["thinkingLevel"]
                .as_str()
                .unwrap_or("off")
                .to_owned(),
            max_tokens: None,
        };
        let ours = from_agent_messages(messages, pi_ai, &model, &options);
        let outcome = match (request.get("body"), ours) {
            (Some(body), Ok(ours)) => compare(body, &ours),
            (None, Err(RequestError::Refused(_))) => Outcome::Pass,
            (None, Ok(ours)) => Outcome::Fail(format!(
                "      pi-ai refused to send ({}), we built {}\n",
                request["refused"],
                to_js_string(&ours).unwrap_or_default()
            )),
            (_, Err(error)) => Outcome::Fail(format!("      we failed: {error}\n")),
        };
        report.record(row, check, &what, outcome);
    }
}

/// One table column per API.
fn check_name(api: &str) -> &'static str {
    match api {
        "openai-completions" => "chat",
        "openai-responses" => "responses",
        "anthropic-messages" => "anthropic",
        "google-generative-ai" => "google",
        _ => "request",
    }
}

fn compare(recorded: &Value, ours: &Value) -> Outcome {
    let differences = diff(recorded, ours, &mut IdMap::exact());
    if !differences.is_empty() {
        return Outcome::Fail(differences.render());
    }
    let (theirs, mine) = (
        to_js_string(recorded).unwrap_or_default(),
        to_js_string(ours).unwrap_or_default(),
    );
    if theirs == mine {
        return Outcome::Pass;
    }
    let at = theirs
        .bytes()
        .zip(mine.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(theirs.len().min(mine.len()));
    let window = |text: &str| -> String {
        let mut start = at.saturating_sub(60).min(text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (at + 60).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        text[start..end].to_owned()
    };
    Outcome::Fail(format!(
        "      equal as JSON but not byte for byte (key order) at byte {at}:\n        expected: …{}…\n        actual:   …{}…\n",
        window(&theirs),
        window(&mine)
    ))
}
