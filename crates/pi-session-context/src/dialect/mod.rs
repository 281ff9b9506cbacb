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

use pi_session_types::shallow::Seen;
use serde_json::Value;

use crate::provider_request::PiAi;

pub use pi_session_tree::Dialect;

/// `convertToLlm` of one dialect release, one message at a time.
///
/// `Sync`: a conversion is shared by the threads that read and convert a branch.
pub trait ConvertToLlm: Sync {
    /// The LLM messages `message` becomes, given the message after it (`None` for the last).
    /// A message a rule leaves as it is comes back borrowed ([`Cow::Borrowed`]).
    fn convert<'a>(&self, message: &'a Value, next: Option<&Value>) -> Vec<Cow<'a, Value>>;

    /// Whether what [`ConvertToLlm::convert`] makes of a message may depend on `next` (a
    /// cache of converted messages keys on this): never for pi.
    fn depends_on_next(&self, _next: Option<&Value>) -> bool {
        false
    }

    /// The keys of a message [`ConvertToLlm::passes`] reads, of the message and of the one
    /// after it; what [`ConvertToLlm::convert`] reads of the message after one is among them
    /// too. Empty (the default): `passes` never answers, and a caller gains nothing by reading
    /// only a few keys of the messages it converts.
    fn reads(&self) -> &'static [&'static str] {
        &[]
    }

    /// How [`ConvertToLlm::convert`] passes `message` on, decided by its keys in
    /// [`ConvertToLlm::reads`] (and those of `next`) alone, or `None` when the conversion may
    /// read more of it or change it otherwise. So a caller may read only those keys of a
    /// message (every one it holds among them, in its order; the others left out), as a value
    /// or as a list of them ([`Seen`]), and, when this answers, send the message's own text,
    /// as it is or with the members added. The answer for a message read so must be the
    /// answer for the whole message. Asked with no `next`, it answers for a message after
    /// which none changes how it passes (a caller that does not know the next message yet asks
    /// again once it does).
    ///
    /// ```
    /// use pi_session_context::dialect::{convert_to_llm, Dialect, Passed};
    /// use pi_session_types::shallow::{Keys, Seen, canonical_keyed_message};
    /// use serde_json::json;
    /// let omp = convert_to_llm(Dialect::OMP);
    /// // Read as its role only: omp adds an attribution to a user message that has none.
    /// let user = json!({"role":"user"});
    /// let appended = Some(Passed::Appended { key: "attribution", value: "user" });
    /// assert_eq!(omp.passes(Seen::Value(&user), None), appended);
    /// let whole = json!({"role":"user","content":"hi","timestamp":1});
    /// assert_eq!(omp.convert(&whole, None)[0].as_ref(),
    ///     &json!({"role":"user","content":"hi","timestamp":1,"attribution":"user"}));
    /// // The same keys read from the line into a list: the same answer.
    /// let keys = Keys { entry: &["type", "id", "message"], message: omp.reads(), blocks: &[] };
    /// let line = br#"{"type":"message","id":"a","message":{"role":"user","content":"hi"}}"#;
    /// let (keyed, _) = canonical_keyed_message(line, &keys, "a").unwrap();
    /// assert_eq!(omp.passes(Seen::Keyed(&keyed), None), appended);
    /// // An assistant turn followed by omp's interrupted-thinking mark loses its thinking.
    /// let turn = json!({"role":"assistant","stopReason":"stop"});
    /// let mark = json!({"role":"custom","customType":"interrupted-thinking"});
    /// assert_eq!(omp.passes(Seen::Value(&turn), None), Some(Passed::Unchanged));
    /// assert_eq!(omp.passes(Seen::Value(&turn), Some(Seen::Value(&mark))), None);
    /// ```
    fn passes(&self, _message: Seen<'_>, _next: Option<Seen<'_>>) -> Option<Passed> {
        None
    }

    /// The pi-ai whose provider requests take what this conversion gives, when this crate
    /// reproduces it ([`crate::provider_request::PiAi::for_dialect`]).
    fn pi_ai(&self) -> Option<PiAi>;
}

/// How a conversion passes a message on without reading more of it
/// ([`ConvertToLlm::passes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Passed {
    /// As it is: the one message the conversion gives is the message itself.
    Unchanged,
    /// With one string member added after its last key, one the message does not hold
    /// (JavaScript's `{...m, key: value}`): the message's text with `,"key":"value"` before
    /// its closing brace.
    Appended {
        /// The key added (plain ASCII, no escape needed).
        key: &'static str,
        /// Its string value (plain ASCII, no escape needed).
        value: &'static str,
    },
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
