//! One entry point for every output format (what `pi-session context FILE
//! --format …` prints).

use serde_json::Value;

use pi_session_types::json::{JsBuffer, JsonError};

use pi_session_tree::{
    AgentContext, BlobSource, ContextOptions, Diagnostic, Dialect, agent_context,
};

use crate::dialect::llm_messages;
use crate::dialect::omp::convert::{OmpAgentLoopOptions, OmpImageGate, omp_agent_loop_messages};
use crate::documents::{DocumentSource, NoDocuments};
use crate::providers::{
    AnthropicStream, Element, OpenAiOptions, OpenAiStream, anthropic_messages, openai_chat_messages,
};
use crate::reqllm::{Message, to_canonical_json, to_compact_json};
use crate::rho::{self, Inputs};

/// An output format of [`project`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The dialect's `buildSessionContext`: `{messages, thinkingLevel, model...}`.
    Agent,
    /// The dialect's `convertToLlm` of its `buildSessionContext` messages.
    Llm,
    /// rho's req_llm messages, canonical (full) JSON.
    ReqLlm,
    /// rho's req_llm messages, compact JSON.
    ReqLlmCompact,
    /// The `messages` array of an OpenAI Chat Completions request.
    OpenAi,
    /// The `{system?, messages}` of an Anthropic Messages request.
    Anthropic,
    /// What omp's agent loop hands its provider
    /// ([`omp_agent_loop_messages`]), always by omp's rules; pictures are
    /// replaced by omp's placeholder when `inputs.image` is off.
    OmpAgentLoop,
}

/// A format name that is not one of [`Format`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown format {0:?}: use agent, llm, req-llm, req-llm-compact, openai, anthropic or omp-agent-loop"
)]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "agent" => Ok(Format::Agent),
            "llm" => Ok(Format::Llm),
            "req-llm" => Ok(Format::ReqLlm),
            "req-llm-compact" => Ok(Format::ReqLlmCompact),
            "openai" => Ok(Format::OpenAi),
            "anthropic" => Ok(Format::Anthropic),
            "omp-agent-loop" => Ok(Format::OmpAgentLoop),
            other => Err(UnknownFormat(other.to_owned())),
        }
    }
}

/// What [`project`] needs besides the branch; also the options of rho's [`rho::context`] and
/// [`rho::messages`] (which read `inputs`, `documents` and `blobs`). The one options type of
/// every projection, re-exported by the facade as `pi_session::ProjectOptions`.
#[derive(Clone, Copy)]
pub struct ProjectOptions<'a> {
    /// Whose `buildSessionContext`/`convertToLlm` to follow ([`Format::Agent`], [`Format::Llm`];
    /// [`Format::OmpAgentLoop`] always follows omp).
    pub dialect: Dialect,
    /// What the model takes (the req_llm-based formats).
    pub inputs: Inputs,
    /// Where attached PDFs are read from (with `inputs.pdf`).
    pub documents: &'a dyn DocumentSource,
    /// Where omp's `blob:sha256:` pictures are read from.
    pub blobs: Option<&'a dyn BlobSource>,
    /// OpenAI-compatible server switches ([`Format::OpenAi`]).
    pub openai: OpenAiOptions,
}

impl std::fmt::Debug for ProjectOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectOptions")
            .field("dialect", &self.dialect)
            .field("inputs", &self.inputs)
            .field("openai", &self.openai)
            .finish_non_exhaustive()
    }
}

impl Default for ProjectOptions<'_> {
    fn default() -> Self {
        ProjectOptions {
            dialect: Dialect::PI,
            inputs: Inputs::default(),
            documents: &NoDocuments,
            blobs: None,
            openai: OpenAiOptions::default(),
        }
    }
}

/// Projects a branch (entries root first, as JSON objects) into `format`.
/// The diagnostics are the tree's, from building the agent context
/// ([`Format::Agent`], [`Format::Llm`] and [`Format::OmpAgentLoop`] only).
///
/// ```
/// use pi_session_context::projection::{project, Format, ProjectOptions};
/// use serde_json::json;
/// let branch = vec![json!({"type":"message","id":"a","parentId":null,
///     "message":{"role":"user","content":"hi","timestamp":1}})];
/// let (out, _) = project(&branch, Format::OpenAi, &ProjectOptions::default());
/// assert_eq!(out, json!([{"role":"user","content":"hi"}]));
/// ```
pub fn project(
    branch: &[Value],
    format: Format,
    options: &ProjectOptions<'_>,
) -> (Value, Vec<Diagnostic>) {
    if let Some(dialect) = agent_dialect(format, options.dialect) {
        let context_options = ContextOptions {
            blobs: options.blobs,
        };
        let (context, diagnostics) = agent_context(branch, dialect, &context_options);
        return (project_context(&context, format, options), diagnostics);
    }
    let messages = rho::context(branch, options);
    let value = match format {
        Format::ReqLlmCompact => to_compact_json(&messages),
        Format::OpenAi => openai_chat_messages(messages, options.openai),
        Format::Anthropic => anthropic_messages(messages),
        Format::ReqLlm | Format::Agent | Format::Llm | Format::OmpAgentLoop => {
            to_canonical_json(&messages)
        }
    };
    (value, Vec::new())
}

/// One element of a req_llm-based answer, as [`rho_items`] gives it: a req_llm message itself
/// ([`Format::ReqLlm`]: its `Serialize` is the canonical form, written without a `Value` of
/// it), a provider's request message as its stream made it ([`Format::OpenAi`],
/// [`Format::Anthropic`]: written without a map made of it) or the element as a JSON value
/// ([`Format::ReqLlmCompact`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RhoItem {
    /// A req_llm message, serialised in its canonical form ([`Message::to_canonical_json`]).
    Message(Message),
    /// An OpenAI or Anthropic request message ([`OpenAiStream::push`],
    /// [`AnthropicStream::push`]).
    Element(Element),
    /// An element made as JSON.
    Value(Value),
}

impl RhoItem {
    /// The element as a JSON value (what [`project`] holds in its answer's array).
    pub fn into_value(self) -> Value {
        match self {
            RhoItem::Message(message) => message.to_canonical_json(),
            RhoItem::Element(element) => element.into_value(),
            RhoItem::Value(value) => value,
        }
    }

    /// The element as compact JSON text, as `JSON.stringify` prints [`Self::into_value`]'s
    /// value ([`pi_session_types::json::to_js_vec`]), written into `buffer` over what it held:
    /// a writer of many elements reuses one buffer, and no `Value` of a req_llm message is
    /// made. What `pi-session context` prints for each element, before its layout.
    ///
    /// ```
    /// use pi_session_context::projection::{rho_items, Format, ProjectOptions};
    /// use pi_session_types::json::{JsBuffer, to_js_vec};
    /// use serde_json::json;
    /// let branch = vec![json!({"type":"message","id":"a","parentId":null,
    ///     "message":{"role":"user","content":"a \"quoted\"\nline, é","timestamp":1}})];
    /// let mut buffer = JsBuffer::default();
    /// for format in [Format::ReqLlm, Format::OpenAi, Format::Anthropic] {
    ///     rho_items(&branch, format, &ProjectOptions::default(), |item| {
    ///         let written = item.write_compact(&mut buffer).unwrap().to_vec();
    ///         assert_eq!(written, to_js_vec(&item.into_value()).unwrap());
    ///         Ok::<_, ()>(())
    ///     })
    ///     .unwrap();
    /// }
    /// ```
    ///
    /// # Errors
    /// What [`JsBuffer::write`] gives for a req_llm message.
    pub fn write_compact<'b>(&self, buffer: &'b mut JsBuffer) -> Result<&'b [u8], JsonError> {
        match self {
            RhoItem::Message(message) => buffer.write(message),
            RhoItem::Element(element) => buffer.write(element),
            RhoItem::Value(value) => Ok(buffer.write_value(value)),
        }
    }

    /// [`Self::write_compact`] laid out as `JSON.stringify(value, null, 2)` lays the element
    /// out `depth` levels deep in the answer ([`JsBuffer::write_pretty`]): what `pi-session
    /// context` prints for it. `None` where the layout cannot be written on the way (an
    /// object with an integer-like key): [`Self::write_compact`]'s bytes are then laid out.
    ///
    /// # Errors
    /// What [`JsBuffer::write_pretty`] gives for a req_llm message.
    pub fn write_pretty<'b>(
        &self,
        buffer: &'b mut JsBuffer,
        depth: usize,
    ) -> Result<Option<&'b [u8]>, JsonError> {
        match self {
            RhoItem::Message(message) => buffer.write_pretty(message, depth),
            RhoItem::Element(element) => buffer.write_pretty(element, depth),
            RhoItem::Value(value) => Ok(buffer.write_value_pretty(value, depth)),
        }
    }
}

impl serde::Serialize for RhoItem {
    /// Serialises the element as [`Self::into_value`]'s value serialises.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RhoItem::Message(message) => message.serialize(serializer),
            RhoItem::Element(element) => element.serialize(serializer),
            RhoItem::Value(value) => value.serialize(serializer),
        }
    }
}

/// A req_llm-based `format` ([`agent_dialect`] is `None`) of a branch (entries root first,
/// as [`project`] takes them), an element at a time: `each` is given the elements of the
/// answer's array in order ([`Format::Anthropic`]: of its `messages`), each made from one
/// req_llm message ([`rho::context_each`]) and dropped by the caller once written, so the
/// answer is never held whole; the entries are borrowed (a caller about to end may leave them
/// to the process's end). [`project`] gives the same elements; for
/// [`Format::Anthropic`] it wraps them as `{"messages": [...]}`, with no `system` key (rho's
/// projection makes no system message). The first error of `each` ends the walk.
///
/// ```
/// use pi_session_context::projection::{project, rho_items, Format, ProjectOptions};
/// use serde_json::json;
/// let branch = vec![json!({"type":"message","id":"a","parentId":null,
///     "message":{"role":"user","content":"hi","timestamp":1}})];
/// let options = ProjectOptions::default();
/// let mut items = Vec::new();
/// rho_items(&branch, Format::OpenAi, &options, |m| Ok::<_, ()>(items.push(m.into_value())))
///     .unwrap();
/// assert_eq!(serde_json::Value::Array(items), project(&branch, Format::OpenAi, &options).0);
/// ```
pub fn rho_items<E>(
    entries: &[Value],
    format: Format,
    options: &ProjectOptions<'_>,
    mut each: impl FnMut(RhoItem) -> Result<(), E>,
) -> Result<(), E> {
    let mut items = RhoItems::new(format, options);
    rho::context_each(entries, options, |m| items.push(m, &mut each))?;
    items.finish(&mut each)
}

/// The elements of a req_llm-based `format` made from rho's messages as they come, for a
/// caller that makes the messages itself ([`rho::ContextParts`] over a branch read in parts):
/// [`push`](Self::push) each message in order, then [`finish`](Self::finish). What
/// [`rho_items`] gives for the same messages.
#[derive(Debug)]
pub struct RhoItems {
    made: Made,
}

/// How [`RhoItems`] makes a format's elements.
#[derive(Debug)]
enum Made {
    OpenAi(OpenAiStream),
    Anthropic(AnthropicStream),
    Compact,
    Canonical,
}

impl RhoItems {
    /// The elements of `format` (an agent-based one: the req_llm messages themselves), with
    /// `options.openai` for [`Format::OpenAi`].
    pub fn new(format: Format, options: &ProjectOptions<'_>) -> Self {
        let made = match format {
            Format::OpenAi => Made::OpenAi(OpenAiStream::new(options.openai)),
            Format::Anthropic => Made::Anthropic(AnthropicStream::default()),
            Format::ReqLlmCompact => Made::Compact,
            Format::ReqLlm | Format::Agent | Format::Llm | Format::OmpAgentLoop => Made::Canonical,
        };
        RhoItems { made }
    }

    /// Gives `each` the elements complete once `message` has come.
    pub fn push<E>(
        &mut self,
        message: Message,
        each: &mut impl FnMut(RhoItem) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut element = |e| each(RhoItem::Element(e));
        match &mut self.made {
            Made::OpenAi(stream) => stream.push(message, &mut element),
            Made::Anthropic(stream) => stream.push(message, &mut element),
            Made::Compact => each(RhoItem::Value(message.to_compact_json())),
            Made::Canonical => each(RhoItem::Message(message)),
        }
    }

    /// Gives `each` what the last messages still owe (a run of tool results' pictures or
    /// turn).
    pub fn finish<E>(self, each: &mut impl FnMut(RhoItem) -> Result<(), E>) -> Result<(), E> {
        let mut element = |e| each(RhoItem::Element(e));
        match self.made {
            Made::OpenAi(stream) => stream.finish(&mut element),
            // rho's messages hold no system message, so no `system` blocks come back.
            Made::Anthropic(stream) => stream.finish(&mut element).map(drop),
            Made::Compact | Made::Canonical => Ok(()),
        }
    }
}

/// Whose `buildSessionContext` an agent-based `format` follows ([`Format::Agent`],
/// [`Format::Llm`]: `dialect`; [`Format::OmpAgentLoop`]: always omp), or `None` for the
/// req_llm-based formats, which [`project`] builds from the branch itself.
pub fn agent_dialect(format: Format, dialect: Dialect) -> Option<Dialect> {
    match format {
        Format::Agent | Format::Llm => Some(dialect),
        Format::OmpAgentLoop => Some(Dialect::OMP),
        Format::ReqLlm | Format::ReqLlmCompact | Format::OpenAi | Format::Anthropic => None,
    }
}

/// An agent-based `format` ([`agent_dialect`] is `Some`) of a context already built with the
/// dialect [`agent_dialect`] names: what [`project`] gives for those formats, for callers
/// that build the context themselves (the facade reads only the entries it needs). A
/// req_llm-based format gives `null`: those are built from the branch ([`project`]).
pub fn project_context(
    context: &AgentContext,
    format: Format,
    options: &ProjectOptions<'_>,
) -> Value {
    match format {
        Format::Agent => context.to_value(),
        Format::Llm => Value::Array(llm_messages(context.messages(), options.dialect)),
        Format::OmpAgentLoop => Value::Array(omp_agent_loop_messages(
            context.messages(),
            &omp_agent_loop_options(options.inputs),
        )),
        Format::ReqLlm | Format::ReqLlmCompact | Format::OpenAi | Format::Anthropic => Value::Null,
    }
}

/// The options of omp's agent loop that [`Format::OmpAgentLoop`] projects with: omp's image
/// gate for a model that takes pictures when `inputs.image` is on (pictures are not blocked).
pub fn omp_agent_loop_options(inputs: Inputs) -> OmpAgentLoopOptions {
    OmpAgentLoopOptions::default().with_images(OmpImageGate::for_model(inputs.image, false))
}
