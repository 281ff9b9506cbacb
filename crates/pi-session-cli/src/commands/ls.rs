//! `pi-session ls`: the sessions in a folder (by default, the current project's omp, pi and
//! rho folders), newest first, with what pi's and omp's resume pickers show (name or first message,
//! message count, model, omp's status), read from a bounded prefix and tail of each file
//! ([`pi_session::summaries`]).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use clap::Args;
use pi_session::store::ListProblem;
use pi_session::types::IsoTimestamp;
use pi_session::{ProjectFolders, SessionSummary, summaries, summaries_in, system_ms};
use serde::Serialize;

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input::diagnostic_line;
use crate::output::{Out, warn};
use crate::progress::Progress;

// Arguments of `ls` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct LsArgs {
    /// A folder of sessions, or of project folders of sessions (an omp or pi `sessions`
    /// folder). Default: the current directory's omp, pi and rho
    /// (`~/.rho/sessions/<project hash>`) session folders.
    pub dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// List Claude Code's or Codex's sessions instead, as omp's session picker finds them
    /// (`$CLAUDE_CONFIG_DIR` or `~/.claude`; `~/.codex`). Import one with `pi-session import`.
    #[arg(long, value_name = "claude|codex", conflicts_with = "dir")]
    pub foreign: Option<pi_session::foreign::Source>,
    /// Where sessions are kept (`--store redis://…`, `--prefix`); with a Redis store, DIR is a
    /// folder as omp names session paths (default: every session under the prefix).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
}

/// One folder to list and whose it is.
struct Folder {
    path: PathBuf,
    kind: &'static str,
}

/// Runs `ls`.
pub fn run(args: LsArgs) -> Outcome {
    if let Some(source) = args.foreign {
        return super::import::list_foreign(source, args.json);
    }
    let store = args.store.open()?;
    let folders = match &args.dir {
        _ if !args.store.is_files() => vec![Folder {
            path: args.dir.clone().unwrap_or_default(),
            kind: "store",
        }],
        Some(dir) => folders_under(dir)?,
        None => {
            let cwd = std::env::current_dir()
                .map_err(|e| Failure::new(format!("could not read the current directory: {e}")))?;
            let project = ProjectFolders::for_cwd(&cwd);
            let omp = project.omp.map(|path| Folder { path, kind: "omp" });
            let pi = project.pi.map(|path| Folder { path, kind: "pi" });
            // The Rust agent's own layout, ~/.rho/sessions/<project hash>.
            let rho = pi_session::store::paths::home_dir().map(|home| Folder {
                path: pi_session::rho_session_dir(&home, &cwd),
                kind: "rho",
            });
            omp.into_iter().chain(pi).chain(rho).collect()
        }
    };
    let progress = Progress::new(folders.len(), "listing");
    let mut listed = Vec::new();
    for folder in folders {
        progress.step(&folder.path.display().to_string());
        let (sessions, skipped) = if args.store.is_files() {
            summaries(&folder.path)?
        } else {
            summaries_in(&store, args.dir.as_deref())?
        };
        listed.push((folder, sessions, skipped));
    }
    progress.finish();
    let mut out = Out::new();
    if args.json {
        // Serialised straight from the summaries (no JSON tree of 10,000 sessions first).
        let folders: Vec<FolderJson<'_>> = listed
            .iter()
            .map(|(folder, sessions, skipped)| FolderJson {
                path: &folder.path,
                kind: folder.kind,
                sessions: sessions.iter().map(SessionJson::of).collect(),
                skipped: skipped.iter().map(ProblemJson::of).collect(),
            })
            .collect();
        out.json(&ListJson { folders })?;
    } else {
        let show_empty = args.dir.is_none() || listed.len() == 1;
        for (folder, sessions, skipped) in &listed {
            for problem in skipped {
                warn(&diagnostic_line(&problem.path, &problem.diagnostic));
            }
            if sessions.is_empty() && !show_empty {
                continue;
            }
            out.line(&format!(
                "{} ({}): {}",
                folder.path.display(),
                folder.kind,
                count(sessions.len())
            ))?;
            for session in sessions {
                out.line(&row(session))?;
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// `dir` itself, then each folder directly inside it (project folders of a sessions root),
/// sorted; the ones without sessions are left out of the table later.
fn folders_under(dir: &Path) -> Result<Vec<Folder>, Failure> {
    if !dir.is_dir() {
        return Err(Failure::new(format!(
            "{} is not a folder; name a folder of session files",
            dir.display()
        )));
    }
    let mut folders = vec![Folder {
        path: dir.to_path_buf(),
        kind: "dir",
    }];
    let read = std::fs::read_dir(dir)
        .map_err(|e| Failure::new(format!("could not list {}: {e}", dir.display())))?;
    let mut inner: Vec<PathBuf> = read
        .filter_map(Result::ok)
        .filter(|item| item.file_type().is_ok_and(|t| t.is_dir()))
        .map(|item| item.path())
        .collect();
    inner.sort();
    folders.extend(inner.into_iter().map(|path| Folder { path, kind: "dir" }));
    Ok(folders)
}

fn count(n: usize) -> String {
    if n == 1 {
        "1 session".to_owned()
    } else {
        format!("{n} sessions")
    }
}

/// `2026-10-07 00:45:40  12.3 KiB  01a113d2  title  file-name  [12 msgs, complete, model]`:
/// the name, else the first message (quoted), and after the file name what the pickers add.
fn row(summary: &SessionSummary) -> String {
    let session = &summary.listing;
    let when = when(&iso(session.modified));
    let id: String = session.id.chars().take(8).collect();
    let title = match (&summary.name, summary.label()) {
        (Some(name), _) if !name.is_empty() => name.clone(),
        (_, Some(first)) if !first.is_empty() => format!("\"{}\"", clip(first, LABEL_CHARS)),
        _ => "(untitled)".to_owned(),
    };
    let name = session
        .path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let messages = format!(
        "{}{} msg{}",
        if summary.message_count_exact {
            ""
        } else {
            ">="
        },
        summary.message_count,
        if summary.message_count == 1 { "" } else { "s" }
    );
    let mut facts = vec![messages, summary.status.as_str().to_owned()];
    facts.extend(summary.model.clone());
    format!(
        "  {when}  {:>9}  {id:<8}  {title}  {name}  [{}]",
        size(session.size),
        facts.join(", ")
    )
}

/// `2026-10-07 00:45:40` for an ISO time: the first column of every listing.
pub(crate) fn when(iso: &str) -> String {
    iso.get(..19).unwrap_or(iso).replace('T', " ")
}

/// The most characters of a first message shown in the table.
const LABEL_CHARS: usize = 60;

/// `text` cut to `max` characters, with `…` when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    #[allow(clippy::cast_precision_loss, reason = "a rounded size for people")]
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A file time as ISO 8601 (`""` when out of range).
pub(crate) fn iso(time: SystemTime) -> String {
    IsoTimestamp::from_unix_ms(system_ms(time)).map_or_else(String::new, |t| t.as_str().to_owned())
}

/// `ls --json`: `{"folders": [...]}`.
#[derive(Serialize)]
struct ListJson<'a> {
    folders: Vec<FolderJson<'a>>,
}

/// One folder listed, in `ls --json`.
#[derive(Serialize)]
struct FolderJson<'a> {
    path: &'a Path,
    kind: &'static str,
    sessions: Vec<SessionJson<'a>>,
    skipped: Vec<ProblemJson<'a>>,
}

/// One session in `ls --json` (keys in this order).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionJson<'a> {
    path: &'a Path,
    id: &'a str,
    title: Option<&'a str>,
    title_source: Option<&'a str>,
    cwd: Option<&'a str>,
    created: Option<&'a str>,
    modified: String,
    size: u64,
    version: u64,
    parent_session: Option<&'a str>,
    name: Option<&'a str>,
    first_message: Option<&'a str>,
    message_count: u64,
    message_count_exact: bool,
    last_activity: Option<IsoTimestamp>,
    model: Option<&'a str>,
    status: &'static str,
}

impl<'a> SessionJson<'a> {
    fn of(summary: &'a SessionSummary) -> Self {
        let session = &summary.listing;
        Self {
            path: &session.path,
            id: &session.id,
            title: session.title.as_deref(),
            title_source: session.title_source.as_deref(),
            cwd: session.cwd.as_deref(),
            created: session.created.as_deref(),
            modified: iso(session.modified),
            size: session.size,
            version: session.version,
            parent_session: session.parent_session.as_deref(),
            name: summary.name.as_deref(),
            first_message: summary.first_message.as_deref(),
            message_count: summary.message_count,
            message_count_exact: summary.message_count_exact,
            last_activity: IsoTimestamp::from_unix_ms(summary.activity_ms()),
            model: summary.model.as_deref(),
            status: summary.status.as_str(),
        }
    }
}

/// A `.jsonl` file that is not a session, in `ls --json`.
#[derive(Serialize)]
struct ProblemJson<'a> {
    path: &'a Path,
    line: u64,
    offset: u64,
    message: &'a str,
}

impl<'a> ProblemJson<'a> {
    fn of(problem: &'a ListProblem) -> Self {
        Self {
            path: &problem.path,
            line: problem.diagnostic.line,
            offset: problem.diagnostic.byte_offset,
            message: &problem.diagnostic.message,
        }
    }
}
