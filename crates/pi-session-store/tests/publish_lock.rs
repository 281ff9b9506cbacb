//! omp's publish lock (`.<name>.lock`) around every write, and the expected-size check: a
//! foreign holder makes an append wait and then fail; orphaned locks are stolen by omp's rules;
//! a foreign append or rewrite between two of ours is a conflict, never a silent interleave.

use crate::common::entry;
use pi_session_store::{
    Durability, PUBLISH_LOCK_WAIT, SessionWriter, StoreError, WriterOptions, new_header, open,
    publish_lock_path,
};
use serde_json::json;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A session with one entry on disk; the writer still owns it.
fn written_session(dir: &Path, options: WriterOptions) -> (SessionWriter, PathBuf) {
    let mut writer = SessionWriter::create(dir, new_header("/w"), options);
    writer.append(entry("label", &[])).unwrap();
    let path = writer.path().unwrap().to_path_buf();
    (writer, path)
}

/// [`written_session`] (default options) in a new temporary folder, kept with it.
fn temp_session() -> (tempfile::TempDir, SessionWriter, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path) = written_session(dir.path(), WriterOptions::default());
    (dir, writer, path)
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

fn write_lock(session: &Path, content: &str) -> PathBuf {
    let lock = publish_lock_path(session);
    fs::write(&lock, content).unwrap();
    lock
}

fn set_mtime(path: &Path, time: SystemTime) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(time).unwrap();
}

/// Appends a line to the file the way a foreign writer (omp) would.
fn foreign_append(path: &Path, line: &str) {
    let mut file = fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(line.as_bytes()).unwrap();
}

const FOREIGN_LINE: &str = "{\"type\":\"label\",\"id\":\"f0f0f0f0\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\"}\n";

/// Asserts that `append` gave up on a held lock after the full wait, left the holder's lock
/// in place, and wrote nothing.
fn assert_times_out(writer: &mut SessionWriter, path: &Path, lock: &Path, holder: &str) {
    let size = fs::metadata(path).unwrap().len();
    let started = Instant::now();
    let error = writer.append(entry("label", &[])).unwrap_err();
    let waited = started.elapsed();
    match &error {
        StoreError::PublishLockTimeout {
            lock: named,
            holder: found,
            ..
        } => {
            assert_eq!(named, lock);
            assert_eq!(found, holder.trim_end());
        }
        other => panic!("expected PublishLockTimeout, got {other}"),
    }
    let message = error.to_string();
    assert!(message.contains(&lock.display().to_string()), "{message}");
    assert!(message.contains("delete"), "says what to do: {message}");
    assert!(waited >= PUBLISH_LOCK_WAIT, "waited only {waited:?}");
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    assert_eq!(
        fs::read_to_string(lock).unwrap(),
        holder,
        "a live lock is kept"
    );
    assert_eq!(fs::metadata(path).unwrap().len(), size, "nothing written");
}

#[test]
fn the_lock_file_exists_only_during_a_write() {
    let (_dir, mut writer, path) = temp_session();
    let lock = publish_lock_path(&path);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert_eq!(lock, path.with_file_name(format!(".{name}.lock")));
    assert!(!lock.exists(), "released after the creating append");
    writer.append(entry("label", &[])).unwrap();
    assert!(!lock.exists(), "released after an append");
    writer
        .set_title(Some("t"), None)
        .expect("a title change works");
    assert!(!lock.exists());
}

/// The hidden files beside `session` whose names start with its own (sorted).
fn hidden_files_of(session: &Path) -> Vec<String> {
    let prefix = format!(".{}.", session.file_name().unwrap().to_str().unwrap());
    let mut names: Vec<String> = fs::read_dir(session.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(&prefix))
        .collect();
    names.sort();
    names
}

#[cfg(unix)]
#[test]
fn later_claims_link_a_record_file_of_the_writers_own_which_closing_deletes() {
    let (dir, mut writer, path) = temp_session();
    let name = path.file_name().unwrap().to_str().unwrap().to_owned();
    for _ in 0..3 {
        writer.append(entry("label", &[])).unwrap();
    }
    let hidden = hidden_files_of(&path);
    let publish: Vec<&String> = hidden.iter().filter(|n| n.ends_with(".publish")).collect();
    assert_eq!(
        publish.len(),
        1,
        "one record file for every claim: {hidden:?}"
    );
    let record = fs::read_to_string(dir.path().join(publish[0])).unwrap();
    let (pid, millis) = record.trim_end().split_once(':').unwrap();
    assert_eq!(pid, std::process::id().to_string(), "{record:?}");
    assert!(millis.parse::<u128>().unwrap() <= now_ms());
    assert!(record.ends_with('\n'), "{record:?}");
    assert!(
        !publish_lock_path(&path).exists(),
        "released after each append"
    );
    assert_eq!(open(&path).unwrap().0.len(), 4);

    drop(writer);
    assert_eq!(hidden_files_of(&path), Vec::<String>::new(), "{name}");
}

#[cfg(unix)]
#[test]
fn a_record_file_removed_by_someone_else_makes_claims_create_the_lock_again() {
    let (dir, mut writer, path) = temp_session();
    writer.append(entry("label", &[])).unwrap();
    for name in hidden_files_of(&path) {
        if name.ends_with(".publish") {
            fs::remove_file(dir.path().join(name)).unwrap();
        }
    }
    writer.append(entry("label", &[])).unwrap();
    writer.append(entry("label", &[])).unwrap();
    assert!(!publish_lock_path(&path).exists());
    assert!(
        hidden_files_of(&path)
            .iter()
            .all(|n| !n.ends_with(".publish")),
        "no new record file: claims create the lock file"
    );
    assert_intact(&path, 4);
}

#[cfg(unix)]
#[test]
fn a_lock_left_linked_by_a_dead_writer_is_stolen() {
    let pid = dead_pid();
    let (dir, mut writer, path) = temp_session();
    // What a writer killed while holding the lock leaves: its record file, linked as the lock.
    let record = dir.path().join(format!(
        ".{}.{pid}.0.publish",
        path.file_name().unwrap().to_str().unwrap()
    ));
    fs::write(&record, format!("{pid}:{}\n", now_ms())).unwrap();
    let lock = publish_lock_path(&path);
    fs::hard_link(&record, &lock).unwrap();
    writer.append(entry("label", &[])).unwrap();
    writer.append(entry("label", &[])).unwrap();
    // The name is stolen (the holder is dead); the record file goes when this writer makes
    // its own (its second claim, the first of these appends).
    assert!(!lock.exists());
    assert!(!record.exists(), "the dead writer's record file is deleted");
    assert_eq!(open(&path).unwrap().0.len(), 3);
}

/// Record files that writers killed before they closed left beside the session are deleted
/// when the next writer makes its own (their pids are dead); one of a live process, another
/// session's, and a name of another shape stay.
#[cfg(unix)]
#[test]
fn record_files_of_dead_writers_are_deleted_by_the_next_writer() {
    let Some(sleeper) = live_process("a live writer") else {
        return;
    };
    let (dir, mut writer, path) = temp_session();
    let name = path.file_name().unwrap().to_str().unwrap().to_owned();
    let dead = dead_pid();
    let left = |what: &str| dir.path().join(what);
    let orphans = [
        left(&format!(".{name}.{dead}.0.publish")),
        left(&format!(".{name}.{dead}.17.publish")),
    ];
    let kept = [
        left(&format!(".{name}.{}.3.publish", sleeper.id())),
        left(&format!(".other.jsonl.{dead}.0.publish")),
        left(&format!(".{name}.{dead}.x.publish")),
        left(&format!(".{name}.{dead}.0.tmp")),
    ];
    for file in orphans.iter().chain(&kept) {
        fs::write(file, format!("{dead}:{}\n", now_ms())).unwrap();
    }
    writer.append(entry("label", &[])).unwrap();
    writer.append(entry("label", &[])).unwrap();
    for file in &orphans {
        assert!(!file.exists(), "{} is deleted", file.display());
    }
    for file in &kept {
        assert!(file.exists(), "{} stays", file.display());
    }
    let own = hidden_files_of(&path)
        .into_iter()
        .filter(|n| n.ends_with(".publish") && n.contains(&format!(".{}.", std::process::id())))
        .count();
    assert_eq!(own, 1, "the writer's own record file is made");
}

/// A process alive until dropped (`sleep 30`, standing in for `what`), or `None` with a
/// printed `SKIPPED:` line when there is no `sleep` command.
#[cfg(unix)]
fn live_process(what: &str) -> Option<KilledOnDrop> {
    match std::process::Command::new("sleep").arg("30").spawn() {
        Ok(child) => Some(KilledOnDrop(child)),
        Err(_) => {
            println!("SKIPPED: no `sleep` command to stand in for {what}");
            None
        }
    }
}

/// A child process killed and waited for when dropped (a test that fails does not leave it).
#[cfg(unix)]
struct KilledOnDrop(std::process::Child);

#[cfg(unix)]
impl KilledOnDrop {
    fn id(&self) -> u32 {
        self.0.id()
    }
}

#[cfg(unix)]
impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_lock_held_by_this_live_process_makes_append_wait_then_fail() {
    let (_dir, mut writer, path) = temp_session();
    let holder = format!("{}:{}\n", std::process::id(), now_ms());
    let lock = write_lock(&path, &holder);
    assert_times_out(&mut writer, &path, &lock, &holder);

    // Once the holder releases it, appending works again and the session is intact.
    fs::remove_file(&lock).unwrap();
    writer.append(entry("label", &[])).unwrap();
    assert_intact(&path, 2);
}

#[cfg(unix)]
#[test]
fn a_lock_held_by_another_live_process_is_not_stolen() {
    let Some(sleeper) = live_process("a live lock holder") else {
        return;
    };
    let (_dir, mut writer, path) = temp_session();
    let holder = format!("{}:{}\n", sleeper.id(), now_ms());
    let lock = write_lock(&path, &holder);
    assert_times_out(&mut writer, &path, &lock, &holder);
    drop(sleeper);

    // Now the holder is dead: its lock is stolen and the append goes through.
    writer.append(entry("label", &[])).unwrap();
    assert!(!lock.exists());
}

#[cfg(unix)]
#[test]
fn a_lock_of_a_dead_process_is_stolen() {
    let pid = dead_pid();
    let (_dir, mut writer, path) = temp_session();
    // A fresh timestamp: only the dead pid makes it stealable.
    let lock = write_lock(&path, &format!("{pid}:{}\n", now_ms()));
    let started = Instant::now();
    writer.append(entry("label", &[])).unwrap();
    assert!(
        started.elapsed() < PUBLISH_LOCK_WAIT,
        "stolen without waiting"
    );
    assert!(!lock.exists(), "our own lock is released too");
    assert_eq!(open(&path).unwrap().0.len(), 2);
}

#[test]
fn a_malformed_lock_is_stolen_only_once_it_is_older_than_the_wait() {
    let (_dir, mut writer, path) = temp_session();
    for content in ["", "not a lock\n", "12:\n"] {
        // Fresh: a claimer may be between create and write, so it is left alone. (Its mtime
        // is put in the future so that it stays fresh for the whole 500 ms wait.)
        let lock = write_lock(&path, content);
        set_mtime(&lock, SystemTime::now() + Duration::from_secs(10));
        assert_times_out(&mut writer, &path, &lock, content);

        // Old: a crash orphan, stolen.
        set_mtime(&lock, SystemTime::now() - Duration::from_secs(2));
        writer.append(entry("label", &[])).unwrap();
        assert!(!lock.exists(), "{content:?}");
    }
    assert_eq!(open(&path).unwrap().0.len(), 4);
}

#[test]
fn a_foreign_append_between_two_of_ours_is_a_conflict_and_nothing_is_written() {
    let (_dir, mut writer, path) = temp_session();
    let before = fs::metadata(&path).unwrap().len();
    foreign_append(&path, FOREIGN_LINE);
    let after = fs::metadata(&path).unwrap().len();

    let error = writer.append(entry("label", &[])).unwrap_err();
    match &error {
        StoreError::Conflict {
            expected,
            actual,
            replaced,
            ..
        } => {
            assert_eq!(
                (*expected, *actual, *replaced),
                (before, Some(after), false)
            );
        }
        other => panic!("expected Conflict, got {other}"),
    }
    assert!(error.to_string().contains("open_for_append"), "{error}");
    assert_eq!(fs::metadata(&path).unwrap().len(), after, "nothing written");
    assert!(!publish_lock_path(&path).exists());
    assert_eq!(writer.len(), 1, "the refused entry is not in the session");

    // Reopening sees the foreign entry and appends after it.
    drop(writer);
    let (mut resumed, _, _) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    assert_eq!(resumed.leaf_id(), Some("f0f0f0f0"));
    let ours = resumed.append(entry("label", &[])).unwrap();
    assert_eq!(ours.parent_id(), Some("f0f0f0f0"));
    assert_intact(&path, 3);
}

#[test]
fn a_foreign_append_after_open_for_append_is_a_conflict() {
    let (_dir, writer, path) = temp_session();
    drop(writer);
    let (mut resumed, _, _) =
        SessionWriter::open_for_append(&path, WriterOptions::default()).unwrap();
    foreign_append(&path, FOREIGN_LINE);
    assert!(matches!(
        resumed.append(entry("label", &[])),
        Err(StoreError::Conflict {
            replaced: false,
            ..
        })
    ));
}

#[cfg(unix)]
#[test]
fn a_file_replaced_by_a_rewrite_is_a_conflict_even_at_the_same_size() {
    let (dir, mut writer, path) = temp_session();
    // What omp's full rewrite does: write a temp file, rename it over the session.
    let temp = dir.path().join(".rewrite.tmp");
    fs::copy(&path, &temp).unwrap();
    fs::rename(&temp, &path).unwrap();
    assert!(matches!(
        writer.append(entry("label", &[])),
        Err(StoreError::Conflict { replaced: true, .. })
    ));
    fs::remove_file(&path).unwrap();
    assert!(matches!(
        writer.append(entry("label", &[])),
        Err(StoreError::Conflict { actual: None, .. })
    ));
}

#[test]
fn buffered_lines_meet_the_same_checks_when_they_are_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let options = WriterOptions {
        durability: Durability::Buffered,
        ..WriterOptions::default()
    };
    let (mut writer, path) = written_session(dir.path(), options);
    writer
        .append(entry("custom", &[("customType", json!("buffered"))]))
        .unwrap();
    foreign_append(&path, FOREIGN_LINE);
    let size = fs::metadata(&path).unwrap().len();
    assert!(matches!(writer.flush(), Err(StoreError::Conflict { .. })));
    assert_eq!(fs::metadata(&path).unwrap().len(), size, "nothing written");

    // Without interference, buffered lines land on flush, under the lock.
    let (mut clean, clean_path) = written_session(&dir.path().join("clean"), options);
    clean.append(entry("label", &[])).unwrap();
    let holder = format!("{}:{}\n", std::process::id(), now_ms());
    let lock = write_lock(&clean_path, &holder);
    assert!(matches!(
        clean.flush(),
        Err(StoreError::PublishLockTimeout { .. })
    ));
    fs::remove_file(&lock).unwrap();
    clean.flush().unwrap();
    assert_eq!(open(&clean_path).unwrap().0.len(), 2);
}

/// One claim of omp's publish lock as omp's `#tryCreatePublishLock` makes it: create the name
/// exclusively, write the record, close, and check that the name still holds our record.
fn omp_claim(lock: &Path) -> bool {
    let record = format!("{}:{}\n", std::process::id(), now_ms());
    let created = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(lock);
    let Ok(mut file) = created else {
        return false;
    };
    file.write_all(record.as_bytes()).unwrap();
    drop(file);
    fs::read_to_string(lock).is_ok_and(|content| content == record)
}

#[test]
fn a_writer_and_an_omp_style_claimer_never_hold_the_lock_together() {
    let dir = tempfile::tempdir().unwrap();
    let options = WriterOptions {
        busy_timeout: Some(Duration::from_secs(30)),
        ..WriterOptions::default()
    };
    let (mut writer, path) = written_session(dir.path(), options);
    let lock = publish_lock_path(&path);
    let (foreign, ours) = (150, 400);
    // Both sides write a fixed number of lines at the same time (a failure on one side ends
    // it without waiting for the other).
    let overlaps = std::thread::scope(|scope| {
        let omp = scope.spawn(|| {
            let mut overlaps = Vec::new();
            for n in 0..foreign {
                while !omp_claim(&lock) {
                    std::thread::sleep(Duration::from_micros(50));
                }
                // Inside the lock nobody else may write: the size must hold still.
                let before = fs::metadata(&path).unwrap().len();
                std::thread::sleep(Duration::from_micros(200));
                let after = fs::metadata(&path).unwrap().len();
                foreign_append(
                    &path,
                    &FOREIGN_LINE.replace("f0f0f0f0", &format!("f{n:07x}")),
                );
                if fs::remove_file(&lock).is_err() || before != after {
                    overlaps.push(n);
                }
            }
            overlaps
        });
        for _ in 0..ours {
            writer.append(entry("label", &[])).unwrap();
        }
        omp.join().unwrap()
    });
    assert_eq!(overlaps, Vec::<usize>::new(), "claims held together");
    assert_intact(&path, 1 + ours + foreign);
    assert!(!lock.exists());
}

/// The pid of a process that has ended (a child waited for: nothing else has it yet).
#[cfg(unix)]
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// The session at `path` opens without diagnostics and holds `entries` entries.
fn assert_intact(path: &Path, entries: usize) {
    let (session, diagnostics) = open(path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(session.len(), entries);
}
