//! Sessions written by our facade (`fixtures/ours/<dialect>/*.jsonl`, see
//! [`super::ours_script`]).
//!
//! - `bytes`: writing the script again gives exactly the committed bytes (`--write-ours`
//!   rewrites the committed files instead; review the diff).
//! - `opens`: our store opens each committed file without a diagnostic.
//! - Files carrying resolution stamps have a stamp-free copy beside them, and the real omp's
//!   and pi's contexts of both must be equal ([`super::unstamped`]).
//! - What the real omp and pi returned for them (`fixtures/ours/<dialect>/<impl>/*.expected.json`,
//!   written by `cargo xtask record`) is checked like any other recording ([`recorded`]).

use std::path::{Path, PathBuf};

use super::ours_script::{SCENARIOS, Scenario, Script, folder};
use super::recorded;
use super::report::{Outcome, Report, Row};

/// Checks `fixtures/ours` (`write` regenerates the session files first).
pub fn check(
    report: &mut Report,
    ours: &Path,
    write: bool,
    only: Option<&str>,
) -> Result<(), String> {
    if write {
        write_all(ours)?;
    }
    let scratch = Scratch::new()?;
    for scenario in &SCENARIOS {
        let name = scenario.name;
        if only.is_some_and(|only| !name.contains(only)) {
            continue;
        }
        let dialect = folder(scenario.dialect);
        let mut row = Row::new(format!("ours/{dialect}"), name);
        let committed = ours.join(dialect).join(format!("{name}.jsonl"));
        let outcome = match (std::fs::read(&committed), write_one(&scratch.0, scenario)) {
            (Err(error), _) => Outcome::Fail(format!(
                "      cannot read {}: {error}; run `cargo xtask golden --write-ours`\n",
                committed.display()
            )),
            (_, Err(error)) => Outcome::Fail(format!("      writing the script failed: {error}\n")),
            (Ok(committed_bytes), Ok(fresh)) => compare_bytes(&committed_bytes, &fresh),
        };
        report.record(&mut row, "bytes", "", outcome);
        let opens = match pi_session_store::open(&committed) {
            Ok((_, diagnostics)) if diagnostics.is_empty() => Outcome::Pass,
            Ok((_, diagnostics)) => {
                Outcome::Fail(diagnostics.iter().map(|d| format!("      {d}\n")).collect())
            }
            Err(error) => Outcome::Fail(format!("      {error}\n")),
        };
        report.record(&mut row, "opens", "", opens);
        report.push_row(row);
    }
    for dialect in ["pi", "omp"] {
        let names: Vec<&str> = SCENARIOS
            .iter()
            .filter(|s| folder(s.dialect) == dialect)
            .map(|s| s.name)
            .filter(|name| only.is_none_or(|only| name.contains(only)))
            .collect();
        super::unstamped::check(report, &ours.join(dialect), dialect, &names);
    }
    check_recordings(report, ours, only);
    Ok(())
}

/// Writes every scenario into `ours/<dialect>/`, replacing what is there.
fn write_all(ours: &Path) -> Result<(), String> {
    for scenario in &SCENARIOS {
        let dir = ours.join(folder(scenario.dialect));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let bytes = write_one(&dir, scenario)?;
        if let Some((stripped, _)) =
            super::unstamped::strip_stamps(&String::from_utf8_lossy(&bytes))
        {
            let copy = dir.join(format!(
                "{}.jsonl",
                super::unstamped::copy_name(scenario.name)
            ));
            std::fs::write(&copy, stripped)
                .map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
        }
        eprintln!(
            "xtask: wrote {} ({} bytes): {}",
            dir.join(format!("{}.jsonl", scenario.name)).display(),
            bytes.len(),
            scenario.about
        );
    }
    Ok(())
}

/// Runs `scenario`'s script into `dir/<name>.jsonl` (replacing it) and returns the bytes.
fn write_one(dir: &Path, scenario: &Scenario) -> Result<Vec<u8>, String> {
    let name = scenario.name;
    let path = dir.join(format!("{name}.jsonl"));
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(format!("cannot replace {}: {error}", path.display())),
    }
    {
        let mut session = Script::new(&path, name, scenario.dialect);
        (scenario.write)(&mut session).map_err(|e| format!("scenario {name}: {e}"))?;
    }
    std::fs::read(&path).map_err(|e| format!("cannot read back {}: {e}", path.display()))
}

fn compare_bytes(committed: &[u8], fresh: &[u8]) -> Outcome {
    if committed == fresh {
        return Outcome::Pass;
    }
    let committed_text = String::from_utf8_lossy(committed);
    let fresh_text = String::from_utf8_lossy(fresh);
    let line = committed_text
        .lines()
        .zip(fresh_text.lines())
        .position(|(a, b)| a != b);
    let text = match line {
        Some(at) => format!(
            "      line {} differs:\n        committed: {}\n        written:   {}\n      (intended? `cargo xtask golden --write-ours`, review, then re-record with `cargo xtask record`)\n",
            at + 1,
            cut(committed_text.lines().nth(at).unwrap_or("")),
            cut(fresh_text.lines().nth(at).unwrap_or(""))
        ),
        None => format!(
            "      {} committed bytes, {} written (one is a prefix of the other)\n",
            committed.len(),
            fresh.len()
        ),
    };
    Outcome::Fail(text)
}

fn cut(line: &str) -> String {
    if line.chars().count() <= 200 {
        line.to_owned()
    } else {
        format!("{}…", line.chars().take(200).collect::<String>())
    }
}

/// A scratch folder removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self, String> {
        let dir =
            std::env::temp_dir().join(format!("pi-session-golden-ours-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every `fixtures/ours/<dialect>/<impl>/` folder: recordings of the files in `<dialect>/`.
fn check_recordings(report: &mut Report, ours: &Path, only: Option<&str>) {
    let Ok(dialects) = std::fs::read_dir(ours) else {
        report.notice(format!(
            "{} is absent; recordings of our own files not checked",
            ours.display()
        ));
        return;
    };
    let mut dialect_dirs: Vec<_> = dialects
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dialect_dirs.sort();
    let mut found = false;
    for dialect_dir in dialect_dirs {
        let Ok(impls) = std::fs::read_dir(&dialect_dir) else {
            continue;
        };
        let mut impl_dirs: Vec<_> = impls
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        impl_dirs.sort();
        for impl_dir in impl_dirs {
            found = true;
            let group = format!("ours/{}/{}", name_of(&dialect_dir), name_of(&impl_dir));
            recorded::check_folder(report, &group, &impl_dir, &dialect_dir, only);
        }
    }
    if !found {
        report.notice(format!(
            "no recordings of our own files under {} yet (`cargo xtask record` writes them)",
            ours.display()
        ));
    }
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
