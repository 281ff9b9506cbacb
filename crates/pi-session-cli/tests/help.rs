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

/// The README's command list (the `text` block under "The `pi-session` command") is the
/// interface users script against: it names every subcommand `--help` lists, and each
/// subcommand's every long option, on the subcommand's own lines or on a `#` line of the block
/// that names the subcommand (options shared by several, such as `--store`).
#[test]
fn the_readme_lists_every_subcommand_and_option() {
    let path = crate::common::root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let block = command_block(&readme)
        .expect("README.md has a ```text block right under \"## The `pi-session` command\"");
    let root = run(&["--help"]);
    assert_eq!(root.code, 0, "{root}");
    let subcommands = listed_subcommands(&root.stdout);
    assert!(subcommands.contains(&"context"), "{}", root.stdout);
    let mut missing = Vec::new();
    for subcommand in subcommands {
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
        let written = [own, shared].concat();
        let written = long_options(written.split_whitespace());
        let help = run(&[subcommand, "--help"]);
        assert_eq!(help.code, 0, "{help}");
        for option in declared_options(&help.stdout) {
            if !written.contains(&option) {
                missing.push(format!("pi-session {subcommand} {option}"));
            }
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
    let path = crate::common::root().join("crates/pi-session-cli/README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let root = run(&["--help"]);
    let subcommands = listed_subcommands(&root.stdout);
    assert!(subcommands.contains(&"context"), "{}", root.stdout);
    let missing: Vec<&str> = subcommands
        .into_iter()
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

/// The subcommands of the root `--help`'s "Commands:" list (not `help`).
fn listed_subcommands(help: &str) -> Vec<&str> {
    let Some((_, list)) = help.split_once("Commands:\n") else {
        return Vec::new();
    };
    list.lines()
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect()
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

/// The long options a `--help` declares (the `--name` that starts an option's line, indented
/// at most six spaces: a description's wrapped lines are indented more), `--help` and
/// `--version` aside.
fn declared_options(help: &str) -> std::collections::BTreeSet<String> {
    help.lines()
        .filter_map(|line| {
            let trimmed = line.trim_start();
            if line.len() - trimmed.len() > 6 {
                return None;
            }
            let line = trimmed;
            let line = match line.as_bytes() {
                [b'-', short, b',', b' ', ..] if short.is_ascii_alphanumeric() => &line[4..],
                _ => line,
            };
            long_options(line.split_whitespace().take(1)).pop_first()
        })
        .filter(|option| option != "--help" && option != "--version")
        .collect()
}

/// The `--name` options among `words` (`[--json]`, `--leaf=ID|null` and `(--user` count).
fn long_options<'w>(words: impl Iterator<Item = &'w str>) -> std::collections::BTreeSet<String> {
    words
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
