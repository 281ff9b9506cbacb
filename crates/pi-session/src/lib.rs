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
//! [`Session::project`] with [`Projection::request`] (the request body pi-ai builds for a
//! model), and context
//! management ([`manage`]: resolution levels per cursor, [`Session::prepare_context`] to fit a
//! budget, compaction by age or turns, extension state).
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

mod across;
mod api_table;
mod at_leaf;
mod builders;
mod context_json;
mod cursors;
mod diagnostic;
mod dialect;
mod dialect_write;
mod discover;
mod entries;
mod error;
pub mod foreign;
mod fork;
mod formats;
pub mod manage;
mod model;
mod project;
mod queries;
mod read;
mod rho_sessions;
mod rho_stream;
mod search;
mod session;
mod stats;
mod summary;
mod title;
mod turn;
mod turns;
mod usage_report;

pub use across::{MAX_DEPTH, session_files_under};
pub use api_table::api_for;
pub use builders::{
    CustomEntry, CustomMessage, Label, ModelChange, ThinkingLevelChange, ToolResult, UsageBuilder,
    model_change_in, session_name,
};
pub use context_json::{ContextLeftovers, SentMessage};
pub use cursors::CURSOR_CUSTOM_TYPE;
pub use diagnostic::Diagnostic;
pub use discover::{
    ProjectFolders, blob_dir, dir, latest, latest_for_cwd, list, list_all, session_roots,
    session_roots_from_env,
};
pub use entries::{
    AttachedFile, AttachmentKind, DEFAULT_NAMESPACE, NoticeKind, Picture, Reply, ToolCall,
    UserOptions, assistant, assistant_in, compaction, custom, custom_in, model_change, tool_result,
    user,
};
pub use error::{Error, ErrorKind, Result, error_chain};
pub use fork::Migrated;
pub use formats::Projection;
pub use model::{UNKNOWN_PROVIDER, from_pi_model, pi_api, split_model, to_pi_model};
/// The output formats of [`Session::project`] (and `pi-session context --format`).
pub use pi_session_context::projection::Format;
pub use pi_session_tree::Compacted;
pub use project::{Inputs, ProjectOptions, branch, compacted, context, messages};
pub use queries::TreeRead;
pub use read::{
    Totals, aborted_tool_text, add_usage, attachments, model_from, notice_kind, text, thinking,
    tool_calls, totals, typed, usage,
};
pub use rho_sessions::{
    SessionInfo, find_latest_session, list_sessions, list_sessions_in, rho_project_hash,
    rho_session_dir, rho_session_file_name, rho_sessions_root, startup_hint,
};
pub use search::{FileHits, Hit, Pattern, SearchOptions, SearchRole, search, search_file};
pub use session::{Opened, Session, SessionOptions};
pub use stats::{
    BYTES_PER_TOKEN, CLAUDE_WINDOW, ContextStats, DEFAULT_RESERVE_TOKENS, DEFAULT_WINDOW,
    PDF_PAGE_TOKENS, PICTURE_TOKENS, PhaseTokens, ResolutionTokens, RoleTokens, StatsOptions,
    reserve_for, window_for,
};
pub use summary::{
    SUMMARY_PREFIX_BYTES, SUMMARY_TAIL_BYTES, SessionStatus, SessionSummary, message_text,
    session_files, summaries, summaries_in, summarize, summarize_listing, system_ms,
};
pub use title::{TITLE_GRAPHEMES, title_for};
pub use turn::TurnContext;
pub use usage_report::{
    GroupBy, UNKNOWN_GROUP, UsageOptions, UsageReport, add_breakdown, file_usage,
    parse_report_date, record_model, record_time, usage_report, usage_report_with,
};

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
        AttachedFile, AttachmentKind, ContextStats, CustomEntry, CustomMessage, Error, Inputs,
        Label, ModelChange, NoticeKind, Picture, ProjectOptions, Reply, Session, StatsOptions,
        ThinkingLevelChange, ToolCall, ToolResult, UsageBuilder, UserOptions, assistant,
        compaction, custom, model_change, text, tool_result, typed, user,
    };
    pub use crate::{Format, Migrated};
    pub use pi_session_tree::Dialect;
    pub use pi_session_types::{AgentMessage, Entry, StopReason};
}
