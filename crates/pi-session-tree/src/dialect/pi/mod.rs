//! pi's rules in this crate, for every [`PiRelease`]: its `buildSessionContext`
//! ([`context`]).

pub mod context;

use pi_session_types::shallow::Keys;
use pi_session_types::view::key;
use serde_json::Value;

use super::{BuildContext, PiRelease, SessionRules};
use crate::built::{Built, Extendable};
use crate::context::{AgentContext, FirstSent};
use crate::diagnostic::Diagnostic;
use crate::dialect::omp::blobs::BlobSource;

/// pi's `buildSessionContext` of one release.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pi(pub(crate) PiRelease);

impl SessionRules for Pi {
    fn branch_summary_flag_key(&self) -> &'static str {
        "fromHook"
    }

    fn has_title_slot(&self) -> bool {
        false
    }
}

impl BuildContext for Pi {
    fn first_sent(&self, path: &[Value]) -> FirstSent {
        context::first_sent(path)
    }

    /// pi 0.73 reads a `message` entry's type and id (a compaction's kept range is found by
    /// id), its message's role (is it an assistant turn?) and an assistant's provider and
    /// model (the model in effect), and sends every message as stored
    /// (`context::entry_messages`). pi 1.6 reads more: a missing content is normalised and a
    /// `context_edit` rewrites its target.
    fn message_keys(&self) -> Option<&'static Keys> {
        const PI_0_73: Keys = Keys {
            entry: &[key::TYPE, key::ID, key::MESSAGE],
            message: &[key::ROLE, key::PROVIDER, key::MODEL],
            blocks: &[],
        };
        match self.0 {
            PiRelease::V0_73 => Some(&PI_0_73),
            _ => None,
        }
    }

    /// pi's build is a fold over its context entries: a `message` entry after the others adds
    /// its message (and, for an assistant, the model) and reads nothing before it
    /// (`context::extend`); pi rewrites nothing at load.
    fn extends_by_messages(&self) -> bool {
        true
    }

    fn build(
        &self,
        path: &[Value],
        _blobs: Option<&dyn BlobSource>,
    ) -> (AgentContext, Vec<Built>, Vec<Diagnostic>, Extendable) {
        let (context, messages, diagnostics, tail) = context::build_extendable(path, self.0);
        (
            AgentContext::Pi(context),
            messages,
            diagnostics,
            Extendable::pi(tail),
        )
    }
}
