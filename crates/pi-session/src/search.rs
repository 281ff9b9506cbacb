//! Searching message text across sessions (`pi-session grep`).
//!
//! Each file is read once and opened by the store (so fused lines are split into their
//! entries, repaired lines are searched as repaired, and damaged lines that are no entry are
//! never searched). The title (omp's title slot, else the header's `title`) is searched too.
//! For a literal pattern whose bytes JSON writes unescaped (printable ASCII other than `"` and
//! `\`), an entry whose raw bytes do not contain it is skipped without being parsed (`memchr`'s
//! `memmem`); other patterns parse every message.
//!
//! What is searched, by role: user messages (`user`, `developer`) and assistant text always;
//! assistant thinking with [`SearchOptions::thinking`]; tool results (`toolResult`, and the
//! command and output of `bashExecution`) with [`SearchOptions::tool_results`].

use pi_session_types::view::{BlockRef, EntryRef, MessageRef};
use std::path::{Path, PathBuf};

use memchr::memmem;
use pi_session_tree::{LeafSelector, SessionView};
use pi_session_types::js;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// Whose messages a search looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SearchRole {
    /// User (and developer) messages.
    User,
    /// Assistant messages.
    Assistant,
    /// Tool results and bash executions.
    Tool,
}

impl SearchRole {
    /// Parses `user`, `assistant` or `tool`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "user" => Self::User,
            "assistant" => Self::Assistant,
            "tool" => Self::Tool,
            _ => return None,
        })
    }
}

/// What to search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchOptions {
    /// Only this role (`Tool` implies tool results).
    pub role: Option<SearchRole>,
    /// Search tool results too.
    pub tool_results: bool,
    /// Search assistant thinking too.
    pub thinking: bool,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// A literal string.
    Literal(String),
    /// A regular expression (the `regex` crate's syntax).
    Regex(regex::Regex),
}

impl Pattern {
    /// A literal pattern, or a regular expression when `regex` is true.
    pub fn new(pattern: &str, regex: bool) -> Result<Self> {
        if regex {
            regex::Regex::new(pattern)
                .map(Self::Regex)
                .map_err(|e| Error::invalid_input(format!("bad regular expression: {e}")))
        } else if pattern.is_empty() {
            Err(Error::invalid_input("the pattern is empty"))
        } else {
            Ok(Self::Literal(pattern.to_owned()))
        }
    }

    fn is_match(&self, text: &str) -> bool {
        match self {
            Self::Literal(literal) => memmem::find(text.as_bytes(), literal.as_bytes()).is_some(),
            Self::Regex(regex) => regex.is_match(text),
        }
    }

    /// The bytes every matching entry's raw line must contain, when JSON writes them unescaped.
    fn raw_needle(&self) -> Option<&[u8]> {
        match self {
            Self::Literal(literal)
                if literal
                    .bytes()
                    .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\') =>
            {
                Some(literal.as_bytes())
            }
            _ => None,
        }
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// The session file.
    pub path: PathBuf,
    /// The session's id (its header's).
    pub session: Option<String>,
    /// The entry's id (`None` for the title).
    pub entry_id: Option<String>,
    /// The physical line of the file the entry is on (1-based).
    pub line: u64,
    /// True when the entry is on the branch of the session's leaf (the title: true).
    pub on_branch: bool,
    /// `title`, or the message's role.
    pub role: String,
    /// What matched: `title`, `text`, `thinking` or `tool`.
    pub field: &'static str,
    /// The matching line of the text.
    pub text: String,
}

/// Hits of one file, and how many of its lines were damaged (and so not searched).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileHits {
    /// The hits, in file order.
    pub hits: Vec<Hit>,
    /// Lines the store could not read as an entry.
    pub damaged_lines: usize,
}

/// Searches `files` on every core; results in the order of `files`. `done` is called as each
/// file is finished (for a progress bar).
pub fn search(
    files: &[PathBuf],
    pattern: &Pattern,
    options: &SearchOptions,
    done: &(dyn Fn(&Path) + Sync),
) -> Vec<(PathBuf, Result<FileHits>)> {
    // Several files share the cores a file at a time; one file is opened on all of them.
    let open = match files {
        [_] => pi_session_store::OpenOptions::default(),
        _ => pi_session_store::OpenOptions::single_threaded(),
    };
    files
        .par_iter()
        .map(|path| {
            let found = search_file_with(path, pattern, options, &open);
            done(path);
            (path.clone(), found)
        })
        .collect()
}

/// Messages parsed at a time (the candidates' values are held only a batch at a time).
const PARSED_AT_ONCE: usize = 1024;

/// Searches one session file (opened on every core).
pub fn search_file(path: &Path, pattern: &Pattern, options: &SearchOptions) -> Result<FileHits> {
    search_file_with(
        path,
        pattern,
        options,
        &pi_session_store::OpenOptions::default(),
    )
}

/// [`search_file`], the file opened with `open`.
fn search_file_with(
    path: &Path,
    pattern: &Pattern,
    options: &SearchOptions,
    open: &pi_session_store::OpenOptions,
) -> Result<FileHits> {
    // Opened as any session is (a large file streamed, never held whole).
    let (file, diagnostics) = pi_session_store::open_with(path, open)?;
    let damaged_lines = diagnostics
        .iter()
        .filter(|d| d.severity() >= pi_session_store::Severity::Error)
        .count();
    let session = file.header().map(|h| h.id.clone());
    let mut hits = Vec::new();
    let hit = |entry_id: Option<String>, line, on_branch, role: &str, field, text: &str| Hit {
        path: path.to_path_buf(),
        session: session.clone(),
        entry_id,
        line,
        on_branch,
        role: role.to_owned(),
        field,
        text: text.to_owned(),
    };
    if options.role.is_none()
        && let Some(title) = file.title()
    {
        let line = file.header_line().unwrap_or(1);
        let line = if file.title_slot().is_some() { 1 } else { line };
        for text in title.lines().filter(|l| pattern.is_match(l)) {
            hits.push(hit(None, line, true, "title", "title", text));
        }
    }
    let branch = SessionView::new(&file)
        .index()
        .branch_for(&LeafSelector::Default);
    let mut on_branch = vec![false; file.len()];
    for &position in &branch.positions {
        if let Some(slot) = on_branch.get_mut(position) {
            *slot = true;
        }
    }
    // The messages whose line holds the pattern's literal bytes (all of them for a pattern
    // without one), found in one pass over the lines as written, then parsed a batch at a time.
    let messages: Vec<usize> = file
        .index()
        .iter()
        .enumerate()
        .filter(|(_, at)| at.envelope.kind() == "message")
        .map(|(position, _)| position)
        .collect();
    let candidates: Vec<usize> = match pattern.raw_needle().map(memmem::Finder::new) {
        None => messages,
        Some(needle) => {
            let holds = file.map_raw(&messages, |_, _, raw| needle.find(raw).is_some())?;
            messages
                .into_iter()
                .zip(holds)
                .filter_map(|(at, holds)| holds.then_some(at))
                .collect()
        }
    };
    for batch in candidates.chunks(PARSED_AT_ONCE) {
        for (&position, entry) in batch.iter().zip(file.values_for(batch)?) {
            let Some(at) = file.index().get(position) else {
                continue;
            };
            let Some(message) = EntryRef::new(&entry).message() else {
                continue;
            };
            let role = MessageRef::new(message).role().unwrap_or_default();
            for (field, text) in searched_texts(message, role, options) {
                for line in text.lines().filter(|l| pattern.is_match(l)) {
                    hits.push(hit(
                        at.envelope.id().map(str::to_owned),
                        at.line,
                        on_branch[position],
                        role,
                        field,
                        line,
                    ));
                }
            }
        }
    }
    Ok(FileHits {
        hits,
        damaged_lines,
    })
}

/// The texts of a message a search looks at, with the field each is from.
fn searched_texts(
    message: &Value,
    role: &str,
    options: &SearchOptions,
) -> Vec<(&'static str, String)> {
    let wanted = |r: SearchRole| options.role.is_none_or(|only| only == r);
    let tools = options.tool_results || options.role == Some(SearchRole::Tool);
    let blocks = |kind: &str, key: &str| -> Vec<String> {
        match MessageRef::new(message).content() {
            Some(Value::String(text)) if kind == "text" => vec![text.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .filter(|b| BlockRef::new(b).is(kind))
                .filter_map(|b| js::as_str(b.get(key)).map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut texts = Vec::new();
    match role {
        "user" | "developer" if wanted(SearchRole::User) => {
            texts.extend(blocks("text", "text").into_iter().map(|t| ("text", t)));
        }
        "assistant" if wanted(SearchRole::Assistant) => {
            texts.extend(blocks("text", "text").into_iter().map(|t| ("text", t)));
            if options.thinking {
                texts.extend(
                    blocks("thinking", "thinking")
                        .into_iter()
                        .map(|t| ("thinking", t)),
                );
            }
        }
        "toolResult" if tools && wanted(SearchRole::Tool) => {
            texts.extend(blocks("text", "text").into_iter().map(|t| ("tool", t)));
        }
        "bashExecution" if tools && wanted(SearchRole::Tool) => {
            for key in ["command", "output"] {
                if let Some(text) = js::as_str(message.get(key)) {
                    texts.push(("tool", text.to_owned()));
                }
            }
        }
        _ => {}
    }
    texts
}
