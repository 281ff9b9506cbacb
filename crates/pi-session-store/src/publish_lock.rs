//! omp's publish lock: the short-lived `.<name>.lock` file omp takes around every append (and
//! around a rewrite's size check and rename), reproduced so that omp and a Rust host never
//! write to one session file at the same moment.
//!
//! The protocol, as omp 18.2.3 implements it (`session/session-storage.ts`):
//!
//! * The lock file `.<name>.lock` sits beside the session. Taking it means creating it
//!   exclusively (`O_EXCL`, mode `0600`), writing `<pid>:<milliseconds since the epoch>\n`,
//!   and checking that the path still names that file (omp re-reads the content; see
//!   `still_ours`): if it does not (a concurrent steal removed the file between
//!   create and write), the claim failed.
//! * Releasing it means deleting it.
//! * A lock file that exists is stolen (deleted) only when its holder is verifiably gone: its
//!   pid is dead (`kill(pid, 0)` fails with `ESRCH`), or its content is malformed and it is older
//!   than 500 ms (no live claimer stays between create and write that long). The content is read
//!   again right before deleting, so a lock that changed hands in between is left alone.
//! * Claims are retried every 2 ms for at most 500 ms; then the append fails with
//!   [`StoreError::PublishLockTimeout`].
//!
//! Not reproduced: omp's outer OS-level gate on `.<name>.lock.os` (a native lock from
//! `@oh-my-pi/pi-natives`: abstract Unix sockets on Linux, named mutexes on Windows, `flock`
//! elsewhere). Its naming is not visible from omp's TypeScript. omp takes the gate *before* the
//! lock file and releases it after, so every omp writer still goes through the lock file, and
//! the lock file alone excludes omp and us from each other.
//!
//! Liveness on platforms other than Unix: the pid cannot be probed, so a lock with a
//! well-formed record is treated as held (fail closed); a crashed holder's lock then has to be
//! deleted by hand, which the timeout error says.

use crate::error::StoreError;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a claim is retried, and the age after which a malformed lock file counts as
/// orphaned (omp's `SESSION_PUBLISH_LOCK_WAIT_MS`).
pub const PUBLISH_LOCK_WAIT: Duration = Duration::from_millis(500);

/// The pause between two claims (omp's `SESSION_PUBLISH_LOCK_POLL_MS`).
pub const PUBLISH_LOCK_POLL: Duration = Duration::from_millis(2);

/// The path of omp's publish lock file for a session: `.<file name>.lock` beside it.
///
/// ```
/// use std::path::Path;
/// assert_eq!(
///     pi_session_store::publish_lock_path(Path::new("/s/a.jsonl")),
///     Path::new("/s/.a.jsonl.lock"),
/// );
/// ```
pub fn publish_lock_path(session: &Path) -> PathBuf {
    let name = session
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    session.with_file_name(format!(".{name}.lock"))
}

/// A held publish lock; dropping it deletes the lock file.
#[derive(Debug)]
pub(crate) struct PublishLock {
    path: PathBuf,
}

impl PublishLock {
    /// Takes the publish lock of `session`, waiting up to [`PUBLISH_LOCK_WAIT`], or up to
    /// `busy_timeout` when that is longer (a host that chose to wait for busy sessions).
    pub fn acquire(session: &Path, busy_timeout: Option<Duration>) -> Result<Self, StoreError> {
        Self::acquire_by(session, publish_lock_path(session), busy_timeout, claim)
    }

    /// [`acquire`](Self::acquire) with `claim` making each claim of `lock`.
    fn acquire_by(
        session: &Path,
        path: PathBuf,
        busy_timeout: Option<Duration>,
        mut claim: impl FnMut(&Path) -> Result<bool, StoreError>,
    ) -> Result<Self, StoreError> {
        let wait = busy_timeout.map_or(PUBLISH_LOCK_WAIT, |t| t.max(PUBLISH_LOCK_WAIT));
        let deadline = Instant::now() + wait;
        loop {
            if claim(&path)? || (steal_if_orphaned(&path) && claim(&path)?) {
                return Ok(Self { path });
            }
            if Instant::now() >= deadline {
                let holder = fs::read_to_string(&path)
                    .map(|c| c.trim_end().to_owned())
                    .unwrap_or_else(|_| "unknown".to_owned());
                return Err(StoreError::PublishLockTimeout {
                    session: session.to_path_buf(),
                    lock: path,
                    holder,
                });
            }
            thread::sleep(PUBLISH_LOCK_POLL);
        }
    }
}

impl Drop for PublishLock {
    fn drop(&mut self) {
        // Nothing to do if it is already gone; any other failure leaves a lock file with our
        // pid, which others steal once this process has exited.
        let _ = fs::remove_file(&self.path);
    }
}

/// A writer's claims of one session's publish lock, kept from one write to the next.
///
/// The first claim creates the lock file, as omp does. From the second on (Unix), the lock
/// file is a hard link to a file of the writer's own (`.<name>.<pid>.<n>.publish` beside the
/// session, made once, deleted when the writer closes; one a killed writer left is deleted by
/// the next writer of the session that makes its own), into which the holder record was
/// written just before: `link` creates the name atomically and fails if it exists, exactly as
/// an exclusive create does, and the record is there the moment the name is (omp never meets
/// an empty lock of ours). Releasing deletes the name only, so no inode is created and freed
/// per write: a third of an append's time went to that (`docs/perf.md`, round 14). Where
/// links fail (a file system without them), claims create the lock file again.
#[derive(Debug)]
pub(crate) struct Claims {
    lock: PathBuf,
    way: Way,
}

#[derive(Debug)]
enum Way {
    /// The first claim: it creates the lock file, later ones link.
    First,
    /// Claims create the lock file (links do not work here).
    Create,
    /// Claims link the writer's own record file (`None`: not made yet).
    #[cfg(unix)]
    Link(Option<RecordFile>),
}

impl Claims {
    /// The claims of `session`'s publish lock by a writer; `first_by_create`: its next claim
    /// is its first (a writer that writes once makes no file of its own).
    pub fn new(session: &Path, first_by_create: bool) -> Self {
        let way = if first_by_create {
            Way::First
        } else {
            Self::linking()
        };
        Self {
            lock: publish_lock_path(session),
            way,
        }
    }

    /// What claims after the first do.
    fn linking() -> Way {
        #[cfg(unix)]
        return Way::Link(None);
        #[cfg(not(unix))]
        return Way::Create;
    }

    /// [`PublishLock::acquire`] through these claims.
    pub fn acquire(
        &mut self,
        session: &Path,
        busy_timeout: Option<Duration>,
    ) -> Result<PublishLock, StoreError> {
        let lock = self.lock.clone();
        PublishLock::acquire_by(session, lock, busy_timeout, |lock| {
            self.claim(session, lock)
        })
    }

    /// One claim of `session`'s publish lock `lock`.
    fn claim(&mut self, session: &Path, lock: &Path) -> Result<bool, StoreError> {
        #[cfg(unix)]
        if let Way::Link(own) = &mut self.way {
            if own.is_none() {
                *own = RecordFile::beside(session);
            }
            match own.as_mut().map(|own| own.claim(lock)) {
                Some(Ok(claimed)) => return Ok(claimed),
                // No file of our own, or no links here: create the lock file from now on.
                Some(Err(_)) | None => self.way = Way::Create,
            }
        }
        #[cfg(not(unix))]
        let _ = session;
        let claimed = claim(lock)?;
        if claimed && matches!(self.way, Way::First) {
            self.way = Self::linking();
        }
        Ok(claimed)
    }
}

/// A writer's own file that its claims hard-link as the lock file (see [`Claims`]).
#[cfg(unix)]
#[derive(Debug)]
struct RecordFile {
    path: PathBuf,
    file: fs::File,
    /// Its device and inode.
    identity: (u64, u64),
    /// The record in it (empty: none yet).
    record: String,
}

#[cfg(unix)]
impl RecordFile {
    /// A new file of ours beside `session` (`None` if it cannot be made).
    fn beside(session: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        remove_orphaned_records(session);
        let path = crate::paths::hidden_beside(session, "publish");
        let file = exclusive_create(&path).ok()?;
        match file.metadata() {
            Ok(metadata) => Some(Self {
                path,
                file,
                identity: (metadata.dev(), metadata.ino()),
                record: String::new(),
            }),
            Err(_) => {
                drop(file);
                let _ = fs::remove_file(&path);
                None
            }
        }
    }

    /// Writes our record into the file and links it as `lock`: `Ok(false)` when someone else
    /// holds the lock (or stole our fresh link before we could verify it); an error when links
    /// do not work here.
    fn claim(&mut self, lock: &Path) -> io::Result<bool> {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let record = holder_record();
        // Two claims in the same millisecond hold the same record: it is there already.
        if record != self.record {
            self.file.write_all_at(record.as_bytes(), 0)?;
            if self.record.len() > record.len() {
                self.file.set_len(record.len() as u64)?;
            }
            self.record = record;
        }
        match fs::hard_link(&self.path, lock) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
            Err(e) => return Err(e),
        }
        // As `still_ours`: the name may have been stolen between the link and now.
        Ok(fs::metadata(lock).is_ok_and(|named| (named.dev(), named.ino()) == self.identity))
    }
}

/// Deletes the record files of `session` that writers killed before they closed left behind
/// (`.<name>.<pid>.<n>.publish` whose pid is dead; see [`Claims`]): one listing of the folder
/// when a writer makes its own. A file whose pid is alive, or a name that is not one of
/// these, is left alone; a lock name linked to a deleted record keeps its record (the name is
/// stolen as any orphaned lock is). Best effort: what cannot be listed or deleted stays.
#[cfg(unix)]
fn remove_orphaned_records(session: &Path) {
    let (Some(folder), Some(name)) = (
        session.parent(),
        session.file_name().and_then(|n| n.to_str()),
    ) else {
        return;
    };
    let Ok(entries) = fs::read_dir(if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    }) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|rest| rest.strip_suffix(".publish"))
            .and_then(|rest| rest.split_once('.'))
            .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|(pid, _)| pid.parse::<u64>().ok())
        else {
            continue;
        };
        if pid != u64::from(std::process::id()) && !pid_is_alive(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(unix)]
impl Drop for RecordFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Creates the lock file exclusively and records us as its holder. `Ok(false)`: someone else
/// holds it (or stole our fresh file before we could verify it).
fn claim(path: &Path) -> Result<bool, StoreError> {
    let mut file = match exclusive_create(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(StoreError::io("could not create the publish lock", path, e)),
    };
    let record = holder_record();
    if let Err(e) = file.write_all(record.as_bytes()) {
        drop(file);
        // Never leave a contentless lock behind that nobody could attribute.
        let _ = fs::remove_file(path);
        return Err(StoreError::io("could not write the publish lock", path, e));
    }
    Ok(still_ours(&file, path, &record))
}

/// Whether `path` still names the file we created. omp re-reads the content to check this; a
/// stealer can only delete a lock file and a claimer only creates a new one, so comparing the
/// file identity is the same test with fewer system calls.
#[cfg(unix)]
fn still_ours(file: &fs::File, path: &Path, _record: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(ours), Ok(named)) => (ours.dev(), ours.ino()) == (named.dev(), named.ino()),
        _ => false,
    }
}

#[cfg(not(unix))]
fn still_ours(_file: &fs::File, path: &Path, record: &str) -> bool {
    fs::read_to_string(path).is_ok_and(|content| content == record)
}

#[cfg(unix)]
fn exclusive_create(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn exclusive_create(path: &Path) -> io::Result<fs::File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// `<pid>:<milliseconds since the epoch>\n`, as omp writes it.
fn holder_record() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    format!("{}:{millis}\n", std::process::id())
}

/// Deletes the lock file if its holder is verifiably gone. True when the caller should claim
/// again: the file was deleted, by us or by someone else.
fn steal_if_orphaned(path: &Path) -> bool {
    let content = match fs::read_to_string(path) {
        Ok(content) => content,
        Err(e) => return e.kind() == io::ErrorKind::NotFound,
    };
    let orphaned = match holder_pid(&content) {
        Some(pid) => !pid_is_alive(pid),
        None => is_older_than_a_claim(path),
    };
    if !orphaned {
        return false;
    }
    // Delete only what was judged: a concurrent recovery may have put a live lock there since.
    match fs::read_to_string(path) {
        Ok(again) if again == content => {}
        Ok(_) => return false,
        Err(e) => return e.kind() == io::ErrorKind::NotFound,
    }
    match fs::remove_file(path) {
        Ok(()) => true,
        Err(e) => e.kind() == io::ErrorKind::NotFound,
    }
}

/// The pid of a well-formed record (`<digits>:<digits>`, then optional whitespace), if positive.
fn holder_pid(content: &str) -> Option<u64> {
    let (pid, millis) = content.trim_end().split_once(':')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(pid) || !all_digits(millis) {
        return None;
    }
    // omp accepts pids up to 2^53 - 1 (JavaScript's safe integers).
    pid.parse::<u64>().ok().filter(|&p| p > 0 && p < (1 << 53))
}

/// Whether a malformed lock file is older than any live claim could be (a claimer writes its
/// record microseconds after creating the file). A file that vanished counts as orphaned; the
/// caller re-checks before deleting.
fn is_older_than_a_claim(path: &Path) -> bool {
    let Ok(modified) = fs::metadata(path).and_then(|m| m.modified()) else {
        return true;
    };
    SystemTime::now()
        .duration_since(modified)
        .is_ok_and(|age| age > PUBLISH_LOCK_WAIT)
}

/// `kill(pid, 0)`: only `ESRCH` means dead; `EPERM` (alive, someone else's) and anything
/// unexpected count as alive, as in omp (fail closed).
#[cfg(unix)]
fn pid_is_alive(pid: u64) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return true;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Other platforms cannot probe a pid here: assume the holder is alive (see the module docs).
#[cfg(not(unix))]
fn pid_is_alive(_pid: u64) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::holder_pid;

    #[test]
    fn holder_records_are_parsed_like_omp() {
        let cases = [
            ("123:1700000000000\n", Some(123)),
            ("123:1700000000000", Some(123)),
            ("123:1700000000000 \r\n", Some(123)),
            ("0:1700000000000\n", None),
            ("-1:1700000000000\n", None),
            ("abc:1\n", None),
            ("123:\n", None),
            (":1\n", None),
            ("", None),
            ("123:1:2\n", None),
            ("9007199254740992:1\n", None),
        ];
        for (content, expected) in cases {
            assert_eq!(holder_pid(content), expected, "{content:?}");
        }
    }
}
