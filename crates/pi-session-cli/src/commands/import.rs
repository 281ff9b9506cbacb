//! `pi-session import FILE --from claude|codex`: a Claude Code or Codex conversation as a new
//! omp session (as omp 18.2.3 imports it), and `pi-session ls --foreign claude|codex`.
//!
//! The library reads no environment; this is where the process's home folder, current folder
//! and variables are handed to it.

use std::path::PathBuf;

use clap::Args;
use pi_session::foreign::{self, Env, ForeignSessionInfo, ImportOptions, Source};
use pi_session::types::IsoTimestamp;
use serde_json::{Value, json};

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input::diagnostic_line;
use crate::output::{Out, warn};

// Arguments of `import` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The Claude Code transcript (`~/.claude/projects/<dir>/<id>.jsonl`) or Codex rollout
    /// (`~/.codex/sessions/.../rollout-*.jsonl`).
    pub file: PathBuf,
    /// Which agent wrote FILE.
    #[arg(long, value_name = "claude|codex")]
    pub from: Source,
    /// Folder to write the new session into. Default: omp's session folder for its cwd.
    #[arg(long, value_name = "DIR")]
    pub to: Option<PathBuf>,
    /// Working directory to use when the recorded one does not exist on this machine.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Print JSON instead of the path.
    #[arg(long)]
    pub json: bool,
}

/// The variables that change where omp, Claude Code and Codex keep their files.
const VARS: [&str; 7] = [
    "CLAUDE_CONFIG_DIR",
    "PI_CODING_AGENT_DIR",
    "PI_CONFIG_DIR",
    "OMP_PROFILE",
    "PI_PROFILE",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
];

/// This process's environment for the library.
fn process_env() -> Result<Env, Failure> {
    let home = std::env::home_dir()
        .ok_or_else(|| Failure::new("could not tell the home folder; set HOME"))?;
    let current = std::env::current_dir()
        .map_err(|e| Failure::new(format!("could not read the current directory: {e}")))?;
    let mut env = Env::new(home, current, std::env::temp_dir());
    for name in VARS {
        if let Ok(value) = std::env::var(name) {
            env = env.with_var(name, value);
        }
    }
    Ok(env)
}

fn failure(error: foreign::ImportError) -> Failure {
    Failure::new(error.to_string())
}

/// Runs `import`.
pub fn run(args: ImportArgs) -> Outcome {
    let env = process_env()?;
    let info = foreign::describe(args.from, &env, &args.file).map_err(failure)?;
    let options = ImportOptions {
        fallback_cwd: args.cwd,
        session_dir: args.to.map(|dir| env.resolve(&dir)),
        ..ImportOptions::default()
    };
    let imported = foreign::import(&info, &env, options).map_err(failure)?;
    for diagnostic in &imported.diagnostics {
        warn(&diagnostic_line(&info.path, diagnostic));
    }
    let mut out = Out::new();
    if args.json {
        out.json(&json!({
            "path": imported.path,
            "sessionId": imported.session_id,
            "cwd": imported.cwd,
            "title": imported.title,
            "entries": imported.entry_count,
            "source": info.source.as_str(),
            "sourceId": info.id,
            "sourcePath": info.path,
            "diagnostics": imported.diagnostics.iter().map(|d| json!({
                "line": d.line,
                "offset": d.byte_offset,
                "message": d.message,
            })).collect::<Vec<_>>(),
        }))?;
    } else {
        out.line(&imported.path.display().to_string())?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// Runs `ls --foreign SOURCE`.
pub fn list_foreign(source: Source, json_output: bool) -> Outcome {
    let env = process_env()?;
    let sessions = foreign::list(source, &env);
    let mut out = Out::new();
    if json_output {
        out.json(&json!({
            "source": source.as_str(),
            "sessions": sessions.iter().map(info_json).collect::<Vec<_>>(),
        }))?;
    } else {
        let root = match source {
            Source::Claude => foreign::claude_root(&env).0,
            Source::Codex => foreign::codex_root(&env),
        };
        let n = sessions.len();
        let noun = if n == 1 { "session" } else { "sessions" };
        out.line(&format!("{} ({source}): {n} {noun}", root.display()))?;
        for info in &sessions {
            out.line(&row(info))?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

#[allow(
    clippy::cast_possible_truncation,
    reason = "ms since the epoch fit an i64"
)]
fn iso(ms: f64) -> String {
    IsoTimestamp::from_unix_ms(ms.trunc() as i64)
        .map_or_else(String::new, |t| t.as_str().to_owned())
}

/// `2026-10-07 00:45:40  01a113d2  title or first message  cwd`.
fn row(info: &ForeignSessionInfo) -> String {
    let when = super::ls::when(&iso(info.modified_ms));
    let id: String = info.id.chars().take(8).collect();
    let label = info
        .title
        .as_deref()
        .or(info.first_message.as_deref())
        .filter(|t| !t.is_empty())
        .unwrap_or("(no messages)");
    let label: String = label.chars().take(60).collect();
    format!("  {when}  {id:<8}  {label}  {}", info.cwd)
}

fn info_json(info: &ForeignSessionInfo) -> Value {
    json!({
        "source": info.source.as_str(),
        "id": info.id,
        "path": info.path,
        "cwd": info.cwd,
        "title": info.title,
        "created": iso(info.created_ms),
        "modified": iso(info.modified_ms),
        "firstMessage": info.first_message,
        "messageCount": info.message_count,
    })
}
