//! Context management on the command line (`pi_session::manage`): `context --budget`,
//! `stats`' status bar and distributions, and `append --pin/--unpin/--resolution`. Kept apart
//! from those commands' own modules, which call in here.

use std::io::IsTerminal;
use std::path::Path;

use pi_session::manage::{PrepareOptions, Resolution, status};
use pi_session::projection::WorkspaceDocuments;
use pi_session::projection::providers::{
    AnthropicStream, Element, OpenAiOptions, OpenAiStream, anthropic_messages,
};
use pi_session::projection::reqllm::{self, Role};
use pi_session::store::Store;
use pi_session::tree::{BlobFolder, BlobSource};
use pi_session::types::Entry;
use pi_session::{ContextStats, ProjectOptions, Session, StatsOptions};
use serde_json::Value;

use super::context::{ContextArgs, Format};
use crate::failure::{EXIT_OK, Failure, Outcome};
use crate::input;
use crate::output::{JsonArray, Out, warn};

/// The model statistics assume when the branch names none (rho's default window).
const NO_MODEL: &str = "unknown:unknown";

/// `context FILE --format req-llm|openai|anthropic --budget TOKENS [--cursor NAME]`: the
/// cursor's stamps applied, then the planner fits the context to the budget.
pub fn budgeted_context(args: &ContextArgs, budget: u64) -> Outcome {
    let shape = match args.format {
        Format::ReqLlm => Shape::ReqLlm,
        Format::ReqLlmOpenai | Format::Openai => Shape::OpenAi,
        Format::ReqLlmAnthropic | Format::Anthropic if args.model.is_none() => Shape::Anthropic,
        _ => {
            return Err(Failure::new(
                "--budget fits rho's projections only: use --format req-llm, openai or anthropic (without --model)",
            ));
        }
    };
    let path = input::resolve(args.file.clone())?;
    let store = args.store.open()?;
    let session = cursor_of(&store, &path, args.cursor.as_deref(), args.leaf.as_deref())?;
    let root = args.root.clone().unwrap_or_else(|| {
        session
            .cwd()
            .map(std::path::PathBuf::from)
            .filter(|cwd| cwd.is_dir())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| ".".into())
    });
    let documents = WorkspaceDocuments::new(root);
    let blobs = input::blob_dir(args.blobs.clone(), &path).map(BlobFolder::new);
    let options = PrepareOptions {
        budget: Some(budget),
        project: ProjectOptions {
            inputs: args.inputs,
            documents: &documents,
            blobs: blobs.as_ref().map(|b| b as &dyn BlobSource),
            ..ProjectOptions::default()
        },
        ..PrepareOptions::default()
    };
    let mut prepared = session.fit_context(&options)?;
    if !prepared.fits() {
        warn(&format!(
            "{}: the context is {} tokens over the budget of {budget}: the pinned entries, the compaction summary and the latest turn alone take {} (unpin entries or raise --budget)",
            path.display(),
            prepared.over_by,
            prepared.stats.estimated_tokens
        ));
    }
    let mut out = Out::new();
    write_messages(&mut out, shape, &mut prepared.messages)?;
    out.flush()?;
    // The plan (an entry for every entry of the branch) and the session.
    super::leave_to_exit((prepared, session));
    Ok(EXIT_OK)
}

/// From this many messages `context --budget --format req-llm` lays out its answer on two
/// threads ([`write_req_llm`]).
const PARALLEL_MESSAGES: usize = 256;

/// The messages each thread lays out at a time ([`write_req_llm`]).
const RUN_MESSAGES: usize = 16;

/// What `context --budget` prints the fitted messages as.
#[derive(Clone, Copy)]
enum Shape {
    /// rho's canonical req_llm messages.
    ReqLlm,
    /// rho's OpenAI Chat messages.
    OpenAi,
    /// rho's Anthropic Messages request (`{"messages": [...]}`).
    Anthropic,
}

/// Writes `messages` as `shape`, a message (or request message) at a time, as `JSON.stringify(
/// value, null, 2)` lays out the whole answer, and a newline: no value or text of the whole
/// answer is built. The provider shapes take the messages out of `messages` (their texts move
/// into the request messages); `req-llm` reads them where they are.
fn write_messages(
    out: &mut Out,
    shape: Shape,
    messages: &mut Vec<reqllm::Message>,
) -> Result<(), Failure> {
    // A system message would make Anthropic's `system` blocks, written before the messages:
    // rho's projection makes none, but such an answer is built whole.
    if matches!(shape, Shape::Anthropic) && messages.iter().any(|m| m.role == Role::System) {
        return out.json(&anthropic_messages(messages.drain(..)));
    }
    if matches!(shape, Shape::Anthropic) {
        out.text("{\n  \"messages\": ")?;
    }
    let mut array = out.array(usize::from(matches!(shape, Shape::Anthropic)));
    // Each request message written as its stream made it (no map made of it).
    let mut each = |element: Element| array.item(&element);
    match shape {
        Shape::ReqLlm => write_req_llm(&mut array, messages)?,
        Shape::OpenAi => {
            let mut stream = OpenAiStream::new(OpenAiOptions::default());
            for message in messages.drain(..) {
                stream.push(message, &mut each)?;
            }
            stream.finish(&mut each)?;
        }
        Shape::Anthropic => {
            let mut stream = AnthropicStream::default();
            for message in messages.drain(..) {
                stream.push(message, &mut each)?;
            }
            stream.finish(&mut each)?;
        }
    }
    array.finish()?;
    if matches!(shape, Shape::Anthropic) {
        out.text("\n}")?;
    }
    out.text("\n")
}

/// Writes rho's req_llm `messages` to `array`. A long answer is laid out on two threads: this
/// one writes runs of messages from the oldest on, a second lays out runs from the newest
/// back (the newest messages, a turn's in full, are the largest), until they meet; the
/// second's runs are written after, in order.
fn write_req_llm<W: std::io::Write>(
    array: &mut JsonArray<'_, W>,
    messages: &[reqllm::Message],
) -> Result<(), Failure> {
    if messages.len() < PARALLEL_MESSAGES {
        return messages.iter().try_for_each(|message| array.item(message));
    }
    // What is left to claim: `front..back`; this thread has the first run already, so the
    // second's are never the array's first element.
    let left = std::sync::Mutex::new((RUN_MESSAGES, messages.len()));
    let claim_front = || {
        let mut left = left.lock().ok()?;
        let (front, back) = *left;
        (front < back).then(|| {
            let end = (front + RUN_MESSAGES).min(back);
            left.0 = end;
            front..end
        })
    };
    let claim_back = || {
        let mut left = left.lock().ok()?;
        let (front, back) = *left;
        (front < back).then(|| {
            let start = back.saturating_sub(RUN_MESSAGES).max(front);
            left.1 = start;
            start..back
        })
    };
    let depth = array.depth();
    std::thread::scope(|scope| {
        let second = pi_session::store::StarterCore::current()
            .spawn_scoped(std::thread::Builder::new(), scope, || {
                // Runs newest first, each with its count.
                let mut runs: Vec<(Vec<u8>, std::ops::Range<usize>)> = Vec::new();
                while let Some(run) = claim_back() {
                    let mut written = Vec::new();
                    let mut rest = JsonArray::continued(&mut written, depth);
                    for message in &messages[run.clone()] {
                        rest.item(message)?;
                    }
                    runs.push((written, run));
                }
                Ok::<_, Failure>(runs)
            })
            .ok();
        let mut run = Some(0..RUN_MESSAGES);
        let mut end = 0;
        while let Some(at) = run {
            for message in &messages[at.clone()] {
                array.item(message)?;
            }
            end = at.end;
            run = claim_front();
        }
        let runs = match second.map(std::thread::ScopedJoinHandle::join) {
            Some(Ok(runs)) => runs?,
            // Without a second thread (none could be made), or if it failed: written here.
            _ => Vec::new(),
        };
        for (written, run) in runs.iter().rev() {
            array.items_written(written, run.len())?;
            end = run.end;
        }
        messages[end..]
            .iter()
            .try_for_each(|message| array.item(message))
    })
}

/// The session at `path` as cursor `name` (its saved tip; a new cursor there when the name was
/// never saved), at `leaf` when given (`null`: before the first entry).
fn cursor_of(
    store: &Store,
    path: &Path,
    name: Option<&str>,
    leaf: Option<&str>,
) -> Result<Session, Failure> {
    // Read only: nothing is written, so no writer (nor its lock) is opened.
    let (opened, _) = Session::read_in(store, path, NO_MODEL)?;
    let mut session = match name {
        Some(name) => opened
            .checkout(name)
            .unwrap_or_else(|_| opened.fork_named(name)),
        None => opened,
    };
    match leaf {
        Some("null") => session.reset_leaf(),
        Some(id) => session.branch_to(id)?,
        None => {}
    }
    Ok(session)
}

/// The context statistics of `session`'s branch (a session as opened: the file's last entry
/// with an id), the unnamed cursors' stamps applied.
pub fn file_stats(session: &Session) -> Result<ContextStats, Failure> {
    Ok(session.context_stats(&ProjectOptions::default(), &StatsOptions::default())?)
}

/// `stats --json`'s `context`: the statistics' fields, and what its methods derive from them
/// (`promptBudget`, `utilizationPercent` of that budget, `estimatedRemaining` in it).
pub fn stats_json(stats: &ContextStats) -> Value {
    let mut value = serde_json::to_value(stats).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("promptBudget".into(), stats.prompt_budget().into());
        map.insert(
            "utilizationPercent".into(),
            stats.utilization_percent().into(),
        );
        map.insert(
            "estimatedRemaining".into(),
            stats.estimated_remaining().into(),
        );
    }
    value
}

/// Whether to colour what goes to stdout: a terminal, and `NO_COLOR` unset.
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// The status bar and the three distributions, as `stats` prints them.
pub fn stats_lines(stats: &ContextStats, colour: bool) -> Vec<String> {
    let k = |n: u64| status::short_tokens(n);
    let r = &stats.by_role;
    let l = &stats.by_resolution;
    let p = &stats.by_phase;
    vec![
        format!("context      {}", stats.status_bar(colour)),
        format!(
            "  window     {} ({} kept for the reply); {} entries on the branch, {} in the file",
            k(stats.window),
            k(stats.reserve),
            stats.entries,
            stats.entry_count
        ),
        format!(
            "  by role    system {}, user {}, assistant {}, tool {}",
            k(r.system),
            k(r.user),
            k(r.assistant),
            k(r.tool)
        ),
        format!(
            "  by level   full {}, outlined {}, summarized {}, pinned {}, attached {}",
            k(l.full),
            k(l.outlined),
            k(l.summarized),
            k(l.pinned),
            k(l.attached)
        ),
        format!(
            "  by phase   exploration {}, execution {}, verification {}, conclusion {}, unclassified {}",
            k(p.exploration),
            k(p.execution),
            k(p.verification),
            k(p.conclusion),
            k(p.unclassified)
        ),
        format!(
            "  compacted  {} entries, summary {} tokens",
            stats.compacted_entries, stats.compaction_tokens
        ),
    ]
}

/// `append --pin ID | --unpin ID | --resolution ID=LEVEL [--cursor NAME]`: the stamp written,
/// `None` for an unpin of an entry that is not pinned.
pub fn append_stamp(
    session: Session,
    cursor: Option<&str>,
    pin: Option<&str>,
    unpin: Option<&str>,
    resolution: Option<&str>,
) -> Result<Option<Entry>, Failure> {
    let mut session = match cursor {
        Some(name) => session
            .checkout(name)
            .unwrap_or_else(|_| session.fork_named(name)),
        None => session,
    };
    if let Some(id) = pin {
        return Ok(Some(session.pin_entry(id)?));
    }
    if let Some(id) = unpin {
        return Ok(session.unpin_entry(id)?);
    }
    let Some(stamp) = resolution else {
        return Err(Failure::new(
            "say what to stamp: --pin, --unpin or --resolution",
        ));
    };
    let Some((id, level)) = stamp.rsplit_once('=') else {
        return Err(Failure::new(format!(
            "--resolution {stamp:?}: write it as ID=LEVEL, e.g. 1a2b3c4d=outlined"
        )));
    };
    let level: Resolution = level
        .parse()
        .map_err(|e: pi_session::manage::UnknownResolution| Failure::new(e.to_string()))?;
    Ok(Some(session.set_resolution(id, level)?))
}

#[cfg(test)]
mod tests {
    use super::{JsonArray, PARALLEL_MESSAGES, RUN_MESSAGES, write_req_llm};
    use pi_session::projection::reqllm::Message;

    /// Laid out on two threads, a long answer is byte for byte the one written a message at a
    /// time, at every length around the threshold and the runs' edges.
    #[test]
    fn req_llm_answers_laid_out_on_two_threads_are_written_in_order() {
        let lengths = [
            0,
            1,
            PARALLEL_MESSAGES - 1,
            PARALLEL_MESSAGES,
            PARALLEL_MESSAGES + 1,
        ]
        .into_iter()
        .chain((0..=RUN_MESSAGES * 2).map(|n| PARALLEL_MESSAGES * 3 + n));
        for len in lengths {
            // Sizes that differ, the newest largest, as a turn's messages are.
            let messages: Vec<Message> = (0..len)
                .map(|n| Message::user_text(format!("{n}: {}", "x\n\"".repeat(n % 37 + n / 50))))
                .collect();
            let mut one = Vec::new();
            let mut array = JsonArray::new(&mut one, 1);
            for message in &messages {
                array.item(message).unwrap();
            }
            array.finish().unwrap();
            let mut two = Vec::new();
            let mut array = JsonArray::new(&mut two, 1);
            write_req_llm(&mut array, &messages).unwrap();
            array.finish().unwrap();
            assert_eq!(
                String::from_utf8(two).unwrap(),
                String::from_utf8(one).unwrap(),
                "{len} messages"
            );
        }
    }
}
