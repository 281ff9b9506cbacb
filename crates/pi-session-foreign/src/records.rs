//! Reading a foreign JSONL transcript into JSON object records, the way omp's
//! `readForeignJsonRecords` does, but saying what it skipped.
//!
//! omp splits the file on `\n`, decodes each line on its own (`TextDecoder`: invalid UTF-8 becomes
//! U+FFFD, a leading byte order mark is dropped) and keeps the lines that `JSON.parse` turns into
//! an object; everything else is skipped without a word. We keep exactly the same records, and
//! report each skipped non-blank line as a [`Diagnostic`] with its line number and byte offset.
//! Blank lines are skipped quietly (they are not damage).

use pi_session_store::{Diagnostic, DiagnosticKind};
use pi_session_types::line::parse_object_line;
use pi_session_types::{JsonMap, Parsed};

/// One JSON object line of a foreign transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The object, keys in file order (a repeated key keeps its first place and its last value,
    /// as `JSON.parse` does).
    pub value: JsonMap,
    /// 1-based physical line number (every `\n` counts, blank and damaged lines included): omp
    /// names records without a `uuid` after it (`line-<n>`).
    pub line: u64,
    /// Byte offset of the start of the line.
    pub byte_offset: u64,
}

/// Every object record of `bytes`, in file order, and a diagnostic for every non-blank line that
/// is not one (not JSON, not an object, a torn last line) or was repaired on the way (invalid
/// UTF-8: read as U+FFFD, as `TextDecoder` does; lone surrogate escapes: kept as `JSON.parse`
/// keeps them, carried as U+10F800+k).
///
/// ```
/// let (records, diagnostics) = pi_session_foreign::read_records(b"{\"type\":\"user\"}\n[1]\n\n{\"a\":");
/// assert_eq!(records.len(), 1);
/// assert_eq!(diagnostics.iter().map(|d| (d.line, d.byte_offset)).collect::<Vec<_>>(), [(2, 16), (4, 21)]);
/// ```
pub fn read_records(bytes: &[u8]) -> (Vec<Record>, Vec<Diagnostic>) {
    let mut records = Vec::new();
    let mut diagnostics = Vec::new();
    let mut offset = 0usize;
    let mut line = 0u64;
    while offset < bytes.len() {
        line += 1;
        let (raw, next, terminated) = match memchr::memchr(b'\n', &bytes[offset..]) {
            Some(end) => (&bytes[offset..offset + end], offset + end + 1, true),
            None => (&bytes[offset..], bytes.len(), false),
        };
        let byte_offset = offset as u64;
        offset = next;
        if let Some(record) = read_line(raw, line, byte_offset, terminated, &mut diagnostics) {
            records.push(record);
        }
    }
    (records, diagnostics)
}

fn read_line(
    raw: &[u8],
    line: u64,
    byte_offset: u64,
    terminated: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Record> {
    // `TextDecoder` drops a byte order mark at the start of what it decodes: each line here.
    let raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
    match parse_object_line(raw) {
        Ok(Parsed { value, warnings }) => {
            diagnostics.extend(
                warnings
                    .iter()
                    .filter_map(DiagnosticKind::for_warning)
                    .map(|kind| Diagnostic::new(line, byte_offset, kind)),
            );
            Some(Record {
                value,
                line,
                byte_offset,
            })
        }
        Err(error) => {
            if let Some(kind) = DiagnosticKind::for_line_error(&error, terminated) {
                diagnostics.push(Diagnostic::new(line, byte_offset, kind));
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_objects_and_names_every_skipped_line() {
        let text = "\u{feff}{\"a\":1}\r\n\n  \nnot json\n\"s\"\n{\"b\":2}\n{\"torn\":";
        let (records, diagnostics) = read_records(text.as_bytes());
        assert_eq!(
            records.iter().map(|r| r.line).collect::<Vec<_>>(),
            vec![1, 6]
        );
        let kinds: Vec<_> = diagnostics.iter().map(|d| (d.line, &d.kind)).collect();
        assert!(matches!(kinds[0], (4, DiagnosticKind::NotJson { .. })));
        assert!(matches!(kinds[1], (5, DiagnosticKind::NotAnObject { .. })));
        assert!(matches!(kinds[2], (7, DiagnosticKind::TornLastLine)));
        assert_eq!(diagnostics[0].byte_offset, 16);
    }

    #[test]
    fn repairs_are_reported_and_the_record_kept() {
        let (records, diagnostics) = read_records(b"{\"a\":\"\\ud83d\",\"b\":\"\xff\"}\n");
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].value["a"], "\u{10F83D}"); // carries "\ud83d", as JSON.parse keeps it
        assert_eq!(records[0].value["b"], "\u{fffd}");
        assert_eq!(diagnostics.len(), 2);
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        let (records, _) = read_records(br#"{"a":1,"b":2,"a":3}"#);
        let keys: Vec<_> = records[0].value.iter().collect();
        assert_eq!(
            format!("{keys:?}"),
            r#"[("a", Number(3)), ("b", Number(2))]"#
        );
    }
}
