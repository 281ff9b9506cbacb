//! One-line descriptions of entries for people (`tree`).

use pi_session::projection::rho::text;
use pi_session::types::view::{BlockRef, EntryRef, MessageRef};
use serde_json::Value;

/// The longest preview of a text, in characters.
const PREVIEW_CHARS: usize = 60;

/// What an entry is about, in a few words: a message's role and text, a model change's model,
/// a compaction's summary, ...
pub fn describe(entry: &Value) -> String {
    let entry = EntryRef::new(entry);
    match entry.kind().unwrap_or_default() {
        "message" => entry.message().map_or_else(String::new, message),
        "model_change" => match entry.model().and_then(Value::as_str) {
            Some(model) => model.to_owned(),
            None => format!("{}/{}", str_of(entry.provider()), str_of(entry.model_id())),
        },
        "thinking_level_change" => str_of(entry.thinking_level()).to_owned(),
        "compaction" | "branch_summary" => preview(str_of(entry.summary())),
        "custom_message" => format!(
            "{} {}",
            str_of(entry.custom_type()),
            preview(&text(entry.content()))
        )
        .trim()
        .to_owned(),
        "custom" => str_of(entry.custom_type()).to_owned(),
        "label" => format!(
            "{} = {:?}",
            str_of(entry.target_id()),
            str_of(entry.label())
        ),
        "session_info" => str_of(entry.name()).to_owned(),
        _ => String::new(),
    }
}

fn message(value: &Value) -> String {
    let message = MessageRef::new(value);
    let role = message.role().unwrap_or("?");
    let content = message.content();
    let body = match role {
        "assistant" => {
            let calls: Vec<&str> = content
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(BlockRef::new)
                .filter(|part| part.is("toolCall"))
                .filter_map(|part| part.name().and_then(Value::as_str))
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
                    .command()
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )
        ),
        "pythonExecution" => format!(
            ">>> {}",
            preview(message.code().and_then(Value::as_str).unwrap_or_default())
        ),
        "custom" | "hookMessage" => {
            let kind = message.custom_type().unwrap_or_default();
            format!("{kind} {}", preview(&text(content)))
                .trim()
                .to_owned()
        }
        "toolResult" => {
            let name = message.tool_name().and_then(Value::as_str).unwrap_or("?");
            format!("{name}: {}", preview(&text(content)))
        }
        _ => preview(&text(content)),
    };
    format!("{role}: {body}").trim_end().to_owned()
}

/// A field's text, `""` when it is missing or not a string.
fn str_of(field: Option<&Value>) -> &str {
    field.and_then(Value::as_str).unwrap_or_default()
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
