//! Property tests over random trees (`pi_session_test_support::random_trees`): branches,
//! compactions at random points with `firstKeptEntryId` on and off the branch, cycles,
//! self-parents, missing parents and duplicate ids.

use std::collections::HashSet;

use pi_session_test_support::random_trees::{build, spec};
use pi_session_tree::{
    ContextOptions, DiagnosticKind, Dialect, KindQuery, NodeInfo, TreeIndex, agent_context,
    compacted,
};
use proptest::prelude::*;
use serde_json::Value;

/// An envelope from a small id alphabet, so that duplicate ids, missing
/// parents, self-parents and cycles are all common; ids and parents are
/// sometimes absent or empty.
fn node() -> impl Strategy<Value = NodeInfo> {
    let name = || (0u8..12).prop_map(|n| format!("n{n}"));
    let id = prop_oneof![8 => name().prop_map(Some), 1 => Just(None)];
    let parent = prop_oneof![
        6 => name().prop_map(Some),
        2 => Just(None),
        1 => Just(Some(String::new())),
    ];
    let kind = prop_oneof![Just("message"), Just("compaction"), Just("label")];
    (kind, id, parent).prop_map(|(kind, id, parent_id)| NodeInfo {
        kind: kind.to_owned(),
        id,
        parent_id,
    })
}

/// The types [`node_of_any_kind`] draws from: types the store's table numbers, types it does
/// not, and near misses of both.
const KINDS: [&str; 8] = [
    "message",
    "compaction",
    "label",
    "model_change",
    "note",
    "memo",
    "messages",
    "Message",
];

/// [`node`] of any of [`KINDS`].
fn node_of_any_kind() -> impl Strategy<Value = NodeInfo> {
    (node(), proptest::sample::select(&KINDS[..])).prop_map(|(node, kind)| NodeInfo {
        kind: kind.to_owned(),
        ..node
    })
}

/// A session file holding `nodes` (each a line of its envelope after a header), opened.
fn file_of(nodes: &[NodeInfo]) -> pi_session_store::SessionFile {
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    );
    for node in nodes {
        let line =
            serde_json::json!({"type": node.kind, "id": node.id, "parentId": node.parent_id});
        text.push('\n');
        text.push_str(&line.to_string());
    }
    pi_session_store::open_bytes(text.into_bytes()).0
}

/// Every lookup of an index: the position and children of each name the generator uses, and
/// the branch (positions and cut) of every entry.
type Lookups = (
    Vec<Option<usize>>,
    Vec<Vec<usize>>,
    Vec<(Vec<usize>, Vec<String>)>,
);

fn names() -> Vec<String> {
    (0u8..12)
        .map(|n| format!("n{n}"))
        .chain([String::new()])
        .collect()
}

fn lookups(index: &TreeIndex) -> Lookups {
    let names = names();
    let branches = (0..index.len())
        .map(|at| {
            let branch = index.branch(at);
            let cuts = branch
                .diagnostics
                .iter()
                .map(|d| format!("{:?}@{:?}", d.kind, d.position))
                .collect();
            (branch.positions, cuts)
        })
        .collect();
    (
        names.iter().map(|name| index.position_of(name)).collect(),
        names
            .iter()
            .map(|name| index.children(name).to_vec())
            .collect(),
        branches,
    )
}

/// The tips computed the plain way: the owners of their ids that no other owner names as its
/// parent (`TreeIndex::children`'s rule, which an empty id follows too).
fn reference_tips(nodes: &[NodeInfo]) -> Vec<usize> {
    let owner = |name: &str| nodes.iter().rposition(|n| n.id.as_deref() == Some(name));
    (0..nodes.len())
        .filter(|&at| {
            let Some(id) = nodes[at].id.as_deref() else {
                return false;
            };
            owner(id) == Some(at)
                && !nodes.iter().enumerate().any(|(child, node)| {
                    node.id
                        .as_deref()
                        .is_some_and(|own| own != id && owner(own) == Some(child))
                        && node.parent_id.as_deref() == Some(id)
                })
        })
        .collect()
}

/// [`lookups`] computed the plain way: the last entry with an id owns it; an owner is its
/// parent's child unless it names itself; a walk ends at a missing parent or a repeat.
fn reference_lookups(nodes: &[NodeInfo]) -> Lookups {
    let owner = |name: &str| nodes.iter().rposition(|n| n.id.as_deref() == Some(name));
    let children = |name: &str| -> Vec<usize> {
        (0..nodes.len())
            .filter(|&at| {
                let node = &nodes[at];
                node.id
                    .as_deref()
                    .is_some_and(|id| owner(id) == Some(at) && id != name)
                    && node.parent_id.as_deref() == Some(name)
            })
            .collect()
    };
    let branch = |start: usize| {
        let (mut positions, mut cuts) = (Vec::new(), Vec::new());
        let mut current = Some(start);
        while let Some(at) = current {
            if positions.contains(&at) {
                cuts.push(format!(
                    "{:?}@{:?}",
                    pi_session_tree::DiagnosticKind::Cycle,
                    Some(at)
                ));
                break;
            }
            positions.push(at);
            current = match nodes[at].parent_id.as_deref() {
                None | Some("") => None,
                Some(parent) => {
                    let found = owner(parent);
                    if found.is_none() {
                        cuts.push(format!(
                            "{:?}@{:?}",
                            pi_session_tree::DiagnosticKind::MissingParent,
                            Some(at)
                        ));
                    }
                    found
                }
            };
        }
        positions.reverse();
        (positions, cuts)
    };
    let names = names();
    (
        names
            .iter()
            .map(|name| if name.is_empty() { None } else { owner(name) })
            .collect(),
        names.iter().map(|name| children(name)).collect(),
        (0..nodes.len()).map(branch).collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pushing_one_by_one_equals_building_at_once(nodes in proptest::collection::vec(node(), 0..40)) {
        let mut pushed = TreeIndex::default();
        for (count, node) in nodes.iter().enumerate() {
            pushed.push(node.clone());
            let rebuilt = TreeIndex::from_nodes(nodes[..=count].iter().cloned());
            prop_assert_eq!(&pushed, &rebuilt);
            prop_assert_eq!(pushed.leaf_position(), rebuilt.nodes().rposition(|n| n.id.is_some()));
            let expected = reference_lookups(&nodes[..=count]);
            prop_assert_eq!(&lookups(&pushed), &expected);
            prop_assert_eq!(&lookups(&rebuilt), &expected);
        }
        // Pushed without a question in between: the children are built on the first one.
        let mut unasked = TreeIndex::default();
        for node in &nodes {
            unasked.push(node.clone());
        }
        prop_assert_eq!(&lookups(&unasked), &reference_lookups(&nodes));
        prop_assert_eq!(pushed, TreeIndex::from_nodes(nodes));
    }

    #[test]
    fn the_kind_questions_answer_as_the_entries_types_over_a_table_and_after_it(
        nodes in proptest::collection::vec(node_of_any_kind(), 0..40),
        split in 0usize..41,
    ) {
        // The first `split` entries are in a file (the store's table answers from a byte an
        // entry), the rest are appended by a host.
        let split = split.min(nodes.len());
        let file = file_of(&nodes[..split]);
        let table = file.table();
        let present = table.kinds_present();
        let distinct: HashSet<&str> = nodes[..split].iter().map(|n| n.kind.as_str()).collect();
        prop_assert_eq!(present.len(), distinct.len(), "each type once: {:?}", present);
        prop_assert_eq!(present.iter().copied().collect::<HashSet<_>>(), distinct);
        let mut index = TreeIndex::from_table(table.clone());
        for node in &nodes[split..] {
            index.push(node.clone());
        }
        for kind in KINDS {
            let query = KindQuery::new(kind);
            for (at, node) in nodes[..split].iter().enumerate() {
                prop_assert_eq!(table.is_kind(at, query), node.kind == kind);
            }
            prop_assert!(!table.is_kind(split, query));
            for at in 0..=nodes.len() {
                prop_assert_eq!(index.is_kind(at, query), index.kind(at) == Some(kind));
            }
        }
        for (at, node) in nodes.iter().enumerate() {
            prop_assert_eq!(index.kind(at), Some(node.kind.as_str()));
            prop_assert_eq!(
                index.is_message_with_id(at),
                node.kind == "message" && node.id.is_some()
            );
        }
    }

    #[test]
    fn an_index_over_the_stores_table_equals_one_built_from_its_envelopes(
        nodes in proptest::collection::vec(node(), 0..40),
        split in 0usize..41,
    ) {
        // The first `split` entries are in a file, the rest are appended by a host.
        let split = split.min(nodes.len());
        let file = file_of(&nodes[..split]);
        let mut index = TreeIndex::from_table(file.table().clone());
        prop_assert_eq!(&index, &TreeIndex::from_nodes(nodes[..split].iter().cloned()));
        prop_assert_eq!(&lookups(&index), &reference_lookups(&nodes[..split]));
        prop_assert_eq!(index.tips(), reference_tips(&nodes[..split]));
        for (count, node) in nodes.iter().enumerate().skip(split) {
            index.push(node.clone());
            prop_assert_eq!(&lookups(&index), &reference_lookups(&nodes[..=count]));
            prop_assert_eq!(index.tips(), reference_tips(&nodes[..=count]));
        }
        prop_assert_eq!(&index, &TreeIndex::from_nodes(nodes.iter().cloned()));
        prop_assert_eq!(index.tips(), reference_tips(&nodes));
        prop_assert_eq!(index.tips(), TreeIndex::from_nodes(nodes.iter().cloned()).tips());
        prop_assert_eq!(index.roots(), TreeIndex::from_nodes(nodes).roots());
    }

    #[test]
    fn branches_are_paths_from_the_leaf_to_a_root(specs in proptest::collection::vec(spec(), 1..40)) {
        let entries = build(&specs);
        let index = TreeIndex::from_entries(&entries);
        for start in 0..entries.len() {
            let branch = index.branch(start);
            let positions = &branch.positions;
            prop_assert_eq!(positions.last(), Some(&start));
            let unique: HashSet<_> = positions.iter().collect();
            prop_assert_eq!(unique.len(), positions.len());
            for pair in positions.windows(2) {
                let child = index.node(pair[1]).unwrap();
                let parent = child.parent_id.unwrap();
                prop_assert_eq!(index.position_of(parent), Some(pair[0]));
            }
            let first = index.node(positions[0]).unwrap();
            match first.parent_id {
                None | Some("") => prop_assert!(branch.diagnostics.is_empty()),
                Some(parent) => match index.position_of(parent) {
                    None => prop_assert_eq!(branch.diagnostics[0].kind, DiagnosticKind::MissingParent),
                    Some(pos) => {
                        prop_assert!(positions.contains(&pos));
                        prop_assert_eq!(branch.diagnostics[0].kind, DiagnosticKind::Cycle);
                    }
                },
            }
        }
    }

    #[test]
    fn compacted_partitions_the_branch(specs in proptest::collection::vec(spec(), 1..40)) {
        let entries = build(&specs);
        let index = TreeIndex::from_entries(&entries);
        for start in 0..entries.len() {
            let path: Vec<Value> = index.branch(start).positions.iter().map(|&p| entries[p].clone()).collect();
            let split = compacted(&path);
            match split.compaction {
                None => {
                    prop_assert!(path.iter().all(|e| e["type"] != "compaction"));
                    prop_assert_eq!(split.kept.clone(), 0..0);
                    prop_assert_eq!(split.later.clone(), 0..path.len());
                }
                Some(c) => {
                    prop_assert_eq!(path[c]["type"].as_str(), Some("compaction"));
                    prop_assert!(path[c + 1..].iter().all(|e| e["type"] != "compaction"));
                    prop_assert_eq!(split.later.clone(), c + 1..path.len());
                    prop_assert!(split.kept.end == c || split.kept.is_empty());
                    let first_kept = &path[c]["firstKeptEntryId"];
                    if split.kept.is_empty() {
                        prop_assert!(path[..c].iter().all(|e| &e["id"] != first_kept));
                    } else {
                        prop_assert_eq!(&path[split.kept.start]["id"], first_kept);
                        prop_assert!(path[..split.kept.start].iter().all(|e| &e["id"] != first_kept));
                    }
                    let mut covered: Vec<usize> = split.away().chain(split.kept.clone()).chain(split.later.clone()).collect();
                    covered.sort_unstable();
                    prop_assert_eq!(covered, (0..path.len()).collect::<Vec<_>>());
                }
            }
            for dialect in [Dialect::PI, Dialect::OMP] {
                let (context, _) = agent_context(&path, dialect, &ContextOptions::default());
                prop_assert!(context.messages().len() <= path.len() + 1);
            }
        }
    }
}
