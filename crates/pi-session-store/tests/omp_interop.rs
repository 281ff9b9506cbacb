//! Against real omp (18.2.3, run under bun): omp's own appender honours our publish lock file,
//! and an omp append between two of ours is caught by the expected-size check.
//!
//! Needs the recorder's node_modules (`xtask/recorder/node_modules`, with bun); without them
//! (as in CI) each test prints a SKIPPED notice and does nothing.

use crate::common::entry;
use pi_session_store::{SessionWriter, StoreError, WriterOptions, new_header, publish_lock_path};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// Appends one line with omp's `FileSessionStorage` writer (which takes omp's publish lock)
/// and prints `APPENDED` or `ERROR <name>: <message>`.
const PROBE: &str = r#"
const { FileSessionStorage } = await import(process.env.OMP_SESSION_STORAGE);
const [path, line] = process.argv.slice(2);
try {
  const writer = new FileSessionStorage().openWriter(path);
  writer.appendSync(line + "\n");
  await writer.close();
  console.log("APPENDED");
} catch (error) {
  console.log(`ERROR ${error.name}: ${error.message}`);
}
"#;

struct Omp {
    bun: PathBuf,
    storage: PathBuf,
    probe: PathBuf,
    _dir: tempfile::TempDir,
}

impl Omp {
    fn find() -> Option<Self> {
        let modules =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../xtask/recorder/node_modules");
        let bun = modules.join(".bin/bun");
        let storage = modules.join("@oh-my-pi/pi-coding-agent/src/session/session-storage.ts");
        if !bun.is_file() || !storage.is_file() {
            println!(
                "SKIPPED: omp interop needs bun and omp in {} (absent, e.g. in CI)",
                modules.display()
            );
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let probe = dir.path().join("omp_append.ts");
        fs::write(&probe, PROBE).unwrap();
        Some(Self {
            bun,
            storage,
            probe,
            _dir: dir,
        })
    }

    /// Runs omp's append of `line` to `session`; returns what the probe printed.
    fn append(&self, session: &Path, line: &str) -> String {
        let output = Command::new(&self.bun)
            // Never fetch packages: everything must come from the local node_modules.
            .arg("--no-install")
            .arg(&self.probe)
            .arg(session)
            .arg(line)
            .env("OMP_SESSION_STORAGE", &self.storage)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }
}

const OMP_LINE: &str =
    r#"{"type":"label","id":"0a0a0a0a","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}"#;

#[test]
fn omp_waits_for_our_publish_lock_and_gives_up_without_writing() {
    let Some(omp) = Omp::find() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    writer.append(entry("label", &[])).unwrap();
    let path = writer.path().unwrap().to_path_buf();

    // The lock as this process writes it while appending (same name, same record): created
    // (a writer's first claim), then as a hard link to a record file of the writer's own (its
    // later claims).
    let lock = publish_lock_path(&path);
    let record_file = dir.path().join(".record.publish");
    for linked in [false, true] {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let record = format!("{}:{millis}\n", std::process::id());
        if linked {
            fs::write(&record_file, record).unwrap();
            fs::hard_link(&record_file, &lock).unwrap();
        } else {
            fs::write(&lock, record).unwrap();
        }
        let size = fs::metadata(&path).unwrap().len();
        let printed = omp.append(&path, OMP_LINE);
        assert!(
            printed.starts_with("ERROR SessionLockError"),
            "linked={linked}: {printed}"
        );
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            size,
            "omp wrote nothing (linked={linked})"
        );

        fs::remove_file(&lock).unwrap();
        assert_eq!(omp.append(&path, OMP_LINE), "APPENDED", "linked={linked}");
        assert!(!lock.exists(), "omp releases its lock");
        assert!(
            !linked || record_file.exists(),
            "omp leaves the record file alone"
        );
    }
}

#[test]
fn an_omp_append_between_two_of_ours_is_a_conflict() {
    let Some(omp) = Omp::find() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    writer.append(entry("label", &[])).unwrap();
    let path = writer.path().unwrap().to_path_buf();

    assert_eq!(omp.append(&path, OMP_LINE), "APPENDED");
    assert!(matches!(
        writer.append(entry("label", &[])),
        Err(StoreError::Conflict { .. })
    ));

    drop(writer);
    let (mut resumed, _, _) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    let ours = resumed.append(entry("label", &[])).unwrap();
    assert_eq!(
        ours.parent_id(),
        Some("0a0a0a0a"),
        "appended after omp's entry"
    );
}
