//! The four tables: their columns, types and meaning, in one place. The Parquet schema of each
//! file and the committed `SCHEMA.md` are both generated from [`TABLES`].

/// A column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text: `BYTE_ARRAY (STRING)`.
    Text,
    /// A whole number: `INT64`.
    Int,
    /// A number as JSON writes it (tokens, cost): `DOUBLE`.
    Float,
    /// `BOOLEAN`.
    Bool,
    /// A point in time: `INT64 (TIMESTAMP(MILLIS, true))`, Unix milliseconds, UTC.
    Time,
}

impl Kind {
    /// The Parquet message-type text of a column of this kind.
    fn parquet(self) -> &'static str {
        match self {
            Self::Text => "BYTE_ARRAY {} (STRING)",
            Self::Int => "INT64 {}",
            Self::Float => "DOUBLE {}",
            Self::Bool => "BOOLEAN {}",
            Self::Time => "INT64 {} (TIMESTAMP(MILLIS,true))",
        }
    }

    fn sql(self) -> &'static str {
        match self {
            Self::Text => "VARCHAR",
            Self::Int => "BIGINT",
            Self::Float => "DOUBLE",
            Self::Bool => "BOOLEAN",
            Self::Time => "TIMESTAMPTZ",
        }
    }
}

/// One column: name, type, meaning. Every column is `OPTIONAL` (null where the session does not
/// say).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// The column's name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// What it holds.
    pub doc: &'static str,
}

/// One table: the file `<name>.parquet` in the output folder.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The table's name (and file stem).
    pub name: &'static str,
    /// What one row is.
    pub doc: &'static str,
    /// Its columns, in order.
    pub columns: &'static [Column],
}

impl Table {
    /// The Parquet message type of the table's file.
    pub fn message_type(&self) -> String {
        let fields: Vec<String> = self
            .columns
            .iter()
            .map(|c| format!("OPTIONAL {};", c.kind.parquet().replace("{}", c.name)))
            .collect();
        format!("message {} {{ {} }}", self.name, fields.join(" "))
    }
}

const fn col(name: &'static str, kind: Kind, doc: &'static str) -> Column {
    Column { name, kind, doc }
}

use Kind::{Bool, Float, Int, Text, Time};

/// The usage columns of `entries` and `messages`, read from a `Usage` object as `stats` and
/// `usage` read it (`pi_session::tree::UsageSums::add`).
macro_rules! usage_columns {
    () => {
        [
            col(
                "input",
                Float,
                "Input tokens (cache reads and writes excluded).",
            ),
            col("output", Float, "Output tokens (reasoning included)."),
            col("cache_read", Float, "Cache-read tokens."),
            col("cache_write", Float, "Cache-write tokens."),
            col("total_tokens", Float, "`totalTokens` as stored."),
            col("reasoning", Float, "Reasoning tokens (a part of `output`)."),
            col("cost_input", Float, "`cost.input`, USD."),
            col("cost_output", Float, "`cost.output`, USD."),
            col("cost_cache_read", Float, "`cost.cacheRead`, USD."),
            col("cost_cache_write", Float, "`cost.cacheWrite`, USD."),
            col(
                "cost",
                Float,
                "`cost.total`, USD, as stored (never recomputed).",
            ),
        ]
    };
}

/// How many usage columns end `entries` and `messages`.
pub const USAGE_COLUMNS: usize = 11;

const fn cat<const A: usize, const B: usize, const N: usize>(
    a: [Column; A],
    b: [Column; B],
) -> [Column; N] {
    let mut out = [col("", Text, ""); N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < N {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

const SESSIONS: [Column; 14] = [
    col("file", Text, "The session file's path, as found."),
    col(
        "session_id",
        Text,
        "The header's `id` (null without a header).",
    ),
    col("version", Int, "The header's format `version` (null: v1)."),
    col("dialect", Text, "`pi` or `omp`, as detected on open."),
    col("created", Time, "The header's `timestamp`."),
    col("cwd", Text, "The header's `cwd` (the project)."),
    col("name", Text, "pi's `session_info` name or omp's title."),
    col(
        "parent_session",
        Text,
        "The header's `parentSession` (the session it was forked from).",
    ),
    col(
        "leaf_id",
        Text,
        "The leaf entry's id (where pi and omp resume).",
    ),
    col("entries", Int, "Entries read (header excluded)."),
    col("messages", Int, "`message` entries."),
    col(
        "usage_records",
        Int,
        "Entries that record usage (rows of `entries` with a `usage_part`).",
    ),
    col(
        "damaged_lines",
        Int,
        "Lines skipped as damaged (`pi-session check` shows them).",
    ),
    col("bytes", Int, "The file's size."),
];

const ENTRIES_HEAD: [Column; 11] = [
    col("session_id", Text, "`sessions.session_id`."),
    col("file", Text, "`sessions.file`."),
    col("entry_id", Text, "The entry's `id`."),
    col("parent_id", Text, "Its `parentId` (null for a root)."),
    col(
        "type",
        Text,
        "Its `type` (`message`, `compaction`, `model_change`, ...).",
    ),
    col(
        "timestamp",
        Time,
        "Its `timestamp`, else its message's numeric `timestamp`: the time `usage --since/--until` filters on.",
    ),
    col("line", Int, "1-based line number in the file."),
    col(
        "on_leaf_branch",
        Bool,
        "True when the entry is on the leaf's branch (what the model sees next).",
    ),
    col(
        "usage_part",
        Text,
        "Where the entry's usage counts, as `stats` and `usage` count it: `assistant`, `nested_tool` (usage nested in a tool result) or `side_call` (omp `model_usage`, pi 1.x `usage`, compactions, branch summaries); null when it records none.",
    ),
    col("role", Text, "For a `message` entry, the message's `role`."),
    col(
        "model",
        Text,
        "`provider/model` of the call the usage belongs to.",
    ),
];

const MESSAGES_HEAD: [Column; 14] = [
    col("session_id", Text, "`sessions.session_id`."),
    col("file", Text, "`sessions.file`."),
    col("entry_id", Text, "The `message` entry's `id`."),
    col("timestamp", Time, "The entry's `timestamp`."),
    col(
        "message_timestamp",
        Time,
        "The message's own numeric `timestamp`.",
    ),
    col(
        "role",
        Text,
        "`user`, `assistant`, `toolResult`, `bashExecution`, `custom`, ...",
    ),
    col("provider", Text, "Assistant: `provider`."),
    col("model", Text, "Assistant: `model`."),
    col("api", Text, "Assistant: `api`."),
    col(
        "stop_reason",
        Text,
        "Assistant: `stopReason` (`stop`, `toolUse`, `error`, `aborted`, ...).",
    ),
    col("error_message", Text, "Assistant: `errorMessage`."),
    col("tool_name", Text, "Tool result: `toolName`."),
    col("is_error", Bool, "Tool result: `isError`."),
    col(
        "text_chars",
        Int,
        "Characters of text in the message (text blocks, or a string content).",
    ),
];

const TOOL_CALLS: [Column; 10] = [
    col("session_id", Text, "`sessions.session_id`."),
    col("file", Text, "`sessions.file`."),
    col("entry_id", Text, "The assistant message's entry `id`."),
    col("timestamp", Time, "That entry's `timestamp`."),
    col("call_id", Text, "The `toolCall` block's `id`."),
    col("tool_name", Text, "Its `name`."),
    col("arguments", Text, "Its `arguments`, as JSON text."),
    col(
        "result_entry_id",
        Text,
        "The entry id of the `toolResult` answering it (null: none in the file).",
    ),
    col("result_is_error", Bool, "That result's `isError`."),
    col("result_chars", Int, "Characters of text in that result."),
];

const ENTRIES: [Column; 22] = cat(ENTRIES_HEAD, usage_columns!());
const MESSAGES: [Column; 25] = cat(MESSAGES_HEAD, usage_columns!());

/// `sessions`, `entries`, `messages`, `tool_calls`, in that order.
pub const TABLES: [Table; 4] = [
    Table {
        name: "sessions",
        doc: "One row per session file.",
        columns: &SESSIONS,
    },
    Table {
        name: "entries",
        doc: "One row per entry of every file (each entry once, whatever branches pass through it). The usage columns are set where `usage_part` is: summed, they are `pi-session usage`'s totals.",
        columns: &ENTRIES,
    },
    Table {
        name: "messages",
        doc: "One row per `message` entry. Usage columns: the assistant's `usage`, or the usage nested in a tool result.",
        columns: &MESSAGES,
    },
    Table {
        name: "tool_calls",
        doc: "One row per `toolCall` block of an assistant message, with the result that answers it.",
        columns: &TOOL_CALLS,
    },
];

/// The tables documented in Markdown (the text of `SCHEMA.md`).
pub fn schema_markdown() -> String {
    let mut text = String::from(
        "# Parquet tables of `pi-session export --parquet`\n\n\
         Generated from `crates/pi-session-parquet/src/schema.rs` (a test checks this file). \
         Every column is optional (null where the session does not say); times are UTC \
         milliseconds (`TIMESTAMP(MILLIS, true)`), text is UTF-8; rows are in file path order, \
         then file order. Join on `session_id` (or `file`, which is never null).\n",
    );
    for table in TABLES {
        text.push_str(&format!(
            "\n## `{}.parquet`\n\n{}\n\n| column | type | meaning |\n|---|---|---|\n",
            table.name, table.doc
        ));
        for c in table.columns {
            text.push_str(&format!(
                "| `{}` | {} | {} |\n",
                c.name,
                c.kind.sql(),
                c.doc
            ));
        }
    }
    text
}
