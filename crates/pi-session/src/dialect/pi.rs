//! pi's shapes (0.73 and 1.6 write the same): `appendModelChange`'s `{provider, modelId}`,
//! `thinkingLevel` left out for the default, the name as a `session_info` entry.

use pi_session_types::{JsonMap, JsonValue};
use serde_json::json;

use super::{WriteEntries, fields};

/// pi's writer.
pub(crate) struct Pi;

impl WriteEntries for Pi {
    fn model_change(&self, provider: &str, model_id: &str, _role: Option<&str>) -> JsonMap {
        fields(json!({"provider": provider, "modelId": model_id}))
    }

    fn thinking_level_change(&self, level: JsonValue) -> JsonMap {
        let mut map = JsonMap::new();
        if !level.is_null() {
            map.insert("thinkingLevel".into(), level);
        }
        map
    }

    fn session_name(&self, name: &str) -> (&'static str, JsonMap) {
        ("session_info", fields(json!({"name": name.trim()})))
    }

    fn custom_message_attribution<'a>(&self, _attribution: Option<&'a str>) -> Option<&'a str> {
        None
    }

    fn api(&self, pi: Option<&'static str>, omp: Option<&'static str>) -> Option<&'static str> {
        pi.or(omp)
    }
}
