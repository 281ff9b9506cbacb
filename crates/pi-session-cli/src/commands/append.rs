//! `pi-session append`: append one entry to a session, in the file's dialect.

use std::path::PathBuf;

use clap::{ArgGroup, Args};
use pi_session::types::Entry;
use pi_session::{
    AttachedFile, AttachmentKind, CustomEntry, Session, UserOptions, from_pi_model, user,
};

use super::write::{
    DEFAULT_WAIT_SECONDS, WriteDialect, busy_timeout, failure, open_in, print_entry,
};
use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::output::Out;

// Arguments of `append` (not a doc comment: see `Command` in main.rs).
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("what").required(true).args(["user", "model", "thinking", "label", "unlabel", "name", "custom", "pin", "unpin", "resolution"])),
    after_help = "Appends exactly one entry after the file's last entry, in the file's dialect \
    (pi: model_change {provider, modelId}, session_info; omp: model_change {model}, title_change \
    and the title slot). Refused for a version 1 or 2 file (`pi-session migrate` it first) and for a \
    file without a session header (`pi-session fork` it)."
)]
pub struct AppendArgs {
    /// Where sessions are kept (`--store redis://…`, `--prefix`).
    #[command(flatten)]
    pub store: crate::store_args::StoreArgs,
    /// The session file.
    pub file: PathBuf,
    /// A user message with this text.
    #[arg(long, value_name = "TEXT")]
    pub user: Option<String>,
    /// A picture attached to the --user message (PNG, JPEG, GIF or WebP; repeatable).
    #[arg(long, value_name = "PATH", requires = "user")]
    pub image: Vec<PathBuf>,
    /// A switch to this model (`provider/id`, as pi and omp name models).
    #[arg(long, value_name = "PROVIDER/ID")]
    pub model: Option<String>,
    /// A thinking-level change (off, minimal, low, medium, high, xhigh).
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,
    /// Labels entry ID with TEXT.
    #[arg(long, num_args = 2, value_names = ["ID", "TEXT"])]
    pub label: Option<Vec<String>>,
    /// Clears the label of entry ID.
    #[arg(long, value_name = "ID")]
    pub unlabel: Option<String>,
    /// Names the session.
    #[arg(long, value_name = "TEXT")]
    pub name: Option<String>,
    /// A `custom` entry of type TYPE holding JSON (never sent to a model).
    #[arg(long, num_args = 2, value_names = ["TYPE", "JSON"])]
    pub custom: Option<Vec<String>>,
    /// Pins entry ID for the cursor: sent whole, never downgraded or evicted by `context --budget`.
    #[arg(long, value_name = "ID")]
    pub pin: Option<String>,
    /// Removes the cursor's pin of entry ID.
    #[arg(long, value_name = "ID")]
    pub unpin: Option<String>,
    /// Stamps entry ID at LEVEL for the cursor (full, outlined, summarized, pinned, compacted,
    /// attached).
    #[arg(long, value_name = "ID=LEVEL")]
    pub resolution: Option<String>,
    /// With --pin, --unpin, --resolution: the named cursor whose stamp it is (default: the
    /// unnamed cursors').
    #[arg(long, value_name = "NAME")]
    pub cursor: Option<String>,
    /// Whose shapes to write (default: the file's own).
    #[arg(long, value_enum, default_value_t = WriteDialect::Auto)]
    pub dialect: WriteDialect,
    /// Print the written entry as JSON.
    #[arg(long)]
    pub json: bool,
    /// How long to wait for another process writing the session (0: fail at once).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_WAIT_SECONDS)]
    pub wait: f64,
}

/// Runs `append`.
pub fn run(args: AppendArgs) -> Outcome {
    let mut session = open_in(&args.store.open()?, &args.file, args.dialect)?;
    session.set_busy_timeout(busy_timeout(args.wait));
    if args.pin.is_some() || args.unpin.is_some() || args.resolution.is_some() {
        let written = super::manage::append_stamp(
            session,
            args.cursor.as_deref(),
            args.pin.as_deref(),
            args.unpin.as_deref(),
            args.resolution.as_deref(),
        )?;
        let mut out = Out::new();
        match written {
            Some(entry) => print_entry(&mut out, &entry, args.json, &args.file)?,
            None => out.line("nothing to unpin: the entry is not pinned")?,
        }
        out.flush()?;
        return Ok(EXIT_OK);
    }
    let written = append(&mut session, &args).map_err(|e| match e {
        Refused::Facade(error) => failure(&error, &args.file),
        Refused::Cli(failure) => failure,
    })?;
    let mut out = Out::new();
    print_entry(&mut out, &written, args.json, &args.file)?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// Why `append` wrote nothing: the library refused (see [`failure`]), or the arguments are bad.
enum Refused {
    Facade(pi_session::Error),
    Cli(Failure),
}

impl From<pi_session::Error> for Refused {
    fn from(error: pi_session::Error) -> Self {
        Self::Facade(error)
    }
}

impl From<Failure> for Refused {
    fn from(failure: Failure) -> Self {
        Self::Cli(failure)
    }
}

fn append(session: &mut Session, args: &AppendArgs) -> Result<Entry, Refused> {
    let written = if let Some(text) = &args.user {
        let mut options = UserOptions::new();
        for path in &args.image {
            options = options.attach(picture(path)?);
        }
        session.append(user(text, options))?
    } else if let Some(model) = &args.model {
        if !model.contains('/') {
            return Err(Failure::new(format!(
                "--model {model:?} names no provider; write it as PROVIDER/ID, e.g. anthropic/claude-sonnet-4-5"
            ))
            .into());
        }
        session.set_model(&from_pi_model(model))?
    } else if let Some(level) = &args.thinking {
        session.set_thinking_level(Some(level))?
    } else if let Some([id, text]) = args.label.as_deref() {
        session.set_label(id, Some(text))?
    } else if let Some(id) = &args.unlabel {
        session.set_label(id, None)?
    } else if let Some(name) = &args.name {
        session.set_name(name)?
    } else if let Some([kind, json]) = args.custom.as_deref() {
        let data: serde_json::Value = serde_json::from_str(json).map_err(|e| {
            Failure::new(format!(
                "--custom {kind}: the data is not JSON ({e}); quote it, e.g. '{{\"n\":1}}'"
            ))
        })?;
        session.append_custom(&CustomEntry::new(kind).data(data))?
    } else {
        return Err(Failure::new(
            "say what to append: --user, --model, --thinking, --label, --unlabel, --name or --custom",
        )
        .into());
    };
    Ok(written)
}

/// A picture to attach, its type from its extension.
fn picture(path: &std::path::Path) -> Result<AttachedFile, Failure> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let mime = match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => {
            return Err(Failure::new(format!(
                "{} is not a PNG, JPEG, GIF or WebP picture (by its extension)",
                path.display()
            )));
        }
    };
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::new(format!("could not read {}: {e}", path.display())))?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let about = format!("{} bytes", bytes.len());
    Ok(AttachedFile::new(
        AttachmentKind::Image,
        name,
        mime,
        path.display().to_string(),
    )
    .about(about)
    .image(bytes))
}
