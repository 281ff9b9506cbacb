//! Finding Claude Code and Codex sessions the way omp's session picker does
//! (`ClaudeSessionStore.list`, `CodexSessionStore.list`).
//!
//! Listing reads indexes and at most a bounded prefix of each transcript; files that vanish or
//! cannot be read while listing are left out, as omp leaves them out.

use crate::records::{Record, read_records};
use crate::value::{non_empty, string};
use crate::{Env, ForeignSessionInfo, Source};
use pi_session_types::JsonMap;
use serde_json::Value;
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// How much of a Claude transcript listing reads to find its `cwd`.
const CLAUDE_CWD_PREFIX_BYTES: u64 = 64 * 1024;

/// Node's `mtimeMs`/`birthtimeMs`: milliseconds with the sub-millisecond part as a fraction.
pub(crate) fn time_ms(time: std::io::Result<SystemTime>) -> Option<f64> {
    let time = time.ok()?;
    Some(match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => after.as_secs() as f64 * 1000.0 + f64::from(after.subsec_nanos()) / 1e6,
        Err(before) => {
            let d = before.duration();
            -(d.as_secs() as f64 * 1000.0 + f64::from(d.subsec_nanos()) / 1e6)
        }
    })
}

/// `mtimeMs` of a file (0 when unknown).
pub(crate) fn mtime_ms(metadata: &fs::Metadata) -> f64 {
    time_ms(metadata.modified()).unwrap_or(0.0)
}

/// `birthtimeMs`, falling back as Node's stat would give 0 where birth times are unknown.
fn birth_ms(metadata: &fs::Metadata) -> f64 {
    time_ms(metadata.created()).unwrap_or(0.0)
}

fn records_of(path: &Path) -> Vec<Record> {
    fs::read(path).map_or_else(|_| Vec::new(), |bytes| read_records(&bytes).0)
}

// ---------------------------------------------------------------------------------------------
// Claude Code
// ---------------------------------------------------------------------------------------------

/// Claude Code's data folder: `$CLAUDE_CONFIG_DIR` (trimmed, made absolute) or `~/.claude`; and
/// its config file (`<that>/.claude.json`, or `~/.claude.json` for the default folder).
pub fn claude_root(env: &Env) -> (PathBuf, PathBuf) {
    match env
        .var("CLAUDE_CONFIG_DIR")
        .map(|v| pi_session_types::js::trim(v).to_owned())
    {
        Some(dir) if !dir.is_empty() => {
            let root = env.resolve(Path::new(&dir));
            let config = root.join(".claude.json");
            (root, config)
        }
        _ => (env.home.join(".claude"), env.home.join(".claude.json")),
    }
}

#[derive(Debug, Default)]
struct HistoryMetadata {
    first_message: Option<String>,
    cwd: Option<String>,
    created: f64,
    modified: f64,
    message_count: u64,
}

/// `cleanPreview`: runs of whitespace become one space, trimmed; `None` when empty.
fn clean_preview(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if pi_session_types::js::is_js_whitespace(c) {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    let trimmed = pi_session_types::js::trim(&out);
    (!trimmed.is_empty()).then(|| trimmed.to_owned())
}

fn history_timestamp(value: &JsonMap) -> f64 {
    let raw = match value.get("timestamp") {
        None | Some(Value::Null) => value.get("ts"),
        some => some,
    };
    match raw {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => {
            pi_session_types::js::parse_date_string(s).map_or(0.0, |ms| ms as f64)
        }
        _ => 0.0,
    }
}

fn read_history(path: &Path) -> HashMap<String, HistoryMetadata> {
    let mut metadata: HashMap<String, HistoryMetadata> = HashMap::new();
    for Record { value, .. } in records_of(path) {
        let Some(id) = non_empty(&value, "sessionId").or_else(|| non_empty(&value, "session_id"))
        else {
            continue;
        };
        let timestamp = history_timestamp(&value);
        if timestamp <= 0.0 || timestamp.is_nan() {
            continue;
        }
        let text = non_empty(&value, "display")
            .or_else(|| non_empty(&value, "text"))
            .and_then(clean_preview);
        let cwd = non_empty(&value, "project").map(str::to_owned);
        let Some(previous) = metadata.get_mut(id) else {
            metadata.insert(
                id.to_owned(),
                HistoryMetadata {
                    first_message: text,
                    cwd,
                    created: timestamp,
                    modified: timestamp,
                    message_count: 1,
                },
            );
            continue;
        };
        if timestamp < previous.created {
            previous.created = timestamp;
            if text.is_some() {
                previous.first_message.clone_from(&text);
            }
        }
        previous.modified = previous.modified.max(timestamp);
        if previous.first_message.is_none() {
            previous.first_message = text;
        }
        previous.message_count += 1;
        if previous.cwd.is_none() {
            previous.cwd = cwd;
        }
    }
    metadata
}

fn registered_projects(config: &Path) -> Vec<String> {
    let Ok(bytes) = fs::read(config) else {
        return Vec::new();
    };
    let Ok(Value::Object(parsed)) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    match parsed.get("projects") {
        Some(Value::Object(projects)) => projects
            .keys()
            .filter(|p| Path::new(p).is_absolute())
            .cloned()
            .collect(),
        _ => Vec::new(),
    }
}

/// `projectCwd`: the registered project whose path, `/` → `-`, is the folder name; else the
/// folder name with every `-` read as `/` (when it starts with `-`).
fn project_cwd(encoded: &str, registered: &[String]) -> String {
    if let Some(exact) = registered.iter().find(|p| p.replace('/', "-") == encoded) {
        return exact.clone();
    }
    if encoded.starts_with('-') {
        encoded.replace('-', "/")
    } else {
        encoded.to_owned()
    }
}

/// `recordedCwd`: the first non-empty `cwd` in the first 64 KiB.
fn recorded_cwd(path: &Path) -> Option<String> {
    let file = fs::File::open(path).ok()?;
    let mut prefix = Vec::new();
    file.take(CLAUDE_CWD_PREFIX_BYTES)
        .read_to_end(&mut prefix)
        .ok()?;
    read_records(&prefix)
        .0
        .iter()
        .find_map(|r| non_empty(&r.value, "cwd").map(str::to_owned))
}

fn dir_entries(dir: &Path) -> Vec<fs::DirEntry> {
    fs::read_dir(dir).map_or_else(|_| Vec::new(), |entries| entries.flatten().collect())
}

fn is_dir_entry(entry: &fs::DirEntry) -> bool {
    entry.file_type().is_ok_and(|t| t.is_dir())
}

fn is_file_entry(entry: &fs::DirEntry) -> bool {
    entry.file_type().is_ok_and(|t| t.is_file())
}

fn jsonl_name(entry: &fs::DirEntry) -> bool {
    entry.file_name().to_string_lossy().ends_with(".jsonl")
}

/// The Claude Code sessions omp's picker lists, newest first.
pub(crate) fn list_claude(env: &Env) -> Vec<ForeignSessionInfo> {
    let (root, config) = claude_root(env);
    let history = read_history(&root.join("history.jsonl"));
    let registered = registered_projects(&config);
    let mut sessions = Vec::new();
    for container in ["projects", ".projects"] {
        for project in dir_entries(&root.join(container)) {
            if !is_dir_entry(&project) {
                continue;
            }
            let folder_cwd = project_cwd(&project.file_name().to_string_lossy(), &registered);
            for entry in dir_entries(&project.path()) {
                if is_file_entry(&entry) && jsonl_name(&entry) {
                    sessions.extend(claude_info(&entry.path(), &folder_cwd, &history));
                }
            }
        }
    }
    sort_sessions(&mut sessions, |s| s.path.to_string_lossy().into_owned());
    sessions
}

fn claude_info(
    path: &Path,
    folder_cwd: &str,
    history: &HashMap<String, HistoryMetadata>,
) -> Option<ForeignSessionInfo> {
    let metadata = fs::metadata(path).ok()?;
    let id = file_stem(path);
    let indexed = history.get(&id);
    let mtime = mtime_ms(&metadata);
    let birth = birth_ms(&metadata);
    let fallback_created = if birth != 0.0 { birth } else { mtime };
    Some(ForeignSessionInfo {
        source: Source::Claude,
        path: path.to_path_buf(),
        cwd: indexed
            .and_then(|h| h.cwd.clone())
            .or_else(|| recorded_cwd(path))
            .unwrap_or_else(|| folder_cwd.to_owned()),
        title: None,
        created_ms: indexed.map_or(fallback_created, |h| h.created),
        modified_ms: indexed.map_or(0.0, |h| h.modified).max(mtime),
        first_message: indexed.and_then(|h| h.first_message.clone()),
        message_count: indexed.map(|h| h.message_count),
        id,
    })
}

/// What the picker would say about one Claude Code transcript, wherever it is: the listing's
/// entry when it is in a listed folder, else the same rules applied to its own folder.
pub(crate) fn describe_claude(env: &Env, path: &Path) -> Option<ForeignSessionInfo> {
    let (root, config) = claude_root(env);
    let history = read_history(&root.join("history.jsonl"));
    let registered = registered_projects(&config);
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    claude_info(path, &project_cwd(&folder, &registered), &history)
}

fn file_stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".jsonl")
        .map_or(name.clone(), str::to_owned)
}

// ---------------------------------------------------------------------------------------------
// Codex
// ---------------------------------------------------------------------------------------------

/// Codex's data folder as omp 18.2.3 looks for it: `~/.codex`. (Codex itself honours
/// `$CODEX_HOME`; omp's `CodexSessionStore` does not, and neither do we.)
pub fn codex_root(env: &Env) -> PathBuf {
    env.home.join(".codex")
}

fn read_session_index(root: &Path) -> HashMap<String, (String, String)> {
    let mut index = HashMap::new();
    for Record { value, .. } in records_of(&root.join("session_index.jsonl")) {
        let (Some(id), Some(name), Some(updated)) = (
            non_empty(&value, "id"),
            non_empty(&value, "thread_name"),
            non_empty(&value, "updated_at"),
        ) else {
            continue;
        };
        index.insert(id.to_owned(), (name.to_owned(), updated.to_owned()));
    }
    index
}

fn rollout_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in dir_entries(dir) {
        if is_dir_entry(&entry) {
            rollout_files(&entry.path(), out);
        } else if is_file_entry(&entry) && jsonl_name(&entry) {
            out.push(entry.path());
        }
    }
}

/// `rolloutId`: the UUID at the end of the file name, else the file name.
fn rollout_id(path: &Path) -> String {
    let stem = file_stem(path);
    let bytes = stem.as_bytes();
    if bytes.len() >= 36 {
        let tail = &stem[stem.len() - 36..];
        let (head, rest) = tail.split_at(8);
        if head.bytes().all(|b| b.is_ascii_hexdigit())
            && rest.starts_with('-')
            && rest.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
        {
            return tail.to_owned();
        }
    }
    stem
}

/// The first JSON object of a file (omp reads until it finds one).
fn first_record(path: &Path) -> Option<JsonMap> {
    let bytes = fs::read(path).ok()?;
    read_records(&bytes).0.into_iter().next().map(|r| r.value)
}

/// The newest `state_<N>.sqlite` in the Codex folder.
fn state_database(root: &Path) -> Option<PathBuf> {
    dir_entries(root)
        .into_iter()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("state_")?.strip_suffix(".sqlite")?;
            if version.is_empty() || !version.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((version.parse::<f64>().ok()?, entry.path()))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, path)| path)
}

/// `dateFromEpoch`: seconds below 10¹⁰, else milliseconds; `fallback` when absent.
fn date_from_epoch(value: Option<f64>, fallback: f64) -> f64 {
    match value {
        Some(v) if v.is_finite() => (if v < 10_000_000_000.0 { v * 1000.0 } else { v }).trunc(),
        _ => fallback,
    }
}

/// A column as JavaScript would see a number (`null` and text are not numbers).
fn sql_number(value: rusqlite::types::ValueRef<'_>) -> Option<f64> {
    match value {
        rusqlite::types::ValueRef::Integer(i) => Some(i as f64),
        rusqlite::types::ValueRef::Real(r) => Some(r),
        _ => None,
    }
}

fn sql_text(value: rusqlite::types::ValueRef<'_>) -> Option<String> {
    match value {
        rusqlite::types::ValueRef::Text(text) => Some(String::from_utf8_lossy(text).into_owned()),
        _ => None,
    }
}

/// Codex's state index (the `threads` table of the newest `state_<N>.sqlite`), as omp reads it;
/// `None` when there is none, it cannot be read, or it lists nothing (omp then lists rollouts).
fn list_codex_state(root: &Path) -> Option<Vec<ForeignSessionInfo>> {
    use rusqlite::{Connection, OpenFlags};
    let database = state_database(root)?;
    let connection = Connection::open_with_flags(
        &database,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    let mut statement = connection
        .prepare("SELECT id, rollout_path, created_at, updated_at, cwd, title, first_user_message FROM threads")
        .ok()?;
    let mut rows = statement.query([]).ok()?;
    let mut sessions = Vec::new();
    while let Some(row) = rows.next().ok()? {
        let column = |at: usize| row.get_ref(at).ok();
        let text = |at: usize| column(at).and_then(sql_text);
        let (Some(id), Some(rollout), Some(cwd)) = (text(0), text(1), text(4)) else {
            continue;
        };
        if id.is_empty() || rollout.is_empty() || cwd.is_empty() {
            continue;
        }
        let path = if Path::new(&rollout).is_absolute() {
            PathBuf::from(rollout)
        } else {
            root.join(rollout)
        };
        let modified = date_from_epoch(column(3).and_then(sql_number), 0.0);
        sessions.push(ForeignSessionInfo {
            source: Source::Codex,
            id,
            path,
            cwd,
            title: text(5),
            created_ms: date_from_epoch(column(2).and_then(sql_number), modified),
            modified_ms: modified,
            first_message: text(6),
            message_count: None,
        });
    }
    sort_sessions(&mut sessions, |s| s.id.clone());
    (!sessions.is_empty()).then_some(sessions)
}

/// The Codex sessions omp's picker lists, newest first: from Codex's state index when it has
/// rows, else the rollouts whose first record is a `session_meta` with a `cwd`.
pub(crate) fn list_codex(env: &Env) -> Vec<ForeignSessionInfo> {
    let root = codex_root(env);
    if let Some(sessions) = list_codex_state(&root) {
        return sessions;
    }
    let index = read_session_index(&root);
    let mut files = Vec::new();
    for name in ["sessions", ".sessions", "archived_sessions"] {
        rollout_files(&root.join(name), &mut files);
    }
    let mut sessions: Vec<_> = files
        .iter()
        .filter_map(|path| codex_info(path, &index))
        .collect();
    sort_sessions(&mut sessions, |s| s.id.clone());
    sessions
}

fn codex_info(
    path: &Path,
    index: &HashMap<String, (String, String)>,
) -> Option<ForeignSessionInfo> {
    let first = first_record(path)?;
    if string(&first, "type") != Some("session_meta") {
        return None;
    }
    let payload = first.get("payload")?.as_object()?;
    let id = string(payload, "id").map_or_else(|| rollout_id(path), str::to_owned);
    let cwd = string(payload, "cwd").filter(|c| !c.is_empty())?;
    let metadata = fs::metadata(path).ok()?;
    let indexed = index.get(&id);
    let created = match string(payload, "timestamp") {
        Some(s) => pi_session_types::js::parse_date_string(s).map(|ms| ms as f64),
        None => None,
    }
    .unwrap_or_else(|| birth_ms(&metadata));
    let mtime = mtime_ms(&metadata);
    let modified = match indexed {
        Some((_, updated)) => {
            pi_session_types::js::parse_date_string(updated).map_or(mtime, |ms| ms as f64)
        }
        None => mtime.trunc(),
    };
    Some(ForeignSessionInfo {
        source: Source::Codex,
        id,
        path: path.to_path_buf(),
        cwd: cwd.to_owned(),
        title: indexed.map(|(name, _)| name.clone()),
        created_ms: created,
        modified_ms: modified,
        first_message: None,
        message_count: None,
    })
}

/// What the picker would say about one Codex rollout; `None` when omp would not offer it (its
/// first record is not a `session_meta` with a `cwd`).
pub(crate) fn describe_codex(env: &Env, path: &Path) -> Option<ForeignSessionInfo> {
    let root = codex_root(env);
    let indexed = list_codex_state(&root)
        .and_then(|sessions| sessions.into_iter().find(|info| info.path == path));
    indexed.or_else(|| codex_info(path, &read_session_index(&root)))
}

/// Newest first; ties by `key` (omp uses `localeCompare`; we compare code points).
fn sort_sessions(sessions: &mut [ForeignSessionInfo], key: impl Fn(&ForeignSessionInfo) -> String) {
    sessions.sort_by(|a, b| {
        b.modified_ms
            .total_cmp(&a.modified_ms)
            .then_with(|| key(a).cmp(&key(b)))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folders_decode_to_paths() {
        let registered = vec!["/home/a/my-app".to_owned()];
        assert_eq!(project_cwd("-home-a-my-app", &registered), "/home/a/my-app");
        assert_eq!(project_cwd("-home-a-other", &registered), "/home/a/other");
        assert_eq!(project_cwd("plain", &registered), "plain");
    }

    #[test]
    fn rollout_ids_come_from_the_file_name() {
        assert_eq!(
            rollout_id(Path::new(
                "/x/rollout-2025-01-01T00-00-00-0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
            )),
            "0197a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
        );
        assert_eq!(rollout_id(Path::new("/x/short.jsonl")), "short");
    }

    #[test]
    fn previews_collapse_whitespace() {
        assert_eq!(clean_preview("  a \n\t b ").as_deref(), Some("a b"));
        assert_eq!(clean_preview(" \n "), None);
    }
}
