//! Where cross-session commands look: omp's and pi's session roots (every project), and the
//! session files under folders given by hand.

use std::path::{Path, PathBuf};

use pi_session_store::StoreError;
use pi_session_store::paths::{self, home_dir, process_env};

use crate::error::Result;

/// How deep [`session_files_under`] descends below a folder it is given: a sessions root, its
/// project folders, and omp's per-session folders of subagent sessions below those.
pub const MAX_DEPTH: usize = 4;

/// The session roots of omp and pi with the process environment, as `(kind, root)`: omp's
/// `<agent dir>/sessions` (or its XDG variant), and pi's `PI_CODING_AGENT_SESSION_DIR` or
/// `<agent dir>/sessions`. Empty without a home directory.
pub fn session_roots() -> Vec<(&'static str, PathBuf)> {
    let Some(home) = home_dir() else {
        return Vec::new();
    };
    let pi = process_env("PI_CODING_AGENT_SESSION_DIR")
        .filter(|v| !v.is_empty())
        .map_or_else(
            || paths::pi_agent_dir(&process_env, &home).join("sessions"),
            PathBuf::from,
        );
    vec![
        ("omp", paths::omp_sessions_root(&process_env, &home)),
        ("pi", pi),
    ]
}

/// Every `*.jsonl` file named or found under the paths given (folders walked up to
/// [`MAX_DEPTH`] levels, symbolic links to folders not followed), sorted and without repeats.
/// A missing path is an error naming it; a missing default root is simply empty (pass only
/// existing roots).
pub fn session_files_under(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        let metadata =
            std::fs::metadata(path).map_err(|e| StoreError::io("could not read", path, e))?;
        if metadata.is_dir() {
            walk(path, 0, &mut files)?;
        } else {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

fn walk(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) -> Result<()> {
    let reader = std::fs::read_dir(dir).map_err(|e| StoreError::io("could not list", dir, e))?;
    for item in reader {
        let item = item.map_err(|e| StoreError::io("could not list", dir, e))?;
        let Ok(kind) = item.file_type() else {
            continue;
        };
        let path = item.path();
        if kind.is_dir() {
            if depth < MAX_DEPTH {
                walk(&path, depth + 1, files)?;
            }
        } else if path.extension().is_some_and(|ext| ext == "jsonl")
            && (kind.is_file() || path.is_file())
        {
            files.push(path);
        }
    }
    Ok(())
}
