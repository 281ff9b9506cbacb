//! Integration tests of pi-session-types (one binary; see the modules).

mod common;
mod corpus;
mod js_json;
