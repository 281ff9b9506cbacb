//! Tests of the `pi-session` command (one test binary; see each module).

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod cat;
mod check;
mod common;
mod context;
mod export;
mod foreign;
mod grep;
mod help;
mod ls;
mod manage;
mod parquet;
mod redis;
mod repair;
mod robustness;
mod stats;
mod tree;
mod usage;
mod write;
