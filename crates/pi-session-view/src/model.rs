//! The view model: everything the page shows, computed once by the library so the page holds no
//! format rule of its own (branches, the leaf, labels, totals, and "what the model saw" come from
//! the same code as `pi-session tree`, `stats` and `context`).

use std::borrow::Cow;

use pi_session::projection::dialect::llm_message;
use pi_session::store::SessionFile;
use pi_session::tree::context::agent_context_owned;
use pi_session::tree::dialect::omp::blobs::resolve_entry_blobs;
use pi_session::tree::{
    BlobSource, ContextOptions, Dialect, EntryReadError, LeafSelector, SessionView, Totals,
    add_usage, agent_context, totals,
};
use pi_session::types::view::EntryRef;
use serde_json::{Map, Value, json};

/// Version of the view model's JSON shape (the page checks it).
pub const MODEL_VERSION: u64 = 1;

/// How far ahead of the previous match a context message is looked for among the branch's
/// entries before it is embedded as a copy.
const MATCH_WINDOW: usize = 64;

/// What to build.
#[derive(Clone, Copy)]
pub struct ViewOptions<'a> {
    /// The branch selected when the page opens (and always embedded with its context).
    pub leaf: &'a LeafSelector,
    /// omp's blob folder, to show `blob:sha256:` pictures.
    pub blobs: Option<&'a dyn BlobSource>,
    /// The file name shown in the heading.
    pub file_name: &'a str,
    /// The most branch positions embedded over all branches (each branch's context is built
    /// and embedded only while the running sum stays under it; the selected branch always is).
    /// Keeps a session with hundreds of long branches from exporting hundreds of copies.
    pub branch_budget: usize,
    /// Where the `parentSession` links to, when the caller knows (serve's `/session?path=…`,
    /// or the parent's exported page beside this one); `None` shows it as text.
    pub parent_href: Option<&'a str>,
}

impl std::fmt::Debug for ViewOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewOptions")
            .field("leaf", self.leaf)
            .field("blobs", &self.blobs.map(|_| "BlobSource"))
            .field("file_name", &self.file_name)
            .field("branch_budget", &self.branch_budget)
            .field("parent_href", &self.parent_href)
            .finish()
    }
}

/// The default [`ViewOptions::branch_budget`] for a session of `entries` entries: four full
/// copies of the session, and never less than 200,000 positions.
pub fn default_branch_budget(entries: usize) -> usize {
    entries.saturating_mul(4).max(200_000)
}

/// Why a view could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// Reading an entry from the session file failed.
    #[error(transparent)]
    Read(#[from] EntryReadError),
    /// Serialising the page data failed.
    #[error("serialising the session for the page failed: {0}")]
    Json(#[from] serde_json::Error),
    /// Writing the page failed.
    #[error("writing the page failed: {0}")]
    Write(#[from] std::io::Error),
}

/// Builds the view model of a session: a JSON document the page's script renders.
///
/// Shape (version [`MODEL_VERSION`]): `session` (id, title, dialect, cwd, created, file,
/// parentSession, parentHref), `entries` (every entry in file order, omp blob pictures resolved),
/// `parents` (the position of each entry's parent, or -1), `tips` (every branch end with its
/// label and whether omp archived it), `leaf` (the selected position), `labels`, `archived`,
/// `usage` (per assistant turn: tokens, output, cost), `totals` (all turns of all branches),
/// `branches` (per embedded tip: its positions, totals and the projected context, agent and
/// llm formats, each message either `{"e": position}` when it is that entry's message or
/// `{"m": message}`) and `diagnostics`.
pub fn view_model(file: &SessionFile, options: &ViewOptions<'_>) -> Result<Value, ViewError> {
    let (mut model, entries) = view_parts(file, options)?;
    if let Some(map) = model.as_object_mut() {
        map.insert("entries".into(), Value::Array(entries));
    }
    Ok(model)
}

/// [`view_model`] without its `entries` (its last key), and the entries apart: the page writes
/// most of them as the file has them.
pub(crate) fn view_parts(
    file: &SessionFile,
    options: &ViewOptions<'_>,
) -> Result<(Value, Vec<Value>), ViewError> {
    let view = SessionView::new(file);
    let index = view.index();
    let dialect = view.detect_dialect()?;
    let all: Vec<usize> = (0..file.len()).collect();
    let mut entries = view.load(&all)?;
    let mut diagnostics: Vec<String> = index
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    if let Some(blobs) = options.blobs {
        for entry in &mut entries {
            diagnostics.extend(
                resolve_entry_blobs(entry, blobs)
                    .iter()
                    .map(|d| d.to_string()),
            );
        }
    }

    let parents: Vec<i64> = index
        .nodes()
        .iter()
        .map(|node| {
            node.parent_id
                .as_deref()
                .and_then(|id| index.position_of(id))
                .map_or(-1, |p| i64::try_from(p).unwrap_or(-1))
        })
        .collect();
    let labels = view.labels()?;
    let archived = view.archived()?;
    let visible = view.visible_tips()?;
    let (leaf, leaf_problem) = index.resolve_leaf(options.leaf);
    diagnostics.extend(leaf_problem.map(|d| d.to_string()));

    let mut ends: Vec<usize> = leaf.into_iter().collect();
    ends.extend(index.tips().into_iter().filter(|&t| Some(t) != leaf));
    let tips: Vec<Value> = ends
        .iter()
        .map(|&pos| {
            let id = index.node(pos).and_then(|n| n.id.clone());
            json!({
                "pos": pos,
                "id": id,
                "archived": !visible.contains(&pos) && index.tips().contains(&pos),
                "label": id.as_deref().and_then(|id| labels.get(id)),
            })
        })
        .collect();

    let mut branches = Map::new();
    let mut spent = 0usize;
    for (n, &end) in ends.iter().enumerate() {
        let branch = index.branch(end);
        spent = spent.saturating_add(branch.positions.len());
        if n > 0 && spent > options.branch_budget {
            continue;
        }
        diagnostics.extend(branch.diagnostics.iter().map(ToString::to_string));
        branches.insert(
            end.to_string(),
            branch_view(&entries, &branch.positions, dialect, options.blobs),
        );
    }

    let usage: Map<String, Value> = entries
        .iter()
        .enumerate()
        .filter_map(|(pos, entry)| {
            let message = EntryRef::new(entry).message_ref()?;
            if !message.is_role("assistant") {
                return None;
            }
            let usage = message.usage().filter(|u| u.is_object())?;
            Some((
                pos.to_string(),
                totals_json(add_usage(Totals::default(), usage)),
            ))
        })
        .collect();

    let header = file.header();
    let title = view.name(dialect)?;
    let model = json!({
        "version": MODEL_VERSION,
        "session": {
            "id": header.map(|h| h.id.clone()),
            "title": title,
            "dialect": dialect.as_str(),
            "cwd": header.and_then(|h| h.cwd.clone()),
            "created": header.and_then(|h| h.timestamp.as_ref()).map(|t| t.as_str()),
            "parentSession": header.and_then(|h| h.parent_session.clone()),
            "parentHref": options.parent_href,
            "file": options.file_name,
            "bytes": file.byte_len(),
        },
        "totals": totals_json(totals(&entries)),
        "parents": parents,
        "tips": tips,
        "leaf": leaf,
        "labels": labels,
        "archived": archived,
        "usage": usage,
        "branches": branches,
        "diagnostics": diagnostics,
    });
    Ok((model, entries))
}

/// One branch: its positions, totals, and the context its model is sent.
fn branch_view(
    entries: &[Value],
    positions: &[usize],
    dialect: Dialect,
    blobs: Option<&dyn BlobSource>,
) -> Value {
    let options = ContextOptions { blobs };
    // A branch that is a run of the file (a session without forks) is borrowed, not copied:
    // pi's buildSessionContext reads a slice; omp's rewrites entries, so it gets its own copy.
    let run = positions
        .first()
        .zip(positions.last())
        .filter(|&(&first, &last)| last + 1 - first == positions.len())
        .and_then(|(&first, &last)| entries.get(first..=last));
    let (branch_totals, mut context) = match run {
        // `agent_context` copies the path itself when the dialect rewrites entries (omp).
        Some(path) => (totals(path), agent_context(path, dialect, &options).0),
        _ => {
            let path: Vec<Value> = positions
                .iter()
                .filter_map(|&p| entries.get(p).cloned())
                .collect();
            (
                totals(&path),
                agent_context_owned(path, dialect, &options).0,
            )
        }
    };
    // The messages are taken apart: the rest of the context is written as `meta`, and
    // convertToLlm's answer borrows every message it leaves as it is (no copy of either).
    let messages = context.take_messages();
    let llm: Vec<Cow<'_, Value>> = messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| llm_message(m, messages.get(i + 1), dialect))
        .collect();
    let mut meta = context.to_value();
    if let Some(map) = meta.as_object_mut() {
        // The built context's own list (`{messages, thinkingLevel, …}`), not an entry field.
        map.shift_remove("messages");
    }
    json!({
        "positions": positions,
        "totals": totals_json(branch_totals),
        "agent": references(&messages, positions, entries),
        "llm": references(&llm, positions, entries),
        "meta": meta,
    })
}

/// Each message as `{"e": position}` when it equals the `message` of an entry on the branch
/// (looked for a little ahead of the previous match), else `{"m": message}`: the page shows the
/// entry and the export does not hold every branch's context twice.
fn references<M: std::borrow::Borrow<Value>>(
    messages: &[M],
    positions: &[usize],
    entries: &[Value],
) -> Vec<Value> {
    let mut cursor = 0;
    messages
        .iter()
        .map(|message| {
            let message = message.borrow();
            let window = positions.get(cursor..).unwrap_or_default();
            let found = window.iter().take(MATCH_WINDOW).position(|&p| {
                entries.get(p).and_then(|e| EntryRef::new(e).message()) == Some(message)
            });
            match found {
                Some(offset) => {
                    cursor += offset + 1;
                    json!({ "e": window[offset] })
                }
                None => json!({ "m": message }),
            }
        })
        .collect()
}

fn totals_json(totals: Totals) -> Value {
    json!({ "tokens": totals.tokens, "output": totals.output, "cost": totals.cost })
}
