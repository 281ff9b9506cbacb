//! [`RedisStore`]: sessions in Redis (or Valkey), laid out exactly as omp 18's
//! `RedisSessionStorage` keeps them, so omp hosts and a Rust host share one keyspace.
//!
//! Layout (with the default prefix `omp:sessions:`):
//! - `<prefix>file:<path>`: a STRING holding the session's JSONL bytes (title slot included);
//! - `<prefix>meta`: a HASH, path → mtime in ms (decimal);
//! - `<prefix>title`: a HASH, path → `{"title","source","updatedAt"}` JSON, which readers
//!   overlay onto the slot (omp's `updateSessionTitle` never touches the bytes).
//!
//! Writes run omp's own Lua scripts byte for byte where omp has one for the job
//! ([`WRITE_FULL_SCRIPT`] to create or replace, [`UPDATE_TITLE_SCRIPT`] for titles). omp's
//! `APPEND_SCRIPT` appends blindly; ours ([`APPEND_IF_SCRIPT`]) runs the same `APPEND` and
//! `HSET meta` after checking, in the same atomic script, that the value still has the length
//! and last bytes this writer saw, so a line never lands on a torn tail or on a rewrite.
//!
//! A whole session is read in [`RANGE_BYTES`](super::RANGE_BYTES) `GETRANGE`s, streamed into
//! the same line framing and parser as a file (never one `GET`); listings read only heads, in
//! one pipeline. Each request has a timeout; a broken connection is reopened
//! once for the next request (a write whose reply was lost is not repeated: the writer's next
//! append sees the length it left and reports a conflict instead of writing twice).

use super::{Expected, KeyedEntry, KeyedStore, TitleMeta, next_mtime};
use crate::error::StoreError;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// omp's default key prefix.
pub const DEFAULT_PREFIX: &str = "omp:sessions:";

/// omp's `WRITE_FULL_SCRIPT` (redis-session-storage.ts), byte for byte.
pub const WRITE_FULL_SCRIPT: &str = "-- OMP_WRITE_FULL
local expected = ARGV[6]
if expected ~= \"\" then
\tlocal actual = -1
\tif redis.call(\"EXISTS\", KEYS[1]) == 1 then
\t\tactual = redis.call(\"STRLEN\", KEYS[1])
\tend
\tif actual ~= tonumber(expected) then
\t\treturn {0, actual}
\tend
end
redis.call(\"SET\", KEYS[1], ARGV[1])
redis.call(\"HSET\", KEYS[2], ARGV[2], ARGV[3])
if ARGV[4] == \"1\" then
\tredis.call(\"HSET\", KEYS[3], ARGV[2], ARGV[5])
else
\tredis.call(\"HDEL\", KEYS[3], ARGV[2])
end
return {1, string.len(ARGV[1])}";

/// omp's `APPEND_SCRIPT`, byte for byte (kept for reference and tests: we append with
/// [`APPEND_IF_SCRIPT`], which runs the same two commands after its check).
pub const APPEND_SCRIPT: &str = "-- OMP_APPEND
local size = redis.call(\"APPEND\", KEYS[1], ARGV[1])
redis.call(\"HSET\", KEYS[2], ARGV[2], ARGV[3])
return size";

/// omp's `UPDATE_TITLE_SCRIPT`, byte for byte.
pub const UPDATE_TITLE_SCRIPT: &str = "-- OMP_UPDATE_TITLE
redis.call(\"HSET\", KEYS[1], ARGV[1], ARGV[2])
redis.call(\"HSET\", KEYS[2], ARGV[1], ARGV[3])
return 1";

/// Our guarded append: omp's `APPEND` + `HSET meta`, only if the value is `ARGV[4]` bytes long
/// and ends with `ARGV[5]`. Returns `{1, size}`, or `{0, actual, replaced}` (actual -1: gone).
pub const APPEND_IF_SCRIPT: &str = "-- PI_SESSION_APPEND_IF
local actual = -1
if redis.call(\"EXISTS\", KEYS[1]) == 1 then
\tactual = redis.call(\"STRLEN\", KEYS[1])
end
local expected = tonumber(ARGV[4])
if actual ~= expected then
\treturn {0, actual, 0}
end
local tail = ARGV[5]
if string.len(tail) > 0 and redis.call(\"GETRANGE\", KEYS[1], expected - string.len(tail), expected - 1) ~= tail then
\treturn {0, actual, 1}
end
local size = redis.call(\"APPEND\", KEYS[1], ARGV[1])
redis.call(\"HSET\", KEYS[2], ARGV[2], ARGV[3])
return {1, size}";

/// Connection settings for [`RedisStore::connect`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisOptions {
    /// Key prefix (omp's `prefix`); default [`DEFAULT_PREFIX`].
    pub prefix: String,
    /// How long to wait for a connection. Default 5 s.
    pub connect_timeout: Duration,
    /// How long one request may take. Default 30 s.
    pub io_timeout: Duration,
    /// Keys per `SCAN` batch (omp's `scanCount`). Default 500.
    pub scan_count: u32,
    /// For `rediss://` (feature `redis-tls`): a PEM file of the CA certificates to trust
    /// instead of the system's roots. `None` (the default): the system's roots, which honour
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`.
    pub tls_ca_file: Option<PathBuf>,
}

impl Default for RedisOptions {
    fn default() -> Self {
        Self {
            prefix: DEFAULT_PREFIX.to_owned(),
            connect_timeout: Duration::from_secs(5),
            io_timeout: Duration::from_secs(30),
            scan_count: 500,
            tls_ca_file: None,
        }
    }
}

/// Sessions in Redis (see the docs of `keyed/redis.rs`). Cheap to share: one connection, used by one
/// request at a time.
pub struct RedisStore {
    client: redis::Client,
    /// The URL with any password masked, for messages.
    shown: String,
    options: RedisOptions,
    connection: Mutex<Option<redis::Connection>>,
    last_mtime: AtomicU64,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.shown)
            .field("prefix", &self.options.prefix)
            .finish_non_exhaustive()
    }
}

/// `url` with the password (between `user:` and `@`) replaced by `***`.
///
/// ```
/// use pi_session_store::RedisStore;
/// assert_eq!(RedisStore::mask_url("redis://u:secret@h:6379/2"), "redis://u:***@h:6379/2");
/// assert_eq!(RedisStore::mask_url("redis://:secret@h/0"), "redis://:***@h/0");
/// assert_eq!(RedisStore::mask_url("redis://h:6379/0"), "redis://h:6379/0");
/// ```
impl RedisStore {
    /// Masks the password of a Redis URL (see the example above).
    pub fn mask_url(url: &str) -> String {
        let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
            return url.to_owned();
        };
        let authority_end = url[scheme_end..]
            .find('/')
            .map_or(url.len(), |i| scheme_end + i);
        let authority = &url[scheme_end..authority_end];
        let Some(at) = authority.rfind('@') else {
            return url.to_owned();
        };
        let user_info = &authority[..at];
        match user_info.find(':') {
            Some(colon) => format!(
                "{}{}:***{}",
                &url[..scheme_end],
                &user_info[..colon],
                &url[scheme_end + at..]
            ),
            None => url.to_owned(),
        }
    }

    /// Connects to `url` (`redis://[user:password@]HOST[:PORT][/DB]`, or `rediss://` for TLS).
    /// TLS needs the cargo feature `redis-tls` (rustls, trusting the system's roots or
    /// [`RedisOptions::tls_ca_file`]); without it a `rediss://` URL is refused with an error
    /// naming the feature. Fails with a clear error when the server cannot be reached within
    /// [`RedisOptions::connect_timeout`]. No error shows the URL's password.
    pub fn connect(url: &str, options: RedisOptions) -> Result<Self, StoreError> {
        let shown = Self::mask_url(url);
        let refuse = |detail: String| {
            StoreError::io(
                "could not connect to",
                shown.clone(),
                std::io::Error::new(std::io::ErrorKind::InvalidInput, detail),
            )
        };
        let tls = url.starts_with("rediss://");
        if tls && !cfg!(feature = "redis-tls") {
            return Err(refuse(
                "TLS (rediss://) is not built into this pi-session: build it with the cargo feature `redis-tls` (e.g. `cargo install pi-session-cli --features redis-tls`), or reach the server through a TLS proxy with a redis:// URL".to_owned(),
            ));
        }
        if !tls && !url.starts_with("redis://") {
            return Err(refuse(
                "not a Redis URL; use redis://HOST:PORT/DB (as omp's Redis session storage), or rediss:// for TLS"
                    .to_owned(),
            ));
        }
        let client = client(url, &options, &refuse)?;
        let store = Self {
            client,
            shown,
            options,
            connection: Mutex::new(None),
            last_mtime: AtomicU64::new(0),
        };
        store.with_connection("could not connect to", &store.shown.clone(), |c| {
            redis::cmd("PING").query::<String>(c)
        })?;
        Ok(store)
    }

    /// The key of `path`'s bytes.
    pub fn file_key(&self, path: &str) -> String {
        format!("{}file:{path}", self.options.prefix)
    }

    fn meta_key(&self) -> String {
        format!("{}meta", self.options.prefix)
    }

    fn title_key(&self) -> String {
        format!("{}title", self.options.prefix)
    }

    fn lock(&self) -> MutexGuard<'_, Option<redis::Connection>> {
        self.connection
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn open_connection(&self) -> redis::RedisResult<redis::Connection> {
        let connection = self
            .client
            .get_connection_with_timeout(self.options.connect_timeout)?;
        connection.set_read_timeout(Some(self.options.io_timeout))?;
        connection.set_write_timeout(Some(self.options.io_timeout))?;
        Ok(connection)
    }

    fn error(&self, action: &'static str, path: &str, e: &redis::RedisError) -> StoreError {
        let hint = if e.is_connection_refusal() {
            "; is the server running at that address? (check --store)"
        } else if e.is_timeout() {
            "; the server did not answer in time"
        } else if e.is_connection_dropped() || e.is_io_error() {
            "; the connection was lost (it is reopened on the next request)"
        } else {
            ""
        };
        // RedisError's text never holds the URL; the URL shown here has its password masked.
        StoreError::io(
            action,
            path,
            std::io::Error::other(format!("Redis at {}: {e}{hint}", self.shown)),
        )
    }

    /// Runs `request` on the connection, opening it first if needed. A request that fails on
    /// a broken connection drops it (the next request reconnects); a read-only request is
    /// retried once on a fresh connection.
    fn with_connection<T>(
        &self,
        action: &'static str,
        path: &str,
        mut request: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        self.run(action, path, true, &mut request)
    }

    fn write<T>(
        &self,
        action: &'static str,
        path: &str,
        mut request: impl FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        self.run(action, path, false, &mut request)
    }

    fn run<T>(
        &self,
        action: &'static str,
        path: &str,
        retry: bool,
        request: &mut dyn FnMut(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let mut guard = self.lock();
        for attempt in 0..2 {
            let connection = match guard.as_mut() {
                Some(connection) => connection,
                None => guard.insert(
                    self.open_connection()
                        .map_err(|e| self.error(action, path, &e))?,
                ),
            };
            match request(connection) {
                Ok(value) => return Ok(value),
                Err(e) => {
                    let broken = e.is_io_error()
                        || e.is_connection_dropped()
                        || e.is_timeout()
                        || e.is_unrecoverable_error();
                    if broken {
                        *guard = None;
                    }
                    if !(broken && retry && attempt == 0) {
                        return Err(self.error(action, path, &e));
                    }
                }
            }
        }
        Err(StoreError::io(
            action,
            path,
            std::io::Error::other(format!("Redis at {}: no answer", self.shown)),
        ))
    }

    fn mtime_of(&self, path: &str) -> Result<Option<u64>, StoreError> {
        let raw: Option<String> =
            self.with_connection("could not read the mtime of", path, |c| {
                redis::cmd("HGET").arg(self.meta_key()).arg(path).query(c)
            })?;
        Ok(raw.as_deref().and_then(parse_mtime))
    }
}

/// The client for `url`: TLS with rustls when the URL says `rediss://` (ring as the crypto
/// provider unless the process chose one; the CA file of the options, else the system's roots).
#[cfg(feature = "redis-tls")]
fn client(
    url: &str,
    options: &RedisOptions,
    refuse: &dyn Fn(String) -> StoreError,
) -> Result<redis::Client, StoreError> {
    let invalid = |e: redis::RedisError| {
        refuse(format!(
            "not a valid Redis URL ({:?}); use redis://HOST:PORT/DB or rediss://HOST:PORT/DB",
            e.kind()
        ))
    };
    if !url.starts_with("rediss://") {
        return redis::Client::open(url).map_err(invalid);
    }
    // Fails only when a provider is installed already, which is then used.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Some(ca_file) = &options.tls_ca_file else {
        return redis::Client::open(url).map_err(invalid);
    };
    let root_cert = std::fs::read(ca_file).map_err(|e| {
        refuse(format!(
            "could not read the TLS CA file {}: {e}",
            ca_file.display()
        ))
    })?;
    let info = redis::IntoConnectionInfo::into_connection_info(url).map_err(invalid)?;
    let certificates = redis::TlsCertificates {
        client_tls: None,
        root_cert: Some(root_cert),
    };
    redis::Client::build_with_tls(info, certificates).map_err(|e| {
        refuse(format!(
            "could not use the TLS CA file {} ({e})",
            ca_file.display()
        ))
    })
}

/// The client for a `redis://` URL (this build has no TLS).
#[cfg(not(feature = "redis-tls"))]
fn client(
    url: &str,
    _options: &RedisOptions,
    refuse: &dyn Fn(String) -> StoreError,
) -> Result<redis::Client, StoreError> {
    redis::Client::open(url).map_err(|e| {
        refuse(format!(
            "not a valid Redis URL ({:?}); use redis://HOST:PORT/DB",
            e.kind()
        ))
    })
}

/// omp's `Number(rawMtime)` for the values it writes (integers); anything else is missing.
fn parse_mtime(raw: &str) -> Option<u64> {
    let value: f64 = raw.trim().parse().ok()?;
    (value.is_finite() && value >= 0.0).then_some(value as u64)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn conflict(path: &str, expected: Option<u64>, actual: i64, replaced: bool) -> StoreError {
    StoreError::Conflict {
        path: PathBuf::from(path),
        expected: expected.unwrap_or(0),
        actual: u64::try_from(actual).ok(),
        replaced,
    }
}

impl KeyedStore for RedisStore {
    fn describe(&self) -> String {
        format!("{} (prefix {:?})", self.shown, self.options.prefix)
    }

    fn stat(&self, path: &str) -> Result<Option<KeyedEntry>, StoreError> {
        let key = self.file_key(path);
        let (exists, size): (bool, u64) = self.with_connection("could not read", path, |c| {
            redis::pipe()
                .cmd("EXISTS")
                .arg(&key)
                .cmd("STRLEN")
                .arg(&key)
                .query(c)
        })?;
        if !exists {
            return Ok(None);
        }
        let mtime_ms = self.mtime_of(path)?.unwrap_or_else(now_ms);
        Ok(Some(KeyedEntry {
            path: path.to_owned(),
            size,
            mtime_ms,
            title: None,
        }))
    }

    fn read_range(&self, path: &str, start: u64, len: u64) -> Result<Vec<u8>, StoreError> {
        if len == 0 {
            return Ok(Vec::new());
        }
        let key = self.file_key(path);
        let end = start.saturating_add(len - 1);
        self.with_connection("could not read", path, |c| {
            redis::cmd("GETRANGE")
                .arg(&key)
                .arg(start)
                .arg(end)
                .query(c)
        })
    }

    fn read_ranges(&self, ranges: &[(&str, u64, u64)]) -> Result<Vec<Vec<u8>>, StoreError> {
        let mut pipe = redis::pipe();
        for (path, start, len) in ranges {
            // GETRANGE key 0 -1 is the whole value: an empty range is asked as an empty one.
            let (start, end) = match len {
                0 => (1, 0),
                len => (*start, start.saturating_add(len - 1)),
            };
            pipe.cmd("GETRANGE")
                .arg(self.file_key(path))
                .arg(start)
                .arg(end);
        }
        if ranges.is_empty() {
            return Ok(Vec::new());
        }
        self.with_connection("could not read the ranges of", &self.options.prefix, |c| {
            pipe.query(c)
        })
    }

    fn titles(&self, paths: &[&str]) -> Result<Vec<Option<TitleMeta>>, StoreError> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let raw: Vec<Option<String>> =
            self.with_connection("could not read the titles in", &self.options.prefix, |c| {
                redis::cmd("HMGET")
                    .arg(self.title_key())
                    .arg(paths)
                    .query(c)
            })?;
        Ok(raw
            .iter()
            .map(|t| t.as_deref().and_then(TitleMeta::from_json))
            .collect())
    }

    fn append_if(&self, path: &str, expected: &Expected, bytes: &[u8]) -> Result<u64, StoreError> {
        let Some(len) = expected.len else {
            return Err(conflict(path, None, -1, false));
        };
        let mtime = next_mtime(&self.last_mtime);
        let reply: Vec<i64> = self.write("could not append to", path, |c| {
            redis::cmd("EVAL")
                .arg(APPEND_IF_SCRIPT)
                .arg(2)
                .arg(self.file_key(path))
                .arg(self.meta_key())
                .arg(bytes)
                .arg(path)
                .arg(mtime.to_string())
                .arg(len.to_string())
                .arg(expected.tail.as_slice())
                .query(c)
        })?;
        match reply.as_slice() {
            [1, size, ..] => Ok(u64::try_from(*size).unwrap_or(0)),
            [0, actual, replaced, ..] => Err(conflict(path, Some(len), *actual, *replaced == 1)),
            _ => Err(StoreError::io(
                "could not append to",
                path,
                std::io::Error::other(format!("unexpected reply {reply:?} from {}", self.shown)),
            )),
        }
    }

    fn replace_if(
        &self,
        path: &str,
        expected: Option<u64>,
        bytes: &[u8],
        title: Option<&TitleMeta>,
    ) -> Result<(), StoreError> {
        let mtime = next_mtime(&self.last_mtime);
        let title_json = title.map(TitleMeta::to_json).transpose()?;
        // omp: `expectedSize === undefined ? "" : String(expectedSize ?? -1)`; we always check.
        let expected_arg = expected.map_or_else(|| "-1".to_owned(), |n| n.to_string());
        let reply: Vec<i64> = self.write("could not write", path, |c| {
            redis::cmd("EVAL")
                .arg(WRITE_FULL_SCRIPT)
                .arg(3)
                .arg(self.file_key(path))
                .arg(self.meta_key())
                .arg(self.title_key())
                .arg(bytes)
                .arg(path)
                .arg(mtime.to_string())
                .arg(if title_json.is_some() { "1" } else { "0" })
                .arg(title_json.as_deref().unwrap_or(""))
                .arg(&expected_arg)
                .query(c)
        })?;
        match reply.as_slice() {
            [1, ..] => Ok(()),
            [0, actual, ..] => Err(conflict(path, expected, *actual, false)),
            _ => Err(StoreError::io(
                "could not write",
                path,
                std::io::Error::other(format!("unexpected reply {reply:?} from {}", self.shown)),
            )),
        }
    }

    fn title(&self, path: &str) -> Result<Option<TitleMeta>, StoreError> {
        let raw: Option<String> =
            self.with_connection("could not read the title of", path, |c| {
                redis::cmd("HGET").arg(self.title_key()).arg(path).query(c)
            })?;
        Ok(raw.as_deref().and_then(TitleMeta::from_json))
    }

    fn set_title(&self, path: &str, title: &TitleMeta) -> Result<(), StoreError> {
        let mtime = next_mtime(&self.last_mtime);
        let json = title.to_json()?;
        self.write("could not set the title of", path, |c| {
            redis::cmd("EVAL")
                .arg(UPDATE_TITLE_SCRIPT)
                .arg(2)
                .arg(self.meta_key())
                .arg(self.title_key())
                .arg(path)
                .arg(mtime.to_string())
                .arg(&json)
                .query::<i64>(c)
        })?;
        Ok(())
    }

    fn list(&self) -> Result<Vec<KeyedEntry>, StoreError> {
        let prefix = &self.options.prefix;
        let meta: HashMap<String, String> =
            self.with_connection("could not list", prefix, |c| {
                redis::cmd("HGETALL").arg(self.meta_key()).query(c)
            })?;
        let titles: HashMap<String, String> =
            self.with_connection("could not list", prefix, |c| {
                redis::cmd("HGETALL").arg(self.title_key()).query(c)
            })?;
        let file_prefix = self.file_key("");
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut cursor = "0".to_owned();
        loop {
            let (next, batch): (String, Vec<Vec<u8>>) =
                self.with_connection("could not list", prefix, |c| {
                    redis::cmd("SCAN")
                        .arg(&cursor)
                        .arg("MATCH")
                        .arg(format!("{file_prefix}*"))
                        .arg("COUNT")
                        .arg(self.options.scan_count)
                        .query(c)
                })?;
            keys.extend(batch);
            cursor = next;
            if cursor == "0" {
                break;
            }
        }
        keys.sort();
        keys.dedup();
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.cmd("STRLEN").arg(key.as_slice());
        }
        let sizes: Vec<u64> = if keys.is_empty() {
            Vec::new()
        } else {
            self.with_connection("could not list", prefix, |c| pipe.query(c))?
        };
        let fallback = now_ms();
        Ok(keys
            .iter()
            .zip(sizes)
            .map(|(key, size)| {
                let path = String::from_utf8_lossy(&key[file_prefix.len()..]).into_owned();
                KeyedEntry {
                    mtime_ms: meta
                        .get(&path)
                        .and_then(|m| parse_mtime(m))
                        .unwrap_or(fallback),
                    title: titles.get(&path).and_then(|t| TitleMeta::from_json(t)),
                    path,
                    size,
                }
            })
            .collect())
    }
}
