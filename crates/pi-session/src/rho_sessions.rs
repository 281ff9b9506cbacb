//! Where the Rust agent keeps its own sessions (agent-session-design.md, "Where sessions live"):
//! `~/.rho/sessions/<project hash>/<unix-seconds>_<session-id>.jsonl`, the project hash being
//! the first 16 hex characters of the SHA-256 of the canonical project root. This is the third
//! layout beside omp's and pi's ([`crate::ProjectFolders`]); the files are ordinary session
//! files.
//!
//! Nothing here reads the process environment: the home folder is passed in (a host takes it
//! from `pi_session::store::paths::home_dir()` or its own configuration).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use sha2::{Digest as _, Sha256};

use crate::error::{Error, Result};

/// The root of the layout for the user whose home is `home`: `<home>/.rho/sessions`.
pub fn rho_sessions_root(home: &Path) -> PathBuf {
    home.join(".rho").join("sessions")
}

/// The project hash of `project_root`: the first 16 lowercase hex characters of the SHA-256 of
/// its canonical path (the path as given when it cannot be canonicalised, e.g. it is gone).
///
/// ```
/// let hash = pi_session::rho_project_hash(std::path::Path::new("/no/such/project"));
/// assert_eq!(hash.len(), 16);
/// assert_eq!(hash, pi_session::rho_project_hash(std::path::Path::new("/no/such/project")));
/// ```
pub fn rho_project_hash(project_root: &Path) -> String {
    let canonical = std::fs::canonicalize(project_root).unwrap_or_else(|_| project_root.into());
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The folder of `project_root`'s sessions: `<home>/.rho/sessions/<project hash>`.
pub fn rho_session_dir(home: &Path, project_root: &Path) -> PathBuf {
    rho_sessions_root(home).join(rho_project_hash(project_root))
}

/// The file name of a new session: `<unix-seconds>_<session-id>.jsonl`.
///
/// ```
/// assert_eq!(pi_session::rho_session_file_name(1777859536, "4b021d5d"), "1777859536_4b021d5d.jsonl");
/// ```
pub fn rho_session_file_name(unix_seconds: u64, session_id: &str) -> String {
    format!("{unix_seconds}_{session_id}.jsonl")
}

/// One session of a project, as [`list_sessions`] gives it (the design's
/// `{path, mtimeSecs, sizeKb, entryCount}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// The file.
    pub path: PathBuf,
    /// Its modification time, in seconds since the Unix epoch.
    pub mtime_secs: u64,
    /// Its size in bytes ([`SessionInfo::size_kb`] rounds it up to KiB).
    pub size_bytes: u64,
    /// Its entries: the non-blank lines after the header, counted without parsing them.
    pub entry_count: u64,
}

impl SessionInfo {
    /// The size in KiB, rounded up.
    pub fn size_kb(&self) -> u64 {
        self.size_bytes.div_ceil(1024)
    }
}

/// The sessions of `project_root` in the layout under `home`, newest first (by modification
/// time). Only each file's header is parsed (files without a session header are left out); the
/// entry count comes from counting lines. A project without sessions lists as empty.
pub fn list_sessions(home: &Path, project_root: &Path) -> Result<Vec<SessionInfo>> {
    list_sessions_in(&rho_session_dir(home, project_root))
}

/// [`list_sessions`] of one folder.
pub fn list_sessions_in(dir: &Path) -> Result<Vec<SessionInfo>> {
    let (listings, _) = pi_session_store::list(dir)?;
    listings
        .into_iter()
        .map(|listing| {
            let mtime_secs = listing
                .modified
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            Ok(SessionInfo {
                entry_count: count_entries(&listing.path)?,
                path: listing.path,
                mtime_secs,
                size_bytes: listing.size,
            })
        })
        .collect()
}

/// The most recently modified session of `project_root` in the layout under `home`, reading
/// only headers.
pub fn find_latest_session(home: &Path, project_root: &Path) -> Result<Option<PathBuf>> {
    crate::latest(rho_session_dir(home, project_root))
}

/// The line a host prints when it creates a new session and the project has `previous` older
/// ones, as the design words it; `resume` is the command that resumes the latest (e.g.
/// `rho -c`). `None` without previous sessions.
///
/// ```
/// assert_eq!(
///     pi_session::startup_hint(3, "rho -c").unwrap(),
///     "(3 previous session(s) for this project — use rho -c to resume the latest)"
/// );
/// assert_eq!(pi_session::startup_hint(0, "rho -c"), None);
/// ```
pub fn startup_hint(previous: usize, resume: &str) -> Option<String> {
    (previous > 0).then(|| {
        format!(
            "({previous} previous session(s) for this project — use {resume} to resume the latest)"
        )
    })
}

/// Non-blank lines after the first (the header), counted in 64 KiB reads.
fn count_entries(path: &Path) -> Result<u64> {
    let io = |e| Error::io(format!("could not read {}", path.display()), e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut buffer = vec![0u8; 64 * 1024];
    let (mut lines, mut in_line) = (0u64, false);
    loop {
        let read = file.read(&mut buffer).map_err(io)?;
        if read == 0 {
            break;
        }
        for &byte in &buffer[..read] {
            match byte {
                b'\n' => {
                    lines += u64::from(in_line);
                    in_line = false;
                }
                b' ' | b'\t' | b'\r' => {}
                _ => in_line = true,
            }
        }
    }
    lines += u64::from(in_line);
    Ok(lines.saturating_sub(1))
}
