//! Writing in the file's dialect: what differs between pi's and omp's shapes of the entries the
//! facade builds, one file per dialect behind [`WriteEntries`]. [`write_entries`] is the one
//! place that chooses (the tree crate's `SessionRules` answers the file facts: the title slot
//! and session naming).

mod omp;
mod pi;

use pi_session_tree::Dialect;
use pi_session_types::{JsonMap, JsonValue};

/// How one dialect writes the entries whose shape differs between pi and omp (see the table in
/// [`crate::builders`]). Each method gives the entry's fields after `type`.
pub(crate) trait WriteEntries {
    /// A `model_change` to `provider`/`model_id`, with omp's model `role` when given.
    fn model_change(&self, provider: &str, model_id: &str, role: Option<&str>) -> JsonMap;

    /// A `thinking_level_change` to `level` (`null`: the model's default).
    fn thinking_level_change(&self, level: JsonValue) -> JsonMap;

    /// The entry type and fields that name the session `name`.
    fn session_name(&self, name: &str) -> (&'static str, JsonMap);

    /// The `attribution` a `custom_message` carries, given the host's (`None`: not written).
    fn custom_message_attribution<'a>(&self, attribution: Option<&'a str>) -> Option<&'a str>;

    /// The `api` of a provider from the pinned catalogs (`pi`'s and `omp`'s entry for it):
    /// this dialect's, else the other's.
    fn api(&self, pi: Option<&'static str>, omp: Option<&'static str>) -> Option<&'static str>;
}

/// How `dialect` writes its entries.
pub(crate) fn write_entries(dialect: Dialect) -> &'static dyn WriteEntries {
    match dialect {
        Dialect::Omp(_) => &omp::Omp,
        // pi 0.73 and 1.6 write the same shapes; `Dialect` is `#[non_exhaustive]`, and an
        // agent this crate does not know yet is written as pi, the documented default.
        _ => &pi::Pi,
    }
}

/// `value`'s fields (an object literal's).
pub(crate) fn fields(value: JsonValue) -> JsonMap {
    match value {
        JsonValue::Object(map) => map,
        _ => JsonMap::new(),
    }
}
