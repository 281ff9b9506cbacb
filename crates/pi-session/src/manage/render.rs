//! What each [`Resolution`] sends for each kind of entry.
//!
//! A rendering is an entry again, in the file's own shape: only the content is cut or replaced,
//! so every projection sends a rendered entry the way it sends the original (rho's `req-llm`
//! leaves `bashExecution` messages and `branch_summary` entries out, pi's and omp's
//! `convertToLlm` send them). The rules, for each level:
//!
//! | entry | Outlined | Summarized |
//! |---|---|---|
//! | user message | text outlined ([`outline_text`]); pictures mentioned | `[user: "first line…" (N chars)]` |
//! | assistant | text outlined; thinking dropped; tool calls kept with every string argument cut to [`ARGUMENT_CHARS`] (first line) | `[assistant: "first line…" (N chars); called read(path: "a.rs")]`; the calls kept with `{}` arguments, so their results still answer them |
//! | tool result | output outlined; pictures mentioned | `[read result: N lines, M chars]` (`[read error: "first line…"]`) |
//! | bash execution | output outlined | output replaced by `[N lines of output]` |
//! | custom message | content outlined; pictures mentioned | `[<customType>: "first line…" (N chars)]` |
//! | branch summary | summary outlined | `[branch summary: "first line…"]` |
//!
//! - **Full** and **Pinned** send the entry unchanged. **Compacted** sends nothing
//!   ([`render`] gives `None`). **Attached** keeps every text and replaces each picture with
//!   `[picture: image/png, 12.3 KB, not sent]` ([`picture_mention`]).
//! - Other entries (settings, labels, custom records, compactions) render unchanged at every
//!   level but Compacted: they send nothing of their own, or the compaction's summary.
//! - Outlining a text keeps its first [`OUTLINE_HEAD_LINES`] and last [`OUTLINE_TAIL_LINES`]
//!   lines, each cut to [`OUTLINE_LINE_CHARS`] characters, with a note of what was cut between
//!   them; a text that short is left as it is. Quotes in summaries are the first non-blank line,
//!   cut to [`QUOTE_CHARS`]. Cuts are by character, never inside one.

use std::fmt::{self, Write as _};

use pi_session_types::view::{BlockRef, EntryRef, MessageRef, key};
use pi_session_types::{JsonMap, JsonValue};
use serde_json::json;

use super::Resolution;

/// Lines an outlined text keeps from its start.
pub const OUTLINE_HEAD_LINES: usize = 3;
/// Lines an outlined text keeps from its end.
pub const OUTLINE_TAIL_LINES: usize = 2;
/// Characters an outlined line keeps.
pub const OUTLINE_LINE_CHARS: usize = 160;
/// Characters a quote in a one-line summary keeps.
pub const QUOTE_CHARS: usize = 80;
/// Characters an outlined tool-call argument keeps.
pub const ARGUMENT_CHARS: usize = 80;
/// The arguments that name what a call works on, in the order a summary looks for them.
pub const KEY_ARGUMENTS: [&str; 9] = [
    "path",
    "file_path",
    "filePath",
    "command",
    "cmd",
    "pattern",
    "query",
    "url",
    "code",
];

/// `entry` (a file entry as JSON) rendered at `level`; `None` when it is not sent at all
/// (Compacted).
///
/// ```
/// use pi_session::manage::{Resolution, render};
/// use serde_json::json;
/// let entry = json!({"type":"message","id":"a","message":{"role":"toolResult","toolCallId":"c1",
///     "toolName":"read","content":[{"type":"text","text":"one\ntwo"}],"isError":false}});
/// let summarized = render(&entry, Resolution::Summarized).unwrap();
/// assert_eq!(summarized["message"]["content"][0]["text"], "[read result: 2 lines, 7 chars]");
/// assert_eq!(render(&entry, Resolution::Full).unwrap(), entry);
/// assert!(render(&entry, Resolution::Compacted).is_none());
/// ```
pub fn render(entry: &JsonValue, level: Resolution) -> Option<JsonValue> {
    match level {
        Resolution::Full | Resolution::Pinned => Some(entry.clone()),
        Resolution::Compacted => None,
        Resolution::Outlined | Resolution::Summarized | Resolution::Attached => {
            let mut out = without_content(entry);
            if let JsonValue::Object(map) = &mut out {
                render_map(map, level, content_of(entry));
            }
            Some(out)
        }
    }
}

/// The content a rendering replaces: a message's (of the roles whose content is rendered) or a
/// custom message's.
fn content_of(entry: &JsonValue) -> Option<&JsonValue> {
    let entry = EntryRef::new(entry);
    match entry.kind() {
        Some("message") => {
            let message = entry.message_ref()?;
            matches!(
                message.role(),
                Some("user" | "developer" | "assistant" | "toolResult")
            )
            .then(|| message.content())
            .flatten()
        }
        Some("custom_message") => entry.content(),
        _ => None,
    }
}

/// A copy of `entry` without the content a rendering replaces ([`content_of`]): that is read
/// from the entry, not copied. Its place (`null`) keeps the key order.
fn without_content(entry: &JsonValue) -> JsonValue {
    let Some(content) = content_of(entry) else {
        return entry.clone();
    };
    let copy = |value: &JsonValue| {
        if std::ptr::eq(value, content) {
            JsonValue::Null
        } else {
            value.clone()
        }
    };
    let JsonValue::Object(map) = entry else {
        return entry.clone();
    };
    JsonValue::Object(
        map.iter()
            .map(|(name, value)| {
                let value = match value {
                    JsonValue::Object(inner) if name == key::MESSAGE => {
                        JsonValue::Object(inner.iter().map(|(k, v)| (k.clone(), copy(v))).collect())
                    }
                    other => copy(other),
                };
                (name.clone(), value)
            })
            .collect(),
    )
}

/// Renders `entry` (a copy [`without_content`]) at `level`; `content` is the original's.
fn render_map(entry: &mut JsonMap, level: Resolution, content: Option<&JsonValue>) {
    let null = JsonValue::Null;
    let content = content.unwrap_or(&null);
    match EntryRef::new(&*entry).kind() {
        Some("message") => {
            if let Some(JsonValue::Object(message)) = entry.get_mut(key::MESSAGE) {
                render_message(message, level, content);
            }
        }
        Some("custom_message") => {
            let kind = EntryRef::new(&*entry)
                .custom_type()
                .and_then(JsonValue::as_str)
                .unwrap_or("custom")
                .to_owned();
            let rendered = match level {
                Resolution::Summarized => JsonValue::String(content_summary(&kind, content)),
                Resolution::Outlined => outline_content(content),
                _ => attach_content(content),
            };
            entry.insert("content".into(), rendered);
        }
        Some("branch_summary") => {
            let summary = EntryRef::new(&*entry)
                .summary()
                .and_then(JsonValue::as_str)
                .unwrap_or_default()
                .to_owned();
            let rendered = match level {
                Resolution::Summarized => format!("[branch summary: {}]", quote(&summary)),
                Resolution::Outlined => outline_text(&summary),
                _ => summary,
            };
            entry.insert("summary".into(), rendered.into());
        }
        _ => {}
    }
}

/// Renders `message` (copied [`without_content`]) at `level`; `content` is the original's.
fn render_message(message: &mut JsonMap, level: Resolution, content: &JsonValue) {
    let role = MessageRef::new(&*message).role().map(str::to_owned);
    match role.as_deref() {
        Some("user" | "developer") => {
            let rendered = match level {
                Resolution::Summarized => JsonValue::String(content_summary("user", content)),
                Resolution::Outlined => outline_content(content),
                _ => attach_content(content),
            };
            message.insert("content".into(), rendered);
        }
        Some("assistant") => {
            let rendered = match level {
                Resolution::Summarized => summarize_assistant(content),
                Resolution::Outlined => outline_assistant(content),
                _ => attach_content(content),
            };
            message.insert("content".into(), rendered);
        }
        Some("toolResult") => {
            let name = MessageRef::new(&*message)
                .tool_name()
                .and_then(JsonValue::as_str)
                .unwrap_or("tool")
                .to_owned();
            let is_error = MessageRef::new(&*message)
                .is_error()
                .and_then(JsonValue::as_bool)
                == Some(true);
            let rendered = match level {
                Resolution::Summarized => {
                    json!([{"type": "text", "text": result_summary(&name, is_error, content)}])
                }
                Resolution::Outlined => outline_content(content),
                _ => attach_content(content),
            };
            message.insert("content".into(), rendered);
        }
        Some("bashExecution") => {
            let output = MessageRef::new(&*message)
                .output()
                .and_then(JsonValue::as_str)
                .unwrap_or_default()
                .to_owned();
            let rendered = match level {
                Resolution::Summarized => {
                    format!("[{} of output]", counted(line_count(&output), "line"))
                }
                Resolution::Outlined => outline_text(&output),
                _ => output,
            };
            message.insert("output".into(), rendered.into());
        }
        _ => {}
    }
}

/// Every text part outlined, every picture mentioned (a string content outlined).
fn outline_content(content: &JsonValue) -> JsonValue {
    match content {
        JsonValue::String(text) => JsonValue::String(outline_text(text)),
        JsonValue::Array(parts) => JsonValue::Array(
            parts
                .iter()
                .map(|part| match part_type(part) {
                    Some("text") => {
                        let mut part = part.clone();
                        if let Some(text) = BlockRef::new(&part).text().and_then(JsonValue::as_str)
                        {
                            part[key::TEXT] = outline_text(text).into();
                        }
                        part
                    }
                    Some("image") => mention_part(part),
                    _ => part.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Every picture replaced by its mention; everything else kept.
fn attach_content(content: &JsonValue) -> JsonValue {
    match content {
        JsonValue::Array(parts) => JsonValue::Array(
            parts
                .iter()
                .map(|part| match part_type(part) {
                    Some("image") => mention_part(part),
                    _ => part.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

fn outline_assistant(content: &JsonValue) -> JsonValue {
    let JsonValue::Array(parts) = content else {
        return outline_content(content);
    };
    JsonValue::Array(
        parts
            .iter()
            .filter(|part| part_type(part) != Some("thinking"))
            .map(|part| match part_type(part) {
                Some("toolCall") => {
                    let mut call = part.clone();
                    if let Some(arguments) = BlockRef::new(part).arguments() {
                        call[key::ARGUMENTS] = cut_arguments(arguments);
                    }
                    call
                }
                _ => outline_content(&JsonValue::Array(vec![part.clone()]))
                    .as_array()
                    .and_then(|a| a.first().cloned())
                    .unwrap_or(JsonValue::Null),
            })
            .collect(),
    )
}

/// The one line a user message or custom message (of type `kind`) is summarized as:
/// `[user: "first line…" (N chars)]`.
pub(crate) fn content_summary(kind: &str, content: &JsonValue) -> String {
    let text = joined_text(content);
    let pictures = pictures_in(content).len();
    written(|out| write_content_summary(out, kind, &Said::of(&text), pictures))
}

/// Writes [`content_summary`] from what is said of the content's joined text and its number of
/// pictures.
pub(crate) fn write_content_summary<S: AsRef<str>>(
    out: &mut impl fmt::Write,
    kind: &str,
    said: &Said<S>,
    pictures: usize,
) -> fmt::Result {
    write!(out, "[{kind}: ")?;
    said.write_with_size(out, pictures)?;
    out.write_str("]")
}

/// The one line a tool result of tool `name` is summarized as: `[read result: N lines, N
/// chars]`, or `[read error: "first line…"]`.
pub(crate) fn result_summary(name: &str, is_error: bool, content: &JsonValue) -> String {
    let text = joined_text(content);
    let pictures = pictures_in(content).len();
    written(|out| write_result_summary(out, name, is_error, &Said::of(&text), pictures))
}

/// Writes [`result_summary`] from what is said of the content's joined text and its number of
/// pictures.
pub(crate) fn write_result_summary<S: AsRef<str>>(
    out: &mut impl fmt::Write,
    name: &str,
    is_error: bool,
    said: &Said<S>,
    pictures: usize,
) -> fmt::Result {
    if is_error {
        write!(out, "[{name} error: ")?;
        write_quote(out, said.quote())?;
        return out.write_str("]");
    }
    write!(out, "[{name} result: ")?;
    write_counted(out, said.lines, "line")?;
    out.write_str(", ")?;
    said.write_size(out, pictures)?;
    out.write_str("]")
}

/// The one line an assistant message is summarized as (its calls follow it, without
/// arguments): `[assistant: "first line…" (N chars); called read(path: "src/lib.rs")]`.
pub(crate) fn assistant_summary(content: &JsonValue) -> String {
    let calls: Vec<String> = calls_in(content)
        .into_iter()
        .map(|call| {
            call_outline(
                BlockRef::new(call).name().and_then(JsonValue::as_str),
                BlockRef::new(call).arguments(),
            )
        })
        .collect();
    let text = joined_text(content);
    let pictures = pictures_in(content).len();
    written(|out| write_assistant_summary(out, &Said::of(&text), pictures, &calls))
}

/// Writes [`assistant_summary`] from what is said of the content's joined text, its number of
/// pictures and its calls' outlines ([`call_outline`]).
pub(crate) fn write_assistant_summary<S: AsRef<str>>(
    out: &mut impl fmt::Write,
    said: &Said<S>,
    pictures: usize,
    calls: &[String],
) -> fmt::Result {
    out.write_str("[assistant: ")?;
    let blank = said.quote.is_none();
    if !blank {
        said.write_with_size(out, pictures)?;
    }
    if let Some((first, rest)) = calls.split_first() {
        out.write_str(if blank { "called " } else { "; called " })?;
        out.write_str(first)?;
        for call in rest {
            out.write_str(", ")?;
            out.write_str(call)?;
        }
    }
    if blank && calls.is_empty() {
        Said::<&str>::default().write_with_size(out, pictures)?;
    }
    out.write_str("]")
}

/// The tool calls of an assistant message's content.
fn calls_in(content: &JsonValue) -> Vec<&JsonValue> {
    match content {
        JsonValue::Array(parts) => parts
            .iter()
            .filter(|p| part_type(p) == Some("toolCall"))
            .collect(),
        _ => Vec::new(),
    }
}

fn summarize_assistant(content: &JsonValue) -> JsonValue {
    let calls = calls_in(content);
    let mut parts = vec![json!({"type": "text", "text": assistant_summary(content)})];
    parts.extend(calls.into_iter().map(|call| {
        let mut call = call.clone();
        call[key::ARGUMENTS] = json!({});
        call
    }));
    JsonValue::Array(parts)
}

/// `read(path: "src/lib.rs")`: the tool's name (a call's `name`, when a string) and its key
/// argument ([`KEY_ARGUMENTS`], else the first one) of its `arguments`, quoted.
pub(crate) fn call_outline(name: Option<&str>, arguments: Option<&JsonValue>) -> String {
    let name = name.unwrap_or("tool");
    let Some(JsonValue::Object(arguments)) = arguments else {
        return format!("{name}()");
    };
    let key = KEY_ARGUMENTS
        .iter()
        .find_map(|k| arguments.get_key_value(*k))
        .or_else(|| arguments.iter().next());
    match key {
        Some((k, v)) => {
            let shown = match v {
                JsonValue::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{name}({k}: {})", quote(&shown))
        }
        None => format!("{name}()"),
    }
}

/// Every string in `arguments` cut to its first line and [`ARGUMENT_CHARS`] characters.
fn cut_arguments(arguments: &JsonValue) -> JsonValue {
    match arguments {
        JsonValue::String(s) => {
            let first = s.split('\n').next().unwrap_or_default();
            let cut = cut_chars(first, ARGUMENT_CHARS);
            if cut.len() == s.len() {
                arguments.clone()
            } else {
                JsonValue::String(format!(
                    "{cut}… [{} chars cut]",
                    s.chars().count() - cut.chars().count()
                ))
            }
        }
        JsonValue::Array(items) => JsonValue::Array(items.iter().map(cut_arguments).collect()),
        JsonValue::Object(map) => JsonValue::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cut_arguments(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A text's outline: its first [`OUTLINE_HEAD_LINES`] and last [`OUTLINE_TAIL_LINES`] lines,
/// each cut to [`OUTLINE_LINE_CHARS`] characters, and a note of the lines cut between them.
///
/// ```
/// use pi_session::manage::render::outline_text;
/// let text = (1..=10).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n");
/// assert_eq!(outline_text(&text), "line 1\nline 2\nline 3\n[… 5 lines cut …]\nline 9\nline 10");
/// assert_eq!(outline_text("short"), "short");
/// ```
pub fn outline_text(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let keep = OUTLINE_HEAD_LINES + OUTLINE_TAIL_LINES;
    let mut out: Vec<String> = Vec::new();
    if lines.len() > keep + 1 {
        out.extend(lines[..OUTLINE_HEAD_LINES].iter().map(|l| cap_line(l)));
        out.push(format!("[… {} cut …]", counted(lines.len() - keep, "line")));
        out.extend(
            lines[lines.len() - OUTLINE_TAIL_LINES..]
                .iter()
                .map(|l| cap_line(l)),
        );
    } else {
        out.extend(lines.iter().map(|l| cap_line(l)));
    }
    out.join("\n")
}

fn cap_line(line: &str) -> String {
    let cut = cut_chars(line, OUTLINE_LINE_CHARS);
    if cut.len() == line.len() {
        line.to_owned()
    } else {
        format!(
            "{cut}… [{} chars cut]",
            line.chars().count() - cut.chars().count()
        )
    }
}

/// The first `n` characters of `text`.
fn cut_chars(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// `"first line…"`: the first non-blank line, cut to [`QUOTE_CHARS`], `…` when anything was
/// left out; `nothing` for a blank text.
fn quote(text: &str) -> String {
    written(|out| write_quote(out, Said::of(text).quote()))
}

/// What a summary line says of a text: its quote and its sizes, read once ([`Said::of`]) and
/// written by the `write_*_summary` functions, into a line or into a [`Counter`] (the planner
/// measures every entry's line but builds only those it sends).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Said<S> {
    /// The first non-blank line cut to [`QUOTE_CHARS`], and whether anything was left out;
    /// `None` for a blank text.
    quote: Option<(S, bool)>,
    /// Its characters.
    chars: usize,
    /// Its lines ([`line_count`]).
    lines: usize,
}

impl<'t> Said<&'t str> {
    /// What is said of `text`.
    pub(crate) fn of(text: &'t str) -> Self {
        let trimmed = text.trim();
        let quote = trimmed
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|first| {
                let cut = cut_chars(first, QUOTE_CHARS);
                (cut, cut.len() < trimmed.len())
            });
        Said {
            quote,
            chars: text.chars().count(),
            lines: line_count(text),
        }
    }

    /// The same, owning its quote.
    pub(crate) fn owned(&self) -> Said<String> {
        Said {
            quote: self.quote.map(|(cut, more)| (cut.to_owned(), more)),
            chars: self.chars,
            lines: self.lines,
        }
    }
}

impl<S: AsRef<str>> Said<S> {
    fn quote(&self) -> Option<(&str, bool)> {
        self.quote.as_ref().map(|(cut, more)| (cut.as_ref(), *more))
    }

    /// `"first line…" (N chars, N pictures)`.
    fn write_with_size(&self, out: &mut impl fmt::Write, pictures: usize) -> fmt::Result {
        write_quote(out, self.quote())?;
        out.write_str(" (")?;
        self.write_size(out, pictures)?;
        out.write_str(")")
    }

    /// `N chars, N pictures` (no pictures: `N chars`).
    fn write_size(&self, out: &mut impl fmt::Write, pictures: usize) -> fmt::Result {
        write_counted(out, self.chars, "char")?;
        if pictures > 0 {
            out.write_str(", ")?;
            write_counted(out, pictures, "picture")?;
        }
        Ok(())
    }
}

/// Writes a quote: the cut line as a Rust string literal (`{:?}`), `…` inside its closing
/// quote when anything was left out; `nothing` for none.
fn write_quote(out: &mut impl fmt::Write, quote: Option<(&str, bool)>) -> fmt::Result {
    match quote {
        None => out.write_str("nothing"),
        Some((cut, false)) => write!(out, "{cut:?}"),
        Some((cut, true)) => {
            // `{:?}` escapes a string a character at a time: the literal of `cut` followed by
            // `…` is `cut`'s literal without its closing quote, then `…"`.
            write!(
                Unclosed {
                    out: &mut *out,
                    last: None
                },
                "{cut:?}"
            )?;
            out.write_str("…\"")
        }
    }
}

/// Passes on all it is written but the last character.
struct Unclosed<'w, W> {
    out: &'w mut W,
    last: Option<char>,
}

impl<W: fmt::Write> fmt::Write for Unclosed<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let Some(end) = s.chars().next_back() else {
            return Ok(());
        };
        if let Some(last) = self.last.take() {
            self.out.write_char(last)?;
        }
        self.out.write_str(&s[..s.len() - end.len_utf8()])?;
        self.last = Some(end);
        Ok(())
    }
}

/// A [`fmt::Write`] that only counts the bytes written to it.
#[derive(Debug, Default)]
pub(crate) struct Counter(pub(crate) usize);

impl fmt::Write for Counter {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

/// The text `write` writes (writing to a `String` cannot fail).
pub(crate) fn written(write: impl FnOnce(&mut String) -> fmt::Result) -> String {
    let mut out = String::new();
    // A `String`'s `fmt::Write` never fails.
    let _ = write(&mut out);
    out
}

/// The bytes `write` writes, counted without building them.
pub(crate) fn written_len(write: impl FnOnce(&mut Counter) -> fmt::Result) -> usize {
    let mut counter = Counter::default();
    let _ = write(&mut counter);
    counter.0
}

/// The text of a string content, or of every text part, joined by newlines.
fn joined_text(content: &JsonValue) -> String {
    match content {
        JsonValue::String(s) => s.clone(),
        JsonValue::Array(parts) => parts
            .iter()
            .filter(|p| part_type(p) == Some("text"))
            .filter_map(|p| BlockRef::new(p).text().and_then(JsonValue::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn pictures_in(content: &JsonValue) -> Vec<String> {
    match content {
        JsonValue::Array(parts) => parts
            .iter()
            .filter(|p| part_type(p) == Some("image"))
            .map(picture_mention)
            .collect(),
        _ => Vec::new(),
    }
}

fn part_type(part: &JsonValue) -> Option<&str> {
    BlockRef::new(part).kind()
}

fn mention_part(part: &JsonValue) -> JsonValue {
    json!({"type": "text", "text": picture_mention(part)})
}

/// The one-line mention that stands for a picture part: `[picture: image/png, 12.3 KB, not
/// sent]` (its decoded size; omp's blob references by their hash).
pub fn picture_mention(part: &JsonValue) -> String {
    let mime = BlockRef::new(part)
        .mime_type()
        .and_then(JsonValue::as_str)
        .unwrap_or("unknown type");
    let data = BlockRef::new(part)
        .data()
        .and_then(JsonValue::as_str)
        .unwrap_or_default();
    let size = match data.strip_prefix("blob:sha256:") {
        Some(hash) => format!("blob {}", cut_chars(hash, 12)),
        None => kilobytes(data.trim_end_matches('=').len() as u64 * 3 / 4),
    };
    format!("[picture: {mime}, {size}, not sent]")
}

fn kilobytes(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{}.{} KB", bytes / 1024, (bytes % 1024) * 10 / 1024)
    }
}

fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        newlines(text.trim_end_matches('\n')) + 1
    }
}

/// The newlines in `text` (its `split('\n')` count less one), counted a byte at a time
/// without splitting: a tool's long output is measured for every entry of a planned branch.
pub(crate) fn newlines(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
}

/// `1 line`, `2 lines`.
pub(crate) fn counted(n: usize, what: &str) -> String {
    written(|out| write_counted(out, n, what))
}

/// Writes [`counted`].
fn write_counted(out: &mut impl fmt::Write, n: usize, what: &str) -> fmt::Result {
    if n == 1 {
        write!(out, "1 {what}")
    } else {
        write!(out, "{n} {what}s")
    }
}
