//! Where cross-session commands look (the roots are [`crate::session_roots`]): the
//! session files under folders given by hand.

use std::path::{Path, PathBuf};

use pi_session_store::StoreError;

use crate::error::Result;

/// How deep [`session_files_under`] descends below a folder it is given: a sessions root, its
/// project folders, and omp's per-session folders of subagent sessions below those.
pub const MAX_DEPTH: usize = 4;

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
