//! pi-session-foreign: bring Claude Code and OpenAI Codex CLI sessions into omp's format, exactly
//! as omp 18.2.3 does, so the conversation continues in omp, pi or a Rust host.
//!
//! Job: the foreign formats. [`list`] finds sessions the way omp's session picker does
//! (`~/.claude/projects/*/`, `~/.codex/sessions/`); [`load`] reads a transcript with
//! diagnostics (line and byte offset for every damaged line) and converts it with omp's rules
//! (`ClaudeSessionStore.load`, `CodexSessionStore.load`); [`write()`] / [`import`] persist it as a
//! new omp session the way `persistForeignSession` does (a `title_change` and the title slot when
//! a title was found, a trailing `foreign_session_import` entry, the cwd fallback, images in the
//! blob store), through the store's own writer.
//!
//! Must not: leak a foreign format into the entry schema or the resolver. What leaves this crate
//! is ordinary omp entries; nothing downstream knows where they came from.
//!
//! Environment: nothing here reads the process environment. Pass the home folder, the current
//! folder and the variables that matter (`CLAUDE_CONFIG_DIR`, omp's `PI_CODING_AGENT_DIR`, ...)
//! in an [`Env`].
//!
//! ```
//! use pi_session_foreign::{ForeignSessionInfo, Source, convert};
//! let transcript = br#"{"type":"user","uuid":"u1","parentUuid":null,"cwd":"/w","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}
//! {"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-01-01T00:00:01.000Z","message":{"id":"msg_1","model":"claude-x","content":[{"type":"text","text":"hello"}],"stop_reason":"end_turn"}}
//! "#;
//! let info = ForeignSessionInfo::new(Source::Claude, "s1", "/c/s1.jsonl", "/w");
//! let loaded = convert(&info, transcript, 0.0).unwrap();
//! let ids: Vec<_> = loaded.transcript.entries.iter().map(|e| e["id"].as_str().unwrap()).collect();
//! assert_eq!(ids, ["claude-u1-message-1", "claude-a1-model", "claude-a1-message-2"]);
//! ```
#![deny(missing_docs)]

mod claude;
mod codex;
mod discover;
mod persist;
mod records;
mod value;

pub use discover::{claude_root, codex_root};
pub use persist::BlobStore;
pub use records::{Record, read_records};

use pi_session_store::paths::{omp_cwd_dir_name, omp_sessions_root};
use pi_session_store::{
    Diagnostic, Durability, SessionWriter, Stamps, StoreError, SystemStamps, WriterOptions,
};
use pi_session_types::header::clean_title;
use pi_session_types::{IsoTimestamp, JsonMap, JsonNumber, SessionHeader, TitleSource};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Where a foreign session comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// Claude Code (`~/.claude/projects/<dir>/<session>.jsonl`).
    Claude,
    /// The OpenAI Codex CLI (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
}

impl Source {
    /// `"claude"` or `"codex"`: the name omp records in `foreign_session_import`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Claude => "claude",
            Source::Codex => "codex",
        }
    }

    /// The display name omp uses (`"Claude"`, `"Codex"`).
    pub fn display_name(self) -> &'static str {
        match self {
            Source::Claude => "Claude",
            Source::Codex => "Codex",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Source {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "claude" => Ok(Source::Claude),
            "codex" => Ok(Source::Codex),
            other => Err(format!(
                "unknown foreign source {other:?}; expected claude or codex"
            )),
        }
    }
}

/// The environment the crate works in, passed in rather than read from the process: the home
/// folder, the current folder (relative paths are resolved against it), the temp folder (omp
/// names session folders under it specially) and the variables that matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Env {
    /// The user's home folder (`~`).
    pub home: PathBuf,
    /// The folder relative paths are resolved against.
    pub current_dir: PathBuf,
    /// The system temp folder.
    pub temp_dir: PathBuf,
    vars: BTreeMap<String, String>,
}

impl Env {
    /// An environment with no variables set.
    pub fn new(
        home: impl Into<PathBuf>,
        current_dir: impl Into<PathBuf>,
        temp_dir: impl Into<PathBuf>,
    ) -> Self {
        Self {
            home: home.into(),
            current_dir: current_dir.into(),
            temp_dir: temp_dir.into(),
            vars: BTreeMap::new(),
        }
    }

    /// Sets a variable (`CLAUDE_CONFIG_DIR`, `PI_CODING_AGENT_DIR`, `PI_CONFIG_DIR`,
    /// `OMP_PROFILE`, `XDG_DATA_HOME`, ...).
    pub fn with_var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// A variable's value.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// `path.resolve(p)`: absolute against [`Env::current_dir`], `.` and `..` folded.
    pub fn resolve(&self, path: &Path) -> PathBuf {
        let joined = self.current_dir.join(path);
        let mut out = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    }

    fn lookup(&self) -> impl Fn(&str) -> Option<String> + '_ {
        |name| self.var(name).map(str::to_owned)
    }

    /// omp's sessions root (see `pi_session_store::paths::omp_sessions_root`).
    pub fn omp_sessions_root(&self) -> PathBuf {
        omp_sessions_root(&self.lookup(), &self.home)
    }

    /// omp's blob store: `blobs` beside the sessions root (both are data folders of the agent).
    pub fn omp_blobs_dir(&self) -> PathBuf {
        let root = self.omp_sessions_root();
        root.parent()
            .map_or_else(|| root.join("blobs"), |p| p.join("blobs"))
    }

    /// omp's session folder for `cwd` (the cwd, home and temp folder canonicalised first).
    pub fn omp_session_dir(&self, cwd: &str) -> PathBuf {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| self.resolve(p));
        let bucket = omp_cwd_dir_name(
            &canonical(&self.resolve(Path::new(cwd))),
            &canonical(&self.home),
            &canonical(&self.temp_dir),
        );
        self.omp_sessions_root().join(bucket)
    }
}

/// What the picker knows about a foreign session before reading it (omp's `ForeignSessionInfo`).
#[derive(Debug, Clone, PartialEq)]
pub struct ForeignSessionInfo {
    /// Where it comes from.
    pub source: Source,
    /// Claude: the file name without `.jsonl`; Codex: `session_meta.payload.id`.
    pub id: String,
    /// The transcript file.
    pub path: PathBuf,
    /// The working directory the listing found (the transcript's own wins on import).
    pub cwd: String,
    /// Codex: the thread name from `session_index.jsonl`; Claude: never set by listing.
    pub title: Option<String>,
    /// Creation time, ms since the epoch.
    pub created_ms: f64,
    /// Last change, ms since the epoch.
    pub modified_ms: f64,
    /// Claude: the first prompt from `history.jsonl`.
    pub first_message: Option<String>,
    /// Claude: the number of prompts in `history.jsonl`.
    pub message_count: Option<u64>,
}

impl ForeignSessionInfo {
    /// Info with just a source, id, path and cwd (times 0, no title).
    pub fn new(
        source: Source,
        id: impl Into<String>,
        path: impl Into<PathBuf>,
        cwd: impl Into<String>,
    ) -> Self {
        Self {
            source,
            id: id.into(),
            path: path.into(),
            cwd: cwd.into(),
            title: None,
            created_ms: 0.0,
            modified_ms: 0.0,
            first_message: None,
            message_count: None,
        }
    }
}

/// A title the import sets with omp's `setSessionName(title, source, trigger)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleRequest {
    /// The raw title (cleaned when written; nothing is written if nothing is left).
    pub title: String,
    /// `user` for Claude's `custom-title`, else `auto`.
    pub source: TitleSource,
    /// Codex: `"codex-import"` (written as the `title_change` entry's `trigger`).
    pub trigger: Option<String>,
}

impl TitleRequest {
    pub(crate) fn new(title: &str, source: TitleSource, trigger: Option<&str>) -> Self {
        Self {
            title: title.to_owned(),
            source,
            trigger: trigger.map(str::to_owned),
        }
    }
}

/// A converted transcript: omp's in-memory session before `persistForeignSession` adds its
/// entries. Entries are JSON objects in omp's key order, with their final ids and parents.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// Where it came from.
    pub source: Source,
    /// The session's working directory (the transcript's, else the listing's).
    pub cwd: String,
    /// The converted entries, in the order omp ingests them.
    pub entries: Vec<JsonMap>,
    /// The title to set, if any.
    pub title: Option<TitleRequest>,
}

/// A transcript and what reading it found.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The converted session.
    pub transcript: Transcript,
    /// Every line that was skipped or repaired (omp skips them silently).
    pub diagnostics: Vec<Diagnostic>,
}

/// Why a foreign session could not be listed, read or imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The transcript could not be read.
    #[error("could not read {path}: {source}; check that the file exists and is readable")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Nothing in the file is a JSON object (omp refuses these too).
    #[error("{name} session {id} at {path} contains no readable records; is it a {name} transcript?", name = .from.display_name())]
    NoRecords {
        /// The source asked for.
        from: Source,
        /// The session id.
        id: String,
        /// The file.
        path: PathBuf,
    },
    /// A Codex file whose first record is not a `session_meta` with a `cwd`: omp does not offer
    /// these.
    #[error(
        "{path} is not a Codex rollout omp would import (its first record must be a session_meta with a cwd)"
    )]
    NotARollout {
        /// The file.
        path: PathBuf,
    },
    /// A timestamp outside JavaScript's date range (omp's `toISOString` throws on it).
    #[error(
        "a record's timestamp {value} is not a valid date; omp refuses to import this session too"
    )]
    InvalidTime {
        /// The value as written.
        value: String,
    },
    /// Writing a blob failed.
    #[error("could not write an image blob into {dir}: {source}")]
    Blob {
        /// The blob folder.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Writing the session failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// `new Date(value).toISOString()` for a number (omp throws on an invalid date; so do we).
pub(crate) fn js_iso(value: &Value) -> Result<String, ImportError> {
    match value {
        Value::Number(_) => pi_session_types::js::date_ms(Some(value))
            .map(pi_session_types::js::iso_from_ms)
            .ok_or_else(|| ImportError::InvalidTime {
                value: value.to_string(),
            }),
        other => Err(ImportError::InvalidTime {
            value: other.to_string(),
        }),
    }
}

/// `JSON.parse(text)` (lone surrogate escapes kept, carried as U+10F800+k; see
/// `pi_session_types::js`); `None` when it throws.
pub(crate) fn parse_js_json(text: &str) -> Option<Value> {
    let repaired = pi_session_types::line::replace_lone_surrogate_escapes(text);
    serde_json::from_str(&repaired).ok()
}

/// The sessions of `source` that omp's picker lists, newest first.
pub fn list(source: Source, env: &Env) -> Vec<ForeignSessionInfo> {
    match source {
        Source::Claude => discover::list_claude(env),
        Source::Codex => discover::list_codex(env),
    }
}

/// What the picker would say about one transcript, wherever the file is.
pub fn describe(source: Source, env: &Env, path: &Path) -> Result<ForeignSessionInfo, ImportError> {
    let path = env.resolve(path);
    let found = match source {
        Source::Claude => discover::describe_claude(env, &path),
        Source::Codex => discover::describe_codex(env, &path),
    };
    match found {
        Some(info) => Ok(info),
        None => match std::fs::metadata(&path) {
            Err(error) => Err(ImportError::Read {
                path,
                source: error,
            }),
            Ok(_) if source == Source::Codex => Err(ImportError::NotARollout { path }),
            Ok(_) => Err(ImportError::Read {
                path,
                source: std::io::Error::other("not a regular file"),
            }),
        },
    }
}

/// Reads and converts the transcript `info` names (omp's `store.load(info)`).
pub fn load(info: &ForeignSessionInfo) -> Result<Loaded, ImportError> {
    let read_error = |source| ImportError::Read {
        path: info.path.clone(),
        source,
    };
    let bytes = std::fs::read(&info.path).map_err(read_error)?;
    let mtime = std::fs::metadata(&info.path)
        .map(|m| discover::mtime_ms(&m))
        .map_err(read_error)?;
    convert(info, &bytes, mtime)
}

/// Converts transcript bytes; `mtime_ms` is the file's modification time in ms (Claude records
/// without a timestamp get it). Pure: no file is touched.
pub fn convert(
    info: &ForeignSessionInfo,
    bytes: &[u8],
    mtime_ms: f64,
) -> Result<Loaded, ImportError> {
    let (records, diagnostics) = read_records(bytes);
    let empty = match info.source {
        Source::Claude => records.is_empty() && !bytes.is_empty(),
        Source::Codex => records.is_empty(),
    };
    if empty {
        return Err(ImportError::NoRecords {
            from: info.source,
            id: info.id.clone(),
            path: info.path.clone(),
        });
    }
    let transcript = match info.source {
        Source::Claude => claude::convert(&records, &info.cwd, info.title.as_deref(), mtime_ms)?,
        Source::Codex => {
            codex::convert(&records, &info.cwd, info.title.as_deref(), info.created_ms)?
        }
    };
    Ok(Loaded {
        transcript,
        diagnostics,
    })
}

/// Choices for [`write()`] and [`import`].
#[derive(Debug, Default)]
pub struct ImportOptions {
    /// The working directory to use when the recorded one is not a folder here (omp's
    /// `fallbackCwd`).
    pub fallback_cwd: Option<PathBuf>,
    /// Where to write the session (default: omp's folder for its cwd).
    pub session_dir: Option<PathBuf>,
    /// omp's blob store (default: [`Env::omp_blobs_dir`]).
    pub blobs_dir: Option<PathBuf>,
    /// The new session's id (default: a fresh UUIDv7).
    pub session_id: Option<String>,
    /// The clock and entry ids (default: the system clock and random ids); tests pin them.
    pub stamps: Option<Box<dyn Stamps>>,
}

/// What an import wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The new session file.
    pub path: PathBuf,
    /// The new session's id.
    pub session_id: String,
    /// Its working directory.
    pub cwd: String,
    /// Its title, if one was set.
    pub title: Option<String>,
    /// How many entries it has.
    pub entry_count: usize,
    /// What reading the transcript found.
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads, converts and writes `info` as a new omp session: [`load`] then [`write()`].
pub fn import(
    info: &ForeignSessionInfo,
    env: &Env,
    options: ImportOptions,
) -> Result<Imported, ImportError> {
    write(load(info)?, info, env, options)
}

fn fresh_id(stamps: &mut dyn Stamps, used: &HashSet<String>) -> String {
    for _ in 0..100 {
        let id = stamps.entry_id();
        if !used.contains(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// Writes a converted transcript as a new omp session, as `persistForeignSession` does: the
/// transcript's entries, a `title_change` (and the title slot) when it has a title, the
/// `foreign_session_import` entry as the leaf, the cwd fallback, then a new file
/// (`<timestamp>_<uuidv7>.jsonl`, title slot first) written through the store's writer with
/// omp's persistence rules (large images into the blob store, very long strings cut).
pub fn write(
    loaded: Loaded,
    info: &ForeignSessionInfo,
    env: &Env,
    options: ImportOptions,
) -> Result<Imported, ImportError> {
    let ImportOptions {
        fallback_cwd,
        session_dir,
        blobs_dir,
        session_id,
        stamps,
    } = options;
    let mut stamps: Box<dyn Stamps> = stamps.unwrap_or_else(|| Box::new(SystemStamps));
    let Loaded {
        transcript,
        diagnostics,
    } = loaded;
    let mut entries = transcript.entries;
    let mut used: HashSet<String> = entries
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let leaf = |entries: &[JsonMap]| {
        entries
            .last()
            .and_then(|e| e.get("id"))
            .cloned()
            .unwrap_or(Value::Null)
    };

    // SessionManager.inMemory: the title slot's time when no title is set.
    let created = stamps.now();
    let mut slot: Option<(String, TitleSource, IsoTimestamp)> = None;
    if let Some(request) = &transcript.title
        && let Some(title) = clean_title(&request.title)
    {
        let now = stamps.now();
        let id = fresh_id(stamps.as_mut(), &used);
        used.insert(id.clone());
        let mut entry = value::object([
            ("type", Some("title_change".into())),
            ("id", Some(id.into())),
            ("parentId", Some(leaf(&entries))),
            ("timestamp", Some(now.as_str().into())),
            ("title", Some(title.clone().into())),
            ("source", Some(request.source.as_str().into())),
        ]);
        if let Some(trigger) = &request.trigger {
            entry.insert("trigger".into(), trigger.clone().into());
        }
        entries.push(entry);
        slot = Some((title, request.source, now));
    }

    let now = stamps.now();
    let id = fresh_id(stamps.as_mut(), &used);
    let data = value::object([
        ("source", Some(info.source.as_str().into())),
        ("sourceId", Some(info.id.clone().into())),
        (
            "sourcePath",
            Some(info.path.to_string_lossy().into_owned().into()),
        ),
        ("sourceCwd", Some(info.cwd.clone().into())),
    ]);
    let custom = value::object([
        ("type", Some("custom".into())),
        ("customType", Some("foreign_session_import".into())),
        ("data", Some(Value::Object(data))),
        ("id", Some(id.into())),
        ("parentId", Some(leaf(&entries))),
        ("timestamp", Some(now.as_str().into())),
    ]);
    entries.push(custom);

    let mut cwd = transcript.cwd;
    if let Some(fallback) = fallback_cwd
        && !env.resolve(Path::new(&cwd)).is_dir()
    {
        cwd = env.resolve(&fallback).to_string_lossy().into_owned();
    }

    let header_time = stamps.now();
    let session_id = session_id.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let mut header = SessionHeader {
        version: Some(JsonNumber::from(3u8)),
        id: session_id.clone(),
        timestamp: Some(header_time),
        cwd: Some(cwd.clone()),
        ..SessionHeader::default()
    };
    // omp appends the title after `cwd` (persistCopy), so it goes in `extra` to keep that order.
    if let Some((title, source, _)) = &slot {
        header.extra.insert("title".into(), title.clone().into());
        header
            .extra
            .insert("titleSource".into(), source.as_str().into());
    }
    let dir = session_dir.unwrap_or_else(|| env.omp_session_dir(&cwd));
    let slot_time = slot.as_ref().map_or(created, |(_, _, at)| at.clone());
    let mut writer = SessionWriter::create(
        dir,
        header,
        WriterOptions {
            title_slot: true,
            // omp writes the whole file at once; lines go out in 64 KiB batches (each under
            // omp's publish lock) and the file is flushed before the import returns.
            durability: Durability::Buffered,
            ..WriterOptions::default()
        },
    )
    .with_slot_title(
        slot.as_ref().map(|(title, _, _)| title.as_str()),
        slot.as_ref().map(|(_, source, _)| *source),
        slot_time.as_str(),
    );
    let path = writer.path().map(Path::to_path_buf).unwrap_or_default();
    let blobs = BlobStore::new(blobs_dir.unwrap_or_else(|| env.omp_blobs_dir()));
    let entry_count = entries.len();
    let written = entries.into_iter().try_for_each(|entry| {
        let entry = persist::prepare_entry(entry, &blobs).map_err(|source| ImportError::Blob {
            dir: blobs.dir().to_path_buf(),
            source,
        })?;
        writer.append_replicated(entry)?;
        Ok::<(), ImportError>(())
    });
    if let Err(error) = written.and_then(|()| writer.flush().map_err(ImportError::from)) {
        drop(writer);
        if path.exists() {
            // Best effort: the half-written file is ours (created exclusively); omp writes
            // atomically, so no partial session should stay behind.
            let _ = std::fs::remove_file(&path);
        }
        return Err(error);
    }
    Ok(Imported {
        path,
        session_id,
        cwd,
        title: slot.map(|(title, _, _)| title),
        entry_count,
        diagnostics,
    })
}
