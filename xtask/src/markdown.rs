//! The Markdown part of `cargo xtask test`'s tidy checks: in every Markdown file of the
//! repository, each code block is closed, and each relative link names a file that exists.
//!
//! A closing fence carries no info string (CommonMark): a fence written as `` ```text `` where a
//! block should end opens nothing and closes nothing, so the block runs on and the prose after it
//! renders as code. That is how the README's command list once lost two commands and turned
//! three paragraphs into code without anyone noticing; this check reports such a fence, and a
//! block left open at the end of a file.

use std::path::{Path, PathBuf};

/// Checks every Markdown file under `root` (see the module): `Err` names each problem on a line
/// of its own, as `file:line: what`.
pub fn check(root: &Path) -> Result<(), String> {
    let mut problems = Vec::new();
    for file in markdown_files(root)? {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("could not read {}: {e}", file.display()))?;
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let folder = file.parent().unwrap_or(root);
        for problem in fence_problems(&text)
            .into_iter()
            .chain(link_problems(&text, folder))
        {
            problems.push(format!("{shown}:{problem}"));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "Markdown: {} problem(s); fix them in the files named:\n{}",
        problems.len(),
        problems.join("\n")
    ))
}

/// The folders never searched for Markdown: build output, installed packages, git's own.
const SKIPPED_FOLDERS: [&str; 3] = ["target", "node_modules", ".git"];

/// The `.md` files under `root`, sorted, outside [`SKIPPED_FOLDERS`] and hidden folders.
fn markdown_files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let enter = |folder: &Path| {
        let name = folder.file_name().unwrap_or_default().to_string_lossy();
        !name.starts_with('.') && !SKIPPED_FOLDERS.contains(&name.as_ref())
    };
    Ok(crate::util::files_below(root, enter)?
        .into_iter()
        .filter(|file| file.extension().is_some_and(|ext| ext == "md"))
        .map(|file| root.join(file))
        .collect())
}

/// A code fence line: its character (`` ` `` or `~`), how many, and what follows them.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start_matches(' ');
    // Four spaces of indentation make an indented code line, not a fence.
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let mark = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let count = trimmed.chars().take_while(|&c| c == mark).count();
    (count >= 3).then(|| (mark, count, &trimmed[count..]))
}

/// A walk over a text's code blocks, a line at a time: the one place that decides which lines
/// are code, for the fence check and the link check alike.
#[derive(Default)]
struct Blocks {
    /// The fence that opened the block the walk is in: its line, character and length.
    open: Option<(usize, char, usize)>,
}

impl Blocks {
    /// Steps over line `number` (`line`): whether it is prose (not in a block, not a fence), and
    /// the problem of a fence with an info string where the open block's closing fence could be.
    fn step(&mut self, number: usize, line: &str) -> (bool, Option<String>) {
        let Some((mark, count, rest)) = fence(line) else {
            return (self.open.is_none(), None);
        };
        match self.open {
            None => self.open = Some((number, mark, count)),
            Some((opened, open_mark, open_count)) if mark == open_mark && count >= open_count => {
                if rest.trim().is_empty() {
                    self.open = None;
                } else {
                    return (
                        false,
                        Some(format!(
                            "{number}: a fence with an info string (`{}`) inside the code block \
                             opened at line {opened}: it does not close the block (a closing \
                             fence has none), so the text after it is code; close the block \
                             before it, or drop a stray fence above it",
                            rest.trim()
                        )),
                    );
                }
            }
            Some(_) => {}
        }
        (false, None)
    }
}

/// The fence problems of a Markdown text, each as `line: what` (lines counted from 1).
fn fence_problems(text: &str) -> Vec<String> {
    let mut blocks = Blocks::default();
    let mut problems: Vec<String> = text
        .lines()
        .enumerate()
        .filter_map(|(at, line)| blocks.step(at + 1, line).1)
        .collect();
    if let Some((opened, ..)) = blocks.open {
        problems.push(format!(
            "{opened}: this code block is never closed: the rest of the file renders as code"
        ));
    }
    problems
}

/// The relative links of a Markdown text (`[text](target)`, images too) whose file does not
/// exist under `folder`, each as `line: what`. Links inside code blocks are not links; web
/// addresses, `mailto:` and links within the page (`#…`) are not checked, nor is what follows a
/// `#` in a file's link.
fn link_problems(text: &str, folder: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let mut blocks = Blocks::default();
    for (at, line) in text.lines().enumerate() {
        if !blocks.step(at + 1, line).0 {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else { break };
            let target = &after[..end];
            rest = &after[end..];
            let file = target.split('#').next().unwrap_or_default();
            let external = target.contains("://") || target.starts_with("mailto:");
            if file.is_empty() || external || file.contains(char::is_whitespace) {
                continue;
            }
            if !folder.join(file).exists() {
                problems.push(format!(
                    "{}: the link `{target}` names a file that does not exist (relative to {})",
                    at + 1,
                    folder.display()
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_with_an_info_string_where_a_block_should_end_is_reported() {
        // The README's old mistake: a stray fence after a closed block opens another one, which
        // the next block's opening fence (with its info string) cannot close.
        let text = "```text\ncommands\n```\n\nprose\n```\n\nmore prose\n```text\n$ example\n```\n";
        let problems = fence_problems(text);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("9: a fence with an info string (`text`)"),
            "{problems:?}"
        );
        assert!(problems[0].contains("opened at line 6"), "{problems:?}");
    }

    #[test]
    fn a_block_left_open_is_reported_where_it_opens() {
        let problems = fence_problems("prose\n\n~~~sh\nls\n");
        assert_eq!(
            problems,
            ["3: this code block is never closed: the rest of the file renders as code"]
        );
    }

    #[test]
    fn closed_blocks_and_fences_shown_inside_longer_ones_pass() {
        let text = "```rust,ignore\nlet a = 1;\n```\n\n````markdown\n```rust\nx\n```\n````\n\n    ```indented\n~~~\n```\n~~~\n";
        assert_eq!(fence_problems(text), Vec::<String>::new());
    }

    #[test]
    fn a_relative_link_to_a_missing_file_is_reported_and_others_pass() {
        let scratch = tempfile::tempdir().unwrap();
        let folder = scratch.path();
        std::fs::create_dir_all(folder.join("docs")).unwrap();
        std::fs::write(folder.join("docs/there.md"), "x").unwrap();
        let text = "[here](docs/there.md) [part](docs/there.md#a) [web](https://example.com/x) \
                    [top](#links)\n[gone](docs/gone.md) ![pic](img/none.png)\n```\n[code](nowhere.md)\n```\n";
        let problems = link_problems(text, folder);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems[0].starts_with("2: the link `docs/gone.md`"),
            "{problems:?}"
        );
        assert!(
            problems[1].starts_with("2: the link `img/none.png`"),
            "{problems:?}"
        );
    }

    #[test]
    fn the_repository_s_markdown_passes() {
        // The check `cargo xtask test` runs, on the files as they are.
        let root = crate::util::workspace_root();
        if let Err(problems) = check(&root) {
            panic!("{problems}");
        }
    }
}
