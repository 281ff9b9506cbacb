//! Hand-written damaged files (fixtures/invalid): every one opens, and its diagnostics and
//! entries are pinned with one insta snapshot each. A few properties are also asserted directly.

use crate::common::{invalid_fixtures_dir, jsonl_files, render_session};
use pi_session_store::{DiagnosticKind, OpenOptions, open, open_with};

#[test]
fn every_invalid_fixture_is_read_with_diagnostics_and_pinned() {
    let files = jsonl_files(&invalid_fixtures_dir());
    assert!(
        files.len() >= 14,
        "fixtures/invalid holds the hand-written damaged files"
    );
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let (session, diagnostics) = open(&path).unwrap();
        // Streaming with a tiny buffer on two threads sees exactly the same.
        let tiny = OpenOptions {
            keep_in_memory_up_to: 0,
            buffer_bytes: 32,
            threads: 2,
        };
        let (streamed, streamed_diagnostics) = open_with(&path, &tiny).unwrap();
        assert_eq!(session.index(), streamed.index(), "{name}");
        assert_eq!(diagnostics, streamed_diagnostics, "{name}");
        insta::assert_snapshot!(
            format!("fixture__{name}"),
            render_session(&session, &diagnostics)
        );
    }
}

fn open_fixture(
    name: &str,
) -> (
    pi_session_store::SessionFile,
    Vec<pi_session_store::Diagnostic>,
) {
    open(invalid_fixtures_dir().join(name)).unwrap()
}

#[test]
fn an_empty_title_slot_clears_the_stale_header_title() {
    let (session, diagnostics) = open_fixture("title-slot-empty-clears-title.jsonl");
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(session.title_slot().is_some());
    assert_eq!(session.title(), None);
    assert_eq!(session.header().unwrap().title_source, None);
}

#[test]
fn a_torn_last_line_is_reported_and_not_an_entry() {
    let (session, diagnostics) = open_fixture("torn-last-line.jsonl");
    assert_eq!(session.len(), 1);
    assert!(!session.ends_with_newline());
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].kind, DiagnosticKind::TornLastLine);
    assert_eq!(diagnostics[0].line, 3);
}

#[test]
fn three_fused_objects_are_all_recovered_at_their_own_offsets() {
    let path = invalid_fixtures_dir().join("fused-three-objects.jsonl");
    let bytes = std::fs::read(&path).unwrap();
    let (session, diagnostics) = open(&path).unwrap();
    assert_eq!(session.len(), 3);
    assert_eq!(
        diagnostics[0].kind,
        DiagnosticKind::FusedObjects { count: 3 }
    );
    for at in session.index() {
        assert_eq!(at.line, 2);
        let start = at.byte_offset as usize;
        assert_eq!(bytes[start], b'{');
        assert_eq!(bytes[start + at.byte_len as usize - 1], b'}');
    }
    assert_eq!(session.leaf_id(), Some("c0000003"));
}

#[test]
fn v1_migration_follows_pi_for_every_kind_of_first_kept_index() {
    let (session, _) = open_fixture("v1-migration.jsonl");
    let entries = session.entries().unwrap();
    let ids: Vec<&str> = session
        .index()
        .iter()
        .map(|e| e.envelope.id().unwrap())
        .collect();
    let kept = |i: usize| {
        serde_json::to_value(&entries[i])
            .unwrap()
            .get("firstKeptEntryId")
            .cloned()
    };
    // Entries: 0 user, 1 assistant, 2..=5 compactions, 6 hook message, 7 thinking change.
    // Parsed ordinals count the header (0) and the bare `7` line (3), as pi's array does.
    assert_eq!(kept(2), Some(ids[1].into()), "index 2 = the assistant");
    assert_eq!(kept(3), None, "index 0 = the header: no firstKeptEntryId");
    assert_eq!(
        kept(4),
        Some(ids[4].into()),
        "index 6 = the compaction itself"
    );
    assert_eq!(
        kept(5),
        None,
        "index 9 = a later entry, which has no id yet in pi's loop"
    );
    assert_eq!(entries[0].parent_id(), None);
    for i in 1..entries.len() {
        assert_eq!(
            entries[i].parent_id(),
            Some(ids[i - 1]),
            "a linear chain in file order"
        );
    }
    let hook = serde_json::to_value(&entries[6]).unwrap();
    assert_eq!(
        hook["message"]["role"], "custom",
        "v1 files go through the v2 step too"
    );
}
