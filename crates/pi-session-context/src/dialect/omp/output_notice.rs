//! omp's `formatOutputNotice(meta)` (pi-coding-agent `tools/output-meta.ts`),
//! the bracketed notice omp appends to a `!cmd`/`$code` run's text.
//!
//! Ported: truncation notices (head/tail ranges, partial lines, middle
//! elision, byte limits, continuation offsets, artifact references), the
//! artifact-error notice, the limit notices and the column-truncation notice.
//! LSP diagnostics are grouped by file in omp's prefix-folded path tree.
//!
//! `meta` is omp's `OutputMeta` record (truncation, limits, diagnostics …), read through its
//! views (`pi_session_types::view::{OutputMetaRef, TruncationRef, …}`).

use serde_json::{Map, Value};

use pi_session_types::view::{
    DiagnosticsRef, LimitRef, OutputMetaRef, RangeRef, SourceRef, TruncationRef,
};

use pi_session_types::js::{
    format_f64, is_js_whitespace, is_nullish, string_of, to_fixed, to_locale_string, truthy,
};

/// The notice for `meta` (`""` when there is nothing to say).
pub fn format_output_notice(meta: Option<&Value>) -> String {
    let Some(meta) = meta.filter(|m| truthy(Some(m))).and_then(Value::as_object) else {
        return String::new();
    };
    let meta = OutputMetaRef::new(meta);
    let mut parts = Vec::new();
    if let Some(truncation) = meta.truncation().and_then(Value::as_object) {
        parts.push(truncation_notice(truncation, meta.source()));
    }
    if truthy(meta.artifact_error()) {
        parts.push(format!(
            "Full output was not saved completely (artifact {} failed)",
            string_of(meta.artifact_error())
        ));
    }
    let limit = |key: &str| {
        meta.limit(key)
            .filter(|v| truthy(Some(v)))
            .map(LimitRef::new)
    };
    for (key, noun) in [
        ("matchLimit", "matches"),
        ("resultLimit", "results"),
        ("headLimit", "results"),
    ] {
        if let Some(l) = limit(key) {
            parts.push(format!(
                "{} {noun} limit reached. Use limit={} for more",
                string_of(l.reached()),
                string_of(l.suggestion())
            ));
        }
    }
    if let Some(c) = limit("columnTruncated") {
        let unit = c.unit().filter(|u| !u.is_null());
        let mut notice = format!(
            "Some lines truncated to {} {}",
            string_of(c.max_column()),
            unit.map_or_else(|| "chars".to_owned(), |u| string_of(Some(u)))
        );
        if !is_nullish(c.artifact_id()) {
            notice += &format!(
                ". Read artifact://{} for full output",
                string_of(c.artifact_id())
            );
        }
        parts.push(notice);
    }
    let mut out = if parts.is_empty() {
        String::new()
    } else {
        format!("\n\n[{}]", parts.join(". "))
    };
    if let Some(d) = meta.diagnostics().and_then(Value::as_object)
        && let Some(Value::Array(messages)) = DiagnosticsRef::new(d).messages()
        && !messages.is_empty()
    {
        out += &format!(
            "\n\nLSP Diagnostics ({}):\n{}",
            string_of(DiagnosticsRef::new(d).summary()),
            grouped_diagnostics(messages)
        );
    }
    out
}

/// A number field as JavaScript's arithmetic sees it (`NaN` when missing or not a number).
fn number(field: Option<&Value>) -> f64 {
    field.and_then(Value::as_f64).unwrap_or(f64::NAN)
}

fn range(value: Option<&Value>) -> Option<(String, String, f64, f64)> {
    let r = RangeRef::new(value?.as_object()?);
    Some((
        string_of(r.start()),
        string_of(r.end()),
        number(r.start()),
        number(r.end()),
    ))
}

fn truncation_notice(t: &Map<String, Value>, source: Option<&Value>) -> String {
    let t = TruncationRef::new(t);
    let artifact = if is_nullish(t.artifact_id()) {
        None
    } else if SourceRef::new(source).kind() == Some("report") {
        Some(format!(
            "Read artifact://{} for full report ({})",
            string_of(t.artifact_id()),
            string_of(SourceRef::new(source).value())
        ))
    } else {
        Some(format!(
            "Read artifact://{} for full output",
            string_of(t.artifact_id())
        ))
    };
    let total_lines = number(t.total_lines());
    let output_lines = number(t.output_lines());
    let mut notice;
    if t.direction().and_then(Value::as_str) == Some("middle") {
        let total_bytes = number(t.total_bytes());
        let output_bytes = number(t.output_bytes());
        let elided_bytes = match t.elided_bytes() {
            Some(v) if !v.is_null() => v.as_f64().unwrap_or(f64::NAN),
            _ => js_max0(total_bytes - output_bytes),
        };
        let elided_lines = match t.elided_lines() {
            Some(v) if !v.is_null() => v.as_f64().unwrap_or(f64::NAN),
            _ => js_max0(total_lines - output_lines),
        };
        let head = range(t.head_range()).map(|(s, e, _, _)| format!("lines {s}-{e}"));
        let tail = range(t.tail_range()).map(|(s, e, _, _)| format!("{s}-{e}"));
        notice = match (head, tail) {
            (Some(head), Some(tail)) => format!(
                "Showing {head} and {tail} of {}; {} middle line{} ({}) elided",
                string_of(t.total_lines()),
                to_locale_string(elided_lines),
                if elided_lines == 1.0 { "" } else { "s" },
                format_bytes(elided_bytes)
            ),
            _ if elided_bytes > 0.0 => format!(
                "Showing head and tail bytes of {} line{}; {} elided",
                to_locale_string(total_lines),
                if total_lines == 1.0 { "" } else { "s" },
                format_bytes(elided_bytes)
            ),
            _ => format!(
                "Showing {} of {} lines; middle elided",
                format_f64(output_lines.min(total_lines)),
                string_of(t.total_lines())
            ),
        };
        if !is_nullish(t.next_offset()) {
            notice += &format!(". Use :{} to continue", string_of(t.next_offset()));
        }
        if let Some(a) = artifact {
            notice += &format!(". {a}");
        }
        return notice;
    }
    if truthy(t.partial_line()) {
        let line = RangeRef::new(t.shown_range())
            .start()
            .filter(|v| !v.is_null())
            .map_or_else(|| "1".to_owned(), |v| string_of(Some(v)));
        notice = format!(
            "Showing line {line} (partial, {} of {}) of {}",
            format_bytes(number(t.output_bytes())),
            format_bytes(number(t.total_bytes())),
            string_of(t.total_lines())
        );
        if let Some(a) = artifact {
            notice += &format!(". {a}");
        }
        return notice;
    }
    notice = match range(t.shown_range()) {
        Some((s, e, start, end)) if end >= start => {
            format!("Showing lines {s}-{e} of {}", string_of(t.total_lines()))
        }
        _ => format!(
            "Showing {} of {} lines",
            string_of(t.output_lines()),
            string_of(t.total_lines())
        ),
    };
    if t.truncated_by().and_then(Value::as_str) == Some("bytes") {
        let max = match t.max_bytes() {
            Some(v) if !v.is_null() => v.as_f64().unwrap_or(f64::NAN),
            _ => number(t.output_bytes()),
        };
        notice += &format!(" ({} limit)", format_bytes(max));
    }
    if !is_nullish(t.next_offset()) {
        notice += &format!(". Use :{} to continue", string_of(t.next_offset()));
    }
    if let Some(a) = artifact {
        notice += &format!(". {a}");
    }
    notice
}

fn js_max0(x: f64) -> f64 {
    if x.is_nan() { f64::NAN } else { x.max(0.0) }
}

/// pi-utils `formatBytes`.
fn format_bytes(bytes: f64) -> String {
    const KB: f64 = 1024.0;
    if bytes < KB {
        format!("{}B", format_f64(bytes))
    } else if bytes < KB * KB {
        format!("{}KB", to_fixed(bytes / KB, 1))
    } else if bytes < KB * KB * KB {
        format!("{}MB", to_fixed(bytes / (KB * KB), 1))
    } else {
        format!("{}GB", to_fixed(bytes / (KB * KB * KB), 1))
    }
}

/// `formatGroupedDiagnosticMessages`: messages `path:line:col rest` grouped
/// under their file in a prefix-folded path tree (pi-utils `path-tree.ts`
/// via `formatGroupedFiles`); other messages listed after a blank line.
fn grouped_diagnostics(messages: &[Value]) -> String {
    let mut by_file: Vec<(String, Vec<String>)> = Vec::new();
    let mut ungrouped: Vec<String> = Vec::new();
    for message in messages {
        let text = string_of(Some(message));
        match split_diagnostic(&text) {
            Some((path, rest)) => {
                let path = path.replace('\\', "/");
                let line = format!("  {rest}");
                match by_file.iter_mut().find(|(p, _)| *p == path) {
                    Some((_, lines)) => lines.push(line),
                    None => by_file.push((path, vec![line])),
                }
            }
            None => ungrouped.push(text),
        }
    }
    if by_file.is_empty() {
        return ungrouped.join("\n");
    }
    let tree = PathTree::build(by_file.iter().map(|(path, _)| path.as_str()));
    let mut lines: Vec<String> = Vec::new();
    let mut emitted = false;
    tree.walk(0, &mut |event| {
        if emitted && (event.depth == 0 || event.is_dir) {
            lines.push(String::new());
        }
        emitted = true;
        let hashes = "#".repeat(event.depth + 1);
        if event.is_dir {
            lines.push(format!("{hashes} {}/", event.name));
            return;
        }
        lines.push(format!("{hashes} {}", event.name));
        if let Some((_, file_lines)) = by_file.iter().find(|(p, _)| *p == event.key) {
            lines.extend(file_lines.iter().cloned());
        }
    });
    if !ungrouped.is_empty() {
        lines.push(String::new());
        lines.extend(ungrouped);
    }
    lines.join("\n")
}

/// pi-utils `PathTreeNode`: files and subdirectories in first-seen order.
#[derive(Default)]
struct PathTree {
    files: Vec<(String, String)>,
    dirs: Vec<(String, PathTree)>,
}

struct TreeEvent<'a> {
    is_dir: bool,
    depth: usize,
    name: String,
    key: &'a str,
}

impl PathTree {
    /// `buildPathTree` for file paths (`isDir` false, key = path).
    fn build<'a>(paths: impl Iterator<Item = &'a str>) -> Self {
        let mut root = PathTree::default();
        for path in paths {
            let normalized = path.replace('\\', "/");
            if is_url_like(&normalized) {
                root.add_file(&normalized, path);
                continue;
            }
            let trimmed = normalized.strip_suffix('/').unwrap_or(&normalized);
            if trimmed.is_empty() {
                continue;
            }
            let segments: Vec<&str> = trimmed.split('/').collect();
            let mut node = &mut root;
            for segment in &segments[..segments.len() - 1] {
                let index = match node.dirs.iter().position(|(name, _)| name == segment) {
                    Some(index) => index,
                    None => {
                        node.dirs.push(((*segment).to_owned(), PathTree::default()));
                        node.dirs.len() - 1
                    }
                };
                node = &mut node.dirs[index].1;
            }
            node.add_file(segments[segments.len() - 1], path);
        }
        root
    }

    fn add_file(&mut self, name: &str, key: &str) {
        if !self.files.iter().any(|(n, _)| n == name) {
            self.files.push((name.to_owned(), key.to_owned()));
        }
    }

    /// `walkPathTree`: a node's files, then its subdirectories with
    /// single-child chains folded into one name.
    fn walk<'a>(&'a self, depth: usize, emit: &mut dyn FnMut(TreeEvent<'a>)) {
        for (name, key) in &self.files {
            emit(TreeEvent {
                is_dir: false,
                depth,
                name: name.clone(),
                key,
            });
        }
        for (name, child) in &self.dirs {
            let mut node = child;
            let mut parts = vec![name.as_str()];
            while node.files.is_empty() && node.dirs.len() == 1 {
                parts.push(node.dirs[0].0.as_str());
                node = &node.dirs[0].1;
            }
            emit(TreeEvent {
                is_dir: true,
                depth,
                name: parts.join("/"),
                key: "",
            });
            node.walk(depth + 1, emit);
        }
    }
}

/// `/^[a-z][a-z0-9+.-]*:\/\//i`.
fn is_url_like(path: &str) -> bool {
    let Some((scheme, _)) = path.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

/// `/^(.+?):(\d+:\d+\s+.*)$/`.
fn split_diagnostic(text: &str) -> Option<(&str, &str)> {
    if text.contains(['\n', '\r', '\u{2028}', '\u{2029}']) {
        return None;
    }
    for (i, _) in text.match_indices(':') {
        if i == 0 {
            continue;
        }
        let rest = &text[i + 1..];
        if is_position_then_space(rest) {
            return Some((&text[..i], rest));
        }
    }
    None
}

fn is_position_then_space(s: &str) -> bool {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let line = digits(s);
    if line == 0 || s.as_bytes().get(line) != Some(&b':') {
        return false;
    }
    let rest = &s[line + 1..];
    let col = digits(rest);
    col > 0 && rest[col..].starts_with(is_js_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_meta_gives_nothing() {
        assert_eq!(format_output_notice(None), "");
    }

    #[test]
    fn head_truncation_by_bytes_with_artifact() {
        let meta = json!({"truncation": {"direction":"head","truncatedBy":"bytes","totalLines":900,
            "totalBytes":200000,"outputLines":120,"outputBytes":51200,"maxBytes":51200,
            "shownRange":{"start":1,"end":120},"artifactId":"7","nextOffset":121}});
        assert_eq!(
            format_output_notice(Some(&meta)),
            "\n\n[Showing lines 1-120 of 900 (50.0KB limit). Use :121 to continue. Read artifact://7 for full output]"
        );
    }

    #[test]
    fn locale_groups_thousands() {
        assert_eq!(to_locale_string(1234567.0), "1,234,567");
        assert_eq!(to_locale_string(12.5), "12.5");
    }
}
