//! Runs the `agent_loop` example's logic and snapshots what it prints.

#[path = "../examples/agent_loop.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
mod agent_loop;

#[test]
fn the_agent_loop_example_prints_the_resumed_context() {
    let dir = tempfile::tempdir().unwrap();
    let report = agent_loop::play(dir.path()).unwrap();
    assert!(
        report.starts_with("resumed context equals live context: true\n"),
        "{report}"
    );
    insta::assert_snapshot!(report);
}

#[path = "../examples/resume_latest.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
mod resume_latest;

#[path = "../examples/fork.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
mod fork;

#[path = "../examples/provider_requests.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
mod provider_requests;

#[path = "../examples/host_loop.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
mod host_loop;

#[path = "../examples/error_handling.rs"]
#[allow(dead_code, reason = "the example's `main` is not called here")]
mod error_handling;

#[test]
fn the_resume_latest_example_continues_the_latest_session() {
    let home = tempfile::tempdir().unwrap();
    let report = resume_latest::play(home.path()).unwrap();
    assert_eq!(
        report,
        "resumed \"Config questions\" (pi), model anthropic:claude-sonnet-4-5\n\
         user: Where is the config loaded?\n\
         assistant: In src/config.rs.\n\
         user: And where is it validated?\n\
         assistant: In Config::validate.\n"
    );
}

#[test]
fn the_fork_example_forks_three_ways() {
    let dir = tempfile::tempdir().unwrap();
    let report = fork::play(dir.path()).unwrap();
    assert_eq!(
        report,
        "main says \"parser\", the alternative \"reader\"\n\
         after reopening: branches [\"alternative\"], the alternative says \"reader\"\n\
         forked: same context true, parent is the source true, label kept Some(\"naming\")\n"
    );
}

#[test]
fn the_provider_requests_example_prints_each_request() {
    insta::assert_snapshot!(provider_requests::play().unwrap());
}

#[test]
fn the_error_handling_example_meets_each_kind() {
    let dir = tempfile::tempdir().unwrap();
    let report = error_handling::play(dir.path()).unwrap();
    assert_eq!(
        report,
        "printed with its source, the path appears 1 time(s)\n\
         Io: check the path\n\
         Busy: another process is writing: retry later\n\
         Conflict: the file changed: reopen it and retry\n\
         after reopening: 4 entries\n\
         NeedsMigration: migrate the file (Session::migrate), or fork_to a new one\n\
         migrated and appended: 2 entries\n"
    );
}

#[test]
fn the_host_loop_example_shares_each_turn_s_messages_with_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let report = host_loop::play(dir.path()).unwrap();
    // Each turn sends two messages more (the new question, and the reply to the one before),
    // and every message of the turn before is the same allocation.
    assert_eq!(
        report,
        "turn 1: 3 messages sent, 0 of them shared with the turn before\n\
         turn 2: 5 messages sent, 3 of them shared with the turn before\n\
         turn 3: 7 messages sent, 5 of them shared with the turn before\n"
    );
}
