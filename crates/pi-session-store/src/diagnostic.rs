//! What `open` found wrong (or merely unusual) in a session file, line by line.
//!
//! A diagnostic never stops a load: the store keeps every line it can and says exactly what it did
//! with the rest. Each diagnostic names the 1-based physical line, the byte offset of the start of
//! that line (or of the recovered object inside it), what is wrong, and what happened to the data.

use pi_session_types::{LineError, ParseWarning};
use std::collections::HashMap;
use std::fmt;

/// How many diagnostics of one kind a file's report keeps in full; the rest of that kind are
/// counted in one [`DiagnosticKind::Omitted`] (so a file of a million damaged lines costs no
/// more memory than a clean one).
pub const DIAGNOSTICS_PER_KIND: usize = 100;

/// How much a diagnostic matters to a reader of the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Nothing was lost; the file has a property worth knowing (e.g. it was migrated in memory).
    Info,
    /// The data was read, but something about it is off (e.g. a duplicate id, a repaired string).
    Warning,
    /// Some bytes of the file could not be turned into an entry and are not in the session.
    Error,
}

/// One finding of `open` (or of a listing), tied to a place in the file.
///
/// `Display` prints `line N (byte B): message`.
///
/// ```
/// use pi_session_store::{Diagnostic, DiagnosticKind};
/// let d = Diagnostic::new(3, 120, DiagnosticKind::TornLastLine);
/// assert!(d.to_string().starts_with("line 3 (byte 120): the last line is incomplete"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based physical line number (counting `\n` bytes; a title slot is line 1).
    pub line: u64,
    /// Byte offset from the start of the file (a UTF-8 BOM counts) where the problem starts.
    pub byte_offset: u64,
    /// What was found.
    pub kind: DiagnosticKind,
    /// A sentence for humans: what is wrong and what the store did about it.
    pub message: String,
}

impl Diagnostic {
    /// Builds a diagnostic whose message is the kind's standard sentence.
    pub fn new(line: u64, byte_offset: u64, kind: DiagnosticKind) -> Self {
        let message = kind.to_string();
        Self {
            line,
            byte_offset,
            kind,
            message,
        }
    }

    /// How much this diagnostic matters (see [`Severity`]).
    pub fn severity(&self) -> Severity {
        self.kind.severity()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} (byte {}): {}",
            self.line, self.byte_offset, self.message
        )
    }
}

/// The kinds of findings. Each has a fixed [`Severity`] and a standard message (its `Display`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// The line is not valid JSON (and is not two fused objects either). The line is skipped.
    #[error("the line is not valid JSON ({detail}); it was skipped")]
    NotJson {
        /// The parser's explanation.
        detail: String,
    },
    /// The line is JSON but not an object (e.g. `5` or `null`). The line is skipped.
    #[error("the line is JSON but not an object ({detail}); it was skipped")]
    NotAnObject {
        /// The parser's explanation.
        detail: String,
    },
    /// The object has no usable `type` key (absent or not a string). The line is skipped.
    #[error("the object has no string `type` ({detail}); it was skipped")]
    NoType {
        /// The parser's explanation.
        detail: String,
    },
    /// The file does not end with `\n` and its last line is not valid JSON: an interrupted write.
    #[error(
        "the last line is incomplete (no final newline and not valid JSON): an interrupted write; it was skipped, and the next append starts on a new line"
    )]
    TornLastLine,
    /// Several JSON objects share one line because a newline was lost; all were recovered.
    #[error(
        "{count} JSON objects were fused on one line (a lost newline); each was recovered as its own entry"
    )]
    FusedObjects {
        /// How many objects were found on the line.
        count: usize,
    },
    /// The line had bytes that are not UTF-8; they were read as U+FFFD.
    #[error("the line contains invalid UTF-8; the bad bytes read as U+FFFD")]
    InvalidUtf8,
    /// The line has an unpaired UTF-16 surrogate escape (e.g. `\ud83d`), as JavaScript writes a
    /// string cut inside a character. Nothing is lost: it is carried as U+10F800+k in Rust
    /// strings and written back as the same escape (`pi_session_types::js::carrier_of`).
    #[error(
        "the line holds an unpaired surrogate escape (e.g. \\ud83d), as pi and omp write a string cut inside a character; it is kept and written back unchanged"
    )]
    LoneSurrogate,
    /// The line holds code points U+10F800–U+10FFFF, the range that carries lone surrogates in
    /// Rust strings: they are read as they are, but written back as lone surrogate escapes.
    #[error(
        "the line holds code points U+10F800..U+10FFFF (private use), which this library uses to carry lone surrogates; they read as they are but would be written back as \\udxxx escapes"
    )]
    AmbiguousPrivateUse,
    /// The file starts with a UTF-8 byte order mark. It is skipped (pi cannot read such a file).
    #[error("the file starts with a UTF-8 byte order mark; it was skipped (pi and omp write none)")]
    ByteOrderMark,
    /// No `type:"session"` header line anywhere in the file. The entries are still read.
    #[error(
        "the file has no session header (`type:\"session\"`); its entries are read without one"
    )]
    MissingHeader,
    /// Entries appear before the header line. They are read as entries.
    #[error(
        "an entry comes before the session header (first header at line {header_line}); entries are read in file order"
    )]
    EntryBeforeHeader {
        /// Line of the header that follows.
        header_line: u64,
    },
    /// A second `type:"session"` line; the first header wins and this line is not an entry.
    #[error("a second session header (the first is at line {first_line}); it was ignored")]
    DuplicateHeader {
        /// Line of the header in effect.
        first_line: u64,
    },
    /// The header line could not be read as a header (e.g. its `id` is not a string).
    #[error("the session header is malformed ({detail}); the file is read without a header")]
    InvalidHeader {
        /// The parser's explanation.
        detail: String,
    },
    /// A `type:"title"` line that is not a valid title slot on line 1; it was ignored.
    #[error(
        "a `type:\"title\"` line that is not a valid title slot on line 1 ({detail}); it was ignored"
    )]
    InvalidTitleSlot {
        /// Why the slot was rejected.
        detail: String,
    },
    /// An entry id that an earlier entry already has. Both are kept; lookups find the later one.
    #[error(
        "entry id {id:?} was already used at line {first_line}; both entries are kept and lookups by id find this later one"
    )]
    DuplicateId {
        /// The repeated id.
        id: String,
        /// The line of the first entry with that id.
        first_line: u64,
    },
    /// The entry's `parentId` names no entry in the file; a path walk stops here.
    #[error("parentId {parent_id:?} names no entry in this file; a path walk stops at this entry")]
    ParentNotFound {
        /// The dangling parent id.
        parent_id: String,
    },
    /// A version-3 entry without a string `id`; it can never be a parent or the leaf.
    #[error("the entry has no string `id`; it cannot be a parent or the leaf")]
    MissingId,
    /// The file was migrated in memory (pi.md §4); the file itself was not touched.
    #[error(
        "the file is version {from}; its entries were migrated in memory to version 3 ({how}); the file was not changed"
    )]
    Migrated {
        /// The version found in the header (1 when absent).
        from: u64,
        /// What the migration did.
        how: &'static str,
    },
    /// The header says a version newer than 3; entries are read as they are.
    #[error("the header says version {version}, newer than 3; entries are read as they are")]
    NewerVersion {
        /// The version found in the header.
        version: u64,
    },
    /// A listing could not read the file at all (it vanished, or permission was denied).
    #[error("the file could not be read ({detail}); it was not listed")]
    Unreadable {
        /// The I/O error.
        detail: String,
    },
    /// More diagnostics of one kind than [`DIAGNOSTICS_PER_KIND`]: the first ones are listed in
    /// full, the rest only counted here. Placed at the first one left out.
    #[error(
        "{count} more `{of}` diagnostics were left out (the first {DIAGNOSTICS_PER_KIND} are listed)"
    )]
    Omitted {
        /// The kind left out ([`DiagnosticKind::name`]).
        of: &'static str,
        /// How many were left out.
        count: u64,
        /// Their severity.
        severity: Severity,
    },
    /// A listing could not find the header within the bytes it is allowed to read.
    #[error("no session header within the first {limit} bytes; the file was not listed")]
    HeaderNotFound {
        /// How many bytes were read.
        limit: u64,
    },
}

impl DiagnosticKind {
    /// The kind's name in snake case (`NotJson { .. }` → `"not_json"`), as `--json` prints it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::NotJson { .. } => "not_json",
            Self::NotAnObject { .. } => "not_an_object",
            Self::NoType { .. } => "no_type",
            Self::TornLastLine => "torn_last_line",
            Self::FusedObjects { .. } => "fused_objects",
            Self::InvalidUtf8 => "invalid_utf8",
            Self::LoneSurrogate => "lone_surrogate",
            Self::AmbiguousPrivateUse => "ambiguous_private_use",
            Self::ByteOrderMark => "byte_order_mark",
            Self::MissingHeader => "missing_header",
            Self::EntryBeforeHeader { .. } => "entry_before_header",
            Self::DuplicateHeader { .. } => "duplicate_header",
            Self::InvalidHeader { .. } => "invalid_header",
            Self::InvalidTitleSlot { .. } => "invalid_title_slot",
            Self::DuplicateId { .. } => "duplicate_id",
            Self::ParentNotFound { .. } => "parent_not_found",
            Self::MissingId => "missing_id",
            Self::Migrated { .. } => "migrated",
            Self::NewerVersion { .. } => "newer_version",
            Self::Unreadable { .. } => "unreadable",
            Self::HeaderNotFound { .. } => "header_not_found",
            Self::Omitted { .. } => "omitted",
        }
    }

    /// How much this kind of finding matters.
    pub fn severity(&self) -> Severity {
        match self {
            Self::Omitted { severity, .. } => *severity,
            Self::NotJson { .. }
            | Self::NotAnObject { .. }
            | Self::NoType { .. }
            | Self::TornLastLine
            | Self::MissingHeader
            | Self::InvalidHeader { .. }
            | Self::HeaderNotFound { .. }
            | Self::Unreadable { .. } => Severity::Error,
            Self::FusedObjects { .. }
            | Self::InvalidUtf8
            | Self::AmbiguousPrivateUse
            | Self::EntryBeforeHeader { .. }
            | Self::DuplicateHeader { .. }
            | Self::InvalidTitleSlot { .. }
            | Self::DuplicateId { .. }
            | Self::ParentNotFound { .. }
            | Self::MissingId
            | Self::ByteOrderMark => Severity::Warning,
            Self::Migrated { .. } | Self::NewerVersion { .. } | Self::LoneSurrogate => {
                Severity::Info
            }
        }
    }
}

/// Collects a file's diagnostics with bounded memory: the first [`DIAGNOSTICS_PER_KIND`] of each
/// kind in full, then only a count per kind (see [`DiagnosticKind::Omitted`]).
#[derive(Debug, Default)]
pub(crate) struct DiagnosticLog {
    kept: Vec<Diagnostic>,
    /// Per kind: how many were kept, and the omitted ones (count, first line and offset).
    per_kind: HashMap<&'static str, KindCount>,
}

#[derive(Debug, Default)]
struct KindCount {
    kept: usize,
    omitted: u64,
    first_omitted: (u64, u64),
    severity: Option<Severity>,
}

impl DiagnosticLog {
    /// Keeps `diagnostic`, or only counts it when its kind already has enough.
    pub(crate) fn push(&mut self, diagnostic: Diagnostic) {
        let count = self.per_kind.entry(diagnostic.kind.name()).or_default();
        if count.kept < DIAGNOSTICS_PER_KIND {
            count.kept += 1;
            self.kept.push(diagnostic);
        } else {
            if count.omitted == 0 {
                count.first_omitted = (diagnostic.line, diagnostic.byte_offset);
                count.severity = Some(diagnostic.severity());
            }
            count.omitted += 1;
        }
    }

    /// The diagnostics in file order, each kind's count of omitted ones at its first omission.
    pub(crate) fn finish(mut self) -> Vec<Diagnostic> {
        for (of, count) in self.per_kind {
            if count.omitted > 0 {
                let (line, offset) = count.first_omitted;
                let kind = DiagnosticKind::Omitted {
                    of,
                    count: count.omitted,
                    severity: count.severity.unwrap_or(Severity::Warning),
                };
                self.kept.push(Diagnostic::new(line, offset, kind));
            }
        }
        // Stable: findings at one place stay in the order they were made.
        self.kept.sort_by_key(|d| (d.line, d.byte_offset));
        self.kept
    }
}

impl DiagnosticKind {
    /// The diagnostic for a line that could not be read as an object (`terminated`: the line
    /// ends with `\n`; an unterminated one that is not JSON is a torn write). `None` for a blank
    /// line, which is skipped without a word.
    pub fn for_line_error(error: &LineError, terminated: bool) -> Option<Self> {
        Some(match error {
            LineError::NotJson { .. } if !terminated => DiagnosticKind::TornLastLine,
            LineError::NotJson { message, .. } => DiagnosticKind::NotJson {
                detail: message.clone(),
            },
            LineError::NotAnObject { found } => DiagnosticKind::NotAnObject {
                detail: format!("found {found}"),
            },
            LineError::Blank => return None,
            other => DiagnosticKind::NoType {
                detail: other.to_string(),
            },
        })
    }

    /// The diagnostic for a repair made while reading a line's bytes (invalid UTF-8, a lone
    /// surrogate escape); `None` for warnings about the typed view.
    pub fn for_warning(warning: &ParseWarning) -> Option<Self> {
        match warning {
            ParseWarning::LoneSurrogateReplaced { .. } => Some(DiagnosticKind::LoneSurrogate),
            ParseWarning::AmbiguousPrivateUse { .. } => Some(DiagnosticKind::AmbiguousPrivateUse),
            ParseWarning::InvalidUtf8Replaced => Some(DiagnosticKind::InvalidUtf8),
            _ => None,
        }
    }
}
