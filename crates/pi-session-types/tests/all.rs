//! Integration tests of pi-session-types (one binary; see the modules).

// Helpers outside #[test] functions may unwrap and print too: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod canonical;
mod common;
mod construct;
mod corpus;
mod errors;
mod js_json;
mod js_strings;
mod roundtrip_props;
mod snapshots;
mod title_slot;
