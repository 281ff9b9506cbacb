//! `pi-session export --parquet`: the tables read back with the `parquet` crate have the rows
//! and totals `usage --json` and the files themselves give.

use std::fs::File;
use std::path::Path;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::Value;

use crate::common::{fixture_files, json, run};
use crate::usage::numbers;

/// Every row of `<dir>/<table>.parquet`, as (column name, field) lists.
fn read_table(dir: &Path, table: &str) -> Vec<Vec<(String, Field)>> {
    let file = File::open(dir.join(format!("{table}.parquet"))).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let rows: Vec<Vec<(String, Field)>> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(name, field)| (name.clone(), field.clone()))
                .collect()
        })
        .collect();
    let declared = reader.metadata().file_metadata().num_rows();
    assert_eq!(rows.len() as i64, declared, "{table}: rows read vs. footer");
    rows
}

fn field<'a>(row: &'a [(String, Field)], name: &str) -> &'a Field {
    &row.iter().find(|(n, _)| n == name).unwrap().1
}

fn float(row: &[(String, Field)], name: &str) -> f64 {
    match field(row, name) {
        Field::Double(v) => *v,
        Field::Null => 0.0,
        other => panic!("{name}: {other:?}"),
    }
}

/// The seven numbers `usage --json` gives for a total, summed from rows in row order.
fn sums(rows: &[&Vec<(String, Field)>]) -> Vec<f64> {
    let mut out = vec![rows.len() as f64];
    for column in [
        "input",
        "output",
        "cache_read",
        "cache_write",
        "total_tokens",
        "cost",
    ] {
        out.push(rows.iter().fold(0.0, |sum, row| sum + float(row, column)));
    }
    out
}

#[test]
fn tables_round_trip_to_usage_totals() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("tables");
    let folders = [
        "fixtures/omp",
        "fixtures/pi",
        "fixtures/pi16",
        "fixtures/cli/usage",
    ];
    let mut args = vec!["export", "--parquet", dir.to_str().unwrap()];
    args.extend(folders);
    let export = run(&args);
    assert_eq!(export.code, 0, "{export}");
    let mut usage_args = vec!["usage", "--json"];
    usage_args.extend(folders);
    let usage = json(&run(&usage_args));

    let sessions = read_table(&dir, "sessions");
    assert_eq!(
        Value::from(sessions.len()),
        usage["files"],
        "one row per file read"
    );
    let entries = read_table(&dir, "entries");
    let counted: Vec<&Vec<(String, Field)>> = entries
        .iter()
        .filter(|row| !matches!(field(row, "usage_part"), Field::Null))
        .collect();
    // Token counts are whole numbers: equal to the bit. Costs are added in another grouping
    // (`usage` sums each part, then the parts), so they agree to rounding.
    let (ours, theirs) = (sums(&counted), numbers(&usage["total"]));
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "column {i}: {ours:?} vs {theirs:?}"
        );
    }
    assert_eq!(ours[..6], theirs[..6]);
    let whole = |name: &str| -> i64 {
        sessions
            .iter()
            .map(|row| match field(row, name) {
                Field::Long(n) => *n,
                other => panic!("{name}: {other:?}"),
            })
            .sum()
    };
    assert_eq!(whole("usage_records"), counted.len() as i64);
    let entry_count = whole("entries");
    assert_eq!(entry_count, entries.len() as i64);

    // The assistant part of `usage` is the assistant rows of `messages`.
    let messages = read_table(&dir, "messages");
    let assistant: Vec<&Vec<(String, Field)>> = messages
        .iter()
        .filter(|row| matches!(field(row, "role"), Field::Str(r) if r == "assistant"))
        .filter(|row| !matches!(field(row, "input"), Field::Null))
        .collect();
    let parts = &usage["total"]["parts"]["assistant"];
    assert_eq!(assistant.len() as f64, parts["count"].as_f64().unwrap());
    let cost = parts["costTotal"].as_f64().unwrap();
    assert!(
        (sums(&assistant)[6] - cost).abs() <= 1e-9 * cost.max(1.0),
        "assistant cost"
    );
    let message_count = entries
        .iter()
        .filter(|row| matches!(field(row, "type"), Field::Str(t) if t == "message"))
        .count();
    assert_eq!(messages.len(), message_count);
}

#[test]
fn tool_calls_are_every_tool_call_block_with_its_result() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("t");
    let export = run(&["export", "--parquet", dir.to_str().unwrap(), "fixtures/pi"]);
    assert_eq!(export.code, 0, "{export}");
    // Counted from `pi-session cat` (every line as the store reads it: fused lines split,
    // damaged ones left out): every toolCall block of every assistant message, and every
    // toolResult's call id.
    let (mut calls, mut answered) = (0, std::collections::HashSet::new());
    for file in fixture_files("pi", ".jsonl") {
        let cat = run(&["cat", file.to_str().unwrap()]);
        for line in cat.stdout.lines() {
            let Ok(entry) = pi_session_test_support::parse_js_json(line) else {
                continue;
            };
            let message = &entry["message"];
            if entry["type"] != "message" {
                continue;
            }
            if message["role"] == "assistant" {
                calls += message["content"]
                    .as_array()
                    .map_or(0, |c| c.iter().filter(|b| b["type"] == "toolCall").count());
            } else if message["role"] == "toolResult" {
                answered.insert(message["toolCallId"].as_str().unwrap_or("").to_owned());
            }
        }
    }
    let rows = read_table(&dir, "tool_calls");
    assert!(calls > 0, "the pi fixtures have tool calls");
    assert_eq!(rows.len(), calls);
    for row in &rows {
        let Field::Str(id) = field(row, "call_id") else {
            panic!("call id: {row:?}");
        };
        let has_result = !matches!(field(row, "result_entry_id"), Field::Null);
        assert_eq!(has_result, answered.contains(id), "{id}");
        assert!(matches!(field(row, "arguments"), Field::Str(a) if a.starts_with('{')));
    }
}

#[test]
fn a_bad_output_folder_is_a_clear_error() {
    let out = tempfile::tempdir().unwrap();
    let blocker = out.path().join("file");
    std::fs::write(&blocker, "x").unwrap();
    let export = run(&[
        "export",
        "--parquet",
        blocker.to_str().unwrap(),
        "fixtures/pi",
    ]);
    assert_eq!(export.code, 2, "{export}");
    assert!(export.stderr.contains("could not write"), "{export}");
}
