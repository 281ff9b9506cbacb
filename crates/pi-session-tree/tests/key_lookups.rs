//! String-key lookups (`.get("key")`, `["key"]`, `js::get(v, "key")`) in the rule modules of
//! this crate: fields are read through `pi_session_types::view` (`EntryRef`, `MessageRef`,
//! `BlockRef`), so a key's spelling lives in one table. What is left is counted per file and
//! may only go down; each kind left carries a comment in the code saying why.

use pi_session_test_support::workspace_root;

/// Whether `text` starts with a JSON key in quotes (`"camelCase"`).
fn starts_with_key(text: &str) -> bool {
    text.strip_prefix('"')
        .and_then(|rest| rest.split('"').next())
        .is_some_and(|key| !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// The string-key lookups on one line of code (comments left out).
fn lookups(line: &str) -> usize {
    let code = line.trim_start();
    if code.starts_with("//") {
        return 0;
    }
    const OPENINGS: [&str; 5] = [".get(", ".get_mut(", "shift_remove(", "[", "js::get("];
    OPENINGS
        .iter()
        .map(|opening| {
            code.match_indices(opening)
                .filter(|&(at, _)| {
                    let rest = &code[at + opening.len()..];
                    let indexes = code[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || matches!(c, ')' | ']' | '_'));
                    if *opening == "[" && !indexes {
                        // An array literal, not an index.
                        return false;
                    }
                    if *opening == "js::get(" {
                        // `js::get(value, "key")`: the key is the second argument.
                        rest.split_once(", ")
                            .is_some_and(|(_, key)| starts_with_key(key))
                    } else {
                        starts_with_key(rest)
                    }
                })
                .count()
        })
        .sum()
}

fn count_in(relative: &str) -> usize {
    let text = std::fs::read_to_string(workspace_root().join(relative)).unwrap();
    text.lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
        .map(lookups)
        .sum()
}

#[test]
fn rule_modules_read_fields_through_the_views() {
    // (file, most lookups left): pi's rules read none; branch_facts only the task tool's
    // `details` record (pi-ai's `Usage` is read through `UsageRef`); omp's rules only records
    // that are not our schema: the providers' compaction records in `preserveData` (7) and the
    // compaction extension's `details` (2). Each carries a comment saying so.
    const CEILINGS: [(&str, usize); 3] = [
        ("crates/pi-session-tree/src/dialect/pi/context.rs", 0),
        ("crates/pi-session-tree/src/branch_facts.rs", 1),
        ("crates/pi-session-tree/src/dialect/omp/context.rs", 9),
    ];
    let mut over = Vec::new();
    for (file, ceiling) in CEILINGS {
        let count = count_in(file);
        println!("{file}: {count} string-key lookups (at most {ceiling})");
        if count > ceiling {
            over.push(format!("{file}: {count} > {ceiling}"));
        }
    }
    assert!(
        over.is_empty(),
        "read these fields through the views: {over:?}"
    );
}

#[test]
fn the_lookup_count_sees_lookups() {
    assert_eq!(lookups(r#"let id = entry.get("id");"#), 1);
    assert_eq!(lookups(r#"x["content"] == y["role"]"#), 2);
    assert_eq!(lookups(r#"js::get(message, "usage")"#), 1);
    assert_eq!(lookups(r#"// entry.get("id")"#), 0);
    assert_eq!(lookups(r#"EntryRef::new(e).is("message")"#), 0);
    assert_eq!(
        lookups(r#"const KINDS: [&str; 2] = ["usage", "context_edit"];"#),
        0
    );
}
