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
    script_json, write_page, write_script_json,
};
pub use model::{MODEL_VERSION, ViewError, ViewOptions, default_branch_budget, view_model};

use std::io::Write;

use pi_session::store::SessionFile;
use pi_session::tree::dialect::omp::blobs::resolve_entry_blobs;
use pi_session::tree::{BlobSource, EntrySource};
use pi_session::types::needle::Needle;

/// The session as one self-contained HTML page (UTF-8 bytes).
pub fn export_html(file: &SessionFile, options: &ViewOptions<'_>) -> Result<Vec<u8>, ViewError> {
    let mut page = Vec::with_capacity(
        usize::try_from(file.byte_len())
            .unwrap_or(0)
            .saturating_mul(9)
            / 8,
    );
    write_html(file, options, &mut page)?;
    Ok(page)
}

/// [`export_html`] written to `out` as it is made: the page is never held whole, and the
/// entries go from the file's lines to `out` through one escaping pass.
pub fn write_html<W: Write + ?Sized>(
    file: &SessionFile,
    options: &ViewOptions<'_>,
    out: &mut W,
) -> Result<(), ViewError> {
    let (model, entries) = model::view_parts(file, options)?;
    // The entries are written from the file's lines (the few that are not read as written
    // are read again): the values are not kept while the page is written.
    drop(entries);
    let title = model
        .pointer("/session/title")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty())
        .unwrap_or(options.file_name);
    let title = format!("{title} · pi-session");
    write_page(out, &title, VIEW_JS, "'none'", |out| {
        write_model(&model, out, |out| write_entries(file, options.blobs, out))
    })
}

/// Bytes of lines escaped per step: the escapes of one step are made on a few cores and then
/// written, so the page never holds more than a step's copies.
const BYTES_PER_STEP: u64 = 1 << 20;

/// Writes every entry as script-safe JSON ([`script_json`]), joined with commas: the line as
/// the file has it wherever `JSON.parse` of it gives the value the model holds (no copy of the
/// body is parsed and written again, which was most of a large page's cost; see
/// [`as_written`]), else the entry read again (omp's blob pictures resolved) and written.
fn write_entries<W: Write + ?Sized>(
    file: &SessionFile,
    blobs: Option<&dyn BlobSource>,
    out: &mut W,
) -> Result<(), ViewError> {
    let migrated = file.is_migrated();
    let resolving = blobs.is_some();
    let index = file.index();
    let mut start = 0;
    while start < index.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < index.len() && (end == start || bytes < BYTES_PER_STEP) {
            bytes += index[end].byte_len;
            end += 1;
        }
        let positions: Vec<usize> = (start..end).collect();
        let lines = file
            .map_raw(&positions, |_, at, bytes| {
                (!migrated && as_written(at.envelope.kind(), bytes, resolving)).then(|| {
                    let mut line = Vec::with_capacity(bytes.len() + bytes.len() / 64);
                    script_json(bytes, &mut line);
                    line
                })
            })
            .map_err(|e| ViewError::Read(e.into()))?;
        for (pos, line) in (start..end).zip(lines) {
            if pos > 0 {
                out.write_all(b",")?;
            }
            match line {
                Some(line) => out.write_all(&line)?,
                None => {
                    let mut value = file.entry_value(pos)?;
                    if let Some(blobs) = blobs {
                        // Reported when the model was built.
                        let _ = resolve_entry_blobs(&mut value, blobs);
                    }
                    write_script_json(&value, &mut *out)?;
                }
            }
        }
        start = end;
    }
    Ok(())
}

/// Whether an entry's line, as the file has it, is what its value in the model reads as: a
/// line the store parses without repair (valid UTF-8, no `\uD…` escape, which may be a lone
/// surrogate), not the header or title slot (typed apart), and with no omp blob reference when
/// blobs are resolved (the model holds the picture).
fn as_written(kind: &str, bytes: &[u8], blobs: bool) -> bool {
    kind != "session"
        && kind != "title"
        && std::str::from_utf8(bytes).is_ok()
        && !SURROGATE_LOWER.is_in(bytes)
        && !SURROGATE_UPPER.is_in(bytes)
        && !(blobs && BLOB_REF.is_in(bytes))
}

/// The words [`as_written`] looks for in a line.
static SURROGATE_LOWER: Needle = Needle::new(b"\\ud");
static SURROGATE_UPPER: Needle = Needle::new(b"\\uD");
static BLOB_REF: Needle =
    Needle::new(pi_session::tree::dialect::omp::blobs::BLOB_REF_PREFIX.as_bytes());

/// The model as [`write_script_json`] writes it with `entries` (appended by `write_entries`,
/// without the brackets) as its last key: `{...}` becomes `{...,"entries":[...]}`
/// (`{"entries":[...]}` for an empty rest).
fn write_model<W: Write + ?Sized, E: From<serde_json::Error> + From<std::io::Error>>(
    model: &serde_json::Value,
    out: &mut W,
    write_entries: impl FnOnce(&mut W) -> Result<(), E>,
) -> Result<(), E> {
    let mut head = Vec::new();
    write_script_json(model, &mut head)?;
    if head.last() == Some(&b'}') {
        head.pop();
    }
    if !model.as_object().is_some_and(serde_json::Map::is_empty) {
        head.push(b',');
    }
    head.extend_from_slice(b"\"entries\":[");
    out.write_all(&head)?;
    write_entries(out)?;
    out.write_all(b"]}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_model_with_its_entries_written_apart_is_the_model_written_whole() {
        let many: Vec<serde_json::Value> = (0..5)
            .map(|i| json!({"id": i.to_string(), "t": "</script>\u{2028}"}))
            .collect();
        for (rest, entries) in [
            (json!({"version": 1, "session": {"id": "s"}}), json!([])),
            (json!({"version": 1}), json!([{"a": 1}])),
            (json!({"version": 1, "session": {"id": "s"}}), json!(many)),
            (json!({}), json!([1, 2])),
        ] {
            let written = |out: &mut Vec<u8>| {
                for (i, entry) in entries.as_array().unwrap().iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    write_script_json(entry, &mut *out)?;
                }
                Ok::<(), ViewError>(())
            };
            let (mut expected, mut apart) = (Vec::new(), Vec::new());
            write_model(&rest, &mut apart, written).unwrap();
            let mut whole = rest.clone();
            whole
                .as_object_mut()
                .unwrap()
                .insert("entries".into(), entries);
            write_script_json(&whole, &mut expected).unwrap();
            assert_eq!(
                String::from_utf8(apart).unwrap(),
                String::from_utf8(expected).unwrap()
            );
        }
    }

    #[test]
    fn only_lines_that_read_as_their_value_are_written_as_they_are() {
        let line = br#"{"type":"message","id":"a","t":"</script>"}"#;
        assert!(as_written("message", line, false));
        assert!(as_written("message", line, true));
        assert!(!as_written("session", line, false));
        assert!(!as_written("title", line, false));
        assert!(!as_written("message", br#"{"t":"\ud83d"}"#, false));
        assert!(!as_written("message", br#"{"t":"\uDC00"}"#, false));
        assert!(!as_written("message", b"{\"t\":\"\xff\"}", false));
        let blob = br#"{"data":"blob:sha256:00"}"#;
        assert!(as_written("message", blob, false));
        assert!(!as_written("message", blob, true));
    }
}
