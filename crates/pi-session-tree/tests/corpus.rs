//! Every real recorded session (`../shared/corpus/real`, skipped with a notice
//! when absent) goes through the store, the tree and `agent_context` in its
//! detected dialect without error; a compact summary per file is pinned with
//! insta (dialect, branch, diagnostics, message count, role sequence).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use pi_session_tree::{BlobFolder, ContextOptions, LeafSelector, SessionView, compacted, totals};
use serde_json::Value;

fn run_length(roles: &[String]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < roles.len() {
        let mut j = i;
        while j < roles.len() && roles[j] == roles[i] {
            j += 1;
        }
        out.push(if j - i > 1 {
            format!("{}×{}", roles[i], j - i)
        } else {
            roles[i].clone()
        });
        i = j;
    }
    out.join(" ")
}

fn summarise(path: &Path) -> String {
    let (session, _store_diagnostics) = pi_session_store::open(path).unwrap();
    let view = SessionView::new(&session);
    let dialect = view.detect_dialect().unwrap();
    let blobs = BlobFolder::new(path.with_file_name("blobs"));
    let options = ContextOptions {
        blobs: Some(&blobs),
    };
    let resolved = view
        .context(&LeafSelector::Default, dialect, &options)
        .unwrap();
    let (_, branch) = view.branch_entries(&LeafSelector::Default).unwrap();
    let roles: Vec<String> = resolved
        .context
        .messages()
        .iter()
        .map(|m| {
            m.get("role")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned()
        })
        .collect();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for diagnostic in view
        .index()
        .diagnostics()
        .iter()
        .chain(&resolved.diagnostics)
    {
        *kinds.entry(format!("{:?}", diagnostic.kind)).or_default() += 1;
    }
    let split = compacted(&branch);
    let t = totals(&branch);
    let mut out = String::new();
    writeln!(out, "dialect: {}", dialect.as_str()).unwrap();
    writeln!(out, "entries: {}", view.index().len()).unwrap();
    writeln!(out, "leaf: {:?}", view.index().leaf_id()).unwrap();
    writeln!(
        out,
        "branch: {} entries, {} tips",
        resolved.branch.positions.len(),
        view.index().tips().len()
    )
    .unwrap();
    writeln!(
        out,
        "compaction: {:?} kept {} later {}",
        split.compaction,
        split.kept.len(),
        split.later.len()
    )
    .unwrap();
    writeln!(
        out,
        "totals: tokens {} output {} cost {:.6}",
        t.tokens, t.output, t.cost
    )
    .unwrap();
    writeln!(out, "diagnostics: {kinds:?}").unwrap();
    writeln!(out, "messages: {}", roles.len()).unwrap();
    writeln!(out, "roles: {}", run_length(&roles)).unwrap();
    out
}

#[test]
fn every_corpus_file_builds_a_context() {
    let Some(dir) = pi_session_test_support::corpus_dir("real") else {
        return;
    };
    let files = pi_session_test_support::files_ending_with(&dir, ".jsonl");
    assert!(!files.is_empty());
    for path in &files {
        let stem = path
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace(['.', ' '], "_");
        insta::assert_snapshot!(stem, summarise(path));
    }
    println!("corpus: {} files", files.len());
}
