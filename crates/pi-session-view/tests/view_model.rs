//! The view model of every recorded fixture, one insta snapshot per fixture (named after it):
//! tips, leaf, labels, totals, per-branch positions and "what the model saw" references. The
//! entries themselves are the file's, so the snapshot keeps their count only.

#![allow(clippy::unwrap_used)] // a test helper: a fixture that cannot be read fails the test

use std::path::Path;

use pi_session::tree::{BlobFolder, BlobSource, LeafSelector};
use pi_session_view::{ViewOptions, default_branch_budget, export_html, view_model};
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

/// The data block of an exported page, parsed.
fn page_data(page: &[u8]) -> Value {
    let page = std::str::from_utf8(page).unwrap();
    let start = page
        .find(r#"<script type="application/json" id="data">"#)
        .unwrap();
    let data = &page[start..];
    let data = &data[data.find('>').unwrap() + 1..data.find("</script>").unwrap()];
    assert!(!data.contains(['<', '>', '&', '\u{2028}', '\u{2029}']));
    // As `JSON.parse` reads it: lone surrogate escapes kept (carried as U+10F800+k).
    pi_session_test_support::parse_js_json(data).unwrap()
}

/// The page writes most entries as their lines are in the file (not parsed and written again):
/// its data must still be the model, entry for entry, on every fixture (damaged, repaired,
/// migrated and hostile ones included, with and without omp's blobs) and corpus session.
#[test]
fn the_page_data_is_the_view_model() {
    let fixtures = pi_session_test_support::jsonl_files(&pi_session_test_support::fixtures_dir());
    // The corpus's real sessions up to 1 MiB (a debug build is slow on the larger ones), with
    // their blobs only.
    let corpus = pi_session_test_support::corpus_dir("real")
        .map(|dir| pi_session_test_support::jsonl_files(&dir))
        .unwrap_or_default()
        .into_iter()
        .filter(|path| std::fs::metadata(path).is_ok_and(|m| m.len() <= 1 << 20));
    let fixture_count = fixtures.len();
    let mut checked = 0;
    for (n, path) in fixtures.into_iter().chain(corpus).enumerate() {
        let Ok((file, _)) = pi_session::store::open(&path) else {
            continue;
        };
        let folder = BlobFolder::new(path.parent().unwrap().join("blobs"));
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let with_blobs = Some(&folder as &dyn BlobSource);
        let variants = if n < fixture_count {
            vec![None, with_blobs]
        } else {
            vec![with_blobs]
        };
        for blobs in variants {
            let options = ViewOptions {
                leaf: &LeafSelector::Default,
                blobs,
                file_name: &name,
                branch_budget: default_branch_budget(file.len()),
                parent_href: None,
            };
            let model = view_model(&file, &options).unwrap();
            let page = export_html(&file, &options).unwrap();
            assert!(page_data(&page) == model, "{}", path.display());
        }
        checked += 1;
    }
    assert!(checked > 100, "only {checked} sessions checked");
}
