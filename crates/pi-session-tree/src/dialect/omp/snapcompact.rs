//! omp's snapcompact archives: the text and image-frame history a
//! `method:"snapcompact"` compaction keeps under `preserveData.snapcompact`,
//! re-attached to the compaction summary as `blocks` on every context build
//! (`@oh-my-pi/snapcompact` 18.2.3 `getPreservedArchive` and `historyBlocks`).
//!
//! Archive text goes through omp's `toPlainText` and `elideDataUrls` (every
//! inline base64 data URL, Markdown image wrapper included, becomes
//! `[data URL omitted: <mime>, <n> base64 chars]`).

use pi_session_types::view::{BlockRef, EntryRef, PreserveDataRef, SnapcompactFrameRef, key};
use serde_json::{Map, Value};

use super::blobs::{BlobSource, is_blob_ref, parse_blob_ref};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use pi_session_types::js;

/// Key of the archive under `preserveData`.
pub const PRESERVE_KEY: &str = key::SNAPCOMPACT;
/// Base64 bytes of frames one request may carry.
pub const FRAME_DATA_BYTES_BUDGET: u64 = 3_000_000;
/// Marker omp appends to strings it cut when persisting.
pub const TRUNCATION_NOTICE: &str = "\n\n[Session persistence truncated large content]";
const NEWLINE_GLYPH: char = '\u{2588}';
const LEGACY_FRAME_COUNT_GUARD: usize = 16;
const LEGACY_ARCHIVE_TEXT_GUARD: usize = 250_000;
const LEGACY_TRUNCATED_CHARS_GUARD: f64 = 1_000_000.0;

/// A validated archive.
#[derive(Debug, Clone, PartialEq)]
pub struct Archive {
    /// Frames that pass validation, oldest first.
    pub frames: Vec<Map<String, Value>>,
    /// `truncatedChars`, 0 when not a number.
    pub truncated_chars: f64,
    /// The full kept source text, when non-empty.
    pub text: Option<String>,
    /// The oldest verbatim text region, when non-empty.
    pub text_head: Option<String>,
    /// The newest verbatim text region, when non-empty.
    pub text_tail: Option<String>,
}

fn non_empty_string(value: Option<&Value>) -> Option<String> {
    js::as_str(value)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// `getPreservedArchive`: the archive under `preserveData.snapcompact`, or
/// `None` when it is missing or carries neither frames nor text.
pub fn preserved_archive(preserve: Option<&Value>) -> Option<Archive> {
    let candidate = PreserveDataRef::new(preserve).snapcompact_ref();
    candidate.map()?;
    let frames: Vec<Map<String, Value>> = candidate
        .frames()
        .and_then(Value::as_array)
        .map(|frames| {
            frames
                .iter()
                .filter_map(Value::as_object)
                .filter(|f| {
                    let frame = SnapcompactFrameRef::new(f);
                    js::as_str(frame.data()).is_some_and(|d| !d.is_empty())
                        && frame.mime_type().is_some_and(Value::is_string)
                        && [frame.cols(), frame.rows(), frame.chars()]
                            .iter()
                            .all(|v| v.is_some_and(Value::is_number))
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let archive = Archive {
        truncated_chars: candidate
            .truncated_chars()
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        text: non_empty_string(candidate.text()),
        text_head: non_empty_string(candidate.text_head()),
        text_tail: non_empty_string(candidate.text_tail()),
        frames,
    };
    let empty = archive.frames.is_empty()
        && archive.text.is_none()
        && archive.text_head.is_none()
        && archive.text_tail.is_none();
    (!empty).then_some(archive)
}

/// omp's loader repair for archives whose frame data an older omp cut when
/// persisting: the frames are replaced by the archive text, or dropped.
pub fn repair_truncated_frames(entry: &mut Value) {
    if !EntryRef::new(&*entry).is("compaction") {
        return;
    }
    let Some(archive) = preserved_archive(EntryRef::new(&*entry).preserve_data()) else {
        return;
    };
    let truncated = |frame: &Map<String, Value>| {
        js::as_str(SnapcompactFrameRef::new(frame).data())
            .is_some_and(|d| d.ends_with(TRUNCATION_NOTICE))
    };
    if !archive.frames.iter().any(truncated) {
        return;
    }
    let Some(slot) = entry
        .get_mut(key::PRESERVE_DATA)
        .and_then(|p| p.get_mut(PRESERVE_KEY))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if let Some(text) = archive.text {
        slot.insert(key::FRAMES.into(), Value::Array(Vec::new()));
        slot.insert(key::TEXT_HEAD.into(), Value::from(text));
        slot.insert(key::TEXT_TAIL.into(), Value::from(""));
    } else {
        let kept = archive
            .frames
            .into_iter()
            .filter(|f| !truncated(f))
            .map(Value::Object)
            .collect();
        slot.insert(key::FRAMES.into(), Value::Array(kept));
    }
}

/// A frame payload priced before it is read (`lazyImageDataSync`).
struct LazyFrame {
    bytes: u64,
    reference: Option<String>,
    inline: String,
}

fn lazy_frame(data: &str, blobs: Option<&dyn BlobSource>) -> Option<LazyFrame> {
    let Some(hash) = parse_blob_ref(data) else {
        if is_blob_ref(data) {
            return None;
        }
        return Some(LazyFrame {
            bytes: js::utf16_len(data) as u64,
            reference: None,
            inline: data.to_owned(),
        });
    };
    let size = blobs?.blob_size(hash).ok().flatten()?;
    Some(LazyFrame {
        bytes: size.div_ceil(3) * 4,
        reference: Some(hash.to_owned()),
        inline: data.to_owned(),
    })
}

fn read_lazy(frame: LazyFrame, blobs: Option<&dyn BlobSource>) -> String {
    use base64::Engine;
    match (frame.reference, blobs) {
        (Some(hash), Some(blobs)) => match blobs.read_blob(&hash) {
            Ok(Some(bytes)) => base64::engine::general_purpose::STANDARD.encode(bytes),
            _ => frame.inline,
        },
        _ => frame.inline,
    }
}

enum Slot {
    Frame(Map<String, Value>),
    Unavailable,
    Omitted(u64),
}

/// The blocks omp attaches to a compaction summary for the archive under
/// `preserve` (LLM mode, with the session's blob store as frame resolver).
pub fn history_blocks_for(
    preserve: Option<&Value>,
    blobs: Option<&dyn BlobSource>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<Value>> {
    let archive = preserved_archive(preserve)?;
    let max_bytes = if is_crash_risk_legacy(&archive, blobs) {
        0
    } else {
        FRAME_DATA_BYTES_BUDGET
    };
    let mut used = 0u64;
    let mut slots = Vec::with_capacity(archive.frames.len());
    for frame in archive.frames.iter().rev() {
        let data = js::as_str(SnapcompactFrameRef::new(frame).data()).unwrap_or_default();
        let Some(lazy) = lazy_frame(data, blobs) else {
            if is_blob_ref(data) {
                diagnostics.push(Diagnostic::at(
                    DiagnosticKind::MissingBlob,
                    None,
                    None,
                    "a snapcompact frame's blob is missing; omp shows a gap marker instead",
                ));
            }
            slots.push(Slot::Unavailable);
            continue;
        };
        if used + lazy.bytes > max_bytes {
            slots.push(Slot::Omitted(lazy.bytes));
            continue;
        }
        used += lazy.bytes;
        let mut resolved = frame.clone();
        resolved.insert("data".into(), Value::from(read_lazy(lazy, blobs)));
        slots.push(Slot::Frame(resolved));
    }
    slots.reverse();
    let middle = frame_blocks(slots);
    let has_images = middle.iter().any(|b| BlockRef::new(b).is("image"));
    let has_omitted = middle.iter().any(|b| BlockRef::new(b).is("text"));
    let mut blocks: Vec<Value> = Vec::new();
    if let Some(head) = &archive.text_head {
        let suffix = if has_images {
            "\n-------------- imaged middle below\n"
        } else {
            ""
        };
        blocks.push(js::text_block(format!("{}{suffix}", plain_text(head))));
    }
    blocks.extend(middle);
    if let Some(tail) = &archive.text_tail {
        let prefix = if has_images {
            "-------------- imaged middle above\n"
        } else if archive.truncated_chars > 0.0 || has_omitted {
            "\n-------------- middle history omitted above\n"
        } else {
            ""
        };
        let tail = format!("{prefix}{}", plain_text(tail));
        match blocks.last_mut() {
            Some(Value::Object(last)) if BlockRef::new(&*last).is("text") => {
                let joined = format!(
                    "{}{tail}",
                    js::as_str(BlockRef::new(&*last).text()).unwrap_or_default()
                );
                last.insert("text".into(), Value::from(joined));
            }
            _ => blocks.push(js::text_block(tail)),
        }
    }
    Some(blocks)
}

fn is_crash_risk_legacy(archive: &Archive, blobs: Option<&dyn BlobSource>) -> bool {
    let legacy = archive
        .frames
        .iter()
        .map(SnapcompactFrameRef::new)
        .any(|f| f.font().is_none() && f.variant().is_none());
    if !legacy {
        return false;
    }
    let many_frames = archive.frames.len() >= LEGACY_FRAME_COUNT_GUARD;
    let frame_bytes: u64 = archive
        .frames
        .iter()
        .map(|f| {
            let data = js::as_str(SnapcompactFrameRef::new(f).data()).unwrap_or_default();
            lazy_frame(data, blobs).map_or(js::utf16_len(data) as u64, |lazy| lazy.bytes)
        })
        .sum();
    let payload_risk = many_frames || frame_bytes >= FRAME_DATA_BYTES_BUDGET;
    let source_len = archive_source_len(archive);
    let size_risk = many_frames
        || archive.truncated_chars >= LEGACY_TRUNCATED_CHARS_GUARD
        || source_len >= LEGACY_ARCHIVE_TEXT_GUARD;
    payload_risk && size_risk
}

fn archive_source_len(archive: &Archive) -> usize {
    let text = match &archive.text {
        Some(text) => text.clone(),
        None => [&archive.text_head, &archive.text_tail]
            .into_iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join(&NEWLINE_GLYPH.to_string()),
    };
    js::utf16_len(&elide_data_urls(&to_plain_text(&text)))
}

fn to_plain_text(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '\u{000e}' && *c != '\u{000f}')
        .map(|c| if c == NEWLINE_GLYPH { '\n' } else { c })
        .collect()
}

fn plain_text(text: &str) -> String {
    elide_data_urls(&to_plain_text(text))
}

/// omp's `elideDataUrls` in archive context: every inline base64 data URL
/// (`data:<type>/<subtype>[;k=v]*;base64,<payload>`, an embedded
/// `[…<n>ch elided…]` marker allowed) becomes a placeholder naming its media
/// type and payload length; a Markdown `![label](…)` wrapper around it goes too.
pub fn elide_data_urls(text: &str) -> String {
    if !contains_ignore_ascii_case(text.as_bytes(), b";base64,") {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    let mut from = 0;
    while let Some(atom) = find_data_url(&chars, from) {
        let payload: String = chars[atom.payload.clone()].iter().collect();
        let b64_chars = match elided_marker(&payload) {
            Some((marker_len, digits)) => payload.chars().count() - marker_len + digits,
            None => payload.chars().count(),
        };
        let mime: String = chars[atom.mime.clone()].iter().collect();
        let placeholder = format!("[data URL omitted: {mime}, {b64_chars} base64 chars]");
        let opener = markdown_opener_start(&chars, atom.start, cursor).filter(|&o| o >= cursor);
        let emit_start = opener.unwrap_or(atom.start);
        out.extend(&chars[cursor..emit_start]);
        match (opener, &atom.closer) {
            (Some(_), Some(_)) => out.push_str(&placeholder),
            (opener, closer) => {
                if let Some(o) = opener {
                    out.extend(&chars[o..atom.start]);
                }
                out.push_str(&placeholder);
                if let Some(closer) = closer {
                    out.extend(&chars[closer.clone()]);
                }
            }
        }
        cursor = atom.end;
        from = atom.end;
    }
    out.extend(&chars[cursor..]);
    out
}

fn contains_ignore_ascii_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

struct DataUrl {
    start: usize,
    end: usize,
    mime: std::ops::Range<usize>,
    payload: std::ops::Range<usize>,
    closer: Option<std::ops::Range<usize>>,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_type_char(c: char) -> bool {
    is_word(c) || matches!(c, '.' | '+' | '-')
}

fn is_token_char(c: char) -> bool {
    is_word(c) || "!#$%&'*+.^|~-".contains(c)
}

fn is_base64_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=')
}

fn eat_literal(chars: &[char], at: usize, literal: &str) -> Option<usize> {
    let mut p = at;
    for expected in literal.chars() {
        let c = *chars.get(p)?;
        if !c.eq_ignore_ascii_case(&expected) {
            return None;
        }
        p += 1;
    }
    Some(p)
}

fn eat_while(chars: &[char], mut p: usize, keep: impl Fn(char) -> bool) -> usize {
    while chars.get(p).is_some_and(|&c| keep(c)) {
        p += 1;
    }
    p
}

/// `\[(?:…|\.{3})\d+ch elided(?:…|\.{3})\]` at `at` (case-insensitive
/// letters when `any_case`); returns the end and the number.
fn eat_marker(chars: &[char], at: usize, any_case: bool) -> Option<(usize, usize)> {
    let ellipsis = |p: usize| -> Option<usize> {
        if chars.get(p) == Some(&'…') {
            Some(p + 1)
        } else {
            (chars.get(p..p + 3)? == ['.', '.', '.']).then_some(p + 3)
        }
    };
    let mut p = at;
    if chars.get(p) != Some(&'[') {
        return None;
    }
    p = ellipsis(p + 1)?;
    let digits_start = p;
    p = eat_while(chars, p, |c| c.is_ascii_digit());
    if p == digits_start {
        return None;
    }
    let number: String = chars[digits_start..p].iter().collect();
    p = if any_case {
        eat_literal(chars, p, "ch elided")?
    } else {
        let end = p + 9;
        (chars.get(p..end)?.iter().collect::<String>() == "ch elided").then_some(end)?
    };
    p = ellipsis(p)?;
    if chars.get(p) != Some(&']') {
        return None;
    }
    Some((p + 1, number.parse().unwrap_or(usize::MAX)))
}

/// The leftmost `\s*MARKER\s*` in a payload (case-sensitive): its length in
/// characters and its number.
fn elided_marker(payload: &str) -> Option<(usize, usize)> {
    let chars: Vec<char> = payload.chars().collect();
    (0..chars.len()).find_map(|start| {
        let marker_at = eat_while(&chars, start, js::is_js_whitespace);
        let (end, number) = eat_marker(&chars, marker_at, false)?;
        let end = eat_while(&chars, end, js::is_js_whitespace);
        Some((end - start, number))
    })
}

fn data_url_at(chars: &[char], start: usize) -> Option<DataUrl> {
    let mut p = eat_literal(chars, start, "data:")?;
    let mime_start = p;
    if !chars.get(p)?.is_ascii_alphabetic() {
        return None;
    }
    p = eat_while(chars, p + 1, is_type_char);
    if chars.get(p) != Some(&'/') {
        return None;
    }
    let subtype_start = p + 1;
    p = eat_while(chars, subtype_start, is_type_char);
    if p == subtype_start {
        return None;
    }
    while let Some(after_semicolon) = (chars.get(p) == Some(&';')).then_some(p + 1) {
        let name_end = eat_while(chars, after_semicolon, is_token_char);
        if name_end == after_semicolon || chars.get(name_end) != Some(&'=') {
            break;
        }
        let value_end = eat_while(chars, name_end + 1, is_token_char);
        if value_end == name_end + 1 {
            break;
        }
        p = value_end;
    }
    let mime_end = p;
    p = eat_literal(chars, p, ";base64,")?;
    let payload_start = p;
    p = eat_while(chars, p, is_base64_char);
    let marker_at = eat_while(chars, p, js::is_js_whitespace);
    if let Some((marker_end, _)) = eat_marker(chars, marker_at, true) {
        let after = eat_while(chars, marker_end, js::is_js_whitespace);
        p = eat_while(chars, after, is_base64_char);
    }
    let payload_end = p;
    let close_at = eat_while(chars, p, js::is_js_whitespace);
    let closer = (chars.get(close_at) == Some(&')')).then(|| payload_end..close_at + 1);
    let end = closer.as_ref().map_or(payload_end, |c| c.end);
    Some(DataUrl {
        start,
        end,
        mime: mime_start..mime_end,
        payload: payload_start..payload_end,
        closer,
    })
}

fn find_data_url(chars: &[char], from: usize) -> Option<DataUrl> {
    (from..chars.len()).find_map(|start| data_url_at(chars, start))
}

/// omp's `adjacentMarkdownOpenerStart`: where `![label](` (or `[label](`)
/// begins right before a data URL, not before `cursor`.
fn markdown_opener_start(chars: &[char], data_index: usize, cursor: usize) -> Option<usize> {
    let mut i = data_index;
    while i > cursor && js::is_js_whitespace(chars[i - 1]) {
        i -= 1;
    }
    if i < cursor + 2 || chars[i - 1] != '(' || chars[i - 2] != ']' {
        return None;
    }
    let mut opener = None;
    let mut j = i - 2;
    while j > cursor {
        j -= 1;
        let c = chars[j];
        if c == ']' || c == '\n' {
            break;
        }
        if c == '[' {
            opener = Some(j);
        }
    }
    let opener = opener?;
    Some(if opener > cursor && chars[opener - 1] == '!' {
        opener - 1
    } else {
        opener
    })
}

fn image_block(frame: &Map<String, Value>) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), Value::from("image"));
    block.insert(
        "data".into(),
        SnapcompactFrameRef::new(frame)
            .data()
            .cloned()
            .unwrap_or_default(),
    );
    block.insert(
        "mimeType".into(),
        SnapcompactFrameRef::new(frame)
            .mime_type()
            .cloned()
            .unwrap_or_default(),
    );
    let detail = SnapcompactFrameRef::new(frame).detail();
    if js::truthy(detail) {
        block.insert("detail".into(), detail.cloned().unwrap_or_default());
    }
    Value::Object(block)
}

fn frame_blocks(slots: Vec<Slot>) -> Vec<Value> {
    #[derive(PartialEq, Clone, Copy)]
    enum Gap {
        Unavailable,
        Budget,
    }
    let mut blocks = Vec::new();
    let mut pending: Option<Gap> = None;
    let (mut frames, mut bytes) = (0u64, 0u64);
    let flush =
        |blocks: &mut Vec<Value>, pending: &mut Option<Gap>, frames: &mut u64, bytes: &mut u64| {
            if let Some(gap) = pending.take() {
                let text = match gap {
                    Gap::Unavailable => unavailable_notice(*frames),
                    Gap::Budget => omitted_notice(*frames, *bytes),
                };
                blocks.push(js::text_block(text));
            }
            *frames = 0;
            *bytes = 0;
        };
    for slot in slots {
        let gap = match slot {
            Slot::Frame(frame) => {
                flush(&mut blocks, &mut pending, &mut frames, &mut bytes);
                blocks.push(image_block(&frame));
                continue;
            }
            Slot::Unavailable => Gap::Unavailable,
            Slot::Omitted(size) => {
                if pending.is_some_and(|p| p != Gap::Budget) {
                    flush(&mut blocks, &mut pending, &mut frames, &mut bytes);
                }
                bytes += size;
                Gap::Budget
            }
        };
        if pending.is_some_and(|p| p != gap) {
            flush(&mut blocks, &mut pending, &mut frames, &mut bytes);
        }
        pending = Some(gap);
        frames += 1;
    }
    flush(&mut blocks, &mut pending, &mut frames, &mut bytes);
    blocks
}

/// `count.toLocaleString()` (en-US) for a frame count.
fn group_thousands(count: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    js::to_locale_string(count as f64)
}

fn plural(count: u64) -> &'static str {
    if count == 1 { "" } else { "s" }
}

fn unavailable_notice(count: u64) -> String {
    format!(
        "-------------- {} archived image frame{} unavailable here --------------",
        group_thousands(count),
        plural(count)
    )
}

fn omitted_notice(frames: u64, bytes: u64) -> String {
    let budget_note = if bytes > 0 {
        format!(
            " {} of base64 exceeded the per-request snapcompact payload budget.",
            format_frame_bytes(bytes)
        )
    } else {
        String::new()
    };
    format!(
        "-------------- snapcompact image middle omitted\n{} archived image frame{} could not be included.{budget_note} The compacted summary and visible text edges remain available.\n--------------",
        group_thousands(frames),
        plural(frames)
    )
}

fn format_frame_bytes(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    if bytes >= 1_000_000 {
        format!("{} MB", js::to_fixed(b / 1_000_000.0, 1))
    } else if bytes >= 1_000 {
        format!("{} KB", js::to_fixed(b / 1_000.0, 1))
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_only_archive_becomes_one_block() {
        let preserve = json!({"snapcompact": {"frames": [], "totalChars": 5, "truncatedChars": 0,
            "textHead": "old\u{2588}er", "textTail": "new"}});
        let mut diagnostics = Vec::new();
        let blocks = history_blocks_for(Some(&preserve), None, &mut diagnostics).unwrap();
        assert_eq!(blocks, vec![json!({"type": "text", "text": "old\nernew"})]);
    }

    #[test]
    fn missing_frames_become_gap_markers() {
        let reference = format!("blob:sha256:{}", "c".repeat(64));
        let frame = json!({"data": reference, "mimeType": "image/png", "cols": 1, "rows": 1, "chars": 1, "font": "x"});
        let preserve = json!({"snapcompact": {"frames": [frame.clone(), frame], "truncatedChars": 3,
            "textHead": "h", "textTail": "t"}});
        let mut diagnostics = Vec::new();
        let blocks = history_blocks_for(Some(&preserve), None, &mut diagnostics).unwrap();
        assert_eq!(blocks.len(), 2);
        assert_eq!(
            blocks[1]["text"],
            "-------------- 2 archived image frames unavailable here --------------\n-------------- middle history omitted above\nt"
        );
        assert_eq!(diagnostics.len(), 2);
    }

    #[test]
    fn js_number_formatting() {
        assert_eq!(group_thousands(1_234_567), "1,234,567");
        assert_eq!(format_frame_bytes(1_250_000), "1.3 MB");
        // 1.15 is stored below 1.15, so JavaScript's toFixed(1) gives 1.1 (bun).
        assert_eq!(format_frame_bytes(1_150_000), "1.1 MB");
        assert_eq!(format_frame_bytes(999), "999 B");
    }

    #[test]
    fn data_urls_are_elided_like_omp() {
        // Expected values computed with omp 18.2.3's snapcompact `historyBlocks` under bun.
        let table = [
            (
                "see ![img](data:image/png;base64,iVBORw0KGgo=) ok",
                "see [data URL omitted: image/png, 12 base64 chars] ok",
            ),
            (
                "data:text/plain;charset=utf-8;base64,SGVsbG8= tail",
                "[data URL omitted: text/plain;charset=utf-8, 8 base64 chars] tail",
            ),
            (
                "x DATA:image/PNG;BASE64,abc [...12ch elided...] def ) y",
                "x [data URL omitted: image/PNG, 18 base64 chars] ) y",
            ),
            (
                "[a](data:image/png;base64,AAAA",
                "[a]([data URL omitted: image/png, 4 base64 chars]",
            ),
            (
                "bare data:image/png;base64, end",
                "bare [data URL omitted: image/png, 0 base64 chars] end",
            ),
            (
                "![x](  data:image/jpeg;base64,/9j/4AAQ  )█next ![y](data:image/gif;base64,R0lG[…5ch elided…]AA==)",
                "[data URL omitted: image/jpeg, 8 base64 chars]\nnext [data URL omitted: image/gif, 13 base64 chars]",
            ),
            (
                "a]( data:image/png;base64,QUJD) [b] (data:x/y;base64,Zg==)",
                "a]( [data URL omitted: image/png, 4 base64 chars]) [b] ([data URL omitted: x/y, 4 base64 chars])",
            ),
            ("no url here ;base64, at all", "no url here ;base64, at all"),
            (
                "[x]\n(data:a/b;base64,QQ==)",
                "[x]\n([data URL omitted: a/b, 4 base64 chars])",
            ),
            (
                "two data:a/b;base64,QQ==data:c/d;k=v;base64,Zg==)",
                "two [data URL omitted: a/b, 8 base64 chars]:c/d;k=v;base64,Zg==)",
            ),
            (
                "[l](![m](data:image/png;base64,QQ==))",
                "[l]([data URL omitted: image/png, 4 base64 chars])",
            ),
            (
                "case […3CH ELIDED…] data:i/p;base64,AA[…3CH ELIDED…]BB",
                "case […3CH ELIDED…] [data URL omitted: i/p, 18 base64 chars]",
            ),
        ];
        for (input, expected) in table {
            assert_eq!(elide_data_urls(&to_plain_text(input)), expected, "{input}");
        }
    }
}
