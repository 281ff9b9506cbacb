//! pi-session: read, write and project the JSONL session files of the omp and pi coding agents,
//! with rho's `Rho.Session` API in Rust.
//!
//! Job: be the one crate an agent host depends on. [`Session`] opens and appends to a session
//! (nothing is written until the first append; every append returns the entry as it reads back
//! from disk); the entry builders ([`user`], [`assistant`], [`tool_result`], [`custom`],
//! [`compaction`], [`model_change`]) write what rho writes; the helpers ([`text`], [`typed`],
//! [`usage`], [`totals`], ...) read it back; [`context`] projects a branch to the req_llm messages
//! a model is sent. Beyond rho: cursors over one shared log ([`Session::fork`],
//! [`Session::branch_to`], named branches), [`Session::context_stats`] and
//! [`Session::provider_request`] (the request body pi-ai builds for a model).
//!
//! Guarantees: a resumed session sends exactly what the live one did (the context is built from
//! entries as they read back from the file); one error type ([`Error`]); damaged files open with
//! [`Diagnostic`]s instead of failing.
//!
//! Must not: own a format rule. Each rule lives in one lower crate, re-exported here as a module:
//! [`types`] (the entry schema), [`store`] (files, lines, locks, discovery), [`tree`] (branches,
//! compaction, each dialect's `buildSessionContext`), [`projection`] (convertToLlm, req_llm,
//! OpenAI, Anthropic).
//!
//! ```
//! # fn main() -> Result<(), pi_session::Error> {
//! use pi_session::prelude::*;
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut session = Session::new(dir.path(), "anthropic:claude-sonnet-4-5", "/work/app");
//! session.append(user("What is in README?", UserOptions::new()))?;
//! let call = ToolCall::new("call-1", "read", json!({"path": "README.md"}));
//! session.append(assistant(&Reply { tool_calls: vec![call], stop_reason: StopReason::ToolUse, ..Reply::default() }, session.model()))?;
//! session.append(tool_result("call-1", "read", "# App", false, &[], None))?;
//!
//! let live = session.context(&ProjectOptions::default())?;
//! let resumed = Session::open(session.path().unwrap(), "openai:gpt-5")?;
//! assert_eq!(resumed.session.context(&ProjectOptions::default())?, live);
//! assert_eq!(live.len(), 3); // user, assistant with the call, tool result
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod discover;
mod entries;
mod error;
mod model;
mod project;
mod provider_request;
mod read;
mod session;
mod stats;
mod title;

pub use discover::{ProjectFolders, dir, latest, latest_for_cwd, list};
pub use entries::{
    AttachedFile, AttachmentKind, DEFAULT_NAMESPACE, NoticeKind, Picture, Reply, ToolCall,
    UserOptions, assistant, compaction, custom, custom_in, model_change, tool_result, user,
};
pub use error::{Error, ErrorKind, Result};
pub use model::{UNKNOWN_PROVIDER, from_pi_model, pi_api, split_model, to_pi_model};
pub use project::{Compacted, Inputs, ProjectOptions, branch, compacted, context, messages};
pub use read::{
    Totals, aborted_tool_text, add_usage, attachments, model_from, notice_kind, text, thinking,
    tool_calls, totals, typed, usage,
};
pub use session::{Diagnostic, Opened, Session, SessionOptions};
pub use stats::{
    BYTES_PER_TOKEN, CLAUDE_WINDOW, ContextStats, DEFAULT_RESERVE_TOKENS, DEFAULT_WINDOW,
    PDF_PAGE_TOKENS, PICTURE_TOKENS, RoleTokens, StatsOptions, reserve_for, window_for,
};
pub use title::{TITLE_GRAPHEMES, title_for};

/// The entry schema (`pi-session-types`): [`types::Entry`], [`types::AgentMessage`], the JSON
/// writer.
pub use pi_session_types as types;

/// Session files (`pi-session-store`): open with diagnostics, append, lock, discovery.
pub use pi_session_store as store;

/// Branches and compaction, and each dialect's `buildSessionContext` (`pi-session-tree`).
pub use pi_session_tree as tree;

/// Projections to provider messages (`pi-session-context`): convertToLlm, req_llm, OpenAI,
/// Anthropic.
pub use pi_session_context as projection;

/// req_llm's message model: what [`context`] returns.
pub use pi_session_context::reqllm;

/// What a host needs in scope: the session, the builders and their inputs, the helpers most
/// loops call, and the typed entries.
pub mod prelude {
    pub use crate::{
        AttachedFile, AttachmentKind, ContextStats, Error, Inputs, NoticeKind, Picture,
        ProjectOptions, Reply, Session, StatsOptions, ToolCall, UserOptions, assistant, compaction,
        custom, model_change, text, tool_result, typed, user,
    };
    pub use pi_session_types::{AgentMessage, Entry, StopReason};
}
