//! Writing in the file's own dialect: the `set_*` and `append_*` methods of [`Session`] pick
//! the shapes of the dialect the session writes in ([`Session::dialect`]), so the real pi reads
//! what is written into a pi file and omp what is written into an omp file.

use pi_session_store::TitleWrite;
use pi_session_tree::Dialect;
use pi_session_types::{Entry, TitleSource};

use crate::builders::{CustomEntry, CustomMessage, Label, ModelChange, ThinkingLevelChange};
use crate::entries::{Reply, assistant_in};
use crate::error::{Error, Result};
use crate::session::Session;

impl Session {
    /// Whose shapes this session writes: detected from the file by [`Session::open`] (omp's
    /// title slot, header keys and entry types; pi 1.6's entries; else pi), given by
    /// [`SessionOptions::dialect`](crate::SessionOptions::dialect) for a new session. Shared by
    /// every cursor of the log.
    pub fn dialect(&self) -> Dialect {
        self.log().dialect
    }

    /// Writes in `dialect` from now on (every cursor of the log).
    pub fn set_dialect(&mut self, dialect: Dialect) {
        self.log().dialect = dialect;
    }

    /// Appends a switch to `model` (a req_llm spec) in the dialect's shape (pi:
    /// `provider`/`modelId`; omp: `model`); this cursor's model becomes it.
    ///
    /// ```
    /// # fn main() -> Result<(), pi_session::Error> {
    /// use pi_session::{Session, tree::Dialect};
    /// let mut session = Session::in_memory("anthropic:claude-x", "/w");
    /// let change = session.set_model("openai:gpt-5")?;
    /// assert_eq!(session.model(), "openai:gpt-5");
    /// assert_eq!(session.dialect(), Dialect::PI);
    /// let pi_session::types::Entry::ModelChange(change) = change else { panic!() };
    /// assert_eq!(change.provider_and_model_id(), Some(("openai", "gpt-5")));
    /// # Ok(()) }
    /// ```
    pub fn set_model(&mut self, model: &str) -> Result<Entry> {
        self.append_model_change(&ModelChange::new(model))
    }

    /// Appends `change` (with omp's role, if any) in the dialect's shape.
    pub fn append_model_change(&mut self, change: &ModelChange) -> Result<Entry> {
        let entry = change.entry(self.dialect());
        self.append(entry)
    }

    /// Appends a thinking-level change (`None`: the model's default).
    pub fn set_thinking_level(&mut self, level: Option<&str>) -> Result<Entry> {
        let change = ThinkingLevelChange {
            level: level.map(str::to_owned),
        };
        let entry = change.entry(self.dialect());
        self.append(entry)
    }

    /// Labels entry `target_id` (`None` clears its label). The target must be an entry of the
    /// session ([`Error::is_unknown_entry`] otherwise), as pi and omp require.
    pub fn set_label(&mut self, target_id: &str, label: Option<&str>) -> Result<Entry> {
        if self.log().index.position_of(target_id).is_none() {
            return Err(Error::from(pi_session_store::StoreError::UnknownId {
                id: target_id.to_owned(),
            }));
        }
        let label = Label {
            target_id: target_id.to_owned(),
            label: label.map(str::to_owned),
        };
        self.append(label.entry())
    }

    /// Names the session: pi's `session_info` entry; for omp a `title_change` entry and the
    /// header's title in omp's title slot (rewritten in place; a file without a slot keeps the
    /// entry only, and omp, which reads the name from the slot, will not see it).
    pub fn set_name(&mut self, name: &str) -> Result<Entry> {
        let dialect = self.dialect();
        let written = self.append(crate::builders::session_name(dialect, name))?;
        if dialect.has_title_slot() {
            let mut log = self.log();
            let outcome = log
                .writer
                .writer()?
                .set_title(Some(name), Some(TitleSource::User))?;
            debug_assert!(outcome != TitleWrite::AtCreation);
            log.renamed = Some(name.to_owned());
        }
        Ok(written)
    }

    /// Appends a host record (`custom`), which no model is sent.
    pub fn append_custom(&mut self, custom: &CustomEntry) -> Result<Entry> {
        self.append(custom.entry())
    }

    /// Appends a host message (`custom_message`) in the dialect's shape.
    pub fn append_custom_message(&mut self, message: &CustomMessage) -> Result<Entry> {
        let entry = message.entry(self.dialect());
        self.append(entry)
    }

    /// Appends the model's reply as an assistant message for this cursor's model, its `api`
    /// from the dialect's catalog unless [`Reply::api`] names one.
    pub fn append_reply(&mut self, reply: &Reply) -> Result<Entry> {
        let entry = assistant_in(self.dialect(), reply, &self.model.clone());
        self.append(entry)
    }
}
