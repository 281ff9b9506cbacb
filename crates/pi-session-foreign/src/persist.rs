//! omp's persistence rules for an entry about to be written (`prepareEntryForPersistence` in
//! `src/session/session-persistence.ts`): large images go to the content-addressed blob store,
//! very long strings are cut, signed blocks are kept verbatim.
//!
//! An import writes what omp's `persistCopy` writes, so these rules apply to every imported
//! entry. They are:
//!
//! - an image payload in `content` (a `type:"image"` block), `images[]` or `frames[]` whose
//!   `data` has at least 1024 characters becomes `blob:sha256:<hex>`; the blob is the base64
//!   *decoded* data, stored as `<blobs>/<hex>` plus a `<hex>.<ext>` hard link (or copy) named for
//!   its MIME type;
//! - an `image_generation_call` `result` of at least 1024 characters likewise (no extension);
//! - an `image_url` string that is a base64 `data:image/...` URL becomes a blob of the URL's
//!   UTF-8 bytes, whatever its size (Codex's replacement history carries these);
//! - any other string longer than 500,000 UTF-16 units is cut to fit, with omp's notice appended
//!   (signature keys excepted);
//! - signed or encrypted blocks (`thinking` with `thinkingSignature`, `text` with
//!   `textSignature`, `toolCall` with `thoughtSignature`, `redactedThinking`, `reasoning` with
//!   `encrypted_content`, Anthropic compaction state) are written verbatim;
//! - `jsonlEvents` keys are dropped; a changed object's `lineCount` is recounted from its
//!   `content`.
//!
//! Not reproduced: omp keeps Anthropic server-tool history blocks (`type:"anthropicServerTool"`)
//! verbatim after a provider-specific shape check. No importer produces such a block, so it can
//! only appear inside a tool's raw arguments, where omp would apply the same check.

use pi_session_types::JsonMap;
use pi_session_types::js::utf16_len;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};

const MAX_PERSIST_CHARS: usize = 500_000;
const TRUNCATION_NOTICE: &str = "\n\n[Session persistence truncated large content]";
const BLOB_EXTERNALIZE_THRESHOLD: usize = 1024;
const BLOB_PREFIX: &str = "blob:sha256:";

/// omp's content-addressed blob store (`<agent dir>/blobs`).
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

impl BlobStore {
    /// A store in `dir` (created on the first blob).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The folder the blobs go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores `data` as `<dir>/<sha256 hex>` (and `<hex>.<extension>` when given); returns the
    /// `blob:sha256:<hex>` reference.
    pub fn put(&self, data: &[u8], extension: Option<&str>) -> io::Result<String> {
        let hash = Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>();
        std::fs::create_dir_all(&self.dir)?;
        let path = self.dir.join(&hash);
        std::fs::write(&path, data)?;
        if let Some(extension) = extension {
            let display = self.dir.join(format!("{hash}.{extension}"));
            match std::fs::hard_link(&path, &display) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(_) => std::fs::write(&display, data)?,
            }
        }
        Ok(format!("{BLOB_PREFIX}{hash}"))
    }
}

/// `Buffer.from(text, "base64")`: both alphabets, whitespace and other characters skipped,
/// decoding stops at the first `=`, a dangling sixth bit group is dropped.
pub(crate) fn decode_base64_like_node(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for byte in text.bytes() {
        let v = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    out
}

/// `blobExtensionForImageMimeType`.
fn extension_for(mime: Option<&str>) -> Option<String> {
    let lower = mime?.to_lowercase();
    let known = match lower.as_str() {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" => Some("jpg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        "image/svg+xml" => Some("svg"),
        _ => None,
    };
    if let Some(known) = known {
        return Some(known.to_owned());
    }
    let subtype = lower.strip_prefix("image/")?;
    let subtype = subtype.split(';').next()?.split('+').next()?;
    let valid = !subtype.is_empty()
        && subtype.len() <= 32
        && subtype.as_bytes()[0].is_ascii_alphanumeric()
        && subtype
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    valid.then(|| subtype.to_owned())
}

fn is_blob_ref(s: &str) -> bool {
    s.starts_with(BLOB_PREFIX)
}

fn type_is(map: &JsonMap, kind: &str) -> bool {
    map.get("type").and_then(Value::as_str) == Some(kind)
}

fn non_empty_string(map: &JsonMap, key: &str) -> bool {
    map.get(key)
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

fn is_image_block(map: &JsonMap) -> bool {
    type_is(map, "image") && map.get("data").is_some_and(Value::is_string)
}

fn is_image_payload(map: &JsonMap) -> bool {
    map.get("data").is_some_and(Value::is_string)
        && (is_image_block(map)
            || map
                .get("mimeType")
                .and_then(Value::as_str)
                .is_some_and(|m| m.to_lowercase().starts_with("image/")))
}

/// `truncateString`: the first `max` UTF-16 units, not ending on a lone high surrogate.
fn truncate_utf16(text: &str, max: usize) -> &str {
    let mut units = 0;
    for (index, c) in text.char_indices() {
        let width = pi_session_types::js::char_utf16_len(c);
        if units + width > max {
            return &text[..index];
        }
        units += width;
    }
    text
}

/// Applies omp's persistence rules to one entry (see the module docs). Blobs are written as a
/// side effect, before the line that refers to them.
pub(crate) fn prepare_entry(entry: JsonMap, blobs: &BlobStore) -> io::Result<JsonMap> {
    match prepare(Value::Object(entry), None, blobs)?.0 {
        Value::Object(map) => Ok(map),
        _ => Err(io::Error::other("an entry stopped being an object")),
    }
}

/// Returns the value and whether it changed.
fn prepare(value: Value, key: Option<&str>, blobs: &BlobStore) -> io::Result<(Value, bool)> {
    match value {
        Value::Object(mut map) => {
            if type_is(&map, "image_generation_call")
                && let Some(Value::String(result)) = map.get("result")
                && !is_blob_ref(result)
                && utf16_len(result) >= BLOB_EXTERNALIZE_THRESHOLD
            {
                let reference = blobs.put(&decode_base64_like_node(result), None)?;
                map.insert("result".into(), reference.into());
                return Ok((Value::Object(map), true));
            }
            let position = matches!(key, Some("images" | "frames"))
                || (key == Some("content") && is_image_block(&map));
            if position
                && is_image_payload(&map)
                && let Some(Value::String(data)) = map.get("data")
                && !is_blob_ref(data)
                && utf16_len(data) >= BLOB_EXTERNALIZE_THRESHOLD
            {
                let mime = map.get("mimeType").and_then(Value::as_str);
                let reference = blobs.put(
                    &decode_base64_like_node(data),
                    extension_for(mime).as_deref(),
                )?;
                map.insert("data".into(), reference.into());
                return Ok((Value::Object(map), true));
            }
            let anthropic_compaction = type_is(&map, "anthropicCompaction")
                || (key == Some("anthropicCompaction")
                    && map.get("content").is_some_and(Value::is_string));
            let signed = (type_is(&map, "thinking") && non_empty_string(&map, "thinkingSignature"))
                || (type_is(&map, "text") && non_empty_string(&map, "textSignature"))
                || (type_is(&map, "toolCall") && non_empty_string(&map, "thoughtSignature"))
                || (type_is(&map, "redactedThinking") && non_empty_string(&map, "data"))
                || (type_is(&map, "reasoning") && non_empty_string(&map, "encrypted_content"));
            if anthropic_compaction || signed {
                return Ok((Value::Object(map), false));
            }
            let mut changed = false;
            let mut out = JsonMap::with_capacity(map.len());
            for (child_key, child) in map {
                if child_key == "jsonlEvents" {
                    changed = true;
                    continue;
                }
                let (child, child_changed) = prepare(child, Some(&child_key), blobs)?;
                changed |= child_changed;
                out.insert(child_key, child);
            }
            if changed
                && let Some(Value::String(content)) = out.get("content")
                && out.get("lineCount").is_some_and(Value::is_number)
            {
                let lines = content.split('\n').count();
                out.insert("lineCount".into(), lines.into());
            }
            Ok((Value::Object(out), changed))
        }
        Value::Array(items) => {
            let mut changed = false;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let (item, item_changed) = prepare(item, key, blobs)?;
                changed |= item_changed;
                out.push(item);
            }
            Ok((Value::Array(out), changed))
        }
        Value::String(text) => {
            if key == Some("image_url")
                && text.starts_with("data:image/")
                && text.contains(";base64,")
            {
                return Ok((Value::String(blobs.put(text.as_bytes(), None)?), true));
            }
            if utf16_len(&text) > MAX_PERSIST_CHARS
                && !matches!(
                    key,
                    Some("thinkingSignature" | "thoughtSignature" | "textSignature")
                )
            {
                let limit = MAX_PERSIST_CHARS - utf16_len(TRUNCATION_NOTICE);
                let cut = format!("{}{TRUNCATION_NOTICE}", truncate_utf16(&text, limit));
                return Ok((Value::String(cut), true));
            }
            Ok((Value::String(text), false))
        }
        other => Ok((other, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn node_base64_is_lenient() {
        assert_eq!(decode_base64_like_node("aGVsbG8="), b"hello");
        assert_eq!(decode_base64_like_node("aGVs\nbG8"), b"hello");
        assert_eq!(decode_base64_like_node("_-8"), [0xff, 0xef]);
        assert_eq!(decode_base64_like_node("aGVsbG8=garbage"), b"hello");
    }

    #[test]
    fn extensions_follow_the_mime_type() {
        assert_eq!(extension_for(Some("IMAGE/JPEG")).as_deref(), Some("jpg"));
        assert_eq!(extension_for(Some("image/avif")).as_deref(), Some("avif"));
        assert_eq!(extension_for(Some("image/x+y;q=1")).as_deref(), Some("x"));
        assert_eq!(extension_for(Some("text/plain")), None);
    }

    #[test]
    fn large_images_become_blobs_and_long_strings_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobStore::new(dir.path());
        let data = "A".repeat(1024);
        let entry = json!({
            "message": {"content": [{"type": "image", "data": data, "mimeType": "image/png"},
                                     {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                                     {"type": "text", "text": "x".repeat(600_000)}]},
            "jsonlEvents": [1]
        });
        let Value::Object(entry) = entry else {
            unreachable!()
        };
        let out = prepare_entry(entry, &blobs).unwrap();
        let content = &out["message"]["content"];
        let reference = content[0]["data"].as_str().unwrap();
        let hash = reference.strip_prefix(BLOB_PREFIX).unwrap();
        assert_eq!(std::fs::read(dir.path().join(hash)).unwrap().len(), 768);
        assert!(dir.path().join(format!("{hash}.png")).exists());
        assert_eq!(content[1]["data"], "AAAA");
        let text = content[2]["text"].as_str().unwrap();
        assert_eq!(utf16_len(text), MAX_PERSIST_CHARS);
        assert!(text.ends_with(TRUNCATION_NOTICE));
        assert!(out.get("jsonlEvents").is_none());
    }

    #[test]
    fn signed_thinking_is_kept_verbatim() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobStore::new(dir.path());
        let long = "t".repeat(600_000);
        let Value::Object(entry) =
            json!({"content": [{"type": "thinking", "thinking": long, "thinkingSignature": "s"}]})
        else {
            unreachable!()
        };
        let out = prepare_entry(entry, &blobs).unwrap();
        assert_eq!(
            out["content"][0]["thinking"].as_str().map(str::len),
            Some(600_000)
        );
    }
}
