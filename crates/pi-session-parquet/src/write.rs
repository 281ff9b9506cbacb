//! Writing one table: rows are buffered column by column and written as a row group every
//! [`ROW_GROUP`] rows, so memory stays bounded however many sessions are exported.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::ExportError;
use crate::schema::{Kind, Table};

/// Rows per row group.
pub const ROW_GROUP: usize = 65_536;

/// One value of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Null.
    Null,
    /// Text.
    Text(String),
    /// A whole number (also a time in Unix ms).
    Int(i64),
    /// A number.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl From<Option<String>> for Cell {
    fn from(value: Option<String>) -> Self {
        value.map_or(Self::Null, Self::Text)
    }
}

impl From<Option<&str>> for Cell {
    fn from(value: Option<&str>) -> Self {
        value.map_or(Self::Null, |t| Self::Text(t.to_owned()))
    }
}

impl From<Option<i64>> for Cell {
    fn from(value: Option<i64>) -> Self {
        value.map_or(Self::Null, Self::Int)
    }
}

impl From<Option<bool>> for Cell {
    fn from(value: Option<bool>) -> Self {
        value.map_or(Self::Null, Self::Bool)
    }
}

/// The values of one column so far, and their definition levels (0: null, 1: set).
#[derive(Debug)]
enum Values {
    Text(Vec<ByteArray>),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
}

#[derive(Debug)]
struct Buffer {
    values: Values,
    levels: Vec<i16>,
}

/// One table's file being written.
#[derive(Debug)]
pub struct TableWriter {
    table: Table,
    path: PathBuf,
    writer: SerializedFileWriter<File>,
    buffers: Vec<Buffer>,
    rows: usize,
    /// Rows written so far, in every row group.
    pub written: u64,
}

fn parquet_error(path: &Path, error: impl std::fmt::Display) -> ExportError {
    ExportError::Parquet {
        path: path.to_path_buf(),
        message: error.to_string(),
    }
}

impl TableWriter {
    /// Creates `<dir>/<table>.parquet` (replacing one that is there).
    pub fn create(dir: &Path, table: Table) -> Result<Self, ExportError> {
        let path = dir.join(format!("{}.parquet", table.name));
        let schema =
            parse_message_type(&table.message_type()).map_err(|e| parquet_error(&path, e))?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("pi-session {}", env!("CARGO_PKG_VERSION")))
            .build();
        let file = File::create(&path).map_err(|source| ExportError::Io {
            path: path.clone(),
            source,
        })?;
        let writer = SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props))
            .map_err(|e| parquet_error(&path, e))?;
        let buffers = table
            .columns
            .iter()
            .map(|c| Buffer {
                values: match c.kind {
                    Kind::Text => Values::Text(Vec::new()),
                    Kind::Int | Kind::Time => Values::Int(Vec::new()),
                    Kind::Float => Values::Float(Vec::new()),
                    Kind::Bool => Values::Bool(Vec::new()),
                },
                levels: Vec::new(),
            })
            .collect();
        Ok(Self {
            table,
            path,
            writer,
            buffers,
            rows: 0,
            written: 0,
        })
    }

    /// Adds one row: a cell per column, in the table's column order, each of the column's kind
    /// (or null).
    pub fn push(&mut self, row: Vec<Cell>) -> Result<(), ExportError> {
        if row.len() != self.buffers.len() {
            return Err(parquet_error(
                &self.path,
                format!(
                    "a row of {} cells for {} columns",
                    row.len(),
                    self.buffers.len()
                ),
            ));
        }
        for (i, (cell, buffer)) in row.into_iter().zip(&mut self.buffers).enumerate() {
            let set = match (&mut buffer.values, cell) {
                (_, Cell::Null) => false,
                (Values::Text(v), Cell::Text(t)) => {
                    v.push(ByteArray::from(t.into_bytes()));
                    true
                }
                (Values::Int(v), Cell::Int(n)) => {
                    v.push(n);
                    true
                }
                (Values::Float(v), Cell::Float(n)) => {
                    v.push(n);
                    true
                }
                (Values::Bool(v), Cell::Bool(b)) => {
                    v.push(b);
                    true
                }
                (_, other) => {
                    let name = self.table.columns.get(i).map_or("?", |c| c.name);
                    return Err(parquet_error(
                        &self.path,
                        format!("column {name}: {other:?} is not of the column's type"),
                    ));
                }
            };
            buffer.levels.push(i16::from(set));
        }
        self.rows += 1;
        if self.rows >= ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group.
    fn flush(&mut self) -> Result<(), ExportError> {
        if self.rows == 0 {
            return Ok(());
        }
        let path = self.path.clone();
        let error = |e: parquet::errors::ParquetError| parquet_error(&path, e);
        let mut group = self.writer.next_row_group().map_err(error)?;
        for buffer in &mut self.buffers {
            let Some(mut column) = group.next_column().map_err(error)? else {
                break;
            };
            let levels = Some(buffer.levels.as_slice());
            match &mut buffer.values {
                Values::Text(v) => column.typed::<ByteArrayType>().write_batch(v, levels, None),
                Values::Int(v) => column.typed::<Int64Type>().write_batch(v, levels, None),
                Values::Float(v) => column.typed::<DoubleType>().write_batch(v, levels, None),
                Values::Bool(v) => column.typed::<BoolType>().write_batch(v, levels, None),
            }
            .map_err(error)?;
            column.close().map_err(error)?;
            match &mut buffer.values {
                Values::Text(v) => v.clear(),
                Values::Int(v) => v.clear(),
                Values::Float(v) => v.clear(),
                Values::Bool(v) => v.clear(),
            }
            buffer.levels.clear();
        }
        group.close().map_err(error)?;
        self.written += self.rows as u64;
        self.rows = 0;
        Ok(())
    }

    /// Writes what is buffered and the file's footer; returns the rows written.
    pub fn finish(mut self) -> Result<u64, ExportError> {
        self.flush()?;
        let path = self.path.clone();
        self.writer.close().map_err(|e| parquet_error(&path, e))?;
        Ok(self.written)
    }
}
