//! pi-session-context: turns a resolved session branch into the messages a
//! model provider receives.
//!
//! - [`llm::llm_messages`]: what pi's and omp's `convertToLlm` return for the
//!   agent messages of a context (JSON equal to the real functions' output).
//! - [`rho::context`] / [`rho::messages`]: rho's req_llm projection
//!   ([`reqllm::Message`]), with its rules: the compaction summary first,
//!   thinking never sent back, empty and superseded assistant turns dropped,
//!   every tool call answered, pictures and PDFs by what the model takes.
//! - [`providers`]: OpenAI Chat Completions and Anthropic Messages shapes.
//!
//! Guarantees: pure functions of their input (no clock, no randomness, no
//! global state); never panic on odd input (unknown roles, wrong field
//! types); projections are always valid for a provider (no unanswered tool
//! call). The only I/O is reading attached PDFs, and only through a
//! [`documents::DocumentSource`]; [`documents::WorkspaceDocuments`] never
//! reads outside its root.
//!
//! It must not: read session files, resolve the tree, or talk to providers.

#![deny(missing_docs)]

pub mod documents;
mod js;
pub mod llm;
pub mod omp_prompt;
mod output_notice;
pub mod providers;
pub mod reqllm;
pub mod rho;

pub use documents::{DocumentSource, NoDocuments, WorkspaceDocuments};
pub use llm::{Dialect, llm_messages};
pub use output_notice::format_output_notice;
pub use providers::{OpenAiOptions, anthropic_messages, openai_chat_messages};
pub use reqllm::{ContentPart, Message, PartType, Role, ToolCall};
pub use rho::{Inputs, Options, compacted, context, messages};
