//! Each cursor's sparse overlay of resolution stamps, saved in the file.
//!
//! A stamp is a `custom` entry appended on the cursor's branch:
//!
//! ```json
//! {"type":"custom","customType":"pi-session.resolution",
//!  "data":{"cursor":"review","entryId":"a1b2c3d4","resolution":"outlined"}}
//! ```
//!
//! `cursor` is the cursor's name ([`Session::fork_named`]; `null` for the session's unnamed
//! cursors, which share one overlay), `entryId` the entry stamped, `resolution` a level's name
//! ([`Resolution::as_str`]) or `null` to remove the stamp. The last stamp in file order wins
//! per (cursor, entry), wherever it sits in the tree, so reopening a file restores every
//! cursor's overlay. pi and omp leave `custom` entries out of their context, and the stamp's
//! place on the branch changes nothing they send (`cargo xtask golden` checks it against the
//! real pi and omp). Named cursors are saved the same way ([`crate::CURSOR_CUSTOM_TYPE`]).

use pi_session_types::view::EntryRef;
use std::collections::BTreeMap;

use pi_session_types::{Entry, JsonMap, JsonValue};
use serde_json::json;

use super::Resolution;
use crate::error::{Error, Result};
use crate::session::Session;

/// The `customType` of a resolution stamp.
pub const RESOLUTION_CUSTOM_TYPE: &str = "pi-session.resolution";

/// The keys of a stamp's `data` record (ours: written and read only here).
mod stamp_key {
    /// The cursor's name, or `null`.
    pub const CURSOR: &str = "cursor";
    /// The entry stamped.
    pub const ENTRY_ID: &str = "entryId";
    /// The level's name, or `null`.
    pub const RESOLUTION: &str = "resolution";
}

/// One stamp as saved in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The cursor's name (`None`: the unnamed cursors).
    pub cursor: Option<String>,
    /// The entry stamped.
    pub entry_id: String,
    /// The level (`None`: the stamp is removed).
    pub resolution: Option<Resolution>,
}

impl Stamp {
    /// The `custom` entry that saves this stamp.
    pub fn entry(&self) -> Entry {
        let mut map = JsonMap::new();
        map.insert("type".into(), "custom".into());
        map.insert("customType".into(), RESOLUTION_CUSTOM_TYPE.into());
        map.insert(
            "data".into(),
            json!({
                stamp_key::CURSOR: self.cursor,
                stamp_key::ENTRY_ID: self.entry_id,
                stamp_key::RESOLUTION: self.resolution.map(Resolution::as_str),
            }),
        );
        Entry::from_map(map)
    }

    /// The stamp an entry (as JSON) saves, if it is one. A stamp naming an unknown level is
    /// not one (a newer writer's level is ignored, not misread).
    pub fn from_value(value: &JsonValue) -> Option<Self> {
        if EntryRef::new(value)
            .custom_type()
            .and_then(JsonValue::as_str)
            != Some(RESOLUTION_CUSTOM_TYPE)
        {
            return None;
        }
        let data = EntryRef::new(value).data()?;
        let resolution = match data.get(stamp_key::RESOLUTION) {
            None | Some(JsonValue::Null) => None,
            Some(JsonValue::String(name)) => Some(Resolution::parse(name)?),
            Some(_) => return None,
        };
        let cursor = match data.get(stamp_key::CURSOR) {
            None | Some(JsonValue::Null) => None,
            Some(JsonValue::String(name)) => Some(name.clone()),
            Some(_) => return None,
        };
        Some(Self {
            cursor,
            entry_id: data.get(stamp_key::ENTRY_ID)?.as_str()?.to_owned(),
            resolution,
        })
    }
}

/// One cursor's overlay: entry id → level.
pub type Overlay = BTreeMap<String, Resolution>;

impl Session {
    /// Stamps `entry_id` at `level` for this cursor (last write wins); the stamp is appended on
    /// this cursor's branch and returned. The entry must be in the session.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::manage::Resolution;
    /// use pi_session::{Session, UserOptions, user};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// let asked = session.append(user("hello", UserOptions::new()))?;
    /// let id = asked.id().unwrap();
    /// session.set_resolution(id, Resolution::Summarized)?;
    /// assert_eq!(session.resolution_of(id)?, Some(Resolution::Summarized));
    /// session.pin_entry(id)?;
    /// assert_eq!(session.resolution_of(id)?, Some(Resolution::Pinned));
    /// session.unpin_entry(id)?;
    /// assert_eq!(session.resolution_of(id)?, None);
    /// # Ok(()) }
    /// ```
    pub fn set_resolution(&mut self, entry_id: &str, level: Resolution) -> Result<Entry> {
        self.write_stamp(entry_id, Some(level))
    }

    /// Pins `entry_id` for this cursor: sent at its native resolution, never downgraded, cut or
    /// evicted.
    pub fn pin_entry(&mut self, entry_id: &str) -> Result<Entry> {
        self.write_stamp(entry_id, Some(Resolution::Pinned))
    }

    /// Removes this cursor's pin of `entry_id` (a stamp with no level); `None` (nothing
    /// written) when the entry is not pinned.
    pub fn unpin_entry(&mut self, entry_id: &str) -> Result<Option<Entry>> {
        if self.resolution_of(entry_id)? != Some(Resolution::Pinned) {
            self.check_entry(entry_id)?;
            return Ok(None);
        }
        self.write_stamp(entry_id, None).map(Some)
    }

    /// This cursor's stamp on `entry_id`, if any.
    pub fn resolution_of(&self, entry_id: &str) -> Result<Option<Resolution>> {
        Ok(self.resolutions()?.get(entry_id).copied())
    }

    /// This cursor's overlay: every entry it stamped, with its level.
    pub fn resolutions(&self) -> Result<Overlay> {
        let cursor = self.name.clone();
        let mut overlay = Overlay::new();
        for stamp in self.stamps()? {
            if stamp.cursor != cursor {
                continue;
            }
            match stamp.resolution {
                Some(level) => overlay.insert(stamp.entry_id, level),
                None => overlay.remove(&stamp.entry_id),
            };
        }
        Ok(overlay)
    }

    /// Every stamp of the log in file order (every cursor's).
    pub fn stamps(&self) -> Result<Vec<Stamp>> {
        let mut log = self.log();
        let customs: Vec<usize> = log.index.positions_of_kind("custom").collect();
        let mut stamps = Vec::new();
        for at in customs {
            if let Some(stamp) = Stamp::from_value(&log.value(at)?) {
                stamps.push(stamp);
            }
        }
        Ok(stamps)
    }

    fn write_stamp(&mut self, entry_id: &str, resolution: Option<Resolution>) -> Result<Entry> {
        self.check_entry(entry_id)?;
        let stamp = Stamp {
            cursor: self.name.clone(),
            entry_id: entry_id.to_owned(),
            resolution,
        };
        self.append(stamp.entry())
    }

    fn check_entry(&self, entry_id: &str) -> Result<()> {
        if self.log().index.position_of(entry_id).is_none() {
            return Err(Error::from(pi_session_store::StoreError::UnknownId {
                id: entry_id.to_owned(),
            }));
        }
        Ok(())
    }
}
