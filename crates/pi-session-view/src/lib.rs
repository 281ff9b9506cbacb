//! pi-session-view: see an omp or pi session as a person reads it.
//!
//! Job: turn a session into a view model ([`view_model`]: the tree with every branch, the leaf,
//! labels, branch summaries, compactions, omp's archive; each branch's messages; per-turn and
//! total tokens and cost; and "what the model saw", the same projection as `pi-session context`)
//! and render it as ONE self-contained HTML page ([`export_html`]) that works from `file://`
//! with no network. The page's script and style are hand-written files in `assets/`, compiled in
//! with `include_str!` (no build step).
//!
//! Guarantees: the page runs only our script (a Content-Security-Policy names it by hash and
//! forbids network access); session text reaches the page only as escaped JSON data and is put
//! in the document with `textContent`, so a message holding `</script>` or `<img onerror>` shows
//! as text. Large sessions stay usable: entries are rendered as the reader scrolls, big tool
//! outputs and pictures only when opened.
//!
//! Must not: hold a format rule (branches, totals and contexts come from `pi-session`), write a
//! session, or reach below the facade.
//!
//! ```
//! use pi_session::store;
//! use pi_session::tree::LeafSelector;
//! use pi_session_view::{ViewOptions, export_html, default_branch_budget};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("s.jsonl");
//! std::fs::write(&path, concat!(
//!     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
//!     r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"</script>hi","timestamp":1}}"#, "\n",
//! )).unwrap();
//! let (file, _) = store::open(&path).unwrap();
//! let options = ViewOptions { leaf: &LeafSelector::Default, blobs: None, file_name: "s.jsonl",
//!                             branch_budget: default_branch_budget(file.len()),
//!                             parent_href: None };
//! let page = String::from_utf8(export_html(&file, &options).unwrap()).unwrap();
//! assert!(page.contains(r"\u003c/script\u003ehi"));
//! assert_eq!(page.matches("</script>").count(), 2); // the data element and our script
//! ```
#![deny(missing_docs)]

mod html;
mod model;

pub use html::{
    LIST_JS, ScriptSafe, VIEW_CSS, VIEW_JS, content_security_policy, escape_html, page,
    script_json, write_script_json,
};
pub use model::{MODEL_VERSION, ViewError, ViewOptions, default_branch_budget, view_model};

use pi_session::store::SessionFile;
use rayon::prelude::*;

/// The session as one self-contained HTML page (UTF-8 bytes).
pub fn export_html(file: &SessionFile, options: &ViewOptions<'_>) -> Result<Vec<u8>, ViewError> {
    let model = view_model(file, options)?;
    let title = model
        .pointer("/session/title")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty())
        .unwrap_or(options.file_name);
    let title = format!("{title} · pi-session");
    let size_hint = usize::try_from(file.byte_len())
        .unwrap_or(0)
        .saturating_mul(9)
        / 8;
    Ok(page(&title, VIEW_JS, "'none'", size_hint, |out| {
        write_model(model, out)
    })?)
}

/// Entries serialised per task: the bulk of a large page is its entries, written on every core.
const ENTRIES_PER_TASK: usize = 2048;

/// The model as [`write_script_json`] writes it, its `entries` (the last key) serialised in
/// parallel chunks and joined: the same bytes, sooner.
fn write_model(mut model: serde_json::Value, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
    let entries = match model
        .as_object_mut()
        .and_then(|m| m.shift_remove("entries"))
    {
        Some(serde_json::Value::Array(entries)) => entries,
        Some(other) => {
            if let Some(map) = model.as_object_mut() {
                map.insert("entries".into(), other);
            }
            return write_script_json(&model, out);
        }
        None => return write_script_json(&model, out),
    };
    let chunks: Vec<Vec<u8>> = entries
        .par_chunks(ENTRIES_PER_TASK)
        .map(|chunk| {
            let mut bytes = Vec::new();
            for (i, entry) in chunk.iter().enumerate() {
                if i > 0 {
                    bytes.push(b',');
                }
                write_script_json(entry, &mut bytes)?;
            }
            Ok(bytes)
        })
        .collect::<Result<_, serde_json::Error>>()?;
    write_script_json(&model, out)?;
    // `{...}` becomes `{...,"entries":[...]}` (`{"entries":[...]}` for an empty rest).
    if out.last() == Some(&b'}') {
        out.pop();
    }
    if !model.as_object().is_some_and(serde_json::Map::is_empty) {
        out.push(b',');
    }
    out.extend_from_slice(b"\"entries\":[");
    for (i, chunk) in chunks.iter().filter(|c| !c.is_empty()).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(b"]}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_model_written_in_chunks_is_the_model_written_whole() {
        let many: Vec<serde_json::Value> = (0..ENTRIES_PER_TASK * 2 + 3)
            .map(|i| json!({"id": i.to_string(), "t": "</script>\u{2028}"}))
            .collect();
        for entries in [
            json!([]),
            json!([{"a": 1}]),
            json!(many),
            json!("not an array"),
        ] {
            let model = json!({"version": 1, "session": {"id": "s"}, "entries": entries});
            let (mut whole, mut chunked) = (Vec::new(), Vec::new());
            write_script_json(&model, &mut whole).unwrap();
            write_model(model, &mut chunked).unwrap();
            assert_eq!(
                String::from_utf8(chunked).unwrap(),
                String::from_utf8(whole).unwrap()
            );
        }
        let (mut whole, mut chunked) = (Vec::new(), Vec::new());
        write_script_json(&json!({"entries": [1, 2]}), &mut whole).unwrap();
        write_model(json!({"entries": [1, 2]}), &mut chunked).unwrap();
        assert_eq!(chunked, whole);
    }
}
