//! Integration tests for pi-session-tree (one binary; see each module).

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod build_context;
mod common;
mod corpus;
mod dialect_seam;
mod differential;
mod key_lookups;
mod omp_rules;
mod pi16_rules;
mod properties;
mod tree;
