//! `pi-session context`: the context a session's model is sent, as JSON.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use pi_session::projection::Format as ProjectFormat;
use pi_session::projection::WorkspaceDocuments;
use pi_session::projection::projection::{agent_dialect, omp_agent_loop_options};
use pi_session::projection::provider_request::{self, Api, RequestOptions};
use pi_session::projection::providers::OpenAiOptions;
use pi_session::tree::{BlobFolder, BlobSource, ContextOptions, Dialect, LeafSelector};
use pi_session::{Inputs, ProjectOptions, SentMessage, Session};
use serde_json::Value;

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input::{self, ReadSession};
use crate::output::{Out, warn};

// Arguments of `context` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file (default: the most recent session of the current directory).
    pub file: Option<PathBuf>,
    /// The entry whose branch to build: an entry id, or `null` for an empty context (default:
    /// the last entry, as pi and omp do when they open the file).
    #[arg(long, value_name = "ID|null")]
    pub leaf: Option<String>,
    /// Whose rules to follow for `agent` and `llm`.
    #[arg(long, value_enum, default_value_t = DialectChoice::Auto)]
    pub dialect: DialectChoice,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Agent)]
    pub format: Format,
    /// What the model takes, for req-llm/openai/anthropic: a comma-separated subset of
    /// text,image,pdf. For omp-agent-loop, a model without `image` gets omp's
    /// image placeholder text instead of pictures.
    #[arg(long, value_name = "LIST", default_value = "text,image", value_parser = parse_inputs)]
    pub inputs: Inputs,
    /// Workspace root that attached PDFs are read from, never outside it (default: the
    /// session's working directory, else the current one). The header's directory is data
    /// written by whoever made the file: pass your own for a session you did not write.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// omp's blob folder, for `blob:sha256:` image references (default: a `blobs` folder
    /// beside the file, else omp's `<agent dir>/blobs`).
    #[arg(long, value_name = "DIR")]
    pub blobs: Option<PathBuf>,
    /// The model, for openai-chat/openai-responses/anthropic/google: `PROVIDER/ID` as in the
    /// registry of the dialect's pi-ai (pi 0.73.1's or omp 18.2.3's).
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<String>,
    /// The system prompt pi-ai is given (the caller's; none by default).
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// The thinking level pi-ai is given (default: the session's own).
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,
    /// Fit the context into TOKENS (req-llm, openai, anthropic): the cursor's resolution
    /// stamps apply, long tool results are cut, older entries are outlined, summarized, then
    /// evicted a turn at a time (pinned entries and the latest turn never). Without it nothing
    /// changes.
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<u64>,
    /// With --budget: whose stamps apply (a named cursor; default: the unnamed cursors').
    #[arg(long, value_name = "NAME", requires = "budget")]
    pub cursor: Option<String>,
    /// pi-ai's maxTokens option (bounds Anthropic's thinking budget).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
}

/// `--dialect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectChoice {
    /// Detect from the file (omp's title slot, header keys, entry types; pi 1.6's
    /// `usage`/`context_edit` entries or system messages with sections; else pi).
    Auto,
    /// pi 0.73.
    Pi,
    /// pi 1.6 (`@earendil-works/pi-coding-agent`).
    Pi16,
    /// omp 18.2.
    Omp,
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The dialect's buildSessionContext: {messages, thinkingLevel, model...}.
    Agent,
    /// The dialect's convertToLlm of those messages.
    Llm,
    /// rho's req_llm messages (canonical JSON).
    ReqLlm,
    /// rho's rules: an OpenAI Chat Completions `messages` array from req_llm messages.
    ReqLlmOpenai,
    /// rho's rules: an Anthropic Messages `{system?, messages}` from req_llm messages.
    ReqLlmAnthropic,
    /// Alias of req-llm-openai (rho's rules, not omp's).
    Openai,
    /// With --model: the Anthropic Messages body pi-ai builds: `messages`, `system`,
    /// `thinking`. Without: alias of req-llm-anthropic (rho's rules).
    Anthropic,
    /// The Chat Completions body pi-ai builds for --model: `messages` and the reasoning keys.
    OpenaiChat,
    /// The Responses body pi-ai builds for --model: `input`, `reasoning`, `include`.
    OpenaiResponses,
    /// The Gemini body pi-ai builds for --model: `contents`, `systemInstruction`,
    /// `generationConfig.thinkingConfig`. These four follow pi 0.73.1's pi-ai, or omp 18.2.3's
    /// for openai-chat and google with --dialect omp.
    Google,
    /// What omp's agent loop hands its provider: omp's convertToLlm after its steering
    /// envelope, then its image gate (see --inputs) and its filter of provider refusals.
    /// Always omp's rules; extensions and secret redaction are not applied.
    OmpAgentLoop,
}

fn parse_inputs(text: &str) -> Result<Inputs, String> {
    text.parse::<Inputs>().map_err(|e| e.to_string())
}

/// Runs `context`: the session opened for reading through the facade ([`Session`]), projected
/// at `--leaf` with [`Session::project_at`] (the agent and llm contexts a message at a time
/// with [`Session::context_each_leaving`], request bodies with [`Session::agent_context_at`], rho's
/// formats an element at a time: each written straight out).
pub fn run(args: ContextArgs) -> Outcome {
    if let Some(budget) = args.budget {
        return super::manage::budgeted_context(&args, budget);
    }
    let read = input::read_session_from(&args.store, args.file.clone())?;
    let session = &read.session;
    let dialect = match (args.dialect, args.format) {
        (choice @ (DialectChoice::Pi | DialectChoice::Pi16), Format::OmpAgentLoop) => {
            let name = if choice == DialectChoice::Pi {
                "pi"
            } else {
                "pi16"
            };
            return Err(Failure::new(format!(
                "--format omp-agent-loop follows omp's rules only: drop --dialect {name} (omp reads pi files too)"
            )));
        }
        (_, Format::OmpAgentLoop) | (DialectChoice::Omp, _) => Dialect::OMP,
        (DialectChoice::Auto, _) => session.dialect(),
        (DialectChoice::Pi, _) => Dialect::PI,
        (DialectChoice::Pi16, _) => Dialect::PI16,
    };
    let leaf = args
        .leaf
        .as_deref()
        .map_or(LeafSelector::Default, LeafSelector::parse);
    let blob_dir = input::blob_dir(args.blobs.clone(), &read.path);
    let blobs = blob_dir.map(BlobFolder::new);
    let blob_source = blobs.as_ref().map(|b| b as &dyn BlobSource);
    let mut out = Out::for_answer();
    if let Some(api) = provider_api(args.format, args.model.is_some()) {
        let (context, diagnostics) =
            session.agent_context_at(&leaf, dialect, &ContextOptions { blobs: blob_source })?;
        warn_tree(&read, &diagnostics);
        let value = provider_body(api, dialect, &context, &args)?;
        out.json(&value)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    if matches!(
        args.format,
        Format::Agent | Format::Llm | Format::OmpAgentLoop
    ) {
        // Messages written one at a time (no text of the whole answer is held); those sent as
        // the file holds them (omp: or with the attribution it adds) are copied from it, not
        // parsed and printed.
        let (before, depth) = match args.format {
            Format::Agent => ("{\n  \"messages\": ", 1),
            _ => ("", 0),
        };
        let mut array = out.array_after(before, depth);
        let each = |message: SentMessage<'_>| {
            // A copy (with omp's attribution after it) is laid out as the file holds it.
            if let Some((text, rest)) = message.written_parts() {
                return array.item_text_parts(text, &rest);
            }
            let compact = message
                .to_compact()
                .map_err(|e| Failure::new(format!("could not write JSON: {e}")))?;
            array.item_text(&compact)
        };
        let blobs = ContextOptions { blobs: blob_source };
        let (rest, diagnostics, leftovers) = match args.format {
            Format::OmpAgentLoop => {
                let loop_options = omp_agent_loop_options(args.inputs);
                let (diagnostics, leftovers) =
                    session.omp_agent_loop_each_leaving(&leaf, &loop_options, &blobs, each)?;
                (Vec::new(), diagnostics, leftovers)
            }
            Format::Agent => {
                session.context_each_leaving(&leaf, ProjectFormat::Agent, dialect, &blobs, each)?
            }
            _ => session.context_each_leaving(&leaf, ProjectFormat::Llm, dialect, &blobs, each)?,
        };
        array.finish()?;
        out.indented(&rest, depth)?;
        out.text("\n")?;
        warn_tree(&read, &diagnostics);
        out.flush()?;
        // The entries read (one per entry of the branch), the copies of the messages and the
        // session.
        super::leave_to_exit((leftovers, read));
        return Ok(EXIT_OK);
    }
    let format = match args.format {
        Format::ReqLlm => ProjectFormat::ReqLlm,
        Format::Openai | Format::ReqLlmOpenai => ProjectFormat::OpenAi,
        Format::Anthropic | Format::ReqLlmAnthropic => ProjectFormat::Anthropic,
        // Handled above (the agent context, its llm messages and omp's agent loop, or
        // provider_api is Some for them).
        Format::Agent
        | Format::Llm
        | Format::OmpAgentLoop
        | Format::OpenaiChat
        | Format::OpenaiResponses
        | Format::Google => ProjectFormat::Agent,
    };
    let root = args.root.clone().unwrap_or_else(|| default_root(session));
    let documents = WorkspaceDocuments::new(root);
    let options = ProjectOptions {
        dialect,
        inputs: args.inputs,
        documents: &documents,
        blobs: blob_source,
        openai: OpenAiOptions::default(),
    };
    if agent_dialect(format, dialect).is_some() {
        // Not reached (the agent context's formats are written above); kept whole for a
        // format added later.
        let (value, diagnostics) = session.project_at(&leaf, format, &options)?;
        warn_tree(&read, &diagnostics);
        out.json(&value)?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    // Each element written as it is made, then dropped; the branch read a part at a time.
    // rho's projection makes no system message: Anthropic's answer is `{"messages": [...]}`.
    let anthropic = format == ProjectFormat::Anthropic;
    if anthropic {
        out.text("{\n  \"messages\": ")?;
    }
    let mut array = out.array(usize::from(anthropic));
    let diagnostics =
        session.rho_items_each(&leaf, format, &options, |item| array.rho_item(&item))?;
    array.finish()?;
    if anthropic {
        out.text("\n}")?;
    }
    out.text("\n")?;
    warn_tree(&read, &diagnostics);
    out.flush()?;
    super::leave_to_exit(read);
    Ok(EXIT_OK)
}

/// The pi-ai API a format asks for (`anthropic` only with a model: without one it is rho's).
fn provider_api(format: Format, has_model: bool) -> Option<Api> {
    match format {
        Format::OpenaiChat => Some(Api::OpenAiChat),
        Format::OpenaiResponses => Some(Api::OpenAiResponses),
        Format::Google => Some(Api::Google),
        Format::Anthropic if has_model => Some(Api::Anthropic),
        _ => None,
    }
}

/// The request body the dialect's pi-ai builds for `--model` (see `provider_request`).
fn provider_body(
    api: Api,
    dialect: Dialect,
    context: &pi_session::tree::AgentContext,
    args: &ContextArgs,
) -> Result<Value, Failure> {
    let name = args.model.as_deref().ok_or_else(|| {
        Failure::new(format!(
            "--format {} needs --model PROVIDER/ID (e.g. --model anthropic/claude-sonnet-4-5)",
            provider_request::format_name(api)
        ))
    })?;
    let options = RequestOptions {
        system_prompt: args.system_prompt.clone(),
        // Empty: the session's own level.
        thinking_level: args.thinking.clone().unwrap_or_default(),
        max_tokens: args.max_tokens,
    };
    provider_request::for_agent_context(api, dialect, context, name, &options).map_err(|e| match e {
        provider_request::RequestError::Dialect => Failure::new(
            "request bodies follow pi 0.73.1's or omp 18.2.3's pi-ai: use --dialect pi or --dialect omp",
        ),
        other => Failure::new(other.to_string()),
    })
}

/// The session's working directory when it exists here, else the current directory.
fn default_root(session: &Session) -> PathBuf {
    session
        .cwd()
        .map(PathBuf::from)
        .filter(|cwd| cwd.is_dir())
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

fn warn_tree(read: &ReadSession, diagnostics: &[pi_session::Diagnostic]) {
    for diagnostic in diagnostics {
        warn(&input::session_diagnostic_line(&read.path, diagnostic));
    }
}
