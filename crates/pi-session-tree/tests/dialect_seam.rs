//! The dialect seam holds: outside the `dialect/` folders, no code branches on which
//! [`Dialect`](pi_session_tree::Dialect) it has (`match` arms, `matches!`, `==`/`!=`, variant
//! patterns, family tests); what differs per dialect is asked of a stage's trait
//! (`BuildContext`, `SessionRules` in this crate, `ConvertToLlm` in the context crate,
//! `WriteEntries` in the facade). It reads the `src/` of every crate (tree, context, facade,
//! CLI, view, …) and xtask.

use std::path::{Path, PathBuf};

use pi_session_test_support::{files_ending_with, workspace_root};

/// The Rust sources of every crate's `src/` and of xtask, outside `dialect/` folders.
fn sources_outside_dialect() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut roots: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .collect();
    roots.push(root.join("xtask").join("src"));
    roots
        .iter()
        .filter(|dir| dir.is_dir())
        .flat_map(|dir| rust_files(dir))
        .filter(|path| !path.components().any(|c| c.as_os_str() == "dialect"))
        .collect()
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = files_ending_with(dir, ".rs");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        }
    }
    out
}

/// The code of a line (comments, doc comments and doc examples left out).
fn code(line: &str) -> &str {
    let line = line.trim_start();
    if line.starts_with("//") {
        return "";
    }
    line.split(" //").next().unwrap_or(line)
}

/// Whether a line of code branches on a `Dialect` value.
fn branches_on_dialect(code: &str) -> bool {
    const VARIANT_PATTERNS: [&str; 2] = ["Dialect::Pi(", "Dialect::Omp("];
    const NAMED: [&str; 3] = ["Dialect::PI", "Dialect::PI16", "Dialect::OMP"];
    let compared = NAMED.iter().any(|name| {
        code.contains(&format!("== {name}"))
            || code.contains(&format!("!= {name}"))
            || code.contains(&format!("{name} =>"))
            || code.contains(&format!("{name} |"))
    });
    compared
        || VARIANT_PATTERNS.iter().any(|p| code.contains(p))
        || (code.contains("matches!(") && code.contains("Dialect::"))
}

/// Lines that branch on the dialect outside `dialect/` (`path:line: code`).
fn dialect_branches() -> Vec<String> {
    let root = workspace_root();
    let mut found = Vec::new();
    for path in sources_outside_dialect() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (at, line) in text.lines().enumerate() {
            if branches_on_dialect(code(line)) {
                let shown = path
                    .strip_prefix(&root)
                    .unwrap_or(&path)
                    .display()
                    .to_string();
                found.push(format!("{shown}:{}: {}", at + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn no_code_outside_dialect_folders_branches_on_the_dialect() {
    let found = dialect_branches();
    assert!(
        found.is_empty(),
        "these lines choose by dialect outside `dialect/`; ask the stage's trait instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_count_sees_what_it_looks_for() {
    assert!(branches_on_dialect(
        "match d { Dialect::Pi(_) => 1, _ => 2 }"
    ));
    assert!(branches_on_dialect("if dialect == Dialect::OMP {"));
    assert!(branches_on_dialect(
        "Dialect::PI | Dialect::PI16 => \"fromHook\","
    ));
    assert!(branches_on_dialect("matches!(dialect, Dialect::Omp(_))"));
    assert!(!branches_on_dialect(
        "agent_context(&path, Dialect::PI, &options)"
    ));
    assert_eq!(code("/// if dialect == Dialect::OMP {"), "");
    assert!(!sources_outside_dialect().is_empty());
}

/// Family tests (`is_pi_family()`, `is_omp()`) are a choice by dialect too: outside `dialect/`
/// there are none (the facade's writers ask its `dialect::WriteEntries`, session naming asks
/// `SessionRules::has_title_slot`, detection `DialectEvidence::is_final`).
#[test]
fn no_code_outside_dialect_folders_tests_the_family() {
    let root = workspace_root();
    let found: Vec<String> = sources_outside_dialect()
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let shown = path
                .strip_prefix(&root)
                .unwrap_or(path)
                .display()
                .to_string();
            text.lines()
                .enumerate()
                .filter(|(_, line)| {
                    let code = code(line);
                    code.contains(".is_pi_family()") || code.contains(".is_omp()")
                })
                .map(|(at, line)| format!("{shown}:{}: {}", at + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        found.is_empty(),
        "these lines test the dialect's family outside `dialect/`; ask the stage's trait instead:\n{}",
        found.join("\n")
    );
}
