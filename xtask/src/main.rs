//! `cargo xtask`: the project's one entry point for chores.
//!
//! Each subcommand lives in its own module; `main` only dispatches. Commands print progress to
//! stderr and results to stdout, and exit non-zero on failure.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "xtask is a command-line tool"
)]

mod bench;
mod bench_budget;
mod bench_compare;
mod bench_context;
mod bench_export;
mod bench_redis;
mod bench_sessions;
mod bench_types;
mod browser;
mod golden;
mod link_order;
mod markdown;
mod record;
mod schema;
mod soak;
mod test;
mod util;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command> [args]

commands:
  test              run every test: the tidy checks (fmt, clippy, rustdoc), cargo test
                    --workspace, cargo deny (if installed), golden, then the browser tests
  browser           the real-browser tests of `pi-session export` and `serve` (headless
                    Chromium through puppeteer-core; screenshots in target/browser/)
  golden            check our results against sessions recorded by the real omp and pi
  record            record fixtures with the real omp and pi (needs node and the npm registry)
  schema [--check]  write the JSON Schema of every line type to schema/ (--check: compare)
  link-order        write crates/pi-session-cli/link-order.txt, the functions the CLI runs,
                    laid out first and together by the linker (needs valgrind)
  bench [store|types|context|compare|export|ls|usage|budget|all] [options]
                    run the benchmarks (release-built workers), print JSON results and write
                    them to bench-results/<name>.json; `all` runs store, types, context and export
                      store   [--size-mb N | --large] [--runs N] [--appends N]
                      types   [--runs N] [FILE.jsonl...]
                      context [--size-mb N] [--runs N]
                      export  [--size-mb N] [--runs N]   (default 50 MB)
                      compare [--sizes 5,50,200] [--turns N] [--runs N] [--repeat N]
                              (ours vs the real omp and pi; --repeat: how often each goal holds)
                      ls      [--sessions N] [--runs N]   (ours and pi's SessionManager.list)
                      usage   [--sessions N] [--runs N]
  soak [--rounds N] the long crash tests: kill -9 during appends, a full disk, waiting
                    writers (default 220 rounds each; `test` runs a few)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        eprint!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = match command.as_str() {
        "test" => test::run(rest),
        "golden" => golden::run(rest),
        "record" => record::run(rest),
        "bench" => bench::run(rest),
        "soak" => soak::run(rest),
        "browser" => browser::run(rest),
        "schema" => schema::run(rest),
        "link-order" => link_order::run(rest),
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
