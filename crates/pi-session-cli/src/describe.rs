//! One-line descriptions of entries for people (`tree`).

use pi_session::projection::rho::text;
use serde_json::Value;

/// The longest preview of a text, in characters.
const PREVIEW_CHARS: usize = 60;

/// What an entry is about, in a few words: a message's role and text, a model change's model,
/// a compaction's summary, ...
pub fn describe(entry: &Value) -> String {
    let str_of = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or_default();
    match str_of("type") {
        "message" => entry.get("message").map_or_else(String::new, message),
        "model_change" => match entry.get("model").and_then(Value::as_str) {
            Some(model) => model.to_owned(),
            None => format!("{}/{}", str_of("provider"), str_of("modelId")),
        },
        "thinking_level_change" => str_of("thinkingLevel").to_owned(),
        "compaction" | "branch_summary" => preview(str_of("summary")),
        "custom_message" => format!(
            "{} {}",
            str_of("customType"),
            preview(&text(entry.get("content")))
        )
        .trim()
        .to_owned(),
        "custom" => str_of("customType").to_owned(),
        "label" => format!("{} = {:?}", str_of("targetId"), str_of("label")),
        "session_info" => str_of("name").to_owned(),
        _ => String::new(),
    }
}

fn message(message: &Value) -> String {
    let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
    let content = message.get("content");
    let body = match role {
        "assistant" => {
            let calls: Vec<&str> = content
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("toolCall"))
                .filter_map(|part| part.get("name").and_then(Value::as_str))
                .collect();
            let said = preview(&text(content));
            match (said.is_empty(), calls.is_empty()) {
                (_, true) => said,
                (true, false) => format!("→ {}", calls.join(", ")),
                (false, false) => format!("{said} → {}", calls.join(", ")),
            }
        }
        "bashExecution" => format!(
            "$ {}",
            preview(
                message
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )
        ),
        "pythonExecution" => format!(
            ">>> {}",
            preview(
                message
                    .get("code")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )
        ),
        "custom" | "hookMessage" => {
            let kind = message
                .get("customType")
                .and_then(Value::as_str)
                .unwrap_or_default();
            format!("{kind} {}", preview(&text(content)))
                .trim()
                .to_owned()
        }
        "toolResult" => {
            let name = message
                .get("toolName")
                .and_then(Value::as_str)
                .unwrap_or("?");
            format!("{name}: {}", preview(&text(content)))
        }
        _ => preview(&text(content)),
    };
    format!("{role}: {body}").trim_end().to_owned()
}

/// The first non-blank line of `text`, at most [`PREVIEW_CHARS`] characters (`…` when cut).
fn preview(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let mut chars = line.chars();
    let cut: String = chars.by_ref().take(PREVIEW_CHARS).collect();
    if chars.next().is_some() {
        format!("{cut}…")
    } else {
        cut
    }
}
