//! The title rho gives a new session (rho-reqllm.md §A.2).

use pi_session_types::Entry;
use pi_session_types::view::{AttachmentRef, MessageRef};
use unicode_segmentation::UnicodeSegmentation;

use crate::read::{to_json, typed_value};

/// The most graphemes of a title.
pub const TITLE_GRAPHEMES: usize = 60;

/// rho's `title_for/1`: for a user message, what the user typed, or else the names of its
/// attachments joined with `", "`; only its first line; at most 60 graphemes. `""` for any other
/// entry.
///
/// ```
/// use pi_session::{title_for, user, UserOptions};
/// assert_eq!(title_for(&user("fix the build\nit fails on CI", UserOptions::new())), "fix the build");
/// assert_eq!(title_for(&pi_session::model_change("anthropic:claude-x")), "");
/// ```
pub fn title_for(entry: &Entry) -> String {
    let Some(message) = entry.message() else {
        return String::new();
    };
    let message = to_json(message);
    if MessageRef::new(&message).role() != Some("user") {
        return String::new();
    }
    let mut text = typed_value(&message);
    if text.is_empty() {
        let names: Vec<String> = match MessageRef::new(&message).attachments() {
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .map(|a| interpolate(AttachmentRef::new(a).name()))
                .collect(),
            _ => Vec::new(),
        };
        text = names.join(", ");
    }
    let first_line = text.split('\n').next().unwrap_or_default();
    first_line.graphemes(true).take(TITLE_GRAPHEMES).collect()
}

/// Elixir interpolation of a JSON value: missing or `null` is `""`, a string itself, anything
/// else its JSON text.
fn interpolate(value: Option<&serde_json::Value>) -> String {
    match value {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}
