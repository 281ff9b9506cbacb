//! The one-scan fast path ([`scan_envelope`]) against the path it stands in for
//! ([`read_envelope`] and [`with_encoding_warnings`]): whenever the scan is sure, that path
//! gives the same envelope without a repair or warning; and the scan is sure of the ordinary
//! lines of every fixture and corpus file.

use super::{may_warn, read_envelope, with_encoding_warnings};
use crate::session_file::IndexEnvelope;
use pi_session_types::envelope_scan::scan_envelope;
use pi_session_types::parse_envelope_ref;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::sync::LazyLock;

/// Checks the fast path's answer on `line` against today's path; returns whether it was sure.
fn agrees(line: &[u8]) -> bool {
    let Some(scanned) = scan_envelope(line) else {
        return false;
    };
    let fast = scanned.envelope;
    let shown = String::from_utf8_lossy(line);
    // The key filter may hold every key the line has, at every depth (serde_json's `Value`
    // takes no number past f64, which the scan skips: those lines' keys go unchecked).
    let value: serde_json::Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) if e.to_string().starts_with("number out of range") => serde_json::Value::Null,
        Err(e) => panic!("sure of a line serde_json rejects ({e}): {shown}"),
    };
    let mut keys = Vec::new();
    keys_of(&value, &mut keys);
    for key in keys {
        assert!(
            scanned.keys.may_hold(key),
            "the filter lacks the key {key:?}: {shown}"
        );
    }
    assert_eq!(parse_envelope_ref(line).as_ref(), Ok(&fast), "{shown}");
    assert!(
        !may_warn(line),
        "sure of a line the full parse may warn of: {shown}"
    );
    let today = read_envelope(line)
        .map(|read| with_encoding_warnings(line, read))
        .unwrap_or_else(|e| panic!("today's path rejects {shown}: {e}"));
    assert!(today.warnings.is_empty(), "{shown}");
    let envelope = IndexEnvelope::new(
        &fast.kind,
        fast.id.as_deref(),
        fast.parent_id.as_deref(),
        fast.timestamp.as_deref(),
    );
    assert_eq!(today.envelope, envelope, "{shown}");
    true
}

/// Every key of `value`, at every depth, decoded.
fn keys_of<'a>(value: &'a serde_json::Value, keys: &mut Vec<&'a str>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                keys.push(key);
                keys_of(value, keys);
            }
        }
        serde_json::Value::Array(values) => values.iter().for_each(|v| keys_of(v, keys)),
        _ => {}
    }
}

/// Every line of every fixture and corpus file.
static LINES: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    let mut lines = Vec::new();
    for path in pi_session_test_support::fixture_and_corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        for line in bytes.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.is_empty() {
                lines.push(line.to_vec());
            }
        }
    }
    lines
});

/// Pieces lines are made of: JSON tokens, the envelope keys, every escape (good and bad),
/// numbers of every spelling, whitespace of every kind, UTF-8 of every length and every kind of
/// invalid UTF-8, control characters, a BOM.
const PIECES: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"\"",
    b"\\",
    b"u",
    b"d",
    b"D",
    b"a",
    b"x",
    b"0",
    b"1",
    b"9",
    b"-",
    b"+",
    b".",
    b"e",
    b"E",
    b"true",
    b"false",
    b"null",
    b"tru",
    b"nul",
    b"\"type\"",
    b"\"id\"",
    b"\"parentId\"",
    b"\"timestamp\"",
    b"\"t\\u0079pe\"",
    b" ",
    b"\t",
    b"\r",
    b"\n",
    b"\x0b",
    b"\x0c",
    b"\\n",
    b"\\\"",
    b"\\\\",
    b"\\/",
    b"\\b",
    b"\\f",
    b"\\r",
    b"\\t",
    b"\\x",
    b"\\a",
    b"\\u00e9",
    b"\\u0000",
    b"\\u12g4",
    b"\\u12",
    b"\\ud83d",
    b"\\uD83D\\uDE00",
    b"\\udc00",
    b"\\uDBFF\\uDFFF",
    b"\\\\ud83d",
    b"\\\\uD",
    b"\\u00",
    b"-0",
    b"1e999",
    b"01",
    b"1.",
    b".5",
    b"1.5e-3",
    b"-1E+2",
    b"2026",
    b"1e",
    b"1e+",
    "é".as_bytes(),
    "€".as_bytes(),
    "😀".as_bytes(),
    "\u{10FFFF}".as_bytes(),
    "\u{10F800}".as_bytes(),
    "\u{FFFF}".as_bytes(),
    "\u{7FF}".as_bytes(),
    b"\x00",
    b"\x1f",
    b"\x7f",
    b"\x80",
    b"\xbf",
    b"\xc0\xaf",
    b"\xc1\xbf",
    b"\xc2",
    b"\xc2\xa9",
    b"\xe0\x80\xaf",
    b"\xe0\xa0",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"\xef\xbb\xbf",
    b"\xf0\x80\x80\xaf",
    b"\xf0\x90\x80",
    b"\xf4\x90\x80\x80",
    b"\xf4\x8f\xbf\xbf",
    b"\xf5\x80\x80\x80",
    b"\xf8",
    b"\xff",
    b"\xfe",
];

const ESCAPES: &[&[u8]] = &[
    b"\\n", b"\\\"", b"\\\\", b"\\u00e9", b"\\t", b"\\/", b"\\b", b"\\f", b"\\r",
];
const TEXTS: &[&str] = &["é", "€", "😀", "日本語", "\u{10FFFF}"];
const SCALARS: &[&[u8]] = &[
    b"0", b"-0", b"1e999", b"12.5", b"-1E+2", b"true", b"false", b"null", b"01", b"1.", b".5",
    b"-", b"2026",
];
const KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "message", "content"];

fn piece() -> impl Strategy<Value = Vec<u8>> {
    proptest::sample::select(PIECES).prop_map(<[u8]>::to_vec)
}

/// A JSON string's text: plain runs (long enough to cross the scan's 16-byte chunks) and pieces.
fn string_text() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        3 => "[a-z ]{0,40}".prop_map(String::into_bytes),
        1 => piece(),
        1 => proptest::sample::select(ESCAPES).prop_map(<[u8]>::to_vec),
        1 => proptest::sample::select(TEXTS).prop_map(|s| s.as_bytes().to_vec()),
    ];
    proptest::collection::vec(part, 0..6).prop_map(|parts| parts.concat())
}

fn whitespace() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => Just(Vec::new()),
        1 => proptest::collection::vec(proptest::sample::select(&b" \t\r\n"[..]), 1..3),
    ]
}

fn quoted(text: Vec<u8>) -> Vec<u8> {
    [&b"\""[..], &text, b"\""].concat()
}

/// A JSON value (mostly valid; its strings may hold anything).
fn value() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        string_text().prop_map(quoted),
        proptest::sample::select(SCALARS).prop_map(<[u8]>::to_vec),
    ];
    leaf.prop_recursive(6, 48, 5, |inner| {
        prop_oneof![
            proptest::collection::vec((whitespace(), inner.clone(), whitespace()), 0..5).prop_map(
                |items| {
                    let items: Vec<Vec<u8>> = items
                        .into_iter()
                        .map(|(a, v, b)| [a, v, b].concat())
                        .collect();
                    [&b"["[..], &items.join(&b","[..]), b"]"].concat()
                }
            ),
            proptest::collection::vec((key(), whitespace(), inner), 0..5).prop_map(|members| {
                let members: Vec<Vec<u8>> = members
                    .into_iter()
                    .map(|(k, w, v)| [k, w.clone(), b":".to_vec(), w, v].concat())
                    .collect();
                [&b"{"[..], &members.join(&b","[..]), b"}"].concat()
            }),
        ]
    })
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => proptest::sample::select(KEYS)
            .prop_map(|k| quoted(k.as_bytes().to_vec())),
        1 => string_text().prop_map(quoted),
    ]
}

/// A line: an object whose members are envelope keys (strings, `null` or other values, now and
/// then twice) and other keys, with whitespace anywhere.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let envelope_value = prop_oneof![
        4 => "[a-zA-Z0-9:.-]{0,30}".prop_map(|s| quoted(s.into_bytes())),
        1 => string_text().prop_map(quoted),
        1 => Just(b"null".to_vec()),
        1 => value(),
    ];
    let member = prop_oneof![
        2 => (key(), envelope_value),
        1 => (key(), value()),
    ];
    (
        whitespace(),
        "[a-z_]{1,12}",
        proptest::collection::vec((whitespace(), member, whitespace()), 0..6),
        whitespace(),
    )
        .prop_map(|(lead, kind, members, trail)| {
            let mut items = vec![[&b"\"type\":"[..], &quoted(kind.into_bytes())].concat()];
            items.extend(
                members
                    .into_iter()
                    .map(|(a, (k, v), b)| [a, k, b":".to_vec(), v, b].concat()),
            );
            [
                lead,
                b"{".to_vec(),
                items.join(&b","[..]),
                b"}".to_vec(),
                trail,
            ]
            .concat()
        })
}

/// An edit of a line: a byte dropped, a piece inserted, or a byte replaced by a piece.
#[derive(Debug, Clone)]
enum Edit {
    Drop(usize),
    Insert(usize, Vec<u8>),
    Replace(usize, Vec<u8>),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Drop),
        (any::<usize>(), piece()).prop_map(|(at, p)| Edit::Insert(at, p)),
        (any::<usize>(), piece()).prop_map(|(at, p)| Edit::Replace(at, p)),
    ]
}

fn edited(mut line: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for edit in edits {
        let len = line.len();
        match edit {
            Edit::Drop(at) if len > 0 => {
                line.remove(at % len);
            }
            Edit::Insert(at, piece) => {
                let at = at % (len + 1);
                line.splice(at..at, piece.iter().copied());
            }
            Edit::Replace(at, piece) if len > 0 => {
                let at = at % len;
                line.splice(at..=at, piece.iter().copied());
            }
            _ => {}
        }
    }
    line
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn generated_lines_agree(line in line(), edits in proptest::collection::vec(edit(), 0..3)) {
        agrees(&line);
        agrees(&edited(line, &edits));
    }

    #[test]
    fn edited_corpus_lines_agree(
        pick in any::<proptest::sample::Index>(),
        edits in proptest::collection::vec(edit(), 1..4),
    ) {
        let line = pick.get(&LINES).clone();
        agrees(&edited(line, &edits));
    }

    #[test]
    fn random_bytes_agree(bytes in proptest::collection::vec(piece(), 0..24)) {
        agrees(&bytes.concat());
        agrees(&[&b"{\"type\":\"a\","[..], &bytes.concat(), b"}"].concat());
    }
}

#[test]
fn generated_lines_are_mostly_sure() {
    // The property above is only as strong as the share of lines the scan is sure of.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut sure = 0;
    for _ in 0..2000 {
        let line = line().new_tree(&mut runner).unwrap().current();
        sure += usize::from(agrees(&line));
    }
    assert!(sure > 400, "sure of {sure} of 2000 generated lines");
}

#[test]
fn escapes_agree_at_every_offset_of_the_scan_chunks() {
    // The scan skips 16 bytes at a time, across escapes: put each escape (and runs of
    // backslashes) at every offset of a chunk, and the string's end right after it or later.
    let sequences: &[&[u8]] = &[
        b"\\n",
        b"\\\"",
        b"\\\\",
        b"\\\\\"",
        b"\\\\\\\"",
        b"\\\\n",
        b"\\\\\\n",
        b"\\t",
        b"\\r",
        b"\\/",
        b"\\u00e9",
        b"\\ud83d",
        b"\\\\ud",
        b"\\x",
        b"\\",
        b"\"",
        b"\t",
        "é".as_bytes(),
        b"\xf4\x8f\xbf\xbf",
        b"\xc3",
    ];
    let mut sure = 0;
    for sequence in sequences {
        for offset in 0..40 {
            for tail in [0, 1, 15, 16, 17, 40] {
                let mut line = br#"{"type":"a","x":""#.to_vec();
                line.extend(std::iter::repeat_n(b'a', offset));
                line.extend_from_slice(sequence);
                line.extend(std::iter::repeat_n(b'b', tail));
                line.extend_from_slice(br#"","y":"z"}"#);
                sure += usize::from(agrees(&line));
            }
        }
    }
    // The valid ones without a surrogate escape or 0xF4: 11 sequences, and a lone `\` before
    // a `b` (`\b`) rather than the closing quote.
    assert_eq!(sure, 11 * 40 * 6 + 40 * 5);
}

#[test]
fn keys_and_line_ends_agree_at_every_offset_of_the_scan_chunks() {
    // Strings that end in their first 16 bytes at their first stop are read from one move-mask
    // of stops: put each escape, control or non-ASCII byte at every offset of a key and of the
    // line's last string (whose last chunk runs past the line's end), and check that the scan
    // is sure exactly of the lines serde_json accepts that the full parse would not warn of.
    let sequences: &[&[u8]] = &[
        b"",
        b"\\n",
        b"\\\"",
        b"\\\\",
        b"\\u0061",
        b"\\ud83d",
        b"\\\\ud",
        b"\\x",
        b"\\",
        b"\t",
        b"\x00",
        b"\x1f",
        b"\x7f",
        b" ",
        "\u{e9}".as_bytes(),
        "\u{20ac}".as_bytes(),
        "\u{1f600}".as_bytes(),
        b"\xf4\x8f\xbf\xbf",
        b"\xc3",
        b"\x80",
    ];
    let mut sure = 0;
    let mut lines = 0;
    for sequence in sequences {
        for offset in 0..40 {
            let text = || {
                let mut text = vec![b'a'; offset];
                text.extend_from_slice(sequence);
                text
            };
            let mut key = br#"{"type":"a","x":{""#.to_vec();
            key.extend(text());
            key.extend_from_slice(br#"":1}}"#);
            let mut last = br#"{"type":"a","x":""#.to_vec();
            last.extend(text());
            last.extend_from_slice(br#""}"#);
            let mut envelope = br#"{"type":""#.to_vec();
            envelope.extend(text());
            envelope.extend_from_slice(br#"","id":"b"}"#);
            // An escape in an envelope value is left to the full path.
            let escaped = sequence.contains(&b'\\');
            for (line, in_envelope) in [(key, false), (last, false), (envelope, true)] {
                let valid = serde_json::from_slice::<serde_json::Value>(&line).is_ok();
                let unusual = may_warn(&line) || (in_envelope && escaped);
                let scanned = agrees(&line);
                assert_eq!(
                    scanned,
                    valid && !unusual,
                    "{}",
                    String::from_utf8_lossy(&line)
                );
                sure += usize::from(scanned);
                lines += 1;
            }
        }
    }
    assert!(sure > lines / 3, "sure of {sure} of {lines} lines");
}

#[test]
fn nesting_agrees_at_every_depth() {
    for depth in (1..=3).chain(120..=140).chain([200, 1000]) {
        for (open, close) in [(&b"["[..], &b"]"[..]), (b"{\"a\":", b"}")] {
            let mut line = br#"{"type":"a","x":"#.to_vec();
            line.extend(open.repeat(depth));
            line.extend_from_slice(b"0");
            line.extend(close.repeat(depth));
            line.push(b'}');
            agrees(&line);
        }
        // Objects whose two outermost are closed as arrays: not JSON at any depth (the scan
        // must not lose track of what is open, however deep).
        let mut line = br#"{"type":"a","x":"#.to_vec();
        line.extend(b"{\"a\":".repeat(depth));
        line.extend_from_slice(b"0");
        line.extend(b"}".repeat(depth.saturating_sub(2)));
        line.extend_from_slice(&b"]]"[..depth.min(2)]);
        line.push(b'}');
        agrees(&line);
    }
}

/// Whether a line today's path reads cleanly holds something the scan leaves to that path on
/// purpose: an escape in an envelope value or a top-level key, an envelope key twice or with
/// a value that is neither a string nor (but for `type`) `null`, the bytes `\ud`/`\uD` (an
/// escaped backslash before `ud`), or deep nesting.
fn left_on_purpose(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Plain<'a> {
        #[serde(borrow, rename = "type")]
        _kind: &'a str,
        #[serde(borrow, rename = "id", default)]
        _id: Option<&'a str>,
        #[serde(borrow, rename = "parentId", default)]
        _parent_id: Option<&'a str>,
        #[serde(borrow, rename = "timestamp", default)]
        _timestamp: Option<&'a str>,
    }
    let Ok(map) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line) else {
        return true;
    };
    // Only the envelope keys, as their own object (borrowing fails on an escape).
    let envelope: serde_json::Map<_, _> = map
        .into_iter()
        .filter(|(k, _)| ["type", "id", "parentId", "timestamp"].contains(&k.as_str()))
        .collect();
    let escaped_key = line.windows(3).any(|w| w == b"\\\\u");
    let Ok(text) = serde_json::to_string(&envelope) else {
        return true;
    };
    let in_line = envelope.iter().all(|(k, v)| {
        let Ok(v) = serde_json::to_string(v) else {
            return false;
        };
        memchr::memmem::find(line, format!("\"{k}\":{v}").as_bytes()).is_some()
    });
    escaped_key
        || !in_line
        || serde_json::from_str::<Plain<'_>>(&text).is_err()
        || text.contains('\\')
        || line.iter().filter(|&&b| b == b'[' || b == b'{').count() >= 127
}

#[test]
fn every_ordinary_corpus_line_is_sure() {
    let mut checked = 0;
    for line in LINES.iter() {
        let clean = read_envelope(line)
            .map(|read| with_encoding_warnings(line, read))
            .is_ok_and(|read| read.warnings.is_empty());
        if !clean || may_warn(line) {
            continue;
        }
        checked += 1;
        assert!(
            agrees(line) || left_on_purpose(line),
            "not sure of an ordinary line: {}",
            String::from_utf8_lossy(line)
        );
    }
    assert!(checked > 1000, "only {checked} lines");
}

/// The session of `lines` after a header, held in memory and read from a file in tiny parts on
/// two threads; for each, every key of every entry (as `values_for` reads it) is one its
/// `may_hold_key` says may be there, and both opens answer alike.
fn keys_are_found(lines: &[Vec<u8>]) {
    let mut text = br#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#.to_vec();
    for line in lines {
        text.push(b'\n');
        text.extend_from_slice(line);
    }
    text.push(b'\n');
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    std::fs::write(&path, &text).unwrap();
    let options = crate::OpenOptions {
        keep_in_memory_up_to: 0,
        buffer_bytes: 64,
        threads: 2,
    };
    let (from_file, _) = crate::open_with(&path, &options).unwrap();
    let (held, _) = crate::open_bytes(text);
    assert_eq!(from_file.len(), held.len());
    let all: Vec<usize> = (0..held.len()).collect();
    for key in KEYS.iter().copied().chain(["attachments", "usage", "x"]) {
        assert_eq!(
            from_file.may_hold_key(&all, key),
            held.may_hold_key(&all, key),
            "{key}"
        );
    }
    for session in [&from_file, &held] {
        for at in 0..session.len() {
            let Ok(values) = session.values_for(&[at]) else {
                continue;
            };
            let mut keys = Vec::new();
            keys_of(&values[0], &mut keys);
            for key in keys {
                assert_eq!(
                    session.may_hold_key(&[at], key),
                    [true],
                    "entry {at} holds {key:?}: {}",
                    String::from_utf8_lossy(&session.raw(at).unwrap())
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn may_hold_key_finds_every_key_of_generated_lines(
        lines in proptest::collection::vec(line(), 1..12),
        edits in proptest::collection::vec(edit(), 0..2),
    ) {
        let mut lines = lines;
        if let Some(last) = lines.pop() {
            lines.push(edited(last, &edits));
        }
        keys_are_found(&lines);
    }
}

#[test]
fn may_hold_key_finds_every_key_of_the_corpus() {
    let lines: Vec<Vec<u8>> = LINES
        .iter()
        .filter(|line| !line.starts_with(br#"{"type":"session""#))
        .take(4000)
        .cloned()
        .collect();
    keys_are_found(&lines);
}

#[test]
fn may_hold_key_says_no_for_most_absent_keys() {
    // The filter must leave lines unread, not only be sound: an ordinary message line says
    // "no" to `attachments` and to most other keys it lacks.
    let line = br#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1}}"#;
    let mut text = br#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#.to_vec();
    text.push(b'\n');
    text.extend_from_slice(line);
    let (session, _) = crate::open_bytes(text);
    assert_eq!(session.may_hold_key(&[0], "attachments"), [false]);
    assert_eq!(session.may_hold_key(&[0, 0], "toolCallId"), [true, true]);
    let absent = (0..500)
        .filter(|n| session.may_hold_key(&[0], &format!("absent{n}")) == [true])
        .count();
    assert!(absent < 150, "{absent} of 500 absent keys read as maybe");
    // Out of range: maybe.
    assert_eq!(session.may_hold_key(&[7], "attachments"), [true]);
}

#[test]
fn may_hold_key_of_a_migrated_file_is_always_maybe() {
    let text = concat!(
        r#"{"type":"session","id":"s","timestamp":"t","cwd":"/"}"#,
        "\n",
        r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"hi"}}"#,
        "\n",
    );
    let (session, _) = crate::open_bytes(text.as_bytes().to_vec());
    assert!(session.is_migrated());
    assert_eq!(session.may_hold_key(&[0], "attachments"), [true]);
}
