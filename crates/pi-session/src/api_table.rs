//! The `api` an assistant message names for each provider, per dialect.
//!
//! Read from the model catalogs of the pinned packages: pi 0.73.1 and pi 1.6.0
//! (`@mariozechner/pi-ai` and `@earendil-works/pi-ai`, `dist/models.generated.js`, counted
//! together) and omp 18.2.3 (`@oh-my-pi/pi-catalog`, `src/models.json`). A provider whose
//! models use several apis (e.g. `github-copilot`, `opencode`) gets the one most of its models
//! use; a host that knows better passes its own ([`Reply::api`](crate::Reply::api)). `ollama`
//! is not in the catalogs (it is configured locally): omp writes `ollama-chat` for it, pi
//! configurations use `openai-completions`.

use pi_session_tree::Dialect;

/// `(provider, pi api, omp api)`, sorted by provider.
pub(crate) const APIS: &[(&str, Option<&str>, Option<&str>)] = &[
    ("abliteration", None, Some("openai-responses")),
    ("aiand", None, Some("openai-completions")),
    ("aimlapi", None, Some("openai-completions")),
    ("alibaba-coding-plan", None, Some("openai-completions")),
    ("alibaba-token-plan", None, Some("openai-completions")),
    (
        "amazon-bedrock",
        Some("bedrock-converse-stream"),
        Some("bedrock-converse-stream"),
    ),
    ("ant-ling", Some("openai-completions"), None),
    (
        "anthropic",
        Some("anthropic-messages"),
        Some("anthropic-messages"),
    ),
    (
        "azure",
        Some("azure-openai-responses"),
        Some("azure-openai-responses"),
    ),
    (
        "azure-openai-responses",
        Some("azure-openai-responses"),
        None,
    ),
    (
        "baseten",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    ("bedrock-mantle", None, Some("openai-responses")),
    (
        "cerebras",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    ("cline-pass", None, Some("openai-completions")),
    (
        "cloudflare-ai-gateway",
        Some("openai-responses"),
        Some("anthropic-messages"),
    ),
    ("cloudflare-workers-ai", Some("openai-completions"), None),
    ("commandcode", None, Some("openai-completions")),
    ("coreweave", None, Some("openai-completions")),
    ("cursor", None, Some("cursor-agent")),
    ("deepinfra", None, Some("openai-completions")),
    (
        "deepseek",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    ("devin", None, Some("devin-agent")),
    ("firepass", None, Some("openai-completions")),
    (
        "fireworks",
        Some("anthropic-messages"),
        Some("openai-completions"),
    ),
    (
        "github-copilot",
        Some("openai-responses"),
        Some("openai-responses"),
    ),
    ("gitlab-duo", None, Some("anthropic-messages")),
    ("gitlab-duo-agent", None, Some("gitlab-duo-agent")),
    ("gmi-cloud", None, Some("openai-completions")),
    (
        "google",
        Some("google-generative-ai"),
        Some("google-generative-ai"),
    ),
    ("google-antigravity", None, Some("google-gemini-cli")),
    ("google-gemini-cli", None, Some("google-gemini-cli")),
    (
        "google-vertex",
        Some("google-vertex"),
        Some("google-vertex"),
    ),
    (
        "groq",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    (
        "huggingface",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    ("kilo", None, Some("openai-completions")),
    ("kimi-code", None, Some("openai-completions")),
    ("kimi-coding", Some("openai-completions"), None),
    ("meta", Some("openai-responses"), Some("openai-responses")),
    (
        "minimax",
        Some("anthropic-messages"),
        Some("anthropic-messages"),
    ),
    (
        "minimax-cn",
        Some("anthropic-messages"),
        Some("anthropic-messages"),
    ),
    ("minimax-code", None, Some("openai-completions")),
    ("minimax-code-cn", None, Some("openai-completions")),
    (
        "mistral",
        Some("mistral-conversations"),
        Some("openai-completions"),
    ),
    ("moonshot", None, Some("openai-completions")),
    ("moonshotai", Some("openai-completions"), None),
    ("moonshotai-cn", Some("openai-completions"), None),
    ("muse-code", None, Some("openai-responses")),
    ("nanogpt", None, Some("openai-completions")),
    ("novita", None, Some("openai-completions")),
    (
        "nvidia",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    ("ollama", Some("openai-completions"), Some("ollama-chat")),
    ("ollama-cloud", None, Some("ollama-chat")),
    ("openai", Some("openai-responses"), Some("openai-responses")),
    (
        "openai-codex",
        Some("openai-codex-responses"),
        Some("openai-codex-responses"),
    ),
    ("opencode", Some("openai-responses"), None),
    (
        "opencode-go",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    ("opencode-zen", None, Some("openai-completions")),
    ("openrouter", Some("openai-completions"), Some("openrouter")),
    ("qianfan", None, Some("openai-completions")),
    ("qwen-portal", None, Some("openai-completions")),
    ("qwen-token-plan", Some("openai-completions"), None),
    ("qwen-token-plan-cn", Some("openai-completions"), None),
    (
        "qwen-token-plan-individual",
        Some("openai-completions"),
        None,
    ),
    (
        "qwen-token-plan-individual-cn",
        Some("openai-completions"),
        None,
    ),
    ("radius", Some("pi-messages"), None),
    ("sakana", None, Some("openai-responses")),
    ("synthetic", None, Some("openai-completions")),
    (
        "together",
        Some("openai-completions"),
        Some("openai-completions"),
    ),
    ("umans", None, Some("anthropic-messages")),
    ("venice", None, Some("openai-completions")),
    (
        "vercel-ai-gateway",
        Some("anthropic-messages"),
        Some("anthropic-messages"),
    ),
    ("wafer-serverless", None, Some("openai-completions")),
    ("xai", Some("openai-completions"), Some("openai-responses")),
    ("xai-oauth", None, Some("openai-responses")),
    (
        "xiaomi",
        Some("anthropic-messages"),
        Some("openai-completions"),
    ),
    (
        "xiaomi-token-plan-ams",
        Some("anthropic-messages"),
        Some("openai-completions"),
    ),
    (
        "xiaomi-token-plan-cn",
        Some("anthropic-messages"),
        Some("openai-completions"),
    ),
    (
        "xiaomi-token-plan-sgp",
        Some("anthropic-messages"),
        Some("openai-completions"),
    ),
    ("yolo-auto", None, Some("openai-completions")),
    (
        "zai",
        Some("openai-completions"),
        Some("anthropic-messages"),
    ),
    ("zai-coding-cn", Some("openai-completions"), None),
    ("zenmux", None, Some("openai-completions")),
    ("zhipu-coding-plan", None, Some("openai-completions")),
];

/// The `api` `dialect` writes for models of `provider` (a pi provider name such as
/// `openai-codex`), when its catalog knows the provider; the other dialect's value otherwise.
///
/// ```
/// use pi_session::{api_for, tree::Dialect};
/// assert_eq!(api_for(Dialect::PI, "anthropic"), Some("anthropic-messages"));
/// assert_eq!(api_for(Dialect::OMP, "ollama"), Some("ollama-chat"));
/// assert_eq!(api_for(Dialect::PI, "openrouter"), Some("openai-completions"));
/// assert_eq!(api_for(Dialect::OMP, "openrouter"), Some("openrouter"));
/// assert_eq!(api_for(Dialect::PI, "my-proxy"), None);
/// ```
pub fn api_for(dialect: Dialect, provider: &str) -> Option<&'static str> {
    let (_, pi, omp) = APIS
        .binary_search_by(|(p, _, _)| (*p).cmp(provider))
        .ok()
        .and_then(|at| APIS.get(at))?;
    crate::dialect::write_entries(dialect).api(*pi, *omp)
}
