//! The session tree drawn for people (`tree`): one line per entry, branches indented, long
//! linear runs folded. The facade gives the data (the tree index, the labels, each entry); this
//! module only draws it.

use std::collections::HashSet;

use pi_session::tree::TreeIndex;
use pi_session::types::JsonMap;

/// Linear runs longer than this many entries are folded unless `--fold` says otherwise.
pub const FOLD_RUNS_LONGER_THAN: usize = 12;

/// Draws the tree: one line per entry (`id type description`), branches indented with
/// `├─`/`└─`, the leaf marked `◀ leaf`, labels shown as `[label]`, linear runs longer than
/// `fold` entries folded into `… N entries …` (the first and last two entries, labelled
/// entries, compactions, branch summaries and the leaf stay visible). Entries caught in a parent
/// cycle (unreachable from any root) are listed at the end. `describe` gives the text after the
/// type (e.g. a message preview); it is called only for the lines drawn.
pub fn draw(
    index: &TreeIndex,
    labels: &JsonMap,
    describe: &dyn Fn(usize) -> String,
    fold: usize,
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
        let folded = run.len() > fold;
        let mut hidden = 0usize;
        for (i, &pos) in run.iter().enumerate() {
            let keep = !folded
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

/// Entries a folded run still shows: labelled entries, compactions and branch summaries
/// (where the context was rewritten).
fn is_landmark(index: &TreeIndex, labels: &JsonMap, pos: usize) -> bool {
    index.node(pos).is_some_and(|node| {
        matches!(node.kind, "compaction" | "branch_summary")
            || node.id.is_some_and(|id| labels.contains_key(id))
    })
}

fn children_of(index: &TreeIndex, pos: usize) -> Vec<usize> {
    index
        .node(pos)
        .and_then(|n| n.id)
        .map(|id| index.children(id).to_vec())
        .unwrap_or_default()
}

fn entry_line(
    index: &TreeIndex,
    labels: &JsonMap,
    describe: &dyn Fn(usize) -> String,
    leaf: Option<usize>,
    pos: usize,
) -> String {
    let node = index.node(pos);
    let id = node.and_then(|n| n.id).unwrap_or("(no id)");
    let kind = node.map_or("", |n| n.kind);
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use pi_session::tree::session_meta;
    use pi_session_test_support::random_trees::{build, spec};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    fn entry(kind: &str, id: &str, parent: Option<&str>, fields: Value) -> Value {
        let mut value = json!({"type": kind, "id": id, "parentId": parent,
                               "timestamp": "2025-01-01T00:00:00Z"});
        if let (Some(map), Value::Object(extra)) = (value.as_object_mut(), fields) {
            map.extend(extra);
        }
        value
    }

    fn user(id: &str, parent: Option<&str>) -> Value {
        entry(
            "message",
            id,
            parent,
            json!({"message": {"role": "user", "content": "x", "timestamp": 1}}),
        )
    }

    /// The id of every line of a drawing.
    fn drawn_ids(text: &str) -> Vec<String> {
        text.lines()
            .filter(|line| {
                !line.starts_with("unreachable")
                    && !line
                        .trim_start_matches(|c: char| " │".contains(c))
                        .starts_with('…')
            })
            .map(|line| {
                line.trim_start_matches(|c: char| " │├└─".contains(c))
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn branches_are_drawn_under_their_fork_point() {
        let entries = [
            json!({"type":"message","id":"a","parentId":null}),
            json!({"type":"message","id":"b","parentId":"a"}),
            json!({"type":"message","id":"c","parentId":"a"}),
        ];
        let index = TreeIndex::from_entries(&entries);
        let text = draw(&index, &JsonMap::new(), &|_| String::new(), 12);
        assert_eq!(text, "a message\n├─ b message\n└─ c message ◀ leaf\n");
    }

    #[test]
    fn drawing_marks_leaf_labels_and_folds_long_runs() {
        let mut entries = vec![user("r", None)];
        for i in 0..30 {
            let parent = if i == 0 {
                "r".to_owned()
            } else {
                format!("n{}", i - 1)
            };
            let id = format!("n{i}");
            entries.push(match i {
                5 => entry(
                    "compaction",
                    &id,
                    Some(&parent),
                    json!({"summary":"s","firstKeptEntryId":"n3","tokensBefore":9}),
                ),
                20 => entry(
                    "branch_summary",
                    &id,
                    Some(&parent),
                    json!({"summary":"b","fromId":"n19"}),
                ),
                _ => user(&id, Some(&parent)),
            });
        }
        entries.push(user("side", Some("r")));
        entries.push(entry(
            "label",
            "lab",
            Some("side"),
            json!({"targetId":"n10","label":"ten"}),
        ));
        let index = TreeIndex::from_entries(&entries);
        let labels = session_meta::labels(&entries);
        let text = draw(&index, &labels, &|_| String::new(), FOLD_RUNS_LONGER_THAN);
        insta::assert_snapshot!(text);
        assert!(text.contains("n10 message [ten]"));
        assert!(text.contains("n5 compaction\n"));
        assert!(text.contains("n20 branch_summary\n"));
        assert!(text.contains("lab label ◀ leaf"));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn folding_keeps_compactions_visible(specs in proptest::collection::vec(spec(), 1..40)) {
            let entries = build(&specs);
            let index = TreeIndex::from_entries(&entries);
            let drawn = drawn_ids(&draw(&index, &JsonMap::new(), &|_| String::new(), 3));
            for position in index.positions_of_kind("compaction").filter(|&p| index.is_id_owner(p)) {
                let id = index.node(position).unwrap().id.unwrap().to_owned();
                prop_assert!(drawn.contains(&id), "compaction {} folded away", id);
            }
        }

        #[test]
        fn drawing_shows_every_entry_once(specs in proptest::collection::vec(spec(), 1..40)) {
            let entries = build(&specs);
            let index = TreeIndex::from_entries(&entries);
            let text = draw(&index, &JsonMap::new(), &|_| String::new(), usize::MAX);
            let mut drawn = drawn_ids(&text);
            let mut owners: Vec<String> = (0..index.len())
                .filter(|&p| index.is_id_owner(p))
                .map(|p| index.node(p).unwrap().id.unwrap().to_owned())
                .collect();
            owners.sort();
            drawn.sort();
            prop_assert_eq!(drawn, owners);
        }
    }
}
