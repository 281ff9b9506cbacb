//! Compaction by age or turns, and state and messages for extensions.

use pi_session_types::view::{EntryRef, MessageRef};
use std::time::Duration;

use pi_session_types::{Entry, JsonMap, JsonValue};

use crate::builders::{CustomEntry, CustomMessage};
use crate::entries::now_ms;
use crate::error::{Error, Result};
use crate::project::ProjectOptions;
use crate::session::Session;
use crate::stats::StatsOptions;

/// What [`Session::compact_older_than`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// The last N turns (a turn starts at a user message).
    Turns(usize),
    /// The entries written less than this long ago (from the turn of the oldest of them).
    Age(Duration),
    /// The entries written at or after this time (Unix milliseconds), from its turn on.
    Since(i64),
}

impl Session {
    /// Writes a compaction on this cursor's branch that keeps the entries newer than
    /// `threshold` and replaces the older ones with the summary `summarize` gives for the
    /// entries it covers (from the previous compaction's kept entries, or the branch's start,
    /// up to the first entry kept). The kept part always starts at a user message, so a tool
    /// call is never kept without its result. Written as pi and omp write their own
    /// compaction (`summary`, `firstKeptEntryId`, `tokensBefore`: the estimate of the context
    /// before it), so both send the summary and the kept entries; `None` when there is
    /// nothing older to compact.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::manage::Threshold;
    /// use pi_session::{ProjectOptions, Session, UserOptions, user};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// for n in 0..5 {
    ///     session.append(user(&format!("step {n}"), UserOptions::new()))?;
    /// }
    /// let written = session.compact_older_than(Threshold::Turns(2), |covered| {
    ///     format!("{} entries about steps 0-2", covered.len())
    /// })?;
    /// assert!(written.is_some());
    /// let texts: Vec<String> = session.context(&ProjectOptions::default())?.iter().map(|m| m.text()).collect();
    /// assert!(texts[0].contains("entries about steps 0-2"));
    /// assert_eq!(&texts[1..], ["step 3", "step 4"]);
    /// # Ok(()) }
    /// ```
    pub fn compact_older_than(
        &mut self,
        threshold: Threshold,
        summarize: impl FnOnce(&[Entry]) -> String,
    ) -> Result<Option<Entry>> {
        let branch = self.branch()?;
        let values: Vec<JsonValue> = branch.iter().map(crate::read::to_json).collect();
        let split = pi_session_tree::compacted(&values);
        let start = if split.compaction.is_some() {
            split.kept.start.min(split.later.start)
        } else {
            0
        };
        let starts_turn = |at: &usize| {
            let value = &values[*at];
            EntryRef::new(value).kind() == Some("message")
                && EntryRef::new(value)
                    .message_ref()
                    .and_then(MessageRef::role)
                    == Some("user")
                && EntryRef::new(value).id().is_some()
        };
        let turns: Vec<usize> = (split.later.start..values.len())
            .filter(starts_turn)
            .collect();
        let first_kept = match threshold {
            Threshold::Turns(n) => turns.len().checked_sub(n.max(1)).map(|i| turns[i]),
            Threshold::Age(age) => {
                let age = i64::try_from(age.as_millis()).unwrap_or(i64::MAX);
                first_since(
                    &values,
                    &turns,
                    now_ms().saturating_sub(age),
                    split.later.start,
                )
            }
            Threshold::Since(ms) => first_since(&values, &turns, ms, split.later.start),
        };
        let Some(first_kept) = first_kept.filter(|&at| at > split.later.start) else {
            return Ok(None);
        };
        let covered: Vec<Entry> = branch[start..first_kept]
            .iter()
            .filter(|e| e.kind() != "compaction")
            .cloned()
            .collect();
        let tokens_before = self
            .context_stats(&ProjectOptions::default(), &StatsOptions::default())?
            .estimated_tokens;
        let summary = summarize(&covered);
        let first_kept_id = EntryRef::new(&values[first_kept])
            .id()
            .ok_or_else(|| Error::invalid_input("the first entry kept has no id"))?
            .to_owned();
        let mut map = JsonMap::new();
        map.insert("type".into(), "compaction".into());
        map.insert("summary".into(), summary.into());
        map.insert("firstKeptEntryId".into(), first_kept_id.into());
        map.insert("tokensBefore".into(), tokens_before.into());
        self.append(Entry::from_map(map)).map(Some)
    }

    /// Saves an extension's state: a `custom` entry of type `namespace` holding `value`, which
    /// no model is sent. [`read_custom_state`](Self::read_custom_state) reads it back.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::Session;
    /// use serde_json::json;
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.write_custom_state("todo", json!({"open": 2}))?;
    /// session.write_custom_state("todo", json!({"open": 1}))?;
    /// assert_eq!(session.read_custom_state("todo")?, Some(json!({"open": 1})));
    /// assert_eq!(session.read_custom_state("other")?, None);
    /// # Ok(()) }
    /// ```
    pub fn write_custom_state(&mut self, namespace: &str, value: JsonValue) -> Result<Entry> {
        self.append_custom(&CustomEntry::new(namespace).data(value))
    }

    /// The state last saved for `namespace` on this cursor's branch.
    pub fn read_custom_state(&self, namespace: &str) -> Result<Option<JsonValue>> {
        Ok(self
            .last_on_branch("custom", namespace)?
            .and_then(|v| EntryRef::new(&v).data().cloned()))
    }

    /// Appends a message of an extension's: a `custom_message` of type `custom_type`, sent to
    /// the model as pi and omp send custom messages (as a user message).
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{ProjectOptions, Session};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// session.write_custom_message("reminder", "tests are in tests/")?;
    /// assert_eq!(session.read_custom_message("reminder")?.unwrap(), "tests are in tests/");
    /// assert_eq!(session.context(&ProjectOptions::default())?[0].text(), "tests are in tests/");
    /// # Ok(()) }
    /// ```
    pub fn write_custom_message(&mut self, custom_type: &str, content: &str) -> Result<Entry> {
        self.append_custom_message(&CustomMessage::new(custom_type, content))
    }

    /// The content of the last message of type `custom_type` on this cursor's branch.
    pub fn read_custom_message(&self, custom_type: &str) -> Result<Option<JsonValue>> {
        Ok(self
            .last_on_branch("custom_message", custom_type)?
            .and_then(|v| EntryRef::new(&v).content().cloned()))
    }

    fn last_on_branch(&self, kind: &str, custom_type: &str) -> Result<Option<JsonValue>> {
        let mut log = self.log();
        let leaf = self.leaf_in(&log);
        let Some(leaf) = leaf.and_then(|id| log.index.position_of(&id)) else {
            return Ok(None);
        };
        let positions = log.index.branch(leaf).positions;
        for at in positions.into_iter().rev() {
            if log.index.kind(at) != Some(kind) {
                continue;
            }
            let value = log.value(at)?;
            if EntryRef::new(&value)
                .custom_type()
                .and_then(JsonValue::as_str)
                == Some(custom_type)
            {
                return Ok(Some(value));
            }
        }
        Ok(None)
    }
}

/// The start of the turn of the first entry at or after `since` (Unix ms), from `from` on.
fn first_since(values: &[JsonValue], turns: &[usize], since: i64, from: usize) -> Option<usize> {
    let newer = (from..values.len()).find(|&at| {
        pi_session_types::js::date_ms(EntryRef::new(&values[at]).timestamp())
            .is_some_and(|ms| ms >= since)
    })?;
    turns.iter().rev().find(|&&t| t <= newer).copied()
}
