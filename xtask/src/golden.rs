//! `cargo xtask golden`: check our crates against sessions recorded by the real omp and pi.
//!
//! ```text
//! cargo xtask golden [--only TEXT] [--bless] [--write-ours]
//! ```
//!
//! Four parts, all through the library crates (store `open` -> tree `SessionView` /
//! `agent_context` -> context `llm_messages` / `project`); golden owns no format rule:
//!
//! 1. **Recordings** (`fixtures/{omp,pi,pi16}/*.expected.json`, see [`recorded`]): every answer
//!    of the real `SessionManager` (header, name, entry count, leaf, branch, tips, labels, and
//!    `buildSessionContext` + `convertToLlm` for every recorded leaf) against ours.
//! 2. **Our own files** (`fixtures/ours/`, see [`ours`]): sessions written by our facade with a
//!    fixed script; regenerating them must give the committed bytes (`--write-ours` rewrites
//!    them), and what the real omp and pi returned for them (`cargo xtask record` writes
//!    `fixtures/ours/<dialect>/<impl>/`) is checked like part 1.
//! 3. **Provider requests** (`fixtures/{omp,pi}/requests/`, see [`requests`]): the request
//!    bodies pi-ai built for every recorded context and a set of models, against
//!    `provider_request` on the same context.
//! 4. **The real corpus** (`../shared/corpus/real`, see [`corpus`]; skipped with a notice when
//!    absent): every file opens, its diagnostics and context sizes match the pinned snapshot in
//!    `xtask/golden-snapshots/corpus/` (`--bless` rewrites them: review the diff before
//!    committing), and every output format projects for both dialects.
//!
//! 4. **Foreign imports** (`fixtures/foreign/omp/`, see [`foreign`]): omp's import of each
//!    Claude Code and Codex transcript (hand-written, and the real ones in
//!    `../shared/corpus/foreign` when present) against ours: the listing, the bytes written, and
//!    every answer of omp's `SessionManager` on the result.
//!
//! 5. **omp in Redis** (`fixtures/redis/omp/`, see [`redis`]): omp's own Redis keyspace,
//!    loaded into a `MemoryStore` with omp's layout, read by us against omp's answers.
//! 6. **Repaired files** (`fixtures/repair/`, see [`repair`]): omp and pi resume a repaired
//!    file with the damaged one's context.
//!
//! Prints a table (scenario × check) and the failures with their first JSON differences; the
//! last line is `golden: N passed, M failed`. Fails when anything failed.

mod compare;
mod corpus;
mod foreign;
mod ours;
mod ours_script;
mod recorded;
mod redis;
mod repair;
mod report;
mod requests;
mod unstamped;

use std::time::Instant;

use crate::util::workspace_root;
use report::Report;

/// The implementations whose recordings live in `fixtures/<name>/`.
const RECORDED_FOLDERS: [&str; 3] = ["omp", "pi", "pi16"];

const USAGE: &str = "usage: cargo xtask golden [--only TEXT] [--bless] [--write-ours]
  --only TEXT    check only scenarios and corpus files whose name contains TEXT
  --bless        rewrite the corpus snapshots (xtask/golden-snapshots/corpus/) from our results
  --write-ours   regenerate fixtures/ours/<dialect>/*.jsonl with our facade";

#[derive(Debug, Default)]
struct Options {
    only: Option<String>,
    bless: bool,
    write_ours: bool,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bless" => options.bless = true,
            "--write-ours" => options.write_ours = true,
            "--only" => {
                options.only = Some(args.next().ok_or("--only needs a name fragment")?.clone())
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok(options)
}

/// Runs `cargo xtask golden`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse_args(args)?;
    let started = Instant::now();
    let root = workspace_root();
    let fixtures = root.join("fixtures");
    let only = options.only.as_deref();
    let mut report = Report::default();

    for folder in RECORDED_FOLDERS {
        let dir = fixtures.join(folder);
        recorded::check_folder(&mut report, folder, &dir, &dir, only);
    }
    requests::check(&mut report, &fixtures, only);
    ours::check(
        &mut report,
        &fixtures.join("ours"),
        options.write_ours,
        only,
    )?;
    foreign::check(&mut report, &root, only)?;
    redis::check(&mut report, &fixtures, only)?;
    repair::check(&mut report, &fixtures, only)?;
    corpus::check(&mut report, &root, options.bless, only)?;

    // Timing first: the total is the last line of the output (CI reads the closing line).
    eprintln!(
        "xtask: golden took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    print!("{}", report.render());
    match report.failed() {
        0 => Ok(()),
        failed => Err(format!(
            "golden: {failed} check(s) failed (see FAILURES above)"
        )),
    }
}
