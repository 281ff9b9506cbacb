//! Every real recorded session opens; its known damaged lines are reported (pinned with insta),
//! and every other line is an entry.

use crate::common::{corpus_dir, jsonl_files, render_diagnostics};
use pi_session_store::{OpenOptions, open, open_with};
use std::collections::BTreeMap;

/// The damaged lines listed in the corpus notes (SOURCES.md): (file, line, objects recovered).
const DAMAGED: &[(&str, u64, usize)] = &[
    ("pi-mono-705ba5d4__compact.jsonl", 1013, 2),
    ("pi-mono-d5dde00d__session.jsonl", 440, 2),
    ("gjc-pinion05-01__session.jsonl", 60, 0),
    ("gjc-pinion05-02__session.jsonl", 118, 0),
    ("gjc-pinion05-03__session.jsonl", 31, 0),
    ("gjc-pinion05-04__session.jsonl", 44, 0),
    ("gjc-pinion05-5e21ff81__session.jsonl", 118, 0),
];

/// How many entries each physical line should give: 0 for blank, header and title-slot lines,
/// the listed count for damaged lines, else 1.
fn expected_entries_per_line(name: &str, bytes: &[u8]) -> BTreeMap<u64, usize> {
    let mut expected = BTreeMap::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = i as u64 + 1;
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty()
            || text.starts_with(r#"{"type":"session""#)
            || text.starts_with(r#"{"type":"title""#)
        {
            continue;
        }
        let damaged = DAMAGED
            .iter()
            .find(|(file, line, _)| *file == name && *line == number);
        let count = damaged.map_or(1, |(_, _, recovered)| *recovered);
        if count > 0 {
            expected.insert(number, count);
        }
    }
    expected
}

#[test]
fn every_corpus_file_opens_with_its_damage_reported_and_every_other_line_an_entry() {
    let Some(dir) = corpus_dir() else { return };
    let files = jsonl_files(&dir);
    assert_eq!(files.len(), 22, "the corpus has 22 files");
    let mut lines_checked = 0;
    let mut entries_read = 0;
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(path).unwrap();
        let (session, diagnostics) = open(path).unwrap();

        let mut actual: BTreeMap<u64, usize> = BTreeMap::new();
        for at in session.index() {
            *actual.entry(at.line).or_default() += 1;
        }
        let expected = expected_entries_per_line(&name, &bytes);
        assert_eq!(actual, expected, "{name}: entries per line");
        lines_checked += bytecount_lines(&bytes);

        // Every damaged line has an error or fused diagnostic on exactly its line.
        for (file, line, recovered) in DAMAGED.iter().filter(|(f, _, _)| *f == name) {
            let on_line: Vec<_> = diagnostics.iter().filter(|d| d.line == *line).collect();
            assert!(
                !on_line.is_empty(),
                "{file}: no diagnostic on damaged line {line}"
            );
            let fused = on_line.iter().any(|d| {
                matches!(
                    d.kind,
                    pi_session_store::DiagnosticKind::FusedObjects { count: 2 }
                )
            });
            assert_eq!(fused, *recovered == 2, "{file} line {line}: {on_line:?}");
        }

        // Bodies materialise, and agree with the index.
        let entries = session.entries().unwrap();
        for (entry, at) in entries.iter().zip(session.index()) {
            assert_eq!(entry.kind(), at.envelope.kind(), "{name} line {}", at.line);
            assert_eq!(entry.id(), at.envelope.id(), "{name} line {}", at.line);
            assert_eq!(
                entry.parent_id(),
                at.envelope.parent_id(),
                "{name} line {}",
                at.line
            );
        }
        entries_read += entries.len();

        insta::assert_snapshot!(
            format!("corpus_diagnostics__{name}"),
            render_diagnostics(&diagnostics)
        );
    }
    println!(
        "corpus: {} files, {lines_checked} lines, {entries_read} entries read",
        files.len()
    );
}

fn bytecount_lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[test]
fn streaming_in_parallel_gives_the_same_index_as_reading_whole_on_one_thread() {
    let Some(dir) = corpus_dir() else { return };
    // Whole file in memory, parsed on this thread; versus streamed from the file in 32 KiB
    // chunks parsed by 2 or 3 workers (many chunks finish out of order and are re-ordered).
    let whole = OpenOptions {
        threads: 1,
        ..OpenOptions::default()
    };
    for threads in [2, 3] {
        let streaming = OpenOptions {
            keep_in_memory_up_to: 0,
            buffer_bytes: 32 << 10,
            threads,
        };
        for path in jsonl_files(&dir) {
            let (one, one_diagnostics) = open_with(&path, &whole).unwrap();
            let (many, many_diagnostics) = open_with(&path, &streaming).unwrap();
            assert_eq!(one.index(), many.index(), "{}", path.display());
            assert_eq!(one_diagnostics, many_diagnostics, "{}", path.display());
            assert_eq!(one.header(), many.header());
            if let Some(last) = many.len().checked_sub(1) {
                assert_eq!(
                    one.entry(last).unwrap(),
                    many.entry(last).unwrap(),
                    "re-read by offset"
                );
            }
        }
    }
}

#[test]
fn v1_files_get_the_same_ids_on_every_open_and_compactions_point_at_real_entries() {
    let Some(dir) = corpus_dir() else { return };
    for name in [
        "pi-mono-705ba5d4__compact.jsonl",
        "pi-mono-d5dde00d__session.jsonl",
        "pi-mono__before-compaction.jsonl",
    ] {
        let path = dir.join(name);
        let (first, _) = open(&path).unwrap();
        let (second, _) = open(&path).unwrap();
        assert!(first.is_migrated() && first.file_version() == 1, "{name}");
        assert_eq!(
            first.index(),
            second.index(),
            "{name}: ids must be deterministic"
        );
        let mut compactions = 0;
        for (i, entry) in first.entries().unwrap().iter().enumerate() {
            let json = serde_json::to_value(entry).unwrap();
            assert!(
                json.get("firstKeptEntryIndex").is_none(),
                "{name}: index left in entry {i}"
            );
            if entry.kind() == "compaction" {
                compactions += 1;
                let kept = json["firstKeptEntryId"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{name}: compaction {i} lost its target"));
                let target = first.position_of(kept).unwrap();
                assert!(
                    target <= i,
                    "{name}: pi's v1 index points backwards (or at itself)"
                );
            }
        }
        assert!(compactions >= 1, "{name}");
    }
}
