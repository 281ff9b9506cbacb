//! `cargo xtask link-order`: writes `crates/pi-session-cli/link-order.txt`, the order in which
//! the linker lays out the functions the `pi-session` binary runs.
//!
//! ```text
//! cargo xtask link-order
//! ```
//!
//! A process pays for every page of code it touches for the first time (a page fault, ~2 µs
//! on the bench VM). Laid out as the compiler emits them, the few thousand functions a
//! `context` runs are spread over most of a 12 MB `.text`: a 5 MB `context --format agent`
//! took 60–90 faults on code. Listed in `link-order.txt`, which `.cargo/config.toml` hands to
//! the linker (LLD's `--symbol-ordering-file`), they are laid out first and together: ~25
//! faults (docs/perf.md, "Round 41").
//!
//! The list is what the binary runs, measured: the release CLI runs under `valgrind
//! --tool=callgrind` (`check`, `tree`, `stats` and `context` in every format on the 5 MB session
//! of `bench compare`, written to `target/link-order/`; `context` on an omp fixture too, whose
//! rules differ; `ls` of the pi fixtures' folder), and every function any run entered is
//! listed, those that more of the runs entered first (the start, the open), each group by
//! name. A few functions (those of a thread waiting or waking another) come and go with the
//! threads' timing between two runs of this command.
//!
//! The names are the symbols' mangled names, whose hashes change with the toolchain and with a
//! dependency's version or features: a name the binary no longer has is skipped (the linker is
//! told not to warn), so a stale list costs speed, never a build. Run this after updating the
//! toolchain or the dependencies; it prints how much of the old list it kept. The CLI's build
//! script relinks the binary when the file changes.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::process::{Command, Stdio};

use crate::bench::target_dir;
use crate::bench_compare::{FORMATS, generate};
use crate::util::{build_executable, workspace_root};

/// Where the list is written, from the workspace root (`.cargo/config.toml` names it too).
const ORDER_FILE: &str = "crates/pi-session-cli/link-order.txt";

/// Runs `cargo xtask link-order`.
pub fn run(args: &[String]) -> Result<(), String> {
    if let Some(extra) = args.first() {
        return Err(format!(
            "unexpected argument `{extra}`\nusage: cargo xtask link-order"
        ));
    }
    let valgrind = Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !valgrind.is_ok_and(|status| status.success()) {
        return Err(
            "valgrind is not installed (`apt-get install valgrind`): the list is made from \
             callgrind's record of the functions each run enters"
                .to_owned(),
        );
    }
    let root = workspace_root();
    let cli = build_executable(&root, &["--release", "-p", "pi-session-cli"], "pi-session")?;
    let dir = target_dir(&root).join("link-order");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let session = dir.join("session-5mb.jsonl");
    generate(&session, 5)?;
    let omp = root.join("fixtures/omp/tool-calls.jsonl");
    let mut runs: Vec<Vec<OsString>> = vec![
        vec!["check".into(), session.clone().into()],
        vec!["tree".into(), session.clone().into()],
        vec!["stats".into(), session.clone().into()],
        vec!["ls".into(), root.join("fixtures/pi").into()],
    ];
    for file in [&session, &omp] {
        for format in FORMATS {
            runs.push(vec![
                "context".into(),
                file.into(),
                "--format".into(),
                format.into(),
            ]);
        }
    }
    let mut entered = Vec::with_capacity(runs.len());
    for (at, args) in runs.iter().enumerate() {
        let shown = args
            .iter()
            .map(|arg| arg.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        eprintln!("xtask: callgrind: pi-session {shown}");
        // Named from `dir`, where valgrind runs: no path of the machine's to spell.
        let record = format!("callgrind-{at}.out");
        let output = Command::new("valgrind")
            .current_dir(&dir)
            .arg("--tool=callgrind")
            .arg("--demangle=no")
            .arg("--compress-strings=no")
            .arg(format!("--callgrind-out-file={record}"))
            .arg(&cli)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("could not start valgrind: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
            return Err(format!(
                "`pi-session {shown}` under callgrind failed ({}); its last lines:\n{}",
                output.status,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ));
        }
        let record = dir.join(record);
        let text = std::fs::read_to_string(&record)
            .map_err(|e| format!("cannot read {}: {e}", record.display()))?;
        entered.push(functions_entered(&text));
    }
    let order = link_order(&entered);
    let file = root.join(ORDER_FILE);
    let old = std::fs::read_to_string(&file).unwrap_or_default();
    let new: HashSet<&str> = order.iter().map(String::as_str).collect();
    let kept = old.lines().filter(|name| new.contains(name)).count();
    let mut text = order.join("\n");
    text.push('\n');
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    println!(
        "{}: {} functions ({kept} of the {} before kept); the next build of the CLI relinks it",
        file.display(),
        order.len(),
        old.lines().count()
    );
    Ok(())
}

/// The functions a callgrind record (written with `--compress-strings=no --demangle=no`) shows
/// entered, by their symbols, each once, in the order the record first names them: those it
/// names as run (`fn=`) or called (`cfn=`). Left out: code without a symbol (`0x…`), callgrind's own
/// `(below main)`; a recursion's depth (`name'2`) is the function's.
fn functions_entered(record: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    for line in record.lines() {
        let Some(name) = line
            .strip_prefix("fn=")
            .or_else(|| line.strip_prefix("cfn="))
        else {
            continue;
        };
        let name = name.split_once('\'').map_or(name, |(name, _)| name).trim();
        if name.is_empty() || name.starts_with("0x") || name.starts_with('(') {
            continue;
        }
        if seen.insert(name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// One list out of the runs' lists: every function any run entered, those more runs entered
/// first, and among as many runs by name. Not in the order the runs met them: callgrind names
/// functions in an order of its own, which changes from run to run, and the list is committed.
fn link_order(runs: &[Vec<String>]) -> Vec<String> {
    let mut entered_by: HashMap<&str, usize> = HashMap::new();
    for run in runs {
        for name in run {
            *entered_by.entry(name.as_str()).or_default() += 1;
        }
    }
    let mut names: Vec<(&str, usize)> = entered_by.into_iter().collect();
    names.sort_by_key(|&(name, runs)| (std::cmp::Reverse(runs), name));
    names.into_iter().map(|(name, _)| name.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::{functions_entered, link_order};

    #[test]
    fn a_record_gives_its_named_functions_once_in_order() {
        let record = "\
fn=main
cfn=_ZN4core3fmt5write17h0123456789abcdefE
calls=1 0
fn=(below main)
cfn=main
fn=0x0000000000457220
fn=_ZN3foo3bar17h00000000000000aaE'2
cfn=_ZN3foo3bar17h00000000000000aaE
fn=memcpy
";
        assert_eq!(
            functions_entered(record),
            [
                "main",
                "_ZN4core3fmt5write17h0123456789abcdefE",
                "_ZN3foo3bar17h00000000000000aaE",
                "memcpy",
            ]
        );
    }

    #[test]
    fn functions_more_runs_entered_come_first_then_by_name() {
        let runs = [
            vec![
                "start".to_owned(),
                "check_only".to_owned(),
                "open".to_owned(),
            ],
            vec!["start".to_owned(), "open".to_owned(), "context".to_owned()],
            vec!["context".to_owned(), "start".to_owned()],
        ];
        assert_eq!(
            link_order(&runs),
            ["start", "context", "open", "check_only"]
        );
    }
}
