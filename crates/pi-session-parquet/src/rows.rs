//! The rows of one session file, for each table (cells in [`crate::TABLES`]' column order).

use std::collections::HashMap;
use std::path::Path;

use pi_session::store::Severity;
use pi_session::tree::{LeafSelector, SessionView, UsagePart, UsageSums, usage_record};
use pi_session::types::js;
use pi_session::types::view::{BlockRef, EntryRef, MessageRef};
use pi_session::{record_model, record_time};
use serde_json::Value;

use crate::write::Cell;

/// Entries read at a time, so that memory stays bounded on a large file.
const CHUNK: usize = 4096;

/// The rows of one file.
#[derive(Debug, Default)]
pub struct FileRows {
    pub sessions: Vec<Vec<Cell>>,
    pub entries: Vec<Vec<Cell>>,
    pub messages: Vec<Vec<Cell>>,
    pub tool_calls: Vec<Vec<Cell>>,
}

fn text(value: Option<&Value>) -> Cell {
    js::as_str(value).map_or(Cell::Null, |t| Cell::Text(t.to_owned()))
}

fn time(value: Option<i64>) -> Cell {
    value.into()
}

/// The usage columns of a `Usage` object (nulls without one), read by the one rule `stats` and
/// `usage` use.
fn usage_cells(usage: Option<&Value>) -> [Cell; crate::schema::USAGE_COLUMNS] {
    let Some(usage) = usage else {
        return std::array::from_fn(|_| Cell::Null);
    };
    let mut sums = UsageSums::default();
    sums.add(usage);
    [
        sums.input,
        sums.output,
        sums.cache_read,
        sums.cache_write,
        sums.total_tokens,
        sums.reasoning,
        sums.cost_input,
        sums.cost_output,
        sums.cost_cache_read,
        sums.cost_cache_write,
        sums.cost_total,
    ]
    .map(Cell::Float)
}

/// Characters of text in a message content: a string, or the `text` of its text blocks.
fn text_chars(content: Option<&Value>) -> i64 {
    let count = |t: &str| i64::try_from(t.chars().count()).unwrap_or(i64::MAX);
    match content {
        Some(Value::String(t)) => count(t),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(BlockRef::new)
            .filter(|b| b.is("text"))
            .filter_map(BlockRef::text_str)
            .map(count)
            .sum(),
        _ => 0,
    }
}

fn part_name(part: UsagePart) -> &'static str {
    match part {
        UsagePart::Assistant => "assistant",
        UsagePart::NestedTool => "nested_tool",
        UsagePart::SideCall => "side_call",
    }
}

/// Reads one file into rows. Damaged lines are counted, not read (as `usage` does).
pub fn file_rows(path: &Path) -> pi_session::Result<FileRows> {
    let (file, diagnostics) =
        pi_session::store::open_with(path, &pi_session::store::OpenOptions::single_threaded())?;
    let damaged = diagnostics
        .iter()
        .filter(|d| d.severity() >= Severity::Error)
        .count();
    let view = SessionView::new(&file);
    let dialect = view.detect_dialect()?;
    let header = file.header();
    let session_id = header.map(|h| h.id.clone());
    let file_name = path.display().to_string();
    let sid = || Cell::from(session_id.clone());
    let fname = || Cell::Text(file_name.clone());
    let index = view.index();
    let mut on_branch = vec![false; index.len()];
    for &pos in &index.branch_for(&LeafSelector::Default).positions {
        if let Some(slot) = on_branch.get_mut(pos) {
            *slot = true;
        }
    }
    let mut rows = FileRows::default();
    let (mut messages, mut usage_records) = (0_i64, 0_i64);
    // Tool call rows waiting for their result: call id -> row.
    let mut open_calls: HashMap<String, usize> = HashMap::new();
    let positions: Vec<usize> = (0..index.len()).collect();
    for chunk in positions.chunks(CHUNK) {
        let entries = view.load(chunk)?;
        for (&pos, entry) in chunk.iter().zip(&entries) {
            let fields = EntryRef::new(entry);
            let kind = fields.kind();
            let message = fields.message().filter(|_| kind == Some("message"));
            let role = MessageRef::new(message).role();
            let record = usage_record(entry);
            let at = record_time(entry);
            let entry_time = js::as_str(fields.timestamp()).and_then(js::parse_date_string);
            let line = file
                .index()
                .get(pos)
                .and_then(|e| i64::try_from(e.line).ok());
            let mut row = vec![
                sid(),
                fname(),
                fields.id().into(),
                text(fields.parent_id()),
                kind.into(),
                time(at),
                line.into(),
                Cell::Bool(on_branch.get(pos).copied().unwrap_or(false)),
                record.map_or(Cell::Null, |(part, _)| Cell::Text(part_name(part).into())),
                role.into(),
                record.and_then(|_| record_model(entry)).into(),
            ];
            row.extend(usage_cells(record.map(|(_, u)| u)));
            rows.entries.push(row);
            usage_records += i64::from(record.is_some());
            let Some(message) = message else {
                continue;
            };
            messages += 1;
            let message = MessageRef::new(message);
            let content = message.content();
            let mut row = vec![
                sid(),
                fname(),
                fields.id().into(),
                time(entry_time),
                time(js::date_ms(message.timestamp())),
                role.into(),
                text(message.provider()),
                text(message.model()),
                text(message.api()),
                message.stop_reason().into(),
                text(message.error_message()),
                text(message.tool_name()),
                message.is_error().and_then(Value::as_bool).into(),
                Cell::Int(text_chars(content)),
            ];
            row.extend(usage_cells(record.map(|(_, u)| u)));
            rows.messages.push(row);
            match role {
                Some("assistant") => {
                    let blocks = content.and_then(Value::as_array).into_iter().flatten();
                    for block in blocks.map(BlockRef::new).filter(|b| b.is("toolCall")) {
                        if let Some(id) = block.id_str() {
                            open_calls.insert(id.to_owned(), rows.tool_calls.len());
                        }
                        let arguments = block
                            .arguments()
                            .map_or(Cell::Null, |a| Cell::Text(a.to_string()));
                        rows.tool_calls.push(vec![
                            sid(),
                            fname(),
                            fields.id().into(),
                            time(entry_time),
                            text(block.id()),
                            text(block.name()),
                            arguments,
                            Cell::Null,
                            Cell::Null,
                            Cell::Null,
                        ]);
                    }
                }
                Some("toolResult") => {
                    let call = message
                        .tool_call_id_str()
                        .and_then(|id| open_calls.remove(id))
                        .and_then(|at| rows.tool_calls.get_mut(at));
                    if let Some(call) = call {
                        call[7] = fields.id().into();
                        call[8] = message.is_error().and_then(Value::as_bool).into();
                        call[9] = Cell::Int(text_chars(content));
                    }
                }
                _ => {}
            }
        }
    }
    let count = |n: usize| Cell::Int(i64::try_from(n).unwrap_or(i64::MAX));
    let name = view.name(dialect)?;
    rows.sessions.push(vec![
        fname(),
        sid(),
        header
            .and_then(|h| h.version.as_ref())
            .and_then(serde_json::Number::as_i64)
            .into(),
        Cell::Text(dialect.as_str().to_owned()),
        time(
            header
                .and_then(|h| h.timestamp.as_ref())
                .and_then(|t| js::parse_date_string(t.as_str())),
        ),
        header.and_then(|h| h.cwd.clone()).into(),
        name.into(),
        header.and_then(|h| h.parent_session.clone()).into(),
        index.leaf_id().into(),
        count(index.len()),
        Cell::Int(messages),
        Cell::Int(usage_records),
        count(damaged),
        Cell::Int(i64::try_from(file.byte_len()).unwrap_or(i64::MAX)),
    ]);
    Ok(rows)
}
