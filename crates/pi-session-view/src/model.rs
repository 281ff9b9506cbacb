//! The view model: everything the page shows, computed once by the library so the page holds no
//! format rule of its own (branches, the leaf, labels, totals, and "what the model saw" come from
//! the same code as `pi-session tree`, `stats` and `context`).

use std::borrow::Cow;

use pi_session::projection::dialect::llm_message;
use pi_session::store::SessionFile;
use pi_session::tree::built::{Built, agent_context_indexed};
use pi_session::tree::context::agent_context_owned;
use pi_session::tree::dialect::omp::blobs::resolve_entry_blobs;
use pi_session::tree::{
    AgentContext, BlobSource, ContextOptions, Dialect, EntryReadError, LeafSelector, SessionView,
    Totals, add_usage, totals,
};
use pi_session::types::js::fields;
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
        .map(|node| {
            node.parent_id
                .and_then(|id| index.position_of(id))
                .map_or(-1, |p| i64::try_from(p).unwrap_or(-1))
        })
        .collect();
    let labels = view.labels()?;
    let archived = view.archived()?;
    let visible = view.visible_tips()?;
    let (leaf, leaf_problem) = index.resolve_leaf(options.leaf);
    diagnostics.extend(leaf_problem.map(|d| d.to_string()));

    // In file order: asked by binary search below.
    let all_tips = index.tips();
    let mut ends: Vec<usize> = leaf.into_iter().collect();
    ends.extend(all_tips.iter().copied().filter(|&t| Some(t) != leaf));
    let tips: Vec<Value> = ends
        .iter()
        .map(|&pos| {
            let id = index.node(pos).and_then(|n| n.id);
            json!({
                "pos": pos,
                "id": id,
                "archived": !visible.contains(&pos) && all_tips.binary_search(&pos).is_ok(),
                "label": id.and_then(|id| labels.get(id)),
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
            branch_view(&mut entries, &branch.positions, dialect, options.blobs),
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
    let mut model = json!({
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
    });
    // The large parts moved in (`json!` would copy each by serialising it).
    if let Some(map) = model.as_object_mut() {
        map.insert("usage".into(), Value::Object(usage));
        map.insert("branches".into(), Value::Object(branches));
        map.insert("diagnostics".into(), diagnostics.into());
    }
    Ok((model, entries))
}

/// One branch: its positions, totals, and the context its model is sent.
///
/// pi's `buildSessionContext` reads the path as it is: a branch that is a run of the file (a
/// session without forks) is borrowed, and any other has its entries moved out of `entries`
/// for the build and moved back after it (never copied). omp rewrites entries as it loads
/// them: its path is a copy.
fn branch_view(
    entries: &mut [Value],
    positions: &[usize],
    dialect: Dialect,
    blobs: Option<&dyn BlobSource>,
) -> Value {
    let run = positions
        .first()
        .zip(positions.last())
        .filter(|&(&first, &last)| last + 1 - first == positions.len())
        .map(|(&first, &last)| first..=last)
        .filter(|run| entries.get(run.clone()).is_some());
    if dialect.pi_release().is_none() {
        let path: Vec<Value> = match run {
            Some(run) => entries[run].to_vec(),
            None => positions
                .iter()
                .filter_map(|&p| entries.get(p).cloned())
                .collect(),
        };
        return omp_branch_view(entries, path, positions, dialect, blobs);
    }
    if let Some(run) = run {
        return pi_branch_view(&entries[run], positions, dialect);
    }
    // Every position has its entry (the page loads them all); one past them is left out, as
    // a copy would leave it.
    let len = entries.len();
    let present: Vec<usize> = positions.iter().copied().filter(|&p| p < len).collect();
    let mut path: Vec<Value> = present
        .iter()
        .map(|&p| std::mem::take(&mut entries[p]))
        .collect();
    let view = pi_branch_view(&path, &present, dialect);
    for (&p, value) in present.iter().zip(path.iter_mut()) {
        entries[p] = std::mem::take(value);
    }
    view
}

/// [`branch_view`] of pi's dialects over `path`, the branch's entries (`positions[k]`'s entry
/// is `path[k]`).
fn pi_branch_view(path: &[Value], positions: &[usize], dialect: Dialect) -> Value {
    // Its messages come back as the path's own (`Built::Entry`, neither copied nor compared
    // again) or as made ones.
    let (context, indexed, _) = agent_context_indexed(path, dialect);
    let messages: Vec<(&Value, Option<usize>)> = indexed
        .iter()
        .map(|message| {
            let at = match message {
                Built::Entry(at) => Some(*at),
                Built::Made(_) => None,
            };
            (message.resolve(path), at)
        })
        .collect();
    let on_path = |k: usize| path.get(k).and_then(|e| EntryRef::new(e).message());
    finish_branch_view(
        totals(path),
        &context,
        &messages,
        positions,
        dialect,
        on_path,
    )
}

/// [`branch_view`] of omp over `path`, a copy of the branch's entries (rewritten as omp loads
/// them); its messages are compared with the entries as the page has them.
fn omp_branch_view(
    entries: &[Value],
    path: Vec<Value>,
    positions: &[usize],
    dialect: Dialect,
    blobs: Option<&dyn BlobSource>,
) -> Value {
    let branch_totals = totals(&path);
    let options = ContextOptions { blobs };
    let mut context = agent_context_owned(path, dialect, &options).0;
    let owned = context.take_messages();
    let messages: Vec<(&Value, Option<usize>)> = owned.iter().map(|m| (m, None)).collect();
    let on_page = |k: usize| positions.get(k).and_then(|&p| message_at(entries, p));
    finish_branch_view(
        branch_totals,
        &context,
        &messages,
        positions,
        dialect,
        on_page,
    )
}

/// The branch's view from its built context: `message_on(k)` is the `message` of the
/// branch's `k`-th entry.
fn finish_branch_view<'a>(
    branch_totals: Totals,
    context: &AgentContext,
    messages: &[(&'a Value, Option<usize>)],
    positions: &[usize],
    dialect: Dialect,
    message_on: impl Fn(usize) -> Option<&'a Value> + Copy,
) -> Value {
    let llm = llm_of(messages, dialect);
    let mut meta = context.to_value();
    if let Some(map) = meta.as_object_mut() {
        // The built context's own list (`{messages, thinkingLevel, …}`), not an entry field.
        map.shift_remove("messages");
    }
    // Built by moves (`json!` would copy each part by serialising it).
    fields([
        ("positions", positions.into()),
        ("totals", totals_json(branch_totals)),
        ("agent", references(messages, positions, message_on).into()),
        ("llm", references(&llm, positions, message_on).into()),
        ("meta", meta),
    ])
}

/// convertToLlm's answer to `messages`, borrowing every message it leaves as it is; such a
/// message keeps its path index.
fn llm_of<'a>(
    messages: &[(&'a Value, Option<usize>)],
    dialect: Dialect,
) -> Vec<(Cow<'a, Value>, Option<usize>)> {
    messages
        .iter()
        .enumerate()
        .flat_map(|(i, &(message, at))| {
            llm_message(message, messages.get(i + 1).map(|m| m.0), dialect)
                .into_iter()
                .map(move |out| {
                    let same = matches!(&out, Cow::Borrowed(v) if std::ptr::eq(*v, message));
                    (out, at.filter(|_| same))
                })
        })
        .collect()
}

/// Each message as `{"e": position}` when it equals the `message` of an entry on the branch
/// (the first such entry looked for a little ahead of the previous match), else `{"m":
/// message}`: the page shows the entry and the export does not hold every branch's context
/// twice. A message known to be the `message` of the branch's `at`-th entry (ahead of the
/// previous match) is placed there, however far ahead, unless an entry of the window before it
/// holds an equal message (rarely: the first equal entry wins, as for any other); it is not
/// compared with its own. So the messages a compaction keeps, far past the summary, are
/// referenced, not copied.
fn references<'a, M: std::borrow::Borrow<Value>>(
    messages: &[(M, Option<usize>)],
    positions: &[usize],
    message_on: impl Fn(usize) -> Option<&'a Value>,
) -> Vec<Value> {
    let mut cursor = 0;
    messages
        .iter()
        .map(|(message, at)| {
            let message = message.borrow();
            let window = positions.get(cursor..).unwrap_or_default();
            let known = at
                .and_then(|at| at.checked_sub(cursor))
                .filter(|&offset| offset < window.len());
            let same = |offset: usize| message_on(cursor + offset) == Some(message);
            let found = match known {
                Some(offset) => (0..offset.min(MATCH_WINDOW))
                    .position(same)
                    .or(Some(offset)),
                None => (0..MATCH_WINDOW.min(window.len())).position(same),
            };
            match found {
                Some(offset) => {
                    cursor += offset + 1;
                    fields([("e", window[offset].into())])
                }
                None => fields([("m", message.clone())]),
            }
        })
        .collect()
}

/// The `message` of the entry at `position`.
fn message_at(entries: &[Value], position: usize) -> Option<&Value> {
    entries
        .get(position)
        .and_then(|e| EntryRef::new(e).message())
}

fn totals_json(totals: Totals) -> Value {
    json!({ "tokens": totals.tokens, "output": totals.output, "cost": totals.cost })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry holding `message`.
    fn entry(message: Value) -> Value {
        json!({ "type": "message", "message": message })
    }

    #[test]
    fn a_message_known_by_its_index_is_placed_at_the_first_equal_entry_or_its_own() {
        let (a, b) = (
            json!({"role": "user", "content": "a"}),
            json!({"role": "user"}),
        );
        // Duplicates (the first equal entry in the window wins), a gap wider than the window,
        // and an entry before the cursor.
        let mut entries = vec![entry(a.clone()), entry(a.clone()), entry(b.clone())];
        entries.extend((0..MATCH_WINDOW + 2).map(|_| json!({"type": "label"})));
        entries.push(entry(b.clone()));
        let positions: Vec<usize> = (0..entries.len()).collect();
        let last = entries.len() - 1;
        let on = |k: usize| message_at(&entries, positions[k]);
        let e = |at: usize| json!({ "e": at });
        for (messages, expected) in [
            // Within the window, where comparing places it; past it, at its own entry (a
            // message compared there would be copied).
            (
                vec![(&a, Some(1)), (&b, Some(2)), (&b, Some(last))],
                vec![e(0), e(2), e(last)],
            ),
            (
                vec![(&a, Some(0)), (&a, Some(1)), (&b, Some(2))],
                vec![e(0), e(1), e(2)],
            ),
            // Known before the cursor: compared, and copied when the window has no equal.
            (
                vec![(&b, Some(2)), (&a, Some(0)), (&b, Some(last))],
                vec![e(2), json!({ "m": a }), e(last)],
            ),
            // An equal entry in the window before its own wins.
            (vec![(&a, None), (&b, Some(last))], vec![e(0), e(2)]),
        ] {
            assert_eq!(
                references(&messages, &positions, on),
                expected,
                "{messages:?}"
            );
        }
        // The comparing answer itself: duplicates go to the first, beyond the window is a copy.
        let compared = references(
            &[(&a, None), (&a, None), (&b, None), (&b, None)],
            &positions,
            on,
        );
        assert_eq!(
            compared,
            vec![
                json!({"e": 0}),
                json!({"e": 1}),
                json!({"e": 2}),
                json!({"m": b})
            ]
        );
    }
}
