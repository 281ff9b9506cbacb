//! One writer at a time: a second writer, in this process or another, gets `StoreError::Locked`;
//! readers never need the lock; lines are never interleaved.

use crate::common::entry;
use pi_session_store::{SessionWriter, StoreError, WriterOptions, lock_path, new_header, open};
use serde_json::json;
use std::path::Path;
use std::process::Command;

const CHILD_ENV: &str = "PI_SESSION_STORE_TEST_LOCK_CHILD";
const CHILD_TEST: &str = "lock::child_appends_to_the_session_named_in_the_environment";

/// Runs this test binary again as a child that tries to append `count` entries to `path`;
/// returns what it printed.
fn spawn_child(path: &Path, count: usize) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, format!("{}\n{count}", path.display()))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn child_output(child: std::process::Child) -> String {
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "child failed: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// In a child process (see [`spawn_child`]): append and print `APPENDED n` or `LOCKED: <error>`.
/// Run directly, it checks that a second writer in the same process is refused too.
#[test]
fn child_appends_to_the_session_named_in_the_environment() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        let dir = tempfile::tempdir().unwrap();
        let mut first =
            SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
        first.append(entry("label", &[])).unwrap();
        let (mut second, _, _) =
            SessionWriter::open_for_append(first.path().unwrap(), WriterOptions::default())
                .unwrap();
        assert!(matches!(
            second.append(entry("label", &[])),
            Err(StoreError::Locked { .. })
        ));
        return;
    };
    let (path, count) = spec.split_once('\n').unwrap();
    let (mut writer, _, _) =
        SessionWriter::open_for_append(path, WriterOptions::default()).unwrap();
    for i in 0..count.parse::<usize>().unwrap() {
        match writer.append(entry(
            "custom",
            &[("customType", json!("child")), ("data", json!(i))],
        )) {
            Ok(_) => {}
            Err(error @ StoreError::Locked { .. }) => {
                println!("LOCKED: {error}");
                return;
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    println!("APPENDED {count}");
}

#[test]
fn a_second_process_gets_the_lock_error_until_the_first_writer_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    writer.append(entry("label", &[])).unwrap();
    let path = writer.path().unwrap().to_path_buf();

    let refused = child_output(spawn_child(&path, 1));
    assert!(refused.contains("LOCKED: "), "{refused}");
    assert!(
        refused.contains(&lock_path(&path).display().to_string()),
        "the error names the lock: {refused}"
    );
    // Readers never need the lock.
    assert_eq!(open(&path).unwrap().0.len(), 1);
    writer.append(entry("label", &[])).unwrap();

    drop(writer);
    let accepted = child_output(spawn_child(&path, 3));
    assert!(accepted.contains("APPENDED 3"), "{accepted}");
    let (session, diagnostics) = open(&path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(session.len(), 5);
}

#[test]
fn two_racing_processes_never_interleave_lines() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = SessionWriter::create(dir.path(), new_header("/w"), WriterOptions::default());
    writer.append(entry("label", &[])).unwrap();
    let path = writer.path().unwrap().to_path_buf();
    drop(writer);

    let children: Vec<_> = (0..2).map(|_| spawn_child(&path, 300)).collect();
    let outputs: Vec<String> = children.into_iter().map(child_output).collect();
    let appended: usize = outputs
        .iter()
        .filter(|o| o.contains("APPENDED 300"))
        .count();
    let locked = outputs.iter().filter(|o| o.contains("LOCKED: ")).count();
    assert_eq!(appended + locked, 2, "{outputs:?}");
    assert!(appended >= 1, "{outputs:?}");

    let (session, diagnostics) = open(&path).unwrap();
    assert!(
        diagnostics.is_empty(),
        "no torn or fused line: {diagnostics:?}"
    );
    assert_eq!(session.len(), 1 + 300 * appended);
    for entry in session.entries().unwrap() {
        assert!(entry.id().is_some());
    }
}
