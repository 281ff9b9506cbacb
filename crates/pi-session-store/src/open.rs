//! `open`: index a session file (envelopes only) and report what is wrong with it.
//!
//! The file is read in chunks of whole lines. Each chunk's lines are parsed for their
//! envelope (`type`, `id`, `parentId`, `timestamp`) on one of [`OpenOptions::threads`] workers
//! (a file too large to hold: each thread, the opening one too, reads its own parts by
//! position, frames and parses them; a file held whole, a stream: chunks handed out while the
//! next are framed); the
//! results are then folded in file order by one `Builder`, which owns every cross-line rule
//! (title slot, header, duplicates, migration).

use crate::diagnostic::{Diagnostic, DiagnosticKind, DiagnosticLog};
use crate::entry_table::{EntryTable, named_parent};
use crate::error::StoreError;
use crate::framing::{
    Chunk, ChunkReader, Chunks, LineSpan, Segment, SharedBytes, SharedChunks, is_blank, read_into,
    read_segment,
};
use crate::fused::split_fused;
use crate::migrate::{CURRENT_VERSION, IdGenerator, Migration, Ordinal};
use crate::session_file::{IndexEntry, IndexEnvelope, SessionFile, Source};
use pi_session_types::envelope_scan::{KeyFilter, scan_envelope};
use pi_session_types::json::Strings;
use pi_session_types::{
    EnvelopeRef, LineError, ParseWarning, ParsedLine, SessionHeader, TitleSlot, parse_envelope,
    parse_envelope_ref, parse_line, tags,
};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

/// Tuning for [`open_with`]. The defaults suit interactive use; benchmarks and tests change them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenOptions {
    /// Files up to this many bytes are read whole and kept in memory, so materialising entries
    /// needs no further I/O; larger files are streamed and re-read by offset. Default 256 KiB:
    /// what one core parses alone anyway. A larger file is parsed in parts on every core
    /// (docs/perf.md: round 10 measured 8 MiB against 1 MiB, streaming a 5 MB file touching
    /// fewer fresh pages; round 33 1 MiB against 256 KiB, a 900 KB file's `check` and `context`
    /// taking 16–23% less in parts on two cores than held and parsed on one).
    pub keep_in_memory_up_to: u64,
    /// Size of each chunk of lines read and parsed at once (a longer line makes a longer chunk).
    /// Default 1 MiB; a file too large to hold is read in parts of at most 256 KiB.
    pub buffer_bytes: usize,
    /// Threads used to parse envelopes and, later, to read large batches of entries
    /// ([`SessionFile::values_for`], [`SessionFile::entries_for`]); 0 means "as many as the
    /// machine has, at most 4". A scan that already reads many files at once on every core
    /// opens each with 1 ([`OpenOptions::single_threaded`]), so it starts no threads per file.
    pub threads: usize,
}

impl OpenOptions {
    /// The defaults on one thread: what a scan across many files uses for each file.
    pub fn single_threaded() -> Self {
        Self {
            threads: 1,
            ..Self::default()
        }
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            keep_in_memory_up_to: PARALLEL_MIN_BYTES,
            buffer_bytes: 1 << 20,
            threads: 0,
        }
    }
}

/// Inputs smaller than this are parsed on the calling thread (threads cost more than they save).
const PARALLEL_MIN_BYTES: u64 = 256 << 10;

/// Whether [`open`] with the default options may read `path` on more than one thread: a
/// regular file of 256 KiB or more, the size from which it starts workers (on one core it
/// reads it on one). One `stat`; `false` for anything else (a directory, a missing path). For a
/// program that wakes another core before it opens a session ([`crate::wake_another_core`],
/// which does nothing with one core) only when the open may start a worker there.
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("s.jsonl");
/// std::fs::write(&path, "{}\n").unwrap();
/// assert!(!pi_session_store::may_open_on_threads(&path)); // parsed on the calling thread
/// assert!(!pi_session_store::may_open_on_threads(dir.path()));
/// ```
pub fn may_open_on_threads(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.len() >= PARALLEL_MIN_BYTES)
}

/// The most bytes a worker reads at once of a file too large to hold
/// ([`index_parts_in_parallel`]; [`OpenOptions::buffer_bytes`] when smaller). A part this size
/// is still in the core's cache when its lines are parsed: against 1 MiB parts, a 50 MB
/// `check` took 8% less CPU, 40% fewer page faults and 15 instead of 21 MB (docs/perf.md,
/// round 10).
const PART_BYTES: usize = 256 << 10;

/// How many parts a file is cut into at least for the open ([`part_len`]).
const OPEN_PARTS: u64 = 40;

/// The fewest bytes a part of the open may be cut down to ([`part_len`]).
const MIN_PART_BYTES: u64 = 64 << 10;

/// The read buffers of [`index_parts_in_parallel`], per thread: the part a thread reads and one
/// read ahead of the fold (a thread's first part takes about twice as long as the others, its
/// buffer's pages faulted in, while the other thread reads on). A third per thread (as
/// [`index_in_parallel`]'s pipeline keeps) bought no measurable time, and each buffer used even
/// once is a part's worth of fresh pages, faulted in, zeroed and freed at exit: with two, the
/// 5 MB bench session's `check` and `anthropic` context ended ~2% sooner, the 50 and 200 MB
/// sessions' no later (docs/perf.md, round 49).
const PARTS_PER_THREAD: usize = 2;

/// The bytes a worker reads at once of a file of `size` bytes too large to hold:
/// [`PART_BYTES`], less for a file shorter than [`OPEN_PARTS`] such parts, so that it is still
/// cut into about that many (a multiple of 4 KiB, down to [`MIN_PART_BYTES`]). The parts of a
/// short file end on the threads about together, and its read buffers touch fewer fresh pages
/// (each ~2 µs on the VMs we measure on): the 5 MB bench session's `check` and `context` took
/// ~0.45 ms less with parts of 128 KiB, the 50 and 200 MB sessions and the 100k chain
/// (which keep 256 KiB) no less (docs/perf.md, round 33).
fn part_len(size: u64) -> usize {
    let len = (size / OPEN_PARTS).clamp(MIN_PART_BYTES, PART_BYTES as u64) & !4095;
    usize::try_from(len).unwrap_or(PART_BYTES)
}

/// Opens a session file for reading: header, index of every entry, diagnostics.
///
/// Never writes to the file and takes no lock. Only I/O problems are errors; everything wrong
/// with the content is a [`Diagnostic`].
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("s.jsonl");
/// std::fs::write(&path, concat!(
///     r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#, "\n",
///     r#"{"type":"label","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","targetId":"x","label":"l"}"#, "\n",
///     "{not json\n",
/// ))?;
/// let (session, diagnostics) = pi_session_store::open(&path)?;
/// assert_eq!(session.header().map(|h| h.id.as_str()), Some("s1"));
/// assert_eq!(session.len(), 1);
/// assert_eq!(session.entry(0)?.kind(), "label");
/// assert_eq!(diagnostics.len(), 1);
/// assert!(diagnostics[0].to_string().starts_with("line 3 (byte "));
/// # Ok(()) }
/// ```
pub fn open(path: impl AsRef<Path>) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
    open_with(path, &OpenOptions::default())
}

/// [`open`] with explicit [`OpenOptions`].
pub fn open_with(
    path: impl AsRef<Path>,
    options: &OpenOptions,
) -> Result<(SessionFile, Vec<Diagnostic>), StoreError> {
    let path = path.as_ref();
    let mut file = File::open(path).map_err(|e| StoreError::io("could not open", path, e))?;
    let metadata = file
        .metadata()
        .map_err(|e| StoreError::io("could not read the size of", path, e))?;
    if !metadata.is_file() {
        return Err(StoreError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let size = metadata.len();
    // The core count (read from the cgroup files) is asked once here for the read, the parse
    // and the session's later batch reads, not once by each; not at all for a file held whole
    // in one chunk (parsed on this thread, too short for a batch read on threads).
    let one_held_chunk = size <= options.keep_in_memory_up_to && fits_one_chunk(size, options);
    let resolved;
    let options = if size >= PARALLEL_MIN_BYTES && options.threads == 0 && !one_held_chunk {
        resolved = OpenOptions {
            threads: effective_threads(0),
            ..options.clone()
        };
        &resolved
    } else {
        options
    };
    if size <= options.keep_in_memory_up_to {
        let bytes = read_whole(&mut file, size, options)
            .map_err(|e| StoreError::io("could not read", path, e))?;
        let source = Source::Memory {
            path: Some(path.to_path_buf()),
            bytes: Arc::clone(&bytes),
        };
        return Ok(index_shared(bytes, source, options));
    }
    let source = Source::File(path.to_path_buf());
    // In parts on every core from two parts up (the tests' tiny parts take this way too).
    #[cfg(unix)]
    if size >= PARALLEL_MIN_BYTES.min(2 * options.buffer_bytes.max(16) as u64) {
        let threads = effective_threads(options.threads);
        if threads > 1 {
            use std::os::unix::fs::FileExt;
            let read_at = |into: &mut [u8], at: u64| file.read_at(into, at);
            let part_len = options.buffer_bytes.min(part_len(size));
            return index_parts_in_parallel(read_at, size, threads, part_len)
                .map(|(builder, had_bom)| {
                    let (mut session, diagnostics) = builder.finish(source, had_bom);
                    session.read_threads = options.threads;
                    (session, diagnostics)
                })
                .map_err(|e| StoreError::io("could not read", path, e));
        }
    }
    index_reader(file, size, source, options).map_err(|e| StoreError::io("could not read", path, e))
}

/// What a thread of [`index_parts_in_parallel`] hands the fold for one part: the part framed,
/// each chunk's lines parsed; or why it could not read it (or the bug it hit).
type ReadPart = std::thread::Result<std::io::Result<(Segment, Vec<Vec<LineOutcome>>)>>;

/// The read buffers of an open on several threads ([`index_parts_in_parallel`],
/// [`index_in_parallel`]), handed out last in, first out: the buffer
/// folded last (its pages faulted in and warm in cache) is the next one read into, so a file
/// touches only as many buffers as are in flight at once, not the whole pool (a channel hands
/// them round in turn: every buffer of the pool faulted in, ~270 KiB each).
struct BufferPool {
    state: Mutex<PoolState>,
    returned: std::sync::Condvar,
}

struct PoolState {
    free: Vec<Vec<u8>>,
    /// The fold has stopped: no buffer will come back.
    closed: bool,
}

impl BufferPool {
    /// A pool of `count` empty buffers (each grows to a part's size on first use).
    fn new(count: usize) -> Self {
        Self {
            state: Mutex::new(PoolState {
                free: (0..count).map(|_| Vec::new()).collect(),
                closed: false,
            }),
            returned: std::sync::Condvar::new(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, PoolState> {
        // The state is a list and a flag, whole after any panic.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The buffer returned last, waiting for one if none is free; `None` once closed.
    fn take(&self) -> Option<Vec<u8>> {
        let mut state = self.state();
        loop {
            if state.closed {
                return None;
            }
            if let Some(buffer) = state.free.pop() {
                return Some(buffer);
            }
            state = self
                .returned
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn give_back(&self, buffer: Vec<u8>) {
        self.state().free.push(buffer);
        self.returned.notify_one();
    }

    fn close(&self) {
        self.state().closed = true;
        self.returned.notify_all();
    }
}

/// Closes the pool when dropped (`only_on_panic`: only while its thread unwinds), so that the
/// threads waiting for a buffer stop instead of waiting for one that will not come back: the
/// fold of [`index_in_parallel`] closes it however it ends (returned, failed, a worker's panic
/// resumed); a thread of [`index_parts_in_parallel`] only when it panics (the others still
/// read).
struct ClosePool<'a> {
    pool: &'a BufferPool,
    only_on_panic: bool,
}

impl Drop for ClosePool<'_> {
    fn drop(&mut self) {
        if !self.only_on_panic || std::thread::panicking() {
            self.pool.close();
        }
    }
}

/// The fold of [`index_parts_in_parallel`]: the parts read and not yet folded, and where the
/// fold is; shared by the threads under a lock (whichever thread reads the part the fold waits
/// for folds it, and every part after it that is waiting).
struct PartsFold {
    builder: Builder,
    had_bom: bool,
    waiting: BTreeMap<usize, ReadPart>,
    next_index: usize,
    next_line: u64,
    /// Where the next part's first line must start.
    next_start: u64,
    /// How the fold ended: the file indexed, a part that could not be read, a thread's panic
    /// (a bug, re-raised by the opening thread). `None` while parts are still to come.
    ended: Option<std::thread::Result<std::io::Result<()>>>,
}

impl PartsFold {
    /// Folds every waiting part that comes next in file order, handing each part's buffer back
    /// to `pool`; closes the pool once the fold has ended.
    fn fold_waiting(&mut self, pool: &BufferPool) {
        while self.ended.is_none() {
            let Some(read) = self.waiting.remove(&self.next_index) else {
                return;
            };
            match read {
                Ok(Ok((segment, outcomes))) => self.fold(segment, outcomes, pool),
                Ok(Err(error)) => self.ended = Some(Ok(Err(error))),
                Err(panic) => self.ended = Some(Err(panic)),
            }
        }
        pool.close();
    }

    fn fold(&mut self, mut segment: Segment, outcomes: Vec<Vec<LineOutcome>>, pool: &BufferPool) {
        if self.next_index == 0 {
            self.had_bom = segment.had_bom;
        } else if !segment.chunks.is_empty() && segment.start != self.next_start {
            // Rewritten meanwhile: the file ends where the part before ended.
            self.ended = Some(Ok(Ok(())));
            return;
        }
        if !segment.chunks.is_empty() {
            self.next_start = segment.end;
        }
        for (mut chunk, outcomes) in std::mem::take(&mut segment.chunks)
            .into_iter()
            .zip(outcomes)
        {
            for line in &mut chunk.lines {
                line.number += self.next_line;
            }
            self.next_line += chunk.lines.len() as u64;
            self.builder.absorb(&chunk, outcomes);
        }
        if segment.at_eof {
            self.ended = Some(Ok(Ok(())));
            return;
        }
        pool.give_back(segment.into_spare());
        self.next_index += 1;
    }
}

/// Indexes a file too large to hold on `threads` threads (the calling thread and `threads - 1`
/// started) that each read a part of it by position (`read_at`: no reader thread hands chunks
/// out), frame it ([`read_segment`]: a line belongs to the part where it starts), parse its
/// lines while they are in cache, and fold what it can: the part the fold waits for and the
/// parts after it that are waiting, in file order, numbering the lines as it goes
/// ([`PartsFold`], under a lock). No channel, and a buffer comes back as soon as its part is
/// folded.
///
/// Memory is bounded as in [`index_in_parallel`]: a thread takes a buffer from a pool of
/// `2 × threads` ([`PARTS_PER_THREAD`]; [`BufferPool`], last returned first out) before it
/// claims the next part, and a buffer goes back only once its part is folded. The file ends at
/// the first part (in file order) that met its end as it was read, so a file growing meanwhile
/// is read on to where it ended then (as one reader reading on to the end would), and one that
/// shrank ends where the read found its end; a part whose first line does not start where the
/// part before it ended (the file was rewritten meanwhile) ends it there too. A part that
/// cannot be read is the error once the parts before it are folded; a panicking thread (a bug)
/// is re-raised here.
///
/// `read_at` fills what it is given from a file offset (`FileExt::read_at`), fewer bytes only
/// at the end of the file.
fn index_parts_in_parallel(
    read_at: impl Fn(&mut [u8], u64) -> std::io::Result<usize> + Sync,
    size: u64,
    threads: usize,
    part_len: usize,
) -> std::io::Result<(Builder, bool)> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next_part = AtomicUsize::new(0);
    // The first part known to have met the end of the file: no thread claims one after it.
    let last_part = AtomicUsize::new(usize::MAX);
    let pool = BufferPool::new(threads.max(1) * PARTS_PER_THREAD);
    let state = Mutex::new(PartsFold {
        builder: Builder::expecting(size),
        had_bom: false,
        waiting: BTreeMap::new(),
        next_index: 0,
        next_line: 1,
        next_start: 0,
        ended: None,
    });
    let lock = || {
        // A thread that panics while folding leaves the fold for its panic to end
        // (`ended` is set before the lock is released, or the pool closes as it unwinds).
        state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let work = || {
        // However this thread ends (a panic while folding: a bug), the others are released.
        let _close = ClosePool {
            pool: &pool,
            only_on_panic: true,
        };
        // `take` fails once the fold has ended: then stop.
        while let Some(buffer) = pool.take() {
            let index = next_part.fetch_add(1, Ordering::Relaxed);
            if index > last_part.load(Ordering::Relaxed) {
                return;
            }
            let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                read_segment(&read_at, index, part_len, buffer).map(|segment| {
                    let outcomes = segment.chunks.iter().map(parse_lines).collect();
                    (segment, outcomes)
                })
            }));
            // A thread stops after a part it could not read (or a bug it hit).
            let stop = !matches!(read, Ok(Ok(_)));
            if let Ok(Ok((segment, _))) = &read
                && segment.at_eof
            {
                last_part.fetch_min(index, Ordering::Relaxed);
            }
            let mut fold = lock();
            fold.waiting.insert(index, read);
            let folded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                fold.fold_waiting(&pool);
            }));
            if let Err(panic) = folded {
                fold.ended = Some(Err(panic));
                pool.close();
            }
            drop(fold);
            if stop {
                return;
            }
        }
    };
    // Each worker leaves this thread's core: a kernel that starts a thread where its parent
    // runs (and balances only later) would otherwise run both on one core for the whole read.
    let core = crate::scoped::StarterCore::current();
    std::thread::scope(|scope| {
        for _ in 1..threads {
            crate::scoped::spawn_off_core(scope, core, work);
        }
        work();
    });
    let fold = state
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match fold.ended {
        Some(Ok(Ok(()))) => Ok((fold.builder, fold.had_bom)),
        Some(Ok(Err(error))) => Err(error),
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        None => Err(std::io::Error::other(
            "the parallel read stopped before the end of the file",
        )),
    }
}

/// The `size` bytes of `file` (fewer if it shrank meanwhile), read straight into the shared
/// allocation the session keeps: no second copy of the file.
///
/// The buffer is written with zeros before the file is read into it. Measured (docs/perf.md):
/// reading into untouched capacity instead (`read_to_end`) moves every page fault into the
/// kernel's copy, where each costs more than the zeroing saved (5 MB `check`: 14.4 → 16.1 ms
/// CPU). A file of [`PARALLEL_READ_WHOLE_MIN_BYTES`] or more is zeroed and read in halves (or
/// more parts) on as many threads, so the page faults of a fresh buffer are taken on every
/// core instead of one (Unix: `read_at` of each part).
fn read_whole(file: &mut File, size: u64, options: &OpenOptions) -> std::io::Result<SharedBytes> {
    let len = usize::try_from(size).unwrap_or(0);
    #[cfg(unix)]
    if size >= PARALLEL_READ_WHOLE_MIN_BYTES {
        let threads = effective_threads(options.threads);
        if threads > 1 {
            return read_whole_in_parts(file, len, threads);
        }
    }
    #[cfg(not(unix))]
    let _ = options;
    // `vec!` hands out calloc's untouched pages; the fill takes their faults here, which costs
    // less than taking them in the kernel's copy (see above).
    let mut bytes = vec![0; len];
    bytes.fill(0);
    let filled = read_into(&mut bytes, |rest, _| file.read(rest))?;
    bytes.truncate(filled);
    Ok(Arc::new(bytes))
}

/// Files at least this large are read whole on several threads ([`read_whole`]).
#[cfg(unix)]
const PARALLEL_READ_WHOLE_MIN_BYTES: u64 = 1 << 20;

/// [`read_whole`] in `threads` parts of about equal size, each zeroed and read (`read_at`): the
/// first on this thread, the others on threads of their own that leave this thread's core
/// ([`crate::scoped::StarterCore`]). The file ends where the first part that came back short
/// ends (it shrank meanwhile): what later parts read is dropped, as a single read would never
/// have reached it.
#[cfg(unix)]
fn read_whole_in_parts(file: &File, len: usize, threads: usize) -> std::io::Result<SharedBytes> {
    use std::os::unix::fs::FileExt;
    // calloc's pages: untouched until each part's thread writes its zeros.
    let mut bytes = vec![0; len];
    // Each part starts on a cache line of the file, and so of the buffer where the allocator
    // hands out blocks on a cache line (mimalloc, the CLI's, does; glibc's large blocks sit
    // 16 bytes into their page): the kernel's copy is several times faster so
    // (`framing::aligned_lead`; the buffer's bytes are the file's from its first, so no lead).
    let part_len = len
        .div_ceil(threads)
        .next_multiple_of(crate::framing::CACHE_LINE)
        .max(1);
    // Each part zeroed and read: its length and how much of it the file filled.
    let results = crate::scoped::map_here_and_off_core(
        bytes.chunks_mut(part_len).enumerate(),
        |(at, part): (usize, &mut [u8])| -> std::io::Result<(usize, usize)> {
            part.fill(0);
            let start = at * part_len;
            let filled = read_into(part, |rest, before| {
                file.read_at(rest, (start + before) as u64)
            })?;
            Ok((part.len(), filled))
        },
    );
    let mut filled = 0;
    for result in results {
        let (part_len, part_filled) = result?;
        filled += part_filled;
        if part_filled < part_len {
            break;
        }
    }
    bytes.truncate(filled);
    Ok(Arc::new(bytes))
}

/// Indexes session bytes held in memory (an ephemeral session, a download, a test).
///
/// ```
/// let bytes = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_vec();
/// let (session, diagnostics) = pi_session_store::open_bytes(bytes);
/// assert!(session.is_empty() && diagnostics.is_empty());
/// ```
pub fn open_bytes(bytes: impl Into<SharedBytes>) -> (SessionFile, Vec<Diagnostic>) {
    open_bytes_with(bytes, &OpenOptions::default())
}

/// [`open_bytes`] with explicit [`OpenOptions`] (`keep_in_memory_up_to` does not apply).
pub fn open_bytes_with(
    bytes: impl Into<SharedBytes>,
    options: &OpenOptions,
) -> (SessionFile, Vec<Diagnostic>) {
    let bytes: SharedBytes = bytes.into();
    let source = Source::Memory {
        path: None,
        bytes: Arc::clone(&bytes),
    };
    index_shared(bytes, source, options)
}

/// Indexes bytes held in memory, framed in place ([`SharedChunks`]: never copied).
fn index_shared(
    bytes: SharedBytes,
    source: Source,
    options: &OpenOptions,
) -> (SessionFile, Vec<Diagnostic>) {
    let size = bytes.len() as u64;
    match index_chunks(
        SharedChunks::new(bytes, options.buffer_bytes),
        size,
        options,
    ) {
        Ok((builder, had_bom)) => {
            let (mut file, diagnostics) = builder.finish(source, had_bom);
            file.read_threads = options.threads;
            (file, diagnostics)
        }
        // Framing bytes in memory cannot fail; keep the signature infallible all the same.
        Err(_) => (SessionFile::empty(), Vec::new()),
    }
}

pub(crate) fn index_reader<R: Read + Send>(
    reader: R,
    size: u64,
    source: Source,
    options: &OpenOptions,
) -> std::io::Result<(SessionFile, Vec<Diagnostic>)> {
    index_stream(reader, size, options, |_| source)
}

/// Indexes the `size` bytes `reader` streams (chunks framed and parsed as they arrive), then
/// asks `source` for where the entries are to be read from, given the drained reader (a keyed
/// store's stream hands over the bytes it kept).
pub(crate) fn index_stream<R: Read + Send>(
    mut reader: R,
    size: u64,
    options: &OpenOptions,
    source: impl FnOnce(&mut R) -> Source,
) -> std::io::Result<(SessionFile, Vec<Diagnostic>)> {
    let chunks = ChunkReader::new(&mut reader, options.buffer_bytes);
    let (builder, had_bom) = index_chunks(chunks, size, options)?;
    let (mut file, diagnostics) = builder.finish(source(&mut reader), had_bom);
    file.read_threads = options.threads;
    Ok((file, diagnostics))
}

/// Parses and folds every chunk: on this thread for small inputs, else in a pipeline.
fn index_chunks<C: Chunks>(
    chunks: C,
    size: u64,
    options: &OpenOptions,
) -> std::io::Result<(Builder, bool)> {
    // A small file is indexed here without asking how many cores there are (read from the
    // cgroup files: a visible share of a small file's open).
    if size < PARALLEL_MIN_BYTES || fits_one_chunk(size, options) {
        return index_sequentially(chunks, size);
    }
    match effective_threads(options.threads) {
        0 | 1 => index_sequentially(chunks, size),
        threads => index_in_parallel(chunks, threads, size),
    }
}

/// Whether an input of `size` bytes is one chunk ([`OpenOptions::buffer_bytes`]): only one
/// thread could parse it, so it is parsed on the calling thread (a reader and two parsers
/// started for a 700 KB file cost more than they saved).
fn fits_one_chunk(size: u64, options: &OpenOptions) -> bool {
    size <= options.buffer_bytes as u64
}

fn effective_threads(requested: usize) -> usize {
    if requested > 0 {
        return requested;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(4))
}

fn index_sequentially<C: Chunks>(mut chunks: C, size: u64) -> std::io::Result<(Builder, bool)> {
    let mut builder = Builder::expecting(size);
    let mut spare = None;
    while let Some(chunk) = chunks.next_chunk(spare.take())? {
        let outcomes = parse_lines(&chunk);
        builder.absorb(&chunk, outcomes);
        spare = Some(chunk.bytes.into_spare());
    }
    Ok((builder, chunks.had_bom()))
}

/// A pipeline: one thread reads chunks, `threads` workers parse whole chunks, and this thread
/// folds the results in file order (a small reorder buffer holds chunks that finish early).
/// Reading overlaps parsing, and no worker waits for another.
///
/// Memory is bounded by a pool of `3 × threads` buffers: the reader must take a buffer from the
/// pool before reading a chunk, and a buffer returns to the pool only once its chunk has been
/// folded. However slow one worker is, no more than that many chunks exist at once. A panicking
/// worker (a bug) is caught and re-raised here, after the other threads have been released.
fn index_in_parallel<C: Chunks>(
    mut chunks: C,
    threads: usize,
    size: u64,
) -> std::io::Result<(Builder, bool)> {
    type Parsed = std::thread::Result<(Chunk, Vec<LineOutcome>)>;
    let (chunk_tx, chunk_rx) = mpsc::sync_channel::<Chunk>(threads);
    let chunk_rx = Mutex::new(chunk_rx);
    let (done_tx, done_rx) = mpsc::channel::<Parsed>();
    let pool = BufferPool::new(threads * 3);
    std::thread::scope(|scope| {
        let pool = &pool;
        // However the fold ends, the reader waiting for a buffer is released.
        let close = ClosePool {
            pool,
            only_on_panic: false,
        };
        let reader = scope.spawn(move || -> std::io::Result<bool> {
            // `take` fails only when the folding side has stopped: then stop too.
            while let Some(buffer) = pool.take() {
                let Some(chunk) = chunks.next_chunk(Some(buffer))? else {
                    break;
                };
                if chunk_tx.send(chunk).is_err() {
                    break;
                }
            }
            Ok(chunks.had_bom())
        });
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let chunk_rx = &chunk_rx;
            scope.spawn(move || {
                loop {
                    let next = match chunk_rx.lock() {
                        Ok(receiver) => receiver.recv(),
                        Err(_) => return,
                    };
                    let Ok(chunk) = next else { return };
                    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let outcomes = parse_lines(&chunk);
                        (chunk, outcomes)
                    }));
                    let failed = parsed.is_err();
                    if done_tx.send(parsed).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut builder = Builder::expecting(size);
        let mut waiting = BTreeMap::new();
        let mut next_seq = 0;
        for parsed in done_rx {
            let (chunk, outcomes) = match parsed {
                Ok(parsed) => parsed,
                // The pool closes as this unwinds: that releases the reader and through it the
                // workers.
                Err(panic) => std::panic::resume_unwind(panic),
            };
            waiting.insert(chunk.seq, (chunk, outcomes));
            while let Some((chunk, outcomes)) = waiting.remove(&next_seq) {
                builder.absorb(&chunk, outcomes);
                next_seq += 1;
                pool.give_back(chunk.bytes.into_spare());
            }
        }
        drop(close);
        let had_bom = match reader.join() {
            Ok(result) => result?,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        Ok((builder, had_bom))
    })
}

/// What one physical line turned out to be (computed independently of other lines).
#[derive(Debug)]
enum LineOutcome {
    Blank,
    /// One value (the line's whole content): no allocation per line beyond its envelope's
    /// strings.
    Value(ReadValue),
    /// Several fused values, each with its byte range inside the chunk.
    Values(Vec<(Range<usize>, Result<ReadValue, LineError>)>),
    Failed(LineError),
}

/// One value's envelope in the index's form, with the repairs reading it took and the keys it
/// may hold.
#[derive(Debug)]
struct ReadValue {
    envelope: IndexEnvelope,
    warnings: Vec<ParseWarning>,
    /// From [`scan_envelope`]; [`KeyFilter::ANY`] for a value read any other way.
    keys: KeyFilter,
    /// From [`scan_envelope`]; [`Strings::Unknown`] for a value read any other way.
    strings: Strings,
    /// From [`scan_envelope`] ([`Scanned::message_at`], packed: [`MessageAt::to_packed`]); 0
    /// for a value read any other way.
    ///
    /// [`MessageAt::to_packed`]: pi_session_types::envelope_scan::MessageAt::to_packed
    ///
    /// [`Scanned::message_at`]: pi_session_types::envelope_scan::Scanned::message_at
    message_at: u32,
}

/// Reads the envelope of one value: borrowed from the line and copied once, into the index's
/// form (one allocation); a line the borrowing parse rejects takes [`parse_envelope`], which
/// repairs what it can (lone surrogates, invalid UTF-8) or gives the error.
fn read_envelope(bytes: &[u8]) -> Result<ReadValue, LineError> {
    match parse_envelope_ref(bytes) {
        Ok(envelope) => Ok(ReadValue::clean(
            &envelope,
            KeyFilter::ANY,
            Strings::Unknown,
            None,
        )),
        Err(_) => parse_envelope(bytes).map(|envelope| ReadValue {
            envelope: IndexEnvelope::from(&envelope),
            warnings: envelope.warnings,
            keys: KeyFilter::ANY,
            strings: Strings::Unknown,
            message_at: 0,
        }),
    }
}

impl ReadValue {
    /// A borrowed envelope read without a repair or warning, copied into the index's form,
    /// with the filter of the keys its line may hold and what is known of its strings.
    fn clean(
        envelope: &EnvelopeRef<'_>,
        keys: KeyFilter,
        strings: Strings,
        message_at: Option<pi_session_types::envelope_scan::MessageAt>,
    ) -> Self {
        Self {
            envelope: IndexEnvelope::new(
                &envelope.kind,
                envelope.id.as_deref(),
                envelope.parent_id.as_deref(),
                envelope.timestamp.as_deref(),
            ),
            warnings: Vec::new(),
            keys,
            strings,
            message_at: message_at.map_or(0, |at| at.to_packed()),
        }
    }
}

fn parse_lines(chunk: &Chunk) -> Vec<LineOutcome> {
    chunk
        .lines
        .iter()
        .map(|line| parse_one(&chunk.bytes, line))
        .collect()
}

fn parse_one(bytes: &[u8], line: &LineSpan) -> LineOutcome {
    let content = &bytes[line.content.clone()];
    if is_blank(content) {
        return LineOutcome::Blank;
    }
    // One scan of the line answers for ordinary lines; anything unusual takes the path below,
    // unchanged.
    if let Some(scanned) = scan_envelope(content) {
        return LineOutcome::Value(ReadValue::clean(
            &scanned.envelope,
            scanned.keys,
            Strings::of_scanned(&scanned),
            scanned.message_at,
        ));
    }
    match read_envelope(content) {
        Ok(envelope) => LineOutcome::Value(with_encoding_warnings(content, envelope)),
        Err(error @ LineError::NotJson { .. }) => match split_fused(content) {
            Some(ranges) => LineOutcome::Values(
                ranges
                    .into_iter()
                    .map(|r| {
                        let absolute = line.content.start + r.start..line.content.start + r.end;
                        let result = read_envelope(&bytes[absolute.clone()]);
                        (absolute, result)
                    })
                    .collect(),
            ),
            None => LineOutcome::Failed(error),
        },
        Err(error) => LineOutcome::Failed(error),
    }
}

/// The envelope parse skips the strings it does not need without decoding them, so a lone
/// surrogate escape, invalid UTF-8 or a code point of the carrier range there goes unnoticed.
/// Lines that may hold one ([`may_warn`]) get the full typed parse, which reads them and says
/// so; the warnings are added to the envelope.
fn with_encoding_warnings(content: &[u8], mut envelope: ReadValue) -> ReadValue {
    if may_warn(content)
        && envelope.warnings.is_empty()
        && let Ok(parsed) = parse_line(content)
    {
        envelope.warnings = parsed
            .warnings
            .into_iter()
            .filter(|w| warning_kind(w).is_some())
            .collect();
    }
    envelope
}

/// Whether a line's full parse may warn of what the envelope parse skips: the line is not
/// UTF-8, holds the bytes `\ud`/`\uD` somewhere, or a byte 0xF4 (U+10F800–U+10FFFF start with
/// it). [`scan_envelope`] is sure of no line this holds for.
fn may_warn(content: &[u8]) -> bool {
    /// Built once: a `Finder` costs more to make than to run over a short line.
    static ESCAPE: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\\u"));
    std::str::from_utf8(content).is_err()
        || ESCAPE
            .find_iter(content)
            .any(|at| matches!(content.get(at + 2), Some(b'd' | b'D')))
        || memchr::memchr(0xF4, content).is_some()
}

/// Folds line outcomes, in file order, into a [`SessionFile`].
#[derive(Debug, Default)]
struct Builder {
    entries: Vec<IndexEntry>,
    /// The key filter of each entry's line, beside `entries`.
    keys: Vec<KeyFilter>,
    /// What the open's scan proved of each entry's strings, beside `entries`.
    strings: Vec<Strings>,
    /// Where the open's scan found each entry's line's message (0: it did not), beside
    /// `entries`.
    message_at: Vec<u32>,
    diagnostics: DiagnosticLog,
    header: Option<SessionHeader>,
    /// (line, byte offset) of the header.
    header_at: Option<(u64, u64)>,
    header_rejected: bool,
    title_slot: Option<TitleSlot>,
    /// (line, byte offset) of the first entry, when it came before any header.
    first_entry_before_header: Option<(u64, u64)>,
    /// Parsed JSON values in file order, as pi's migration array counts them.
    ordinals: Vec<Ordinal>,
    /// Whether the last physical line ended with `\n` (true for an empty file).
    ends_with_newline: bool,
    len: u64,
    /// The size of the input, from which the first chunk's entries estimate how many to make
    /// room for.
    expected_size: u64,
    /// Whether [`Builder::make_room`] has made room.
    room_made: bool,
}

impl Builder {
    fn expecting(size: u64) -> Self {
        Self {
            expected_size: size,
            ..Self::default()
        }
    }

    /// Makes room, after the first chunk, for as many entries as the input holds at that
    /// chunk's entries per byte (a quarter more): the index is not grown (copied) again and
    /// again. Only address space is asked for (pages are touched as entries come), at most one
    /// entry per two bytes, nothing for a first chunk of damage; a request the allocator
    /// refuses is dropped.
    fn make_room(&mut self) {
        if self.room_made || self.len == 0 {
            return;
        }
        self.room_made = true;
        let entries = self.entries.len() as u64;
        let at_this_rate = self.expected_size.saturating_mul(entries) / self.len;
        let estimate = at_this_rate
            .saturating_add(at_this_rate / 4)
            .min(self.expected_size / 2)
            .saturating_sub(entries);
        let estimate = usize::try_from(estimate).unwrap_or(0);
        let _ = self.entries.try_reserve(estimate);
        let _ = self.keys.try_reserve(estimate);
        let _ = self.strings.try_reserve(estimate);
        let _ = self.message_at.try_reserve(estimate);
    }

    fn absorb(&mut self, chunk: &Chunk, outcomes: Vec<LineOutcome>) {
        self.len = chunk.base_offset + chunk.bytes.len() as u64;
        for (line, outcome) in chunk.lines.iter().zip(outcomes) {
            self.ends_with_newline = line.terminated;
            let offset = chunk.base_offset + line.content.start as u64;
            match outcome {
                LineOutcome::Blank => {}
                LineOutcome::Failed(error) => self.failed_line(line, offset, &error),
                LineOutcome::Value(envelope) => {
                    self.value(
                        line.number,
                        offset,
                        &chunk.bytes[line.content.clone()],
                        envelope,
                    );
                }
                LineOutcome::Values(values) => {
                    if values.len() > 1 {
                        let kind = DiagnosticKind::FusedObjects {
                            count: values.len(),
                        };
                        self.diagnostics
                            .push(Diagnostic::new(line.number, offset, kind));
                    }
                    for (range, result) in values {
                        let at = chunk.base_offset + range.start as u64;
                        match result {
                            Ok(envelope) => {
                                self.value(line.number, at, &chunk.bytes[range], envelope)
                            }
                            Err(error) => self.failed_line(line, at, &error),
                        }
                    }
                }
            }
        }
        self.make_room();
    }

    /// Counts one parsed JSON value, as pi's migration array does; only a version 1 file
    /// needs them (or one whose header has not come yet), so others keep none.
    fn ordinal(&mut self, ordinal: Ordinal) {
        let needed = match &self.header {
            Some(header) => header.version_or_1() < 2,
            None => !self.header_rejected,
        };
        if needed {
            self.ordinals.push(ordinal);
        }
    }

    fn failed_line(&mut self, line: &LineSpan, offset: u64, error: &LineError) {
        let Some(kind) = DiagnosticKind::for_line_error(error, line.terminated) else {
            return;
        };
        if !matches!(error, LineError::NotJson { .. }) {
            // Valid JSON: pi's parsed array (and so v1 `firstKeptEntryIndex`) counts it.
            self.ordinal(Ordinal::Other);
        }
        self.diagnostics
            .push(Diagnostic::new(line.number, offset, kind));
    }

    fn value(&mut self, line: u64, offset: u64, bytes: &[u8], read: ReadValue) {
        for warning in &read.warnings {
            if let Some(kind) = warning_kind(warning) {
                self.diagnostics.push(Diagnostic::new(line, offset, kind));
            }
        }
        let envelope = read.envelope;
        if envelope.kind() == tags::Title::VALUE {
            self.title_line(line, offset, bytes);
        } else if envelope.kind() == tags::Session::VALUE {
            self.header_line(line, offset, bytes);
        } else {
            if self.header_at.is_none()
                && !self.header_rejected
                && self.first_entry_before_header.is_none()
            {
                self.first_entry_before_header = Some((line, offset));
            }
            self.ordinal(Ordinal::Entry(self.entries.len()));
            self.entries.push(IndexEntry {
                line,
                byte_offset: offset,
                byte_len: bytes.len() as u64,
                envelope,
            });
            self.keys.push(read.keys);
            self.strings.push(read.strings);
            self.message_at.push(read.message_at);
        }
    }

    fn title_line(&mut self, line: u64, offset: u64, bytes: &[u8]) {
        let detail = if line != 1 || offset > 3 {
            "it is not the first line".to_owned()
        } else {
            match parse_line(bytes) {
                Ok(parsed) => match parsed.value {
                    ParsedLine::TitleSlot(slot) => {
                        self.title_slot = Some(slot);
                        return;
                    }
                    _ => "it does not follow omp's slot rules (v 1; string title, updatedAt, pad)"
                        .to_owned(),
                },
                Err(error) => error.to_string(),
            }
        };
        self.diagnostics.push(Diagnostic::new(
            line,
            offset,
            DiagnosticKind::InvalidTitleSlot { detail },
        ));
    }

    fn header_line(&mut self, line: u64, offset: u64, bytes: &[u8]) {
        self.ordinal(Ordinal::Header);
        if let Some((first_line, _)) = self.header_at {
            self.diagnostics.push(Diagnostic::new(
                line,
                offset,
                DiagnosticKind::DuplicateHeader { first_line },
            ));
            return;
        }
        if self.header_rejected {
            return;
        }
        match parse_line(bytes).map(|p| p.value) {
            Ok(ParsedLine::Header(header)) => {
                if header.version_or_1() >= 2 {
                    // Only version 1 migrates by ordinal: free what was counted so far.
                    self.ordinals = Vec::new();
                }
                self.header = Some(header);
                self.header_at = Some((line, offset));
            }
            other => {
                let detail = match other {
                    Err(error) => error.to_string(),
                    Ok(_) => "its `id` is not a string".to_owned(),
                };
                self.header_rejected = true;
                self.diagnostics.push(Diagnostic::new(
                    line,
                    offset,
                    DiagnosticKind::InvalidHeader { detail },
                ));
            }
        }
    }

    fn finish(mut self, source: Source, had_bom: bool) -> (SessionFile, Vec<Diagnostic>) {
        if had_bom {
            self.diagnostics
                .push(Diagnostic::new(1, 0, DiagnosticKind::ByteOrderMark));
        }
        self.check_header_position();
        self.fold_title_slot();
        let file_version = self
            .header
            .as_ref()
            .map_or(CURRENT_VERSION, SessionHeader::version_or_1);
        let migration = self.migrate();
        // The index stays as long as the session: no growth slack.
        self.entries.shrink_to_fit();
        self.keys.shrink_to_fit();
        self.strings.shrink_to_fit();
        self.message_at.shrink_to_fit();
        let table = self.check_ids();
        let file = SessionFile {
            source,
            header: self.header,
            header_line: self.header_at.map(|(line, _)| line),
            title_slot: self.title_slot,
            table: Arc::new(table),
            migration,
            file_version,
            byte_len: self.len,
            ends_with_newline: self.ends_with_newline || self.len == 0,
            read_threads: 0,
            kept_file: None,
        };
        (file, self.diagnostics.finish())
    }

    fn check_header_position(&mut self) {
        match (self.header_at, self.first_entry_before_header) {
            (None, _) if !self.header_rejected => {
                self.diagnostics
                    .push(Diagnostic::new(1, 0, DiagnosticKind::MissingHeader));
            }
            (Some((header_line, _)), Some((line, offset))) => {
                self.diagnostics.push(Diagnostic::new(
                    line,
                    offset,
                    DiagnosticKind::EntryBeforeHeader { header_line },
                ));
            }
            _ => {}
        }
    }

    /// omp's `applyTitleSlot`: a valid slot's title wins (empty clears), and its source too.
    fn fold_title_slot(&mut self) {
        if let (Some(slot), Some(header)) = (&self.title_slot, &mut self.header) {
            header.title = slot.title().map(str::to_owned);
            header.title_source = slot.source.map(|s| s.as_str().to_owned());
        }
    }

    fn migrate(&mut self) -> Migration {
        let Some(header) = &self.header else {
            return Migration::None;
        };
        let version = header.version_or_1();
        let (line, offset) = self.header_at.unwrap_or((1, 0));
        if version > CURRENT_VERSION {
            self.diagnostics.push(Diagnostic::new(
                line,
                offset,
                DiagnosticKind::NewerVersion { version },
            ));
            return Migration::None;
        }
        if version == CURRENT_VERSION {
            return Migration::None;
        }
        // As pi's getHeader() after migrating: the header says version 3 (`file_version` keeps
        // what the file says).
        if let Some(header) = &mut self.header {
            header.version = Some(pi_session_types::JsonNumber::from(CURRENT_VERSION));
        }
        if version == 2 {
            let how = "hookMessage roles read as custom";
            self.diagnostics.push(Diagnostic::new(
                line,
                offset,
                DiagnosticKind::Migrated { from: version, how },
            ));
            return Migration::FromV2;
        }
        let how = "ids and parents generated from byte offsets, the same on every open; firstKeptEntryIndex read as firstKeptEntryId; hookMessage roles read as custom";
        self.diagnostics.push(Diagnostic::new(
            line,
            offset,
            DiagnosticKind::Migrated { from: version, how },
        ));
        let mut ids = IdGenerator::default();
        let mut previous: Option<String> = None;
        for entry in &mut self.entries {
            let id = ids.id_for(entry.byte_offset);
            let parent = previous.replace(id.clone());
            entry.envelope = entry.envelope.with_ids(Some(&id), parent.as_deref());
        }
        Migration::FromV1 {
            ordinals: std::mem::take(&mut self.ordinals),
        }
    }

    /// Builds the entry table (id lookup, a later duplicate winning as in pi and omp, and parent
    /// links) and reports duplicate, missing and dangling ids.
    fn check_ids(&mut self) -> EntryTable {
        let table = EntryTable::new(
            std::mem::take(&mut self.entries),
            std::mem::take(&mut self.keys),
            std::mem::take(&mut self.strings),
            std::mem::take(&mut self.message_at),
        );
        let entries = table.entries();
        let mut duplicates = table.duplicate_ids().iter().peekable();
        for (index, entry) in entries.iter().enumerate() {
            if entry.envelope.id().is_none() {
                self.diagnostics.push(Diagnostic::new(
                    entry.line,
                    entry.byte_offset,
                    DiagnosticKind::MissingId,
                ));
            }
            let Some(&(first, _)) = duplicates.next_if(|&&(_, at)| at == index) else {
                continue;
            };
            let kind = DiagnosticKind::DuplicateId {
                id: entry.envelope.id().unwrap_or_default().to_owned(),
                first_line: entries[first].line,
            };
            self.diagnostics
                .push(Diagnostic::new(entry.line, entry.byte_offset, kind));
        }
        for (index, entry) in entries.iter().enumerate() {
            let Some(parent) = entry.envelope.parent_id() else {
                continue;
            };
            // A named parent that resolved is there; an empty one is looked up as it is.
            let found = match named_parent(Some(parent)) {
                Some(_) => table.parent_position(index).is_some(),
                None => table.position_of(parent).is_some(),
            };
            if !found {
                let kind = DiagnosticKind::ParentNotFound {
                    parent_id: parent.to_owned(),
                };
                self.diagnostics
                    .push(Diagnostic::new(entry.line, entry.byte_offset, kind));
            }
        }
        table
    }
}

fn warning_kind(warning: &ParseWarning) -> Option<DiagnosticKind> {
    DiagnosticKind::for_warning(warning)
}

/// The path of a source, for error messages.
pub(crate) fn display_path(path: Option<&Path>) -> PathBuf {
    path.map_or_else(|| PathBuf::from("<memory>"), Path::to_path_buf)
}

#[cfg(test)]
mod parts_tests {
    use super::{Builder, index_parts_in_parallel, index_sequentially};
    use crate::framing::ChunkReader;
    use crate::session_file::Source;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A session of `entries` label entries in a chain, with a damaged line now and then.
    fn session(entries: usize) -> Vec<u8> {
        let mut bytes = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_vec();
        bytes.push(b'\n');
        for at in 0..entries {
            let parent = at
                .checked_sub(1)
                .map_or("null".to_owned(), |p| format!("\"e{p}\""));
            let line = format!(
                r#"{{"type":"label","id":"e{at}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","label":"{}"}}"#,
                "x".repeat(at % 50)
            );
            bytes.extend_from_slice(line.as_bytes());
            bytes.extend_from_slice(if at % 17 == 3 { b"}\n" } else { b"\n" });
        }
        bytes
    }

    fn finished((builder, had_bom): (Builder, bool)) -> (Vec<crate::IndexEntry>, Vec<String>) {
        let (file, diagnostics) = builder.finish(Source::File("s.jsonl".into()), had_bom);
        let entries = file.index().to_vec();
        (
            entries,
            diagnostics.iter().map(ToString::to_string).collect(),
        )
    }

    fn sequential(bytes: &[u8]) -> (Vec<crate::IndexEntry>, Vec<String>) {
        finished(index_sequentially(ChunkReader::new(bytes, 64), bytes.len() as u64).unwrap())
    }

    /// A `read_at` over bytes that `change` changes just before the first read of part 1 (parts
    /// of 256 bytes: it reads from byte 255).
    fn reader<'a>(
        bytes: &'a Mutex<Vec<u8>>,
        changed: &'a AtomicBool,
        change: impl Fn(&mut Vec<u8>) + Sync + 'a,
    ) -> impl Fn(&mut [u8], u64) -> std::io::Result<usize> + Sync + 'a {
        move |into, at| {
            let mut bytes = bytes.lock().unwrap();
            if at == 255 && !changed.swap(true, Ordering::Relaxed) {
                change(&mut bytes);
            }
            let rest = bytes.get(at as usize..).unwrap_or_default();
            let n = rest.len().min(into.len());
            into[..n].copy_from_slice(&rest[..n]);
            Ok(n)
        }
    }

    #[test]
    fn parts_on_any_number_of_threads_give_what_one_reader_gives() {
        let bytes = session(300);
        let expected = sequential(&bytes);
        assert!(expected.1.len() > 10, "damaged lines are reported");
        for (threads, part_len) in [(1, 64), (2, 16), (2, 100), (3, 257), (4, 1 << 20)] {
            let read_at = |into: &mut [u8], at: u64| {
                // Every read lands where its bytes sit in a cache line (`aligned_lead`).
                assert_eq!(
                    into.as_ptr().addr() % crate::framing::CACHE_LINE,
                    at as usize % crate::framing::CACHE_LINE,
                    "the read at {at}"
                );
                let rest = bytes.get(at as usize..).unwrap_or_default();
                let n = rest.len().min(into.len());
                into[..n].copy_from_slice(&rest[..n]);
                Ok(n)
            };
            let parts = index_parts_in_parallel(read_at, bytes.len() as u64, threads, part_len);
            assert_eq!(
                finished(parts.unwrap()),
                expected,
                "{threads} threads, parts of {part_len}"
            );
        }
    }

    #[test]
    fn a_file_growing_while_it_is_read_is_read_to_its_new_end() {
        let (before, after) = (session(100), session(200));
        let bytes = Mutex::new(before.clone());
        let changed = AtomicBool::new(false);
        let grow = |bytes: &mut Vec<u8>| bytes.clone_from(&after);
        let read_at = reader(&bytes, &changed, grow);
        // One worker: the parts are read in order, the first before the file grew.
        let parts = index_parts_in_parallel(read_at, before.len() as u64, 1, 256).unwrap();
        assert_eq!(finished(parts), sequential(&after));
    }

    #[test]
    fn a_part_not_starting_where_the_last_ended_ends_the_file_there() {
        // Rewritten after the first part was read: the same lines 20 bytes further on.
        let long = session(200);
        let bytes = Mutex::new(long.clone());
        let changed = AtomicBool::new(false);
        let shift = |bytes: &mut Vec<u8>| {
            bytes.splice(0..0, *b"{\"type\":\"x\"}\n{\"type\":\"y\"}\n  \n");
        };
        let read_at = reader(&bytes, &changed, shift);
        let parts = index_parts_in_parallel(read_at, long.len() as u64, 1, 256).unwrap();
        let first_part_end = 255 + memchr::memchr(b'\n', &long[255..]).unwrap() + 1;
        assert_eq!(finished(parts), sequential(&long[..first_part_end]));
    }

    #[test]
    fn a_file_shrinking_or_rewritten_while_it_is_read_ends_where_the_read_found_its_end() {
        let (long, short) = (session(200), session(60));
        for threads in [1, 2, 3] {
            for change in [
                |bytes: &mut Vec<u8>| bytes.truncate(bytes.len() / 3),
                |bytes: &mut Vec<u8>| bytes.clone_from(&session(60)),
                |bytes: &mut Vec<u8>| bytes.iter_mut().step_by(7).for_each(|b| *b = b'\n'),
            ] {
                let bytes = Mutex::new(long.clone());
                let changed = AtomicBool::new(false);
                let read_at = reader(&bytes, &changed, change);
                let (entries, _) = finished(
                    index_parts_in_parallel(read_at, long.len() as u64, threads, 256).unwrap(),
                );
                // Every entry is a line of one of the two versions, in file order.
                let now = bytes.lock().unwrap().clone();
                for pair in entries.windows(2) {
                    assert!(pair[0].byte_offset < pair[1].byte_offset);
                }
                for entry in &entries {
                    let range =
                        entry.byte_offset as usize..(entry.byte_offset + entry.byte_len) as usize;
                    assert!(long.get(range.clone()).is_some() || now.get(range).is_some());
                }
                assert!(entries.len() <= 200 + short.len());
            }
        }
    }
    #[test]
    fn one_thread_reads_every_part_into_the_buffer_folded_last() {
        // The part is folded, its buffer handed back, before the next part is claimed: taken
        // last in, first out, that one buffer is read into again (a pool handing buffers round
        // in turn would fault in all three).
        let bytes = session(300);
        let buffers = Mutex::new(std::collections::BTreeSet::new());
        let read_at = |into: &mut [u8], at: u64| {
            if (at + 1).is_multiple_of(256) || at == 0 {
                buffers.lock().unwrap().insert(into.as_ptr() as usize);
            }
            let rest = bytes.get(at as usize..).unwrap_or_default();
            let n = rest.len().min(into.len());
            into[..n].copy_from_slice(&rest[..n]);
            Ok(n)
        };
        let parts = index_parts_in_parallel(read_at, bytes.len() as u64, 1, 256).unwrap();
        assert_eq!(finished(parts), sequential(&bytes));
        assert!(bytes.len() > 10 * 256);
        // Each read starts within a cache line of the buffer's start (`aligned_lead`): one
        // buffer when the reads start less than a line apart.
        let buffers = buffers.lock().unwrap();
        let (first, last) = (buffers.first().unwrap(), buffers.last().unwrap());
        assert!(last - first < crate::framing::CACHE_LINE, "{buffers:?}");
    }

    #[test]
    fn a_part_that_cannot_be_read_is_the_error_on_any_number_of_threads() {
        let bytes = session(300);
        for threads in [1, 2, 3] {
            let read_at = |into: &mut [u8], at: u64| {
                if at >= 2_000 {
                    return Err(std::io::Error::other("bad sector"));
                }
                let rest = bytes.get(at as usize..).unwrap_or_default();
                let n = rest.len().min(into.len());
                into[..n].copy_from_slice(&rest[..n]);
                Ok(n)
            };
            let error = index_parts_in_parallel(read_at, bytes.len() as u64, threads, 256)
                .err()
                .map(|e| e.to_string());
            assert_eq!(error.as_deref(), Some("bad sector"), "{threads} threads");
        }
    }

    #[test]
    fn the_pool_hands_out_the_buffer_returned_last_and_releases_waiters_when_closed() {
        let pool = super::BufferPool::new(0);
        pool.give_back(vec![1]);
        pool.give_back(vec![2]);
        assert_eq!(pool.take(), Some(vec![2]));
        assert_eq!(pool.take(), Some(vec![1]));
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| pool.take());
            pool.close();
            assert_eq!(waiter.join().unwrap(), None);
        });
        pool.give_back(vec![3]);
        assert_eq!(pool.take(), None);
    }
}

#[cfg(test)]
mod part_len_tests {
    use super::{MIN_PART_BYTES, OPEN_PARTS, PART_BYTES, part_len};

    /// A short file is cut into about [`OPEN_PARTS`] parts, never smaller than the least; a
    /// long one into parts of the most; each a multiple of 4 KiB.
    #[test]
    fn a_short_file_is_cut_into_smaller_parts() {
        let five_mb = 5_342_551;
        assert_eq!(part_len(five_mb), 131_072);
        assert_eq!(part_len(1 << 20), MIN_PART_BYTES as usize);
        assert_eq!(part_len(0), MIN_PART_BYTES as usize);
        assert_eq!(part_len(200 << 20), PART_BYTES);
        assert_eq!(part_len(u64::MAX), PART_BYTES);
        for size in [
            300_000, 2_199_095, five_mb, 8_000_000, 10_485_760, 27_559_953,
        ] {
            let len = part_len(size);
            assert_eq!(len % 4096, 0, "{size}");
            assert!(
                (MIN_PART_BYTES as usize..=PART_BYTES).contains(&len),
                "{size}"
            );
            let parts = size.div_ceil(len as u64);
            assert!(
                parts >= OPEN_PARTS || len == MIN_PART_BYTES as usize || len == PART_BYTES,
                "{size}: {parts} parts of {len}"
            );
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::read_whole_in_parts;
    use std::io::Write;

    /// A file of `len` bytes that differ from their neighbours (a part read at a wrong offset
    /// shows).
    fn file_of(len: usize) -> std::io::Result<(tempfile::NamedTempFile, Vec<u8>)> {
        let bytes: Vec<u8> = (0..len).map(|at| (at % 251) as u8).collect();
        let mut file = tempfile::NamedTempFile::new()?;
        file.write_all(&bytes)?;
        Ok((file, bytes))
    }

    #[test]
    fn parts_read_the_whole_file_in_order() {
        for (len, threads) in [(0, 2), (1, 2), (7, 3), (1 << 20, 2), ((1 << 20) + 13, 4)] {
            let (file, bytes) = file_of(len).unwrap();
            let read = read_whole_in_parts(file.as_file(), len, threads).unwrap();
            assert_eq!(*read, bytes, "{len} bytes on {threads} threads");
        }
    }

    #[test]
    fn a_file_shorter_than_its_size_ends_where_it_ends() {
        // As if it shrank between the size and the read: the bytes there are, nothing more.
        let (file, bytes) = file_of(1000).unwrap();
        let read = read_whole_in_parts(file.as_file(), 1500, 2).unwrap();
        assert_eq!(*read, bytes);
        let read = read_whole_in_parts(file.as_file(), 4000, 3).unwrap();
        assert_eq!(*read, bytes);
    }

    /// A file may be opened on threads from 256 KiB on (the size the open starts workers
    /// at), not below it, and a directory or a missing path never.
    #[test]
    fn a_file_may_be_opened_on_threads_from_the_size_the_open_starts_workers_at() {
        let limit = super::PARALLEL_MIN_BYTES as usize;
        let (short, _) = file_of(limit - 1).unwrap();
        let (long, _) = file_of(limit).unwrap();
        assert!(!super::may_open_on_threads(short.path()));
        assert!(super::may_open_on_threads(long.path()));
        let dir = tempfile::tempdir().unwrap();
        assert!(!super::may_open_on_threads(dir.path()));
        assert!(!super::may_open_on_threads(
            &dir.path().join("missing.jsonl")
        ));
    }
}

#[cfg(test)]
#[path = "open_scan_tests.rs"]
mod scan_tests;
