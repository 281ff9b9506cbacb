//! What the per-line checks allocate (a test binary of its own: it counts through the global
//! allocator).
//!
//! The allocator counts every thread of the process, so this binary runs without libtest
//! (`harness = false`): libtest's main thread allocates while a test starts (its list of the
//! running tests, their names), at the same time as the test's first steps, and an exact
//! count of zero would see those allocations now and then. Here the checks run on the main
//! thread, the only one; a failed check panics, and the binary's exit code fails the run.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::alloc::System;

use pi_session_types::json::{canonical_members, is_js_canonical};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    the_canonical_walk_allocates_nothing_line_after_line();
    println!("allocations: the canonical walk allocates nothing line after line ... ok");
}

/// The canonical walk keeps its key stack between the walks of a thread: once a thread has
/// walked a line, walking a thousand more (eight keys each, two objects deep) allocates
/// nothing; and a walk refused half-way (a duplicate key) leaves the next one right.
fn the_canonical_walk_allocates_nothing_line_after_line() {
    let line = br#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi \"there\"\n","timestamp":1}}"#;
    assert!(is_js_canonical(line));
    let region = Region::new(GLOBAL);
    let mut members = 0;
    for _ in 0..1_000 {
        assert!(is_js_canonical(line));
        assert!(canonical_members(line, "message", |_, _, _| members += 1));
    }
    assert_eq!(region.change().allocations, 0);
    assert_eq!(members, 8_000);
    assert!(!is_js_canonical(br#"{"a":{"b":1,"b":2}}"#));
    assert!(is_js_canonical(br#"{"b":{"b":1,"a":2}}"#));
}
