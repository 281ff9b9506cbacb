//! Integration tests of pi-session-context (one binary, see common rules).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod corpus;
mod documents;
mod fixtures;
mod llm_convert;
mod provider_request;
mod providers;
mod recorded_projection;
mod replay_filter;
mod rho_rules;
mod robustness;
