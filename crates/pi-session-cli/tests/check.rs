//! `pi-session check`: diagnostics as `file:line:offset: message`, exit 0/1/2.

use crate::common::{json, run, snapshot_name};

#[test]
fn exit_codes_say_clean_damaged_unreadable() {
    let cases: [(&[&str], i32); 6] = [
        (&["check", "fixtures/cli/mixed/good.jsonl"], 0),
        (&["check", "fixtures/pi/v2-format.jsonl"], 0), // migrated in memory: a note, not damage
        (&["check", "fixtures/invalid/torn-last-line.jsonl"], 1),
        (&["check", "fixtures/cli/mixed"], 1),
        (
            &[
                "check",
                "fixtures/cli/mixed/good.jsonl",
                "fixtures/cli/nothing-here.jsonl",
            ],
            2,
        ),
        (&["check", "fixtures/omp/parent-cycle.jsonl"], 1),
    ];
    for (args, code) in cases {
        let out = run(args);
        assert_eq!(out.code, code, "{out}");
        assert!(
            out.stdout.lines().last().unwrap().starts_with("checked "),
            "{out}"
        );
    }
}

#[test]
fn outputs() {
    let cases: [&[&str]; 6] = [
        &["check", "fixtures/invalid"],
        &["check", "fixtures/cli/mixed"],
        &[
            "check",
            "fixtures/cli/mixed/binary.jsonl",
            "fixtures/cli/mixed/empty.jsonl",
            "fixtures/cli/mixed/readme.txt",
        ],
        &[
            "check",
            "fixtures/omp/parent-cycle.jsonl",
            "fixtures/cli/absent",
        ],
        &[
            "check",
            "--json",
            "fixtures/cli/mixed",
            "fixtures/cli/absent",
        ],
        &["check"],
    ];
    for args in cases {
        insta::assert_snapshot!(snapshot_name(args), run(args).to_string());
    }
}

#[test]
fn every_recorded_fixture_is_checked() {
    for folder in ["fixtures/pi", "fixtures/omp"] {
        let out = run(&["check", "--json", folder]);
        assert!(out.code == 0 || out.code == 1, "{out}");
        let report = json(&out);
        let files = report["files"].as_array().unwrap();
        assert!(files.len() >= 30, "{folder}: {}", files.len());
        assert_eq!(report["unreadable"], 0);
        // Every damaged file says why; every clean one has at most notes.
        for file in files {
            let severities: Vec<&str> = file["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["severity"].as_str().unwrap())
                .collect();
            let damaged = file["status"] == "damaged";
            assert_eq!(damaged, severities.iter().any(|s| *s != "info"), "{file}");
        }
    }
}

/// A progress bar shows on a terminal when many files are walked, and never otherwise.
#[test]
fn progress_bar_only_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..25 {
        std::fs::copy(
            crate::common::root().join("fixtures/cli/mixed/good.jsonl"),
            dir.path().join(format!("s{i:02}.jsonl")),
        )
        .unwrap();
    }
    let folder = dir.path().to_string_lossy().into_owned();
    let piped = run(&["check", &folder]);
    assert_eq!(piped.code, 0, "{piped}");
    assert!(
        piped.stderr.is_empty(),
        "no bar when stderr is not a terminal: {piped}"
    );
    assert!(
        piped
            .stdout
            .ends_with("checked 25 files: 25 clean, 0 damaged, 0 unreadable\n"),
        "{piped}"
    );

    // `script` (util-linux) runs the command on a pseudo-terminal.
    let Ok(script) = which("script") else {
        println!("SKIP: no `script` command to make a terminal");
        return;
    };
    let binary = assert_cmd::cargo::cargo_bin("pi-session");
    let report = dir.path().join("report.txt");
    let command = format!("{} check {folder} > {}", binary.display(), report.display());
    let terminal = std::process::Command::new(script)
        .args(["-qec", &command, "/dev/null"])
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&terminal.stdout);
    assert!(
        screen.contains("checking [") && screen.contains("/25"),
        "{screen}"
    );
    let stdout = std::fs::read_to_string(report).unwrap();
    assert!(
        stdout.ends_with("checked 25 files: 25 clean, 0 damaged, 0 unreadable\n"),
        "{stdout}"
    );
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

#[test]
fn lone_surrogates_written_by_pi_and_omp_are_a_note_not_damage() {
    // The real pi and omp wrote these files; their strings hold lone UTF-16 surrogates
    // (`"\ud83d"`), which is what JavaScript writes for a string cut inside a character.
    for file in [
        "fixtures/pi/unicode.jsonl",
        "fixtures/pi16/unicode.jsonl",
        "fixtures/omp/unicode.jsonl",
    ] {
        let out = run(&["check", file]);
        assert_eq!(out.code, 0, "{out}");
        assert!(out.stdout.contains("unpaired surrogate escape"), "{out}");
        let out = run(&["check", "--json", file]);
        assert_eq!(out.code, 0, "{out}");
        let report = json(&out).to_string();
        assert!(
            report.contains(r#""kind":"lone_surrogate""#)
                && report.contains(r#""severity":"info""#),
            "{report}"
        );
    }
}
