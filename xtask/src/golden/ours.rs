//! Sessions written by our facade (`fixtures/ours/<dialect>/*.jsonl`): regenerated from a fixed
//! script they must equal the committed bytes, and what the real omp and pi returned for them
//! (`fixtures/ours/<dialect>/<impl>/*.expected.json`, written by `cargo xtask record`) is
//! checked like any other recording.

use std::path::Path;

use super::recorded;
use super::report::Report;

/// Checks `fixtures/ours` (`write` regenerates the session files first).
pub fn check(
    report: &mut Report,
    ours: &Path,
    write: bool,
    only: Option<&str>,
) -> Result<(), String> {
    let _ = write;
    check_recordings(report, ours, only);
    Ok(())
}

/// Every `fixtures/ours/<dialect>/<impl>/` folder: recordings of the files in `<dialect>/`.
fn check_recordings(report: &mut Report, ours: &Path, only: Option<&str>) {
    let Ok(dialects) = std::fs::read_dir(ours) else {
        report.notice(format!(
            "{} is absent; checks of our own files skipped",
            ours.display()
        ));
        return;
    };
    let mut dialect_dirs: Vec<_> = dialects
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dialect_dirs.sort();
    for dialect_dir in dialect_dirs {
        let Ok(impls) = std::fs::read_dir(&dialect_dir) else {
            continue;
        };
        let mut impl_dirs: Vec<_> = impls
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        impl_dirs.sort();
        for impl_dir in impl_dirs {
            let group = format!("ours/{}/{}", name_of(&dialect_dir), name_of(&impl_dir));
            recorded::check_folder(report, &group, &impl_dir, &dialect_dir, only);
        }
    }
}

fn name_of(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
