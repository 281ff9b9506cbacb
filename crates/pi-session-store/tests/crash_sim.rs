//! The crash simulator: deterministic simulation of power loss under the writer, as TigerBeetle
//! and FoundationDB test their storage.
//!
//! A [`SimFs`] (the writer's file I/O, through `pi_session_store::vfs`) keeps files in memory and
//! logs every write, truncation, sync, name change and directory sync. A random workload (the
//! file created, appends of all sizes in every [`Durability`], title slot rewrites, foreign
//! appends by a lock-free pi — some torn —, flushes, leaf moves, writers closed and resumed,
//! injected write and truncate errors) runs to its end; then, for **every prefix of the log**
//! (a crash after each operation), several disks that a power loss could leave are built and
//! checked:
//! - synced data stays; of what was written since a file's last sync, any subset of the writes
//!   survives (so later writes may land without earlier ones, the gap reading as zeros), and one
//!   of them may be torn (cut anywhere, or its bytes zeroed);
//! - names created, linked or removed since the last directory sync survive in their order up
//!   to a random point (a journalled file system replays a prefix of its metadata).
//!
//! On every such disk: the session file, when it exists, opens with its header; no line is
//! fused (every entry is byte for byte a line somebody wrote, and no `fused_objects`); with
//! `Fsync`, every append acknowledged before the crash is there, byte for byte; and a resumed
//! writer appends one entry cleanly (it reads back as the last entry, and nothing else in the
//! file changes). Where the file does not exist, a new one can be created at the path.
//!
//! The normal test run explores a few thousand crash states; `cargo xtask soak` sets
//! `PI_SESSION_SIM_STATES` (at least 100,000).

use crate::common::entry;
use pi_session_store::vfs::{FileIdentity, FileMeta, Vfs, VfsFile};
use pi_session_store::{
    DiagnosticKind, Durability, SessionWriter, Stamps, StoreError, WriterOptions, new_header_with,
    open_bytes,
};
use pi_session_types::{IsoTimestamp, TitleSource, to_js_vec};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Crash states the normal test run explores (at least).
const NORMAL_STATES: usize = 3_000;

/// A small deterministic random source (SplitMix64).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        pi_session_test_support::splitmix64(&mut self.0)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % (n.max(1) as u64)) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// One logged file-system operation.
#[derive(Debug, Clone)]
enum Op {
    Write {
        inode: u64,
        offset: u64,
        bytes: Vec<u8>,
        /// Whether the write started at or past the end of the file (an append), rather than
        /// over bytes already there.
        extends: bool,
    },
    SetLen {
        inode: u64,
        len: u64,
    },
    Sync {
        inode: u64,
    },
    /// A name created or linked (`Some`) or removed (`None`).
    Name {
        path: PathBuf,
        inode: Option<u64>,
    },
    SyncDir,
}

/// Names and file contents.
#[derive(Debug, Clone, Default)]
struct Tree {
    names: BTreeMap<PathBuf, u64>,
    data: BTreeMap<u64, Vec<u8>>,
}

impl Tree {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Write {
                inode,
                offset,
                bytes,
                ..
            } => write_at(self.data.entry(*inode).or_default(), *offset, bytes),
            Op::SetLen { inode, len } => {
                let data = self.data.entry(*inode).or_default();
                data.resize(usize::try_from(*len).unwrap(), 0);
            }
            Op::Name { path, inode } => {
                match inode {
                    Some(inode) => {
                        self.names.insert(path.clone(), *inode);
                        self.data.entry(*inode).or_default();
                    }
                    None => {
                        self.names.remove(path);
                    }
                };
            }
            Op::Sync { .. } | Op::SyncDir => {}
        }
    }
}

fn write_at(data: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let offset = usize::try_from(offset).unwrap();
    if data.len() < offset + bytes.len() {
        data.resize(offset + bytes.len(), 0);
    }
    data[offset..offset + bytes.len()].copy_from_slice(bytes);
}

/// The simulated disk: the live tree, the log of every operation, and injected faults.
#[derive(Debug, Default)]
struct Disk {
    live: Tree,
    log: Vec<Op>,
    next_inode: u64,
    /// Percent of writes and truncations that fail (a write then lands only partly).
    fault_percent: usize,
    rng: Option<Rng>,
}

impl Disk {
    fn record(&mut self, op: Op) {
        self.live.apply(&op);
        self.log.push(op);
    }

    fn inject_fault(&mut self) -> bool {
        let percent = self.fault_percent;
        self.rng.as_mut().is_some_and(|rng| rng.chance(percent))
    }

    fn lookup(&self, path: &Path) -> io::Result<u64> {
        self.live
            .names
            .get(path)
            .copied()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn meta(&self, inode: u64) -> FileMeta {
        FileMeta {
            len: self.live.data.get(&inode).map_or(0, |d| d.len() as u64),
            identity: FileIdentity { device: 1, inode },
        }
    }

    fn read_exact_at(&self, inode: u64, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let data = self.live.data.get(&inode).map_or(&[][..], Vec::as_slice);
        let offset = usize::try_from(offset).unwrap();
        match data.get(offset..offset + buf.len()) {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
        }
    }

    /// Writes `bytes` at `offset`, or with an injected fault a random part of them and an error.
    fn write(&mut self, inode: u64, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let extends = offset >= self.meta(inode).len;
        if self.inject_fault() {
            let keep = self.rng.as_mut().map_or(0, |rng| rng.below(bytes.len()));
            self.record(Op::Write {
                inode,
                offset,
                bytes: bytes[..keep].to_vec(),
                extends,
            });
            return Err(io::Error::other("injected: no space left on device"));
        }
        self.record(Op::Write {
            inode,
            offset,
            bytes: bytes.to_vec(),
            extends,
        });
        Ok(())
    }
}

/// The simulated file system (clones share one disk).
#[derive(Debug, Clone, Default)]
struct SimFs(Arc<Mutex<Disk>>);

impl SimFs {
    fn disk(&self) -> MutexGuard<'_, Disk> {
        self.0.lock().unwrap()
    }

    /// A file system whose disk holds `tree`, all of it durable.
    fn with_tree(tree: Tree) -> Self {
        let next_inode = tree.data.keys().max().map_or(1, |i| i + 1);
        Self(Arc::new(Mutex::new(Disk {
            live: tree,
            next_inode,
            ..Disk::default()
        })))
    }

    /// Appends raw bytes to the file at `path` as another program would (no lock).
    fn foreign_append(&self, path: &Path, bytes: &[u8]) {
        let mut disk = self.disk();
        let inode = disk.lookup(path).unwrap();
        let len = disk.meta(inode).len;
        disk.record(Op::Write {
            inode,
            offset: len,
            bytes: bytes.to_vec(),
            extends: true,
        });
    }
}

/// An open file of a [`SimFs`].
#[derive(Debug)]
struct SimFile {
    fs: SimFs,
    inode: u64,
}

impl Vfs for SimFs {
    type File = SimFile;

    fn create_new(&self, path: &Path) -> io::Result<SimFile> {
        let mut disk = self.disk();
        if disk.live.names.contains_key(path) {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        disk.next_inode += 1;
        let inode = disk.next_inode;
        disk.record(Op::Name {
            path: path.to_path_buf(),
            inode: Some(inode),
        });
        Ok(SimFile {
            fs: self.clone(),
            inode,
        })
    }

    fn open_append(&self, path: &Path) -> io::Result<SimFile> {
        let inode = self.disk().lookup(path)?;
        Ok(SimFile {
            fs: self.clone(),
            inode,
        })
    }

    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        let disk = self.disk();
        Ok(disk.meta(disk.lookup(path)?))
    }

    fn read_exact_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let disk = self.disk();
        disk.read_exact_at(disk.lookup(path)?, offset, buf)
    }

    fn write_at(&self, path: &Path, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let mut disk = self.disk();
        let inode = disk.lookup(path)?;
        disk.write(inode, offset, bytes)
    }

    fn hard_link(&self, original: &Path, link: &Path) -> io::Result<()> {
        let mut disk = self.disk();
        let inode = disk.lookup(original)?;
        if disk.live.names.contains_key(link) {
            return Err(io::Error::from(io::ErrorKind::AlreadyExists));
        }
        disk.record(Op::Name {
            path: link.to_path_buf(),
            inode: Some(inode),
        });
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut disk = self.disk();
        disk.lookup(path)?;
        disk.record(Op::Name {
            path: path.to_path_buf(),
            inode: None,
        });
        Ok(())
    }

    fn create_dir_all(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        self.disk().record(Op::SyncDir);
        Ok(())
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let disk = self.disk();
        let inode = disk.lookup(path)?;
        Ok(disk.live.data.get(&inode).cloned().unwrap_or_default())
    }
}

impl VfsFile for SimFile {
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut disk = self.fs.disk();
        let len = disk.meta(self.inode).len;
        disk.write(self.inode, len, bytes)
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.fs.disk().record(Op::Sync { inode: self.inode });
        Ok(())
    }

    fn set_len(&mut self, len: u64) -> io::Result<()> {
        let mut disk = self.fs.disk();
        if disk.inject_fault() {
            return Err(io::Error::other("injected: truncate failed"));
        }
        disk.record(Op::SetLen {
            inode: self.inode,
            len,
        });
        Ok(())
    }

    fn metadata(&self) -> io::Result<FileMeta> {
        Ok(self.fs.disk().meta(self.inode))
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.fs.disk().read_exact_at(self.inode, offset, buf)
    }
}

/// How a power loss after `log[..k]` treats what was not synced.
#[derive(Debug, Clone, Copy)]
enum Loss {
    /// Nothing unsynced survives.
    Everything,
    /// Everything survives (a process crash: the kernel still writes it out).
    Nothing,
    /// A random subset survives, one write possibly torn, names up to a random point.
    Random,
}

/// The disk a crash after `log` leaves, as `loss` says.
fn crash_state(log: &[Op], loss: Loss, rng: &mut Rng) -> Tree {
    let mut tree = Tree::default();
    // Names: everything up to the last directory sync, then a prefix of the rest.
    let synced_names = log.iter().rposition(|op| matches!(op, Op::SyncDir));
    let later_names: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(i, op)| matches!(op, Op::Name { .. }) && synced_names.is_none_or(|s| *i > s))
        .map(|(i, _)| i)
        .collect();
    let names_kept = match loss {
        Loss::Everything => 0,
        Loss::Nothing => later_names.len(),
        Loss::Random => rng.below(later_names.len() + 1),
    };
    let name_cut = later_names.get(names_kept).copied().unwrap_or(usize::MAX);
    // Data: per file, everything up to its last sync, then a subset of the rest.
    let mut last_sync: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, op) in log.iter().enumerate() {
        if let Op::Sync { inode } = op {
            last_sync.insert(*inode, i);
        }
    }
    let unsynced: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(i, op)| match op {
            Op::Write { inode, .. } | Op::SetLen { inode, .. } => {
                last_sync.get(inode).is_none_or(|s| i > s)
            }
            _ => false,
        })
        .map(|(i, _)| i)
        .collect();
    let torn = match loss {
        Loss::Random if !unsynced.is_empty() && rng.chance(70) => {
            Some(unsynced[rng.below(unsynced.len())])
        }
        _ => None,
    };
    for (i, op) in log.iter().enumerate() {
        match op {
            Op::Name { .. } if i >= name_cut => continue,
            Op::Write { .. } | Op::SetLen { .. } if unsynced.contains(&i) => {
                let survives = match loss {
                    Loss::Everything => false,
                    Loss::Nothing => true,
                    Loss::Random => Some(i) == torn || rng.chance(50),
                };
                if !survives {
                    continue;
                }
                if Some(i) == torn
                    && let Op::Write {
                        inode,
                        offset,
                        bytes,
                        extends,
                    } = op
                {
                    let mut bytes = bytes.clone();
                    if *extends && rng.chance(30) {
                        // The new size reached the disk, the data did not. (An overwrite in
                        // place leaves old or new bytes, never zeros: only a prefix is new.)
                        bytes.iter_mut().for_each(|b| *b = 0);
                    } else {
                        bytes.truncate(rng.below(bytes.len() + 1));
                    }
                    tree.apply(&Op::Write {
                        inode: *inode,
                        offset: *offset,
                        bytes,
                        extends: *extends,
                    });
                    continue;
                }
            }
            _ => {}
        }
        tree.apply(op);
    }
    tree
}

/// Entry ids and times from a seeded source (ids start with a digit; foreign ones with `f`).
#[derive(Debug)]
struct SeededStamps(Rng);

impl Stamps for SeededStamps {
    fn now(&mut self) -> IsoTimestamp {
        IsoTimestamp::new("2026-01-01T00:00:00.000Z")
    }

    fn entry_id(&mut self) -> String {
        format!("{:08x}", self.0.next() % 0x8000_0000)
    }
}

/// An append that returned: where the log stood, and the line.
#[derive(Debug)]
struct Ack {
    log_len: usize,
    id: String,
    line: Vec<u8>,
    durability: Durability,
}

/// What one workload did.
#[derive(Debug)]
struct Run {
    log: Vec<Op>,
    acks: Vec<Ack>,
}

fn options(rng: &mut Rng) -> WriterOptions {
    WriterOptions {
        durability: match rng.below(3) {
            0 => Durability::Buffered,
            1 => Durability::Flush,
            _ => Durability::Fsync,
        },
        title_slot: rng.chance(50),
        busy_timeout: rng.chance(50).then_some(Duration::from_millis(200)),
    }
}

fn body(rng: &mut Rng) -> String {
    const PIECES: [&str; 5] = ["x", "é", "😀", "\"q\"", "\n"];
    (0..rng.below(300))
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

/// Runs one random workload on a fresh [`SimFs`] at `path`.
fn workload(seed: u64, path: &Path) -> Run {
    let mut rng = Rng(seed);
    let fs = SimFs::default();
    let fault_percent = if rng.chance(30) { 5 } else { 0 };
    let mut options = options(&mut rng);
    let header = new_header_with("/w", format!("session-{seed}"), "2026-01-01T00:00:00.000Z");
    let mut writer = SessionWriter::create_in(fs.clone(), path, header, options)
        .with_stamps(SeededStamps(Rng(seed ^ 0xA5A5)));
    {
        let mut disk = fs.disk();
        disk.fault_percent = fault_percent;
        disk.rng = Some(Rng(seed ^ 0x5A5A));
    }
    let mut acks = Vec::new();
    let mut foreign = 0u32;
    for _ in 0..8 + rng.below(24) {
        let written = writer.is_written();
        match rng.below(100) {
            0..55 => {
                let appended = writer.append(entry(
                    "custom",
                    &[
                        ("customType", json!("sim")),
                        ("data", json!(body(&mut rng))),
                    ],
                ));
                match appended {
                    Ok(written) => acks.push(Ack {
                        log_len: fs.disk().log.len(),
                        id: written.id().unwrap().to_owned(),
                        line: to_js_vec(&written).unwrap(),
                        durability: options.durability,
                    }),
                    Err(StoreError::Conflict { .. }) => {
                        // Close first: the old writer holds the lock.
                        drop(writer);
                        options = self::options(&mut rng);
                        writer = resume(&fs, path, options, &mut rng);
                    }
                    Err(_) => {}
                }
            }
            55..65 => {
                let title = format!("title {}", body(&mut rng).replace('\n', " "));
                let _ = writer.set_title(Some(&title), Some(TitleSource::User));
            }
            65..80 if written => {
                // pi appends without a lock; a crashed pi leaves its line torn.
                foreign += 1;
                let line = format!(
                    "{{\"type\":\"custom\",\"customType\":\"foreign\",\"id\":\"f{foreign:07x}\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"data\":{}}}\n",
                    json!(body(&mut rng))
                );
                let cut = if rng.chance(15) {
                    rng.below(line.len())
                } else {
                    line.len()
                };
                fs.foreign_append(path, &line.as_bytes()[..cut]);
            }
            80..88 => {
                let _ = writer.flush();
            }
            88..94 => {
                let id = acks.get(rng.below(acks.len())).map(|a| a.id.clone());
                let _ = writer.set_leaf(id.as_deref());
            }
            _ if written => {
                drop(writer);
                options = self::options(&mut rng);
                writer = resume(&fs, path, options, &mut rng);
            }
            _ => {}
        }
    }
    drop(writer);
    let log = fs.disk().log.clone();
    Run { log, acks }
}

/// A writer resumed on the live file (retrying past injected faults).
fn resume(fs: &SimFs, path: &Path, options: WriterOptions, rng: &mut Rng) -> SessionWriter<SimFs> {
    let (writer, _, _) = SessionWriter::open_for_append_in(fs.clone(), path, options)
        .unwrap_or_else(|e| panic!("the live file does not resume: {e}"));
    writer.with_stamps(SeededStamps(Rng(rng.next())))
}

/// Checks one crash state; returns what is wrong with it.
fn check_state(run: &Run, k: usize, tree: Tree, path: &Path) -> Result<(), String> {
    let Some(&inode) = tree.names.get(path) else {
        if let Some(ack) = run
            .acks
            .iter()
            .find(|a| a.durability == Durability::Fsync && a.log_len <= k)
        {
            return Err(format!("the file is gone, {} was acknowledged", ack.id));
        }
        // Nothing there: a new session can be created at the path.
        let header = new_header_with("/w", "again", "2026-01-01T00:00:00.000Z");
        let mut writer =
            SessionWriter::create_in(SimFs::with_tree(tree), path, header, Default::default());
        return writer
            .append(entry("label", &[]))
            .map(drop)
            .map_err(|e| format!("cannot create at an empty path: {e}"));
    };
    let bytes = tree.data.get(&inode).cloned().unwrap_or_default();
    let (session, diagnostics) = open_bytes(bytes);
    if session.header().is_none() {
        return Err(format!("the file has no header: {diagnostics:?}"));
    }
    if let Some(d) = diagnostics
        .iter()
        .find(|d| matches!(d.kind, DiagnosticKind::FusedObjects { .. }))
    {
        return Err(format!("fused lines: {d}"));
    }
    let known: HashSet<&[u8]> = run
        .log
        .iter()
        .filter_map(|op| match op {
            Op::Write { bytes, .. } => Some(bytes.split(|b| *b == b'\n')),
            _ => None,
        })
        .flatten()
        .collect();
    let raws: Vec<Vec<u8>> = (0..session.len())
        .map(|i| session.raw(i).unwrap())
        .collect();
    for raw in &raws {
        if !known.contains(raw.as_slice()) {
            return Err(format!(
                "an entry nobody wrote (fused or torn): {}",
                String::from_utf8_lossy(raw)
            ));
        }
    }
    for ack in run
        .acks
        .iter()
        .filter(|a| a.durability == Durability::Fsync && a.log_len <= k)
    {
        let found = session
            .position_of(&ack.id)
            .map(|i| raws[i] == ack.line)
            .unwrap_or(false);
        if !found {
            return Err(format!("acknowledged entry {} is lost", ack.id));
        }
    }
    // A resumed writer continues cleanly.
    let fs = SimFs::with_tree(tree);
    let (mut writer, _, _) =
        SessionWriter::open_for_append_in(fs.clone(), path, Default::default())
            .map_err(|e| format!("does not resume: {e}"))?;
    let written = writer
        .append(entry("label", &[]))
        .map_err(|e| format!("the resumed append fails: {e}"))?;
    drop(writer);
    let (after, after_diagnostics) = open_bytes(fs.read(path).unwrap());
    if after.len() != session.len() + 1
        || after.entry(after.len() - 1).ok().as_ref() != Some(&written)
        || (0..session.len()).any(|i| after.raw(i).unwrap() != raws[i])
        || after_diagnostics.len() != diagnostics.len()
    {
        return Err(format!(
            "the resumed append changed the file: {} entries -> {}, {diagnostics:?} -> {after_diagnostics:?}",
            session.len(),
            after.len()
        ));
    }
    Ok(())
}

/// Runs workloads until `states` crash states were checked; returns (workloads, states,
/// violations).
fn explore(states: usize, first_seed: u64) -> (usize, usize, Vec<String>) {
    let dir = lock_dir();
    let path = dir.path().join("s.jsonl");
    let (mut workloads, mut explored, mut violations) = (0, 0, Vec::new());
    let mut seed = first_seed;
    while explored < states {
        let run = workload(seed, &path);
        let mut rng = Rng(seed ^ 0xC0FF_EE00);
        for k in 0..=run.log.len() {
            for loss in [Loss::Everything, Loss::Nothing, Loss::Random, Loss::Random] {
                let tree = crash_state(&run.log[..k], loss, &mut rng);
                explored += 1;
                if let Err(problem) = check_state(&run, k, tree, &path)
                    && violations.len() < 20
                {
                    violations.push(format!(
                        "seed {seed}, crash after {k} of {} operations, {loss:?}: {problem}",
                        run.log.len()
                    ));
                }
            }
        }
        workloads += 1;
        seed += 1;
    }
    (workloads, explored, violations)
}

/// A real folder for the lock files, which stay on the real file system (beside the simulated
/// session's path): a RAM disk when there is one, since every crash state takes the locks.
fn lock_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::tempdir_in(shm)
    {
        return dir;
    }
    tempfile::tempdir().unwrap()
}

#[test]
fn no_crash_state_loses_a_synced_entry_fuses_a_line_or_stops_a_resume() {
    let states = std::env::var("PI_SESSION_SIM_STATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(NORMAL_STATES);
    let (workloads, explored, violations) = explore(states, 1);
    println!(
        "crash simulator: {workloads} workloads, {explored} crash states, {} violations",
        violations.len()
    );
    assert!(explored >= states);
    assert!(violations.is_empty(), "{violations:#?}");
}

/// The simulator can see a loss: an append that is never synced (`Flush`) is lost by a power
/// loss after it, which the `Fsync` check would report.
#[test]
fn the_simulator_sees_unsynced_appends_vanish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let fs = SimFs::default();
    let header = new_header_with("/w", "s", "2026-01-01T00:00:00.000Z");
    let mut writer = SessionWriter::create_in(fs.clone(), &path, header, WriterOptions::default())
        .with_stamps(SeededStamps(Rng(7)));
    writer.append(entry("label", &[])).unwrap();
    let second = writer.append(entry("label", &[])).unwrap();
    let log = fs.disk().log.clone();
    let tree = crash_state(&log, Loss::Everything, &mut Rng(1));
    let inode = tree.names.get(&path).copied();
    let kept = inode
        .and_then(|i| tree.data.get(&i))
        .map(|bytes| open_bytes(bytes.clone()).0);
    assert!(kept.is_none_or(|s| s.position_of(second.id().unwrap()).is_none()));
    let run = Run {
        acks: vec![Ack {
            log_len: log.len(),
            id: second.id().unwrap().to_owned(),
            line: to_js_vec(&second).unwrap(),
            durability: Durability::Fsync,
        }],
        log,
    };
    let k = run.log.len();
    let problem = check_state(
        &run,
        k,
        crash_state(&run.log, Loss::Everything, &mut Rng(1)),
        &path,
    );
    assert!(problem.is_err(), "{problem:?}");
}
