//! Finding sessions (rho-reqllm.md §A.5; pi.md §1.8; omp.md §1.1, §1.13): rho's `dir`, `list`
//! and `latest`, and the default session folders of omp and pi for a working directory. The
//! store owns listing and the folder rules; these functions give them rho's names.

use std::path::{Path, PathBuf};

use pi_session_store::paths;
use pi_session_store::{ListProblem, SessionListing};

use crate::error::Result;

/// rho's `dir/0`: the sessions folder under a host's data directory (`<data dir>/sessions`).
pub fn dir(data_dir: impl AsRef<Path>) -> PathBuf {
    data_dir.as_ref().join("sessions")
}

/// rho's `list/1`: the sessions in `dir` (reading only each file's first lines), most recently
/// modified first, and the `.jsonl` files that are not sessions. A missing folder lists as
/// empty.
pub fn list(dir: impl AsRef<Path>) -> Result<(Vec<SessionListing>, Vec<ListProblem>)> {
    Ok(pi_session_store::list(dir)?)
}

/// The sessions of every project folder directly under a sessions root (pi's `listAll`, omp's
/// `*/*.jsonl`; e.g. `~/.omp/agent/sessions`), and files directly in the root, newest first.
pub fn list_all(root: impl AsRef<Path>) -> Result<(Vec<SessionListing>, Vec<ListProblem>)> {
    Ok(pi_session_store::list_all(root)?)
}

/// Where omp keeps the blobs (`blob:sha256:` image references) of the session file `session`:
/// a `blobs` folder beside the file (the layout of recorded fixtures), else omp's own layout,
/// `<agent dir>/blobs` for `<agent dir>/sessions/<bucket>/<file>`. `None` when neither exists.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let agent = dir.path().join("agent");
/// std::fs::create_dir_all(agent.join("sessions/-proj")).unwrap();
/// std::fs::create_dir_all(agent.join("blobs")).unwrap();
/// let file = agent.join("sessions/-proj/s.jsonl");
/// assert_eq!(pi_session::blob_dir(&file), Some(agent.join("blobs")));
/// ```
pub fn blob_dir(session: &Path) -> Option<PathBuf> {
    let folder = session.parent()?;
    let beside = folder.join("blobs");
    if beside.is_dir() {
        return Some(beside);
    }
    let agent = folder.parent()?.parent()?.join("blobs");
    agent.is_dir().then_some(agent)
}

/// rho's `latest/1`: the most recently modified session in `dir`, if any.
pub fn latest(dir: impl AsRef<Path>) -> Result<Option<PathBuf>> {
    Ok(pi_session_store::latest(dir)?.map(|listing| listing.path))
}

/// Where omp and pi keep the sessions of a working directory, omp's first (the order `omp -c`
/// and then pi would look).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFolders {
    /// omp's bucket for the directory (`~/.omp/agent/sessions/-<path>` and its variants).
    pub omp: Option<PathBuf>,
    /// pi's folder for the directory (`~/.pi/agent/sessions/--<path>--`).
    pub pi: Option<PathBuf>,
}

impl ProjectFolders {
    /// The folders for `cwd` with the process environment (`HOME`, `PI_CODING_AGENT_DIR`,
    /// `OMP_PROFILE`, XDG, ...).
    pub fn for_cwd(cwd: &Path) -> Self {
        Self {
            omp: paths::omp_session_dir_from_env(cwd),
            pi: paths::pi_session_dir_from_env(&cwd.to_string_lossy()),
        }
    }

    /// The default folders for `cwd` of a user whose home is `home`, as omp and pi use them
    /// when none of their variables is set. Reads no environment variable.
    ///
    /// ```
    /// use pi_session::ProjectFolders;
    /// use std::path::Path;
    /// let folders = ProjectFolders::with_home(Path::new("/home/al"), Path::new("/home/al/proj"));
    /// assert_eq!(folders.omp.unwrap(), Path::new("/home/al/.omp/agent/sessions/-proj"));
    /// assert_eq!(folders.pi.unwrap(), Path::new("/home/al/.pi/agent/sessions/--home-al-proj--"));
    /// ```
    pub fn with_home(home: &Path, cwd: &Path) -> Self {
        Self::with_env(home, cwd, &|_| None)
    }

    /// The folders for `cwd` with `home` and the variables `env` answers (`PI_CODING_AGENT_DIR`,
    /// `OMP_PROFILE`, `PI_CONFIG_DIR`, `XDG_DATA_HOME`, `TMPDIR`, ...) instead of the process
    /// environment. Paths are canonicalised where they exist.
    pub fn with_env(home: &Path, cwd: &Path, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let tmp = env("TMPDIR")
            .filter(|t| !t.is_empty())
            .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        let bucket = paths::omp_cwd_dir_name(&canonical(cwd), &canonical(home), &canonical(&tmp));
        Self {
            omp: Some(paths::omp_sessions_root(env, home).join(bucket)),
            pi: Some(paths::pi_session_dir(env, home, &cwd.to_string_lossy())),
        }
    }

    /// The folders that are set, omp's first.
    pub fn all(&self) -> Vec<&Path> {
        [self.omp.as_deref(), self.pi.as_deref()]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// The most recent session of a working directory, like `omp -c`: the latest in omp's folder,
/// else the latest in pi's. `Ok(None)` when neither holds one (the folders are in
/// [`ProjectFolders::for_cwd`], to say where it looked).
pub fn latest_for_cwd(cwd: &Path) -> Result<Option<PathBuf>> {
    ProjectFolders::for_cwd(cwd).latest()
}

impl ProjectFolders {
    /// The most recent session in these folders: omp's latest, else pi's (like `omp -c`).
    pub fn latest(&self) -> Result<Option<PathBuf>> {
        for folder in self.all() {
            if let Some(path) = latest(folder)? {
                return Ok(Some(path));
            }
        }
        Ok(None)
    }
}

/// The sessions roots of omp and pi (every project's folders live under them): omp's
/// `<agent dir>/sessions` (or its XDG place), then pi's `<agent dir>/sessions`, then pi's
/// `PI_CODING_AGENT_SESSION_DIR` when set. `env` and `home` are passed in so a caller (or a test)
/// decides what environment counts; [`session_roots_from_env`] uses the process's.
///
/// ```
/// use std::path::{Path, PathBuf};
/// let none = |_: &str| None;
/// assert_eq!(pi_session::session_roots(&none, Path::new("/home/u")), vec![
///     ("omp", PathBuf::from("/home/u/.omp/agent/sessions")),
///     ("pi", PathBuf::from("/home/u/.pi/agent/sessions")),
/// ]);
/// let flat = |name: &str| (name == "PI_CODING_AGENT_SESSION_DIR").then(|| "~/all".to_owned());
/// assert_eq!(pi_session::session_roots(&flat, Path::new("/home/u"))[2], ("pi", PathBuf::from("/home/u/all")));
/// ```
pub fn session_roots(
    env: &dyn Fn(&str) -> Option<String>,
    home: &Path,
) -> Vec<(&'static str, PathBuf)> {
    let mut roots = vec![
        ("omp", paths::omp_sessions_root(env, home)),
        ("pi", paths::pi_agent_dir(env, home).join("sessions")),
    ];
    if env("PI_CODING_AGENT_SESSION_DIR").is_some_and(|v| !v.is_empty()) {
        // The flat folder for every project (pi_session_dir ignores the cwd then).
        roots.push(("pi", paths::pi_session_dir(env, home, "")));
    }
    roots
}

/// [`session_roots`] with the process environment; empty when `HOME` is not set.
pub fn session_roots_from_env() -> Vec<(&'static str, PathBuf)> {
    paths::home_dir().map_or_else(Vec::new, |home| session_roots(&paths::process_env, &home))
}
