//! omp 18's shapes: `{model: "provider/id", role?}`, `configured: null` beside the thinking
//! level, the name as a `title_change` (and the title slot, which the session rewrites),
//! `attribution` on every custom message (`agent` unless the host says).

use pi_session_types::{JsonMap, JsonValue};
use serde_json::json;

use super::{WriteEntries, fields};

/// omp's writer.
pub(crate) struct Omp;

impl WriteEntries for Omp {
    fn model_change(&self, provider: &str, model_id: &str, role: Option<&str>) -> JsonMap {
        let mut map = fields(json!({"model": format!("{provider}/{model_id}")}));
        if let Some(role) = role {
            map.insert("role".into(), role.into());
        }
        map
    }

    fn thinking_level_change(&self, level: JsonValue) -> JsonMap {
        fields(json!({"thinkingLevel": level, "configured": null}))
    }

    fn session_name(&self, name: &str) -> (&'static str, JsonMap) {
        (
            "title_change",
            fields(json!({"title": name, "source": "user"})),
        )
    }

    fn custom_message_attribution<'a>(&self, attribution: Option<&'a str>) -> Option<&'a str> {
        Some(attribution.unwrap_or("agent"))
    }

    fn api(&self, pi: Option<&'static str>, omp: Option<&'static str>) -> Option<&'static str> {
        omp.or(pi)
    }
}
