//! The READMEs' lists of commands, held to the command line clap builds: the interface users
//! script against is what they document.

use clap::CommandFactory;
use std::collections::BTreeSet;

/// Every subcommand (not `help`) with the long options it takes (not `--help`), as clap
/// builds them.
fn subcommands() -> Vec<(String, BTreeSet<String>)> {
    let mut command = super::Cli::command();
    // Deferred subcommands get their arguments here.
    command.build();
    command
        .get_subcommands()
        .filter(|sub| sub.get_name() != "help")
        .map(|sub| {
            let options = sub
                .get_arguments()
                .filter_map(|arg| arg.get_long())
                .filter(|long| *long != "help")
                .map(|long| format!("--{long}"))
                .collect();
            (sub.get_name().to_owned(), options)
        })
        .collect()
}

/// A README of the workspace (`path` from its root).
fn readme(path: &str) -> String {
    let file = pi_session_test_support::workspace_root().join(path);
    std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("could not read {}: {e}", file.display()))
}

/// The README's command list (the `text` block under "The `pi-session` command") names every
/// subcommand, and each subcommand's every long option, on the subcommand's own lines or on a
/// `#` line of the block that names the subcommand (options shared by several, such as
/// `--store`).
#[test]
fn the_readme_lists_every_subcommand_and_option() {
    let readme = readme("README.md");
    let block = command_block(&readme)
        .expect("README.md has a ```text block right under \"## The `pi-session` command\"");
    let subcommands = subcommands();
    assert!(subcommands.iter().any(|(name, _)| name == "context"));
    let mut missing = Vec::new();
    for (subcommand, options) in &subcommands {
        let own = own_lines(block, subcommand);
        if own.is_empty() {
            missing.push(format!("pi-session {subcommand}: no line of its own"));
            continue;
        }
        let shared: String = block
            .lines()
            .filter(|line| line.trim_start().starts_with('#'))
            .filter(|line| line.split_whitespace().any(|word| word == subcommand))
            .collect();
        let written = long_options(&[own, shared].concat());
        for option in options.difference(&written) {
            missing.push(format!("pi-session {subcommand} {option}"));
        }
    }
    assert!(
        missing.is_empty(),
        "README.md's command list lacks {missing:#?}\n(add them to the block under \"## The \
         `pi-session` command\")"
    );
}

/// The crate's own README (what crates.io shows) has a row for every subcommand in its table.
#[test]
fn the_crate_readme_has_a_row_for_every_subcommand() {
    let readme = readme("crates/pi-session-cli/README.md");
    let subcommands = subcommands();
    assert!(subcommands.iter().any(|(name, _)| name == "context"));
    let missing: Vec<&str> = subcommands
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| {
            !readme
                .lines()
                .any(|line| line.starts_with(&format!("| `{name} ")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "crates/pi-session-cli/README.md's table has no row for {missing:?}"
    );
}

/// The ```text block right under the README's "## The `pi-session` command".
fn command_block(readme: &str) -> Option<&str> {
    let section = readme.split_once("## The `pi-session` command\n")?.1;
    let body = section.trim_start().strip_prefix("```text\n")?;
    Some(body.split_once("\n```")?.0)
}

/// The block's lines of `subcommand`: each that starts `pi-session SUBCOMMAND`, and the indented
/// lines that continue it.
fn own_lines(block: &str, subcommand: &str) -> String {
    let mut own = String::new();
    let mut in_own = false;
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix("pi-session ") {
            in_own = rest.split_whitespace().next() == Some(subcommand);
        } else if !line.starts_with(' ') {
            in_own = false;
        }
        if in_own {
            own.push_str(line);
            own.push('\n');
        }
    }
    own
}

/// The `--name` options written in `text` (`[--json]`, `--leaf=ID|null` and `(--user` count).
fn long_options(text: &str) -> BTreeSet<String> {
    text.split_whitespace()
        .filter_map(|word| {
            let at = word.find("--")?;
            let name: String = word[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (!name.is_empty()).then(|| format!("--{name}"))
        })
        .collect()
}
