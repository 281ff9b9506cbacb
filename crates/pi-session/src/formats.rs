//! [`Session::project`]: one entry point for every output format of `pi-session context`,
//! provider request bodies included ([`Projection`]).

use crate::diagnostic::Diagnostic;
use pi_session_context::projection::Format;
use pi_session_context::provider_request::{Api, RequestOptions};
use pi_session_types::JsonValue;

use crate::error::Result;
use crate::project::ProjectOptions;
use crate::session::Session;

/// What [`Session::project`] makes: a [`Format`] (every `Format` converts into one), or the
/// request body a pi-ai builds for one model (`pi-session context --format
/// openai-chat|openai-responses|anthropic|google --model PROVIDER/ID`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Projection {
    /// A message format.
    Format(Format),
    /// The session-decided part of the request body that the pi-ai of
    /// `ProjectOptions::dialect` builds for `model` (`PROVIDER/ID`) through `api`; an empty
    /// `options.thinking_level` means the session's own level.
    Request {
        /// The request shape (the model must be sent through it).
        api: Api,
        /// `PROVIDER/ID` in the dialect's registry.
        model: String,
        /// The caller's options (system prompt, thinking level, max tokens).
        options: RequestOptions,
    },
}

impl Projection {
    /// [`Projection::Request`] with these parts.
    pub fn request(api: Api, model: impl Into<String>, options: RequestOptions) -> Self {
        Projection::Request {
            api,
            model: model.into(),
            options,
        }
    }
}

impl From<Format> for Projection {
    fn from(format: Format) -> Self {
        Projection::Format(format)
    }
}

impl Session {
    /// This cursor's branch in `format` (a [`Format`] or a [`Projection`]), with the branch's
    /// diagnostics and the resolver's (agent-based formats and request bodies only); the same
    /// as [`Session::project_at`] at [`Session::leaf_selector`]. Agent-based formats read only
    /// the entries the context needs, and keep none. `options.dialect` picks whose rules `Agent` and `Llm` follow (pass
    /// [`Session::dialect`] for the file's own); `inputs`, `documents`, `blobs` and `openai` are
    /// used as [`pi_session_context::projection::project`] uses them. A [`Projection::Request`] is
    /// the request body `options.dialect`'s pi-ai builds for the branch, blob pictures read from
    /// `options.blobs` (errors: pi 1.6's dialect, an
    /// unknown model, a model sent through another API, a body pi-ai would refuse).
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
    /// use pi_session::Projection;
    /// use pi_session::projection::provider_request::{Api, RequestOptions};
    /// let request = Projection::request(Api::Anthropic, "anthropic/claude-sonnet-4-5",
    ///     RequestOptions::default());
    /// let (body, _) = session.project(request, &options)?;
    /// assert_eq!(body["messages"][0]["content"][0]["text"], "hi");
    /// # Ok(()) }
    /// ```
    pub fn project(
        &self,
        format: impl Into<Projection>,
        options: &ProjectOptions<'_>,
    ) -> Result<(JsonValue, Vec<Diagnostic>)> {
        self.project_at(&self.leaf_selector(), format, options)
    }
}
