//! Integration tests of pi-session-store (one binary; see each module).

mod common;
mod corpus;
mod discover;
mod fixtures;
mod js_bytes;
mod lock;
mod writer;
