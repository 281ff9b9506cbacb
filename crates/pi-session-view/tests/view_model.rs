//! The view model of every recorded fixture, one insta snapshot per fixture (named after it):
//! tips, leaf, labels, totals, per-branch positions and "what the model saw" references. The
//! entries themselves are the file's, so the snapshot keeps their count only.

#![allow(clippy::unwrap_used)] // a test helper: a fixture that cannot be read fails the test

use std::path::Path;

use pi_session::tree::{BlobFolder, BlobSource, LeafSelector};
use pi_session_view::{ViewOptions, default_branch_budget, view_model};
use serde_json::{Value, json};

fn digest(path: &Path) -> Value {
    let file = match pi_session::store::open(path) {
        Ok((file, _)) => file,
        Err(error) => {
            let root = path.parent().unwrap().to_string_lossy().into_owned();
            return json!({ "notASession": error.to_string().replace(&root, "") });
        }
    };
    let blobs = BlobFolder::new(path.parent().unwrap().join("blobs"));
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let options = ViewOptions {
        leaf: &LeafSelector::Default,
        blobs: Some(&blobs as &dyn BlobSource),
        file_name: &name,
        branch_budget: default_branch_budget(file.len()),
        parent_href: None,
    };
    let mut model = view_model(&file, &options).unwrap();
    let entries = model["entries"].as_array().map_or(0, Vec::len);
    assert_eq!(entries, file.len(), "{name}: every entry is in the model");
    model["entries"] = json!(entries);
    model
}

/// One test per recording folder, so each snapshot is named `<folder>@<fixture>`.
macro_rules! fixtures {
    ($($test:ident: $folder:literal),*) => {$(
        #[test]
        fn $test() {
            insta::glob!("../../../fixtures", concat!($folder, "/*.jsonl"), |path| {
                insta::assert_json_snapshot!(digest(path));
            });
        }
    )*};
}

fixtures!(omp: "omp", pi: "pi", pi16: "pi16");
