//! Which implementation's rules to follow: [`Dialect`], one variant per agent, each carrying
//! its release ([`PiRelease`], [`OmpRelease`]).
//!
//! A release is one variant of one release enum. Every stage that differs per dialect keeps
//! its rules in a `dialect/{pi,omp}` folder of its crate, behind one trait per stage, and this
//! is the only place that chooses between them.

pub mod omp;
pub mod pi;

use pi_session_types::shallow::Keys;
use serde::{Serialize, Serializer};
use serde_json::Value;

use self::omp::blobs::BlobSource;
use crate::built::{Built, Extendable};
use crate::context::{AgentContext, FirstSent, MessageLine};
use crate::diagnostic::Diagnostic;

/// Which pi release's rules to follow (`buildSessionContext` in this crate, `convertToLlm` in
/// the context crate: one name for both stages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum PiRelease {
    /// `@mariozechner/pi-coding-agent` 0.73.
    #[default]
    V0_73,
    /// `@earendil-works/pi-coding-agent` 1.6: `context_edit` entries, compaction
    /// `systemMessage`s, `system` role messages (pi.md §10).
    V1_6,
}

/// Which omp release's rules to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OmpRelease {
    /// `@oh-my-pi/pi-coding-agent` 18.2.3.
    #[default]
    V18_2,
}

/// Which implementation's rules to follow: the agent, and its release.
///
/// Named on the command line, in files and in recordings by [`Dialect::as_str`] (`pi`, `pi16`,
/// `omp`); [`Dialect::PI`], [`Dialect::PI16`] and [`Dialect::OMP`] are those three.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// pi: upstream `@mariozechner/pi-coding-agent` 0.73 and its successor
    /// `@earendil-works/pi-coding-agent` 1.6.
    Pi(PiRelease),
    /// oh-my-pi (`@oh-my-pi/pi-coding-agent`). Reads pi-written files the way omp does
    /// (e.g. ignores pi's `{provider, modelId}` model changes).
    Omp(OmpRelease),
}

impl Default for Dialect {
    fn default() -> Self {
        Self::PI
    }
}

impl Dialect {
    /// pi 0.73 (`pi`).
    pub const PI: Self = Self::Pi(PiRelease::V0_73);
    /// pi 1.6 (`pi16`).
    pub const PI16: Self = Self::Pi(PiRelease::V1_6);
    /// omp 18.2.3 (`omp`).
    pub const OMP: Self = Self::Omp(OmpRelease::V18_2);

    /// Every dialect, in the order of their names.
    pub const ALL: [Self; 3] = [Self::PI, Self::PI16, Self::OMP];

    /// Parses `pi`, `pi16` or `omp`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|dialect| dialect.as_str() == text)
    }

    /// `"pi"`, `"pi16"` or `"omp"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pi(PiRelease::V0_73) => "pi",
            Self::Pi(PiRelease::V1_6) => "pi16",
            Self::Omp(OmpRelease::V18_2) => "omp",
        }
    }

    /// Whether this is one of the pi releases (0.73 or 1.6), which share the
    /// file layout, session naming and `{messages, thinkingLevel, model}`.
    pub fn is_pi_family(self) -> bool {
        matches!(self, Self::Pi(_))
    }

    /// Whether this is an omp release.
    pub fn is_omp(self) -> bool {
        matches!(self, Self::Omp(_))
    }

    /// The pi release, for a pi dialect.
    pub fn pi_release(self) -> Option<PiRelease> {
        match self {
            Self::Pi(release) => Some(release),
            Self::Omp(_) => None,
        }
    }
}

/// One dialect release's `buildSessionContext` (`dialect/pi/` and `dialect/omp/`; chosen by
/// [`Dialect::build_context`], the one place that matches on a release).
pub(crate) trait BuildContext {
    /// Where the part of `path` that the build may send begins; bodies before it are read
    /// only when a rule names them (see [`crate::source::context_path`]).
    fn first_sent(&self, path: &[Value]) -> FirstSent;

    /// Whether the dialect rewrites entries when it loads them ([`BuildContext::prepare`]):
    /// a borrowed path is then copied first.
    fn prepares(&self) -> bool {
        false
    }

    /// Whether [`BuildContext::prepare`] may change the `message` of the entry whose line (as
    /// written) is `line`, with a blob folder given or not: `false` when its message is sent as
    /// the line holds it (a caller may then copy its bytes).
    fn may_rewrite_message_line(&self, _line: &[u8], _blobs: bool) -> bool {
        false
    }

    /// The keys of a `message` entry and of its message that the build reads, when it reads no
    /// other and sends such a message only unchanged ([`Built::Entry`]), not at all, or changed
    /// where the build reports it ([`crate::built::Extendable::rewrote_keyed_messages`]; only
    /// a message whose line's keys cut its `content`, [`Keys::blocks`]): a
    /// caller that has the message's bytes may then read just these keys (line by line:
    /// [`BuildContext::message_keys_of_line`]). `None` (the default): the build may read or
    /// copy the whole entry.
    fn message_keys(&self) -> Option<&'static Keys> {
        None
    }

    /// [`BuildContext::message_keys`] for the `message` entry whose line is `line`: fewer
    /// where the rules read less of it, `None` where they may read more (or send it changed
    /// unreported); a line read whole. Decided from the bytes for a line whose message is
    /// spelled as `JSON.stringify` spells it (the only ones a caller reads as keys: in another
    /// spelling a word may hide behind an escape). The default: `message_keys`, every line.
    fn message_keys_of_line(&self, _line: &[u8]) -> Option<&'static Keys> {
        self.message_keys()
    }

    /// [`BuildContext::message_keys_of_line`] and [`BuildContext::may_rewrite_message_line`]
    /// of one line, for a caller that asks both: `role` is its message's role as
    /// [`pi_session_types::shallow::laid_out_role`] reads it (a caller that read the line's
    /// head for its keys next has it: [`pi_session_types::shallow::LaidOut`]), which a dialect
    /// whose answers depend on it (omp) takes from there instead of reading the line again.
    fn message_line(&self, line: &[u8], _role: Option<&[u8]>, blobs: bool) -> MessageLine {
        MessageLine {
            keys: self.message_keys_of_line(line),
            may_rewrite: self.may_rewrite_message_line(line, blobs),
        }
    }

    /// Whether a build of this release's head ([`BuildContext::build_streamed`]) can be
    /// continued with the run of `message` entries after it, a part at a time
    /// ([`Extendable::extend_read`]; [`Extendable::extends_alone`] says so for a given build,
    /// unless a rule of that build reaches forward: pi 1.6's context edits), each part reading
    /// nothing of the path before it, so that a caller reads and sends such a run after the
    /// rest ([`crate::source::context_path_streamed`]). The caller applies the load-time
    /// rewrites ([`BuildContext::prepare`]) to each part, and sends the messages built once
    /// [`Extendable::release`] says none of them can change any more: always for pi; omp's
    /// passes over the messages reach back, so it holds back those they may change and runs
    /// the passes over them once they can tell ([`Extendable::finish_held`]). `false` (the
    /// default): read and built whole.
    fn extends_by_messages(&self) -> bool {
        false
    }

    /// How many of the `message` entries right after the path's last entry of another type
    /// a build reads (beyond sending them), so that a caller splitting the path there keeps
    /// them with the head ([`crate::source::context_path_streamed`]): omp dates an Anthropic
    /// compaction's summary by the entry after the compaction. 0 (the default): none.
    fn messages_read_after_others(&self) -> usize {
        0
    }

    /// [`BuildContext::build`] of a branch's head, to be continued a part at a time with the
    /// `message` entries after it ([`crate::built::agent_context_built_streamed`]): omp leaves
    /// its passes over the messages to the end. The default: the build itself.
    fn build_streamed(
        &self,
        path: &[Value],
        blobs: Option<&dyn BlobSource>,
    ) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
        self.build(path, blobs)
    }

    /// The load-time rewrites of the path's entries, in place (omp's; pi has none).
    fn prepare(&self, _path: &mut [Value], _blobs: Option<&dyn BlobSource>) -> Vec<Diagnostic> {
        Vec::new()
    }

    /// `buildSessionContext` of a prepared path: the context (its messages left empty), the
    /// messages as [`Built`], the diagnostics, and what continuing the build needs.
    fn build(
        &self,
        path: &[Value],
        blobs: Option<&dyn BlobSource>,
    ) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable);
}

/// What a dialect release's files look like beyond `buildSessionContext`: the facts the
/// facade's writers, session naming and the tree's mutations ask (`dialect/pi/`,
/// `dialect/omp/`; chosen by [`Dialect::session_rules`]).
pub trait SessionRules {
    /// The key of a `branch_summary`'s "made by an extension" flag: `fromHook` (pi),
    /// `fromExtension` (omp).
    fn branch_summary_flag_key(&self) -> &'static str;

    /// Whether a file starts with a title slot, and the session's name is its title (slot,
    /// else header: omp) rather than the latest `session_info` entry's name (pi).
    fn has_title_slot(&self) -> bool;
}

impl Dialect {
    /// This release's file facts ([`SessionRules`]).
    pub fn session_rules(self) -> &'static dyn SessionRules {
        match self {
            Self::Pi(PiRelease::V0_73) => &pi::Pi(PiRelease::V0_73),
            Self::Pi(PiRelease::V1_6) => &pi::Pi(PiRelease::V1_6),
            Self::Omp(OmpRelease::V18_2) => &omp::Omp(OmpRelease::V18_2),
        }
    }

    /// This release's `buildSessionContext`.
    pub(crate) fn build_context(self) -> &'static dyn BuildContext {
        match self {
            Self::Pi(PiRelease::V0_73) => &pi::Pi(PiRelease::V0_73),
            Self::Pi(PiRelease::V1_6) => &pi::Pi(PiRelease::V1_6),
            Self::Omp(OmpRelease::V18_2) => &omp::Omp(OmpRelease::V18_2),
        }
    }

    /// Whether a file of this dialect starts with a title slot ([`SessionRules::has_title_slot`]).
    pub fn has_title_slot(self) -> bool {
        self.session_rules().has_title_slot()
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serialises as its name (`"pi"`, `"pi16"`, `"omp"`).
impl Serialize for Dialect {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_keep_todays_spelling() {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.as_str()).collect();
        assert_eq!(names, ["pi", "pi16", "omp"]);
        for dialect in Dialect::ALL {
            assert_eq!(Dialect::parse(dialect.as_str()), Some(dialect));
            assert_eq!(
                serde_json::to_value(dialect).ok(),
                Some(serde_json::Value::from(dialect.as_str()))
            );
        }
        assert_eq!(Dialect::parse("pi17"), None);
        assert_eq!(Dialect::default(), Dialect::PI);
    }
}
