//! omp keeping its sessions in Redis (`fixtures/redis/omp/`, recorded by `cargo xtask record`
//! with omp 18.2.3's own `RedisSessionStorage`, see `xtask/src/record/redis.rs`): the dumped
//! keyspace (every key, type and byte omp wrote) is loaded into a `MemoryStore` with omp's
//! layout (`MemoryStore::from_omp_keyspace`), and what we read through the store seam is
//! compared with what omp answered on the same keys. No Redis and no node at test time.
//!
//! Per recorded session: `context` (the whole `buildSessionContext()`: messages, thinking
//! level, models, mode, ...), `leaf`, `title` (the title hash overlaid on the slot, as omp
//! reads it), `entries`, `dialect` (detected as omp), `opens` (no diagnostic). Per folder:
//! `listing` (our `summaries_in` against omp's `SessionManager.list`: path, title, id and
//! message count, in omp's order).

use std::path::Path;

use pi_session::summaries_in;
use pi_session_store::{MemoryStore, RedisValue, Store};
use pi_session_tree::{ContextOptions, Dialect, LeafSelector, SessionView};
use serde_json::{Value, json};

use super::compare::{IdMap, diff, parse_recording};
use super::report::{Outcome, Report, Row};

/// Checks `fixtures/redis/omp/`.
pub fn check(report: &mut Report, fixtures: &Path, only: Option<&str>) -> Result<(), String> {
    let dir = fixtures.join("redis").join("omp");
    let read = |name: &str| -> Result<Value, String> {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "cannot read {}: {e}; run `cargo xtask record`",
                path.display()
            )
        })?;
        parse_recording(&text).map_err(|e| format!("{}: {e}", path.display()))
    };
    let (keyspace, expected) = (read("keyspace.json")?, read("expected.json")?);
    let store = Store::keyed(load_keyspace(&keyspace)?);
    for session in expected["sessions"].as_array().into_iter().flatten() {
        let name = session["name"].as_str().unwrap_or("?");
        if only.is_some_and(|only| !name.contains(only) && !"redis".contains(only)) {
            continue;
        }
        let mut row = Row::new("redis/omp", name);
        check_session(report, &mut row, &store, session);
        report.push_row(row);
    }
    for listing in expected["listings"].as_array().into_iter().flatten() {
        let dir = listing["dir"].as_str().unwrap_or_default();
        let name = format!("ls {}", dir.rsplit('/').next().unwrap_or(dir));
        if only.is_some_and(|only| !name.contains(only) && !"redis".contains(only)) {
            continue;
        }
        let mut row = Row::new("redis/omp", name);
        let outcome = match summaries_in(&store, Some(Path::new(dir))) {
            Err(error) => Outcome::Fail(format!("      {error}\n")),
            Ok((_, problems)) if !problems.is_empty() => Outcome::Fail(
                problems
                    .iter()
                    .map(|p| format!("      {}: {}\n", p.path.display(), p.diagnostic))
                    .collect(),
            ),
            Ok((summaries, _)) => {
                let ours: Vec<Value> = summaries
                    .iter()
                    .map(|s| {
                        json!({
                            "path": s.listing.path,
                            "title": s.listing.title,
                            "id": s.listing.id,
                            "messageCount": s.message_count,
                        })
                    })
                    .collect();
                outcome(&listing["sessions"], &Value::Array(ours))
            }
        };
        report.record(&mut row, "listing", "", outcome);
        report.push_row(row);
    }
    Ok(())
}

/// The recorded keyspace (`{prefix, keys: [[key, {string} | {hash}]]}`) as a `MemoryStore`.
fn load_keyspace(keyspace: &Value) -> Result<MemoryStore, String> {
    let prefix = keyspace["prefix"]
        .as_str()
        .ok_or("keyspace.json has no prefix")?;
    let mut keys = Vec::new();
    for pair in keyspace["keys"].as_array().into_iter().flatten() {
        let (Some(key), value) = (pair[0].as_str(), &pair[1]) else {
            return Err(format!("keyspace.json: a key is not [name, value]: {pair}"));
        };
        let value = match (value.get("string"), value.get("hash")) {
            (Some(Value::String(text)), _) => RedisValue::String(text.clone().into_bytes()),
            (_, Some(Value::Object(fields))) => RedisValue::Hash(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                    .collect(),
            ),
            _ => {
                return Err(format!(
                    "keyspace.json: {key} is neither a string nor a hash"
                ));
            }
        };
        keys.push((key.to_owned(), value));
    }
    Ok(MemoryStore::from_omp_keyspace(prefix, keys))
}

fn check_session(report: &mut Report, row: &mut Row, store: &Store, recorded: &Value) {
    let path = Path::new(recorded["path"].as_str().unwrap_or_default());
    let (file, diagnostics) = match store.open(path) {
        Ok(opened) => opened,
        Err(error) => {
            report.record(row, "opens", "", Outcome::Fail(format!("      {error}\n")));
            return;
        }
    };
    let opens = if diagnostics.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(diagnostics.iter().map(|d| format!("      {d}\n")).collect())
    };
    report.record(row, "opens", "", opens);
    let view = SessionView::new(&file);
    let dialect = view.detect_dialect().unwrap_or(Dialect::PI);
    report.record(
        row,
        "dialect",
        "",
        outcome(&json!("omp"), &json!(dialect.as_str())),
    );
    let options = ContextOptions { blobs: None };
    let context = view.context(&LeafSelector::Default, Dialect::OMP, &options);
    let context = match context.map(|c| serde_json::to_value(c.context)) {
        Ok(Ok(value)) => outcome(&recorded["context"], &value),
        Ok(Err(error)) => Outcome::Fail(format!("      {error}\n")),
        Err(error) => Outcome::Fail(format!("      {error}\n")),
    };
    report.record(row, "context", "", context);
    let leaf = json!(file.leaf_id());
    report.record(row, "leaf", "", outcome(&recorded["leafId"], &leaf));
    let title = match view.name(Dialect::OMP) {
        Ok(title) => outcome(&recorded["title"], &json!(title)),
        Err(error) => Outcome::Fail(format!("      {error}\n")),
    };
    report.record(row, "title", "", title);
    report.record(
        row,
        "entries",
        "",
        outcome(&recorded["entries"], &json!(file.len())),
    );
}

/// Pass when `actual` (ours) equals `expected` (recorded) exactly, else the differences.
pub(super) fn outcome(expected: &Value, actual: &Value) -> Outcome {
    let found = diff(expected, actual, &mut IdMap::exact());
    if found.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(found.render())
    }
}
