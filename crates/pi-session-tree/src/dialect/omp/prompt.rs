//! omp's prompt rendering and its post-render text normalisation, the one
//! place they live. Each template lives with the stage that sends it: the
//! context notes `buildSessionContext` prepends in [`super::notes`], the
//! summary and steering templates `convertToLlm` sends in the context crate's
//! `dialect::omp::prompt`; both render them with [`render`].
//!
//! omp renders its prompt templates with Handlebars (`noEscape`) and then
//! runs `format(text, {renderPhase: "post-render"})` from pi-utils
//! `prompt.ts` over the WHOLE result, the inserted text included. This module
//! ports that normalisation (the options that are off by default left out).

use pi_session_types::js;

/// Renders one of omp's templates: replaces the single `{{name}}`
/// placeholder verbatim (Handlebars with `noEscape`), then normalises the
/// whole text as omp's post-render `format` does.
pub fn render(template: &str, name: &str, value: &str) -> String {
    let placeholder = format!("{{{{{name}}}}}");
    format_post_render(&template.replacen(&placeholder, value, 1))
}

/// omp's `format(content, {renderPhase: "post-render"})`.
///
/// Line by line on `\n`: trailing whitespace is trimmed; fenced code blocks
/// (```` ``` ```` or `~~~`) are kept as they are; outside them, markdown
/// table rows are compacted, runs of two or more blank lines vanish entirely,
/// a single blank line survives only between two non-blank lines (and not at
/// the start), and blank lines before a closing tag line (`</name>`) are
/// removed. Trailing blank lines are removed; there is no final newline.
/// The indentation before a fence, tag or table row is spaces and tabs, or
/// all leading whitespace when the first other character is not ASCII (omp's
/// own scan).
///
/// ```
/// use pi_session_tree::dialect::omp::prompt::format_post_render;
/// assert_eq!(format_post_render("a  \n\n\nb\n\n</x>\n"), "a\nb\n</x>");
/// ```
pub fn format_post_render(content: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    let mut result: Vec<String> = Vec::with_capacity(lines.len());
    let mut in_code_block = false;
    let mut i = 0;
    while i < lines.len() {
        let mut line = js::trim_end(lines[i]).to_owned();
        let indent = indent_width(&line);
        let rest = &line[indent..];
        if rest.starts_with("```") || rest.starts_with("~~~") {
            in_code_block = !in_code_block;
            result.push(line);
            i += 1;
            continue;
        }
        if in_code_block {
            result.push(line);
            i += 1;
            continue;
        }
        let mut is_closing_line = false;
        if rest.starts_with("</") {
            is_closing_line = is_closing_tag(rest);
        } else if rest.starts_with('|') {
            if is_table_separator(rest) {
                line = format!("{}{}", &line[..indent], compact_table_separator(rest));
            } else if is_table_row(rest) {
                line = format!("{}{}", &line[..indent], compact_table_row(rest));
            }
        }
        if line.is_empty() {
            let next_is_blank = lines.get(i + 1).is_none_or(|next| is_blank(next));
            if next_is_blank {
                while result.last().is_some_and(String::is_empty) {
                    result.pop();
                }
                let mut j = i + 1;
                while j < lines.len() && is_blank(lines[j]) {
                    j += 1;
                }
                i = j;
                continue;
            }
            if result.last().is_none_or(String::is_empty) {
                i += 1;
                continue;
            }
        }
        if is_closing_line {
            while result.last().is_some_and(String::is_empty) {
                result.pop();
            }
        }
        result.push(line);
        i += 1;
    }
    while result.last().is_some_and(String::is_empty) {
        result.pop();
    }
    result.join("\n")
}

/// Width of the leading indentation as omp measures it: spaces and tabs, or,
/// when the first other character is non-ASCII, all leading JS whitespace.
fn indent_width(line: &str) -> usize {
    let simple = line.len() - line.trim_start_matches([' ', '\t']).len();
    match line[simple..].chars().next() {
        Some(c) if !c.is_ascii() => line.len() - js::trim_start(line).len(),
        _ => simple,
    }
}

fn is_blank(line: &str) -> bool {
    line.chars().all(js::is_js_whitespace)
}

fn is_closing_tag(s: &str) -> bool {
    let inner = s.strip_prefix("</").and_then(|rest| rest.strip_suffix('>'));
    inner.is_some_and(|name| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
    })
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn is_table_row(s: &str) -> bool {
    s.len() >= 2 && s.starts_with('|') && s.ends_with('|') && !s.chars().any(is_line_terminator)
}

fn is_table_separator(s: &str) -> bool {
    let Some(inner) = s.strip_prefix('|').and_then(|rest| rest.strip_suffix('|')) else {
        return false;
    };
    !inner.is_empty()
        && inner
            .chars()
            .all(|c| c == '-' || c == ':' || c == '|' || js::is_js_whitespace(c))
}

fn compact_table_row(s: &str) -> String {
    s.split('|').map(js::trim).collect::<Vec<_>>().join("|")
}

fn compact_table_separator(s: &str) -> String {
    let cells: Vec<&str> = s
        .split('|')
        .filter(|cell| !js::trim(cell).is_empty())
        .map(|cell| {
            let trimmed = js::trim(cell);
            match (trimmed.starts_with(':'), trimmed.ends_with(':')) {
                (true, true) => ":---:",
                (true, false) => ":---",
                (false, true) => "---:",
                (false, false) => "---",
            }
        })
        .collect();
    format!("|{}|", cells.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_summary_renders_like_the_spec_example() {
        assert_eq!(
            render(
                "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\n{{summary}}\n</summary>\n",
                "summary",
                "S"
            ),
            "Prior model work/tool state available.\nMUST build on prior work; NEVER duplicate prior work.\n\n<summary>\nS\n</summary>"
        );
    }

    #[test]
    fn blank_runs_vanish_and_single_blanks_stay() {
        assert_eq!(format_post_render("a\n\nb"), "a\n\nb");
        assert_eq!(format_post_render("a\n\n\nb"), "a\nb");
        assert_eq!(format_post_render("\na"), "a");
        assert_eq!(format_post_render("a\n \t\n  \nb"), "a\nb");
    }

    #[test]
    fn closing_tag_eats_blank_lines_before_it() {
        assert_eq!(format_post_render("x\n\n</summary>"), "x\n</summary>");
        assert_eq!(format_post_render("x\n\n</Summary>"), "x\n\n</Summary>");
    }

    #[test]
    fn code_blocks_keep_blank_lines_but_not_trailing_spaces() {
        assert_eq!(
            format_post_render("```\na  \n\n\nb\n```"),
            "```\na\n\n\nb\n```"
        );
    }

    #[test]
    fn tables_are_compacted() {
        assert_eq!(
            format_post_render("| a | b |\n| :-- | --: |"),
            "|a|b|\n|:---|---:|"
        );
    }
    #[test]
    fn formatter_collapses_blank_runs_and_compacts_tables() {
        let input = "\n\n<a>\nx   \n\n\n|  a | b  |\n| --- |:-:|\n\n</a>\n\n";
        assert_eq!(
            format_post_render(input),
            "<a>\nx\n|a|b|\n|---|:---:|\n</a>"
        );
    }

    #[test]
    fn formatter_keeps_code_fences() {
        let input = "```\n|  a |\n\n\n```\nend";
        assert_eq!(format_post_render(input), "```\n|  a |\n\n\n```\nend");
    }

    #[test]
    fn indentation_is_measured_like_omp() {
        // omp skips spaces and tabs, and all JS whitespace only before a
        // non-ASCII character: a vertical tab before a fence is not indentation
        // (bun, pi-utils 18.2.3 `format`), a no-break space is.
        assert_eq!(format_post_render("\u{b}```\n\n\n```"), "\u{b}```\n```");
        assert_eq!(
            format_post_render("\u{a0}```\n\n\n```"),
            "\u{a0}```\n\n\n```"
        );
        assert_eq!(format_post_render(" \t| a |"), " \t|a|");
    }
}
