//! [`Session::project`]: one entry point for every output format of `pi-session context`.

use pi_session_context::projection::{self, Format};
use pi_session_tree::Diagnostic;
use pi_session_types::JsonValue;

use crate::error::Result;
use crate::project::ProjectOptions;
use crate::session::Session;

impl Session {
    /// This cursor's branch in `format`, with the resolver's diagnostics (agent-based formats
    /// only). `options.dialect` picks whose rules `Agent` and `Llm` follow (pass
    /// [`Session::dialect`] for the file's own); `inputs`, `documents`, `blobs` and `openai` are
    /// used as [`projection::project`] uses them.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Format, ProjectOptions, Session, UserOptions, user};
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
        options: &ProjectOptions<'_>,
    ) -> Result<(JsonValue, Vec<Diagnostic>)> {
        Ok(projection::project(&self.branch_values()?, format, options))
    }
}
