//! `cargo xtask record`: record golden fixtures with the real omp and pi.
//!
//! The recorder scripts in `xtask/recorder/` drive each implementation's own `SessionManager`
//! (omp 18.2.3 under the pinned bun, pi 0.73.1 and 1.6.0 under node) to write the scenario
//! sessions, then re-open every file with the real code and write `<scenario>.expected.json`
//! next to it (schema: `fixtures/README.md`). Recording needs node, npm and the npm registry;
//! golden checking (`cargo xtask golden`) reads only the committed files.
//!
//! ```text
//! cargo xtask record [--only omp|pi|pi16] [--check] [--verify DIR]
//! ```
//!
//! - default: re-record `fixtures/<impl>/` for every implementation, and record what each
//!   implementation returns for the files our facade wrote (`fixtures/ours/<dialect>/*.jsonl`,
//!   when present) into `fixtures/ours/<dialect>/<impl>/` (pi-dialect files are opened by omp,
//!   pi and pi16; omp-dialect files by omp only);
//! - `--check`: record into a scratch folder and fail if any byte differs from the committed
//!   fixtures (the determinism check; nothing in `fixtures/` is touched);
//! - `--verify DIR`: only record `DIR/*.jsonl` with the selected implementations into
//!   `DIR/<impl>/`.
//!
//! With omp selected, it also records omp's import of every Claude Code and Codex transcript of
//! `../shared/corpus/foreign/` and `fixtures/foreign/{claude,codex}/` into
//! `fixtures/foreign/omp/` (`record.mjs omp foreign`, see `xtask/recorder/src/foreign.mjs`);
//! without the corpus that step is skipped with a notice, so its recordings are not lost.
//!
//! With omp selected it also records omp keeping sessions in Redis (its own
//! `RedisSessionStorage` against a private `redis-server`) into `fixtures/redis/omp/` (see
//! [`redis`]).
//!
//! It also re-records the differential files (each implementation's `buildSessionContext` over
//! session trees given as values, pi 1.6's `convertToLlm`; see [`differential`]), so there is one
//! recorder for everything the tests compare with the real code.

mod differential;
mod redis;

use crate::util::workspace_root;
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One implementation the recorder can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Implementation {
    Omp,
    Pi,
    Pi16,
}

impl Implementation {
    const ALL: [Implementation; 3] = [
        Implementation::Omp,
        Implementation::Pi,
        Implementation::Pi16,
    ];

    fn name(self) -> &'static str {
        match self {
            Implementation::Omp => "omp",
            Implementation::Pi => "pi",
            Implementation::Pi16 => "pi16",
        }
    }

    /// The session dialect the implementation writes (the folder name under `fixtures/ours/`).
    fn dialect(self) -> &'static str {
        match self {
            Implementation::Omp => "omp",
            Implementation::Pi | Implementation::Pi16 => "pi",
        }
    }

    /// Whether this implementation is asked to open files of `dialect` that our facade wrote
    /// (`fixtures/ours/<dialect>/`): every implementation opens pi-dialect files (omp reads pi's
    /// format, see the `pi-written-file` scenario), only omp opens omp-dialect files.
    fn reads_dialect(self, dialect: &str) -> bool {
        dialect == "pi" || dialect == self.dialect()
    }

    /// Where the model registry of this implementation's pi-ai is written (workspace-relative);
    /// `None` when its provider requests are not recorded (pi 1.6 shares pi 0.73's pi-ai rules
    /// for now).
    fn registry_file(self) -> Option<&'static str> {
        match self {
            Implementation::Omp => Some(OMP_REGISTRY),
            Implementation::Pi => Some(PI_REGISTRY),
            Implementation::Pi16 => None,
        }
    }

    fn parse(text: &str) -> Result<Self, String> {
        Implementation::ALL
            .into_iter()
            .find(|implementation| implementation.name() == text)
            .ok_or_else(|| {
                format!("unknown implementation `{text}` for --only (expected omp, pi or pi16)")
            })
    }

    /// The program that runs this implementation's recorder: omp ships TypeScript and runs under
    /// the bun pinned in package.json; pi's dist runs under node.
    fn runtime(self, recorder: &Path) -> PathBuf {
        match self {
            Implementation::Omp => recorder.join("node_modules").join(".bin").join("bun"),
            Implementation::Pi | Implementation::Pi16 => PathBuf::from("node"),
        }
    }
}

/// omp 18.2.3's model catalog as the provider-request code reads it (generated, never edited).
const OMP_REGISTRY: &str = "crates/pi-session-context/data/models-omp.json";
/// pi 0.73.1's model registry as the provider-request code reads it (generated, never edited).
const PI_REGISTRY: &str = "crates/pi-session-context/data/models-pi.json";

/// The parsed command line.
#[derive(Debug)]
struct Options {
    implementations: Vec<Implementation>,
    check: bool,
    verify: Option<PathBuf>,
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut implementations = Vec::new();
    let mut check = false;
    let mut verify = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--only" => {
                let value = rest.next().ok_or("--only needs a value: omp, pi or pi16")?;
                implementations.push(Implementation::parse(value)?);
            }
            "--verify" => {
                let value = rest
                    .next()
                    .ok_or("--verify needs a directory of .jsonl files")?;
                verify = Some(PathBuf::from(value));
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`\nusage: cargo xtask record [--only omp|pi|pi16] [--check] [--verify DIR]"
                ));
            }
        }
    }
    if implementations.is_empty() {
        implementations = Implementation::ALL.to_vec();
    }
    Ok(Options {
        implementations,
        check,
        verify,
    })
}

/// A recorder run killed after this long is reported as hung (pi 0.73.1 hangs on parent cycles).
const RECORDER_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs `cargo xtask record`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse_options(args)?;
    let root = workspace_root();
    let recorder = root.join("xtask").join("recorder");
    require_tool(
        "node",
        "install Node.js 20 or newer (https://nodejs.org) and make sure `node` is on PATH",
    )?;
    require_tool(
        "npm",
        "install npm (it ships with Node.js) and make sure `npm` is on PATH",
    )?;
    ensure_node_modules(&recorder)?;
    let scratch = Scratch::new()?;

    if let Some(dir) = &options.verify {
        let dir = std::path::absolute(dir)
            .map_err(|error| format!("bad --verify directory {}: {error}", dir.display()))?;
        for &implementation in &options.implementations {
            verify_directory(
                &recorder,
                &scratch,
                implementation,
                &dir,
                &dir.join(implementation.name()),
                options.check,
            )?;
        }
        return Ok(());
    }

    // First: it takes seconds, and needs nothing the scenario recordings make.
    differential::record(
        &recorder,
        &scratch,
        &root,
        &options.implementations,
        options.check,
    )?;
    let fixtures = root.join("fixtures");
    for &implementation in &options.implementations {
        record_scenarios(
            &recorder,
            &scratch,
            implementation,
            &fixtures.join(implementation.name()),
            options.check,
        )?;
        if let Some(registry) = implementation.registry_file() {
            record_requests(
                &recorder,
                &scratch,
                implementation,
                &fixtures.join(implementation.name()),
                &root.join(registry),
                options.check,
            )?;
        }
    }
    if options.implementations.contains(&Implementation::Omp) {
        record_foreign(&recorder, &scratch, &root, options.check)?;
        redis::record(&recorder, &scratch, &fixtures, options.check)?;
    }
    // Damaged pi-dialect files and their repaired copies, read by every implementation.
    let repair = fixtures.join("repair");
    if has_jsonl_files(&repair) {
        for &implementation in &options.implementations {
            let target = repair.join(implementation.name());
            verify_directory(
                &recorder,
                &scratch,
                implementation,
                &repair,
                &target,
                options.check,
            )?;
        }
    }
    for dialect in ["pi", "omp"] {
        let ours = fixtures.join("ours").join(dialect);
        if !has_jsonl_files(&ours) {
            continue;
        }
        for &implementation in &options.implementations {
            if implementation.reads_dialect(dialect) {
                verify_directory(
                    &recorder,
                    &scratch,
                    implementation,
                    &ours,
                    &ours.join(implementation.name()),
                    options.check,
                )?;
            }
        }
    }
    Ok(())
}

fn require_tool(program: &str, advice: &str) -> Result<(), String> {
    match Command::new(program).arg("--version").output() {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!(
            "`{program} --version` failed ({}); {advice}",
            output.status
        )),
        Err(error) => Err(format!(
            "`{program}` was not found ({error}); recording needs it: {advice}"
        )),
    }
}

/// Runs `npm ci` when node_modules is missing or does not hold what package-lock.json pins.
///
/// Freshness is read from the packages, not from file times: a fresh checkout (a new worktree)
/// gives package-lock.json a new mtime although the install still matches it. A `node_modules`
/// that is a symlink (a worktree sharing another checkout's install) is never reinstalled
/// through: `npm ci` would empty the shared install while others use it.
fn ensure_node_modules(recorder: &Path) -> Result<(), String> {
    let lock = recorder.join("package-lock.json");
    let modules = recorder.join("node_modules");
    if install_matches_lock(&lock, &modules.join(".package-lock.json")) {
        return Ok(());
    }
    if fs::symlink_metadata(&modules).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
        return Err(format!(
            "{} is a symlink to a shared install that does not match package-lock.json; \
             refusing to run `npm ci` through it (that would empty the shared install). \
             Update the install where the symlink points, or replace the symlink with a directory",
            modules.display()
        ));
    }
    eprintln!(
        "xtask: installing the pinned omp and pi packages (npm ci in {})",
        recorder.display()
    );
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(recorder)
        .status()
        .map_err(|error| format!("could not run npm ci: {error}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "npm ci failed ({status}) in {}; check network access to the npm registry. If the lock file was regenerated with \
             `npm install`, run `node fix-lock.mjs` there (see fixtures/README.md)",
            recorder.display()
        ))
    }
}

/// Whether npm's record of what is installed (`node_modules/.package-lock.json`) agrees with
/// the lock file: every installed package at the locked version, every direct dependency there.
fn install_matches_lock(lock: &Path, installed: &Path) -> bool {
    let read =
        |path: &Path| -> Option<Value> { serde_json::from_slice(&fs::read(path).ok()?).ok() };
    let (Some(lock), Some(installed)) = (read(lock), read(installed)) else {
        return false;
    };
    let (Some(locked), Some(present)) = (
        lock["packages"].as_object(),
        installed["packages"].as_object(),
    ) else {
        return false;
    };
    let versions_agree = present.iter().all(|(path, package)| {
        locked
            .get(path)
            .is_some_and(|pinned| pinned["version"] == package["version"])
    });
    let direct = locked
        .get("")
        .and_then(|root| root["dependencies"].as_object());
    let direct_present = direct.is_some_and(|direct| {
        direct
            .keys()
            .all(|name| present.contains_key(&format!("node_modules/{name}")))
    });
    versions_agree && direct_present
}

fn has_jsonl_files(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
    })
}

/// Records every scenario of `implementation` into a scratch folder, then either replaces
/// `target` with it or (with `check`) compares the two.
fn record_scenarios(
    recorder: &Path,
    scratch: &Scratch,
    implementation: Implementation,
    target: &Path,
    check: bool,
) -> Result<(), String> {
    let out = scratch.fresh_dir(&format!("out-{}", implementation.name()))?;
    run_recorder(
        recorder,
        scratch,
        implementation,
        "record.mjs",
        &["scenarios".as_ref(), out.as_os_str()],
    )?;
    publish(&out, target, check, implementation)
}

/// Records omp's import of every foreign transcript (corpus and hand-written) into
/// `fixtures/foreign/omp/`.
fn record_foreign(
    recorder: &Path,
    scratch: &Scratch,
    root: &Path,
    check: bool,
) -> Result<(), String> {
    let corpus = root
        .join("..")
        .join("shared")
        .join("corpus")
        .join("foreign");
    if !corpus.is_dir() {
        eprintln!(
            "xtask: the foreign corpus ({}) is absent; omp's foreign imports were not re-recorded",
            corpus.display()
        );
        return Ok(());
    }
    let hand = root.join("fixtures").join("foreign");
    let out = scratch.fresh_dir("out-foreign")?;
    run_recorder(
        recorder,
        scratch,
        Implementation::Omp,
        "record.mjs",
        &[
            "foreign".as_ref(),
            corpus.as_os_str(),
            hand.as_os_str(),
            out.as_os_str(),
        ],
    )?;
    publish(&out, &hand.join("omp"), check, Implementation::Omp)
}

/// Records what `implementation` returns for every `.jsonl` in `input` into `target`.
fn verify_directory(
    recorder: &Path,
    scratch: &Scratch,
    implementation: Implementation,
    input: &Path,
    target: &Path,
    check: bool,
) -> Result<(), String> {
    let out = scratch.fresh_dir(&format!("verify-{}", implementation.name()))?;
    run_recorder(
        recorder,
        scratch,
        implementation,
        "record.mjs",
        &["verify".as_ref(), input.as_os_str(), out.as_os_str()],
    )?;
    publish(&out, target, check, implementation)
}

/// Runs `record.mjs <impl> <args>` with a scratch HOME and agent dir, so nothing of the user's
/// own omp/pi configuration leaks in and nothing is written outside the scratch folder.
fn run_recorder(
    recorder: &Path,
    scratch: &Scratch,
    implementation: Implementation,
    script: &str,
    args: &[&std::ffi::OsStr],
) -> Result<(), String> {
    let home = scratch.fresh_dir(&format!("home-{}", implementation.name()))?;
    let runtime = implementation.runtime(recorder);
    let mut command = Command::new(&runtime);
    command
        .current_dir(recorder)
        .arg(script)
        .arg(implementation.name())
        .args(args);
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if key_text.starts_with("XDG_")
            || key_text.starts_with("PI_")
            || key_text.starts_with("OMP_")
        {
            command.env_remove(&key);
        }
    }
    command
        .env("HOME", &home)
        .env("PI_CODING_AGENT_DIR", home.join("agent"))
        .env(
            "TMPDIR",
            scratch.fresh_dir(&format!("tmp-{}", implementation.name()))?,
        )
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    eprintln!(
        "xtask: recording {} with {}",
        implementation.name(),
        runtime.display()
    );
    let mut child = command
        .spawn()
        .map_err(|error| format!("could not start {}: {error}", runtime.display()))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                return Err(format!(
                    "the {} recorder failed ({status}); its output is above",
                    implementation.name()
                ));
            }
            Ok(None) if started.elapsed() > RECORDER_TIMEOUT => {
                // Best effort: the child is ours and still running.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the {} recorder did not finish within {} s and was stopped; a scenario probably makes the implementation hang",
                    implementation.name(),
                    RECORDER_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(error) => {
                return Err(format!(
                    "could not wait for the {} recorder: {error}",
                    implementation.name()
                ));
            }
        }
    }
}

/// Runs `requests.mjs`: the implementation's pi-ai builds a request body for every recorded
/// context of `fixtures` and a set of models (captured on 127.0.0.1, see the script), stored in
/// `fixtures/requests/`; its model registry goes to `registry`.
fn record_requests(
    recorder: &Path,
    scratch: &Scratch,
    implementation: Implementation,
    fixtures: &Path,
    registry: &Path,
    check: bool,
) -> Result<(), String> {
    let out = scratch.fresh_dir(&format!("requests-{}", implementation.name()))?;
    run_recorder(
        recorder,
        scratch,
        implementation,
        "requests.mjs",
        &[fixtures.as_os_str(), out.as_os_str()],
    )?;
    let recorded = out.join("requests");
    let target = fixtures.join("requests");
    let fresh_registry = read(&out.join("models.json"))?;
    if check {
        let mut differences = compare_trees_where(&recorded, &target, |_| true)?;
        if fs::read(registry).ok().as_deref() != Some(fresh_registry.as_slice()) {
            differences.push(registry.display().to_string());
        }
        if differences.is_empty() {
            eprintln!(
                "xtask: {}: provider requests match {} byte for byte",
                implementation.name(),
                target.display()
            );
            return Ok(());
        }
        return Err(format!(
            "{}: re-recorded provider requests differ in {} file(s):\n  {}",
            implementation.name(),
            differences.len(),
            differences.join("\n  ")
        ));
    }
    if target.exists() {
        fs::remove_dir_all(&target)
            .map_err(|error| format!("could not clear {}: {error}", target.display()))?;
    }
    replace_recorded_files(&recorded, &target)?;
    if let Some(parent) = registry.parent() {
        fs::create_dir_all(parent)
            .map_err(|error| format!("could not create {}: {error}", parent.display()))?;
    }
    fs::write(registry, fresh_registry)
        .map_err(|error| format!("could not write {}: {error}", registry.display()))?;
    println!(
        "{}: provider requests in {}, model registry in {}",
        implementation.name(),
        target.display(),
        registry.display()
    );
    Ok(())
}

/// Moves a fresh recording into place, or with `check` compares it with what is committed.
fn publish(
    recorded: &Path,
    target: &Path,
    check: bool,
    implementation: Implementation,
) -> Result<(), String> {
    if check {
        let differences = compare_trees(recorded, target)?;
        if differences.is_empty() {
            eprintln!(
                "xtask: {}: re-recording matches {} byte for byte",
                implementation.name(),
                target.display()
            );
            return Ok(());
        }
        let shown: Vec<String> = differences.iter().take(20).cloned().collect();
        return Err(format!(
            "{}: re-recording differs from {} in {} file(s):\n  {}\nRun `cargo xtask record` and review the diff if the change is intended.",
            implementation.name(),
            target.display(),
            differences.len(),
            shown.join("\n  ")
        ));
    }
    replace_recorded_files(recorded, target)?;
    let count = fs::read_dir(target)
        .map_err(|error| format!("could not list {}: {error}", target.display()))?
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .ends_with(".expected.json")
        })
        .count();
    println!(
        "{}: {count} recordings in {}",
        implementation.name(),
        target.display()
    );
    Ok(())
}

/// Files the recorder owns inside a fixture folder (anything else, e.g. a README, is left alone).
fn is_recorded_file(relative: &Path) -> bool {
    let name = relative.to_string_lossy();
    name.ends_with(".jsonl") || name.ends_with(".expected.json") || name.starts_with("blobs")
}

fn replace_recorded_files(recorded: &Path, target: &Path) -> Result<(), String> {
    fs::create_dir_all(target)
        .map_err(|error| format!("could not create {}: {error}", target.display()))?;
    for relative in list_files(target)? {
        if is_recorded_file(&relative) {
            let path = target.join(&relative);
            fs::remove_file(&path)
                .map_err(|error| format!("could not remove stale {}: {error}", path.display()))?;
        }
    }
    for relative in list_files(recorded)? {
        let destination = target.join(&relative);
        if let Some(parent) = destination.parent() {
            fs::create_dir_all(parent)
                .map_err(|error| format!("could not create {}: {error}", parent.display()))?;
        }
        fs::copy(recorded.join(&relative), &destination)
            .map_err(|error| format!("could not write {}: {error}", destination.display()))?;
    }
    Ok(())
}

/// Names of the files that differ, are missing, or are extra (recorder-owned files only).
fn compare_trees(recorded: &Path, committed: &Path) -> Result<Vec<String>, String> {
    compare_trees_where(recorded, committed, is_recorded_file)
}

/// [`compare_trees`] over the committed files that `owned` accepts.
fn compare_trees_where(
    recorded: &Path,
    committed: &Path,
    owned: fn(&Path) -> bool,
) -> Result<Vec<String>, String> {
    let fresh: BTreeSet<PathBuf> = list_files(recorded)?.into_iter().collect();
    let existing: BTreeSet<PathBuf> = if committed.exists() {
        list_files(committed)?
            .into_iter()
            .filter(|path| owned(path))
            .collect()
    } else {
        BTreeSet::new()
    };
    let mut differences = Vec::new();
    for relative in fresh.union(&existing) {
        let shown = relative.display();
        match (fresh.contains(relative), existing.contains(relative)) {
            (true, false) => differences.push(format!("{shown}: recorded now but not committed")),
            (false, true) => differences.push(format!("{shown}: committed but no longer recorded")),
            _ => {
                let left = read(&recorded.join(relative))?;
                let right = read(&committed.join(relative))?;
                if left != right {
                    differences.push(format!("{shown}: {}", first_difference(&left, &right)));
                }
            }
        }
    }
    Ok(differences)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|error| format!("could not read {}: {error}", path.display()))
}

/// "line N differs" for the first differing line, to point a person at the change.
fn first_difference(recorded: &[u8], committed: &[u8]) -> String {
    let recorded_text = String::from_utf8_lossy(recorded);
    let committed_text = String::from_utf8_lossy(committed);
    let mut committed_lines = committed_text.lines();
    for (index, line) in recorded_text.lines().enumerate() {
        match committed_lines.next() {
            Some(other) if other == line => {}
            _ => return format!("line {} differs", index + 1),
        }
    }
    "the committed file is longer or differs in line endings".to_owned()
}

/// Every file below `dir`, as paths relative to it, sorted.
fn list_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    crate::util::files_below(dir, |_| true)
}

/// A scratch folder under the system temp dir, removed when dropped.
#[derive(Debug)]
struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new() -> Result<Self, String> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let root =
            std::env::temp_dir().join(format!("pi-session-record-{}-{stamp}", std::process::id()));
        fs::create_dir_all(&root).map_err(|error| {
            format!(
                "could not create scratch folder {}: {error}",
                root.display()
            )
        })?;
        Ok(Scratch { root })
    }

    fn fresh_dir(&self, name: &str) -> Result<PathBuf, String> {
        let dir = self.root.join(name);
        if dir.exists() {
            fs::remove_dir_all(&dir)
                .map_err(|error| format!("could not clear {}: {error}", dir.display()))?;
        }
        fs::create_dir_all(&dir)
            .map_err(|error| format!("could not create {}: {error}", dir.display()))?;
        Ok(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Best effort: a leftover scratch folder in the temp dir is harmless.
        let _ = fs::remove_dir_all(&self.root);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn install_freshness_reads_packages_not_file_times() {
        let dir = std::env::temp_dir().join(format!("xtask-lock-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let lock = dir.join("package-lock.json");
        let installed = dir.join("installed.json");
        fs::write(
            &lock,
            r#"{"packages":{"":{"dependencies":{"a":"1"}},"node_modules/a":{"version":"1.0.0"},"node_modules/opt":{"version":"2.0.0","optional":true}}}"#,
        )
        .unwrap();
        fs::write(
            &installed,
            r#"{"packages":{"node_modules/a":{"version":"1.0.0"}}}"#,
        )
        .unwrap();
        assert!(install_matches_lock(&lock, &installed));
        fs::write(
            &installed,
            r#"{"packages":{"node_modules/a":{"version":"0.9.0"}}}"#,
        )
        .unwrap();
        assert!(
            !install_matches_lock(&lock, &installed),
            "a version differs"
        );
        fs::write(&installed, r#"{"packages":{}}"#).unwrap();
        assert!(
            !install_matches_lock(&lock, &installed),
            "a direct dependency is missing"
        );
        assert!(!install_matches_lock(&lock, &dir.join("absent.json")));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn options_default_to_every_implementation() {
        let options = parse_options(&[]).unwrap();
        assert_eq!(options.implementations, Implementation::ALL.to_vec());
        assert!(!options.check);
    }

    #[test]
    fn options_parse_only_check_and_verify() {
        let options = parse_options(&args(&[
            "--only",
            "pi16",
            "--check",
            "--verify",
            "fixtures/ours/pi",
        ]))
        .unwrap();
        assert_eq!(options.implementations, vec![Implementation::Pi16]);
        assert!(options.check);
        assert_eq!(options.verify, Some(PathBuf::from("fixtures/ours/pi")));
    }

    #[test]
    fn options_reject_unknown_values() {
        assert!(
            parse_options(&args(&["--only", "rho"]))
                .unwrap_err()
                .contains("unknown implementation")
        );
        assert!(
            parse_options(&args(&["--frobnicate"]))
                .unwrap_err()
                .contains("unknown argument")
        );
        assert!(parse_options(&args(&["--only"])).is_err());
    }

    #[test]
    fn every_implementation_reads_pi_files_and_only_omp_reads_omp_files() {
        for implementation in Implementation::ALL {
            assert!(implementation.reads_dialect("pi"));
        }
        assert!(Implementation::Omp.reads_dialect("omp"));
        assert!(!Implementation::Pi.reads_dialect("omp"));
        assert!(!Implementation::Pi16.reads_dialect("omp"));
    }

    #[test]
    fn recorded_files_are_jsonl_expectations_and_blobs() {
        assert!(is_recorded_file(Path::new("linear-chat.jsonl")));
        assert!(is_recorded_file(Path::new("linear-chat.expected.json")));
        assert!(is_recorded_file(Path::new("v1-format.reopened.jsonl")));
        assert!(is_recorded_file(&Path::new("blobs").join("ab12")));
        assert!(!is_recorded_file(Path::new("README.md")));
    }

    #[test]
    fn compare_reports_changed_missing_and_extra_files() {
        let scratch = Scratch::new().unwrap();
        let fresh = scratch.fresh_dir("fresh").unwrap();
        let committed = scratch.fresh_dir("committed").unwrap();
        fs::write(fresh.join("same.jsonl"), "a\nb\n").unwrap();
        fs::write(committed.join("same.jsonl"), "a\nb\n").unwrap();
        fs::write(fresh.join("changed.expected.json"), "a\nb\n").unwrap();
        fs::write(committed.join("changed.expected.json"), "a\nc\n").unwrap();
        fs::write(fresh.join("new.jsonl"), "x").unwrap();
        fs::write(committed.join("gone.jsonl"), "y").unwrap();
        fs::write(committed.join("README.md"), "not ours").unwrap();
        let differences = compare_trees(&fresh, &committed).unwrap();
        assert_eq!(
            differences,
            vec![
                "changed.expected.json: line 2 differs".to_owned(),
                "gone.jsonl: committed but no longer recorded".to_owned(),
                "new.jsonl: recorded now but not committed".to_owned(),
            ]
        );
    }

    #[test]
    fn replace_keeps_foreign_files_and_drops_stale_recordings() {
        let scratch = Scratch::new().unwrap();
        let fresh = scratch.fresh_dir("fresh").unwrap();
        let target = scratch.fresh_dir("target").unwrap();
        fs::create_dir_all(fresh.join("blobs")).unwrap();
        fs::write(fresh.join("blobs").join("abc"), "blob").unwrap();
        fs::write(fresh.join("a.jsonl"), "new").unwrap();
        fs::write(target.join("a.jsonl"), "old").unwrap();
        fs::write(target.join("stale.expected.json"), "old").unwrap();
        fs::write(target.join("README.md"), "keep").unwrap();
        replace_recorded_files(&fresh, &target).unwrap();
        assert_eq!(
            list_files(&target).unwrap(),
            vec![
                PathBuf::from("README.md"),
                PathBuf::from("a.jsonl"),
                Path::new("blobs").join("abc")
            ]
        );
        assert_eq!(fs::read_to_string(target.join("a.jsonl")).unwrap(), "new");
    }
}
