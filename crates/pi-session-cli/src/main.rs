//! `pi-session`: inspect, check, project and write the JSONL session files of the omp and pi
//! coding agents.
//!
//! Job: put the `pi-session` library in a person's (or a script's) hands. Human output by
//! default, `--json` for machines, errors on stderr with a non-zero exit, no panic on any input.
//! Must not: hold a format rule of its own (every rule lives in the library crates).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod commands;
mod describe;
mod draw;
mod failure;
mod input;
mod output;
mod progress;
mod store_args;

/// mimalloc as the allocator (feature `mimalloc`; measured in docs/perf.md).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use commands::{
    append, cat, check, context, export, fork, grep, import, ls, migrate, repair, serve, stats,
    tree, usage,
};

/// Inspect, check, project and write omp and pi coding-agent session files.
///
/// Commands that take a FILE use the most recent session of the current directory when it is
/// left out (omp's session folder first, then pi's, like `omp -c`).
///
/// Exit codes: 0 done; 1 done, but a file is damaged (check, cat); 2 could not do it.
#[derive(Debug, Parser)]
#[command(name = "pi-session", version, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Each subcommand's arguments are built only when it is the one run (`defer`): building every
/// subcommand's arguments took ~0.2M instructions, 60 page faults and ~0.2 ms of every run
/// (docs/perf.md, round 28). The description each shows in its help is the doc comment of its
/// variant here; its arguments' struct has none, which clap would show instead.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
enum Command {
    /// Print the context a session's model is sent, as JSON.
    Context(context::ContextArgs),
    /// Draw a session's entries as a tree (or print its leaf, branch, tips and labels as JSON).
    Tree(tree::TreeArgs),
    /// Print every line through the typed model, as JSONL.
    Cat(cat::CatArgs),
    /// Check session files and folders for damage (`file:line:offset: message`).
    Check(check::CheckArgs),
    /// List sessions, newest first.
    Ls(ls::LsArgs),
    /// Count entries, branches and compactions; sum usage; estimate the context size.
    Stats(stats::StatsArgs),
    /// Replace a damaged session file with a clean copy (the original is kept as FILE.bak).
    Repair(repair::RepairArgs),
    /// Append one entry (a user message, model, thinking level, label, name or custom entry).
    Append(append::AppendArgs),
    /// Copy a branch into a new session file (with parentSession).
    Fork(fork::ForkArgs),
    /// Rewrite a version 1 or 2 file as version 3, keeping a .bak.
    Migrate(migrate::MigrateArgs),
    /// Import a Claude Code or Codex session as a new omp session (prints its path).
    Import(import::ImportArgs),
    /// Write a session as one self-contained HTML page (no network; opens from file://).
    Export(export::ExportArgs),
    /// Browse sessions in a local web page (127.0.0.1 only, read-only).
    Serve(serve::ServeArgs),
    /// Sum tokens and cost across sessions, per day, week, month, session, model or project.
    Usage(usage::UsageArgs),
    /// Search message text across sessions.
    Grep(grep::GrepArgs),
}

/// Before the arguments are parsed: when one of them names a session file the open reads on
/// threads, another core is woken for its worker (`pi_session::store::wake_another_core`: the
/// parse's time is the core's to wake in). Any argument counts (one `stat` each, flags left
/// out): a wrong guess costs a short thread, or leaves the worker to wake the core itself.
fn wake_for_a_large_session() {
    let large = std::env::args_os()
        .skip(1)
        .filter(|arg| !arg.as_encoded_bytes().starts_with(b"-"))
        .any(|arg| pi_session::store::may_open_on_threads(std::path::Path::new(&arg)));
    if large {
        pi_session::store::wake_another_core();
    }
}

fn main() -> ExitCode {
    wake_for_a_large_session();
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Context(args) => context::run(args),
        Command::Tree(args) => tree::run(args),
        Command::Cat(args) => cat::run(args),
        Command::Check(args) => check::run(args),
        Command::Ls(args) => ls::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Repair(args) => repair::run(args),
        Command::Append(args) => append::run(args),
        Command::Fork(args) => fork::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Import(args) => import::run(args),
        Command::Export(args) => export::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Usage(args) => usage::run(args),
        Command::Grep(args) => grep::run(args),
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            if !failure.message.is_empty() {
                output::warn(&format!("pi-session: {}", failure.message));
            }
            ExitCode::from(failure.code)
        }
    }
}

#[cfg(test)]
mod readme_tests;

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own checks of the command line (conflicting names, bad defaults …), run over
    /// every subcommand: a deferred subcommand is otherwise built, and checked, only when run.
    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
