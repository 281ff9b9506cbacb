//! `cargo xtask schema [--check]`: writes the JSON Schema of every line type (generated from
//! `pi-session-types` with its `schema` feature) to `schema/`, or with `--check` fails when the
//! committed files differ. The test below runs the check with every `cargo test --workspace`,
//! so CI fails when the types change and the schema is not regenerated.

use std::path::Path;

use crate::util::workspace_root;

/// Runs `cargo xtask schema`.
pub fn run(args: &[String]) -> Result<(), String> {
    let root = workspace_root();
    match args.first().map(String::as_str) {
        None => write(&root),
        Some("--check") => check(&root),
        Some(other) => Err(format!(
            "unknown option `{other}`\nusage: cargo xtask schema [--check]"
        )),
    }
}

/// The files as the types generate them: `(name, pretty JSON text)`.
fn generated() -> Result<Vec<(String, String)>, String> {
    pi_session_types::schema::schema_files()
        .into_iter()
        .map(|(name, schema)| {
            serde_json::to_string_pretty(&schema)
                .map(|text| (name, format!("{text}\n")))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn write(root: &Path) -> Result<(), String> {
    let dir = root.join("schema");
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    for (name, text) in generated()? {
        let path = dir.join(&name);
        std::fs::write(&path, text)
            .map_err(|e| format!("could not write {}: {e}", path.display()))?;
    }
    eprintln!("xtask: wrote {}", dir.display());
    Ok(())
}

fn check(root: &Path) -> Result<(), String> {
    let dir = root.join("schema");
    let mut stale = Vec::new();
    let files = generated()?;
    for (name, text) in &files {
        let committed = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        if &committed != text {
            stale.push(name.clone());
        }
    }
    let expected: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let extra: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".schema.json") && !expected.contains(&n.as_str()))
        .collect();
    if stale.is_empty() && extra.is_empty() {
        return Ok(());
    }
    Err(format!(
        "schema/ does not match the types (differs or missing: {stale:?}; not generated: {extra:?}); run `cargo xtask schema` and commit schema/"
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn committed_schema_matches_the_types() {
        if let Err(message) = super::check(&crate::util::workspace_root()) {
            panic!("{message}");
        }
    }

    /// Each known entry type's file pins its `type` literal, so a validator checks a line
    /// against the shape of its own type.
    #[test]
    fn every_entry_type_has_a_file_with_its_literal() {
        for (name, schema) in pi_session_types::schema::schema_files() {
            let Some(kind) = name
                .strip_prefix("entry.")
                .and_then(|n| n.strip_suffix(".schema.json"))
            else {
                continue;
            };
            assert_eq!(
                schema["properties"]["type"]["const"], kind,
                "{name} pins its type literal"
            );
        }
    }
}
