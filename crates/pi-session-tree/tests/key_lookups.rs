//! String-key lookups of session fields outside the schema crate, counted per file.
//!
//! **The rule.** Fields of the session's schema — an entry's, a message's, a content block's,
//! pi-ai's `usage` record's — are read through `pi_session_types::view` (`EntryRef`,
//! `MessageRef`, `BlockRef`, `UsageRef`, `CostRef`), so a key's spelling lives in one table,
//! and written or removed through the constants of `view::key`.
//!
//! *Counted*, in the library source of every crate outside `pi-session-types` that reads
//! sessions (tree, context, facade, CLI, view, parquet, store; code before a file's
//! `#[cfg(test)]`, comments left out): a read of a key spelled as a string literal —
//! `.get("key")`, `.get_mut("key")`, `shift_remove("key")`, `value["key"]`,
//! `js::get(value, "key")`, context's `str_field(value, "key")`.
//!
//! *Not counted*: JSON being built (`value["key"] = …`, `insert("key", …)`, `json!` literals:
//! an output's or a provider request's keys are spelled where it is built), and keys named
//! through `view::key` or a record's own constants (one spelling, shared by its writer and
//! reader). `pi-session-foreign` is not scanned: it reads Claude Code's and Codex's own
//! schemas, not ours.
//!
//! *Left, with a comment at each site* (the ceilings below, which may only go down): reads of
//! records that are not the session's schema — an HTTP request's query, a count by entry type,
//! the built context's own list, context's `ContentPart` metadata, an item of omp's provider
//! payload while its blobs are resolved. Records a host, provider or extension keeps *inside*
//! an entry are read through views of their own (`PreserveDataRef` and the snapcompact, OpenAI
//! and Anthropic compaction records under it, `CompactionDetailsRef`, `TaskDetailsRef`,
//! `ProviderPayloadRef`, `TextSignatureRef`, `CustomToolArgumentsRef`), the model registry's `thinking` record through context's typed `Thinking`, and omp's title
//! record through the store's `TitleMeta` (serde names shared by its writer and reader).
//! A file not in the table may read none.
//!
//! *Provider wire JSON, counted apart*: a function that transforms a provider request already
//! built (Anthropic params, Chat Completions messages, Responses items, Gemini contents: pi-ai's
//! own post-processing, which omp and pi also run on the wire JSON, not on the session's
//! messages) says so once, with a line comment starting `// Provider wire JSON` in its body;
//! the lookups from that comment to the end of the item (the next line that is `}`) are counted
//! under the file's second ceiling, "provider wire JSON, not the session schema", which may also
//! only go down.

use std::path::Path;

use pi_session_test_support::workspace_root;

/// Whether `text` starts with a JSON key in quotes (`"camelCase"`).
fn starts_with_key(text: &str) -> bool {
    text.strip_prefix('"')
        .and_then(|rest| rest.split('"').next())
        .is_some_and(|key| !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Whether the index at the start of `rest` (`"key"] …`) is assigned to: JSON being built.
fn is_assignment(rest: &str) -> bool {
    rest.split_once(']').is_some_and(|(_, after)| {
        let after = after.trim_start();
        after.starts_with('=') && !after.starts_with("==")
    })
}

/// The string-key lookups on one line of code (comments left out).
fn lookups(line: &str) -> usize {
    let code = line.trim_start();
    if code.starts_with("//") {
        return 0;
    }
    const OPENINGS: [&str; 6] = [
        ".get(",
        ".get_mut(",
        "shift_remove(",
        "[",
        "js::get(",
        "str_field(",
    ];
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
                    if *opening == "[" && (!indexes || is_assignment(rest)) {
                        // An array literal, not an index; or JSON being built.
                        return false;
                    }
                    if matches!(*opening, "js::get(" | "str_field(") {
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

/// The crates whose library source is scanned.
const CRATES: [&str; 7] = [
    "pi-session-store",
    "pi-session-tree",
    "pi-session-context",
    "pi-session",
    "pi-session-view",
    "pi-session-parquet",
    "pi-session-cli",
];

/// (file, most lookups left, what they read). Every other file may read none.
const CEILINGS: &[(&str, usize, &str)] = &[
    (
        "crates/pi-session-tree/src/dialect/omp/blobs.rs",
        2,
        "a provider-payload item's type and result",
    ),
    (
        "crates/pi-session/src/stats.rs",
        1,
        "context's ContentPart metadata",
    ),
    (
        "crates/pi-session-cli/src/commands/serve.rs",
        4,
        "HTTP query parameters (3), the listing row built (1)",
    ),
    (
        "crates/pi-session-cli/src/commands/stats.rs",
        1,
        "a count by entry type",
    ),
    (
        "crates/pi-session-view/src/model.rs",
        1,
        "the built context's own messages list",
    ),
];

/// (file, most lookups left in provider wire JSON). Every other file may read none there.
const WIRE_CEILINGS: &[(&str, usize)] = &[
    ("crates/pi-session-context/src/providers.rs", 3),
    (
        "crates/pi-session-context/src/provider_request/anthropic.rs",
        2,
    ),
    (
        "crates/pi-session-context/src/provider_request/anthropic_omp.rs",
        10,
    ),
    (
        "crates/pi-session-context/src/provider_request/google.rs",
        6,
    ),
    (
        "crates/pi-session-context/src/provider_request/openai_chat.rs",
        5,
    ),
    (
        "crates/pi-session-context/src/provider_request/openai_responses_omp.rs",
        23,
    ),
];

/// The comment that opens a function's provider-wire-JSON scope.
const WIRE_MARKER: &str = "// Provider wire JSON";

/// The lookups in one source text, before its `#[cfg(test)]`: (session schema, provider wire
/// JSON inside a `WIRE_MARKER` scope).
fn count_text(text: &str) -> (usize, usize) {
    let (mut schema, mut wire) = (0, 0);
    let mut in_wire = false;
    for line in text
        .lines()
        .take_while(|line| !line.starts_with("#[cfg(test)]"))
    {
        if line.trim_start().starts_with(WIRE_MARKER) {
            in_wire = true;
        }
        let count = lookups(line);
        if in_wire {
            wire += count;
        } else {
            schema += count;
        }
        if line == "}" {
            in_wire = false;
        }
    }
    (schema, wire)
}

/// The lookups in one source file (see [`count_text`]).
fn count_in(path: &Path) -> (usize, usize) {
    count_text(&std::fs::read_to_string(path).unwrap())
}

/// Every `.rs` file under `dir`, as paths relative to the workspace root.
fn sources(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn session_fields_are_read_through_the_views() {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in CRATES {
        sources(
            &root,
            &root.join("crates").join(krate).join("src"),
            &mut files,
        );
    }
    files.sort();
    assert!(files.len() > 100, "too few sources found: {}", files.len());
    let mut over = Vec::new();
    let (mut total, mut total_wire) = (0, 0);
    for file in &files {
        let (count, wire) = count_in(&root.join(file));
        total += count;
        total_wire += wire;
        let ceiling = CEILINGS
            .iter()
            .find(|(name, _, _)| name == file)
            .map_or(0, |&(_, ceiling, _)| ceiling);
        let wire_ceiling = WIRE_CEILINGS
            .iter()
            .find(|(name, _)| name == file)
            .map_or(0, |&(_, ceiling)| ceiling);
        if count > 0 || ceiling > 0 {
            println!("{file}: {count} string-key lookups (at most {ceiling})");
        }
        if wire > 0 || wire_ceiling > 0 {
            println!("{file}: {wire} in provider wire JSON (at most {wire_ceiling})");
        }
        if count > ceiling {
            over.push(format!("{file}: {count} > {ceiling}"));
        }
        if wire > wire_ceiling {
            over.push(format!(
                "{file}: {wire} > {wire_ceiling} (provider wire JSON)"
            ));
        }
    }
    println!("{total} in all, and {total_wire} in provider wire JSON");
    assert!(
        over.is_empty(),
        "read these fields through pi_session_types::view (or, for a record that is not \\
         the session's schema, comment the site and raise its ceiling here): {over:?}"
    );
}

#[test]
fn wire_json_is_counted_apart_to_the_end_of_its_function() {
    let text = "fn a(v: &Value) {\n    v.get(\"role\");\n}\nfn b(v: &Value) {\n    // Provider wire JSON, not the session schema: test.\n    v.get(\"role\");\n    if x {\n        v[\"content\"];\n    }\n}\nfn c(v: &Value) {\n    v.get(\"id\");\n}\n";
    assert_eq!(count_text(text), (2, 2));
}

#[test]
fn the_lookup_count_sees_lookups() {
    assert_eq!(lookups(r#"let id = entry.get("id");"#), 1);
    assert_eq!(lookups(r#"x["content"] == y["role"]"#), 2);
    assert_eq!(lookups(r#"js::get(message, "usage")"#), 1);
    assert_eq!(lookups(r#"str_field(message, "api") == Some(api)"#), 1);
    assert_eq!(lookups(r#"// entry.get("id")"#), 0);
    assert_eq!(lookups(r#"row["title"] = json!(title);"#), 0);
    assert_eq!(lookups(r#"row["title"] == json!(title)"#), 1);
    assert_eq!(lookups(r#"EntryRef::new(e).is("message")"#), 0);
    assert_eq!(
        lookups(r#"const KINDS: [&str; 2] = ["usage", "context_edit"];"#),
        0
    );
}
