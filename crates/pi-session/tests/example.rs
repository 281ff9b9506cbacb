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
