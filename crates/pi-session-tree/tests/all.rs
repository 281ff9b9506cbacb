//! Integration tests for pi-session-tree (one binary; see each module).

mod build_context;
mod common;
mod corpus;
mod fixtures;
mod omp_rules;
mod properties;
mod tree;
