//! The Rust agent's own session layout: `~/.rho/sessions/<project hash>/<secs>_<id>.jsonl`.

use std::path::Path;
use std::time::{Duration, SystemTime};

use pi_session::{
    find_latest_session, list_sessions, rho_project_hash, rho_session_dir, rho_session_file_name,
    startup_hint,
};

fn write(path: &Path, text: &str, secs: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn the_project_hash_is_the_first_16_hex_of_the_sha256_of_the_canonical_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    // SHA-256 of "/no/such/project", from `printf %s /no/such/project | sha256sum`.
    assert_eq!(
        rho_project_hash(Path::new("/no/such/project")),
        "73147882ee9da0b9"
    );
    // The canonical root: `proj/sub/..` is `proj`.
    assert_eq!(
        rho_project_hash(&root.join("sub/..")),
        rho_project_hash(&root)
    );
    assert_eq!(
        rho_session_dir(Path::new("/home/u"), Path::new("/no/such/project")),
        Path::new("/home/u/.rho/sessions/73147882ee9da0b9")
    );
}

#[test]
fn sessions_are_listed_newest_first_with_size_and_entry_count() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    assert!(list_sessions(home.path(), &project).unwrap().is_empty());
    assert_eq!(find_latest_session(home.path(), &project).unwrap(), None);

    let dir = rho_session_dir(home.path(), &project);
    let header = "{\"type\":\"session\",\"version\":3,\"id\":\"a\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n";
    let entry = "{\"type\":\"label\",\"id\":\"x\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"targetId\":\"x\",\"label\":\"l\"}\n";
    let old = dir.join(rho_session_file_name(1_700_000_000, "a"));
    let new = dir.join(rho_session_file_name(1_700_000_100, "b"));
    write(&old, &format!("{header}{entry}\n{entry}"), 1_700_000_010);
    write(&new, header, 1_700_000_200);
    write(&dir.join("notes.jsonl"), "not a session\n", 1_700_000_300);

    let listed = list_sessions(home.path(), &project).unwrap();
    let names: Vec<_> = listed
        .iter()
        .map(|s| s.path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["1700000100_b.jsonl", "1700000000_a.jsonl"],
        "newest first; a file without a header is no session"
    );
    assert_eq!(listed[0].mtime_secs, 1_700_000_200);
    assert_eq!(
        (listed[0].entry_count, listed[1].entry_count),
        (0, 2),
        "blank lines are no entries"
    );
    assert_eq!(listed[1].size_bytes, std::fs::metadata(&old).unwrap().len());
    assert_eq!(listed[1].size_kb(), 1);
    assert_eq!(
        find_latest_session(home.path(), &project).unwrap(),
        Some(new)
    );
    assert_eq!(
        startup_hint(listed.len(), "rho -c").unwrap(),
        "(2 previous session(s) for this project — use rho -c to resume the latest)"
    );
}
