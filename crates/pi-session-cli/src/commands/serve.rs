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
use pi_session::store::{self, SessionListing};
use pi_session::tree::{SessionView, totals};
use pi_session::types::IsoTimestamp;
use pi_session::{session_roots_from_env, system_ms, text, title_for};
use pi_session_view::{LIST_JS, page, write_script_json};
use serde_json::{Value, json};

use crate::commands::export;
use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::output::{Out, warn};

/// Arguments of `serve`.
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
    /// Summaries by path, with the size and time they were read at (reread when either moves).
    summaries: Mutex<HashMap<PathBuf, (u64, SystemTime, Value)>>,
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
        summaries: Mutex::new(HashMap::new()),
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

/// Every listed session, newest first, as the page's rows. Rows of sessions not read yet are
/// the listing's first-line facts marked `"pending": true` unless `read` (reading every session
/// of a large folder takes longer than a person should wait for the list to appear).
fn listing(server: &Server, read: bool) -> Vec<(SessionListing, Value)> {
    let mut sessions: Vec<SessionListing> = Vec::new();
    for (_, root) in &server.roots {
        match store::list_all(root) {
            Ok((found, _)) => sessions.extend(found),
            Err(e) => warn(&format!("pi-session serve: {e}")),
        }
    }
    sessions.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| b.path.cmp(&a.path))
    });
    sessions.dedup_by(|a, b| a.path == b.path);
    let mut cache = server
        .summaries
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    sessions
        .into_iter()
        .map(|listing| {
            let fresh = cache
                .get(&listing.path)
                .filter(|(size, modified, _)| {
                    *size == listing.size && *modified == listing.modified
                })
                .map(|(_, _, row)| row.clone());
            let row = match fresh {
                Some(row) => row,
                None if read => {
                    let row = summarize(&listing);
                    cache.insert(
                        listing.path.clone(),
                        (listing.size, listing.modified, row.clone()),
                    );
                    row
                }
                None => {
                    let mut row = first_line_row(&listing);
                    row["pending"] = json!(true);
                    row
                }
            };
            (listing, row)
        })
        .collect()
}

/// The rows of [`listing`] alone.
fn rows(server: &Server, read: bool) -> Vec<Value> {
    listing(server, read)
        .into_iter()
        .map(|(_, row)| row)
        .collect()
}

/// What the listing read from a session's first lines: path, id, title, folder, size, time.
fn first_line_row(listing: &SessionListing) -> Value {
    let modified =
        IsoTimestamp::from_unix_ms(system_ms(listing.modified)).map(|t| t.as_str().to_owned());
    json!({
        "path": listing.path,
        "id": listing.id,
        "title": listing.title,
        "cwd": listing.cwd,
        "size": listing.size,
        "modified": modified,
    })
}

/// One row of the list: title or name, first user message, size, entry count, the last model
/// used and the cost of every turn. This is the one place the list reads a session (the lead may
/// fold it into `ls`'s summary).
fn summarize(listing: &SessionListing) -> Value {
    let mut row = first_line_row(listing);
    let Ok((file, _)) = store::open(&listing.path) else {
        return row;
    };
    let view = SessionView::new(&file);
    let messages: Vec<usize> = view.index().positions_of_kind("message").collect();
    let Ok(bodies) = view.load(&messages) else {
        return row;
    };
    let first = bodies
        .iter()
        .filter_map(|e| serde_json::from_value::<pi_session::types::Entry>(e.clone()).ok())
        .map(|e| title_for(&e))
        .find(|t| !t.is_empty());
    let model = bodies.iter().rev().find_map(|e| {
        let m = e.get("message")?;
        (m.get("role")? == "assistant").then(|| {
            let provider = m.get("provider").and_then(Value::as_str).unwrap_or("");
            let model = m.get("model").and_then(Value::as_str).unwrap_or("");
            format!("{provider}/{model}").trim_matches('/').to_owned()
        })
    });
    let name = view
        .detect_dialect()
        .ok()
        .and_then(|d| view.name(d).ok().flatten());
    row["title"] = json!(name.filter(|n| !n.is_empty()).or(listing.title.clone()));
    row["first"] = json!(first);
    row["entries"] = json!(file.len());
    row["model"] = json!(model);
    row["cost"] = json!(totals(&bodies).cost);
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
        export::html(&file, &path, leaf.as_deref(), None)
            .map_err(|e| (StatusCode::INTERNAL_SERVER_ERROR, e.message))
    })
    .await;
    match made {
        Ok(Ok(page)) => html(&page),
        Ok(Err((status, message))) => failure(status, &message),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

/// Only sessions the listing found are served.
fn is_listed(server: &Server, path: &Path) -> bool {
    let known = server
        .summaries
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .contains_key(path);
    known || listing(server, false).iter().any(|(l, _)| l.path == path)
}

/// `?q=WORDS`: the paths of listed sessions whose title or message text holds `q` (any case).
async fn search(
    State(server): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let needle = query
        .get("q")
        .map_or_else(String::new, |q| q.trim().to_lowercase());
    let found = tokio::task::spawn_blocking(move || {
        if needle.chars().count() < 2 {
            return Vec::new();
        }
        listing(&server, true)
            .into_iter()
            .filter(|(listing, row)| {
                row["title"]
                    .as_str()
                    .is_some_and(|t| t.to_lowercase().contains(&needle))
                    || mentions(&listing.path, &needle)
            })
            .map(|(listing, _)| listing.path)
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
    if let Ok(content) = serde_json::from_value(value.get("content").cloned().unwrap_or_default()) {
        out.push_str(&text(&content));
    }
    for key in ["command", "code", "output", "summary"] {
        if let Some(s) = value.get(key).and_then(Value::as_str) {
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
