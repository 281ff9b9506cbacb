//! `export`: the page is written, holds the session as escaped data, and bad input fails clearly.
//! (The page itself is tested in a real browser by `cargo xtask browser`.)

use crate::common::{root, run};

/// The JSON data element of a page, parsed.
fn page_data(page: &str) -> serde_json::Value {
    let start = page
        .find(r#"<script type="application/json" id="data">"#)
        .unwrap();
    let rest = &page[start..];
    let open = rest.find('>').unwrap() + 1;
    let close = rest.find("</script>").unwrap();
    serde_json::from_str(&rest[open..close]).unwrap()
}

#[test]
fn export_writes_one_page_with_every_entry_and_branch() {
    let out = run(&["export", "fixtures/omp/branch-summaries.jsonl", "-o", "-"]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.starts_with("<!doctype html>"));
    assert!(out.stdout.contains("default-src 'none'"));
    let data = page_data(&out.stdout);
    let lines =
        std::fs::read_to_string(root().join("fixtures/omp/branch-summaries.jsonl")).unwrap();
    let entries = lines
        .lines()
        .filter(|l| !l.contains(r#""type":"session""#) && !l.contains(r#""type":"title""#))
        .count();
    assert_eq!(data["entries"].as_array().unwrap().len(), entries);
    assert_eq!(data["tips"].as_array().unwrap().len(), 3);
    assert_eq!(data["branches"].as_object().unwrap().len(), 3);
}

#[test]
fn hostile_text_cannot_close_the_data_element() {
    let out = run(&["export", "fixtures/view/hostile.jsonl", "-o", "-"]);
    assert_eq!(out.code, 0, "{out}");
    // Our two script elements end; nothing from the session does.
    assert_eq!(out.stdout.matches("</script>").count(), 2);
    assert!(!out.stdout.contains("<script>window"));
    let data = page_data(&out.stdout);
    let text = data["entries"][1]["message"]["content"].as_str().unwrap();
    assert!(text.starts_with("Please explain </script><script>window.__pwned=1</script>"));
}

#[test]
fn export_writes_the_named_file_and_fails_clearly_on_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("page.html");
    let target_arg = target.to_string_lossy().into_owned();
    let out = run(&["export", "fixtures/omp/images.jsonl", "-o", &target_arg]);
    assert_eq!(out.code, 0, "{out}");
    assert!(out.stdout.starts_with("wrote "));
    let page = std::fs::read_to_string(&target).unwrap();
    // The omp blob pictures are resolved into the page.
    assert!(!page_data(&page).to_string().contains("blob:sha256:"));

    let missing = run(&["export", "fixtures/no-such-file.jsonl", "-o", "-"]);
    assert_eq!(missing.code, 2, "{missing}");
    assert!(missing.stderr.contains("no-such-file.jsonl"), "{missing}");
}

#[test]
fn a_parent_exported_beside_the_page_is_linked() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("parent.jsonl");
    std::fs::copy(
        root().join("fixtures/pi/branches-leaf-not-last.jsonl"),
        &source,
    )
    .unwrap();
    let fork = run(&[
        "fork",
        source.to_str().unwrap(),
        "--to",
        dir.path().to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(fork.code, 0, "{fork}");
    let child = serde_json::from_str::<serde_json::Value>(&fork.stdout).unwrap()["path"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = dir.path().join("child.html");
    let export = |args: &[&str]| {
        let out = run(args);
        assert_eq!(out.code, 0, "{out}");
    };
    // Without the parent's page beside it, the parent is text only.
    export(&["export", &child, "-o", page.to_str().unwrap()]);
    let data = page_data(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(data["session"]["parentSession"], source.to_str().unwrap());
    assert_eq!(data["session"]["parentHref"], serde_json::Value::Null);
    // Exported beside it under its default name, it is linked.
    let parent_page = dir.path().join("parent.html");
    export(&[
        "export",
        source.to_str().unwrap(),
        "-o",
        parent_page.to_str().unwrap(),
    ]);
    export(&["export", &child, "-o", page.to_str().unwrap()]);
    let data = page_data(&std::fs::read_to_string(&page).unwrap());
    assert_eq!(data["session"]["parentHref"], "parent.html");
}
