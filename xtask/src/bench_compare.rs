//! `cargo xtask bench compare`: ours against the real omp (bun) and pi (node), side by side on
//! the same generated sessions.
//!
//! ```text
//! cargo xtask bench compare [--sizes 5,50,200] [--turns N] [--runs N] [--repeat N]
//! ```
//!
//! For each size (MiB) a pi v3 session is generated into `target/bench-compare/` (never into the
//! repository): user turns, assistant turns with thinking and tool calls, tool results of a few
//! KB, a compaction every 1/17 of the file (its kept range ~40 entries back) and a side branch
//! every 1/15 (so the file has compactions and tips like a long real session; omp and pi read
//! it). Then, each in its own process, timed from outside (wall time with process start; peak
//! RSS and page faults from `/usr/bin/time`, in a run of its own for ours: [`timed`]) and from
//! inside where the process can say:
//!
//! - ours: `pi-session check` (open only) and `pi-session context --format F` for every format
//!   (release CLI, output to `/dev/null`); the same open + context timed inside one process
//!   as theirs are (`bench compare --worker context FILE FORMAT DIALECT` in a release build of
//!   xtask, on the CLI's allocator: the session read as the CLI reads it, the context made and
//!   serialised into a sink, one cold run per process); and the host loop (`Session::open`,
//!   then per turn append user + append assistant + `agent_context` + `llm_messages`) in that
//!   xtask (`bench compare --worker loop FILE TURNS DIALECT`);
//! - pi 0.73.1 (node) and omp 18.2.3 (bun): `xtask/recorder/bench.mjs` (open +
//!   `buildSessionContext` + `convertToLlm`, and the same host loop).
//!
//! Before every timed run the file is read through once, so each implementation starts with
//! it in the page cache. Each context and `check` (ours, omp's and pi's) runs `--runs` times
//! (default 5), taking turns: one run of each, then the next round, so that a slow minute of a
//! shared machine falls on ours and theirs alike. The figure
//! kept is the run with the median time (its peak RSS with it), and every run's time is kept
//! beside it (`runs_ms`), so one disturbed run on a shared machine does not decide a ratio.
//! Our two loops run `--runs` times too, taking turns with each other, and the run kept is the
//! one of median flatness (its last 50 turns' median over its first 50's), every run's ratio
//! beside it (`runs_last50_over_first50`): at 5 MB each 50 turns last ~3.5 ms, and a pause of
//! the VM that long lands in one of them in about one round of twenty. omp's and pi's loops
//! run once (each already reports per-turn medians; pi's at 200 MB takes ~20 s). The loops
//! append to a copy of the file. Ratios are ours over theirs (below 1 is faster);
//! for the context, `context_over_*` compare our whole process (start included, output written)
//! with their in-process open + `buildSessionContext` (nothing serialised), and
//! `context_inprocess_over_*` our in-process open + context (serialised) with the same.
//! Results: stdout and `bench-results/compare.json`, whose `goals` check issue #10's goals on
//! the run (each with its bound, the worst figure it covers and whether it is met; the same as
//! lines of text on stderr at the end).
//!
//! `--repeat N` measures every size N times over (each file generated once), for a goal whose
//! figure sits near its bound, where one run of a shared machine meets it and the next misses
//! it: `compare.json` then holds the last round's cases and `goals`, and `repeats` holds each
//! goal's figure in every round, their median, how many rounds met it and, for a goal over
//! the formats, how many rounds each format was the worst in, and for each size omp's time in
//! every round and each format's median ratio to it (also lines on stderr).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use crate::bench::{machine, write_results};
use crate::util::{build_executable, workspace_root};

const USAGE: &str =
    "usage: cargo xtask bench compare [--sizes 5,50,200] [--turns N] [--runs N] [--repeat N]";
/// Every format of `context` that is timed (and that `link-order` runs).
pub(crate) const FORMATS: [&str; 6] = [
    "agent",
    "llm",
    "omp-agent-loop",
    "req-llm",
    "openai",
    "anthropic",
];

/// Runs `cargo xtask bench compare`.
pub fn run(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("--worker") {
        return worker(&args[1..]);
    }
    let (sizes, turns, runs, repeat) = parse_args(args)?;
    let root = workspace_root();
    let recorder = root.join("xtask").join("recorder");
    let bin = recorder.join("node_modules").join(".bin");
    if !bin.join("bun").exists() {
        return Err(format!(
            "{} has no bun: run `cargo xtask record` once to install the pinned omp and pi",
            bin.display()
        ));
    }
    // One build per package: built together, cargo unifies their features and the CLI would
    // differ from (and be rebuilt after) `cargo build --release -p pi-session-cli`, the binary
    // users run.
    let cli = build_executable(&root, &["--release", "-p", "pi-session-cli"], "pi-session")?;
    let xtask = build_executable(&root, &["--release", "-p", "xtask"], "xtask")?;
    let dir = root.join("target").join("bench-compare");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // The cases of each round, sizes in order.
    let mut rounds: Vec<Vec<Value>> = vec![Vec::new(); repeat];
    for size in sizes {
        let file = dir.join(format!("session-{size}mb.jsonl"));
        let generated = generate(&file, size)?;
        eprintln!("xtask: bench compare: {size} MB ({generated})");
        let js = |runner: &str, implementation: &str, mode: &str, path: &Path| {
            // node from PATH (the recorder's engine); bun is the pinned one in node_modules.
            let program = if runner == "bun" {
                bin.join("bun")
            } else {
                PathBuf::from(runner)
            };
            warm(path)?;
            let mut command = Command::new(program);
            command
                .current_dir(&recorder)
                .arg("bench.mjs")
                .args([implementation, mode]);
            command.arg(path);
            if mode == "loop" {
                command.arg(turns.to_string());
            }
            timed_json(&mut command)
        };
        let file = file.as_path();
        let (cli, xtask) = (cli.as_path(), xtask.as_path());
        for (round, cases) in rounds.iter_mut().enumerate() {
            if repeat > 1 {
                eprintln!(
                    "xtask: bench compare: {size} MB, round {} of {repeat}",
                    round + 1
                );
            }
            let mut case = json!({"size_mb": size, "file": generated});
            let mut series: Vec<Series<'_>> =
                vec![Series::new(("ours_check", None), "wall_ms", move || {
                    warm(file)?;
                    timed(Command::new(cli).arg("check").arg(file))
                })];
            // Our CLI's context of `file` in `format` after `dialect`'s rules, start included.
            let ours_context = |dialect: &'static str, format: &'static str| {
                move || {
                    warm(file)?;
                    timed(
                        Command::new(cli)
                            .args(["context", "--dialect", dialect, "--format", format])
                            .arg(file),
                    )
                }
            };
            for format in FORMATS {
                let dialect = if format == "omp-agent-loop" {
                    "omp"
                } else {
                    "pi"
                };
                series.push(Series::new(
                    ("ours_context", Some(format)),
                    "wall_ms",
                    ours_context(dialect, format),
                ));
                series.push(Series::new(
                    ("ours_context_inprocess", Some(format)),
                    "open_context_ms",
                    move || {
                        warm(file)?;
                        timed_json(
                            Command::new(xtask)
                                .args(["bench", "compare", "--worker", "context"])
                                .arg(file)
                                .args([format, dialect]),
                        )
                    },
                ));
            }
            series.push(Series::new(
                ("ours_context", Some("llm_omp")),
                "wall_ms",
                ours_context("omp", "llm"),
            ));
            let js = &js;
            series.push(Series::new(
                ("pi_context", None),
                "open_context_ms",
                move || js("node", "pi", "context", file),
            ));
            series.push(Series::new(
                ("omp_context", None),
                "open_context_ms",
                move || js("bun", "omp", "context", file),
            ));
            for (at, figure) in interleaved(runs, &mut series)? {
                match at {
                    (outer, Some(inner)) => case[outer][inner] = figure,
                    (one, None) => case[one] = figure,
                }
            }
            // Our loops, each `runs` times taking turns, keep the run of median flatness: the
            // two windows of a 5 MB loop last ~3.5 ms each, and a pause of the VM that long
            // lands in one of them in about one round of twenty.
            let dir = dir.as_path();
            let ours_loop = |name: &'static str, dialect: &'static str| {
                move || {
                    let copy = fresh_copy(file, dir, name)?;
                    let run = timed_json(
                        Command::new(xtask)
                            .args(["bench", "compare", "--worker", "loop"])
                            .arg(&copy)
                            .args([&turns.to_string(), dialect]),
                    );
                    let _ = std::fs::remove_file(&copy);
                    let mut run = run?;
                    summarise_loop(&mut run);
                    Ok(run)
                }
            };
            let mut loops =
                [("ours_loop_pi", "pi"), ("ours_loop_omp", "omp")].map(|(name, dialect)| {
                    Series::new((name, None), LAST_OVER_FIRST, ours_loop(name, dialect))
                        .runs_as("runs_last50_over_first50", round_fine)
                });
            for ((name, _), figure) in interleaved(runs, &mut loops)? {
                case[name] = figure;
            }
            for (name, runner, implementation) in
                [("pi_loop", "node", "pi"), ("omp_loop", "bun", "omp")]
            {
                let copy = fresh_copy(file, dir, name)?;
                case[name] = js(runner, implementation, "loop", &copy)?;
                let _ = std::fs::remove_file(&copy);
            }
            summarise(&mut case);
            cases.push(case);
        }
    }
    let goals_of_rounds: Vec<Value> = rounds.iter().map(|cases| goals(cases)).collect();
    let ratios = repeated_ratios(&rounds);
    let cases = rounds.pop().unwrap_or_default();
    let goals = goals_of_rounds.last().cloned().unwrap_or_default();
    let mut report = json!({"benchmark": "compare", "machine": machine(), "turns": turns,
                            "runs": runs, "cases": cases, "goals": goals});
    if repeat > 1 {
        report["repeats"] = json!({"rounds": repeat, "goals": repeated_goals(&goals_of_rounds),
                                   "sizes": ratios});
    }
    write_results(&root, "compare", &report)?;
    eprint!("{}", goals_summary(&goals));
    if repeat > 1 {
        eprint!("{}", repeats_summary(&report["repeats"]["goals"], repeat));
        for size in report["repeats"]["sizes"].as_array().into_iter().flatten() {
            let omp: Vec<String> = size["omp_open_context_ms"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|ms| format!("{:.1}", ms.as_f64().unwrap_or(f64::NAN)))
                .collect();
            eprintln!(
                "  {:>4} MB: omp's open + context (ms) {}; ours over it, medians: {}",
                number(size, &["size_mb"]),
                omp.join(" "),
                size["context_over_omp_median"]
            );
        }
    }
    Ok(())
}

/// Each goal of [`goals`] over the rounds of `--repeat` (each round's goals, in the same
/// order): its figure in every round, their median and how many rounds met it. A goal within
/// its bound in one run of a shared machine and past it in the next is on its edge: this says
/// how often it holds.
fn repeated_goals(rounds: &[Value]) -> Value {
    let first = rounds
        .first()
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let goals = first.iter().enumerate().map(|(at, goal)| {
        let of_rounds: Vec<&Value> = rounds.iter().filter_map(|round| round.get(at)).collect();
        let figures: Vec<f64> = of_rounds.iter().map(|g| number(g, &["figure"])).collect();
        let met = of_rounds
            .iter()
            .filter(|g| g["met"].as_bool() == Some(true))
            .count();
        let mut repeated = json!({
            "goal": goal["goal"], "size_mb": goal["size_mb"], "bound": goal["bound"],
            "figures": figures, "median": median(&figures), "met_rounds": met,
        });
        // How many rounds each format decided the figure of (a goal over the formats).
        let mut deciding = serde_json::Map::new();
        for format in of_rounds.iter().filter_map(|g| g["worst_of"].as_str()) {
            let rounds = deciding.get(format).and_then(Value::as_u64).unwrap_or(0);
            deciding.insert(format.to_owned(), json!(rounds + 1));
        }
        if !deciding.is_empty() {
            repeated["worst_of"] = Value::Object(deciding);
        }
        repeated
    });
    Value::Array(goals.collect())
}

/// For each size, over the rounds of `--repeat` (each round's cases, sizes in order): omp's
/// open + context in every round, and the median of each format's ratio of ours to it
/// (process start included): which formats sit near the bound, and how far omp's own time
/// moved.
fn repeated_ratios(rounds: &[Vec<Value>]) -> Value {
    let sizes = rounds.first().map_or(0, Vec::len);
    let per_size = (0..sizes).map(|at| {
        let cases: Vec<&Value> = rounds.iter().filter_map(|round| round.get(at)).collect();
        let omp: Vec<f64> = cases
            .iter()
            .map(|case| number(case, &["omp_context", "open_context_ms"]))
            .collect();
        let formats: serde_json::Map<String, Value> = FORMATS
            .iter()
            .map(|format| {
                let ratios: Vec<f64> = cases
                    .iter()
                    .map(|case| number(case, &["ratios", "context_over_omp", format]))
                    .collect();
                ((*format).to_owned(), json!(median(&ratios)))
            })
            .collect();
        json!({
            "size_mb": cases.first().map_or(Value::Null, |case| case["size_mb"].clone()),
            "omp_open_context_ms": omp,
            "context_over_omp_median": formats,
        })
    });
    Value::Array(per_size.collect())
}

/// [`repeated_goals`] as lines of text: how many of the `rounds` met each goal, and its
/// figures' median and range.
fn repeats_summary(goals: &Value, rounds: usize) -> String {
    let mut text = format!("xtask: issue #10's goals over {rounds} rounds:\n");
    for goal in goals.as_array().into_iter().flatten() {
        let figures: Vec<f64> = goal["figures"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| f.as_f64().unwrap_or(f64::NAN))
            .collect();
        let (low, high) = figures
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), f| {
                (l.min(*f), h.max(*f))
            });
        text.push_str(&format!(
            "  met in {:>3} of {rounds} {:>4} MB  median {:.3}, {:.3}–{:.3} (bound {})  {}\n",
            goal["met_rounds"].as_u64().unwrap_or(0),
            number(goal, &["size_mb"]),
            number(goal, &["median"]),
            low,
            high,
            number(goal, &["bound"]),
            goal["goal"].as_str().unwrap_or_default(),
        ));
        if let Some(deciding) = goal["worst_of"].as_object() {
            let mut formats: Vec<(&String, u64)> = deciding
                .iter()
                .map(|(format, rounds)| (format, rounds.as_u64().unwrap_or(0)))
                .collect();
            formats.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            let named: Vec<String> = formats
                .iter()
                .map(|(format, rounds)| format!("{format} {rounds}"))
                .collect();
            text.push_str(&format!(
                "                             the worst format: {}\n",
                named.join(", ")
            ));
        }
    }
    text
}

/// Issue #10's goals, each checked on every case it names: what it asks, the bound, the
/// case's worst figure (the largest ratio or time over the formats or loops it covers; for a
/// ratio over the formats, `worst_of` names the format) and whether that figure is within
/// the bound. One run on a shared machine can miss a goal that
/// another meets: the figures say by how much.
fn goals(cases: &[Value]) -> Value {
    let mut checked = Vec::new();
    for case in cases {
        let size = number(case, &["size_mb"]);
        let mut check = |goal: &str, bound: f64, (figure, of): (f64, Option<&str>)| {
            let mut checked_goal = json!({
                "goal": goal, "size_mb": size, "bound": bound, "figure": figure,
                // A figure missing (NaN) is not a goal met.
                "met": figure <= bound,
            });
            if let Some(format) = of {
                // The format whose figure is the goal's (its worst).
                checked_goal["worst_of"] = json!(format);
            }
            checked.push(checked_goal);
        };
        let over_formats = |key: &str| {
            let figures = FORMATS.map(|format| number(case, &["ratios", key, format]));
            let at = figures
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(at, _)| at);
            (worst(figures), at.map(|at| FORMATS[at]))
        };
        check(
            "context, process start included, over omp's open + context (every format)",
            0.2,
            over_formats("context_over_omp"),
        );
        if size >= 200.0 {
            check(
                "context, process start included, over pi's open + context (every format)",
                0.04,
                over_formats("context_over_pi"),
            );
        }
        check(
            "context's peak RSS over omp's (every format)",
            0.25,
            over_formats("context_rss_over_omp"),
        );
        if let Some(bound) = match size as u64 {
            5 => Some(20.0),
            50 => Some(170.0),
            _ => None,
        } {
            check(
                "context's wall time in ms, process start included (every format)",
                bound,
                (
                    worst(FORMATS.map(|f| number(case, &["ours_context", f, "wall_ms"]))),
                    None,
                ),
            );
        }
        let loops = ["ours_loop_pi", "ours_loop_omp"];
        let omp_turn = number(case, &["omp_loop", "turn_ms_median"]);
        check(
            "host loop's turn (median) over omp's (both dialects)",
            0.2,
            (
                worst(loops.map(|l| number(case, &[l, "turn_ms_median"]) / omp_turn)),
                None,
            ),
        );
        check(
            "host loop's last 50 turns over its first 50 (medians, both dialects)",
            1.2,
            (
                worst(
                    loops.map(|l| number(case, &["ratios", &format!("{l}_last50_over_first50")])),
                ),
                None,
            ),
        );
        let omp_rss = number(case, &["omp_context", "peak_rss_mb"]);
        check(
            "Session::resume's peak RSS over omp's context's (both dialects)",
            0.25,
            (
                worst(loops.map(|l| number(case, &[l, "open_peak_rss_mb"]) / omp_rss)),
                None,
            ),
        );
    }
    Value::Array(checked)
}

/// The largest of `figures`; NaN when one is (a figure the run lacks).
fn worst(figures: impl IntoIterator<Item = f64>) -> f64 {
    figures
        .into_iter()
        .fold(f64::NEG_INFINITY, |worst, figure| {
            if figure.is_nan() || worst.is_nan() {
                f64::NAN
            } else {
                worst.max(figure)
            }
        })
}

/// [`goals`] as lines of text: met or not, the size, the worst figure against the bound.
fn goals_summary(goals: &Value) -> String {
    let mut text = String::from("xtask: issue #10's goals on this run:\n");
    for goal in goals.as_array().into_iter().flatten() {
        let met = goal["met"].as_bool() == Some(true);
        text.push_str(&format!(
            "  {:7} {:>4} MB  {:.3} (bound {})  {}\n",
            if met { "met" } else { "NOT met" },
            number(goal, &["size_mb"]),
            number(goal, &["figure"]),
            number(goal, &["bound"]),
            goal["goal"].as_str().unwrap_or_default(),
        ));
    }
    text
}

fn parse_args(args: &[String]) -> Result<(Vec<u64>, usize, usize, usize), String> {
    let mut sizes = vec![5, 50, 200];
    let mut turns = 100;
    let mut runs = 5;
    let mut repeat = 1;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(USAGE)?;
        match arg.as_str() {
            "--sizes" => {
                sizes = value
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .parse()
                            .map_err(|_| format!("bad size `{s}`\n{USAGE}"))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "--turns" => turns = value.parse().map_err(|_| USAGE.to_owned())?,
            "--runs" => runs = value.parse().map_err(|_| USAGE.to_owned())?,
            "--repeat" => repeat = value.parse().map_err(|_| USAGE.to_owned())?,
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    Ok((sizes, turns.max(100), runs.max(1), repeat.max(1)))
}

/// Where a figure goes in a case: the case's key, and the key inside it when the figure is one
/// of several there (`ours_context`'s formats).
pub(crate) type Where = (&'static str, Option<&'static str>);

/// One thing a case times `runs` times ([`interleaved`]): where its figure goes in the case,
/// the key its runs are ordered by, and how one run is measured.
pub(crate) struct Series<'a> {
    at: Where,
    key: &'static str,
    /// Where every run's `key` goes beside the kept run, and how it is rounded there.
    runs_as: (&'static str, fn(f64) -> f64),
    measure: Box<dyn FnMut() -> Result<Value, String> + 'a>,
}

impl<'a> Series<'a> {
    /// A series whose `key` is a time in ms (every run's kept as `runs_ms`).
    pub(crate) fn new(
        at: Where,
        key: &'static str,
        measure: impl FnMut() -> Result<Value, String> + 'a,
    ) -> Self {
        Series {
            at,
            key,
            runs_as: ("runs_ms", round_ms),
            measure: Box::new(measure),
        }
    }

    /// Every run's `key` kept as `name` instead, rounded by `round`: for a key that is not a
    /// time.
    fn runs_as(mut self, name: &'static str, round: fn(f64) -> f64) -> Self {
        self.runs_as = (name, round);
        self
    }
}

/// Runs every series `runs` times, taking turns (one run of each, then the next round), so
/// that a minute when the shared machine is slow falls on ours and theirs alike rather than on
/// whichever ran then; each series' figure is its run whose `key` is the median, with every
/// run's `key` beside it (`runs_ms`, or as [`Series::runs_as`] names it). In the order of
/// `series`, with where each goes.
pub(crate) fn interleaved(
    runs: usize,
    series: &mut [Series<'_>],
) -> Result<Vec<(Where, Value)>, String> {
    let mut all: Vec<Vec<Value>> = series.iter().map(|_| Vec::with_capacity(runs)).collect();
    for _ in 0..runs {
        for (one, done) in series.iter_mut().zip(&mut all) {
            done.push((one.measure)()?);
        }
    }
    Ok(series
        .iter()
        .zip(all)
        .map(|(one, mut done)| {
            let times: Vec<f64> = done.iter().map(|run| number(run, &[one.key])).collect();
            let mut order: Vec<usize> = (0..done.len()).collect();
            order.sort_by(|&a, &b| times[a].total_cmp(&times[b]));
            let mut kept = order
                .get(order.len() / 2)
                .map(|&median| done.swap_remove(median))
                .unwrap_or_default();
            let (runs_as, round) = one.runs_as;
            kept[runs_as] = json!(times.iter().map(|t| round(*t)).collect::<Vec<_>>());
            (one.at, kept)
        })
        .collect())
}

/// A copy of `file` for a loop to append to.
fn fresh_copy(file: &Path, dir: &Path, name: &str) -> Result<PathBuf, String> {
    let copy = dir.join(format!("{name}.jsonl"));
    std::fs::copy(file, &copy).map_err(|e| format!("cannot copy {}: {e}", file.display()))?;
    Ok(copy)
}

/// Runs `command` twice, its output written to `/dev/null` (not through a pipe that this
/// process reads: that would time our reading too): `{wall_ms, peak_rss_mb, minor_faults}`.
/// `wall_ms` is timed around the process alone, started and waited for here; `peak_rss_mb`
/// and `minor_faults` (the pages the process touched first, each a trip through the kernel:
/// ~2 µs on the VMs we measure on) come from a second run under `/usr/bin/time`, whose own
/// start (a second `fork` and `exec`, and its wait) would add ~1.5 ms to a run of a few
/// milliseconds. omp's and pi's figures are taken
/// inside their processes, so ours carry no more than our own process's start.
pub(crate) fn timed(command: &mut Command) -> Result<Value, String> {
    let started = Instant::now();
    let status = command
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| format!("could not run {command:?}: {e}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        return Err(format!("{command:?} failed ({status})"));
    }
    let (_, mut measured) = run_timed(command, false)?;
    measured["wall_ms"] = json!(round_ms(wall_ms));
    Ok(measured)
}

/// Runs `command` under `/usr/bin/time` and merges the JSON it prints with the outside figures.
fn timed_json(command: &mut Command) -> Result<Value, String> {
    let (stdout, mut measured) = run_timed(command, true)?;
    let inside: Value =
        serde_json::from_slice(&stdout).map_err(|e| format!("no JSON from {command:?}: {e}"))?;
    if let (Value::Object(outside), Value::Object(inside)) = (&mut measured, inside) {
        for (key, value) in inside {
            outside.entry(key).or_insert(value);
        }
    }
    Ok(measured)
}

/// Reads `file` through once, so every timed run starts with it in the page cache: a machine
/// that pages out cold file pages in the background (DAMON's proactive reclaim on some VMs)
/// would otherwise time a run that reads part of the file from disk against one that does
/// not.
fn warm(file: &Path) -> Result<(), String> {
    let mut opened =
        std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    std::io::copy(&mut opened, &mut std::io::sink())
        .map(drop)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))
}

/// `capture`: the command's stdout is returned (it prints a JSON report); otherwise it goes to
/// `/dev/null` and nothing is returned.
fn run_timed(command: &mut Command, capture: bool) -> Result<(Vec<u8>, Value), String> {
    let report = std::env::temp_dir().join(format!("pi-session-time-{}", std::process::id()));
    let program = command.get_program().to_owned();
    let mut outer = Command::new("/usr/bin/time");
    outer
        .arg("-f")
        .arg("%e %M %R")
        .arg("-o")
        .arg(&report)
        .arg(program);
    outer.args(command.get_args());
    if let Some(dir) = command.get_current_dir() {
        outer.current_dir(dir);
    }
    let stdout = if capture {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    let started = Instant::now();
    let output = outer
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not run /usr/bin/time {command:?}: {e}"))?;
    let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    if !output.status.success() {
        return Err(format!("{command:?} failed ({})", output.status));
    }
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    // The last line is ours (a line before it says why a command failed).
    let fields: Vec<f64> = text
        .lines()
        .last()
        .unwrap_or_default()
        .split_whitespace()
        .map(|field| field.parse().unwrap_or(f64::NAN))
        .collect();
    let field = |at: usize| fields.get(at).copied().unwrap_or(f64::NAN);
    Ok((
        output.stdout,
        json!({"wall_ms": round(wall_ms), "peak_rss_mb": round(field(1) / 1024.0),
               "minor_faults": field(2)}),
    ))
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// A time in milliseconds to the hundredth: a step of 0.1 ms would be 3% of a 5 MB context
/// (~3.3 ms), as much as the margin its goal is judged by.
fn round_ms(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn number(value: &Value, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(value, |v, key| v.get(key))
        .and_then(Value::as_f64)
        .unwrap_or(f64::NAN)
}

/// The key of a loop's run that says how flat it is: the median of its last 50 turns over
/// that of its first 50.
const LAST_OVER_FIRST: &str = "last50_over_first50";

/// A loop's run with its `turn_ms` summed up: their median, the medians of the first and the
/// last 50 and the second over the first ([`LAST_OVER_FIRST`]). A run already summed up (no
/// `turn_ms`) is left as it is.
fn summarise_loop(run: &mut Value) {
    let Some(turns) = run.get("turn_ms").and_then(Value::as_array) else {
        return;
    };
    let turns: Vec<f64> = turns.iter().filter_map(Value::as_f64).collect();
    let take = turns.len().min(50);
    let (first, last) = (
        round_fine(median(&turns[..take])),
        round_fine(median(&turns[turns.len() - take..])),
    );
    run["turn_ms_median"] = json!(round_fine(median(&turns)));
    run["turn_ms_first50"] = json!(first);
    run["turn_ms_last50"] = json!(last);
    run[LAST_OVER_FIRST] = json!(round_fine(last / first));
    if let Some(map) = run.as_object_mut() {
        map.remove("turn_ms");
    }
}

/// The loops' runs summed up ([`summarise_loop`]) and the ratios of the case.
fn summarise(case: &mut Value) {
    for name in ["ours_loop_pi", "ours_loop_omp", "pi_loop", "omp_loop"] {
        summarise_loop(&mut case[name]);
    }
    let ratio = |a: f64, b: f64| round_fine(a / b);
    let omp_context = number(case, &["omp_context", "open_context_ms"]);
    let pi_context = number(case, &["pi_context", "open_context_ms"]);
    let omp_rss = number(case, &["omp_context", "peak_rss_mb"]);
    let mut ratios = json!({});
    for format in FORMATS {
        let ours = number(case, &["ours_context", format, "wall_ms"]);
        ratios["context_over_omp"][format] = json!(ratio(ours, omp_context));
        ratios["context_over_pi"][format] = json!(ratio(ours, pi_context));
        let inside = number(case, &["ours_context_inprocess", format, "open_context_ms"]);
        ratios["context_inprocess_over_omp"][format] = json!(ratio(inside, omp_context));
        ratios["context_inprocess_over_pi"][format] = json!(ratio(inside, pi_context));
        ratios["context_rss_over_omp"][format] = json!(ratio(
            number(case, &["ours_context", format, "peak_rss_mb"]),
            omp_rss
        ));
    }
    ratios["check_over_omp_open"] = json!(ratio(
        number(case, &["ours_check", "wall_ms"]),
        number(case, &["omp_context", "open_ms"])
    ));
    for (ours, theirs) in [("ours_loop_omp", "omp_loop"), ("ours_loop_pi", "pi_loop")] {
        ratios[format!("{ours}_turn_over_{theirs}")] = json!(ratio(
            number(case, &[ours, "turn_ms_median"]),
            number(case, &[theirs, "turn_ms_median"])
        ));
        // The loop's own flatness, as its run was summed up (and, for ours, chosen by).
        ratios[format!("{ours}_last50_over_first50")] =
            json!(number(case, &[ours, LAST_OVER_FIRST]));
    }
    case["ratios"] = ratios;
}

fn round_fine(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// `--worker context FILE FORMAT DIALECT`: our open + context timed inside one (release)
/// process, as omp's and pi's are (`bench.mjs`: module loading excluded): the session read as
/// `pi-session context` reads it, then the context in `FORMAT` made and serialised into a
/// sink (what the CLI writes, without its indentation). One cold run per process.
fn context_worker(args: &[String]) -> Result<(), String> {
    let [file, format, dialect] = args
        .get(..3)
        .and_then(|a| <&[String; 3]>::try_from(a).ok())
        .ok_or("usage: bench compare --worker context FILE FORMAT pi|omp")?;
    let dialect =
        pi_session_tree::Dialect::parse(dialect).ok_or("the dialect must be pi, pi16 or omp")?;
    let format: pi_session::Format = format.parse().map_err(|e| format!("{e}"))?;
    let started = Instant::now();
    let (session, _) =
        pi_session::Session::read_in(&pi_session::store::Store::Files, file, "unknown:unknown")
            .map_err(|e| e.to_string())?;
    let opened = Instant::now();
    let leaf = pi_session_tree::LeafSelector::Default;
    let mut sink = CountingSink::default();
    let options = pi_session::ProjectOptions {
        dialect,
        ..pi_session::ProjectOptions::default()
    };
    let written = |sink: &mut CountingSink, bytes: &[u8]| -> Result<(), Failed> {
        sink.bytes += bytes.len();
        Ok(())
    };
    let mut leftovers = None;
    match format {
        pi_session::Format::Agent | pi_session::Format::Llm => {
            let (rest, _, left) = session
                .context_each_leaving(
                    &leaf,
                    format,
                    dialect,
                    &pi_session_tree::ContextOptions::default(),
                    |message| written(&mut sink, &message.to_compact()?),
                )
                .map_err(|e| e.0)?;
            written(&mut sink, &rest).map_err(|e| e.0)?;
            leftovers = Some(left);
        }
        pi_session::Format::OmpAgentLoop => {
            let (_, left) = session
                .omp_agent_loop_each_leaving(
                    &leaf,
                    &pi_session_context::projection::omp_agent_loop_options(options.inputs),
                    &pi_session_tree::ContextOptions::default(),
                    |message| written(&mut sink, &message.to_compact()?),
                )
                .map_err(|e| e.0)?;
            leftovers = Some(left);
        }
        _ => {
            // Each element printed as the CLI prints it (before its layout), into one buffer.
            let mut buffer = pi_session_types::json::JsBuffer::default();
            session
                .rho_items_each(&leaf, format, &options, |item| {
                    let compact = item
                        .write_compact(&mut buffer)
                        .map_err(|e| Failed(e.to_string()))?;
                    written(&mut sink, compact)
                })
                .map_err(|e| e.0)?;
        }
    }
    let done = Instant::now();
    let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1000.0;
    println!(
        "{}",
        json!({"open_ms": ms(started, opened), "context_ms": ms(opened, done),
               "open_context_ms": ms(started, done), "bytes": sink.bytes})
    );
    // As the CLI: the process's end gives the memory back.
    std::mem::forget((leftovers, session));
    Ok(())
}

/// A failure of [`context_worker`]'s walk, as text.
struct Failed(String);

impl From<pi_session::Error> for Failed {
    fn from(error: pi_session::Error) -> Self {
        Failed(pi_session::error_chain(&error))
    }
}

/// A sink that keeps nothing and counts the bytes it is given.
#[derive(Default)]
struct CountingSink {
    bytes: usize,
}

/// `--worker loop FILE TURNS DIALECT`: the host loop over our facade, in this (release) process.
fn worker(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("context") {
        return context_worker(&args[1..]);
    }
    let [mode, file, turns, dialect] = args
        .get(..4)
        .and_then(|a| <&[String; 4]>::try_from(a).ok())
        .ok_or("usage: bench compare --worker loop FILE TURNS pi|omp [shared|owned]")?;
    // `shared` (the default): `Session::turn_context`; `owned`: `agent_context` then
    // `llm_messages`, every message copied (the API before `turn_context`, for comparison).
    let owned = args.get(4).map(String::as_str) == Some("owned");
    if mode != "loop" {
        return Err(format!("unknown worker mode `{mode}`"));
    }
    let turns: usize = turns.parse().map_err(|_| "TURNS must be a number")?;
    let dialect =
        pi_session_tree::Dialect::parse(dialect).ok_or("the dialect must be pi, pi16 or omp")?;
    let started = Instant::now();
    // What a host resuming a session calls: no branch typed (`Session::open` types it).
    let (mut session, _) = pi_session::Session::resume(file, "anthropic:claude-sonnet-4-5")
        .map_err(|e| e.to_string())?;
    let open_ms = started.elapsed().as_secs_f64() * 1000.0;
    let open_rss_mb = crate::bench_context::peak_rss_mb();
    let mut turn_ms = Vec::with_capacity(turns);
    let (mut append_ms, mut context_ms, mut llm_ms) = (Vec::new(), Vec::new(), Vec::new());
    let mut messages = 0;
    for turn in 0..turns {
        let t0 = Instant::now();
        session
            .append(pi_session::user(
                &format!("turn {turn}: please run the tests again"),
                pi_session::UserOptions::new(),
            ))
            .map_err(|e| e.to_string())?;
        session
            .append(assistant_reply(turn))
            .map_err(|e| e.to_string())?;
        let t1 = Instant::now();
        let t2;
        if owned {
            let (context, _) = session
                .agent_context(dialect, &pi_session_tree::ContextOptions::default())
                .map_err(|e| e.to_string())?;
            t2 = Instant::now();
            messages = pi_session_context::llm_messages(context.messages(), dialect).len();
        } else {
            let context = session.turn_context(dialect).map_err(|e| e.to_string())?;
            t2 = Instant::now();
            messages = context.llm.len();
        }
        let t3 = Instant::now();
        let ms = |from: Instant, to: Instant| (to - from).as_secs_f64() * 1000.0;
        turn_ms.push(ms(t0, t3));
        append_ms.push(ms(t0, t1));
        context_ms.push(ms(t1, t2));
        llm_ms.push(ms(t2, t3));
    }
    let report = json!({
        "open_ms": open_ms, "open_peak_rss_mb": open_rss_mb, "turn_ms": turn_ms,
        "append_ms_median": median(&append_ms), "context_ms_median": median(&context_ms),
        "llm_ms_median": median(&llm_ms),
        "messages": messages, "max_rss_mb_inside": crate::bench_context::peak_rss_mb(),
    });
    println!("{report}");
    Ok(())
}

/// The assistant entry of a loop turn (the shape pi writes).
fn assistant_reply(turn: usize) -> pi_session_types::Entry {
    let message = json!({
        "type": "message",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": format!("turn {turn}: the tests pass now.")}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": usage(100, 20),
            "stopReason": "stop", "timestamp": 1_767_225_600_000_i64 + turn as i64,
        }
    });
    let Value::Object(map) = message else {
        unreachable!("a json! object literal")
    };
    pi_session_types::Entry::from_map(map)
}

fn usage(input: u64, output: u64) -> Value {
    json!({"input": input, "output": output, "cacheRead": 0, "cacheWrite": 0,
           "totalTokens": input + output,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

/// Deterministic generator state (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        pi_session_test_support::splitmix64(&mut self.0)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: [&str; 16] = [
    "the",
    "test",
    "session",
    "compaction",
    "branch",
    "model",
    "tool",
    "result",
    "file",
    "read",
    "write",
    "error",
    "fixed",
    "context",
    "line",
    "value",
];

fn text(rng: &mut Rng, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 16);
    while out.len() < bytes {
        out.push_str(WORDS[rng.below(16) as usize]);
        out.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    out
}

/// Writes a pi v3 session of about `size_mb` MiB to `file`, anew each time (the generator is
/// deterministic: the same bytes for the same size). Returns `{bytes, entries, compactions,
/// tips}`.
pub(crate) fn generate(file: &Path, size_mb: u64) -> Result<Value, String> {
    let target = size_mb << 20;
    let err = |e: std::io::Error| format!("cannot write {}: {e}", file.display());
    let mut out = BufWriter::new(std::fs::File::create(file).map_err(err)?);
    let mut rng = Rng(size_mb);
    let mut ms: i64 = 1_767_225_600_000;
    let iso = |ms: i64| {
        pi_session_types::IsoTimestamp::from_unix_ms(ms)
            .map_or_else(String::new, |t| t.as_str().to_owned())
    };
    let mut written: u64 = 0;
    let mut line = |out: &mut BufWriter<std::fs::File>, value: &Value| -> Result<(), String> {
        let mut bytes = serde_json::to_vec(value).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        written += bytes.len() as u64;
        out.write_all(&bytes).map_err(err)
    };
    line(
        &mut out,
        &json!({"type": "session", "version": 3, "id": format!("0000bench-{size_mb:04}-4000-8000-000000000000"),
                "timestamp": iso(ms), "cwd": "/home/bench/project"}),
    )?;
    let mut counter: u32 = 0;
    let mut next_id = || {
        counter += 1;
        // An odd multiplier is a bijection of u32: ids never repeat.
        format!("{:08x}", counter.wrapping_mul(0x9E37_79B1))
    };
    let mut chain: Vec<String> = Vec::new();
    let mut entry = |out: &mut BufWriter<std::fs::File>,
                     chain: &mut Vec<String>,
                     parent: Option<&str>,
                     ms: i64,
                     body: Value|
     -> Result<String, String> {
        let id = next_id();
        let mut value = json!({"type": body["type"].clone(), "id": id, "parentId": parent, "timestamp": iso(ms)});
        if let (Value::Object(map), Value::Object(extra)) = (&mut value, body) {
            for (key, v) in extra {
                map.entry(key).or_insert(v);
            }
        }
        line(out, &value)?;
        chain.push(id.clone());
        Ok(id)
    };
    let first = entry(
        &mut out,
        &mut chain,
        None,
        ms,
        json!({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}),
    )?;
    let mut tip = first;
    tip = entry(
        &mut out,
        &mut Vec::new(),
        Some(&tip),
        ms,
        json!({"type": "thinking_level_change", "thinkingLevel": "high"}),
    )?;
    let (mut compactions, mut tips, mut turn) = (0u64, 1u64, 0u64);
    let compaction_every = target / 17;
    let branch_every = target / 15;
    let (mut next_compaction, mut next_branch) = (compaction_every, branch_every / 2);
    // `written` is borrowed by `line`; count the bytes through the file's length instead.
    let position = |out: &mut BufWriter<std::fs::File>| -> Result<u64, String> {
        out.flush().map_err(err)?;
        out.get_ref().metadata().map(|m| m.len()).map_err(err)
    };
    let mut at = 0u64;
    while at < target {
        turn += 1;
        ms += 1000;
        let len = 200 + rng.below(400) as usize;
        let user = json!({"type": "message", "message": {"role": "user",
            "content": [{"type": "text", "text": text(&mut rng, len)}], "timestamp": ms}});
        tip = entry(&mut out, &mut chain, Some(&tip), ms, user)?;
        for step in 0..(1 + rng.below(4)) {
            ms += 1000;
            let call = format!("toolu_{turn:06}_{step}");
            let assistant = json!({"type": "message", "message": {"role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": text(&mut rng, 300), "thinkingSignature": "c2lnbmF0dXJl"},
                    {"type": "text", "text": text(&mut rng, 150)},
                    {"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": format!("cargo test -p crate{step}")}}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "usage": usage(20_000 + rng.below(10_000), 300), "stopReason": "toolUse", "timestamp": ms}});
            tip = entry(&mut out, &mut chain, Some(&tip), ms, assistant)?;
            ms += 1000;
            let len = 1000 + rng.below(6000) as usize;
            let result = json!({"type": "message", "message": {"role": "toolResult", "toolCallId": call,
                "toolName": "bash", "content": [{"type": "text", "text": text(&mut rng, len)}],
                "isError": false, "timestamp": ms}});
            tip = entry(&mut out, &mut chain, Some(&tip), ms, result)?;
        }
        ms += 1000;
        let reply = json!({"type": "message", "message": {"role": "assistant",
            "content": [{"type": "text", "text": text(&mut rng, 400)}],
            "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": usage(30_000, 200), "stopReason": "stop", "timestamp": ms}});
        tip = entry(&mut out, &mut chain, Some(&tip), ms, reply)?;
        if turn % 8 == 0 {
            at = position(&mut out)?;
        }
        if at >= next_branch && at + (1 << 20) < target {
            next_branch += branch_every;
            // A side branch off an entry 10 back; the main chain goes on from its tip.
            let from = chain[chain.len().saturating_sub(10)].clone();
            ms += 1000;
            let side = json!({"type": "message", "message": {"role": "user",
                "content": [{"type": "text", "text": text(&mut rng, 300)}], "timestamp": ms}});
            entry(&mut out, &mut Vec::new(), Some(&from), ms, side)?;
            tips += 1;
        }
        if at >= next_compaction && at + (1 << 20) < target {
            next_compaction += compaction_every;
            let kept = chain[chain.len().saturating_sub(40)].clone();
            ms += 1000;
            let compaction = json!({"type": "compaction", "summary": text(&mut rng, 3000),
                "firstKeptEntryId": kept, "tokensBefore": 150_000});
            tip = entry(&mut out, &mut chain, Some(&tip), ms, compaction)?;
            compactions += 1;
        }
    }
    out.flush().map_err(err)?;
    Ok(
        json!({"bytes": position(&mut out)?, "entries": counter, "compactions": compactions,
              "tips": tips, "turns": turn}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_take_turns_and_each_keeps_its_median_run() {
        let log = std::cell::RefCell::new(Vec::new());
        let run = |name: &'static str, times: [f64; 3]| {
            let (log, mut at) = (&log, 0);
            move || {
                log.borrow_mut().push(name);
                at += 1;
                Ok(json!({"ms": times[at - 1], "run": at}))
            }
        };
        let mut series = [
            Series::new(("ours", None), "ms", run("ours", [3.0, 1.0, 2.0])),
            Series::new(("theirs", Some("x")), "ms", run("theirs", [9.0, 7.0, 8.0])),
        ];
        let figures = interleaved(3, &mut series).expect("no run fails");
        assert_eq!(
            *log.borrow(),
            ["ours", "theirs", "ours", "theirs", "ours", "theirs"]
        );
        assert_eq!(
            figures,
            [
                (
                    ("ours", None),
                    json!({"ms": 2.0, "run": 3, "runs_ms": [3.0, 1.0, 2.0]})
                ),
                (
                    ("theirs", Some("x")),
                    json!({"ms": 8.0, "run": 3, "runs_ms": [9.0, 7.0, 8.0]})
                ),
            ]
        );
    }

    #[test]
    fn a_loop_keeps_its_run_of_median_flatness_with_every_run_s_ratio() {
        // Three runs of 100 turns: 1 ms each for the first 50, then 1.5, 0.9 and 1.0 ms.
        let later = [1.5, 0.9, 1.0];
        let mut at = 0;
        let mut series = [
            Series::new(("ours_loop_pi", None), LAST_OVER_FIRST, move || {
                at += 1;
                let turns: Vec<f64> = (0..100)
                    .map(|turn| if turn < 50 { 1.0 } else { later[at - 1] })
                    .collect();
                let mut run = json!({"turn_ms": turns, "run": at});
                summarise_loop(&mut run);
                Ok(run)
            })
            .runs_as("runs_last50_over_first50", round_fine),
        ];
        let figures = interleaved(3, &mut series).expect("no run fails");
        let kept = &figures[0].1;
        assert_eq!(kept["run"], 3, "{kept}");
        assert_eq!(kept[LAST_OVER_FIRST], 1.0, "{kept}");
        assert_eq!(kept["turn_ms_first50"], 1.0, "{kept}");
        assert_eq!(kept["runs_last50_over_first50"], json!([1.5, 0.9, 1.0]));
        assert!(
            kept.get("runs_ms").is_none() && kept.get("turn_ms").is_none(),
            "{kept}"
        );
        // A run summed up already is left as it is (the case's summary passes over it).
        let mut again = kept.clone();
        summarise_loop(&mut again);
        assert_eq!(&again, kept);
    }

    #[test]
    fn a_run_is_timed_alone_and_its_peak_rss_taken_from_another() {
        if !Path::new("/usr/bin/time").exists() {
            eprintln!("skipped: no /usr/bin/time (Debian's `time` package)");
            return;
        }
        // A process that sleeps 0.2 s: the time is its own, the peak RSS a real figure.
        let measured = timed(Command::new("sleep").arg("0.2")).expect("sleep runs");
        let wall = number(&measured, &["wall_ms"]);
        assert!((200.0..2_000.0).contains(&wall), "{measured}");
        // Kept to the hundredth of a millisecond, no coarser.
        assert_eq!(wall, round_ms(wall), "{measured}");
        assert_eq!(round_ms(3.344_9), 3.34);
        assert_eq!(round_ms(3.345_1), 3.35);
        let rss = number(&measured, &["peak_rss_mb"]);
        assert!(rss > 0.0 && rss < 100.0, "{measured}");
        // A failing run is an error, not a figure.
        let failed = timed(&mut Command::new("false")).expect_err("false fails");
        assert!(failed.contains("failed"), "{failed}");
    }

    /// A case as [`summarise`] leaves it: every format `context` ms and MB of RSS against
    /// omp's 100 ms / 400 MB and pi's `pi` ms, loops of `turn` ms against omp's 1 ms.
    fn case(size_mb: u64, context: f64, pi: f64, rss: f64, turn: f64) -> Value {
        let mut case = json!({
            "size_mb": size_mb,
            "omp_context": {"open_context_ms": 100.0, "peak_rss_mb": 400.0},
            "pi_context": {"open_context_ms": pi},
            "omp_loop": {"turn_ms": vec![1.0; 60]},
            "pi_loop": {"turn_ms": vec![1.0; 60]},
        });
        for format in FORMATS {
            case["ours_context"][format] = json!({"wall_ms": context, "peak_rss_mb": rss});
        }
        for name in ["ours_loop_pi", "ours_loop_omp"] {
            case[name] = json!({"turn_ms": vec![turn; 60], "open_peak_rss_mb": rss});
        }
        summarise(&mut case);
        case
    }

    /// Over rounds, each goal keeps its figure of every round, their median and how many rounds
    /// met it; the summary line says so.
    #[test]
    fn repeated_rounds_count_the_rounds_that_met_each_goal() {
        // The context at 15, 25 and 19 ms against omp's 100: met in the first and last rounds.
        let rounds: Vec<Value> = [15.0, 25.0, 19.0]
            .map(|ms| goals(&[case(200, ms, 1_000.0, 80.0, 0.1)]))
            .into();
        let repeated = repeated_goals(&rounds);
        let each = repeated.as_array().expect("an array of goals");
        assert_eq!(each.len(), 6, "{repeated}");
        let context = &each[0];
        assert!(
            context["goal"]
                .as_str()
                .unwrap()
                .contains("over omp's open")
        );
        assert_eq!(context["figures"], json!([0.15, 0.25, 0.19]), "{context}");
        assert_eq!(context["median"], json!(0.19), "{context}");
        assert_eq!(context["met_rounds"], json!(2), "{context}");
        // A goal every round met (the host loop's turn), and one none did.
        assert_eq!(each[3]["met_rounds"], json!(3), "{}", each[3]);
        let missed = repeated_goals(&[goals_missing_rss(), goals_missing_rss()]);
        assert_eq!(missed[2]["met_rounds"], json!(0), "{missed}");
        let text = repeats_summary(&repeated, 3);
        assert!(
            text.contains("met in   2 of 3  200 MB  median 0.190, 0.150–0.250 (bound 0.2)"),
            "{text}"
        );
        // The format whose ratio is the figure is named, and counted over the rounds.
        let slower = |format: &str| {
            let mut case = case(200, 15.0, 1_000.0, 80.0, 0.1);
            case["ratios"]["context_over_omp"][format] = json!(0.3);
            goals(&[case])
        };
        let decided = repeated_goals(&[slower("anthropic"), slower("req-llm"), slower("req-llm")]);
        assert_eq!(
            decided[0]["worst_of"],
            json!({"req-llm": 2, "anthropic": 1}),
            "{decided}"
        );
        assert_eq!(decided[0]["met_rounds"], json!(0), "{decided}");
        let text = repeats_summary(&decided, 3);
        assert!(
            text.contains("the worst format: req-llm 2, anthropic 1"),
            "{text}"
        );
        // Each format's median ratio over the rounds, and omp's time in each.
        let rounds: Vec<Vec<Value>> = [15.0, 25.0, 19.0]
            .map(|ms| vec![case(200, ms, 1_000.0, 80.0, 0.1)])
            .into();
        let sizes = repeated_ratios(&rounds);
        assert_eq!(sizes[0]["size_mb"], json!(200), "{sizes}");
        assert_eq!(
            sizes[0]["omp_open_context_ms"],
            json!([100.0, 100.0, 100.0])
        );
        assert_eq!(
            sizes[0]["context_over_omp_median"]["anthropic"],
            json!(0.19),
            "{sizes}"
        );
    }

    /// The goals of a 200 MB round whose context's peak RSS is past its bound.
    fn goals_missing_rss() -> Value {
        goals(&[case(200, 15.0, 1_000.0, 120.0, 0.1)])
    }

    /// The goals met, one by one, and each missed when its own figure crosses its bound.
    #[test]
    fn each_goal_is_met_within_its_bound_and_missed_past_it() {
        let met = |cases: &[Value]| -> Vec<(String, f64, bool)> {
            let goals = goals(cases);
            goals
                .as_array()
                .unwrap()
                .iter()
                .map(|g| {
                    let goal = g["goal"].as_str().unwrap().to_owned();
                    (goal, number(g, &["size_mb"]), g["met"] == json!(true))
                })
                .collect()
        };
        // 200 MB: 15 ms (0.15 of omp's, 0.015 of pi's), 80 MB (0.2 of omp's), 0.1 ms a turn.
        let fine = met(&[case(200, 15.0, 1_000.0, 80.0, 0.1)]);
        assert_eq!(fine.len(), 6, "{fine:?}");
        assert!(fine.iter().all(|(_, _, met)| *met), "{fine:?}");
        // Each figure past its bound misses its goals and no other (the RSS: the context's and
        // `Session::resume`'s).
        for (case, missed) in [
            (case(200, 25.0, 1_000.0, 80.0, 0.1), "over omp's open"),
            (case(200, 15.0, 300.0, 80.0, 0.1), "over pi's open"),
            (case(200, 15.0, 1_000.0, 120.0, 0.1), "peak RSS over omp's"),
            (
                case(200, 15.0, 1_000.0, 80.0, 0.3),
                "turn (median) over omp's",
            ),
        ] {
            let goals = met(&[case]);
            let failed: Vec<&str> = goals
                .iter()
                .filter(|(_, _, met)| !met)
                .map(|(goal, _, _)| goal.as_str())
                .collect();
            assert!(
                !failed.is_empty() && failed.iter().all(|goal| goal.contains(missed)),
                "{missed}: {failed:?}"
            );
        }
        // 5 MB: the time bound (20 ms) and no pi goal; a loop that grows misses flatness.
        let mut small = case(5, 19.0, 1_000.0, 10.0, 0.1);
        assert!(met(&[small.clone()]).iter().all(|(goal, size, met)| {
            *size == 5.0 && !goal.contains("pi's") && (*met || goal.contains("omp's open"))
        }));
        small["ours_context"]["anthropic"]["wall_ms"] = json!(21.0);
        // 100 turns, the last 50 at 1.3x the first 50 (with 60, the last 50 would be mostly
        // the first ones: flat).
        let mut turns = vec![0.1; 100];
        turns[50..].fill(0.13);
        small["ours_loop_omp"]["turn_ms"] = json!(turns);
        summarise(&mut small);
        let checked = met(&[small]);
        for missed in ["wall time in ms", "last 50 turns"] {
            let (_, _, met) = checked
                .iter()
                .find(|(goal, ..)| goal.contains(missed))
                .unwrap();
            assert!(!met, "{missed}: {checked:?}");
        }
        // A figure the run lacks is not a goal met.
        let mut lacking = case(200, 15.0, 1_000.0, 80.0, 0.1);
        lacking["ratios"]["context_over_omp"]["openai"] = Value::Null;
        assert!(
            met(&[lacking])
                .iter()
                .any(|(goal, _, met)| !met && goal.contains("omp's open"))
        );
        assert!(goals_summary(&goals(&[case(200, 25.0, 1_000.0, 80.0, 0.1)])).contains("NOT met"));
    }
}
