//! One module per subcommand (and `write`, what the write commands share).

pub mod append;
pub mod cat;
pub mod check;
pub mod context;
pub mod export;
pub mod fork;
pub mod grep;
pub mod import;
pub mod ls;
pub mod manage;
pub mod migrate;
pub mod repair;
pub mod serve;
pub mod stats;
pub mod tree;
pub mod usage;
pub mod write;

/// Leaves `value` to the end of the process, which hands its memory back whole: for what a
/// command read (a session's index and tree, an entry per entry of the file) once its answer
/// is out, so it is not freed piece by piece first (a 50 MB `check` spent 4–5% of its time
/// dropping the session; docs/perf.md, round 22). Only for a command's last step, once per
/// process (the commands run from `main` and nowhere else): the memory stays taken until the
/// process exits.
pub(crate) fn leave_to_exit<T>(value: T) {
    std::mem::forget(value);
}
