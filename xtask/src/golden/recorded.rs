//! Sessions recorded by the real omp and pi: open each with our store and compare every answer
//! with what the real `SessionManager` returned (`<scenario>.expected.json`, schema 1 in
//! `fixtures/README.md`).
//!
//! Per scenario: `open` (our store opens it), `header`, `name` (session name / title),
//! `entries` (entry count), `leafId`, `branchIds`, `tips`, `labels`; per recorded context
//! (default leaf, other tips, extra leaves): `ctx-branch` (the leaf's branch ids), `agent` (our
//! `buildSessionContext` JSON in the recording's dialect), `llm` (our `convertToLlm` of it) and,
//! for omp recordings, `llmAgentLoop` (our omp agent-loop pipeline of it against `llmAgentLoop`).
//!
//! Two documented normalisations, both in [`super::compare`]: lone surrogate escapes in a
//! recording read as U+FFFD (as our store reads them in session lines), and for version-1 files
//! (no entry ids; the real code mints random ones on every load, ours are deterministic) the
//! recorded ids are compared structurally through one [`IdMap`] per scenario.
//!
//! When the real implementation rewrote a migrated file on open (`<scenario>.reopened.jsonl`,
//! pi with v1/v2 files), `migrated` compares our in-memory migration (header and every entry)
//! with that file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pi_session_context::{OmpAgentLoopOptions, llm_messages, omp_agent_loop_messages};
use pi_session_store::{DiagnosticKind, SessionFile};
use pi_session_tree::{
    BlobFolder, BlobSource, ContextOptions, Dialect, EntrySource, LeafSelector, SessionView,
};
use serde_json::Value;

use pi_session_test_support::{recordings as expected_files, scenario_name};

use super::compare::{IdMap, canonical_json, diff, parse_recording, sha256_hex};
use super::report::{Outcome, Report, Row};

/// Checks every `*.expected.json` in `recordings`; the session files they name are in
/// `sessions` (the same folder for `fixtures/<impl>/`, the parent for `fixtures/ours/<d>/<impl>/`).
pub fn check_folder(
    report: &mut Report,
    group: &str,
    recordings: &Path,
    sessions: &Path,
    only: Option<&str>,
) {
    let files = match expected_files(recordings) {
        Ok(files) => files,
        Err(reason) => {
            report.notice(format!("{group}: {reason}; skipped"));
            return;
        }
    };
    if files.is_empty() {
        report.notice(format!(
            "{group}: no recordings in {}; skipped",
            recordings.display()
        ));
    }
    for file in files {
        let scenario = scenario_name(&file);
        if only.is_some_and(|only| !scenario.contains(only)) {
            continue;
        }
        let mut row = Row::new(group, scenario.clone());
        check_recording(report, &mut row, &file, sessions);
        // Only a file the implementation wrote itself says which dialect it is in (ours/ holds
        // files read by another implementation than the one that wrote them).
        if super::RECORDED_FOLDERS.contains(&group)
            && !pi_session_test_support::HAND_WRITTEN_SCENARIOS.contains(&scenario.as_str())
        {
            check_detected_dialect(report, &mut row, &file, sessions);
        }
        report.push_row(row);
    }
}

pub(super) fn check_recording(report: &mut Report, row: &mut Row, file: &Path, sessions: &Path) {
    let recorded = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| parse_recording(&t))
    {
        Ok(value) => value,
        Err(reason) => {
            report.record(
                row,
                "open",
                "",
                Outcome::Fail(format!("      cannot read {}: {reason}\n", file.display())),
            );
            return;
        }
    };
    let Some(dialect) = recorded_dialect(&recorded) else {
        let found = &recorded["dialect"];
        report.record(
            row,
            "open",
            "",
            Outcome::Fail(format!(
                "      the recording's dialect {found} is not \"pi\" or \"omp\"\n"
            )),
        );
        return;
    };
    let session_path = sessions.join(recorded["file"].as_str().unwrap_or_default());
    let (session, diagnostics) = match pi_session_store::open(&session_path) {
        Ok(opened) => opened,
        Err(error) => {
            report.record(
                row,
                "open",
                "",
                Outcome::Fail(format!("      {}: {error}\n", session_path.display())),
            );
            return;
        }
    };
    report.record(row, "open", "", Outcome::Pass);
    let blobs = recorded["blobsDir"]
        .as_str()
        .map(|dir| BlobFolder::new(sessions.join(dir)));
    let scenario = Scenario {
        recorded: &recorded,
        session: &session,
        view: SessionView::new(&session),
        dialect,
        blobs: blobs.as_ref().map(|b| b as &dyn BlobSource),
        skipped_lines: diagnostics
            .iter()
            .filter(|d| matches!(d.kind, DiagnosticKind::NotAnObject { .. }))
            .count(),
    };
    if let Some(error) = recorded["openError"].as_str() {
        scenario.check_refused(report, row, error);
        return;
    }
    let reopened = reopened_file(file, &session_path);
    let mut ids = scenario.id_map(&session_path, reopened.as_deref());
    scenario.check_session(report, row, &mut ids);
    scenario.check_contexts(report, row, &mut ids);
    if let Some(reopened) = reopened {
        scenario.check_migration(report, row, &mut ids, &reopened);
    }
}

/// `<scenario>.reopened.jsonl` next to the recording: the file as the real implementation
/// rewrote it on open (pi migrating a v1/v2 file), when it did.
fn reopened_file(recording: &Path, session: &Path) -> Option<PathBuf> {
    let stem = session.file_stem()?.to_str()?;
    let path = recording.with_file_name(format!("{stem}.reopened.jsonl"));
    path.exists().then_some(path)
}

/// The JSON object lines of a file (what a rewritten file holds; other lines are not entries).
fn object_lines(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|line| parse_recording(line).ok())
        .filter(|value| value.get("type").is_some_and(Value::is_string))
        .collect())
}

/// `dialect`: auto detection (what `pi-session context` does without `--dialect`) names the
/// recording's dialect. pi 1.x recordings say `"pi"` (the file family) and may carry 1.6-only
/// marks, so pi16 is accepted for them too.
fn check_detected_dialect(report: &mut Report, row: &mut Row, file: &Path, sessions: &Path) {
    let Ok(recorded) = pi_session_test_support::read_recording(file) else {
        return; // reported by check_recording
    };
    if recorded.get("openError").is_some() {
        return;
    }
    let (Some(family), Some(judged)) = (
        recorded["dialect"].as_str().and_then(Dialect::parse),
        recorded_dialect(&recorded),
    ) else {
        return;
    };
    let path = sessions.join(recorded["file"].as_str().unwrap_or_default());
    let detected = pi_session_store::open(&path)
        .map_err(|e| e.to_string())
        .and_then(|(session, _)| {
            SessionView::new(&session)
                .detect_dialect()
                .map_err(|e| e.to_string())
        });
    let outcome = match detected {
        Ok(found) if found == family || found == judged => Outcome::Pass,
        Ok(found) => Outcome::Fail(format!(
            "      detected {}, recorded {}\n",
            found.as_str(),
            judged.as_str()
        )),
        Err(error) => Outcome::Fail(format!("      {error}\n")),
    };
    report.record(row, "dialect", "", outcome);
}

/// One recording and our opened session.
struct Scenario<'a> {
    recorded: &'a Value,
    session: &'a SessionFile,
    view: SessionView<'a, SessionFile>,
    dialect: Dialect,
    blobs: Option<&'a dyn BlobSource>,
    /// Lines that are JSON but not objects: the store skips them with a diagnostic.
    skipped_lines: usize,
}

impl Scenario<'_> {
    /// The real implementation threw in `SessionManager.open`. We do not copy a crash: the file
    /// must open with our store and give a context (checked above and here), and the comparisons
    /// are skipped with the recorded error printed.
    fn check_refused(&self, report: &mut Report, row: &mut Row, error: &str) {
        let implementation = self.recorded["implementation"]
            .as_str()
            .unwrap_or("the real implementation");
        let built = self
            .view
            .context(&LeafSelector::Default, self.dialect, &self.options());
        let outcome = match built {
            Ok(_) => Outcome::Pass,
            Err(error) => Outcome::Fail(format!(
                "      building the default context failed: {error}\n"
            )),
        };
        report.record(row, "agent", "default", outcome);
        report.record(
            row,
            "compare",
            "",
            Outcome::Skip(format!(
                "{implementation} threw while opening this file ({error:?}); we open it and build its context, so there is nothing recorded to compare with"
            )),
        );
    }

    fn options(&self) -> ContextOptions<'_> {
        ContextOptions { blobs: self.blobs }
    }

    /// Exact ids, except for version-1 files: the ids the recording holds that are nowhere in the
    /// session file were minted by the real code and are matched structurally.
    fn id_map(&self, session_path: &Path, reopened: Option<&Path>) -> IdMap {
        if self.session.file_version() >= 2 {
            return IdMap::exact();
        }
        let text = std::fs::read_to_string(session_path).unwrap_or_default();
        let mut candidates = BTreeSet::new();
        collect_ids(self.recorded, &mut candidates);
        for line in reopened
            .and_then(|path| object_lines(path).ok())
            .unwrap_or_default()
        {
            for key in ["id", "parentId"] {
                if let Some(id) = line[key].as_str() {
                    candidates.insert(id.to_owned());
                }
            }
        }
        IdMap::structural(
            candidates
                .into_iter()
                .filter(|id| !text.contains(&format!("\"{id}\""))),
        )
    }

    fn check_session(&self, report: &mut Report, row: &mut Row, ids: &mut IdMap) {
        let header = EntrySource::header_value(self.session).unwrap_or(Value::Null);
        compare(
            report,
            row,
            ids,
            "header",
            "",
            &self.recorded["header"],
            &header,
        );
        match self.view.name(self.dialect) {
            Ok(name) => {
                let name = name.map_or(Value::Null, Value::from);
                compare(
                    report,
                    row,
                    ids,
                    "name",
                    "",
                    &self.recorded["sessionName"],
                    &name,
                );
            }
            Err(error) => report.record(row, "name", "", Outcome::Fail(format!("      {error}\n"))),
        }
        // pi and omp keep a line that is JSON but not an object (`42`) as an entry without an
        // id; our store skips it with a `NotAnObject` diagnostic. Count those lines back in.
        let count = Value::from(self.view.index().len() + self.skipped_lines);
        compare(
            report,
            row,
            ids,
            "entries",
            "",
            &self.recorded["entryCount"],
            &count,
        );
        match self.view.tree_json() {
            Ok(tree) => {
                for key in ["leafId", "branchIds", "tips", "labels"] {
                    compare(report, row, ids, key, "", &self.recorded[key], &tree[key]);
                }
            }
            Err(error) => report.record(
                row,
                "leafId",
                "",
                Outcome::Fail(format!("      tree_json failed: {error}\n")),
            ),
        }
    }

    fn check_contexts(&self, report: &mut Report, row: &mut Row, ids: &mut IdMap) {
        let Some(contexts) = self.recorded["contexts"].as_array() else {
            report.record(
                row,
                "agent",
                "",
                Outcome::Fail("      the recording has no `contexts` array\n".into()),
            );
            return;
        };
        let options = self.options();
        for context in contexts {
            let what = describe_leaf(context);
            let selector = match (context["kind"].as_str(), &context["leafId"]) {
                (Some("default"), _) => LeafSelector::Default,
                (_, Value::Null) => LeafSelector::Null,
                (_, Value::String(id)) => LeafSelector::Id(ids.ours(id)),
                (_, other) => {
                    report.record(
                        row,
                        "agent",
                        &what,
                        Outcome::Fail(format!("      unexpected leafId {other}\n")),
                    );
                    continue;
                }
            };
            compare(
                report,
                row,
                ids,
                "ctx-branch",
                &what,
                &context["branchIds"],
                &self.branch_ids(&selector),
            );
            let resolved = match self.view.context(&selector, self.dialect, &options) {
                Ok(resolved) => resolved,
                Err(error) => {
                    report.record(
                        row,
                        "agent",
                        &what,
                        Outcome::Fail(format!("      {error}\n")),
                    );
                    continue;
                }
            };
            compare_context(
                report,
                row,
                ids,
                ("agent", &what),
                context,
                &resolved.context.to_value(),
            );
            let llm = Value::Array(llm_messages(resolved.context.messages(), self.dialect));
            compare_context(report, row, ids, ("llm", &what), context, &llm);
            self.check_convert_alone(report, row, context, &what);
            // omp only: what its agent loop sends (a vision model, pictures allowed, no secrets:
            // the recording's setting and our default options).
            if context.get("llmAgentLoop").is_some() || context.get("llmAgentLoopSha256").is_some()
            {
                let sent = omp_agent_loop_messages(
                    resolved.context.messages(),
                    &OmpAgentLoopOptions::default(),
                );
                compare_context(
                    report,
                    row,
                    ids,
                    ("llmAgentLoop", &what),
                    context,
                    &Value::Array(sent),
                );
            }
        }
    }

    /// `convertToLlm` alone, byte for byte (key order counts, unlike `llm`): our `llm_messages`
    /// of the *recorded* agent messages against the recorded `llm` (`llm-bytes`), and omp's
    /// agent-loop pipeline of them against `llmAgentLoop` (`loop-bytes`). Recordings that keep
    /// only hashes (real foreign transcripts) have nothing to feed in.
    fn check_convert_alone(&self, report: &mut Report, row: &mut Row, context: &Value, what: &str) {
        let (Some(agent), Some(llm)) = (
            context.pointer("/agent/messages").and_then(Value::as_array),
            context.get("llm"),
        ) else {
            return;
        };
        let ours = llm_messages(agent, self.dialect);
        report.record(row, "llm-bytes", what, same_bytes(&ours, llm));
        if let Some(sent) = context.get("llmAgentLoop") {
            let ours = omp_agent_loop_messages(agent, &OmpAgentLoopOptions::default());
            report.record(row, "loop-bytes", what, same_bytes(&ours, sent));
        }
    }

    /// Our in-memory migration against the file the real implementation rewrote on open: the
    /// same header and the same entries, in order (ids of v1 files structurally).
    fn check_migration(
        &self,
        report: &mut Report,
        row: &mut Row,
        ids: &mut IdMap,
        reopened: &Path,
    ) {
        if !self.session.is_migrated() {
            // pi also rewrites files it did not migrate (e.g. to add a missing final newline);
            // only a migration says something about the entries.
            return;
        }
        let lines = match object_lines(reopened) {
            Ok(lines) => lines,
            Err(reason) => {
                report.record(
                    row,
                    "migrated",
                    "",
                    Outcome::Fail(format!("      {reason}\n")),
                );
                return;
            }
        };
        let (headers, entries): (Vec<Value>, Vec<Value>) =
            lines.into_iter().partition(|l| l["type"] == "session");
        let header = EntrySource::header_value(self.session).unwrap_or(Value::Null);
        let ours: Result<Vec<Value>, _> = (0..self.session.len())
            .map(|at| self.session.entry_value(at))
            .collect();
        let ours = match ours {
            Ok(entries) => entries,
            Err(error) => {
                report.record(
                    row,
                    "migrated",
                    "",
                    Outcome::Fail(format!("      reading our entries failed: {error}\n")),
                );
                return;
            }
        };
        let expected = serde_json::json!({"header": headers.first(), "entries": entries});
        let actual = serde_json::json!({"header": header, "entries": ours});
        compare(report, row, ids, "migrated", "", &expected, &actual);
    }

    /// What `getBranch(leafId)` returns: the leaf's branch, root first; `[]` for `null` and for an
    /// id the session does not hold.
    fn branch_ids(&self, selector: &LeafSelector) -> Value {
        let index = self.view.index();
        let leaf = match selector {
            LeafSelector::Default => index.leaf_position(),
            LeafSelector::Id(id) => index.position_of(id),
            _ => None,
        };
        let positions = leaf
            .map(|at| index.branch(at).positions)
            .unwrap_or_default();
        positions
            .iter()
            .map(|&at| {
                index
                    .node(at)
                    .and_then(|n| n.id)
                    .map_or(Value::Null, Value::from)
            })
            .collect()
    }
}

impl IdMap {
    /// The id of ours that recorded `theirs` was matched with (itself when not generated or not
    /// matched yet).
    fn ours(&self, theirs: &str) -> String {
        self.ours_for(theirs).unwrap_or(theirs).to_owned()
    }
}

/// Passes when `ours` serialises to the same JSON bytes as `recorded` (key order counts); a
/// failure shows both around the first differing byte.
fn same_bytes(ours: &[Value], recorded: &Value) -> Outcome {
    let (actual, expected) = match (serde_json::to_string(ours), serde_json::to_string(recorded)) {
        (Ok(actual), Ok(expected)) => (actual, expected),
        (Err(e), _) | (_, Err(e)) => {
            return Outcome::Fail(format!("      not serialisable: {e}\n"));
        }
    };
    if actual == expected {
        return Outcome::Pass;
    }
    let at = actual
        .bytes()
        .zip(expected.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let from = at.saturating_sub(80);
    let around = |text: &str| {
        let end = (at + 120).min(text.len());
        text.get(from..end).unwrap_or("").to_owned()
    };
    Outcome::Fail(format!(
        "      differs at byte {at}\n      ours:     …{}\n      recorded: …{}\n",
        around(&actual),
        around(&expected)
    ))
}

fn describe_leaf(context: &Value) -> String {
    let kind = context["kind"].as_str().unwrap_or("?");
    match &context["leafId"] {
        Value::String(id) if kind != "default" => format!("{kind} {id}"),
        Value::Null if kind != "default" => format!("{kind} null"),
        _ => kind.to_owned(),
    }
}

/// Entry ids a recording names: leaf, branch and tip ids, label keys, and those of its contexts.
fn collect_ids(recorded: &Value, into: &mut BTreeSet<String>) {
    let mut add = |value: &Value| {
        if let Some(id) = value.as_str() {
            into.insert(id.to_owned());
        }
    };
    add(&recorded["leafId"]);
    for key in ["branchIds", "tips"] {
        recorded[key]
            .as_array()
            .into_iter()
            .flatten()
            .for_each(&mut add);
    }
    if let Some(labels) = recorded["labels"].as_object() {
        labels.keys().for_each(|id| add(&Value::from(id.as_str())));
    }
    for context in recorded["contexts"].as_array().into_iter().flatten() {
        add(&context["leafId"]);
        context["branchIds"]
            .as_array()
            .into_iter()
            .flatten()
            .for_each(&mut add);
    }
}

fn compare(
    report: &mut Report,
    row: &mut Row,
    ids: &mut IdMap,
    check: &'static str,
    what: &str,
    expected: &Value,
    actual: &Value,
) {
    let found = diff(expected, actual, ids);
    let outcome = if found.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(found.render())
    };
    report.record(row, check, what, outcome);
}

/// Compares one context value with the recording: in full, or, for recordings of real foreign
/// transcripts (which keep no content), by the SHA-256 of its canonical JSON (`<key>Sha256`).
fn compare_context(
    report: &mut Report,
    row: &mut Row,
    ids: &mut IdMap,
    (check, what): (&'static str, &str),
    context: &Value,
    actual: &Value,
) {
    let Some(hash) = context
        .get(format!("{check}Sha256"))
        .and_then(Value::as_str)
    else {
        compare(report, row, ids, check, what, &context[check], actual);
        return;
    };
    let ours = sha256_hex(canonical_json(actual).as_bytes());
    let outcome = if ours == hash {
        Outcome::Pass
    } else {
        let messages = actual.get("messages").unwrap_or(actual);
        let count = messages.as_array().map_or(0, Vec::len);
        Outcome::Fail(format!(
            "      the SHA-256 of our canonical JSON ({count} messages) is {ours}, recorded {hash}\n"
        ))
    };
    report.record(row, check, what, outcome);
}

/// The dialect whose rules must reproduce a recording: its `dialect`, except that recordings made
/// by pi 1.x (`"implementation": "pi@1.6.0"`) are judged by pi 1.6's rules, the rules of the
/// implementation that read the file (the recorder has pi 1.6 read pi-dialect files only).
fn recorded_dialect(recorded: &Value) -> Option<Dialect> {
    let dialect = Dialect::parse(recorded["dialect"].as_str()?)?;
    let by_pi_1 = recorded["implementation"]
        .as_str()
        .is_some_and(|implementation| implementation.starts_with("pi@1."));
    Some(if by_pi_1 { Dialect::PI16 } else { dialect })
}
