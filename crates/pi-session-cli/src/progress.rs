//! A progress bar on stderr for commands that walk many files, shown only on a terminal.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// Walks of at least this many files show a bar.
pub const MANY_FILES: usize = 20;

/// A progress bar, or nothing when stderr is not a terminal or the walk is short.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar over `total` files, labelled `what`.
    pub fn new(total: usize, what: &str) -> Self {
        let show = total >= MANY_FILES && std::io::stderr().is_terminal();
        let bar = show.then(|| {
            let bar = ProgressBar::new(total as u64);
            if let Ok(style) =
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {wide_msg}")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_prefix(what.to_owned());
            bar
        });
        Self { bar }
    }

    /// Marks one file done, naming it.
    pub fn step(&self, name: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(name.to_owned());
            bar.inc(1);
        }
    }

    /// Runs `f` (which prints) with the bar hidden.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
