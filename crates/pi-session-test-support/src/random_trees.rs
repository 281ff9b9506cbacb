//! Random session trees for property tests: branches, compactions at random points with
//! `firstKeptEntryId` on and off the branch, cycles, self-parents, missing parents and
//! duplicate ids. The tree crate's properties and the CLI's drawing tests use them.

use proptest::prelude::*;
use serde_json::{Value, json};

/// Where an entry's `parentId` points.
#[derive(Debug, Clone)]
pub enum Parent {
    /// No parent (`null`).
    Root,
    /// Entry `n` (modulo the tree's size).
    Entry(usize),
    /// An id no entry has.
    Missing,
    /// The entry's own id.
    Itself,
}

/// How one entry of a random tree is made.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Its parent.
    pub parent: Parent,
    /// `Some(first kept)`: a compaction keeping from entry `first kept` (modulo the size;
    /// `None`: an id off the tree); `None`: a message.
    pub compaction: Option<Option<usize>>,
    /// Takes the id of entry `n` (modulo the size) instead of its own.
    pub duplicate_of: Option<usize>,
}

/// One entry's [`Spec`]: mostly messages under earlier or later entries, now and then a root,
/// a missing or self parent, a compaction or a duplicate id.
pub fn spec() -> impl Strategy<Value = Spec> {
    let parent = prop_oneof![
        1 => Just(Parent::Root),
        8 => (0usize..40).prop_map(Parent::Entry),
        1 => Just(Parent::Missing),
        1 => Just(Parent::Itself),
    ];
    let compaction =
        prop_oneof![4 => Just(None), 1 => proptest::option::of(0usize..40).prop_map(Some)];
    let duplicate = prop_oneof![9 => Just(None), 1 => (0usize..40).prop_map(Some)];
    (parent, compaction, duplicate).prop_map(|(parent, compaction, duplicate_of)| Spec {
        parent,
        compaction,
        duplicate_of,
    })
}

/// The entries `specs` describe, in file order (ids `e0`, `e1`, …).
pub fn build(specs: &[Spec]) -> Vec<Value> {
    let n = specs.len();
    let id = |i: usize| match specs[i].duplicate_of {
        Some(j) if j % n != i => format!("e{}", j % n),
        _ => format!("e{i}"),
    };
    specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let parent = match spec.parent {
                Parent::Root => Value::Null,
                Parent::Entry(j) => Value::from(id(j % n)),
                Parent::Missing => Value::from(format!("missing{i}")),
                Parent::Itself => Value::from(id(i)),
            };
            let mut entry = json!({"id": id(i), "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z"});
            match spec.compaction {
                Some(first_kept) => {
                    entry["type"] = json!("compaction");
                    entry["summary"] = json!(format!("s{i}"));
                    entry["tokensBefore"] = json!(i);
                    entry["firstKeptEntryId"] = match first_kept {
                        Some(j) => json!(id(j % n)),
                        None => json!("off-the-tree"),
                    };
                }
                None => {
                    entry["type"] = json!("message");
                    entry["message"] = json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                        "content": [{"type":"text","text": format!("m{i}")}], "stopReason": "stop", "timestamp": i});
                }
            }
            entry
        })
        .collect()
}
