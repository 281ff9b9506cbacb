//! Claude Code and Codex imports (`fixtures/foreign/omp/*.expected.json`, recorded by
//! `cargo xtask record` with omp's own `persistForeignSession`; see
//! `xtask/recorder/src/foreign.mjs`).
//!
//! Per transcript (hand-written in `fixtures/foreign/{claude,codex}/`, or real in
//! `../shared/corpus/foreign/`, skipped with a notice when absent):
//!
//! - `listed`: our discovery (`pi_session_foreign::list`) over the same layout offers the file
//!   when omp did, with the same id, cwd, title, times, first message and message count (Claude's
//!   creation time without a history entry is the file's birth time, which cannot be pinned, and
//!   is not compared);
//! - `bytes`: our import, fed the values omp minted (session id, clock, fresh entry ids: the
//!   only non-deterministic parts of omp's output), writes the same file name and the same bytes
//!   line for line (hand-written: the whole recorded file and every blob; corpus: the SHA-256 of
//!   every line, since no transcript content is committed);
//! - then every answer of `SessionManager.open` on omp's file against ours on our file, as for
//!   the other recordings (header, title, entry count, leaf, branch, tips, labels, and the agent,
//!   llm and agent-loop context at the leaf and every tip; corpus contexts by SHA-256).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use pi_session_foreign::{Env, ForeignSessionInfo, ImportOptions, Source, convert, list, write};
use pi_session_store::Stamps;
use pi_session_types::IsoTimestamp;
use serde_json::{Value, json};

use super::compare::{IdMap, diff, parse_recording, sha256_hex};
use super::recorded::check_recording;
use super::report::{Outcome, Report, Row};

const GROUP: &str = "foreign";
/// Where the recorder laid the stores out (the prefix of every recorded `sourcePath`).
const FOREIGN_ROOT: &str = "/tmp/pi-session-foreign";

/// The clock and ids omp used, handed back in the order omp drew them.
#[derive(Debug)]
struct Replay {
    now: String,
    ids: VecDeque<String>,
}

impl Stamps for Replay {
    fn now(&mut self) -> IsoTimestamp {
        IsoTimestamp::new(self.now.clone())
    }
    fn entry_id(&mut self) -> String {
        self.ids
            .pop_front()
            .unwrap_or_else(|| "no-more-recorded-ids".to_owned())
    }
}

/// Checks every foreign recording.
pub fn check(report: &mut Report, root: &Path, only: Option<&str>) -> Result<(), String> {
    let recordings = root.join("fixtures/foreign/omp");
    let corpus = root.join("../shared/corpus/foreign");
    let files = pi_session_test_support::recordings(&recordings)?;
    let mut corpus_missing = false;
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let recorded = parse_recording(&text)?;
        let name = recorded["scenario"].as_str().unwrap_or("?").to_owned();
        if only.is_some_and(|only| !name.contains(only)) {
            continue;
        }
        let foreign = &recorded["foreign"];
        let source_name = foreign["source"].as_str().unwrap_or_default();
        let input_name = foreign["input"].as_str().unwrap_or_default();
        let input = if foreign["kind"] == "corpus" {
            corpus.join(source_name).join(input_name)
        } else {
            root.join("fixtures/foreign")
                .join(source_name)
                .join(input_name)
        };
        if !input.exists() {
            corpus_missing = true;
            continue;
        }
        let mut row = Row::new(GROUP, name);
        check_one(report, &mut row, &file, &recorded, &input, &recordings);
        report.push_row(row);
    }
    if corpus_missing {
        report.notice(format!(
            "the foreign corpus ({}) is absent; its import checks skipped",
            corpus.display()
        ));
    }
    Ok(())
}

fn fail(report: &mut Report, row: &mut Row, check: &'static str, text: String) {
    report.record(row, check, "", Outcome::Fail(format!("      {text}\n")));
}

fn check_one(
    report: &mut Report,
    row: &mut Row,
    expected_file: &Path,
    recorded: &Value,
    input: &Path,
    recordings: &Path,
) {
    let foreign = &recorded["foreign"];
    let Ok(source) = foreign["source"]
        .as_str()
        .unwrap_or_default()
        .parse::<Source>()
    else {
        return fail(
            report,
            row,
            "listed",
            format!("unknown source {}", foreign["source"]),
        );
    };
    let Ok(scratch) = tempfile::tempdir() else {
        return fail(report, row, "listed", "no temp dir".into());
    };
    let mtime_ms = foreign["mtimeMs"].as_f64().unwrap_or(0.0);
    check_listing(
        report,
        row,
        scratch.path(),
        source,
        input,
        foreign,
        mtime_ms,
    );
    if foreign["listed"] != true {
        return;
    }
    let Ok(bytes) = std::fs::read(input) else {
        return fail(
            report,
            row,
            "bytes",
            format!("cannot read {}", input.display()),
        );
    };
    let info = recorded_info(source, &foreign["info"]);
    let loaded = match convert(&info, &bytes, mtime_ms) {
        Ok(loaded) => loaded,
        Err(error) => return fail(report, row, "bytes", format!("convert failed: {error}")),
    };
    let out = scratch.path().join("out");
    let pinned = &foreign["pinned"];
    let options = ImportOptions {
        fallback_cwd: foreign["fallbackCwd"].as_str().map(PathBuf::from),
        session_dir: Some(out.clone()),
        blobs_dir: Some(out.join("blobs")),
        session_id: pinned["sessionId"].as_str().map(str::to_owned),
        stamps: Some(Box::new(Replay {
            now: pinned["now"].as_str().unwrap_or_default().to_owned(),
            ids: pinned["entryIds"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|id| id.as_str().map(str::to_owned))
                .collect(),
        })),
    };
    let env = Env::new(
        scratch.path().join("home"),
        scratch.path(),
        scratch.path().join("tmp"),
    );
    let imported = match write(loaded, &info, &env, options) {
        Ok(imported) => imported,
        Err(error) => return fail(report, row, "bytes", format!("import failed: {error}")),
    };
    let ours = std::fs::read(&imported.path).unwrap_or_default();
    let file_name = imported
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let outcome = if foreign["fileName"].as_str() != Some(file_name.as_str()) {
        Outcome::Fail(format!(
            "      file name {file_name:?}, recorded {}\n",
            foreign["fileName"]
        ))
    } else if let Some(hashes) = foreign["lineSha256"].as_array() {
        compare_line_hashes(&ours, hashes)
    } else {
        let committed = recordings.join(recorded["file"].as_str().unwrap_or_default());
        compare_bytes(
            &ours,
            &std::fs::read(&committed).unwrap_or_default(),
            recordings,
            &out,
        )
    };
    report.record(row, "bytes", "", outcome);
    // Our file under the recorded name, then every answer of omp's SessionManager against ours.
    let Some(session_name) = recorded["file"].as_str() else {
        return fail(report, row, "open", "the recording names no file".into());
    };
    if let Err(error) = std::fs::rename(&imported.path, out.join(session_name)) {
        return fail(
            report,
            row,
            "open",
            format!("cannot rename our file: {error}"),
        );
    }
    check_recording(report, row, expected_file, &out);
}

/// The listing omp made, as our type (the recorded path is where the recorder laid the file).
fn recorded_info(source: Source, info: &Value) -> ForeignSessionInfo {
    let text = |key: &str| info[key].as_str().map(str::to_owned);
    ForeignSessionInfo {
        source,
        id: text("id").unwrap_or_default(),
        path: PathBuf::from(text("path").unwrap_or_default()),
        cwd: text("cwd").unwrap_or_default(),
        title: text("title"),
        created_ms: info["createdMs"].as_f64().unwrap_or(0.0),
        modified_ms: info["modifiedMs"].as_f64().unwrap_or(0.0),
        first_message: text("firstMessage"),
        message_count: info["messageCount"].as_u64(),
    }
}

/// Lays the transcript out as the recorder did (under `scratch` instead of the fixed root) and
/// compares our listing with omp's.
fn check_listing(
    report: &mut Report,
    row: &mut Row,
    scratch: &Path,
    source: Source,
    input: &Path,
    foreign: &Value,
    mtime_ms: f64,
) {
    let home = scratch.join("home");
    let file_name = input.file_name().unwrap_or_default();
    let (env, folder) = match source {
        Source::Claude => {
            let root = scratch.join("claude");
            let env = Env::new(&home, scratch, scratch.join("tmp"))
                .with_var("CLAUDE_CONFIG_DIR", root.to_string_lossy());
            (env, root.join("projects/-home-user-project"))
        }
        Source::Codex => (
            Env::new(&home, scratch, scratch.join("tmp")),
            home.join(".codex/sessions/2026/01/01"),
        ),
    };
    let target = folder.join(file_name);
    let placed = std::fs::create_dir_all(&folder)
        .and_then(|()| std::fs::copy(input, &target).map(|_| ()))
        .and_then(|()| {
            let time = SystemTime::UNIX_EPOCH + Duration::from_millis(mtime_ms as u64);
            std::fs::File::options()
                .write(true)
                .open(&target)?
                .set_modified(time)
        });
    if let Err(error) = placed {
        return fail(
            report,
            row,
            "listed",
            format!("cannot lay out the transcript: {error}"),
        );
    }
    let listed = list(source, &env);
    let ours = listed.iter().find(|info| info.path == target);
    let actual = match ours {
        None => json!({"listed": false}),
        Some(info) => {
            let mut value = json!({
                "listed": true,
                "id": info.id,
                "cwd": info.cwd,
                "title": info.title,
                "modifiedMs": info.modified_ms,
                "firstMessage": info.first_message,
                "messageCount": info.message_count,
            });
            if source == Source::Codex {
                value["createdMs"] = json!(info.created_ms);
            }
            value
        }
    };
    let mut expected = json!({"listed": foreign["listed"]});
    if foreign["listed"] == true {
        let info = &foreign["info"];
        for key in [
            "id",
            "cwd",
            "title",
            "modifiedMs",
            "firstMessage",
            "messageCount",
        ] {
            expected[key] = info[key].clone();
        }
        if source == Source::Codex {
            expected["createdMs"] = info["createdMs"].clone();
        }
        let recorded_path = info["path"].as_str().unwrap_or_default();
        let relative = recorded_path
            .strip_prefix(FOREIGN_ROOT)
            .unwrap_or(recorded_path)
            .trim_start_matches('/');
        let expected_relative = match source {
            Source::Claude => format!(
                "claude/projects/-home-user-project/{}",
                file_name.to_string_lossy()
            ),
            Source::Codex => format!("codex/sessions/2026/01/01/{}", file_name.to_string_lossy()),
        };
        if relative != expected_relative {
            return fail(
                report,
                row,
                "listed",
                format!("omp listed {recorded_path}, not the laid-out file"),
            );
        }
    }
    let found = diff(&expected, &actual, &mut IdMap::exact());
    let outcome = if found.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(found.render())
    };
    report.record(row, "listed", "", outcome);
}

fn compare_line_hashes(ours: &[u8], hashes: &[Value]) -> Outcome {
    let lines: Vec<&[u8]> = ours
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .collect();
    for (index, (line, hash)) in lines.iter().zip(hashes).enumerate() {
        if hash.as_str() != Some(sha256_hex(line).as_str()) {
            let shown: String = String::from_utf8_lossy(line).chars().take(200).collect();
            return Outcome::Fail(format!(
                "      line {} differs from omp's (by SHA-256); ours begins: {shown}\n",
                index + 1
            ));
        }
    }
    if lines.len() != hashes.len() {
        return Outcome::Fail(format!(
            "      we wrote {} lines, omp {}\n",
            lines.len(),
            hashes.len()
        ));
    }
    Outcome::Pass
}

/// Our file against omp's, line by line, and every blob omp wrote against ours.
fn compare_bytes(ours: &[u8], theirs: &[u8], recordings: &Path, out: &Path) -> Outcome {
    let our_lines: Vec<&[u8]> = ours.split(|&b| b == b'\n').collect();
    let their_lines: Vec<&[u8]> = theirs.split(|&b| b == b'\n').collect();
    for (index, (a, b)) in our_lines.iter().zip(&their_lines).enumerate() {
        if a != b {
            return Outcome::Fail(format!(
                "      line {} differs\n      omp:  {}\n      ours: {}\n",
                index + 1,
                String::from_utf8_lossy(b),
                String::from_utf8_lossy(a)
            ));
        }
    }
    if our_lines.len() != their_lines.len() {
        return Outcome::Fail(format!(
            "      we wrote {} lines, omp {}\n",
            our_lines.len(),
            their_lines.len()
        ));
    }
    let text = String::from_utf8_lossy(theirs);
    for (at, _) in text.match_indices("blob:sha256:") {
        let hash = text.get(at + 12..at + 76).unwrap_or_default();
        let theirs = std::fs::read(recordings.join("blobs").join(hash));
        let ours = std::fs::read(out.join("blobs").join(hash));
        match (theirs, ours) {
            (Ok(a), Ok(b)) if a == b => {}
            _ => return Outcome::Fail(format!("      blob {hash} is missing or differs\n")),
        }
    }
    Outcome::Pass
}
