//! In-memory migration of version 1 and 2 files to version 3 (pi.md §4), never touching the file.
//!
//! * v1 → v2: every entry, in file order, gets an `id` and `parentId` = the previous entry's id
//!   (`null` for the first); a compaction's `firstKeptEntryIndex` (an index into the parsed values
//!   of the file, header = 0) becomes `firstKeptEntryId` and is removed.
//! * v2 → v3: a message entry whose `message.role` is `hookMessage` gets role `custom`.
//!
//! **Deviation from pi, on purpose:** pi draws v1 ids at random, so each load gives different
//! ids. Here an id is derived from the entry's byte offset in the file through a bijection on 32
//! bits, printed as 8 lowercase hex digits: unique within any file under 4 GiB (larger files fall
//! back to probing), and identical every time the same file is opened, so ids handed to a host
//! stay valid across reopenings.
//!
//! The index carries the migrated envelope (ids and parents) from the start; entry bodies are
//! patched only when materialised.

use pi_session_types::view::{EntryRef, MessageRef, key};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The session format version this crate reads and writes.
pub const CURRENT_VERSION: u64 = 3;

/// What a file needs when its entries are materialised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Migration {
    /// Version 3 or newer (or no header): entries are used as they are.
    None,
    /// Version 2: `hookMessage` roles become `custom`.
    FromV2,
    /// Version 1: ids, parents and `firstKeptEntryIndex` as well (targets by parsed ordinal).
    FromV1 {
        /// For each parsed JSON value of the file, in order (header = 0): which entry it is.
        ordinals: Vec<Ordinal>,
    },
}

impl Migration {
    /// True for a version 1 file (ids are generated, so the file's own ids mean nothing).
    pub fn is_v1(&self) -> bool {
        matches!(self, Self::FromV1 { .. })
    }
}

/// One parsed JSON value of a v1 file, as pi's migration array sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ordinal {
    /// A `type:"session"` value (pi never gives it an id).
    Header,
    /// The entry at this index of the session's entry list.
    Entry(usize),
    /// A value that is not an entry (not an object, no type).
    Other,
}

/// Generates the deterministic ids of a v1 file.
#[derive(Debug, Default)]
pub(crate) struct IdGenerator {
    used: HashSet<u32>,
}

impl IdGenerator {
    /// The id for the entry that starts at `byte_offset`.
    pub fn id_for(&mut self, byte_offset: u64) -> String {
        let folded = (byte_offset as u32) ^ ((byte_offset >> 32) as u32).wrapping_mul(0x9E37_79B9);
        let mut candidate = folded;
        loop {
            let id = mix32(candidate);
            if self.used.insert(id) {
                return format!("{id:08x}");
            }
            candidate = candidate.wrapping_add(1);
        }
    }
}

/// A bijection on `u32` (xorshift-multiply rounds; every step is invertible) that scatters
/// neighbouring offsets so generated ids look like pi's random ones.
fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^= x >> 16;
    x
}

/// Patches a v1 entry object in place: `id`, `parentId` (kept in place when present, else added
/// at the end, as JavaScript does), and for compactions the `firstKeptEntryIndex` conversion.
/// `resolve_index` maps a `firstKeptEntryIndex` to the id it names, or `None` when pi would leave
/// `firstKeptEntryId` unset (the header, out of range, or a later entry without an id).
pub(crate) fn patch_v1(
    object: &mut Map<String, Value>,
    id: &str,
    parent_id: Option<&str>,
    resolve_index: &dyn Fn(u64) -> Option<String>,
) {
    object.insert("id".to_owned(), Value::String(id.to_owned()));
    object.insert(
        "parentId".to_owned(),
        parent_id.map_or(Value::Null, |p| Value::String(p.to_owned())),
    );
    if EntryRef::new(&*object).is("compaction") {
        let index = EntryRef::new(&*object)
            .first_kept_entry_index()
            .and_then(Value::as_f64);
        if let Some(index) = index {
            object.shift_remove(key::FIRST_KEPT_ENTRY_INDEX);
            let target = (index >= 0.0 && index.fract() == 0.0)
                .then(|| resolve_index(index as u64))
                .flatten();
            if let Some(target) = target {
                object.insert("firstKeptEntryId".to_owned(), Value::String(target));
            }
        }
    }
}

/// Patches a v2 (or migrated v1) entry object: `message.role` `hookMessage` becomes `custom`.
pub(crate) fn patch_v2(object: &mut Map<String, Value>) {
    if !EntryRef::new(&*object).is("message") {
        return;
    }
    if let Some(Value::Object(message)) = object.get_mut(key::MESSAGE)
        && MessageRef::new(&*message).is_role("hookMessage")
    {
        message.insert("role".to_owned(), Value::String("custom".to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generated_ids_are_deterministic_unique_and_8_hex() {
        let mut a = IdGenerator::default();
        let mut b = IdGenerator::default();
        let mut seen = HashSet::new();
        for offset in (0..200_000u64).map(|i| i * 37) {
            let id = a.id_for(offset);
            assert_eq!(id, b.id_for(offset));
            assert_eq!(id.len(), 8);
            assert!(
                id.bytes()
                    .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
                "{id}"
            );
            assert!(seen.insert(id));
        }
    }

    #[test]
    fn offsets_past_4_gib_still_get_unique_ids() {
        let mut generator = IdGenerator::default();
        let first = generator.id_for(5);
        let colliding = generator.id_for(5);
        assert_ne!(first, colliding);
        let big = generator.id_for(5 + (1u64 << 32));
        assert_ne!(big, first);
    }

    #[test]
    fn v1_patch_appends_keys_and_converts_the_index() {
        let mut entry =
            json!({"type":"compaction","summary":"S","firstKeptEntryIndex":2,"tokensBefore":10});
        let object = entry.as_object_mut().unwrap();
        patch_v1(object, "aaaaaaaa", Some("bbbbbbbb"), &|i| {
            (i == 2).then(|| "cccccccc".to_owned())
        });
        assert_eq!(
            serde_json::to_string(&entry).unwrap(),
            r#"{"type":"compaction","summary":"S","tokensBefore":10,"id":"aaaaaaaa","parentId":"bbbbbbbb","firstKeptEntryId":"cccccccc"}"#
        );
    }

    #[test]
    fn v1_patch_drops_an_index_that_names_no_entry() {
        let mut entry = json!({"type":"compaction","firstKeptEntryIndex":0});
        patch_v1(entry.as_object_mut().unwrap(), "aaaaaaaa", None, &|_| None);
        assert_eq!(
            entry,
            json!({"type":"compaction","id":"aaaaaaaa","parentId":null})
        );
    }

    #[test]
    fn v2_patch_renames_only_hook_messages() {
        let mut hook = json!({"type":"message","message":{"role":"hookMessage","content":"x"}});
        patch_v2(hook.as_object_mut().unwrap());
        assert_eq!(hook["message"]["role"], "custom");
        let mut user = json!({"type":"message","message":{"role":"user"}});
        patch_v2(user.as_object_mut().unwrap());
        assert_eq!(user["message"]["role"], "user");
        let mut other = json!({"type":"custom","message":{"role":"hookMessage"}});
        patch_v2(other.as_object_mut().unwrap());
        assert_eq!(other["message"]["role"], "hookMessage");
    }
}
