//! `pi-session export`: a session as one self-contained HTML page.

use std::path::{Path, PathBuf};

use clap::Args;
use pi_session::tree::{BlobFolder, BlobSource, LeafSelector};
use pi_session_view::{ViewOptions, default_branch_budget, export_html};

use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input;
use crate::output::Out;

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file (default: the most recent session of the current directory).
    pub file: Option<PathBuf>,
    /// Write HTML (the only format so far, and the default).
    #[arg(long)]
    pub html: bool,
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
    let loaded = input::load_from(&args.store, args.file)?;
    let page = html(&loaded.file, &loaded.path, args.leaf.as_deref(), args.blobs)?;
    let mut out = Out::new();
    match args.output.as_deref() {
        Some(path) if path == Path::new("-") => out.bytes(&page)?,
        explicit => {
            let target = explicit.map_or_else(|| default_output(&loaded.path), Path::to_path_buf);
            std::fs::write(&target, &page).map_err(|e| {
                Failure::new(format!(
                    "could not write {}: {e}; name another file with -o OUT",
                    target.display()
                ))
            })?;
            out.line(&format!(
                "wrote {} ({} bytes)",
                target.display(),
                page.len()
            ))?;
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// The page for a session (shared with `serve`): the branch of `leaf` selected, omp's blobs read
/// from `blobs` or the folder found beside the file.
pub fn html(
    file: &pi_session::store::SessionFile,
    path: &Path,
    leaf: Option<&str>,
    blobs: Option<PathBuf>,
) -> Result<Vec<u8>, Failure> {
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
    };
    export_html(file, &options)
        .map_err(|e| Failure::new(format!("could not export {}: {e}", path.display())))
}

/// `<file stem>.html` in the current directory.
fn default_output(session: &Path) -> PathBuf {
    let stem = session
        .file_stem()
        .map_or_else(|| "session".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.html"))
}
