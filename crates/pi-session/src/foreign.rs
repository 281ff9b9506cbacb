//! Continue a Claude Code or Codex conversation: list their sessions and import one as a new omp
//! session, exactly as omp 18.2.3 does (see the `pi-session-foreign` crate, re-exported here as
//! [`crate::foreign`]'s items).
//!
//! ```no_run
//! use pi_session::foreign::{Env, ImportOptions, Source, import, list};
//! let env = Env::new("/home/me", "/home/me/app", "/tmp");
//! if let Some(info) = list(Source::Claude, &env).first() {
//!     let imported = import(info, &env, ImportOptions::default())?;
//!     let opened = pi_session::Session::open(&imported.path, "anthropic/claude-sonnet-4-5")?;
//!     # let _ = opened;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use pi_session_foreign::{
    BlobStore, Env, ForeignSessionInfo, ImportError, ImportOptions, Imported, Loaded, Record,
    Source, TitleRequest, Transcript, claude_root, codex_root, convert, describe, import, list,
    load, read_records, write,
};
