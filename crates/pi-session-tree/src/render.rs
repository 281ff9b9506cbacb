//! Output helpers for the CLI: the tree as JSON and as a drawing for people.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::index::TreeIndex;
use crate::js;

/// `{"leafId", "branchIds", "tips", "labels"}` for `pi-session tree --json`:
/// the leaf (the last entry; none when it has no id, as in pi and omp), the ids on its branch root first, the
/// ids of every tip in file order, and the labels in effect.
pub fn tree_json(index: &TreeIndex, labels: &Map<String, Value>) -> Value {
    // pi and omp take the file's last entry as the leaf; when that line has no id there is none
    // (`leafId` undefined, an empty branch), whatever entries with ids came before it.
    let last = index.len().checked_sub(1);
    let leaf = last.filter(|&pos| index.node(pos).is_some_and(|n| n.id.is_some()));
    let id_of = |pos: usize| {
        index
            .node(pos)
            .and_then(|n| n.id.clone())
            .map_or(Value::Null, Value::from)
    };
    let branch_ids: Vec<Value> = leaf
        .map(|pos| index.branch(pos).positions)
        .unwrap_or_default()
        .into_iter()
        .map(id_of)
        .collect();
    let tips: Vec<Value> = index.tips().into_iter().map(id_of).collect();
    json!({
        "leafId": leaf.map_or(Value::Null, id_of),
        "branchIds": branch_ids,
        "tips": tips,
        "labels": Value::Object(labels.clone()),
    })
}

/// How [`render_tree`] draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Linear runs longer than this many entries are folded (the first and
    /// last two entries, labelled entries, compactions, branch summaries and
    /// the leaf stay visible).
    pub fold_runs_longer_than: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            fold_runs_longer_than: 12,
        }
    }
}

/// Draws the session tree for a person: one line per entry (`id type
/// description`), branches indented with `├─`/`└─`, the leaf marked `◀ leaf`,
/// labels shown as `[label]`, long linear runs folded into `… N entries …`
/// (compactions, branch summaries and labelled entries inside a run stay
/// visible).
/// Entries caught in a parent cycle (unreachable from any root) are listed at
/// the end. `describe` gives the text after the type (e.g. a message preview);
/// it is called only for the lines drawn.
///
/// ```
/// use pi_session_tree::{render_tree, RenderOptions, TreeIndex};
/// use serde_json::{json, Map};
///
/// let entries = [
///     json!({"type":"message","id":"a","parentId":null}),
///     json!({"type":"message","id":"b","parentId":"a"}),
///     json!({"type":"message","id":"c","parentId":"a"}),
/// ];
/// let index = TreeIndex::from_entries(&entries);
/// let text = render_tree(&index, &Map::new(), &|_| String::new(), RenderOptions::default());
/// assert_eq!(text, "a message\n├─ b message\n└─ c message ◀ leaf\n");
/// ```
pub fn render_tree(
    index: &TreeIndex,
    labels: &Map<String, Value>,
    describe: &dyn Fn(usize) -> String,
    options: RenderOptions,
) -> String {
    let leaf = index.leaf_position();
    let mut out = String::new();
    let mut visited = HashSet::new();
    let mut stack: Vec<(usize, String, String)> = index
        .roots()
        .into_iter()
        .rev()
        .map(|root| (root, String::new(), String::new()))
        .collect();
    while let Some((start, indent, prefix)) = stack.pop() {
        let mut run = vec![start];
        visited.insert(start);
        loop {
            let last = run[run.len() - 1];
            let kids = children_of(index, last);
            if kids.len() != 1 || !visited.insert(kids[0]) {
                break;
            }
            run.push(kids[0]);
        }
        let line = |pos: usize| entry_line(index, labels, describe, leaf, pos);
        let fold = run.len() > options.fold_runs_longer_than;
        let mut hidden = 0usize;
        for (i, &pos) in run.iter().enumerate() {
            let keep = !fold
                || i < 2
                || i + 2 >= run.len()
                || Some(pos) == leaf
                || is_landmark(index, labels, pos);
            if !keep {
                hidden += 1;
                continue;
            }
            if hidden > 0 {
                out.push_str(&format!("{indent}… {hidden} entries …\n"));
                hidden = 0;
            }
            let lead = if i == 0 { &prefix } else { &indent };
            out.push_str(&format!("{lead}{}\n", line(pos)));
        }
        let last = run[run.len() - 1];
        let kids: Vec<usize> = children_of(index, last)
            .into_iter()
            .filter(|kid| !visited.contains(kid))
            .collect();
        for (k, &kid) in kids.iter().enumerate().rev() {
            let is_last = k + 1 == kids.len();
            let (branch, carry) = if is_last {
                ("└─ ", "   ")
            } else {
                ("├─ ", "│  ")
            };
            stack.push((kid, format!("{indent}{carry}"), format!("{indent}{branch}")));
        }
    }
    let unreachable: Vec<usize> = (0..index.len())
        .filter(|&pos| index.is_id_owner(pos) && !visited.contains(&pos))
        .collect();
    if !unreachable.is_empty() {
        out.push_str("unreachable (parent cycle):\n");
        for pos in unreachable {
            out.push_str(&format!(
                "  {}\n",
                entry_line(index, labels, describe, leaf, pos)
            ));
        }
    }
    out
}

/// Entries a folded run still shows: labelled entries, compactions and
/// branch summaries (where the context was rewritten).
fn is_landmark(index: &TreeIndex, labels: &Map<String, Value>, pos: usize) -> bool {
    index.node(pos).is_some_and(|node| {
        matches!(node.kind.as_str(), "compaction" | "branch_summary")
            || node.id.as_ref().is_some_and(|id| labels.contains_key(id))
    })
}

fn children_of(index: &TreeIndex, pos: usize) -> Vec<usize> {
    index
        .node(pos)
        .and_then(|n| n.id.as_deref())
        .map(|id| index.children(id).to_vec())
        .unwrap_or_default()
}

fn entry_line(
    index: &TreeIndex,
    labels: &Map<String, Value>,
    describe: &dyn Fn(usize) -> String,
    leaf: Option<usize>,
    pos: usize,
) -> String {
    let node = index.node(pos);
    let id = node.and_then(|n| n.id.as_deref()).unwrap_or("(no id)");
    let kind = node.map_or("", |n| n.kind.as_str());
    let mut line = format!("{id} {kind}");
    let description = describe(pos);
    if !description.is_empty() {
        line.push(' ');
        line.push_str(&description);
    }
    if let Some(label) = labels.get(id) {
        line.push_str(&format!(" [{}]", label.as_str().unwrap_or_default()));
    }
    if Some(pos) == leaf {
        line.push_str(" ◀ leaf");
    }
    line
}

/// A one-line description of an entry for [`render_tree`]: the message role
/// and a preview of its text, a compaction's summary, a model change's model,
/// a label's target and text, … (at most `width` characters of preview).
///
/// ```
/// use pi_session_tree::render::describe_entry;
/// use serde_json::json;
///
/// let entry = json!({"type":"message","message":{"role":"user","content":"hello\nworld"}});
/// assert_eq!(describe_entry(&entry, 8), "user: hello wo…");
/// ```
pub fn describe_entry(entry: &Value, width: usize) -> String {
    let field = |key: &str| js::as_str(entry.get(key)).unwrap_or_default();
    match field("type") {
        "message" => {
            let message = entry.get("message");
            let role = js::as_str(js::get(message, "role")).unwrap_or("?");
            let text = message_text(message);
            if text.is_empty() {
                role.to_owned()
            } else {
                format!("{role}: {}", preview(&text, width))
            }
        }
        "custom_message" => format!(
            "{}: {}",
            field("customType"),
            preview(&content_text(entry.get("content")), width)
        ),
        "compaction" | "branch_summary" => preview(field("summary"), width),
        "model_change" => {
            let model = js::as_str(entry.get("model"))
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{}/{}", field("provider"), field("modelId")));
            match js::as_str(entry.get("role")) {
                Some(role) => format!("{model} ({role})"),
                None => model,
            }
        }
        "thinking_level_change" => js::string_of(entry.get("thinkingLevel")),
        "label" => format!("→ {} {}", field("targetId"), preview(field("label"), width)),
        "session_info" => preview(field("name"), width),
        "title_change" => preview(field("title"), width),
        "custom" => field("customType").to_owned(),
        "mode_change" => field("mode").to_owned(),
        _ => String::new(),
    }
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| js::as_str(b.get("text")).or_else(|| js::as_str(b.get("thinking"))))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn message_text(message: Option<&Value>) -> String {
    let text = content_text(js::get(message, "content"));
    if !text.is_empty() {
        return text;
    }
    for key in ["command", "code", "summary"] {
        if let Some(value) = js::as_str(js::get(message, key)) {
            return value.to_owned();
        }
    }
    let calls: Vec<&str> = js::get(message, "content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| js::as_str(b.get("name")))
                .collect()
        })
        .unwrap_or_default();
    if calls.is_empty() {
        String::new()
    } else {
        format!("calls {}", calls.join(", "))
    }
}

fn preview(text: &str, width: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut chars = flat.chars();
    let head: String = chars.by_ref().take(width).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}
