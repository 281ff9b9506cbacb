//! [`Session::project`]: one entry point for every output format of `pi-session context`.

use pi_session_context::projection::{self, ProjectOptions as FormatOptions};
use pi_session_tree::{ContextOptions, Diagnostic, agent_context};
use pi_session_types::JsonValue;

use crate::error::Result;
use crate::session::Session;

/// What [`Session::project`] produces for this cursor's branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The dialect's `buildSessionContext`: `{messages, thinkingLevel, model...}`.
    Agent,
    /// The dialect's `convertToLlm` of those messages.
    Llm,
    /// rho's req_llm messages, canonical JSON.
    ReqLlm,
    /// rho's req_llm messages, compact JSON.
    ReqLlmCompact,
    /// The `messages` of an OpenAI Chat Completions request.
    OpenAi,
    /// The `{system?, messages}` of an Anthropic Messages request.
    Anthropic,
    /// What omp's agent loop hands its provider (always omp's rules).
    OmpAgentLoop,
}

impl Session {
    /// This cursor's branch in `format`, with the resolver's diagnostics (agent-based formats
    /// only). `options.dialect` picks whose rules `Agent` and `Llm` follow (pass
    /// [`Session::dialect`] for the file's own); `inputs`, `documents`, `blobs` and `openai` are
    /// used as [`projection::project`] uses them.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Format, Session, UserOptions, user};
    /// use pi_session::projection::ProjectOptions;
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let options = ProjectOptions { dialect: session.dialect(), ..ProjectOptions::default() };
    /// let (openai, _) = session.project(Format::OpenAi, &options)?;
    /// assert_eq!(openai, serde_json::json!([{"role": "user", "content": "hi"}]));
    /// let (agent, _) = session.project(Format::Agent, &options)?;
    /// assert_eq!(agent["model"]["provider"], "anthropic");
    /// # Ok(()) }
    /// ```
    pub fn project(
        &self,
        format: Format,
        options: &FormatOptions<'_>,
    ) -> Result<(JsonValue, Vec<Diagnostic>)> {
        let branch = self.branch_values()?;
        let format = match format {
            Format::Agent => {
                let context_options = ContextOptions {
                    blobs: options.blobs,
                };
                let (context, diagnostics) =
                    agent_context(&branch, options.dialect, &context_options);
                return Ok((context.to_value(), diagnostics));
            }
            Format::Llm => projection::Format::Llm,
            Format::ReqLlm => projection::Format::ReqLlm,
            Format::ReqLlmCompact => projection::Format::ReqLlmCompact,
            Format::OpenAi => projection::Format::OpenAi,
            Format::Anthropic => projection::Format::Anthropic,
            Format::OmpAgentLoop => projection::Format::OmpAgentLoop,
        };
        Ok(projection::project(&branch, format, options))
    }
}
