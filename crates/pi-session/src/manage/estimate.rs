//! Cheap size estimates of an entry's renderings, for the planner's first pass.
//!
//! [`estimate`] says how many tokens an entry would be sent with at a level without rendering
//! it or projecting it: it walks the entry's JSON once and adds up the bytes that rho's
//! projection sends (texts, tool-call names and arguments), counting them at
//! [`BYTES_PER_TOKEN`] whatever the counter, each text the counter counts on its own rounded up
//! to whole tokens as the default counter rounds it, and pictures at [`PICTURE_TOKENS`].
//! Outlined sizes follow [`render`](super::render)'s rules arithmetically (head and tail lines,
//! capped lines) from byte lengths. A Summarized entry is one short line, which is built (by
//! the renderer's own functions, without copying the entry) and measured: estimating it from a
//! fixed size ran two to four times over, and the planner then evicted turns that fitted.
//!
//! An estimate is not the count: the planner renders only what its first pass keeps, counts
//! that with the real counter, and goes on down the same ladder when it is still over.

use pi_session_types::JsonValue;
use pi_session_types::view::{BlockRef, EntryRef, MessageRef};

use super::Resolution;
use super::render::{
    ARGUMENT_CHARS, OUTLINE_HEAD_LINES, OUTLINE_LINE_CHARS, OUTLINE_TAIL_LINES, assistant_summary,
    content_summary, result_summary,
};
use crate::stats::{BYTES_PER_TOKEN, PICTURE_TOKENS};

/// Bytes of the notes renderings add: `… [N chars cut]`, `[… N lines cut …]`, a picture's
/// mention.
pub(super) const NOTE_BYTES: usize = 24;

/// The estimated tokens of `entry` sent at `level`; a tool result at Full or Attached is cut
/// to `limit` bytes when one is given (bounded tool results).
pub(crate) fn estimate(entry: &JsonValue, level: Resolution, limit: Option<usize>) -> u64 {
    let (bytes, pictures) = sent_bytes(entry, level, limit);
    (bytes as u64).div_ceil(BYTES_PER_TOKEN) + pictures * PICTURE_TOKENS
}

/// The bytes of text and the pictures `entry` is sent with at `level`.
fn sent_bytes(entry: &JsonValue, level: Resolution, limit: Option<usize>) -> (usize, u64) {
    if level == Resolution::Compacted {
        return (0, 0);
    }
    let pictures_sent = matches!(level, Resolution::Full | Resolution::Pinned);
    let entry = EntryRef::new(entry);
    match entry.kind() {
        Some("message") => {
            let message = MessageRef::new(entry.message());
            let content = message.content();
            match message.role() {
                Some("user" | "developer") => content_bytes("user", content, level, pictures_sent),
                Some("assistant") => assistant_bytes(content, level),
                Some("toolResult") => {
                    let (text, pictures) = texts(content);
                    let bytes = match level {
                        Resolution::Summarized => {
                            let name = message
                                .tool_name()
                                .and_then(JsonValue::as_str)
                                .unwrap_or("tool");
                            let is_error =
                                message.is_error().and_then(JsonValue::as_bool) == Some(true);
                            let empty = JsonValue::Null;
                            piece(result_summary(name, is_error, content.unwrap_or(&empty)).len())
                        }
                        Resolution::Outlined => outlined(content) + pictures * NOTE_BYTES,
                        Resolution::Full | Resolution::Attached => {
                            let text = limit.map_or(text, |l| text.min(l + 4 * NOTE_BYTES));
                            text + usize::from(level == Resolution::Attached)
                                * pictures
                                * NOTE_BYTES
                        }
                        _ => text,
                    };
                    (bytes, if pictures_sent { pictures as u64 } else { 0 })
                }
                _ => (0, 0),
            }
        }
        Some("custom_message") => {
            let kind = entry
                .custom_type()
                .and_then(JsonValue::as_str)
                .unwrap_or("custom");
            content_bytes(kind, entry.content(), level, pictures_sent)
        }
        _ => (0, 0),
    }
}

/// A user message's or custom message's (of type `kind`) content at `level`.
fn content_bytes(
    kind: &str,
    content: Option<&JsonValue>,
    level: Resolution,
    pictures_sent: bool,
) -> (usize, u64) {
    let (text, pictures) = texts(content);
    match level {
        Resolution::Summarized => {
            let empty = JsonValue::Null;
            (
                piece(content_summary(kind, content.unwrap_or(&empty)).len()),
                0,
            )
        }
        Resolution::Outlined => (outlined(content) + pictures * NOTE_BYTES, 0),
        Resolution::Attached => (text + pictures * NOTE_BYTES, 0),
        _ => (text, if pictures_sent { pictures as u64 } else { 0 }),
    }
}

/// An assistant message at `level`: its text, and each call's name and arguments.
fn assistant_bytes(content: Option<&JsonValue>, level: Resolution) -> (usize, u64) {
    let calls = || {
        content
            .and_then(JsonValue::as_array)
            .into_iter()
            .flatten()
            .map(BlockRef::new)
            .filter(|p| p.is("toolCall"))
    };
    let name = |call: BlockRef| call.name().and_then(JsonValue::as_str).map_or(0, str::len);
    let (text, _) = texts(content);
    let bytes = match level {
        Resolution::Summarized => {
            let empty = JsonValue::Null;
            piece(assistant_summary(content.unwrap_or(&empty)).len())
                + calls().map(|c| piece(name(c)) + piece(2)).sum::<usize>()
        }
        Resolution::Outlined => {
            outlined(content)
                + calls()
                    .map(|c| name(c) + c.arguments().map_or(2, cut_arguments_len))
                    .sum::<usize>()
        }
        _ => {
            text + calls()
                .map(|c| name(c) + c.arguments().map_or(2, json_len))
                .sum::<usize>()
        }
    };
    (bytes, 0)
}

/// `bytes` of one text the counter counts on its own, rounded up to whole tokens (the count is
/// `ceil(bytes / 4)` per text, so the sum of rounded pieces over 4 is the sum of the counts).
pub(super) fn piece(bytes: usize) -> usize {
    bytes.div_ceil(BYTES_PER_TOKEN as usize) * BYTES_PER_TOKEN as usize
}

/// The bytes of a content's text (a string, or its text parts, each a [`piece`]) and its
/// pictures.
fn texts(content: Option<&JsonValue>) -> (usize, usize) {
    match content {
        Some(JsonValue::String(s)) => (piece(s.len()), 0),
        Some(JsonValue::Array(parts)) => parts.iter().fold((0, 0), |(text, pictures), part| {
            let part = BlockRef::new(part);
            match part.kind() {
                Some("text") => (text + piece(part.text_str().map_or(0, str::len)), pictures),
                Some("image") => (text, pictures + 1),
                _ => (text, pictures),
            }
        }),
        _ => (0, 0),
    }
}

/// The bytes of a content's text parts, each outlined.
fn outlined(content: Option<&JsonValue>) -> usize {
    match content {
        Some(JsonValue::String(s)) => outlined_len(s),
        Some(JsonValue::Array(parts)) => parts
            .iter()
            .map(BlockRef::new)
            .filter(|p| p.is("text"))
            .filter_map(BlockRef::text_str)
            .map(outlined_len)
            .sum(),
        _ => 0,
    }
}

/// The length of [`outline_text`](super::render::outline_text)'s result, from byte lengths.
pub(super) fn outlined_len(text: &str) -> usize {
    let capped = |line: &str| line.len().min(OUTLINE_LINE_CHARS + NOTE_BYTES);
    let keep = OUTLINE_HEAD_LINES + OUTLINE_TAIL_LINES;
    let lines = super::render::newlines(text) + 1;
    if lines <= keep + 1 {
        return text.split('\n').map(|l| capped(l) + 1).sum::<usize>() - 1;
    }
    let head: usize = text
        .split('\n')
        .take(OUTLINE_HEAD_LINES)
        .map(|l| capped(l) + 1)
        .sum();
    let tail: usize = text
        .rsplit('\n')
        .take(OUTLINE_TAIL_LINES)
        .map(|l| capped(l) + 1)
        .sum();
    let note = format!("[… {} cut …]", super::render::counted(lines - keep, "line"));
    head + note.len() + tail
}

/// The serialized length of `arguments` with every string cut as an outline cuts it.
pub(super) fn cut_arguments_len(arguments: &JsonValue) -> usize {
    match arguments {
        JsonValue::String(s) => s.len().min(ARGUMENT_CHARS + NOTE_BYTES) + 2,
        JsonValue::Array(items) => {
            2 + items
                .iter()
                .map(|v| cut_arguments_len(v) + 1)
                .sum::<usize>()
        }
        JsonValue::Object(map) => {
            2 + map
                .iter()
                .map(|(k, v)| k.len() + 4 + cut_arguments_len(v))
                .sum::<usize>()
        }
        other => json_len(other),
    }
}

/// The serialized length of `value`, without building the text.
pub(super) fn json_len(value: &JsonValue) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::manage::render::{outline_text, render};

    #[test]
    fn outlined_lengths_follow_outline_text() {
        for text in [
            "short",
            "",
            "a\nb\nc",
            &(0..40)
                .map(|n| format!("line {n}"))
                .collect::<Vec<_>>()
                .join("\n"),
        ] {
            assert_eq!(outlined_len(text), outline_text(text).len(), "{text:?}");
        }
    }

    #[test]
    fn estimates_shrink_with_the_level_and_are_near_the_rendering() {
        let output = (0..200)
            .map(|n| format!("{n:>4} let value = compute(input, {n});"))
            .collect::<Vec<_>>()
            .join("\n");
        let entry = json!({"type":"message","id":"r","message":{"role":"toolResult",
            "toolCallId":"c","toolName":"read","content":[{"type":"text","text":output}],"isError":false}});
        let full = estimate(&entry, Resolution::Full, None);
        let outlined = estimate(&entry, Resolution::Outlined, None);
        let summarized = estimate(&entry, Resolution::Summarized, None);
        assert!(
            full > outlined && outlined > summarized,
            "{full} {outlined} {summarized}"
        );
        assert_eq!(full, (output.len() as u64).div_ceil(BYTES_PER_TOKEN));
        assert_eq!(estimate(&entry, Resolution::Compacted, None), 0);
        assert!(estimate(&entry, Resolution::Full, Some(400)) < full / 10);
        let rendered = render(&entry, Resolution::Outlined).unwrap();
        let text = rendered["message"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(outlined, (text.len() as u64).div_ceil(BYTES_PER_TOKEN));
    }
}
