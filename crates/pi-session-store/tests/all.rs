//! Integration tests of pi-session-store (one binary; see each module).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "test helpers outside #[test] functions unwrap and print too"
)]

mod common;
mod corpus;
mod crash_sim;
mod crashes;
mod discover;
mod fixtures;
mod js_bytes;
mod keyed;
mod lock;
mod omp_interop;
mod publish_lock;
mod redis_crashes;
mod redis_tls;
mod reliability;
mod robustness;
mod values;
mod writer;
