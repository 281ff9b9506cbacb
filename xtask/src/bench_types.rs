//! `cargo xtask bench types`: how fast the entry schema parses and writes real session lines.
//!
//! ```text
//! cargo xtask bench types [--runs N] [FILE.jsonl...]
//! ```
//!
//! The worker is `crates/pi-session-types/examples/types_bench.rs`, built with `--release` and
//! run as its own process. Over every line of the input it measures (best of `--runs` passes,
//! default 5) `parse_envelope` (the store's hot path), `parse_line` (the full typed view), a plain
//! `serde_json::Value` parse for reference, and `to_js_vec` of every typed line, as MB of input
//! per second.
//!
//! The input is the files given, else the real recorded sessions in `../shared/corpus/real`
//! (next to the workspace), else, when that folder is absent, the golden fixture sessions
//! (`fixtures/{omp,pi,pi16}/*.jsonl`; smaller, so the numbers are noisier). The report says which
//! (`input`). Results are JSON on stdout and in `bench-results/types.json`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::bench::{cargo_run_release, machine, worker_output_json, write_results};
use crate::util::workspace_root;

const USAGE: &str = "usage: cargo xtask bench types [--runs N] [FILE.jsonl...]";
const DEFAULT_RUNS: u64 = 5;

/// The parsed command line.
#[derive(Debug, PartialEq)]
struct Options {
    runs: u64,
    files: Vec<PathBuf>,
}

/// Runs `cargo xtask bench types`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse_args(args)?;
    let root = workspace_root();
    let (source, files) = if options.files.is_empty() {
        default_input(&root)?
    } else {
        ("files given", options.files)
    };
    eprintln!(
        "xtask: bench types: {} file(s) ({source}), best of {} runs, release build",
        files.len(),
        options.runs
    );
    let measured = worker_output_json(
        cargo_run_release(&root, "pi-session-types")
            .args(["--example", "types_bench", "--", "--runs"])
            .arg(options.runs.to_string())
            .args(&files),
        "the types benchmark worker",
    )?;
    write_results(&root, "types", &report(measured, source))
}

/// The worker's object (every key but its own `bench`), plus the input source and the machine.
fn report(measured: Value, source: &str) -> Value {
    let mut report = json!({ "bench": "types", "input": source });
    if let (Some(report), Value::Object(fields)) = (report.as_object_mut(), measured) {
        report.extend(fields.into_iter().filter(|(key, _)| key != "bench"));
    }
    report["machine"] = machine();
    report
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        runs: DEFAULT_RUNS,
        files: Vec::new(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => {
                options.runs = args
                    .next()
                    .and_then(|value| value.parse::<u64>().ok())
                    .ok_or(format!("--runs needs a number\n{USAGE}"))?
                    .max(1);
            }
            other if other.starts_with("--") => {
                return Err(format!("unknown option `{other}`\n{USAGE}"));
            }
            file => options.files.push(PathBuf::from(file)),
        }
    }
    Ok(options)
}

/// The real corpus when it is there, else the golden fixture sessions.
fn default_input(root: &Path) -> Result<(&'static str, Vec<PathBuf>), String> {
    let corpus = root.join("..").join("shared").join("corpus").join("real");
    let real = jsonl_files(&corpus);
    if !real.is_empty() {
        return Ok(("real corpus (../shared/corpus/real)", real));
    }
    eprintln!(
        "xtask: bench types: {} is absent; measuring the golden fixture sessions instead",
        corpus.display()
    );
    let fixtures = root.join("fixtures");
    let files: Vec<PathBuf> = ["omp", "pi", "pi16"]
        .iter()
        .flat_map(|implementation| jsonl_files(&fixtures.join(implementation)))
        .collect();
    if files.is_empty() {
        return Err(format!(
            "no input: neither {} nor {} holds .jsonl files; pass files explicitly\n{USAGE}",
            corpus.display(),
            fixtures.display()
        ));
    }
    Ok(("golden fixtures (fixtures/{omp,pi,pi16})", files))
}

/// The `.jsonl` files directly in `dir`, sorted (none when it cannot be read).
fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    pi_session_test_support::files_ending_with(dir, ".jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_default_to_five_runs_and_no_files() {
        assert_eq!(
            parse_args(&[]).unwrap(),
            Options {
                runs: 5,
                files: Vec::new()
            }
        );
    }

    #[test]
    fn options_take_runs_and_files() {
        assert_eq!(
            parse_args(&args(&["a.jsonl", "--runs", "0", "b.jsonl"])).unwrap(),
            Options {
                runs: 1,
                files: vec![PathBuf::from("a.jsonl"), PathBuf::from("b.jsonl")]
            }
        );
    }

    #[test]
    fn options_reject_unknown_flags_and_bad_numbers() {
        assert!(
            parse_args(&args(&["--large"]))
                .unwrap_err()
                .contains("unknown option")
        );
        assert!(
            parse_args(&args(&["--runs", "many"]))
                .unwrap_err()
                .contains("needs a number")
        );
        assert!(parse_args(&args(&["--runs"])).is_err());
    }

    #[test]
    fn report_keeps_the_worker_fields_and_names_the_input() {
        let measured = json!({"bench": "types", "lines": 3, "parse_line_mb_s": 12.5});
        let report = report(measured, "files given");
        assert_eq!(report["bench"], "types");
        assert_eq!(report["input"], "files given");
        assert_eq!(report["lines"], 3);
        assert_eq!(report["parse_line_mb_s"], 12.5);
        assert!(report["machine"]["cpus"].as_u64().is_some_and(|n| n >= 1));
    }

    #[test]
    fn fixture_sessions_are_found_as_jsonl_files() {
        let files = jsonl_files(&workspace_root().join("fixtures").join("omp"));
        assert!(files.iter().any(|f| f.ends_with("provider-refusals.jsonl")));
        assert!(
            files
                .iter()
                .all(|f| f.extension().is_some_and(|e| e == "jsonl"))
        );
    }
}
