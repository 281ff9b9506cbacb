//! Provider request bodies as pi-ai builds them: the part of an HTTP request
//! body the session decides, for one model, by the rules of the pi-ai that
//! pi 0.73.1 (`@mariozechner/pi-ai`) or omp 18.2.3 (`@oh-my-pi/pi-ai`) ships.
//!
//! The input is the dialect's LLM messages (pi: [`crate::llm_messages`]; omp:
//! [`crate::omp_agent_loop_messages`] with the image gate of the model), the
//! model (looked up in the generated [`registry`]) and the caller's
//! [`RequestOptions`]. The output is one JSON object holding only the keys
//! the session decides, in pi-ai's key order:
//!
//! | API | keys |
//! |-----|------|
//! | `openai-completions` ([`openai_chat`]) | `messages`, `tools` (only the `[]` pi-ai sends after tool history), reasoning keys |
//! | `openai-responses` ([`openai_responses`]) | `input`, `reasoning`, `include` |
//! | `anthropic-messages` ([`anthropic`]) | `messages`, `system`, `thinking`, `output_config` |
//! | `google-generative-ai` ([`google`]) | `contents`, `systemInstruction`, `generationConfig.thinkingConfig` |
//!
//! What pi-ai does to the messages on the way (both versions, see each
//! module): [`transform`] (same-model test, thinking from other models to text
//! or dropped, tool-call id normalisation, errored/aborted turns skipped,
//! synthetic results for unanswered calls, image placeholders for models
//! without image input), then the per-API conversion (roles, content shapes,
//! cache-control markers, system prompt placement, reasoning settings from the
//! thinking level).
//!
//! Left to the host: authentication, headers, base URL, streaming and
//! retries, tool definitions, sampling parameters, `model`/`stream`/`store`
//! and the other keys pi-ai fills from its options rather than the session.
//!
//! Proven by `cargo xtask golden`, which compares every body recorded from
//! the real pi-ai (`fixtures/<impl>/requests/`) with ours.

pub mod anthropic;
pub mod anthropic_omp;
pub mod bun_hash;
pub mod google;
pub mod openai_chat;
pub mod openai_responses;
pub mod openai_responses_omp;
pub mod registry;
mod surrogates;
pub mod transform;

use serde_json::Value;

use crate::dialect::omp::convert::{OmpAgentLoopOptions, OmpImageGate, omp_agent_loop_messages};
use crate::dialect::{Dialect, llm_messages};

pub use registry::{Model, Thinking, UnknownModel, lookup};

/// Whose pi-ai builds the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PiAi {
    /// `@mariozechner/pi-ai` 0.73.1 (pi 0.73.1).
    Pi,
    /// omp 18.2.3: its registry (`@oh-my-pi/pi-catalog`), its agent-loop
    /// messages and its own pi-ai's rules (`@oh-my-pi/pi-ai`) for every API.
    Omp,
}

impl PiAi {
    /// The pi-ai a session dialect's agent sends with: pi 0.73.1's for pi,
    /// omp 18.2.3's for omp; pi 1.6's is not reproduced
    /// ([`RequestError::Dialect`]). The one dialect → pi-ai mapping (the
    /// facade and the CLI both use it).
    pub fn for_dialect(dialect: Dialect) -> Result<PiAi, RequestError> {
        crate::dialect::convert_to_llm(dialect)
            .pi_ai()
            .ok_or(RequestError::Dialect)
    }

    /// The package and version whose rules this follows.
    pub fn package(self) -> &'static str {
        match self {
            PiAi::Pi => "@mariozechner/pi-ai@0.73.1",
            PiAi::Omp => "@oh-my-pi/pi-ai@18.2.3",
        }
    }
}

/// The request shape a model is sent (`model.api` in the registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenAI Chat Completions (`openai-completions`).
    OpenAiChat,
    /// OpenAI Responses (`openai-responses`).
    OpenAiResponses,
    /// Anthropic Messages (`anthropic-messages`).
    Anthropic,
    /// Google Generative AI (`google-generative-ai`).
    Google,
}

impl Api {
    /// The registry's name of the API.
    pub fn name(self) -> &'static str {
        match self {
            Api::OpenAiChat => "openai-completions",
            Api::OpenAiResponses => "openai-responses",
            Api::Anthropic => "anthropic-messages",
            Api::Google => "google-generative-ai",
        }
    }

    /// The API named `name` in the registry, when it is one of ours.
    pub fn from_name(name: &str) -> Option<Api> {
        [
            Api::OpenAiChat,
            Api::OpenAiResponses,
            Api::Anthropic,
            Api::Google,
        ]
        .into_iter()
        .find(|api| api.name() == name)
    }
}

/// What the caller decides (pi-ai's options), passed through as pi-ai does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestOptions {
    /// The system prompt (`context.systemPrompt`); `None` or empty: none.
    pub system_prompt: Option<String>,
    /// The thinking level (`off`, `minimal`, `low`, `medium`, `high`,
    /// `xhigh`); the session's own level is the agent's default.
    pub thinking_level: String,
    /// `maxTokens` (pi-ai's default: `min(model.maxTokens, 32000)`); it bounds
    /// Anthropic's thinking budget.
    pub max_tokens: Option<u64>,
}

/// Why no body could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// The model's API is not one this module builds.
    #[error(
        "model {model} uses the {api} API; request bodies are built for openai-completions, openai-responses, anthropic-messages and google-generative-ai"
    )]
    UnsupportedApi {
        /// `provider/id`.
        model: String,
        /// The registry's API name.
        api: String,
    },
    /// The API asked for is not the model's.
    #[error(
        "model {model} is sent through the {actual} API, not {requested}: use --format {format} (or another model)"
    )]
    WrongApi {
        /// `provider/id`.
        model: String,
        /// The API asked for.
        requested: &'static str,
        /// The model's API.
        actual: String,
        /// The matching `--format` name.
        format: &'static str,
    },
    /// pi-ai's client refuses to send the request (Google's SDK refuses an
    /// empty `contents`).
    #[error("pi-ai would not send this request: {0}")]
    Refused(String),
    /// The dialect has no reproduced pi-ai (pi 1.6).
    #[error(
        "request bodies follow pi 0.73.1's or omp 18.2.3's pi-ai: use the pi or the omp dialect"
    )]
    Dialect,
    /// The model is not in the dialect's registry.
    #[error(transparent)]
    UnknownModel(#[from] UnknownModel),
}

/// The session-decided part of the request body pi-ai builds for `model`
/// from `messages` (the dialect's LLM messages).
///
/// ```
/// use pi_session_context::provider_request::{build, lookup, PiAi, RequestOptions};
/// use serde_json::json;
/// let model = lookup(PiAi::Pi, "groq/llama-3.3-70b-versatile").unwrap();
/// let messages = vec![json!({"role":"user","content":"hi","timestamp":1})];
/// let options = RequestOptions { thinking_level: "off".into(), ..Default::default() };
/// let body = build(&messages, &model, PiAi::Pi, &options).unwrap();
/// assert_eq!(body, json!({"messages":[{"role":"user","content":"hi"}]}));
/// ```
pub fn build(
    messages: &[Value],
    model: &Model,
    pi_ai: PiAi,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    let api = Api::from_name(&model.api).ok_or_else(|| RequestError::UnsupportedApi {
        model: model.name(),
        api: model.api.clone(),
    })?;
    // pi-ai's lone-surrogate cleaning of the text it sends (see `surrogates`).
    let messages = &*surrogates::clean_messages(messages, pi_ai);
    let cleaned_options;
    let options = match options
        .system_prompt
        .as_deref()
        .map(|p| surrogates::clean_system_prompt(p, pi_ai))
    {
        Some(std::borrow::Cow::Owned(prompt)) => {
            cleaned_options = RequestOptions {
                system_prompt: Some(prompt),
                ..options.clone()
            };
            &cleaned_options
        }
        _ => options,
    };
    let mut value = match api {
        Api::OpenAiChat => openai_chat::request(messages, model, pi_ai, options).to_value(),
        Api::OpenAiResponses if pi_ai == PiAi::Omp => {
            openai_responses_omp::request(messages, model, options).to_value()
        }
        Api::OpenAiResponses => {
            openai_responses::request(messages, model, pi_ai, options).to_value()
        }
        Api::Anthropic if pi_ai == PiAi::Omp => {
            anthropic_omp::request(messages, model, options).to_value()
        }
        Api::Anthropic => anthropic::request(messages, model, pi_ai, options).to_value(),
        Api::Google => google::request(messages, model, pi_ai, options)?.to_value(),
    };
    if pi_ai == PiAi::Omp && api == Api::Anthropic {
        surrogates::well_formed_deep(&mut value);
    }
    Ok(value)
}

/// The messages pi-ai receives from the agent for `model`: pi hands it
/// `convertToLlm(messages)`; omp its agent loop's messages
/// ([`omp_agent_loop_messages`]) with the image gate of the model (pictures
/// become omp's placeholder for a model without image input).
pub fn agent_llm_messages(agent_messages: &[Value], pi_ai: PiAi, model: &Model) -> Vec<Value> {
    match pi_ai {
        PiAi::Pi => llm_messages(agent_messages, Dialect::PI),
        PiAi::Omp => {
            let gate = OmpImageGate::for_model(model.takes_images(), false);
            omp_agent_loop_messages(
                agent_messages,
                &OmpAgentLoopOptions::default().with_images(gate),
            )
        }
    }
}

/// The session-decided body for `model` straight from a context's agent
/// messages (what `buildSessionContext` returns): [`agent_llm_messages`]
/// then [`build`].
pub fn from_agent_messages(
    agent_messages: &[Value],
    pi_ai: PiAi,
    model: &Model,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    build(
        &agent_llm_messages(agent_messages, pi_ai, model),
        model,
        pi_ai,
        options,
    )
}

/// The body `dialect`'s pi-ai builds for `model` (`PROVIDER/ID`, looked up in
/// that pi-ai's registry) through `api`, from a `buildSessionContext` result:
/// [`PiAi::for_dialect`], [`lookup`], [`agent_llm_messages`], [`build_for`].
/// An empty `options.thinking_level` means the session's level (the agent's
/// default). What `Session::project` (a `Projection::Request`) and
/// `pi-session context --format openai-chat|…` all run.
pub fn for_agent_context(
    api: Api,
    dialect: Dialect,
    context: &pi_session_tree::AgentContext,
    model: &str,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    let pi_ai = PiAi::for_dialect(dialect)?;
    let model = lookup(pi_ai, model)?;
    let mut options = options.clone();
    if options.thinking_level.is_empty() {
        options.thinking_level = session_thinking_level(context);
    }
    let messages = agent_llm_messages(context.messages(), pi_ai, &model);
    build_for(api, &messages, &model, pi_ai, &options)
}

/// The thinking level in effect in a context (`"off"` when unset).
fn session_thinking_level(context: &pi_session_tree::AgentContext) -> String {
    let level = match context {
        pi_session_tree::AgentContext::Pi(pi) => pi.thinking_level.as_ref(),
        pi_session_tree::AgentContext::Omp(omp) => Some(&omp.thinking_level),
    };
    level.and_then(Value::as_str).unwrap_or("off").to_owned()
}

/// [`build`], checking first that `model` is sent through `api`.
pub fn build_for(
    api: Api,
    messages: &[Value],
    model: &Model,
    pi_ai: PiAi,
    options: &RequestOptions,
) -> Result<Value, RequestError> {
    if model.api != api.name() {
        return Err(RequestError::WrongApi {
            model: model.name(),
            requested: api.name(),
            actual: model.api.clone(),
            format: Api::from_name(&model.api).map_or("(none)", format_name),
        });
    }
    build(messages, model, pi_ai, options)
}

/// The CLI's `--format` name of an API.
pub fn format_name(api: Api) -> &'static str {
    match api {
        Api::OpenAiChat => "openai-chat",
        Api::OpenAiResponses => "openai-responses",
        Api::Anthropic => "anthropic",
        Api::Google => "google",
    }
}

/// Serialises a typed request to its JSON object (keys in declaration order,
/// absent options left out).
fn to_object<T: serde::Serialize>(request: &T) -> Value {
    serde_json::to_value(request).unwrap_or(Value::Null)
}
