//! Session summaries: what pi's and omp's resume pickers show for a session — its name (pi's
//! `session_info`, omp's title), else its first user message; how many messages it holds; when
//! it was last active; the model in effect; and omp's coarse status from the file's tail.
//!
//! A summary reads a bounded prefix ([`SUMMARY_PREFIX_BYTES`]) and tail ([`SUMMARY_TAIL_BYTES`])
//! of each file, never the whole file (pi 0.73 reads every file whole; omp reads 4 KiB and
//! 32 KiB). A file no bigger than both windows together is read whole and every count is exact;
//! for a larger one the message count covers the two windows only
//! ([`SessionSummary::message_count_exact`] says which), and a `session_info` in the unread
//! middle is not seen.
//!
//! The rules, and whose they are:
//! - name: pi's latest `session_info` in file order (a blank name clears it,
//!   [`pi_session_tree::session_meta::pi_session_name`]), else omp's title (title slot, else the
//!   header's `title`, as the store lists it);
//! - first message: pi's `buildSessionInfo` — the first user message with text (a string
//!   content, or its text blocks joined with a space);
//! - last activity: pi's `getLastActivityTime` — the `message.timestamp` (a number) or else
//!   entry `timestamp` of a user or assistant message; pi takes the latest of all, we take the
//!   last one's (the same in an append-only file unless the clock went back);
//! - model: rho's rule ([`pi_session_tree::pi_model_from`]) over the lines read;
//! - status: omp's `deriveSessionStatus` over the tail ([`SessionStatus`]).

use pi_session_types::view::{BlockRef, EntryRef, MessageRef};
use std::borrow::Cow;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pi_session_store::{
    Diagnostic, DiagnosticKind, ListProblem, SessionListing, Store, StoreError,
};
use pi_session_tree::{pi_model_from, session_meta::pi_session_name};
use pi_session_types::js;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::error::Result;

/// Bytes read from the start of a file for its summary.
pub const SUMMARY_PREFIX_BYTES: u64 = 64 * 1024;
/// Bytes read from the end of a file for its summary (omp reads 32 KiB for the status).
pub const SUMMARY_TAIL_BYTES: u64 = 64 * 1024;

/// omp's coarse lifecycle status of a session, from its last `message` entry (omp 18.2.3
/// `session-listing.ts`, `deriveSessionStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SessionStatus {
    /// The last assistant turn ended without unanswered tool calls.
    Complete,
    /// Cut off: trailing tool calls, a trailing tool result, or a `length` stop.
    Interrupted,
    /// The last assistant turn was cancelled (`stopReason: "aborted"`).
    Aborted,
    /// The last assistant turn ended in an error.
    Error,
    /// A trailing user message with no reply.
    Pending,
    /// No message in the tail window (or another role last).
    Unknown,
}

impl SessionStatus {
    /// The name omp uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Interrupted => "interrupted",
            Self::Aborted => "aborted",
            Self::Error => "error",
            Self::Pending => "pending",
            Self::Unknown => "unknown",
        }
    }

    /// omp's `statusFromTailMessage`: the status a last `message` entry's message gives.
    pub fn of_message(message: &Value) -> Self {
        match MessageRef::new(message).role() {
            Some("assistant") => match MessageRef::new(message).stop_reason() {
                Some("error") => Self::Error,
                Some("aborted") => Self::Aborted,
                Some("length") => Self::Interrupted,
                _ => {
                    let calls = MessageRef::new(message)
                        .content()
                        .and_then(Value::as_array)
                        .is_some_and(|blocks| {
                            blocks.iter().any(|b| BlockRef::new(b).is("toolCall"))
                        });
                    if calls {
                        Self::Interrupted
                    } else {
                        Self::Complete
                    }
                }
            },
            Some("toolResult") => Self::Interrupted,
            Some("user") => Self::Pending,
            _ => Self::Unknown,
        }
    }
}

/// What a resume picker shows for one session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// Header facts, title slot, size and modification time (the store's listing).
    pub listing: SessionListing,
    /// The session's name: pi's `session_info`, else omp's title.
    pub name: Option<String>,
    /// The first user message with text (whole, as written).
    pub first_message: Option<String>,
    /// `message` entries counted (every role).
    pub message_count: u64,
    /// True when the whole file was read, so `message_count` is every message of the file.
    pub message_count_exact: bool,
    /// pi's last activity (Unix ms), when a user or assistant message gives one.
    pub last_activity: Option<i64>,
    /// The model in effect (`provider/model`), by rho's rule over the lines read.
    pub model: Option<String>,
    /// omp's status from the tail.
    pub status: SessionStatus,
}

impl SessionSummary {
    /// What the picker shows as the session's label: the name, else the first message's first
    /// line.
    pub fn label(&self) -> Option<&str> {
        self.name.as_deref().or_else(|| {
            self.first_message
                .as_deref()
                .map(|m| m.lines().find(|l| !l.trim().is_empty()).unwrap_or(m))
        })
    }

    /// pi's `modified` date (Unix ms): the last activity, else the header's timestamp, else the
    /// file's modification time.
    pub fn activity_ms(&self) -> i64 {
        let created = self
            .listing
            .created
            .as_deref()
            .and_then(js::parse_date_string);
        self.last_activity
            .filter(|&ms| ms > 0)
            .or(created)
            .unwrap_or_else(|| system_ms(self.listing.modified))
    }
}

/// Unix milliseconds of a file time (0 before the epoch).
pub fn system_ms(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Summarises one session file: `Ok(Err(..))` when it is not a session (see
/// [`pi_session_store::read_listing`]).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.jsonl");
/// std::fs::write(&path, concat!(
///     r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
///     r#"{"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"fix the build","timestamp":1767225601000}}"#, "\n",
/// ))?;
/// let summary = pi_session::summarize(&path)?.unwrap();
/// assert_eq!(summary.label(), Some("fix the build"));
/// assert_eq!((summary.message_count, summary.status), (1, pi_session::SessionStatus::Pending));
/// # Ok(()) }
/// ```
pub fn summarize(
    path: impl AsRef<Path>,
) -> Result<std::result::Result<SessionSummary, Diagnostic>> {
    summarize_with(path.as_ref(), &mut Vec::new())
}

/// [`summarize`] reading through `buffer` (kept between files by [`summaries`], so that a
/// folder of sessions is read without an allocation of its windows per file).
fn summarize_with(
    path: &Path,
    buffer: &mut Vec<u8>,
) -> Result<std::result::Result<SessionSummary, Diagnostic>> {
    // One open and one read of each window serve both the listing and the summary.
    let mut file = File::open(path).map_err(|e| StoreError::io("could not open", path, e))?;
    let metadata = file
        .metadata()
        .map_err(|e| StoreError::io("could not read the metadata of", path, e))?;
    let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let tail_at = read_windows_into(&mut file, path, metadata.len(), buffer)?;
    let (prefix, tail) = split_windows(buffer, tail_at);
    let listing =
        match pi_session_store::read_listing_with_head(path, prefix, modified, metadata.len())? {
            Ok(listing) => listing,
            Err(diagnostic) => return Ok(Err(diagnostic)),
        };
    Ok(Ok(summarize_windows(listing, prefix, tail)))
}

/// Summarises a session the store has listed (reads its prefix and tail windows).
///
/// Lines are typed by their envelope alone (no body is parsed to count messages); bodies are
/// parsed only for what is shown: `session_info` and `model_change` lines, messages from the
/// start until the first user message with text, and messages from the end until the status,
/// the last activity and the model are known.
pub fn summarize_listing(listing: SessionListing) -> Result<SessionSummary> {
    let path = &listing.path;
    let mut file = File::open(path).map_err(|e| StoreError::io("could not open", path, e))?;
    let mut buffer = Vec::new();
    let tail_at = read_windows_into(&mut file, path, listing.size, &mut buffer)?;
    let (prefix, tail) = split_windows(&buffer, tail_at);
    Ok(summarize_windows(listing, prefix, tail))
}

/// [`summaries`] for sessions kept in `store` (files: `dir` as [`summaries`] reads it; a keyed
/// store such as Redis: the `*.jsonl` sessions directly in `dir`, or all of them, reading only
/// each session's prefix and tail windows, with omp's title overlaid).
pub fn summaries_in(
    store: &Store,
    dir: Option<&Path>,
) -> Result<(Vec<SessionSummary>, Vec<ListProblem>)> {
    let Store::Keyed(keyed) = store else {
        return match dir {
            Some(dir) => summaries(dir),
            None => Ok((Vec::new(), Vec::new())),
        };
    };
    let (listings, mut problems) = store.list(dir)?;
    let mut sessions = Vec::with_capacity(listings.len());
    let mut listings = listings.into_iter().peekable();
    while listings.peek().is_some() {
        // A batch's windows come in two round trips (titles, then ranges), at most
        // KEYED_WINDOW_BATCH × 128 KiB in one reply; should the batch fail, each session is read
        // on its own, so one unreadable key is one problem.
        let batch: Vec<SessionListing> = listings.by_ref().take(KEYED_WINDOW_BATCH).collect();
        let wanted: Vec<(&Path, u64)> = batch.iter().map(|l| (l.path.as_path(), l.size)).collect();
        let read = |sessions: &[(&Path, u64)]| {
            pi_session_store::read_keyed_windows_of(
                keyed.as_ref(),
                sessions,
                SUMMARY_PREFIX_BYTES,
                SUMMARY_TAIL_BYTES,
            )
        };
        let windows: Vec<_> = match read(&wanted) {
            Ok(windows) => windows.into_iter().map(Ok).collect(),
            Err(_) => wanted
                .iter()
                .map(|one| read(std::slice::from_ref(one)).map(|mut w| w.remove(0)))
                .collect(),
        };
        for (listing, windows) in batch.into_iter().zip(windows) {
            match windows {
                Ok((prefix, tail)) => {
                    sessions.push(summarize_windows(listing, &prefix, tail.as_deref()))
                }
                Err(error) => problems.push(ListProblem {
                    path: listing.path,
                    diagnostic: Diagnostic::new(
                        0,
                        0,
                        DiagnosticKind::Unreadable {
                            detail: error.to_string(),
                        },
                    ),
                }),
            }
        }
    }
    sessions.sort_by(|a, b| pi_session_store::newest_first(&a.listing, &b.listing));
    Ok((sessions, problems))
}

/// A summary from a session's prefix window and tail window (`None`: the prefix is all of it).
fn summarize_windows(
    listing: SessionListing,
    prefix: &[u8],
    tail: Option<&[u8]>,
) -> SessionSummary {
    let exact = tail.is_none();
    let mut lines = typed_lines(prefix, false, exact);
    let tail_start = lines.len();
    if let Some(tail) = tail {
        lines.extend(typed_lines(tail, true, true));
    }
    let kind_is = |line: &TypedLine<'_>, kind: &str| line.kind.as_deref() == Some(kind);

    let infos: Vec<Value> = lines
        .iter()
        .filter(|l| kind_is(l, "session_info"))
        .filter_map(TypedLine::value)
        .collect();
    let name = if infos.is_empty() {
        listing.title.clone()
    } else {
        pi_session_name(&infos)
    };
    let message_count = lines.iter().filter(|l| kind_is(l, "message")).count() as u64;

    let mut first_message = None;
    for line in lines.iter().filter(|l| kind_is(l, "message")) {
        let Some(entry) = line.value() else { continue };
        let Some(message) = EntryRef::new(&entry).message().filter(|m| has_content(m)) else {
            continue;
        };
        if MessageRef::new(message).is_role("user") {
            let text = message_text(message);
            if !text.is_empty() {
                first_message = Some(text);
                break;
            }
        }
    }

    // From the end: the status (last message, in the tail), the last activity (last user or
    // assistant message with a time) and the last assistant naming its model.
    let mut status = None;
    let mut last_activity = None;
    let mut last_assistant: Option<(usize, Value)> = None;
    for (at, line) in lines.iter().enumerate().rev() {
        if status.is_some() && last_activity.is_some() && last_assistant.is_some() {
            break;
        }
        if !kind_is(line, "message") {
            continue;
        }
        let Some(entry) = line.value() else { continue };
        let Some(message) = EntryRef::new(&entry).message() else {
            continue;
        };
        if status.is_none() && (exact || at >= tail_start) {
            status = Some(SessionStatus::of_message(message));
        }
        let role = MessageRef::new(message).role();
        if last_activity.is_none()
            && has_content(message)
            && matches!(role, Some("user" | "assistant"))
        {
            last_activity = match MessageRef::new(message).timestamp() {
                Some(Value::Number(n)) => n.as_f64().map(|f| f as i64),
                _ => js::as_str(EntryRef::new(&entry).timestamp()).and_then(js::parse_date_string),
            };
        }
        if last_assistant.is_none()
            && role == Some("assistant")
            && js::as_str(MessageRef::new(message).provider()).is_some()
            && js::as_str(MessageRef::new(message).model()).is_some()
        {
            last_assistant = Some((at, entry));
        }
    }
    let mut model_lines: Vec<(usize, Value)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| kind_is(l, "model_change"))
        .filter_map(|(at, l)| Some((at, l.value()?)))
        .collect();
    model_lines.extend(last_assistant);
    model_lines.sort_by_key(|(at, _)| *at);
    let model_entries: Vec<Value> = model_lines.into_iter().map(|(_, v)| v).collect();
    let model = pi_model_from(&model_entries);
    SessionSummary {
        listing,
        name,
        first_message,
        message_count,
        message_count_exact: exact,
        last_activity,
        model,
        status: status.unwrap_or(SessionStatus::Unknown),
    }
}

/// One object of a window: its `type` (from the envelope alone) and its bytes.
struct TypedLine<'a> {
    kind: Option<Cow<'a, str>>,
    bytes: &'a [u8],
    /// Set for an object split out of a fused line (already parsed).
    parsed: Option<Value>,
}

impl TypedLine<'_> {
    /// The object's JSON (parsed now unless it was already).
    fn value(&self) -> Option<Value> {
        if let Some(value) = &self.parsed {
            return Some(value.clone());
        }
        match serde_json::from_slice(self.bytes) {
            Ok(value @ Value::Object(_)) => Some(value),
            _ => None,
        }
    }
}

/// pi's `isMessageWithContent`: a string role and a `content` key.
fn has_content(message: &Value) -> bool {
    MessageRef::new(message).role().is_some() && MessageRef::new(message).content().is_some()
}

/// pi's `extractTextContent`: a string content, or the text blocks joined with a space.
pub fn message_text(message: &Value) -> String {
    match MessageRef::new(message).content() {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| BlockRef::new(b).is("text"))
            .map(|b| js::string_of(BlockRef::new(b).text()))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// How many sessions of a keyed store have their windows read in one batch.
const KEYED_WINDOW_BATCH: usize = 256;

/// Reads a file's windows into `buffer` (replacing what it held): the whole file when it fits
/// in both windows (`None`), else the prefix then the tail, and where the tail starts.
///
/// Each window is read to its known length and no further: a small file costs one `read`
/// (`read_to_end` asks once more to see the end of the file, a second system call per file).
fn read_windows_into(
    file: &mut File,
    path: &Path,
    size: u64,
    buffer: &mut Vec<u8>,
) -> Result<Option<usize>> {
    let read_err = |e| StoreError::io("could not read", path, e);
    buffer.clear();
    if size <= SUMMARY_PREFIX_BYTES + SUMMARY_TAIL_BYTES {
        // Bounded even if the file grew since its size was taken.
        read_up_to(file, size, buffer).map_err(read_err)?;
        return Ok(None);
    }
    read_up_to(file, SUMMARY_PREFIX_BYTES, buffer).map_err(read_err)?;
    let tail_at = buffer.len();
    file.seek(SeekFrom::Start(size - SUMMARY_TAIL_BYTES))
        .map_err(read_err)?;
    read_up_to(file, SUMMARY_TAIL_BYTES, buffer).map_err(read_err)?;
    Ok(Some(tail_at))
}

/// Appends up to `len` bytes of `file` to `buffer`: fewer only at the end of the file.
fn read_up_to(file: &mut File, len: u64, buffer: &mut Vec<u8>) -> std::io::Result<()> {
    let start = buffer.len();
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    buffer.resize(start + len, 0);
    let mut filled = start;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                buffer.truncate(filled);
                return Err(e);
            }
        }
    }
    buffer.truncate(filled);
    Ok(())
}

/// The prefix and tail windows [`read_windows_into`] read.
fn split_windows(buffer: &[u8], tail_at: Option<usize>) -> (&[u8], Option<&[u8]>) {
    match tail_at {
        Some(at) => (&buffer[..at], Some(&buffer[at..])),
        None => (buffer, None),
    }
}

/// The objects of the complete lines in a window, in order, typed by their envelope. A tail
/// window's first line and a prefix window's last line may be cut and are dropped; a fused line
/// (objects joined by a lost newline) gives each object it holds; damaged lines give nothing.
fn typed_lines(window: &[u8], cut_start: bool, whole_end: bool) -> Vec<TypedLine<'_>> {
    typed_lines_with(window, cut_start, whole_end, true)
}

/// [`typed_lines`], with the structure scan ([`quick_kind`]) tried first when `quick` (the
/// parser alone otherwise: what the scan is tested against).
fn typed_lines_with(
    window: &[u8],
    cut_start: bool,
    whole_end: bool,
    quick: bool,
) -> Vec<TypedLine<'_>> {
    let mut window = window;
    if cut_start {
        window = memchr::memchr(b'\n', window).map_or(&[][..], |at| &window[at + 1..]);
    }
    if !whole_end {
        window = memchr::memrchr(b'\n', window).map_or(&[][..], |at| &window[..at]);
    }
    let mut out = Vec::with_capacity(memchr::memchr_iter(b'\n', window).count() + 1);
    for line in lines(window) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // Cheap rejection of what is not an object (omp does the same).
        if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            continue;
        }
        // The common line, one object with `type` first, is typed without a parse.
        if let Some(kind) = quick.then(|| quick_kind(line)).flatten() {
            out.push(TypedLine {
                kind: Some(Cow::Borrowed(kind)),
                bytes: line,
                parsed: None,
            });
            continue;
        }
        if let Ok(envelope) = pi_session_types::parse_envelope_ref(line) {
            out.push(TypedLine {
                kind: Some(envelope.kind),
                bytes: line,
                parsed: None,
            });
            continue;
        }
        // Fused objects, or a line needing repair: parse value by value.
        for value in serde_json::Deserializer::from_slice(line).into_iter::<Value>() {
            match value {
                Ok(value @ Value::Object(_)) => out.push(TypedLine {
                    kind: EntryRef::new(&value)
                        .kind()
                        .map(|k| Cow::Owned(k.to_owned())),
                    bytes: &[],
                    parsed: Some(value),
                }),
                _ => break,
            }
        }
    }
    out
}

/// The lines of `window` (split at `\n`, as `split` would), found with a SIMD search: a
/// byte-by-byte split was the largest part of a summary's time.
fn lines(window: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(window);
    std::iter::from_fn(move || {
        let current = rest?;
        match memchr::memchr(b'\n', current) {
            Some(at) => {
                rest = Some(&current[at + 1..]);
                Some(&current[..at])
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// The `type` of a line that is one JSON object as omp and pi write it (`{"type":"…",` first),
/// found by a scan of its structure instead of a parse; `None` sends the line to the parser
/// (another layout, a fused or cut line, or anything the scan cannot vouch for).
///
/// The scan walks the line by its quotes and braces (SIMD searches, `memchr`, over long
/// strings; byte loops elsewhere), and gives a type
/// only when the line is valid UTF-8 with no control byte, every string is closed, its escapes
/// are simple (a `\u` escape of a surrogate, which the parser may reject, goes to the parser),
/// the bytes between strings are only JSON punctuation, numbers and the letters of
/// `true`/`false`/`null`, and the first object closes exactly at the line's end. On every
/// fixture and corpus file it types the lines as [`pi_session_types::parse_envelope_ref`] does
/// (a test checks it), so the message count is the parser's.
fn quick_kind(line: &[u8]) -> Option<&str> {
    const START: &[u8] = br#"{"type":""#;
    let rest = line.strip_prefix(START)?;
    let kind_len = memchr::memchr2(b'"', b'\\', rest)?;
    if rest[kind_len] != b'"' || !matches!(rest.get(kind_len + 1), Some(b',' | b'}')) {
        return None;
    }
    // A fold rather than `any`, so that the compiler checks many bytes at once.
    if line.iter().fold(false, |seen, &b| seen | (b < 0x20)) {
        return None;
    }
    let text = std::str::from_utf8(line).ok()?;
    let kind = &text[START.len()..START.len() + kind_len];
    let bytes = text.as_bytes();
    // After `{"type":"<kind>"`: depth 1 in braces, 0 in brackets, outside a string.
    let (mut depth, mut brackets) = (1usize, 0usize);
    let mut at = START.len() + kind_len + 1;
    loop {
        // What lies between strings is short (`":"`, `","`, a number): a byte loop, where a
        // SIMD search per gap cost more in its set-up than it saved.
        let mut found = at;
        loop {
            match *bytes.get(found)? {
                b'"' | b'{' | b'}' => break,
                b'[' => brackets += 1,
                b']' => brackets = brackets.checked_sub(1)?,
                b if is_between_strings(b) => {}
                _ => return None,
            }
            found += 1;
        }
        match bytes[found] {
            b'"' => at = string_end(bytes, found + 1)?,
            b'{' => {
                depth += 1;
                at = found + 1;
            }
            _ => {
                depth -= 1;
                at = found + 1;
                if depth == 0 {
                    return (at == bytes.len() && brackets == 0).then_some(kind);
                }
            }
        }
    }
}

/// Bytes other than brackets that may sit between the strings and braces of a JSON line as omp
/// and pi write it: punctuation, numbers, and the letters of `true`, `false` and `null`.
fn is_between_strings(byte: u8) -> bool {
    matches!(
        byte,
        b',' | b':' | b'0'
            ..=b'9'
                | b'-'
                | b'+'
                | b'.'
                | b'e'
                | b'E'
                | b't'
                | b'r'
                | b'u'
                | b'f'
                | b'a'
                | b'l'
                | b's'
                | b'n'
    )
}

/// Bytes of a string looked at one by one before [`string_end`] searches the rest with SIMD.
const SHORT_STRING: usize = 24;

/// The index after the closing quote of the string whose content starts at `from`; `None` when
/// it is not closed or holds an escape the parser could reject.
fn string_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        // Most strings are short keys and ids: their first bytes are looked at one by one
        // before a SIMD search takes over for long texts.
        let short = bytes.len().min(at + SHORT_STRING);
        let found = match bytes[at..short]
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
        {
            Some(n) => at + n,
            None => short + memchr::memchr2(b'"', b'\\', &bytes[short..])?,
        };
        if bytes[found] == b'"' {
            return Some(found + 1);
        }
        match bytes.get(found + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at = found + 2,
            b'u' => {
                let hex = bytes.get(found + 2..found + 6)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) || matches!(hex[0], b'd' | b'D') {
                    return None;
                }
                at = found + 6;
            }
            _ => return None,
        }
    }
}

/// Summaries of the sessions directly inside `dir`, read on every core, sorted as
/// [`pi_session_store::list`] sorts (most recently modified first), and the `.jsonl` files that
/// are not sessions. A missing folder lists as empty.
pub fn summaries(dir: impl AsRef<Path>) -> Result<(Vec<SessionSummary>, Vec<ListProblem>)> {
    let files = session_files(dir.as_ref())?;
    let results: Vec<(
        PathBuf,
        Result<std::result::Result<SessionSummary, Diagnostic>>,
    )> = files
        .into_par_iter()
        .map_init(Vec::new, |buffer, path| {
            let summary = summarize_with(&path, buffer);
            (path, summary)
        })
        .collect();
    let mut sessions = Vec::new();
    let mut problems = Vec::new();
    for (path, result) in results {
        match result {
            Ok(Ok(summary)) => sessions.push(summary),
            Ok(Err(diagnostic)) => problems.push(ListProblem { path, diagnostic }),
            Err(error) => problems.push(ListProblem {
                path,
                diagnostic: Diagnostic::new(
                    0,
                    0,
                    DiagnosticKind::Unreadable {
                        detail: error.to_string(),
                    },
                ),
            }),
        }
    }
    sessions.sort_by(|a, b| pi_session_store::newest_first(&a.listing, &b.listing));
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok((sessions, problems))
}

/// The `*.jsonl` files directly inside `dir` (none when it is missing).
pub fn session_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let reader = match std::fs::read_dir(dir) {
        Ok(reader) => reader,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io("could not list", dir, e).into()),
    };
    let mut files = Vec::new();
    for item in reader {
        let item = item.map_err(|e| StoreError::io("could not list", dir, e))?;
        let path = item.path();
        if path.extension().is_none_or(|ext| ext != "jsonl") {
            continue;
        }
        // The folder listing's type, without a `stat` per file (a link is followed).
        let is_file = match item.file_type() {
            Ok(kind) if kind.is_file() => true,
            Ok(kind) if kind.is_symlink() => path.is_file(),
            Ok(_) => false,
            Err(_) => path.is_file(),
        };
        if is_file {
            files.push(path);
        }
    }
    // All share `dir` as their prefix, so the order of their bytes is the order of their names
    // (and of `Path`'s component-wise comparison, which was a visible part of a large folder's
    // serial time).
    files.sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_session_test_support::fixture_and_corpus_files;

    /// The type of every object of a whole file, as [`typed_lines`] gives them with the scan or
    /// with the parser alone.
    fn kinds(bytes: &[u8], quick: bool) -> Vec<Option<String>> {
        typed_lines_with(bytes, false, true, quick)
            .iter()
            .map(|line| line.kind.as_deref().map(str::to_owned))
            .collect()
    }

    #[test]
    fn the_scan_types_every_fixture_and_corpus_line_as_the_parser_does() {
        let files = fixture_and_corpus_files();
        let (mut vouched, mut messages) = (0, 0);
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            let (quick, parsed) = (kinds(&bytes, true), kinds(&bytes, false));
            assert_eq!(quick, parsed, "{}", path.display());
            messages += quick
                .iter()
                .filter(|k| k.as_deref() == Some("message"))
                .count();
            for line in bytes.split(|&b| b == b'\n') {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if let Some(kind) = quick_kind(line) {
                    vouched += 1;
                    let envelope = pi_session_types::parse_envelope_ref(line);
                    assert_eq!(envelope.map(|e| e.kind).ok().as_deref(), Some(kind));
                }
            }
        }
        // The scan did the typing (not the parser behind it) on enough lines to mean something.
        assert!(files.len() > 100 && vouched > 1000 && messages > 500);
    }

    #[test]
    fn the_scan_leaves_what_it_cannot_vouch_for_to_the_parser() {
        let good = br#"{"type":"message","id":"a","n":[1,-2.5e3,true,false,null],"m":{"t":"\"}{\\\u00e9"}}"#;
        assert_eq!(quick_kind(good), Some("message"));
        assert_eq!(quick_kind(br#"{"type":"label"}"#), Some("label"));
        for line in [
            &br#"{"id":"a","type":"message"}"#[..], // type not first
            br#"{ "type":"message","id":"a"}"#,     // another layout
            br#"{"type":"message","id":"a"}{"type":"message"}"#, // fused
            br#"{"type":"message","id":"a""#,       // cut
            br#"{"type":"message","id":"a"}}"#,     // closes early
            br#"{"type":"message","id":"a"} x"#,    // more after the object
            br#"{"type":"message","t":"\ud83d"}"#,  // a lone surrogate escape
            br#"{"type":"message","t":"\q"}"#,      // not an escape
            br#"{"type":"message","t":tru x}"#,     // not a token
            br#"{"type":"message","t":[1}"#,        // an open bracket
            br#"{"type":"message","t":]1}"#,        // a bracket closed first
            br#"{"type":"mes\u0073age","id":"a"}"#, // an escaped type
            br#"{"type":"message","t":"a	b"}"#,     // a raw tab in a string
            b"{\"type\":\"message\",\"t\":\"\xff\"}", // invalid UTF-8
        ] {
            assert_eq!(quick_kind(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
