//! `pi-session serve`: a local, read-only web page listing the sessions of omp's and pi's folders
//! (and any DIR given), each opening as the `export` page.
//!
//! Binds 127.0.0.1 only. Never writes a session: files are opened read-only, and only files the
//! listing found are served (a request names a listed path, nothing else).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use clap::Args;
use pi_session::store::{self, newest_first};
use pi_session::types::IsoTimestamp;
use pi_session::types::view::MessageRef;
use pi_session::{
    SessionSummary, UsageOptions, file_usage, session_files, session_roots_from_env, summarize,
    system_ms, text,
};
use pi_session_view::{LIST_JS, page, write_script_json};
use rayon::prelude::*;
use serde_json::{Value, json};

use crate::commands::export;
use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::output::{Out, warn};

// Arguments of `serve` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The port on 127.0.0.1 (0: any free port; the address is printed).
    #[arg(long, value_name = "N", default_value_t = 8423)]
    pub port: u16,
    /// More folders of sessions (or of project folders of sessions) to list, besides omp's and
    /// pi's session folders.
    pub dirs: Vec<PathBuf>,
}

/// What the server knows: the folders it lists and what it has read of each session.
struct Server {
    roots: Vec<(&'static str, PathBuf)>,
    /// What was read of each session, by path, with the size and time it was read at (read
    /// again when either moves).
    cache: Mutex<HashMap<PathBuf, Cached>>,
}

/// One session as read: the library's summary (prefix and tail), and the whole-file details
/// (entries, cost) once asked for.
struct Cached {
    size: u64,
    modified: SystemTime,
    summary: SessionSummary,
    details: Option<(usize, f64)>,
}

type Shared = Arc<Server>;

/// Runs `serve` until the process is stopped.
pub fn run(args: ServeArgs) -> Outcome {
    let mut roots = session_roots_from_env();
    // Absolute, so the page's links name the same file whatever the browser's idea of a folder.
    roots.extend(
        args.dirs
            .into_iter()
            .map(|dir| ("dir", std::fs::canonicalize(&dir).unwrap_or(dir))),
    );
    let server = Arc::new(Server {
        roots,
        cache: Mutex::new(HashMap::new()),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .map_err(|e| Failure::new(format!("could not start the server's runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .map_err(|e| {
                Failure::new(format!(
                    "could not listen on 127.0.0.1:{}: {e}; pick another with --port N (0: any free port)",
                    args.port
                ))
            })?;
        let address = listener
            .local_addr()
            .map_err(|e| Failure::new(format!("could not read the bound address: {e}")))?;
        let mut out = Out::new();
        out.line(&format!("serving http://{address}/ (read-only; Ctrl-C stops)"))?;
        for (kind, root) in &server.roots {
            out.line(&format!("  {kind}: {}", root.display()))?;
        }
        out.flush()?;
        let app = Router::new()
            .route("/", get(index))
            .route("/session", get(session))
            .route("/api/search", get(search))
            .route("/api/sessions", get(sessions))
            .with_state(server);
        axum::serve(listener, app)
            .await
            .map_err(|e| Failure::new(format!("the server stopped: {e}")))
    })?;
    Ok(EXIT_OK)
}

/// The `*.jsonl` files of a root and of its project folders (as `store::list_all` walks), with
/// their size and modification time (a `stat` each; nothing is read).
fn walk(root: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut folders = vec![root.to_path_buf()];
    if let Ok(reader) = std::fs::read_dir(root) {
        folders.extend(reader.flatten().map(|i| i.path()).filter(|p| p.is_dir()));
    }
    let mut found = Vec::new();
    for folder in folders {
        match session_files(&folder) {
            Ok(files) => found.extend(files.into_iter().filter_map(|path| {
                let meta = std::fs::metadata(&path).ok()?;
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                Some((path, meta.len(), modified))
            })),
            Err(e) => warn(&format!("pi-session serve: {e}")),
        }
    }
    found
}

/// Every listed session, newest first, as the page's rows. A session is summarised by the
/// library (`summarize`: its first lines and tail) when it is new or its size or time moved;
/// its entries and cost (the whole file, as `usage` counts) are read only when `read`, else the
/// row is marked `"pending": true` until they are.
fn listing(server: &Server, read: bool) -> Vec<(PathBuf, Value)> {
    let mut files: Vec<(PathBuf, u64, SystemTime)> = server
        .roots
        .iter()
        .flat_map(|(_, root)| walk(root))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    let mut cache = server
        .cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let stale = |(path, size, modified): &&(PathBuf, u64, SystemTime)| {
        cache
            .get(path)
            .is_none_or(|c| c.size != *size || c.modified != *modified)
    };
    let fresh: Vec<Cached> = files
        .iter()
        .filter(stale)
        .collect::<Vec<_>>()
        .into_par_iter()
        .filter_map(|(path, size, modified)| {
            let summary = summarize(path).ok()?.ok()?;
            Some(Cached {
                size: *size,
                modified: *modified,
                summary,
                details: None,
            })
        })
        .collect();
    for cached in fresh {
        cache.insert(cached.summary.listing.path.clone(), cached);
    }
    if read {
        let missing: Vec<PathBuf> = files
            .iter()
            .filter(|(path, ..)| cache.get(path).is_some_and(|c| c.details.is_none()))
            .map(|(path, ..)| path.clone())
            .collect();
        let details: Vec<(PathBuf, (usize, f64))> = missing
            .into_par_iter()
            .map(|path| {
                let details = file_usage(&path, &UsageOptions::default())
                    .map_or((0, 0.0), |r| (r.entries, r.total.total().cost_total));
                (path, details)
            })
            .collect();
        for (path, found) in details {
            if let Some(cached) = cache.get_mut(&path) {
                cached.details = Some(found);
            }
        }
    }
    let mut listed: Vec<&Cached> = files
        .iter()
        .filter_map(|(path, ..)| cache.get(path))
        .collect();
    listed.sort_by(|a, b| newest_first(&a.summary.listing, &b.summary.listing));
    listed
        .into_iter()
        .map(|c| (c.summary.listing.path.clone(), row(c)))
        .collect()
}

/// The rows of [`listing`] alone.
fn rows(server: &Server, read: bool) -> Vec<Value> {
    listing(server, read)
        .into_iter()
        .map(|(_, row)| row)
        .collect()
}

/// Characters of the first message a row carries.
const FIRST_CHARS: usize = 200;

/// One row of the list: name (pi's `session_info`, omp's title), first user message, size,
/// time, messages, model, status; entries and cost once read.
fn row(cached: &Cached) -> Value {
    let summary = &cached.summary;
    let listing = &summary.listing;
    let modified =
        IsoTimestamp::from_unix_ms(system_ms(listing.modified)).map(|t| t.as_str().to_owned());
    let first: Option<String> = summary
        .first_message
        .as_deref()
        .map(|m| m.trim().chars().take(FIRST_CHARS).collect());
    let mut row = json!({
        "path": listing.path,
        "id": listing.id,
        "title": summary.name.as_deref().filter(|n| !n.is_empty()),
        "cwd": listing.cwd,
        "size": listing.size,
        "modified": modified,
        "first": first,
        "messages": summary.message_count,
        "messagesExact": summary.message_count_exact,
        "model": summary.model,
        "status": summary.status.as_str(),
        "parentSession": listing.parent_session,
    });
    match cached.details {
        Some((entries, cost)) => {
            row["entries"] = json!(entries);
            row["cost"] = json!(cost);
        }
        None => row["pending"] = json!(true),
    }
    row
}

/// The list page, its rows embedded as data.
async fn index(State(server): State<Shared>) -> Response {
    let rows = tokio::task::spawn_blocking(move || {
        let rows = rows(&server, false);
        let roots: Vec<Value> = server
            .roots
            .iter()
            .map(|(kind, root)| json!({"kind": kind, "path": root}))
            .collect();
        json!({ "sessions": rows, "roots": roots })
    })
    .await;
    match rows {
        Ok(data) => html(&list_page(&data)),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

fn list_page(data: &Value) -> Vec<u8> {
    page("Sessions · pi-session", LIST_JS, "'self'", 0, |out| {
        write_script_json(data, out)
    })
    .unwrap_or_default()
}

/// Every row with its details (first message, entries, model, cost): read now where not cached.
async fn sessions(State(server): State<Shared>) -> Response {
    let rows = tokio::task::spawn_blocking(move || json!({ "sessions": rows(&server, true) }))
        .await
        .unwrap_or_default();
    (
        [(header::CONTENT_TYPE, "application/json")],
        rows.to_string(),
    )
        .into_response()
}

/// `?path=P[&leaf=ID]`: the export page of a listed session.
async fn session(
    State(server): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    // The request's query parameters, not the session's schema.
    let Some(path) = query.get("path").map(PathBuf::from) else {
        return failure(
            StatusCode::BAD_REQUEST,
            "name a session: /session?path=FILE",
        );
    };
    let leaf = query.get("leaf").cloned();
    let made = tokio::task::spawn_blocking(move || {
        if !is_listed(&server, &path) {
            return Err((
                StatusCode::NOT_FOUND,
                format!("{} is not a listed session", path.display()),
            ));
        }
        let (file, _) =
            store::open(&path).map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        let parent = file
            .header()
            .and_then(|h| h.parent_session.as_deref())
            .and_then(|p| listed_parent(&server, &path, p))
            .map(|p| format!("/session?path={}", percent_encode(&p.to_string_lossy())));
        export::html(&file, &path, leaf.as_deref(), None, parent.as_deref())
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.message))
    })
    .await;
    match made {
        Ok(Ok(page)) => html(&page),
        Ok(Err((status, message))) => failure(status, &message),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// The listed session a `parentSession` names: a file path (pi, omp branches; relative ones
/// beside the session) or a session id (omp forks).
fn listed_parent(server: &Server, child: &Path, parent: &str) -> Option<PathBuf> {
    let as_path = child
        .parent()
        .map_or_else(|| PathBuf::from(parent), |dir| dir.join(parent));
    let as_path = std::fs::canonicalize(&as_path).unwrap_or(as_path);
    let cache = server
        .cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if cache.contains_key(&as_path) {
        return Some(as_path);
    }
    cache
        .values()
        .find(|c| c.summary.listing.id == parent)
        .map(|c| c.summary.listing.path.clone())
}

/// `text` as a URL query value: every byte but unreserved ones percent-encoded.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Only sessions the listing found are served.
fn is_listed(server: &Server, path: &Path) -> bool {
    let known = server
        .cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .contains_key(path);
    known || listing(server, false).iter().any(|(p, _)| p == path)
}

/// `?q=WORDS`: the paths of listed sessions whose title or message text holds `q` (any case).
async fn search(
    State(server): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    // The request's query parameter, not the session's schema.
    let needle = query
        .get("q")
        .map_or_else(String::new, |q| q.trim().to_lowercase());
    let found = tokio::task::spawn_blocking(move || {
        if needle.chars().count() < 2 {
            return Vec::new();
        }
        listing(&server, true)
            .into_iter()
            .filter(|(path, row)| {
                // The listing row built above, not the session's schema.
                row["title"]
                    .as_str()
                    .is_some_and(|t| t.to_lowercase().contains(&needle))
                    || mentions(path, &needle)
            })
            .map(|(path, _)| path)
            .collect()
    })
    .await
    .unwrap_or_default();
    let body = json!({ "paths": found }).to_string();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Whether a message of the session holds `needle` (lowercase). Lines are parsed only when their
/// bytes hold the needle's ASCII words, so a search over many sessions reads mostly bytes.
fn mentions(path: &Path, needle: &str) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let ascii = needle.is_ascii() && !needle.contains(['"', '\\']);
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    bytes.split(|&b| b == b'\n').any(|line| {
        if ascii && finder.find(&line.to_ascii_lowercase()).is_none() {
            return false;
        }
        serde_json::from_slice::<pi_session::types::Entry>(line)
            .ok()
            .and_then(|entry| entry.message().map(message_text))
            .is_some_and(|text| text.to_lowercase().contains(needle))
    })
}

/// The text a person reads in a message (its content's text parts, a bash command and output).
fn message_text(message: &pi_session::types::AgentMessage) -> String {
    let value = serde_json::to_value(message).unwrap_or_default();
    let mut out = String::new();
    let message = MessageRef::new(&value);
    if let Ok(content) = serde_json::from_value(message.content().cloned().unwrap_or_default()) {
        out.push_str(&text(&content));
    }
    for field in [
        message.command(),
        message.code(),
        message.output(),
        message.summary(),
    ] {
        if let Some(s) = field.and_then(Value::as_str) {
            out.push('\n');
            out.push_str(s);
        }
    }
    out
}

fn html(body: &[u8]) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_vec(),
    )
        .into_response()
}

fn failure(status: StatusCode, message: &str) -> Response {
    (status, format!("pi-session serve: {message}\n")).into_response()
}
