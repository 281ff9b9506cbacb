//! `--help` for the command and every subcommand.

use crate::common::run;

#[test]
fn every_subcommand_has_help() {
    for command in [
        "", "context", "tree", "cat", "check", "ls", "stats", "repair", "append", "fork",
        "migrate", "import", "export", "serve", "usage", "grep",
    ] {
        let args: Vec<&str> = [command, "--help"]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let out = run(&args);
        assert_eq!(out.code, 0, "{out}");
        let name = if command.is_empty() {
            "help_root".to_owned()
        } else {
            format!("help_{command}")
        };
        insta::assert_snapshot!(name, out.stdout);
    }
}
