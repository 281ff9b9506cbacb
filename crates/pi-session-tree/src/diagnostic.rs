//! Diagnostics: problems found in a session that the resolver worked around.

use std::fmt;

/// What kind of problem a [`Diagnostic`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// Two entries share an id; the later one wins for lookups.
    DuplicateId,
    /// Following `parentId` links came back to an entry already on the path.
    /// pi 0.73.1 loops forever here; the walk stops instead.
    Cycle,
    /// A `parentId` names no entry; the walk ends there (the branch is cut).
    MissingParent,
    /// An entry lacks a field the real implementation reads (or has the wrong
    /// JSON type for it); where JavaScript would throw, the entry is skipped.
    MalformedEntry,
    /// An omp `blob:sha256:` reference whose blob is not in the blob folder;
    /// the reference string is left in place, as omp does.
    MissingBlob,
    /// A blob folder read failed for a reason other than "not found".
    BlobReadFailed,
    /// The requested leaf id is not in the session; the last entry is used,
    /// as pi and omp do.
    UnknownLeaf,
}

impl DiagnosticKind {
    /// The kind's name in snake case (`MissingParent` → `"missing_parent"`), as `--json` prints
    /// it.
    pub fn name(self) -> &'static str {
        match self {
            Self::DuplicateId => "duplicate_id",
            Self::Cycle => "cycle",
            Self::MissingParent => "missing_parent",
            Self::MalformedEntry => "malformed_entry",
            Self::MissingBlob => "missing_blob",
            Self::BlobReadFailed => "blob_read_failed",
            Self::UnknownLeaf => "unknown_leaf",
        }
    }

    /// How much it matters, on the store's scale: every resolver finding is a warning (the
    /// session resolves, as pi and omp resolve it, but something in it is off), except a blob
    /// folder that could not be read, an error of the machine rather than of the file.
    pub fn severity(self) -> pi_session_store::Severity {
        match self {
            Self::BlobReadFailed => pi_session_store::Severity::Error,
            _ => pi_session_store::Severity::Warning,
        }
    }
}

/// A problem found while resolving a session, with the entry it concerns.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// What went wrong.
    pub kind: DiagnosticKind,
    /// Position of the entry in file order (0 = first entry after the header),
    /// when one entry is concerned.
    pub position: Option<usize>,
    /// Id of the entry concerned, when it has one.
    pub entry_id: Option<String>,
    /// A sentence saying what happened and what the resolver did about it.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic about the entry at `position`.
    pub fn at(
        kind: DiagnosticKind,
        position: Option<usize>,
        entry_id: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            position,
            entry_id: entry_id.map(str::to_owned),
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.position, &self.entry_id) {
            (Some(pos), Some(id)) => write!(f, "entry {pos} ({id}): {}", self.message),
            (Some(pos), None) => write!(f, "entry {pos}: {}", self.message),
            (None, Some(id)) => write!(f, "entry {id}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DiagnosticKind;

    /// `name()` is the kind as `--json` output serialises it (serde's snake case), for every kind.
    #[test]
    fn names_are_the_serialised_kinds() {
        for kind in [
            DiagnosticKind::DuplicateId,
            DiagnosticKind::Cycle,
            DiagnosticKind::MissingParent,
            DiagnosticKind::MalformedEntry,
            DiagnosticKind::MissingBlob,
            DiagnosticKind::BlobReadFailed,
            DiagnosticKind::UnknownLeaf,
        ] {
            assert_eq!(
                serde_json::to_value(kind).unwrap(),
                serde_json::Value::from(kind.name())
            );
        }
    }
}
