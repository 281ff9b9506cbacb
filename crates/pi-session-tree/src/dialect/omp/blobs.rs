//! omp's externalised images: `blob:sha256:<hex>` references resolved from a
//! blob folder the caller names.
//!
//! omp writes large base64 images to `<agent dir>/blobs/<sha256 of the raw
//! bytes>` and leaves `"data":"blob:sha256:<hex>"` in the JSONL line. On load it
//! puts the base64 back in image positions (`content` image blocks, `images`
//! arrays) and the stored text back in `image_url` and
//! `image_generation_call.result`; snapcompact `frames` stay references until
//! the context needs them. A missing blob leaves the reference in place.
//!
//! Reading blobs is I/O, so the resolver asks a [`BlobSource`]; the
//! [`BlobFolder`] implementation reads a directory.

use pi_session_types::view::{BlockRef, EntryRef, key};
use std::io;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use pi_session_types::js;

/// The prefix of an omp blob reference.
pub const BLOB_REF_PREFIX: &str = "blob:sha256:";

/// Where blob bytes come from.
pub trait BlobSource {
    /// The bytes stored under `hash` (64 lowercase hex), `Ok(None)` when there
    /// is no such blob.
    fn read_blob(&self, hash: &str) -> io::Result<Option<Vec<u8>>>;

    /// The stored size of the blob in bytes, `Ok(None)` when absent. The
    /// default reads the blob; folders answer from metadata.
    fn blob_size(&self, hash: &str) -> io::Result<Option<u64>> {
        Ok(self.read_blob(hash)?.map(|bytes| bytes.len() as u64))
    }
}

impl<F> BlobSource for F
where
    F: Fn(&str) -> io::Result<Option<Vec<u8>>>,
{
    fn read_blob(&self, hash: &str) -> io::Result<Option<Vec<u8>>> {
        self(hash)
    }
}

/// A blob folder on disk laid out like omp's `<agent dir>/blobs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobFolder {
    dir: PathBuf,
}

impl BlobFolder {
    /// A blob source reading `<dir>/<hash>`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The folder read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl BlobSource for BlobFolder {
    fn read_blob(&self, hash: &str) -> io::Result<Option<Vec<u8>>> {
        match std::fs::read(self.dir.join(hash)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn blob_size(&self, hash: &str) -> io::Result<Option<u64>> {
        match std::fs::metadata(self.dir.join(hash)) {
            Ok(meta) => Ok(Some(meta.len())),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }
}

/// The hash of a well-formed reference (`blob:sha256:` + 64 lowercase hex).
pub fn parse_blob_ref(data: &str) -> Option<&str> {
    let hash = data.strip_prefix(BLOB_REF_PREFIX)?;
    (hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then_some(hash)
}

/// Whether a string starts like a blob reference (omp's `isBlobRef`).
pub fn is_blob_ref(data: &str) -> bool {
    data.starts_with(BLOB_REF_PREFIX)
}

/// Resolves blob references inside one entry in place, the way omp's loader
/// does (`resolveBlobRefsInEntries`). Returns what could not be resolved.
pub fn resolve_entry_blobs(entry: &mut Value, blobs: &dyn BlobSource) -> Vec<Diagnostic> {
    let mut resolver = Resolver {
        blobs,
        diagnostics: Vec::new(),
        entry_id: EntryRef::new(&*entry).id().map(str::to_owned),
    };
    if contains_blob_ref(entry) {
        resolver.walk(entry, None);
    }
    resolver.diagnostics
}

fn contains_blob_ref(value: &Value) -> bool {
    match value {
        Value::String(s) => is_blob_ref(s),
        Value::Array(items) => items.iter().any(contains_blob_ref),
        Value::Object(map) => map.values().any(contains_blob_ref),
        _ => false,
    }
}

fn is_image_block(value: &Value) -> bool {
    BlockRef::new(value).is("image") && BlockRef::new(value).data().is_some_and(Value::is_string)
}

fn is_image_payload(value: &Value) -> bool {
    BlockRef::new(value).data().is_some_and(Value::is_string)
        && (is_image_block(value)
            || js::as_str(BlockRef::new(value).mime_type())
                .is_some_and(|m| m.to_lowercase().starts_with("image/")))
}

/// omp's `isExternalizableImagePosition`.
pub(crate) fn is_image_position(value: &Value, key: Option<&str>) -> bool {
    value.is_object()
        && is_image_payload(value)
        && ((key == Some("content") && is_image_block(value))
            || key == Some("images")
            || key == Some("frames"))
}

struct Resolver<'a> {
    blobs: &'a dyn BlobSource,
    diagnostics: Vec<Diagnostic>,
    entry_id: Option<String>,
}

impl Resolver<'_> {
    fn walk(&mut self, value: &mut Value, key: Option<&str>) {
        if key != Some("frames")
            && is_image_position(value, key)
            && let Some(Value::String(data)) = value.get_mut(key::DATA)
            && is_blob_ref(data)
        {
            *data = self.resolve(data, false);
            return;
        }
        match value {
            Value::Array(items) => {
                for item in items {
                    self.walk(item, key);
                }
            }
            Value::Object(map) => {
                // A provider-payload item's kind and result (omp's Responses history), not a
                // block's fields.
                if js::is_str(map.get("type"), "image_generation_call")
                    && let Some(Value::String(result)) = map.get_mut("result")
                    && is_blob_ref(result)
                {
                    *result = self.resolve(result, false);
                }
                if let Some(Value::String(url)) = map.get_mut("image_url")
                    && is_blob_ref(url)
                {
                    *url = self.resolve(url, true);
                }
                for (child_key, child) in map.iter_mut() {
                    self.walk(child, Some(child_key.as_str()));
                }
            }
            _ => {}
        }
    }

    fn resolve(&mut self, data: &str, as_text: bool) -> String {
        let Some(hash) = parse_blob_ref(data) else {
            self.report(
                DiagnosticKind::MissingBlob,
                format!("malformed blob reference {data:?} (needs 64 lowercase hex); left as is, as omp does"),
            );
            return data.to_owned();
        };
        match self.blobs.read_blob(hash) {
            Ok(Some(bytes)) if as_text => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(Some(bytes)) => base64::engine::general_purpose::STANDARD.encode(bytes),
            Ok(None) => {
                self.report(
                    DiagnosticKind::MissingBlob,
                    format!("blob {hash} is not in the blob folder; the reference stays in place, as omp does"),
                );
                data.to_owned()
            }
            Err(error) => {
                self.report(
                    DiagnosticKind::BlobReadFailed,
                    format!("reading blob {hash} failed: {error}; the reference stays in place"),
                );
                data.to_owned()
            }
        }
    }

    fn report(&mut self, kind: DiagnosticKind, message: String) {
        self.diagnostics.push(Diagnostic::at(
            kind,
            None,
            self.entry_id.as_deref(),
            message,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn source(hash: &str) -> io::Result<Option<Vec<u8>>> {
        Ok((hash == "a".repeat(64)).then(|| b"\x89PNG".to_vec()))
    }

    #[test]
    fn resolves_image_positions_only() {
        let reference = format!("blob:sha256:{}", "a".repeat(64));
        let mut entry = json!({
            "type": "message", "id": "x",
            "message": {"role": "user", "content": [{"type": "image", "data": reference, "mimeType": "image/png"}],
                        "other": {"data": reference, "mimeType": "image/png"}},
        });
        let diagnostics = resolve_entry_blobs(&mut entry, &source);
        assert!(diagnostics.is_empty());
        assert_eq!(entry["message"]["content"][0]["data"], "iVBORw==");
        assert_eq!(entry["message"]["other"]["data"], reference);
    }

    #[test]
    fn missing_blob_is_a_diagnostic() {
        let reference = format!("blob:sha256:{}", "b".repeat(64));
        let mut entry =
            json!({"id": "x", "images": [{"data": reference, "mimeType": "image/png"}]});
        let diagnostics = resolve_entry_blobs(&mut entry, &source);
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].kind, DiagnosticKind::MissingBlob);
        assert_eq!(entry["images"][0]["data"], reference);
    }
}
