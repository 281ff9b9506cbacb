//! Usage and cost across sessions: tokens and cost per day, week, month, session, model or
//! project, and in total, over every session file of both dialects.
//!
//! What is counted is exactly what `pi-session stats` counts for one file: every entry of the
//! file, each once, through [`pi_session_tree::usage_record`] (assistant turns, usage nested in
//! tool results, side calls). An entry sits once in the file whatever branches pass through it,
//! so a turn shared by two branches is counted once. Sums over a file are added in file order,
//! and files in path order, so the totals are reproducible to the last bit.
//!
//! A record's time is its entry's `timestamp` (else its message's numeric `timestamp`); days,
//! weeks (starting Monday) and months are UTC. `--since`/`--until` keep the records whose time
//! is inside the range; a record without a time is kept only when no range is given.

use pi_session_types::view::{EntryRef, MessageRef, key};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pi_session_store::{Diagnostic, SessionFile};
use pi_session_tree::branch_facts::{TALLY_MESSAGE, may_record_usage_in};
use pi_session_tree::{UsageBreakdown, usage_record};
use pi_session_types::js;
use pi_session_types::shallow::{Keys, with_key};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;

use crate::error::Result;

/// How records are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum GroupBy {
    /// UTC day, `2026-01-15`.
    Day,
    /// UTC week starting Monday, named by its Monday, `2026-01-12`.
    Week,
    /// UTC month, `2026-01`.
    Month,
    /// Session id (the file's path when it has no header).
    Session,
    /// `provider/model` of the call.
    Model,
    /// The session's working directory (`cwd` of its header).
    Project,
}

impl GroupBy {
    /// Parses `day`, `week`, `month`, `session`, `model` or `project`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "day" => Self::Day,
            "week" => Self::Week,
            "month" => Self::Month,
            "session" => Self::Session,
            "model" => Self::Model,
            "project" => Self::Project,
            _ => return None,
        })
    }

    /// The name [`parse`](Self::parse) reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Session => "session",
            Self::Model => "model",
            Self::Project => "project",
        }
    }
}

/// What a usage report covers and how it groups.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageOptions {
    /// Group by this (none: the total only).
    pub by: Option<GroupBy>,
    /// Keep records at or after this time (Unix ms).
    pub since: Option<i64>,
    /// Keep records before this time (Unix ms).
    pub until: Option<i64>,
}

/// The group a record without the grouped fact falls in.
pub const UNKNOWN_GROUP: &str = "(unknown)";

/// Usage of a set of session files.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// Sums per group, groups in ascending order of their key (empty without grouping).
    pub groups: BTreeMap<String, UsageBreakdown>,
    /// Sums over everything kept.
    pub total: UsageBreakdown,
    /// Session files read.
    pub files: usize,
    /// Entries in the files read (header excluded), each once.
    pub entries: usize,
    /// Files that could not be read, and why (they count nothing).
    #[serde(skip)]
    pub unreadable: Vec<(PathBuf, String)>,
    /// Damaged lines skipped in the files read (they count nothing).
    pub damaged_lines: usize,
}

impl UsageReport {
    /// Adds another report (e.g. of more files) to this one.
    fn merge(&mut self, other: Self) {
        for (key, sums) in other.groups {
            add_breakdown(self.groups.entry(key).or_default(), &sums);
        }
        add_breakdown(&mut self.total, &other.total);
        self.files += other.files;
        self.entries += other.entries;
        self.unreadable.extend(other.unreadable);
        self.damaged_lines += other.damaged_lines;
    }
}

/// `into += other`, part by part.
pub fn add_breakdown(into: &mut UsageBreakdown, other: &UsageBreakdown) {
    into.assistant.add_sums(&other.assistant);
    into.nested_tools.add_sums(&other.nested_tools);
    into.side_calls.add_sums(&other.side_calls);
}

/// The usage of `files` (read on every core), as [`UsageOptions`] say.
pub fn usage_report(files: &[PathBuf], options: &UsageOptions) -> UsageReport {
    usage_report_with(files, options, &|_| {})
}

/// [`usage_report`], calling `done` with each file once it is read (for a progress bar).
pub fn usage_report_with(
    files: &[PathBuf],
    options: &UsageOptions,
    done: &(dyn Fn(&Path) + Sync),
) -> UsageReport {
    let reports: Vec<UsageReport> = files
        .par_iter()
        .map(|path| {
            let report = match file_usage(path, options) {
                Ok(report) => report,
                Err(error) => UsageReport {
                    unreadable: vec![(path.clone(), error.to_string())],
                    ..UsageReport::default()
                },
            };
            done(path);
            report
        })
        .collect();
    let mut total = UsageReport::default();
    for report in reports {
        total.merge(report);
    }
    total
}

/// Entries read at a time, so that memory stays bounded on a large file.
const CHUNK: usize = 4096;

/// The usage of one file. The file is opened on this thread (a scan reads files on every core
/// already), and only lines that can hold a usage record are read (told first from the open's
/// key filter of each line) and parsed ([`pi_session_tree::branch_facts::may_record_usage`]).
pub fn file_usage(path: &Path, options: &UsageOptions) -> Result<UsageReport> {
    let (file, diagnostics) =
        pi_session_store::open_with(path, &pi_session_store::OpenOptions::single_threaded())?;
    let damaged_lines = diagnostics.iter().filter(|d| skipped_line(d)).count();
    let session = session_key(&file, path);
    let project = file
        .header()
        .and_then(|h| h.cwd.clone())
        .unwrap_or_else(|| UNKNOWN_GROUP.to_owned());
    let mut report = UsageReport {
        files: 1,
        entries: file.len(),
        damaged_lines,
        ..UsageReport::default()
    };
    let all: Vec<usize> = (0..file.len()).collect();
    for chunk in all.chunks(CHUNK) {
        for (_, entry) in file.values_that_may_hold(chunk, may_record_usage_in, &RECORD_KEYS)? {
            let Some((part, usage)) = usage_record(&entry) else {
                continue;
            };
            let at = record_time(&entry);
            if !in_range(at, options) {
                continue;
            }
            report.total.add_record(part, usage);
            if let Some(by) = options.by {
                let key = match by {
                    GroupBy::Day | GroupBy::Week | GroupBy::Month => period(at, by),
                    GroupBy::Session => session.clone(),
                    GroupBy::Project => project.clone(),
                    GroupBy::Model => record_model(&entry).unwrap_or_else(|| UNKNOWN_GROUP.into()),
                };
                report
                    .groups
                    .entry(key)
                    .or_default()
                    .add_record(part, usage);
            }
        }
    }
    Ok(report)
}

/// What a report reads of a `message` entry: what [`usage_record`] reads
/// ([`TALLY_MESSAGE`]), and the times and model of [`record_time`] and [`record_model`]
/// (the entry's and the message's `timestamp`; the message's `provider` and `model` are among
/// the tally's).
const RECORD_KEYS: Keys = Keys {
    entry: &[key::TYPE, key::ID, key::TIMESTAMP, key::MESSAGE],
    message: &with_key::<6, 7>(key::TIMESTAMP, TALLY_MESSAGE),
    blocks: &[],
};

/// True for a diagnostic that stands for a line read as nothing.
fn skipped_line(diagnostic: &Diagnostic) -> bool {
    diagnostic.severity() >= pi_session_store::Severity::Error
}

fn session_key(file: &SessionFile, path: &Path) -> String {
    file.header()
        .map(|h| h.id.clone())
        .unwrap_or_else(|| path.display().to_string())
}

/// A record's time (Unix ms): the entry's `timestamp`, else its message's numeric `timestamp`.
pub fn record_time(entry: &Value) -> Option<i64> {
    let entry = EntryRef::new(entry);
    js::as_str(entry.timestamp())
        .and_then(js::parse_date_string)
        .or_else(|| match MessageRef::new(entry.message()).timestamp() {
            Some(Value::Number(n)) => js::date_ms(Some(&Value::Number(n.clone()))),
            _ => None,
        })
}

/// The model a record's call went to: the message's (assistant turns) or the entry's
/// (`model_usage`) `provider/model`.
pub fn record_model(entry: &Value) -> Option<String> {
    let named = |(model, provider): (Option<&Value>, Option<&Value>)| {
        let model = js::as_str(model)?;
        Some(match js::as_str(provider) {
            Some(provider) => format!("{provider}/{model}"),
            None => model.to_owned(),
        })
    };
    let entry = EntryRef::new(entry);
    let message = MessageRef::new(entry.message());
    named((message.model(), message.provider()))
        .or_else(|| named((entry.model(), entry.provider())))
}

fn in_range(at: Option<i64>, options: &UsageOptions) -> bool {
    if options.since.is_none() && options.until.is_none() {
        return true;
    }
    let Some(at) = at else {
        return false;
    };
    options.since.is_none_or(|since| at >= since) && options.until.is_none_or(|until| at < until)
}

/// The day, week (its Monday) or month of `at`, UTC.
fn period(at: Option<i64>, by: GroupBy) -> String {
    let Some(date) = at
        .and_then(|ms| OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000).ok())
        .map(OffsetDateTime::date)
    else {
        return UNKNOWN_GROUP.to_owned();
    };
    let date = match by {
        GroupBy::Week => {
            let back = i64::from(date.weekday().number_days_from_monday());
            date.checked_sub(time::Duration::days(back)).unwrap_or(date)
        }
        _ => date,
    };
    let (year, month, day) = (date.year(), u8::from(date.month()), date.day());
    match by {
        GroupBy::Month => format!("{year:04}-{month:02}"),
        _ => format!("{year:04}-{month:02}-{day:02}"),
    }
}

/// Parses a `--since`/`--until` date: `YYYY-MM-DD` (a whole UTC day) or an ISO 8601 time.
/// `end_of_day` moves a bare date to the end of its day (for an inclusive `--until`).
///
/// ```
/// use pi_session::parse_report_date;
/// assert_eq!(parse_report_date("2026-01-02", false), Some(1_767_312_000_000));
/// assert_eq!(parse_report_date("2026-01-02", true), Some(1_767_398_400_000));
/// assert_eq!(parse_report_date("2026-01-02T00:00:01Z", true), Some(1_767_312_001_000));
/// assert_eq!(parse_report_date("yesterday", false), None);
/// ```
pub fn parse_report_date(text: &str, end_of_day: bool) -> Option<i64> {
    let ms = js::parse_date_string(text)?;
    let bare_date = text.len() == 10 && !text.contains('T');
    Some(if bare_date && end_of_day {
        ms + 86_400_000
    } else {
        ms
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_session_tree::branch_facts::may_record_usage;

    /// What a report reads of an entry cut to [`RECORD_KEYS`] (its usage record, time and
    /// model) is what it reads of the whole entry, on every fixture and corpus session.
    #[test]
    fn an_entry_cut_to_the_record_keys_counts_as_the_whole_entry() {
        // A turn whose time is its message's (its entry has no `timestamp`).
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("dated.jsonl");
        let text = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            r#"{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[],"provider":"p","model":"m","usage":{"input":2},"timestamp":1767225600000}}"#,
        ];
        std::fs::write(&made, text.join("\n")).unwrap();
        let mut files = pi_session_test_support::fixture_and_corpus_files();
        files.push(made.clone());
        let mut records = 0;
        for path in files {
            let Ok((file, _)) = pi_session_store::open(&path) else {
                continue;
            };
            let all: Vec<usize> = (0..file.len()).collect();
            let Ok(whole) = file.values_where(&all, |_, _| true) else {
                continue;
            };
            let cut = file
                .values_where_cut(&all, |_, _| true, &RECORD_KEYS)
                .unwrap();
            assert_eq!(cut.len(), whole.len(), "{}", path.display());
            for ((at, cut), (_, whole)) in cut.iter().zip(&whole) {
                let case = format!("{} entry {at}", path.display());
                assert_eq!(usage_record(cut), usage_record(whole), "{case}");
                assert_eq!(record_time(cut), record_time(whole), "{case}");
                assert_eq!(record_model(cut), record_model(whole), "{case}");
                records += usize::from(usage_record(whole).is_some());
                if path == made {
                    assert_eq!(record_time(cut), Some(1_767_225_600_000));
                }
            }
        }
        assert!(records > 1000, "only {records} usage records compared");
    }

    /// A usage spelled with an escape (`"us\u0061ge"`) is still a usage: the raw filter lets
    /// such a line through, while lines that cannot hold one are skipped unparsed.
    #[test]
    fn a_usage_behind_an_escape_is_counted_and_other_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let turn = |id: &str, key: &str, input: u64| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"assistant","content":[],"{key}":{{"input":{input},"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":{input},"cost":{{"total":0}}}}}}}}"#
            )
        };
        let text = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_owned(),
            turn("a1", "usage", 3),
            turn("a2", "us\\u0061ge", 5),
            turn("a3", "not_it", 7),
            r#"{"type":"label","id":"a4","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","targetId":"a1","label":"usage"}"#.to_owned(),
        ]
        .join("\n");
        std::fs::write(&path, text).unwrap();
        assert!(may_record_usage(
            "message",
            turn("x", "us\\u0061ge", 1).as_bytes()
        ));
        assert!(!may_record_usage(
            "message",
            turn("x", "not_it", 1).as_bytes()
        ));
        let report = file_usage(&path, &UsageOptions::default()).unwrap();
        assert_eq!(report.entries, 4);
        assert_eq!(report.total.assistant.input, 8.0);
        assert_eq!(report.total.assistant.count, 2);
    }
}
