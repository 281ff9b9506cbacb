//! omp and pi sessions as Parquet tables, so that DuckDB, DataFusion or Spark query a fleet's
//! sessions: `sessions`, `entries`, `messages` and `tool_calls` (one `.parquet` file each; the
//! columns are documented in [`TABLES`] and in `SCHEMA.md`, generated from them).
//!
//! What is counted is what `pi-session usage` counts: every entry of every file once, its usage
//! read by the one rule `stats` uses (`pi_session::tree::usage_record`), so the usage columns
//! of `entries` summed are `usage`'s totals. Files are read on every core, a batch at a time,
//! and rows are written in file path order, then file order; memory is bounded by the batch and
//! the row group ([`ROW_GROUP`] rows), not by the number of sessions.
//!
//! ```no_run
//! use std::path::{Path, PathBuf};
//! let files = vec![PathBuf::from("a.jsonl"), PathBuf::from("b.jsonl")];
//! let report = pi_session_parquet::export(&files, Path::new("out"), &|_| {})?;
//! println!("{} sessions, {} entries", report.rows[0], report.rows[1]);
//! # Ok::<(), pi_session_parquet::ExportError>(())
//! ```
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

use rayon::prelude::*;

mod rows;
mod schema;
mod write;

pub use schema::{Column, Kind, TABLES, Table, schema_markdown};
pub use write::ROW_GROUP;

use write::TableWriter;

/// Why an export stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A file or folder could not be written.
    #[error("could not write {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The Parquet writer refused.
    #[error("could not write {}: {message}", path.display())]
    Parquet {
        /// The table's file.
        path: PathBuf,
        /// The writer's message.
        message: String,
    },
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// Rows written per table, in [`TABLES`] order.
    pub rows: [u64; 4],
    /// The files written, in [`TABLES`] order.
    pub files: Vec<PathBuf>,
    /// Session files that could not be read, and why (they have no rows).
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Session files read in parallel at a time.
const BATCH: usize = 64;

/// Writes the tables of `files` into `out_dir` (created when missing; existing tables replaced),
/// calling `done` with each file once it is read (for a progress bar).
pub fn export(
    files: &[PathBuf],
    out_dir: &Path,
    done: &(dyn Fn(&Path) + Sync),
) -> Result<ExportReport, ExportError> {
    std::fs::create_dir_all(out_dir).map_err(|source| ExportError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let mut writers = TABLES
        .iter()
        .map(|t| TableWriter::create(out_dir, *t))
        .collect::<Result<Vec<_>, _>>()?;
    let mut report = ExportReport {
        files: TABLES
            .iter()
            .map(|t| out_dir.join(format!("{}.parquet", t.name)))
            .collect(),
        ..ExportReport::default()
    };
    for batch in files.chunks(BATCH) {
        let read: Vec<_> = batch
            .par_iter()
            .map(|path| {
                let rows = rows::file_rows(path);
                done(path);
                rows
            })
            .collect();
        for (path, rows) in batch.iter().zip(read) {
            let rows = match rows {
                Ok(rows) => rows,
                Err(error) => {
                    report.unreadable.push((path.clone(), error.to_string()));
                    continue;
                }
            };
            let tables = [rows.sessions, rows.entries, rows.messages, rows.tool_calls];
            for (writer, table) in writers.iter_mut().zip(tables) {
                for row in table {
                    writer.push(row)?;
                }
            }
        }
    }
    for (i, writer) in writers.into_iter().enumerate() {
        let written = writer.finish()?;
        if let Some(slot) = report.rows.get_mut(i) {
            *slot = written;
        }
    }
    Ok(report)
}
