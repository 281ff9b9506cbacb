//! omp's experimental context notes: the latest valid notebook revision on the
//! path, rendered through omp's prompt template and its post-render formatter
//! ([`crate::omp_prompt`]).

use pi_session_types::view::{ContextNotesRef, EntryRef};
use serde_json::Value;

use crate::js;
use crate::omp_prompt::{CONTEXT_NOTES_TEMPLATE, render};

/// omp's post-render prompt formatter; it lives in [`crate::omp_prompt`].
pub use crate::omp_prompt::format_post_render;

/// `customType` of the `custom` entries that hold notebook revisions.
pub const CONTEXT_NOTES_ENTRY_TYPE: &str = "experimental_context_notes";

/// Largest notebook text omp accepts, in UTF-8 bytes.
pub const MAX_CONTEXT_NOTES_BYTES: usize = 16_384;

/// The latest valid notebook revision on `path` (scanning back and stopping at
/// the first `reset_boundary`): its text and the index of its entry.
pub fn latest_notes(path: &[Value]) -> Option<(&str, usize)> {
    for (index, entry) in path.iter().enumerate().rev() {
        let kind = EntryRef::new(entry).kind();
        if kind == Some("reset_boundary") {
            return None;
        }
        if kind != Some("custom")
            || !js::is_str(EntryRef::new(entry).custom_type(), CONTEXT_NOTES_ENTRY_TYPE)
        {
            continue;
        }
        if let Some(text) = valid_notes_text(EntryRef::new(entry).data()) {
            return Some((text, index));
        }
    }
    None
}

fn valid_notes_text(data: Option<&Value>) -> Option<&str> {
    let map = data?.as_object()?;
    let notes = ContextNotesRef::new(map);
    if map.len() != 2 || notes.version().is_none() {
        return None;
    }
    let version_is_one = notes.version().and_then(Value::as_f64) == Some(1.0);
    let text = notes.text()?.as_str()?;
    (version_is_one && text.len() <= MAX_CONTEXT_NOTES_BYTES).then_some(text)
}

/// The notes as omp injects them: template rendered, formatted, trimmed.
pub fn render_notes(notes: &str) -> String {
    js::trim(&render(CONTEXT_NOTES_TEMPLATE, "notes", notes)).to_owned()
}
