//! The entry schema of omp and pi coding-agent session files (JSONL), typed and lossless.
//!
//! Job: turn one line of a session file into a value a Rust host can `match` on (title slot,
//! header, or one of the entry types of either dialect), and write such values back exactly the
//! way JavaScript's `JSON.stringify` would.
//!
//! Guarantees:
//! - nothing a line holds is lost: unknown entry types, roles, blocks and fields are kept and
//!   written back (`extra` maps, `Unknown` variants); a known type whose fields have unexpected
//!   types falls back to an `Unknown` value plus a warning instead of failing. The
//!   `Deserialize` impls of [`AgentMessage`], [`Content`] and [`ContentBlock`] always keep that
//!   fallback (no hidden mode); [`parse_line`]'s fast pass instead types a line's message,
//!   content blocks and images by move, explicitly, and on any mismatch parses the line again
//!   with the fallbacks;
//! - strings are JavaScript's, lone UTF-16 surrogates included. A Rust `String` cannot hold a
//!   lone surrogate, so every `String` this crate reads (typed fields, `serde_json` values,
//!   keys) carries lone surrogate U+D800+k as the private-use code point U+10F800+k, and
//!   [`json`] writes it back as the `\udxxx` escape JavaScript wrote: a host that shows such a
//!   string shows that code point; one that sends it on should clean it as pi-ai does
//!   ([`js::to_well_formed`], [`js::remove_lone_surrogates`]). See [`js`] for the rules and the
//!   one ambiguity (a genuine U+10F800..U+10FFFF in a file, reported when read);
//! - bad input gives a typed [`LineError`] or a [`ParseWarning`], never a panic;
//! - [`json::to_js_string`] is the single place where the JavaScript serialisation rules live,
//!   and [`js`] the single place for JavaScript value semantics (truthiness, `??`, `String(x)`,
//!   `trim`, `Date` parsing) that the tree and context crates apply to JSON values.
//!
//! Must not: do I/O, know about files, trees or branches (that is `pi-session-store` and
//! `pi-session-tree`), or interpret entries beyond their schema.
//!
//! ```
//! use pi_session_types::{parse_line, ParsedLine, Entry};
//! let line = br#"{"type":"label","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"x","label":"keep"}"#;
//! let parsed = parse_line(line).unwrap();
//! match &parsed.value {
//!     ParsedLine::Entry(Entry::Label(label)) => assert_eq!(label.label.as_deref(), Some("keep")),
//!     other => panic!("unexpected {other:?}"),
//! }
//! assert_eq!(pi_session_types::json::to_js_string(&parsed.value).unwrap().as_bytes(), &line[..]);
//! ```
#![deny(missing_docs)]

#[macro_use]
mod object_keys;

pub mod entry;
pub mod envelope_scan;
pub mod field;
pub mod header;
pub mod js;
pub mod js_string;
pub mod json;
pub mod line;
pub mod message;
pub mod model_facts;
pub mod needle;
#[cfg(feature = "schema")]
pub mod schema;
pub mod shallow;
pub mod tags;
pub mod timestamp;
pub mod usage;
pub mod value_read;
pub mod view;

pub use entry::*;
pub use field::{Field, MaybeTyped};
pub use header::{
    SessionHeader, TITLE_SLOT_BYTES, TitleSlot, TitleSlotError, TitleSource, clean_title,
};
pub use json::{JsonError, to_js_string, to_js_vec, to_js_writer};
pub use line::{
    Envelope, EnvelopeRef, LineError, ParseWarning, Parsed, ParsedLine, parse_envelope,
    parse_envelope_ref, parse_line, parse_line_str,
};
pub use message::*;
pub use timestamp::{IsoTimestamp, now_iso};
pub use usage::{Cost, Usage};

/// A JSON number kept exactly as parsed (integer or float), so it is written back unchanged.
pub type JsonNumber = serde_json::Number;
/// A JSON object with keys in file order; used for unknown fields (`extra`) and opaque objects.
pub type JsonMap = serde_json::Map<String, serde_json::Value>;
/// Any JSON value; used for provider-opaque payloads that are carried untouched.
pub type JsonValue = serde_json::Value;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
