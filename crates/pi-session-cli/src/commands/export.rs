//! `pi-session export`: a session as one self-contained HTML page, or (`--parquet OUT_DIR`)
//! sessions as Parquet tables (`pi-session-parquet`).

use std::path::{Path, PathBuf};

use clap::Args;
use pi_session::tree::{BlobFolder, BlobSource, LeafSelector};
use std::io::Write;

use pi_session_view::{ViewError, ViewOptions, default_branch_budget, export_html, write_html};

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input;
use crate::output::{Out, warn};
use crate::progress::Progress;
use pi_session_parquet::TABLES;

// Arguments of `export` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file (default: the most recent session of the current directory). With
    /// `--parquet`: session files or folders (walked for `*.jsonl`; default: every session under
    /// omp's and pi's session folders).
    pub file: Option<PathBuf>,
    /// More session files or folders (`--parquet` only).
    #[arg(value_name = "DIR", requires = "parquet")]
    pub dirs: Vec<PathBuf>,
    /// Write HTML (the default).
    #[arg(long, conflicts_with = "parquet")]
    pub html: bool,
    /// Write the sessions as Parquet tables into OUT_DIR: sessions.parquet, entries.parquet,
    /// messages.parquet, tool_calls.parquet (schema: crates/pi-session-parquet/SCHEMA.md).
    #[arg(long, value_name = "OUT_DIR", conflicts_with_all = ["output", "leaf", "blobs"])]
    pub parquet: Option<PathBuf>,
    /// Where to write the page; `-` for stdout (default: `<file name>.html` in the current
    /// directory).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The entry whose branch the page opens on (default: the leaf, as pi and omp open the
    /// file). Every other branch can be switched to in the page.
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    /// omp's blob folder, for `blob:sha256:` pictures (default: a `blobs` folder beside the
    /// file, else omp's `<agent dir>/blobs`).
    #[arg(long, value_name = "DIR")]
    pub blobs: Option<PathBuf>,
}

/// Runs `export`.
pub fn run(args: ExportArgs) -> Outcome {
    if let Some(out_dir) = args.parquet {
        let inputs: Vec<PathBuf> = args.file.into_iter().chain(args.dirs).collect();
        return parquet(&inputs, &out_dir);
    }
    let loaded = input::load_from(&args.store, args.file)?;
    let target = match args.output.as_deref() {
        Some(path) if path == Path::new("-") => None,
        explicit => Some(explicit.map_or_else(|| default_output(&loaded.path), Path::to_path_buf)),
    };
    let parent = target
        .as_deref()
        .and_then(|t| exported_parent(&loaded.file, t));
    // The page, written to `sink` as it is made.
    let write = |sink: &mut dyn Write| {
        with_options(
            &loaded.file,
            &loaded.path,
            args.leaf.as_deref(),
            args.blobs.clone(),
            parent.as_deref(),
            |file, options| write_html(file, options, sink),
        )
    };
    let mut out = Out::new();
    match target {
        None => {
            let mut page = Vec::new();
            write(&mut page)?;
            out.bytes(&page)?;
        }
        Some(target) => {
            let cannot_write = |e: std::io::Error| {
                Failure::new(format!(
                    "could not write {}: {e}; name another file with -o OUT",
                    target.display()
                ))
            };
            // Streamed to the file as it is made; a page that fails half-way is removed.
            let file = std::fs::File::create(&target).map_err(cannot_write)?;
            let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
            let written = write(&mut writer).and_then(|()| writer.flush().map_err(cannot_write));
            drop(writer);
            if let Err(failure) = written {
                let _ = std::fs::remove_file(&target);
                return Err(failure);
            }
            let bytes = std::fs::metadata(&target).map_or(0, |m| m.len());
            out.line(&format!("wrote {} ({bytes} bytes)", target.display()))?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// `export --parquet`: the tables of every session under `inputs` in `out_dir`.
fn parquet(inputs: &[PathBuf], out_dir: &Path) -> Outcome {
    let files = input::session_files(inputs)?;
    let progress = Progress::new(files.len(), "export");
    let report = pi_session_parquet::export(&files, out_dir, &|path| {
        progress.step(&path.display().to_string());
    });
    progress.finish();
    let report = report.map_err(|e| Failure::new(format!("{e}; choose another OUT_DIR")))?;
    for (path, error) in &report.unreadable {
        warn(&format!("{}: skipped: {error}", path.display()));
    }
    let mut out = Out::new();
    for ((table, rows), path) in TABLES.iter().zip(report.rows).zip(&report.files) {
        out.line(&format!(
            "wrote {} ({rows} {} rows)",
            path.display(),
            table.name
        ))?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// The parent's page when it was exported beside `target`: `<parent file stem>.html` (the name
/// `export` gives it by default) in `target`'s folder.
fn exported_parent(file: &pi_session::store::SessionFile, target: &Path) -> Option<String> {
    let parent = file.header()?.parent_session.as_deref()?;
    let stem = Path::new(parent)
        .file_stem()?
        .to_string_lossy()
        .into_owned();
    let name = format!("{stem}.html");
    let folder = target.parent().filter(|f| !f.as_os_str().is_empty());
    let beside = folder.map_or_else(|| PathBuf::from(&name), |f| f.join(&name));
    beside.is_file().then_some(name)
}

/// The page for a session (shared with `serve`): the branch of `leaf` selected, omp's blobs read
/// from `blobs` or the folder found beside the file, the parent session linked to `parent_href`.
pub fn html(
    file: &pi_session::store::SessionFile,
    path: &Path,
    leaf: Option<&str>,
    blobs: Option<PathBuf>,
    parent_href: Option<&str>,
) -> Result<Vec<u8>, Failure> {
    with_options(file, path, leaf, blobs, parent_href, export_html)
}

/// Runs `make` with the page's [`ViewOptions`] (see [`html`]), its error said for `path`.
fn with_options<T>(
    file: &pi_session::store::SessionFile,
    path: &Path,
    leaf: Option<&str>,
    blobs: Option<PathBuf>,
    parent_href: Option<&str>,
    make: impl FnOnce(&pi_session::store::SessionFile, &ViewOptions<'_>) -> Result<T, ViewError>,
) -> Result<T, Failure> {
    let folder = input::blob_dir(blobs, path).map(BlobFolder::new);
    let leaf = leaf.map_or(LeafSelector::Default, LeafSelector::parse);
    let file_name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let options = ViewOptions {
        leaf: &leaf,
        blobs: folder.as_ref().map(|f| f as &dyn BlobSource),
        file_name: &file_name,
        branch_budget: default_branch_budget(file.len()),
        parent_href,
    };
    make(file, &options)
        .map_err(|e| Failure::new(format!("could not export {}: {e}", path.display())))
}

/// `<file stem>.html` in the current directory.
fn default_output(session: &Path) -> PathBuf {
    let stem = session
        .file_stem()
        .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.html"))
}
