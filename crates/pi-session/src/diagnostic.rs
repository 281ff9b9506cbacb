//! One diagnostic type at the front door.
//!
//! Two layers find problems in a session. The store reads lines and reports what it found in
//! them (a line that is not JSON, a torn last line, fused objects), by line and byte offset.
//! The resolver walks the tree and reports what it worked around (a cycle, a missing parent, a
//! missing blob), by entry. A facade user should not need to know which layer spoke: every
//! method of [`Session`](crate::Session) that reports problems returns this one
//! [`Diagnostic`], placed at a line and byte offset of the file wherever the entry concerned is
//! in the file, with a [`Severity`] and a stable [`name`](Diagnostic::name) for scripts. The
//! layer's own record stays reachable ([`Diagnostic::file`], [`Diagnostic::tree`]) for callers
//! that want its typed kind.

use std::fmt;

use pi_session_store::Severity;

/// A problem found in a session, by the store (in its lines) or by the resolver (in its tree).
/// Neither stops a session from opening or a context from being built.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use pi_session::Session;
/// use pi_session::store::Severity;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("damaged.jsonl");
/// let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
/// let orphan = r#"{"type":"message","id":"a","parentId":"gone","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#;
/// std::fs::write(&path, format!("{header}\nnot json\n{orphan}\n"))?;
/// let opened = Session::open(&path, "anthropic:claude-x")?;
/// // The store's finding in line 2, then the orphan in line 3 (once, though the store and the
/// // resolver both see it).
/// let bad = &opened.diagnostics[0];
/// assert_eq!(bad.name(), "not_json");
/// assert_eq!(bad.severity(), Severity::Error);
/// let second_line = header.len() as u64 + 1;
/// assert_eq!((bad.line(), bad.byte_offset()), (Some(2), Some(second_line)));
/// assert!(bad.to_string().starts_with("line 2 (byte "));
/// let orphan = &opened.diagnostics[1];
/// assert_eq!((orphan.name(), orphan.line()), ("parent_not_found", Some(3)));
/// assert_eq!(opened.diagnostics.len(), 2);
/// // A resolver's finding names its entry, and is placed at the entry's line.
/// let cut = &opened.session.tree_diagnostics()[0];
/// assert_eq!((cut.name(), cut.entry_id(), cut.line()), ("missing_parent", Some("a"), Some(3)));
/// assert!(cut.tree().is_some() && cut.file().is_none());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    origin: Origin,
    /// Line and byte offset of the place in the file, where known.
    at: Option<(u64, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Origin {
    File(pi_session_store::Diagnostic),
    Tree(pi_session_tree::Diagnostic),
}

impl Diagnostic {
    /// What the store found in a line.
    pub(crate) fn from_file(diagnostic: pi_session_store::Diagnostic) -> Self {
        Self {
            at: Some((diagnostic.line, diagnostic.byte_offset)),
            origin: Origin::File(diagnostic),
        }
    }

    /// What the resolver found, placed at `at` (the line and byte offset of its entry).
    pub(crate) fn from_tree(
        diagnostic: pi_session_tree::Diagnostic,
        at: Option<(u64, u64)>,
    ) -> Self {
        Self {
            origin: Origin::Tree(diagnostic),
            at,
        }
    }

    /// How much it matters: [`Severity::Error`] when bytes of the file are not in the session,
    /// [`Severity::Warning`] when something read is off, [`Severity::Info`] for a note.
    pub fn severity(&self) -> Severity {
        match &self.origin {
            Origin::File(d) => d.severity(),
            Origin::Tree(d) => d.kind.severity(),
        }
    }

    /// The kind's stable name in snake case (`"not_json"`, `"torn_last_line"`, `"cycle"`,
    /// `"missing_parent"`, …), as `--json` output prints it.
    pub fn name(&self) -> &'static str {
        match &self.origin {
            Origin::File(d) => d.kind.name(),
            Origin::Tree(d) => d.kind.name(),
        }
    }

    /// A sentence for people: what is wrong and what was done about it.
    pub fn message(&self) -> &str {
        match &self.origin {
            Origin::File(d) => &d.message,
            Origin::Tree(d) => &d.message,
        }
    }

    /// The 1-based line of the file it concerns; `None` for an entry appended since the file
    /// was opened, or a finding about no one entry.
    pub fn line(&self) -> Option<u64> {
        self.at.map(|(line, _)| line)
    }

    /// The byte offset in the file where that line (or the entry in it) starts.
    pub fn byte_offset(&self) -> Option<u64> {
        self.at.map(|(_, offset)| offset)
    }

    /// The id of the entry it concerns, when the resolver named one.
    pub fn entry_id(&self) -> Option<&str> {
        match &self.origin {
            Origin::File(_) => None,
            Origin::Tree(d) => d.entry_id.as_deref(),
        }
    }

    /// The store's record, when the store found it (its typed
    /// [`DiagnosticKind`](pi_session_store::DiagnosticKind)).
    pub fn file(&self) -> Option<&pi_session_store::Diagnostic> {
        match &self.origin {
            Origin::File(d) => Some(d),
            Origin::Tree(_) => None,
        }
    }

    /// The resolver's record, when the resolver found it (its typed
    /// [`DiagnosticKind`](pi_session_tree::DiagnosticKind)).
    pub fn tree(&self) -> Option<&pi_session_tree::Diagnostic> {
        match &self.origin {
            Origin::File(_) => None,
            Origin::Tree(d) => Some(d),
        }
    }
}

impl fmt::Display for Diagnostic {
    /// `line N (byte B): message` where the place is known, else `entry ID: message`, else
    /// the message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.at, self.entry_id()) {
            (Some((line, offset)), _) => {
                write!(f, "line {line} (byte {offset}): {}", self.message())
            }
            (None, Some(id)) => write!(f, "entry {id}: {}", self.message()),
            (None, None) => f.write_str(self.message()),
        }
    }
}

impl crate::Session {
    /// The resolver's `diagnostics`, each placed at its entry's line and byte offset in the
    /// file (by position, else by id).
    pub(crate) fn located(&self, diagnostics: Vec<pi_session_tree::Diagnostic>) -> Vec<Diagnostic> {
        if diagnostics.is_empty() {
            return Vec::new();
        }
        let log = self.log();
        diagnostics
            .into_iter()
            .map(|d| {
                let position = d.position.or_else(|| {
                    d.entry_id
                        .as_deref()
                        .and_then(|id| log.index.position_of(id))
                });
                let at = position
                    .and_then(|p| log.file.as_ref()?.index().get(p))
                    .map(|entry| (entry.line, entry.byte_offset));
                Diagnostic::from_tree(d, at)
            })
            .collect()
    }
}
