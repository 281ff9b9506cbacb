//! Any bytes open without a panic or a hang, and the index always points at what it describes.

use pi_session_store::{OpenOptions, open_bytes, open_with};
use proptest::prelude::*;

/// Byte soup biased towards session-like text: JSON fragments, newlines, CR, BOM, bad UTF-8.
fn session_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(br#"{"type":"session","version":3,"id":"s","cwd":"/"}"#.to_vec()),
        Just(br#"{"type":"session","id":"v1"}"#.to_vec()),
        Just(br#"{"type":"title","v":1,"title":"t","updatedAt":"x","pad":" "}"#.to_vec()),
        Just(br#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}"#.to_vec()),
        Just(br#"{"type":"compaction","summary":"s","firstKeptEntryIndex":1}"#.to_vec()),
        Just(br#"{"type":"label","id":"b","parentId":"a"}"#.to_vec()),
        Just(br#""\ud800""#.to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"\xff\xfe".to_vec()),
        Just(b"{".to_vec()),
        Just(b"}".to_vec()),
        prop::collection::vec(any::<u8>(), 0..12),
    ];
    prop::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn any_bytes_open_and_the_index_points_at_its_entries(bytes in session_like_bytes()) {
        let (session, diagnostics) = open_bytes(bytes.clone());
        for (i, at) in session.index().iter().enumerate() {
            let start = at.byte_offset as usize;
            let slice = &bytes[start..start + at.byte_len as usize];
            prop_assert_eq!(slice.first(), Some(&b'{'));
            prop_assert!(!slice.contains(&b'\n'));
            let entry = session.entry(i).unwrap();
            prop_assert_eq!(entry.kind(), at.envelope.kind());
        }
        for d in &diagnostics {
            prop_assert!(d.byte_offset <= bytes.len() as u64);
            prop_assert!(!d.to_string().is_empty());
        }
        // Streaming through a tiny buffer on two threads finds exactly the same.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let tiny = OpenOptions { keep_in_memory_up_to: 0, buffer_bytes: 16, threads: 2 };
        let (streamed, streamed_diagnostics) = open_with(&path, &tiny).unwrap();
        prop_assert_eq!(session.index(), streamed.index());
        prop_assert_eq!(diagnostics, streamed_diagnostics);
    }
}

#[test]
fn a_directory_is_not_a_session_file() {
    let dir = tempfile::tempdir().unwrap();
    let error = pi_session_store::open(dir.path()).unwrap_err();
    assert!(
        matches!(error, pi_session_store::StoreError::NotAFile { .. }),
        "{error}"
    );
}
