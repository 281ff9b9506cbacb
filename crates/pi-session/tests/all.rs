//! Integration tests of the facade (one test binary; see each module).

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

mod builders;
mod context_json;
mod corpus;
mod example;
mod manage;
mod model;
mod properties;
mod rho_sessions;
mod session;
mod stats;
mod streamed;
mod summary;
mod usage;
mod writers;
mod writes;
