//! pi-session-tree: the branch and compaction resolver for omp and pi session
//! files, and each dialect's `buildSessionContext`.
//!
//! It answers the questions every agent host asks of a session: where is the
//! leaf, what is on its branch, what did compaction keep, which model and
//! thinking level are in effect, what did it cost, and — for pi 0.73, pi 1.6
//! and omp 18.2.3 — exactly the context document their own
//! `buildSessionContext` returns ([`agent_context`]).
//!
//! Guarantees:
//! - Pure: no file I/O. The tree index ([`TreeIndex`]) is built from entry
//!   envelopes (`type`, `id`, `parentId`) alone; bodies are needed only for
//!   the entries a question concerns (the branch, label entries, …). omp blob
//!   references are read through a caller-supplied [`BlobSource`].
//! - Total: every walk terminates. Cycles (pi 0.73.1 hangs on them), missing
//!   parents, duplicate ids and malformed entries give [`Diagnostic`]s, never a
//!   panic or a hang.
//! - Faithful: where the real implementations apply JavaScript semantics
//!   (truthiness, `undefined` keys, `Date.parse`), so does this crate.
//!
//! It must not: write files, reorder entries, or invent data the session does
//! not hold.
//!
//! ```
//! use pi_session_tree::{agent_context, ContextOptions, Dialect, LeafSelector, TreeIndex};
//! use serde_json::json;
//!
//! let entries = vec![
//!     json!({"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",
//!            "message":{"role":"user","content":"hi","timestamp":1}}),
//!     json!({"type":"compaction","id":"c1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z",
//!            "summary":"S","firstKeptEntryId":"u1","tokensBefore":9}),
//! ];
//! let index = TreeIndex::from_entries(&entries);
//! let branch = index.branch_for(&LeafSelector::Default);
//! let path: Vec<_> = branch.positions.iter().map(|&i| entries[i].clone()).collect();
//! let (context, _) = agent_context(&path, Dialect::PI, &ContextOptions::default());
//! assert_eq!(context.messages().len(), 2); // summary, then the kept user message
//! ```

#![deny(missing_docs)]

pub mod branch_facts;
pub mod built;
pub mod context;
pub mod diagnostic;
pub mod dialect;
pub mod index;
pub mod mutations;
mod node_maps;
pub mod session_meta;
pub mod source;
pub mod store;

pub use branch_facts::{
    BranchTally, Compacted, ModelRef, Totals, USAGE_RECORD_KINDS, UsageBreakdown, UsagePart,
    UsageSums, add_usage, compacted, model_in_effect, pi_model_from, thinking_level, totals,
    usage_breakdown, usage_record,
};
pub use context::{
    AgentContext, ContextOptions, Dialect, DialectEvidence, agent_context, detect_dialect,
};
pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use dialect::omp::blobs::{BlobFolder, BlobSource};
pub use dialect::omp::context::OmpContext;
pub use dialect::pi::context::PiContext;
pub use dialect::{OmpRelease, PiRelease, SessionRules};
pub use index::{Branch, LeafSelector, NodeInfo, NodeRef, TreeIndex};
pub use mutations::{
    BranchSummaryPlan, TreeError, branch_to, branch_with_summary, plan_fork, reset_leaf,
};
/// The entry-type question of [`TreeIndex::is_kind`] (the store's, re-exported).
pub use pi_session_store::KindQuery;
pub use session_meta::tree_json;
pub use source::{EntrySource, ResolvedContext, SessionView};
pub use store::EntryReadError;
