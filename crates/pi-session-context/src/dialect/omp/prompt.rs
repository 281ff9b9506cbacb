//! omp's summary and steering templates, here because `convertToLlm` is what sends them
//! (omp 18.2.3's texts, written out as literals: they reach the model and the recorded
//! fixtures).
//!
//! omp renders them with Handlebars (`noEscape`) and then runs
//! `format(text, {renderPhase: "post-render"})` over the whole result. That port lives in the
//! tree crate ([`pi_session_tree::dialect::omp::prompt::render`], which renders omp's context
//! notes too).
//!
//! ```
//! use pi_session_context::dialect::omp::prompt::COMPACTION_SUMMARY_TEMPLATE;
//! use pi_session_tree::dialect::omp::prompt::render;
//! assert!(render(COMPACTION_SUMMARY_TEMPLATE, "summary", "S").ends_with("<summary>\nS\n</summary>"));
//! ```

/// omp's `compaction-summary-context.md` (pi-agent-core 18.2.3).
pub const COMPACTION_SUMMARY_TEMPLATE: &str = "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\n{{summary}}\n</summary>\n";

/// omp's `branch-summary-context.md` (pi-agent-core 18.2.3).
pub const BRANCH_SUMMARY_TEMPLATE: &str =
    "Branch-return summary:\n\n<summary>\n{{summary}}\n</summary>\n";

/// omp's `handoff-summary-context.md`, used when a compaction's `method` is `"handoff"`.
pub const HANDOFF_SUMMARY_TEMPLATE: &str = "Context replaced. The <handoff> below is a handoff document a prior instance of you wrote from the full conversation. It is your own working memory, not user input.\n- First person inside it refers to you (the prior instance).\n- \"Next Steps\" is your own resumed plan; re-check it against the latest user message before acting.\n- The handoff already exists and is complete: NEVER write another handoff document unless the user explicitly asks.\nMUST build on prior work; NEVER duplicate prior work.\n\n<handoff>\n{{summary}}\n</handoff>\n";

/// omp's `steering/user-interjection.md` (the steering envelope).
pub const USER_INTERJECTION_TEMPLATE: &str = "<system-notice>\nUser interjection during work: priority; supersedes conflicting prior instructions. Re-read; ensure current work reflects user intent.\n</system-notice>\n{{message}}\n";
