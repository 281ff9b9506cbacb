//! Each dialect's `convertToLlm`, one folder per dialect behind [`ConvertToLlm`]:
//!
//! - pi 0.73.1 and 1.6.0 ([`pi`]);
//! - omp 18.2.3 ([`omp`], with the steps of omp's agent loop around it).
//!
//! [`convert_to_llm`] is the one place that chooses between them.

pub mod omp;
pub mod pi;
pub(crate) mod run_text;

use std::borrow::Cow;

use serde_json::Value;

use crate::provider_request::PiAi;

pub use pi_session_tree::Dialect;

/// `convertToLlm` of one dialect release, one message at a time.
pub trait ConvertToLlm {
    /// The LLM messages `message` becomes, given the message after it (`None` for the last).
    /// A message a rule leaves as it is comes back borrowed ([`Cow::Borrowed`]).
    fn convert<'a>(&self, message: &'a Value, next: Option<&Value>) -> Vec<Cow<'a, Value>>;

    /// Whether what [`ConvertToLlm::convert`] makes of a message may depend on `next` (a
    /// cache of converted messages keys on this): never for pi.
    fn depends_on_next(&self, _next: Option<&Value>) -> bool {
        false
    }

    /// Whether a message of `role` comes back from [`ConvertToLlm::convert`] as it is
    /// (borrowed, alone), whatever its other keys and the next message hold: a caller may then
    /// read only its role (pi: `user`, `assistant`, `toolResult`, and 1.6's `system`). `false`
    /// (the default) when the conversion may read more of it.
    fn passes_unchanged(&self, _role: &str) -> bool {
        false
    }

    /// Whether [`ConvertToLlm::passes_unchanged`] holds for some role (pi's: three or four):
    /// when it holds for none (omp's conversion reads every message), a caller gains nothing
    /// by reading a few keys of the messages it converts.
    fn passes_some_unchanged(&self) -> bool {
        false
    }

    /// The pi-ai whose provider requests take what this conversion gives, when this crate
    /// reproduces it ([`crate::provider_request::PiAi::for_dialect`]).
    fn pi_ai(&self) -> Option<PiAi>;
}

/// The `convertToLlm` of `dialect`.
pub fn convert_to_llm(dialect: Dialect) -> &'static dyn ConvertToLlm {
    match dialect {
        Dialect::Pi(release) => pi::Pi::of(release),
        Dialect::Omp(_) => &omp::convert::Omp,
        // `Dialect` is `#[non_exhaustive]`: an agent this crate does not know yet is read as
        // pi, the documented default dialect.
        _ => pi::Pi::of(pi_session_tree::PiRelease::V0_73),
    }
}

/// `convertToLlm(messages)` of `dialect`.
///
/// ```
/// use pi_session_context::{llm_messages, Dialect};
/// use serde_json::json;
/// let agent = vec![json!({"role":"custom","customType":"note","content":"hi","display":true,"timestamp":1})];
/// let pi = llm_messages(&agent, Dialect::PI);
/// assert_eq!(pi, vec![json!({"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1})]);
/// let omp = llm_messages(&agent, Dialect::OMP);
/// assert_eq!(omp, vec![json!({"role":"developer","content":[{"type":"text","text":"hi"}],"timestamp":1})]);
/// ```
pub fn llm_messages(messages: &[Value], dialect: Dialect) -> Vec<Value> {
    messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| llm_message(m, messages.get(i + 1), dialect))
        .map(Cow::into_owned)
        .collect()
}

/// `convertToLlm` of one message, given the message after it (omp strips an assistant's
/// interrupted thinking when an `interrupted-thinking` custom message follows): what
/// [`llm_messages`] gives for it. A message a rule leaves as it is comes back borrowed
/// ([`Cow::Borrowed`]), so a caller that shares its messages (`Arc`) can share it again.
///
/// ```
/// use std::borrow::Cow;
/// use pi_session_context::{llm_message, Dialect};
/// use serde_json::json;
/// let user = json!({"role":"user","content":"hi","timestamp":1});
/// let out = llm_message(&user, None, Dialect::PI);
/// assert!(matches!(out[..], [Cow::Borrowed(m)] if std::ptr::eq(m, &user)));
/// ```
pub fn llm_message<'a>(
    message: &'a Value,
    next: Option<&Value>,
    dialect: Dialect,
) -> Vec<Cow<'a, Value>> {
    convert_to_llm(dialect).convert(message, next)
}
