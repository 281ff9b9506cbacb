//! The storage seam: every keyed backend (memory always; Redis when a test server is there, see
//! `common::redis_store`) keeps the guarantees the file store keeps. Each test runs once per
//! backend, through the public API only.

use crate::common::{entry, redis_store, render_session};
use pi_session_store::{
    Expected, KeyedStore, MemoryStore, Store, StoreError, TitleMeta, WriterOptions, new_header,
};
use pi_session_types::TitleSource;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Memory, and Redis when there is a server.
fn stores() -> Vec<(&'static str, Store)> {
    let mut stores = vec![("memory", Store::keyed(MemoryStore::new()))];
    if let Some((store, _)) = redis_store() {
        stores.push(("redis", store));
    }
    stores
}

fn raw(store: &Store) -> Arc<dyn KeyedStore> {
    match store {
        Store::Keyed(keyed) => Arc::clone(keyed),
        Store::Files => unreachable!("keyed stores only"),
    }
}

/// A new session at `path` in `store` with one `label` entry appended (its writer kept open).
fn one_label_at(
    store: &Store,
    path: &Path,
    options: WriterOptions,
) -> pi_session_store::SessionWriter {
    let mut writer = store.create_at(path, new_header("/w"), options);
    writer.append(entry("label", &[])).unwrap();
    writer
}

const PATH: &str = "/home/u/.omp/agent/sessions/--w--/2026-01-01T00-00-00-000Z_s1.jsonl";

fn slot_options() -> WriterOptions {
    WriterOptions {
        title_slot: true,
        ..WriterOptions::default()
    }
}

#[test]
fn written_entries_read_back_the_same_and_open_never_writes() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let mut writer = store.create_at(path, new_header("/w"), slot_options());
        assert!(
            raw(&store).stat(PATH).unwrap().is_none(),
            "{name}: nothing before the first append"
        );
        let first = writer
            .append(entry("label", &[("label", "a".into())]))
            .unwrap();
        let second = writer
            .append(entry("label", &[("label", "b".into())]))
            .unwrap();
        let before = raw(&store).read_range(PATH, 0, 1 << 20).unwrap();
        let (session, diagnostics) = store.open(path).unwrap();
        assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
        assert_eq!(
            session.entries().unwrap(),
            vec![first, second.clone()],
            "{name}"
        );
        assert_eq!(session.leaf_id(), second.id(), "{name}");
        assert_eq!(
            &before[..256].last(),
            &Some(&b'\n'),
            "{name}: a 256-byte slot first"
        );
        assert_eq!(
            raw(&store).read_range(PATH, 0, 1 << 20).unwrap(),
            before,
            "{name}: open wrote"
        );
        // The same bytes opened as bytes index the same.
        let (bytes, _) = pi_session_store::open_bytes(before);
        assert_eq!(
            render_session(&bytes, &[]),
            render_session(&session, &[]),
            "{name}"
        );
    }
}

#[test]
fn a_second_create_at_the_same_path_is_refused() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let mut one = store.create_at(path, new_header("/w"), slot_options());
        let mut two = store.create_at(path, new_header("/w"), slot_options());
        one.append(entry("label", &[])).unwrap();
        let err = two.append(entry("label", &[])).unwrap_err();
        assert!(
            matches!(err, StoreError::AlreadyExists { .. }),
            "{name}: {err}"
        );
    }
}

#[test]
fn damage_is_a_diagnostic_with_line_and_byte_offset() {
    for (name, store) in stores() {
        let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
        let bytes = format!("{header}\n{{not json\n");
        raw(&store)
            .replace_if(PATH, None, bytes.as_bytes(), None)
            .unwrap();
        let (session, diagnostics) = store.open(Path::new(PATH)).unwrap();
        assert_eq!(
            session.header().map(|h| h.id.as_str()),
            Some("s1"),
            "{name}"
        );
        assert_eq!(diagnostics.len(), 1, "{name}: {diagnostics:?}");
        assert_eq!(diagnostics[0].line, 2, "{name}");
        assert_eq!(
            diagnostics[0].byte_offset,
            header.len() as u64 + 1,
            "{name}"
        );
    }
}

#[test]
fn an_append_after_a_torn_line_starts_on_a_new_line() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let _writer = one_label_at(&store, path, WriterOptions::default());
        // A writer killed mid-append leaves part of a line (Redis: a client that sent half).
        let keyed = raw(&store);
        let len = keyed.stat(PATH).unwrap().unwrap().size;
        let tail = keyed.read_range(PATH, len - 8, 8).unwrap();
        let seen = Expected {
            len: Some(len),
            tail,
        };
        keyed
            .append_if(PATH, &seen, br#"{"type":"label","id":"#)
            .unwrap();

        let (mut writer, _, diagnostics) = store
            .open_for_append(path, WriterOptions::default())
            .unwrap();
        assert_eq!(diagnostics.len(), 1, "{name}: the torn line is reported");
        let written = writer
            .append(entry("label", &[("label", "after".into())]))
            .unwrap();
        let (session, diagnostics) = store.open(path).unwrap();
        assert_eq!(
            session.entries().unwrap().last(),
            Some(&written),
            "{name}: not fused"
        );
        assert_eq!(
            diagnostics.len(),
            1,
            "{name}: only the torn line is damaged"
        );
    }
}

#[test]
fn a_foreign_append_is_a_conflict_and_nothing_is_written() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let mut ours = one_label_at(&store, path, WriterOptions::default());
        let (mut theirs, _, _) = store
            .open_for_append(path, WriterOptions::default())
            .unwrap();
        theirs
            .append(entry("label", &[("label", "theirs".into())]))
            .unwrap();
        let len = raw(&store).stat(PATH).unwrap().unwrap().size;

        let err = ours.append(entry("label", &[])).unwrap_err();
        assert!(
            matches!(err, StoreError::Conflict { replaced: false, actual: Some(a), .. } if a == len),
            "{name}: {err}"
        );
        assert_eq!(
            raw(&store).stat(PATH).unwrap().unwrap().size,
            len,
            "{name}: nothing written"
        );
    }
}

#[test]
fn with_a_busy_timeout_a_writer_catches_up_on_foreign_appends() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let options = WriterOptions {
            busy_timeout: Some(Duration::from_secs(1)),
            ..WriterOptions::default()
        };
        let mut ours = store.create_at(path, new_header("/w"), options);
        ours.append(entry("label", &[])).unwrap();
        let (mut theirs, _, _) = store
            .open_for_append(path, WriterOptions::default())
            .unwrap();
        let foreign = theirs.append(entry("label", &[])).unwrap();
        let mine = ours.append(entry("label", &[])).unwrap();
        assert_eq!(
            mine.parent_id(),
            foreign.id(),
            "{name}: built on the caught-up tip"
        );
        let (session, diagnostics) = store.open(path).unwrap();
        assert!(diagnostics.is_empty(), "{name}");
        assert_eq!(session.len(), 3, "{name}");
    }
}

#[test]
fn a_rewrite_under_a_writer_is_a_conflict_even_when_it_is_longer() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let options = WriterOptions {
            busy_timeout: Some(Duration::from_secs(1)),
            ..WriterOptions::default()
        };
        let mut ours = store.create_at(path, new_header("/w"), options);
        ours.append(entry("label", &[])).unwrap();
        let keyed = raw(&store);
        let mut bytes = keyed.read_range(PATH, 0, 1 << 20).unwrap();
        let len = bytes.len() as u64;
        // omp's recovery rewrite: other bytes, longer.
        bytes.truncate(bytes.len() - 2);
        bytes
            .extend_from_slice(b"X}\n{\"type\":\"label\",\"id\":\"ffffffff\",\"parentId\":null}\n");
        keyed.replace_if(PATH, Some(len), &bytes, None).unwrap();
        let err = ours.append(entry("label", &[])).unwrap_err();
        assert!(
            matches!(err, StoreError::Conflict { replaced: true, .. }),
            "{name}: {err}"
        );
        assert_eq!(
            keyed.read_range(PATH, 0, 1 << 20).unwrap(),
            bytes,
            "{name}: nothing written"
        );
    }
}

#[test]
fn titles_are_kept_beside_the_bytes_and_overlaid_on_read_and_listing() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let mut writer = one_label_at(&store, path, slot_options());
        let created = raw(&store).title(PATH).unwrap().unwrap();
        assert_eq!(
            created.title.as_deref(),
            Some(""),
            "{name}: omp's slot meta at creation"
        );
        let stored = raw(&store).read_range(PATH, 0, 1 << 20).unwrap();

        writer
            .set_title(Some("Fix the build"), Some(TitleSource::User))
            .unwrap();
        let meta = raw(&store).title(PATH).unwrap().unwrap();
        assert_eq!(meta.title.as_deref(), Some("Fix the build"), "{name}");
        assert_eq!(meta.source, Some(TitleSource::User), "{name}");
        assert_eq!(
            raw(&store).read_range(PATH, 0, 1 << 20).unwrap(),
            stored,
            "{name}: the bytes are untouched, as omp's updateSessionTitle leaves them"
        );
        let (session, _) = store.open(path).unwrap();
        assert_eq!(session.title(), Some("Fix the build"), "{name}");
        let (listed, problems) = store
            .list(Some(Path::new("/home/u/.omp/agent/sessions/--w--")))
            .unwrap();
        assert!(problems.is_empty(), "{name}: {problems:?}");
        assert_eq!(listed.len(), 1, "{name}");
        assert_eq!(listed[0].title.as_deref(), Some("Fix the build"), "{name}");
        assert_eq!(listed[0].title_source.as_deref(), Some("user"), "{name}");
        assert_eq!(listed[0].size, stored.len() as u64, "{name}");
        // Listing another folder sees none of it.
        assert!(
            store
                .list(Some(Path::new("/elsewhere")))
                .unwrap()
                .0
                .is_empty(),
            "{name}"
        );
    }
}

#[test]
fn title_meta_is_omps_json() {
    let meta = TitleMeta {
        title: Some("a \"b\"".into()),
        source: Some(TitleSource::Auto),
        updated_at: "2026-01-01T00:00:00.000Z".into(),
    };
    assert_eq!(
        meta.to_json().unwrap(),
        r#"{"title":"a \"b\"","source":"auto","updatedAt":"2026-01-01T00:00:00.000Z"}"#
    );
    assert_eq!(TitleMeta::from_json(&meta.to_json().unwrap()), Some(meta));
    // omp's decodeTitleMeta: no string updatedAt, no title; odd fields dropped.
    assert_eq!(TitleMeta::from_json(r#"{"title":"x"}"#), None);
    assert_eq!(TitleMeta::from_json("[]"), None);
    // Only an object is a record (serde alone would take a sequence for a struct).
    assert_eq!(TitleMeta::from_json(r#"["x","auto","t"]"#), None);
    // JSON.parse keeps a repeated key's last value.
    assert_eq!(
        TitleMeta::from_json(r#"{"updatedAt":"a","source":"user","updatedAt":"b"}"#),
        Some(TitleMeta {
            title: None,
            source: Some(TitleSource::User),
            updated_at: "b".into()
        })
    );
    assert_eq!(
        TitleMeta::from_json(r#"{"title":1,"source":"bot","updatedAt":"t"}"#),
        Some(TitleMeta {
            title: None,
            source: None,
            updated_at: "t".into()
        })
    );
}

#[test]
fn a_big_session_reads_back_in_ranges() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let mut writer = store.create_at(path, new_header("/w"), WriterOptions::default());
        let text = "x".repeat(300 << 10);
        for _ in 0..20 {
            writer
                .append(entry(
                    "custom",
                    &[("customType", "big".into()), ("data", text.clone().into())],
                ))
                .unwrap();
        }
        let size = raw(&store).stat(PATH).unwrap().unwrap().size;
        assert!(
            size > pi_session_store::RANGE_BYTES,
            "{name}: bigger than one range"
        );
        let (session, diagnostics) = store.open(path).unwrap();
        assert!(diagnostics.is_empty(), "{name}");
        assert_eq!(session.len(), 20, "{name}");
        assert_eq!(session.byte_len(), size, "{name}");
    }
}

/// A keyed store that records every range it is asked for (`read_range` and `heads`), around
/// another one.
#[derive(Debug)]
struct Recording {
    inner: Arc<dyn KeyedStore>,
    /// `(start, len)` of every `read_range`, in order.
    ranges: std::sync::Mutex<Vec<(u64, u64)>>,
    /// `(sessions, head)` of every `heads`.
    heads: std::sync::Mutex<Vec<(usize, u64)>>,
}

impl Recording {
    fn around(store: &Store) -> (Arc<Self>, Store) {
        let recording = Arc::new(Self {
            inner: raw(store),
            ranges: Default::default(),
            heads: Default::default(),
        });
        let store = Store::Keyed(Arc::clone(&recording) as Arc<dyn KeyedStore>);
        (recording, store)
    }

    /// The ranges asked for since the last call.
    fn take_ranges(&self) -> Vec<(u64, u64)> {
        std::mem::take(&mut *self.ranges.lock().unwrap())
    }
}

impl KeyedStore for Recording {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn stat(&self, path: &str) -> Result<Option<pi_session_store::KeyedEntry>, StoreError> {
        self.inner.stat(path)
    }
    fn read_range(&self, path: &str, start: u64, len: u64) -> Result<Vec<u8>, StoreError> {
        self.ranges.lock().unwrap().push((start, len));
        self.inner.read_range(path, start, len)
    }
    fn append_if(&self, path: &str, expected: &Expected, bytes: &[u8]) -> Result<u64, StoreError> {
        self.inner.append_if(path, expected, bytes)
    }
    fn replace_if(
        &self,
        path: &str,
        expected: Option<u64>,
        bytes: &[u8],
        title: Option<&TitleMeta>,
    ) -> Result<(), StoreError> {
        self.inner.replace_if(path, expected, bytes, title)
    }
    fn title(&self, path: &str) -> Result<Option<TitleMeta>, StoreError> {
        self.inner.title(path)
    }
    fn set_title(&self, path: &str, title: &TitleMeta) -> Result<(), StoreError> {
        self.inner.set_title(path, title)
    }
    fn list(&self) -> Result<Vec<pi_session_store::KeyedEntry>, StoreError> {
        self.inner.list()
    }
    fn heads(&self, paths: &[&str], head: u64) -> Result<Vec<Vec<u8>>, StoreError> {
        self.heads.lock().unwrap().push((paths.len(), head));
        self.inner.heads(paths, head)
    }
}

/// Session bytes over `2 × RANGE_BYTES + 1` long whose lines (of many lengths, one of them
/// damaged) straddle every range boundary.
fn straddling_session() -> Vec<u8> {
    let range = pi_session_store::RANGE_BYTES as usize;
    let mut bytes = br#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#.to_vec();
    bytes.push(b'\n');
    let mut parent = "null".to_owned();
    let mut n = 0u32;
    while bytes.len() <= 2 * range + 1 {
        let id = format!("{n:08x}");
        let pad = "y".repeat((n as usize * 7919) % 5000);
        let line = format!(
            r#"{{"type":"label","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","targetId":"x","label":"{pad}"}}"#
        );
        // The line that crosses the first boundary is damaged (a diagnostic there).
        let crosses = bytes.len() < range && bytes.len() + line.len() >= range;
        if crosses {
            bytes.extend_from_slice(&line.as_bytes()[..line.len() - 1]);
        } else {
            bytes.extend_from_slice(line.as_bytes());
            parent = format!("\"{id}\"");
        }
        bytes.push(b'\n');
        n += 1;
    }
    for boundary in [range, 2 * range] {
        assert_ne!(bytes[boundary - 1], b'\n', "a line straddles {boundary}");
    }
    bytes
}

#[test]
fn a_session_bigger_than_a_range_streams_in_ranges_and_opens_as_the_file_does() {
    let bytes = straddling_session();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.jsonl");
    std::fs::write(&file, &bytes).unwrap();
    let (from_file, file_diagnostics) = pi_session_store::open(&file).unwrap();
    assert_eq!(file_diagnostics.len(), 1, "{file_diagnostics:?}");
    let expected = render_session(&from_file, &file_diagnostics);
    for (name, store) in stores() {
        raw(&store).replace_if(PATH, None, &bytes, None).unwrap();
        let (recording, store) = Recording::around(&store);
        for threads in [1, 2] {
            let options = pi_session_store::OpenOptions {
                threads,
                ..Default::default()
            };
            let (session, diagnostics) = store.open_with(Path::new(PATH), &options).unwrap();
            assert_eq!(
                render_session(&session, &diagnostics),
                expected,
                "{name}, {threads} threads"
            );
            // Read once, front to back, in ranges no bigger than RANGE_BYTES.
            let ranges = recording.take_ranges();
            let mut at = 0;
            for (start, len) in &ranges {
                assert_eq!(*start, at, "{name}: {ranges:?}");
                assert!(*len <= pi_session_store::RANGE_BYTES, "{name}: {ranges:?}");
                at += len;
            }
            assert_eq!(at, bytes.len() as u64, "{name}: {ranges:?}");
            assert_eq!(ranges.len(), 3, "{name}: {ranges:?}");
        }
    }
}

/// `INFO commandstats` calls of `command` on the test server.
fn calls(connection: &mut redis::Connection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(connection)
        .unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

#[test]
fn opening_from_redis_never_gets_the_whole_value() {
    let Some((store, _)) = redis_store() else {
        return;
    };
    let url = std::env::var("PI_SESSION_TEST_REDIS").unwrap();
    let mut server = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let bytes = straddling_session();
    raw(&store).replace_if(PATH, None, &bytes, None).unwrap();
    // Nothing in this crate sends GET, so its count moves only if open does.
    let (gets, ranges) = (calls(&mut server, "get"), calls(&mut server, "getrange"));
    let (session, _) = store.open(Path::new(PATH)).unwrap();
    assert!(session.len() > 1000);
    assert_eq!(calls(&mut server, "get"), gets, "open sent GET");
    assert!(
        calls(&mut server, "getrange") >= ranges + 3,
        "open read in 3 GETRANGEs"
    );
}

#[test]
fn appends_after_open_read_back_only_the_new_bytes() {
    for (name, store) in stores() {
        let path = Path::new(PATH);
        let bytes = straddling_session();
        raw(&store).replace_if(PATH, None, &bytes, None).unwrap();
        let (recording, ours_store) = Recording::around(&store);
        let options = WriterOptions {
            busy_timeout: Some(Duration::from_secs(1)),
            ..WriterOptions::default()
        };
        let (mut ours, _, _) = ours_store.open_for_append(path, options).unwrap();
        recording.take_ranges();
        let (mut theirs, _, _) = store
            .open_for_append(path, WriterOptions::default())
            .unwrap();
        let foreign = theirs
            .append(entry("label", &[("label", "theirs".into())]))
            .unwrap();
        let grown = raw(&store).stat(PATH).unwrap().unwrap().size;
        let mine = ours.append(entry("label", &[])).unwrap();
        assert_eq!(mine.parent_id(), foreign.id(), "{name}: caught up");
        let ranges = recording.take_ranges();
        let read: u64 = ranges.iter().map(|(_, len)| len).sum();
        assert!(
            ranges
                .iter()
                .all(|(start, _)| *start + 32 >= bytes.len() as u64),
            "{name}: only the tail and the new bytes: {ranges:?}"
        );
        assert!(
            read <= grown - bytes.len() as u64 + 32,
            "{name}: {read} bytes read for {} new: {ranges:?}",
            grown - bytes.len() as u64
        );
        // A rewrite is still a conflict.
        let now = raw(&store).stat(PATH).unwrap().unwrap().size;
        raw(&store)
            .replace_if(PATH, Some(now), &bytes, None)
            .unwrap();
        let err = ours.append(entry("label", &[])).unwrap_err();
        assert!(matches!(err, StoreError::Conflict { .. }), "{name}: {err}");
    }
}

#[test]
fn listing_reads_heads_only() {
    for (name, store) in stores() {
        let bytes = straddling_session();
        raw(&store).replace_if(PATH, None, &bytes, None).unwrap();
        let (recording, store) = Recording::around(&store);
        let (listed, problems) = store.list(None).unwrap();
        assert!(problems.is_empty(), "{name}: {problems:?}");
        assert_eq!(listed.len(), 1, "{name}");
        assert_eq!(listed[0].size, bytes.len() as u64, "{name}");
        assert!(recording.take_ranges().is_empty(), "{name}");
        assert_eq!(
            *recording.heads.lock().unwrap(),
            vec![(1, pi_session_store::LIST_HEAD_BYTES)],
            "{name}"
        );
    }
}

#[test]
fn windows_of_many_sessions_read_as_each_alone() {
    for (name, store) in stores() {
        let big = straddling_session();
        let small_path = "/w/small.jsonl";
        let keyed = raw(&store);
        keyed.replace_if(PATH, None, &big, None).unwrap();
        let mut writer = store.create_at(Path::new(small_path), new_header("/w"), slot_options());
        writer.append(entry("label", &[])).unwrap();
        writer
            .set_title(Some("Small one"), Some(TitleSource::User))
            .unwrap();
        let size = |path: &str| keyed.stat(path).unwrap().unwrap().size;
        let sessions = [
            (Path::new(small_path), size(small_path)),
            (Path::new(PATH), size(PATH)),
        ];
        let (prefix, tail) = (64 << 10, 64 << 10);
        let together =
            pi_session_store::read_keyed_windows_of(keyed.as_ref(), &sessions, prefix, tail)
                .unwrap();
        let alone: Vec<_> = sessions
            .iter()
            .map(|(path, size)| {
                pi_session_store::read_keyed_windows(keyed.as_ref(), path, *size, prefix, tail)
                    .unwrap()
            })
            .collect();
        assert_eq!(together, alone, "{name}");
        assert!(together[0].1.is_none(), "{name}: the small one whole");
        assert!(
            String::from_utf8_lossy(&together[0].0).contains("Small one"),
            "{name}: title overlaid"
        );
        assert_eq!(together[1].0, big[..64 << 10], "{name}");
        assert_eq!(
            together[1].1.as_deref(),
            Some(&big[big.len() - (64 << 10)..]),
            "{name}"
        );
    }
}
