//! Several hosts writing one session at once, each a `Session` with a busy timeout: they wait
//! for each other instead of failing, and every entry lands whole.

use pi_session::{CustomEntry, Session, UserOptions, user};
use std::time::Duration;

const MODEL: &str = "anthropic:claude-sonnet-4-5";

#[test]
fn four_sessions_appending_2000_entries_each_wait_for_each_other_and_all_land() {
    const WRITERS: usize = 4;
    const EACH: usize = 2_000;
    let dir = tempfile::tempdir().unwrap();
    let mut first = Session::new(dir.path(), MODEL, "/w");
    first.append(user("start", UserOptions::new())).unwrap();
    let path = first.path().unwrap().to_path_buf();
    drop(first);
    std::thread::scope(|scope| {
        for w in 0..WRITERS {
            let path = &path;
            scope.spawn(move || {
                let mut session = Session::open(path, MODEL).unwrap().session;
                session.set_busy_timeout(Some(Duration::from_secs(300)));
                for i in 0..EACH {
                    let entry = CustomEntry::new("writer").data(serde_json::json!([w, i]));
                    session
                        .append_custom(&entry)
                        .unwrap_or_else(|e| panic!("writer {w}, append {i}: {e}"));
                }
            });
        }
    });
    let (file, diagnostics) = pi_session::store::open(&path).unwrap();
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    // The first session's model_change and user message, then every writer's entries.
    assert_eq!(file.len(), 2 + WRITERS * EACH);
    let ids: std::collections::HashSet<_> = file
        .index()
        .iter()
        .filter_map(|e| e.envelope.id().map(str::to_owned))
        .collect();
    assert_eq!(ids.len(), file.len(), "an id was reused");
}
