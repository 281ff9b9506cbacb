//! pi's rules in this crate, for every [`PiRelease`]: its `buildSessionContext`
//! ([`context`]).

pub mod context;

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
