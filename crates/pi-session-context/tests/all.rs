//! Integration tests of pi-session-context (one binary, see common rules).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod documents;
mod fixtures;
mod llm_convert;
mod providers;
mod recorded;
mod rho_rules;
