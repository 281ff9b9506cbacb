//! pi-session-context: turns a resolved session branch into the messages a
//! model provider receives.
//!
//! - [`llm_messages`]: what pi's and omp's `convertToLlm` return for the
//!   agent messages of a context (JSON equal to the real functions' output);
//!   each dialect's rules are in [`dialect`] (`dialect::{pi, omp}`), behind
//!   [`dialect::ConvertToLlm`].
//! - [`omp_agent_loop_messages`]: what omp's agent loop hands its
//!   provider layer (steering envelope, `convertToLlm`, image gate, replay
//!   filter), for hosts that want omp's exact request context.
//! - [`rho::context`] / [`rho::messages`]: rho's req_llm projection
//!   ([`reqllm::Message`]), with its rules: the compaction summary first,
//!   thinking never sent back, empty and superseded assistant turns dropped,
//!   every tool call answered, pictures and PDFs by what the model takes.
//! - [`providers`]: OpenAI Chat Completions and Anthropic Messages shapes.
//! - [`provider_request`]: the session-decided part of the HTTP request body
//!   pi-ai (pi 0.73.1's or omp 18.2.3's) builds for a model, per API (Chat
//!   Completions, Responses, Anthropic, Google), with the generated model
//!   registries.
//! - [`projection::project`]: any of these for a branch, by [`Format`].
//!
//! Output JSON is `serde_json::Value`; write it with
//! `pi_session_types::json::to_js_string` to get the bytes JavaScript's
//! `JSON.stringify` writes (number formatting differs from serde_json's).
//!
//! Guarantees: pure functions of their input (no clock, no randomness, no
//! global state); never panic on odd input (unknown roles, wrong field
//! types); projections are always valid for a provider (no unanswered tool
//! call). The only I/O is reading attached PDFs, through a
//! [`documents::DocumentSource`] ([`documents::WorkspaceDocuments`] never
//! reads outside its root), and omp's picture blobs, through the tree
//! crate's `BlobSource`; both are given by the caller.
//!
//! It must not: read or write session files, walk the tree itself (the tree
//! crate does), or talk to providers.

#![deny(missing_docs)]

pub mod dialect;
pub mod documents;
pub mod projection;
pub mod provider_request;
pub mod providers;
pub mod reqllm;
pub mod rho;

pub use dialect::omp::convert::{
    OmpAgentLoop, OmpAgentLoopOptions, OmpImageGate, omp_agent_loop_each, omp_agent_loop_each_mut,
    omp_agent_loop_messages,
};
pub use dialect::omp::output_notice::format_output_notice;
pub use dialect::{Dialect, llm_message, llm_messages};
pub use documents::{DocumentSource, NoDocuments, WorkspaceDocuments};
pub use projection::{Format, ProjectOptions, RhoItem, project, rho_items};
pub use providers::{
    AnthropicStream, Element, OpenAiOptions, OpenAiStream, anthropic_messages, openai_chat_messages,
};
pub use reqllm::{ContentPart, Message, PartType, Role, ToolCall};
pub use rho::{Inputs, compacted, context, context_each, messages};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
