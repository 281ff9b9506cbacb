//! How a command fails: a message for stderr and the exit code.

use std::fmt;

/// Exit code: the command did its job and found nothing wrong.
pub const EXIT_OK: u8 = 0;
/// Exit code: the command did its job and found damage (`check`, `cat`).
pub const EXIT_DAMAGED: u8 = 1;
/// Exit code: the command could not do its job (a file is missing or unreadable, no session
/// found, a bad argument).
pub const EXIT_FAILED: u8 = 2;

/// A failed command: what to print on stderr and the exit code.
#[derive(Debug)]
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// What went wrong and what to do.
    pub message: String,
}

impl Failure {
    /// The command could not do its job.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            code: EXIT_FAILED,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<pi_session::Error> for Failure {
    /// The message and its source (the OS error), each once.
    fn from(error: pi_session::Error) -> Self {
        Self::new(pi_session::error_chain(&error))
    }
}

impl From<pi_session::store::StoreError> for Failure {
    fn from(error: pi_session::store::StoreError) -> Self {
        Self::new(error.to_string())
    }
}

impl From<pi_session::tree::EntryReadError> for Failure {
    fn from(error: pi_session::tree::EntryReadError) -> Self {
        Self::new(error.to_string())
    }
}

/// What a finished command reports: an exit code (0 or [`EXIT_DAMAGED`]).
pub type Outcome = Result<u8, Failure>;
