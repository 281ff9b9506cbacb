//! omp's prompt templates and its post-render text normalisation.
//!
//! omp renders its summary and steering templates with Handlebars
//! (`noEscape`) and then runs `format(text, {renderPhase: "post-render"})`
//! over the whole result. The port lives in the tree crate
//! ([`pi_session_tree::omp_prompt`], which renders omp's context notes with
//! it); this module re-exports what the context crate's callers use.
//!
//! ```
//! use pi_session_context::omp_prompt::{COMPACTION_SUMMARY_TEMPLATE, render};
//! assert!(render(COMPACTION_SUMMARY_TEMPLATE, "summary", "S").ends_with("<summary>\nS\n</summary>"));
//! ```

pub use pi_session_tree::omp_prompt::{
    BRANCH_SUMMARY_TEMPLATE, COMPACTION_SUMMARY_TEMPLATE, HANDOFF_SUMMARY_TEMPLATE,
    USER_INTERJECTION_TEMPLATE, format_post_render, render,
};
