//! `cargo xtask soak`: the long versions of the store's crash and concurrency tests.
//!
//! `cargo xtask test` runs a few rounds of each (the quick versions); soak runs the same tests
//! with `PI_SESSION_SOAK_ROUNDS` set: kill -9 in the middle of appends (alternating Flush and
//! Fsync), a disk that fills up (`ulimit -f`), and writers that wait for each other; and the
//! crash simulator over `PI_SESSION_SIM_STATES` simulated crash states (see
//! `crates/pi-session-store/tests/crash_sim.rs`).

use crate::util::{cargo, run_command, workspace_root};

/// Rounds of each crash test in a soak (`--rounds N` to change).
const DEFAULT_ROUNDS: usize = 220;

/// Crash states the simulator explores in a soak.
const SIM_STATES: usize = 120_000;

/// Runs `cargo xtask soak [--rounds N]`.
pub fn run(args: &[String]) -> Result<(), String> {
    let rounds = match args {
        [] => DEFAULT_ROUNDS,
        [flag, n] if flag == "--rounds" => n
            .parse()
            .map_err(|_| format!("--rounds needs a number, not `{n}`"))?,
        _ => return Err("usage: cargo xtask soak [--rounds N]".to_owned()),
    };
    let root = workspace_root();
    eprintln!(
        "xtask: soak: {rounds} rounds of each crash test, {SIM_STATES} simulated crash states"
    );
    run_command(
        cargo()
            .current_dir(&root)
            .env("PI_SESSION_SOAK_ROUNDS", rounds.to_string())
            .env("PI_SESSION_SIM_STATES", SIM_STATES.to_string())
            .args([
                "test",
                "-p",
                "pi-session-store",
                "--test",
                "all",
                "--",
                "crashes::",
                "reliability::",
                "crash_sim::",
                "--nocapture",
            ]),
    )
}
