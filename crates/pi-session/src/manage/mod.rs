//! Context management (the Rust agent's session design, `agent-session-design.md`): how much of
//! each entry the model sees, keeping a long branch inside a prompt budget without compaction,
//! and where the window goes.
//!
//! - [`Resolution`] and [`render()`]: every entry of a branch renders at a level (Full, Outlined,
//!   Summarized, Pinned, Compacted, Attached). A rendering is an entry again (the file's shape,
//!   with its content cut or replaced), so every projection (`req-llm`, `openai`, `anthropic`,
//!   pi's and omp's `convertToLlm`) sends it as it sends the entry itself.
//! - [`overlay`]: each cursor's sparse overlay of stamps (`Session::set_resolution`,
//!   `pin_entry`, `unpin_entry`), saved in the file as `custom` entries of type
//!   [`RESOLUTION_CUSTOM_TYPE`], which pi and omp leave out of their context.
//! - [`plan`]: `Session::prepare_context`, the selective eviction planner, and bounded tool
//!   results ([`bound_text`]).
//! - [`phase`] and [`status`]: the token distributions of [`ContextStats`](crate::ContextStats)
//!   and its one-line status bar.
//! - [`extensions`]: `compact_older_than`, custom state and custom messages for extensions.
//!
//! Entries are never changed: levels live in the overlay and in each call's plan.

pub mod extensions;
pub mod overlay;
pub mod phase;
pub mod plan;
pub mod render;
pub mod status;

mod estimate;
mod level;
mod sketch;
pub(crate) mod streamed;

pub use extensions::Threshold;
pub use level::{Resolution, UnknownResolution};
pub use overlay::{RESOLUTION_CUSTOM_TYPE, Stamp};
pub use phase::Phase;
pub use plan::{
    Bounded, DEFAULT_TOOL_RESULT_PERCENT, FittedContext, PlannedEntry, PrepareOptions,
    PreparedContext, bound_text,
};
pub use render::render;
