//! [`Session::provider_request`]: the request body pi-ai builds for this cursor's branch and a
//! model (the rules live in `pi_session_context::provider_request`; this is the facade's door).

use serde_json::Value;

use pi_session_context::provider_request::{self, Api, PiAi, RequestOptions};
use pi_session_tree::{ContextOptions, Dialect};

use crate::diagnostic::Diagnostic;

use crate::{Error, Result, Session};

impl Session {
    /// The session-decided part of the request body that `dialect`'s pi-ai builds for `model`
    /// (`PROVIDER/ID`) through `api`, from this cursor's branch: the dialect's
    /// `buildSessionContext`, the messages its agent hands pi-ai, then pi-ai's conversion. The
    /// thinking level is the session's unless `options.thinking_level` is set (non-empty).
    ///
    /// Errors ([`crate::ErrorKind::InvalidInput`]): pi 1.6's dialect, an unknown model (the
    /// message names close matches), a model sent through another API, a body pi-ai would
    /// refuse to send.
    ///
    /// The same as [`Session::project`] with [`crate::Projection::request`] (kept for hosts
    /// that call it directly).
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::prelude::*;
    /// use pi_session::projection::provider_request::{Api, RequestOptions};
    /// use pi_session::tree::Dialect;
    /// let mut session = Session::in_memory("anthropic:claude-sonnet-4-5", "/work/app");
    /// session.append(user("hi", UserOptions::new()))?;
    /// let body = session.provider_request(Dialect::PI, Api::Anthropic, "anthropic/claude-sonnet-4-5",
    ///     &RequestOptions::default())?;
    /// assert_eq!(body["messages"][0]["role"], "user");
    /// # Ok(()) }
    /// ```
    pub fn provider_request(
        &self,
        dialect: Dialect,
        api: Api,
        model: &str,
        options: &RequestOptions,
    ) -> Result<Value> {
        Ok(self.request_body(dialect, api, model, options)?.0)
    }

    /// [`Session::provider_request`] with the resolver's diagnostics (what
    /// [`Session::project`] gives for [`crate::Projection::Request`]).
    pub(crate) fn request_body(
        &self,
        dialect: Dialect,
        api: Api,
        model: &str,
        options: &RequestOptions,
    ) -> Result<(Value, Vec<Diagnostic>)> {
        PiAi::for_dialect(dialect).map_err(|e| Error::invalid_input(e.to_string()))?;
        let (context, diagnostics) = self.agent_context(dialect, &ContextOptions::default())?;
        let body = provider_request::for_agent_context(api, dialect, &context, model, options)
            .map_err(|e| Error::invalid_input(e.to_string()))?;
        Ok((body, diagnostics))
    }
}
