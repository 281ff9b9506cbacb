//! The bytes a context allocates grow with what it sends, not with the file: two sessions with
//! the same part after their latest compaction, one with ten times the history before it,
//! allocate about the same to build their context.
//!
//! Its own test binary: the counting allocator (`stats_alloc`, whose `GlobalAlloc` impl holds
//! the unsafe code) counts every allocation of the process, so no other test runs beside it.

// A failure is a test failure.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::alloc::System;

use pi_session_tree::{ContextOptions, Dialect, LeafSelector, SessionView};
use serde_json::json;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// A pi session: `history` turns, then a compaction keeping the last 4 entries, then `tail`
/// turns. Each turn is a user message and an assistant reply of about 2 KB.
fn session(history: usize, tail: usize) -> Vec<u8> {
    let mut lines = vec![
        json!({"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}),
    ];
    let mut parent = serde_json::Value::Null;
    let mut ids: Vec<String> = Vec::new();
    let mut push = |lines: &mut Vec<serde_json::Value>,
                    ids: &mut Vec<String>,
                    mut entry: serde_json::Value| {
        let id = format!("e{}", lines.len());
        entry["id"] = json!(id);
        entry["parentId"] = parent.clone();
        entry["timestamp"] = json!("2026-01-01T00:00:01.000Z");
        parent = json!(id);
        ids.push(id);
        lines.push(entry);
    };
    let turn = |n: usize| {
        [
            json!({"type":"message","message":{"role":"user","content":format!("question {n} {}", "q".repeat(900)),"timestamp":n}}),
            json!({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"a".repeat(1000)}],
                   "provider":"anthropic","model":"claude","stopReason":"stop","timestamp":n}}),
        ]
    };
    for n in 0..history {
        for entry in turn(n) {
            push(&mut lines, &mut ids, entry);
        }
    }
    let kept = ids[ids.len() - 4].clone();
    push(
        &mut lines,
        &mut ids,
        json!({"type":"compaction","summary":"earlier work","firstKeptEntryId":kept,"tokensBefore":1000}),
    );
    for n in 0..tail {
        for entry in turn(history + n) {
            push(&mut lines, &mut ids, entry);
        }
    }
    let mut bytes = Vec::new();
    for line in lines {
        bytes.extend(serde_json::to_vec(&line).unwrap());
        bytes.push(b'\n');
    }
    bytes
}

/// Bytes allocated while building the default leaf's context, and the context's JSON size.
fn context_allocations(bytes: Vec<u8>, dialect: Dialect) -> (usize, usize) {
    let (file, diagnostics) = pi_session_store::open_bytes(bytes);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let view = SessionView::new(&file);
    let region = Region::new(ALLOCATOR);
    let resolved = view
        .context(&LeafSelector::Default, dialect, &ContextOptions::default())
        .unwrap();
    let stats = region.change();
    let allocated = stats.bytes_allocated + stats.bytes_reallocated.max(0) as usize;
    let sent = serde_json::to_vec(&resolved.context).unwrap().len();
    (allocated, sent)
}

#[test]
fn context_allocations_follow_what_is_sent_not_the_file() {
    for dialect in [Dialect::PI, Dialect::OMP] {
        let small = session(200, 100);
        let large = session(2000, 100);
        assert!(large.len() > 6 * small.len());
        let (small_bytes, small_sent) = context_allocations(small, dialect);
        let (large_bytes, large_sent) = context_allocations(large, dialect);
        // The same turns are sent (only their numbers differ).
        assert!(large_sent.abs_diff(small_sent) < small_sent / 100);
        println!(
            "{dialect:?}: sent {large_sent} B; allocated {small_bytes} B (small file), {large_bytes} B (large file)"
        );
        // Only the envelope walk grows with the file (a few bytes per entry).
        assert!(
            large_bytes < small_bytes + small_bytes / 2,
            "{dialect:?}: {large_bytes} B for the large file, {small_bytes} B for the small one"
        );
        assert!(
            large_bytes < 12 * large_sent,
            "{dialect:?}: {large_bytes} B allocated to send {large_sent} B"
        );
    }
}
