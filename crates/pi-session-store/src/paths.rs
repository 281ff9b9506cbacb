//! Where pi and omp keep session files, and what they call them.
//!
//! Every rule here is a pure function of its inputs (environment lookups are passed in as a
//! closure) so hosts can test them, plus thin `*_from_env` conveniences that read the real
//! process environment. Nothing here creates a directory: pi and omp `mkdir -p` as a side effect
//! of computing a path; the store only creates directories on the first append.
//!
//! ```
//! use pi_session_store::paths;
//! assert_eq!(paths::pi_cwd_dir_name("/home/alice/proj"), "--home-alice-proj--");
//! assert_eq!(
//!     paths::session_file_name("2026-03-15T22:40:18.123Z", "0195f3a2-0000-7000-8000-000000000000"),
//!     "2026-03-15T22-40-18-123Z_0195f3a2-0000-7000-8000-000000000000.jsonl"
//! );
//! ```

use std::path::{Component, Path, PathBuf};

/// The file name pi and omp give a session: the header timestamp with `:` and `.` replaced by
/// `-`, an underscore, the session id, and `.jsonl`.
pub fn session_file_name(header_timestamp: &str, session_id: &str) -> String {
    format!(
        "{}_{session_id}.jsonl",
        header_timestamp.replace([':', '.'], "-")
    )
}

/// A hidden name beside `path`, unique to this process and call: `.<name>.<pid>.<n>.<what>`
/// (the writer's temporary files, and the file it claims omp's publish lock with).
pub(crate) fn hidden_beside(path: &Path, what: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}.{n}.{what}", std::process::id()))
}

/// pi's per-project folder name for a working directory (pi.md §1.1): drop one leading `/` or
/// `\`, replace every `/`, `\` and `:` with `-`, and wrap in `--`. The cwd is used verbatim.
///
/// ```
/// use pi_session_store::paths::pi_cwd_dir_name;
/// assert_eq!(pi_cwd_dir_name("C:\\Users\\bob\\x"), "--C--Users-bob-x--");
/// assert_eq!(pi_cwd_dir_name("/"), "----");
/// ```
pub fn pi_cwd_dir_name(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    format!("--{}--", encode_separators(trimmed))
}

/// pi's agent directory: `PI_CODING_AGENT_DIR` (a leading `~` or `~/` expanded), else
/// `<home>/.pi/agent`.
pub fn pi_agent_dir(env: &dyn Fn(&str) -> Option<String>, home: &Path) -> PathBuf {
    match env("PI_CODING_AGENT_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => expand_tilde(&dir, home),
        None => home.join(".pi").join("agent"),
    }
}

/// pi's session folder for a working directory: `PI_CODING_AGENT_SESSION_DIR` (tilde-expanded,
/// one flat folder for every project) when set, else `<agent dir>/sessions/--<cwd>--`.
pub fn pi_session_dir(env: &dyn Fn(&str) -> Option<String>, home: &Path, cwd: &str) -> PathBuf {
    if let Some(dir) = env("PI_CODING_AGENT_SESSION_DIR").filter(|v| !v.is_empty()) {
        return expand_tilde(&dir, home);
    }
    pi_agent_dir(env, home)
        .join("sessions")
        .join(pi_cwd_dir_name(cwd))
}

/// [`pi_session_dir`] with the process environment and home directory.
pub fn pi_session_dir_from_env(cwd: &str) -> Option<PathBuf> {
    let home = home_dir()?;
    Some(pi_session_dir(&process_env, &home, cwd))
}

/// omp's agent directory (omp.md §1.1) without XDG: `OMP_PROFILE` (else `PI_PROFILE`) selects
/// `<home>/<config>/profiles/<name>/agent`; otherwise `PI_CODING_AGENT_DIR` if set, else
/// `<home>/<config>/agent`, where `<config>` is `PI_CONFIG_DIR` or `.omp`.
pub fn omp_agent_dir(env: &dyn Fn(&str) -> Option<String>, home: &Path) -> PathBuf {
    let config_root = home.join(
        env("PI_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| ".omp".to_owned()),
    );
    if let Some(profile) = omp_profile(env) {
        return config_root.join("profiles").join(profile).join("agent");
    }
    match env("PI_CODING_AGENT_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => absolute(Path::new(&dir)),
        None => config_root.join("agent"),
    }
}

/// omp's sessions root: `<agent dir>/sessions`, or `$XDG_DATA_HOME/omp/sessions` (the `agent/`
/// level dropped) on Linux and macOS when the agent dir is the default one and
/// `$XDG_DATA_HOME/omp` exists (for a named profile: `$XDG_DATA_HOME/omp/profiles/<name>`).
pub fn omp_sessions_root(env: &dyn Fn(&str) -> Option<String>, home: &Path) -> PathBuf {
    let agent_dir = omp_agent_dir(env, home);
    if cfg!(any(target_os = "linux", target_os = "macos"))
        && agent_dir == omp_default_agent_dir(env, home)
        && let Some(xdg) = env("XDG_DATA_HOME").filter(|v| !v.is_empty())
    {
        let app_root = Path::new(&xdg).join("omp");
        let root = match omp_profile(env) {
            Some(profile) => app_root.join("profiles").join(profile),
            None => app_root,
        };
        if root.exists() {
            return root.join("sessions");
        }
    }
    agent_dir.join("sessions")
}

/// omp's bucket name for a working directory (omp.md §1.1), from already-canonical paths:
/// inside home gives `-<rel>` (home itself gives `-`), else inside the temp dir gives
/// `-tmp-<rel>` (`-tmp` for the temp dir itself), else `--<abs>--`; `/`, `\` and `:` become `-`.
///
/// ```
/// use pi_session_store::paths::omp_cwd_dir_name;
/// use std::path::Path;
/// let (home, tmp) = (Path::new("/home/al"), Path::new("/tmp"));
/// assert_eq!(omp_cwd_dir_name(Path::new("/home/al/proj/foo"), home, tmp), "-proj-foo");
/// assert_eq!(omp_cwd_dir_name(Path::new("/home/al"), home, tmp), "-");
/// assert_eq!(omp_cwd_dir_name(Path::new("/tmp/x"), home, tmp), "-tmp-x");
/// assert_eq!(omp_cwd_dir_name(Path::new("/srv/app"), home, tmp), "--srv-app--");
/// ```
pub fn omp_cwd_dir_name(
    canonical_cwd: &Path,
    canonical_home: &Path,
    canonical_tmp: &Path,
) -> String {
    if let Ok(rel) = canonical_cwd.strip_prefix(canonical_home) {
        return relative_bucket("-", rel);
    }
    if let Ok(rel) = canonical_cwd.strip_prefix(canonical_tmp) {
        return relative_bucket("-tmp", rel);
    }
    let text = canonical_cwd.to_string_lossy();
    let trimmed = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    format!("--{}--", encode_separators(trimmed))
}

/// omp's session folder for `cwd` with the process environment: the cwd, home and temp dir are
/// made absolute and canonical (symlinks resolved, falling back to the plain path), then named
/// by [`omp_cwd_dir_name`] under [`omp_sessions_root`].
pub fn omp_session_dir_from_env(cwd: &Path) -> Option<PathBuf> {
    let home = home_dir()?;
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| absolute(p));
    let bucket = omp_cwd_dir_name(
        &canonical(cwd),
        &canonical(&home),
        &canonical(&std::env::temp_dir()),
    );
    Some(omp_sessions_root(&process_env, &home).join(bucket))
}

/// The current user's home directory (`HOME`, or the platform's notion of it).
pub fn home_dir() -> Option<PathBuf> {
    std::env::home_dir()
}

/// Looks a variable up in the process environment (non-UTF-8 values count as unset).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn omp_default_agent_dir(env: &dyn Fn(&str) -> Option<String>, home: &Path) -> PathBuf {
    let config_root = home.join(
        env("PI_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| ".omp".to_owned()),
    );
    match omp_profile(env) {
        Some(profile) => config_root.join("profiles").join(profile).join("agent"),
        None => config_root.join("agent"),
    }
}

/// The omp profile: `OMP_PROFILE` when set (even empty), else `PI_PROFILE`; `default`, empty and
/// invalid names (omp: `^[a-z0-9][a-z0-9._-]{0,63}$`, not ending in `.`) mean no profile.
fn omp_profile(env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let raw = env("OMP_PROFILE").or_else(|| env("PI_PROFILE"))?;
    let name = raw.trim();
    let valid = !name.is_empty()
        && name != "default"
        && name.len() <= 64
        && !name.ends_with('.')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        });
    valid.then(|| name.to_owned())
}

fn relative_bucket(prefix: &str, rel: &Path) -> String {
    let parts: Vec<String> = rel
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .map(|c| encode_separators(&c.as_os_str().to_string_lossy()))
        .collect();
    if parts.is_empty() {
        return prefix.to_owned();
    }
    let encoded = parts.join("-");
    if prefix.ends_with('-') {
        format!("{prefix}{encoded}")
    } else {
        format!("{prefix}-{encoded}")
    }
}

fn encode_separators(text: &str) -> String {
    text.replace(['/', '\\', ':'], "-")
}

fn expand_tilde(path: &str, home: &Path) -> PathBuf {
    if path == "~" {
        home.to_path_buf()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home.join(rest)
    } else {
        PathBuf::from(path)
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn pi_dir_names_follow_the_spec_examples() {
        assert_eq!(pi_cwd_dir_name("/home/alice/proj"), "--home-alice-proj--");
        assert_eq!(pi_cwd_dir_name("C:\\Users\\bob\\x"), "--C--Users-bob-x--");
        assert_eq!(pi_cwd_dir_name("/"), "----");
        assert_eq!(
            pi_cwd_dir_name("/a-b"),
            pi_cwd_dir_name("/a/b"),
            "pi does not escape, so these collide"
        );
    }

    #[test]
    fn pi_agent_dir_honours_the_env_and_tilde() {
        let home = Path::new("/home/al");
        assert_eq!(
            pi_agent_dir(&env_of(&[]), home),
            Path::new("/home/al/.pi/agent")
        );
        assert_eq!(
            pi_agent_dir(&env_of(&[("PI_CODING_AGENT_DIR", "~/x")]), home),
            Path::new("/home/al/x")
        );
        assert_eq!(
            pi_agent_dir(&env_of(&[("PI_CODING_AGENT_DIR", "~")]), home),
            Path::new("/home/al")
        );
        assert_eq!(
            pi_session_dir(&env_of(&[]), home, "/w/p"),
            Path::new("/home/al/.pi/agent/sessions/--w-p--")
        );
        assert_eq!(
            pi_session_dir(
                &env_of(&[("PI_CODING_AGENT_SESSION_DIR", "~/s")]),
                home,
                "/w/p"
            ),
            Path::new("/home/al/s")
        );
    }

    #[test]
    fn omp_agent_dir_honours_profile_config_dir_and_override() {
        let home = Path::new("/h");
        assert_eq!(
            omp_agent_dir(&env_of(&[]), home),
            Path::new("/h/.omp/agent")
        );
        assert_eq!(
            omp_agent_dir(&env_of(&[("PI_CONFIG_DIR", ".x")]), home),
            Path::new("/h/.x/agent")
        );
        assert_eq!(
            omp_agent_dir(&env_of(&[("OMP_PROFILE", "work")]), home),
            Path::new("/h/.omp/profiles/work/agent")
        );
        assert_eq!(
            omp_agent_dir(
                &env_of(&[("OMP_PROFILE", ""), ("PI_PROFILE", "work")]),
                home
            ),
            Path::new("/h/.omp/agent"),
            "an explicitly empty OMP_PROFILE selects the default profile"
        );
        assert_eq!(
            omp_agent_dir(&env_of(&[("PI_PROFILE", "Bad/Name")]), home),
            Path::new("/h/.omp/agent")
        );
        assert_eq!(
            omp_agent_dir(&env_of(&[("PI_CODING_AGENT_DIR", "/c")]), home),
            Path::new("/c")
        );
        assert_eq!(
            omp_agent_dir(
                &env_of(&[("PI_CODING_AGENT_DIR", "/c"), ("OMP_PROFILE", "p")]),
                home
            ),
            Path::new("/h/.omp/profiles/p/agent"),
            "the override applies to the default profile only"
        );
    }

    #[test]
    fn omp_sessions_root_uses_xdg_only_when_its_folder_exists() {
        let xdg = tempfile::tempdir().unwrap();
        let home = Path::new("/h");
        let xdg_str = xdg.path().to_string_lossy().into_owned();
        let env = env_of(&[("XDG_DATA_HOME", &xdg_str)]);
        assert_eq!(
            omp_sessions_root(&env, home),
            Path::new("/h/.omp/agent/sessions")
        );
        std::fs::create_dir(xdg.path().join("omp")).unwrap();
        if cfg!(any(target_os = "linux", target_os = "macos")) {
            assert_eq!(
                omp_sessions_root(&env, home),
                xdg.path().join("omp").join("sessions")
            );
        }
        let overridden = env_of(&[("XDG_DATA_HOME", &xdg_str), ("PI_CODING_AGENT_DIR", "/c")]);
        assert_eq!(
            omp_sessions_root(&overridden, home),
            Path::new("/c/sessions")
        );
    }

    #[test]
    fn omp_buckets_prefer_home_then_tmp_then_absolute() {
        let (home, tmp) = (Path::new("/home/al"), Path::new("/home/al/t"));
        assert_eq!(
            omp_cwd_dir_name(Path::new("/home/al/t/x"), home, tmp),
            "-t-x",
            "home check runs first"
        );
        assert_eq!(
            omp_cwd_dir_name(Path::new("/tmp"), Path::new("/home/al"), Path::new("/tmp")),
            "-tmp"
        );
        assert_eq!(
            omp_cwd_dir_name(Path::new("/home/alice"), home, Path::new("/tmp")),
            "--home-alice--"
        );
        assert_eq!(
            omp_cwd_dir_name(Path::new("/srv/a:b"), home, Path::new("/tmp")),
            "--srv-a-b--"
        );
    }

    #[test]
    fn file_names_replace_colons_and_dots() {
        assert_eq!(
            session_file_name("2026-09-27T12:34:56.789Z", "id"),
            "2026-09-27T12-34-56-789Z_id.jsonl"
        );
    }
}
