//! The golden report: a table of scenario × check, the failures with their differences, and the
//! total line `golden: N passed, M failed`.

use std::fmt::Write as _;

/// What one check instance found.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Our result equals the recording.
    Pass,
    /// It does not; the text says how (a rendered diff).
    Fail(String),
    /// Not checked, and why (printed).
    Skip(String),
}

/// One row of the table: a scenario (or corpus file) and its checks in the order they ran.
#[derive(Debug)]
pub struct Row {
    /// The section, e.g. `omp`, `pi16`, `ours/pi/omp`, `corpus`.
    pub group: String,
    /// The scenario or file name.
    pub name: String,
    cells: Vec<Cell>,
}

#[derive(Debug, Default)]
struct Cell {
    check: &'static str,
    passed: usize,
    failed: usize,
    skipped: usize,
}

impl Row {
    /// An empty row.
    pub fn new(group: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            name: name.into(),
            cells: Vec::new(),
        }
    }

    fn cell(&mut self, check: &'static str) -> &mut Cell {
        let at = match self.cells.iter().position(|c| c.check == check) {
            Some(at) => at,
            None => {
                self.cells.push(Cell {
                    check,
                    ..Cell::default()
                });
                self.cells.len() - 1
            }
        };
        &mut self.cells[at]
    }
}

/// A failure or skip worth printing below the table.
#[derive(Debug)]
struct Note {
    group: String,
    name: String,
    check: &'static str,
    what: String,
    text: String,
}

/// Everything golden found.
#[derive(Debug, Default)]
pub struct Report {
    rows: Vec<Row>,
    failures: Vec<Note>,
    skips: Vec<Note>,
    notices: Vec<String>,
}

impl Report {
    /// Adds a finished row.
    pub fn push_row(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// A section-level remark (e.g. a folder that is absent).
    pub fn notice(&mut self, text: impl Into<String>) {
        self.notices.push(text.into());
    }

    /// Records `outcome` for `check` in `row`; `what` names the instance (e.g. a context's leaf).
    pub fn record(&mut self, row: &mut Row, check: &'static str, what: &str, outcome: Outcome) {
        let (group, name) = (row.group.clone(), row.name.clone());
        let note = |text: String| Note {
            group,
            name,
            check,
            what: what.to_owned(),
            text,
        };
        let cell = row.cell(check);
        match outcome {
            Outcome::Pass => cell.passed += 1,
            Outcome::Fail(text) => {
                cell.failed += 1;
                self.failures.push(note(text));
            }
            Outcome::Skip(reason) => {
                cell.skipped += 1;
                self.skips.push(note(reason));
            }
        }
    }

    /// Check instances that passed.
    pub fn passed(&self) -> usize {
        self.cells().map(|c| c.passed).sum()
    }

    /// Check instances that failed.
    pub fn failed(&self) -> usize {
        self.cells().map(|c| c.failed).sum()
    }

    fn skipped(&self) -> usize {
        self.cells().map(|c| c.skipped).sum()
    }

    fn cells(&self) -> impl Iterator<Item = &Cell> {
        self.rows.iter().flat_map(|r| r.cells.iter())
    }

    /// The whole report as text; the last line is `golden: N passed, M failed`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut groups: Vec<&str> = Vec::new();
        for row in &self.rows {
            if !groups.contains(&row.group.as_str()) {
                groups.push(&row.group);
            }
        }
        for group in groups {
            self.render_group(group, &mut out);
        }
        for notice in &self.notices {
            let _ = writeln!(out, "NOTICE: {notice}");
        }
        if !self.skips.is_empty() {
            let _ = writeln!(out, "\nskipped ({}):", self.skips.len());
            for skip in &self.skips {
                let _ = writeln!(
                    out,
                    "  {}/{} {} {}: {}",
                    skip.group, skip.name, skip.check, skip.what, skip.text
                );
            }
        }
        if !self.failures.is_empty() {
            let _ = writeln!(out, "\nFAILURES ({}):", self.failures.len());
            for failure in &self.failures {
                let what = if failure.what.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", failure.what)
                };
                let _ = writeln!(
                    out,
                    "  {}/{} {}{what}:",
                    failure.group, failure.name, failure.check
                );
                let _ = write!(out, "{}", failure.text);
                if !failure.text.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        if self.skipped() > 0 {
            let _ = writeln!(out, "\n{} check(s) skipped (reasons above)", self.skipped());
        }
        let _ = writeln!(
            out,
            "golden: {} passed, {} failed",
            self.passed(),
            self.failed()
        );
        out
    }

    fn render_group(&self, group: &str, out: &mut String) {
        let rows: Vec<&Row> = self.rows.iter().filter(|r| r.group == group).collect();
        let mut checks: Vec<&'static str> = Vec::new();
        for row in &rows {
            for cell in &row.cells {
                if !checks.contains(&cell.check) {
                    checks.push(cell.check);
                }
            }
        }
        let name_width = rows
            .iter()
            .map(|r| short(&r.name).chars().count())
            .max()
            .unwrap_or(0)
            .max(group.len());
        let widths: Vec<usize> = checks
            .iter()
            .map(|check| {
                rows.iter()
                    .filter_map(|r| r.cells.iter().find(|c| c.check == *check))
                    .map(|c| cell_text(c).len())
                    .max()
                    .unwrap_or(0)
                    .max(check.len())
            })
            .collect();
        let _ = write!(out, "\n{group:<name_width$}");
        for (check, width) in checks.iter().zip(&widths) {
            let _ = write!(out, "  {check:<width$}");
        }
        out.push('\n');
        for row in rows {
            let _ = write!(out, "{:<name_width$}", short(&row.name));
            for (check, width) in checks.iter().zip(&widths) {
                let text = row
                    .cells
                    .iter()
                    .find(|c| c.check == *check)
                    .map_or_else(|| "-".to_owned(), cell_text);
                let _ = write!(out, "  {text:<width$}");
            }
            out.push('\n');
        }
    }
}

/// A name cut to [`NAME_COLUMN`] characters for the table (failures print it whole).
fn short(name: &str) -> String {
    if name.chars().count() <= NAME_COLUMN {
        return name.to_owned();
    }
    let mut cut: String = name.chars().take(NAME_COLUMN - 1).collect();
    cut.push('…');
    cut
}

/// The widest scenario name the table shows.
const NAME_COLUMN: usize = 40;

/// `ok`, `ok 3`, `FAIL 1/3`, `skip`, or `ok 2 skip 1`.
fn cell_text(cell: &Cell) -> String {
    let total = cell.passed + cell.failed;
    let mut text = if cell.failed > 0 {
        format!("FAIL {}/{total}", cell.failed)
    } else if cell.passed == 1 {
        "ok".to_owned()
    } else if cell.passed > 1 {
        format!("ok {}", cell.passed)
    } else {
        String::new()
    };
    if cell.skipped > 0 {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str("skip");
        if cell.skipped > 1 {
            let _ = write!(text, " {}", cell.skipped);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_count_every_check_instance_and_end_the_report() {
        let mut report = Report::default();
        let mut row = Row::new("pi", "linear-chat");
        report.record(&mut row, "agent", "default", Outcome::Pass);
        report.record(
            &mut row,
            "agent",
            "tip a",
            Outcome::Fail("      at $.x\n".into()),
        );
        report.record(&mut row, "llm", "default", Outcome::Skip("why".into()));
        report.push_row(row);
        let text = report.render();
        assert_eq!(text.lines().last(), Some("golden: 1 passed, 1 failed"));
        assert!(text.contains("FAIL 1/2"), "{text}");
        assert!(text.contains("pi/linear-chat agent (tip a):"), "{text}");
        assert!(text.contains("pi/linear-chat llm default: why"), "{text}");
    }
}
