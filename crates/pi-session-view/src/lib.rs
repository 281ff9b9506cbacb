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
//!                             branch_budget: default_branch_budget(file.len()) };
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
        write_script_json(&model, out)
    })?)
}
