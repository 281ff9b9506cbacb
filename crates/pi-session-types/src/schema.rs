//! JSON Schema of every line type of both dialects, generated from the typed model
//! (feature `schema`; `cargo xtask schema` writes it to `schema/`, and a test fails when the
//! committed files differ from what the types generate).
//!
//! The schema describes lines as omp and pi write them. Where the model keeps anything it does
//! not know (unknown entry types, message roles, content blocks), the schema accepts an object
//! whose `type` (or `role`) is none of the known ones; a known type must match its shape.
//! Unknown keys are allowed everywhere (the model keeps them).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Value, json};

use crate::entry::*;
use crate::field::{Field, MaybeTyped};
use crate::header::{SessionHeader, TitleSlot};
use crate::message::*;

impl<T: JsonSchema> JsonSchema for Field<T> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        format!("Nullable_{}", T::schema_name()).into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <Option<T>>::json_schema(generator)
    }
}

impl<T: JsonSchema> JsonSchema for MaybeTyped<T> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        generator.subschema_for::<T>()
    }
}

impl JsonSchema for StopReason {
    fn schema_name() -> Cow<'static, str> {
        "StopReason".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Why the turn ended: stop, length, toolUse, error, aborted (omp also pending, deferred); other strings are kept.",
            "type": "string"
        })
    }
}

impl JsonSchema for Content {
    fn schema_name() -> Cow<'static, str> {
        "Content".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let block = generator.subschema_for::<ContentBlock>();
        json_schema!({
            "description": "A plain string, or a list of content blocks.",
            "anyOf": [{"type": "string"}, {"type": "array", "items": block}]
        })
    }
}

/// `anyOf` the known shapes, or an object whose `key` is none of their literals.
fn known_or_other(description: &str, key: &str, known: Vec<(&str, Schema)>) -> Schema {
    let literals: Vec<&str> = known.iter().map(|(literal, _)| *literal).collect();
    let mut any_of: Vec<Value> = known.into_iter().map(|(_, s)| s.to_value()).collect();
    any_of.push(json!({
        "description": format!("Any other {key}, kept as written."),
        "type": "object",
        "properties": {key: {"not": {"enum": literals}}}
    }));
    let value = json!({"description": description, "anyOf": any_of});
    Schema::try_from(value).unwrap_or_default()
}

impl JsonSchema for ContentBlock {
    fn schema_name() -> Cow<'static, str> {
        "ContentBlock".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        known_or_other(
            "A content block, by `type`.",
            "type",
            vec![
                ("text", generator.subschema_for::<TextBlock>()),
                ("thinking", generator.subschema_for::<ThinkingBlock>()),
                ("image", generator.subschema_for::<ImageBlock>()),
                ("toolCall", generator.subschema_for::<ToolCallBlock>()),
            ],
        )
    }
}

impl JsonSchema for AgentMessage {
    fn schema_name() -> Cow<'static, str> {
        "AgentMessage".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        known_or_other(
            "A message, by `role`.",
            "role",
            vec![
                ("user", generator.subschema_for::<UserMessage>()),
                ("developer", generator.subschema_for::<DeveloperMessage>()),
                ("system", generator.subschema_for::<SystemMessage>()),
                ("assistant", generator.subschema_for::<AssistantMessage>()),
                ("toolResult", generator.subschema_for::<ToolResultMessage>()),
                (
                    "bashExecution",
                    generator.subschema_for::<BashExecutionMessage>(),
                ),
                (
                    "pythonExecution",
                    generator.subschema_for::<PythonExecutionMessage>(),
                ),
                (
                    "fileMention",
                    generator.subschema_for::<FileMentionMessage>(),
                ),
                ("custom", generator.subschema_for::<CustomMessage>()),
                ("hookMessage", generator.subschema_for::<HookMessage>()),
                (
                    "branchSummary",
                    generator.subschema_for::<BranchSummaryMessage>(),
                ),
                (
                    "compactionSummary",
                    generator.subschema_for::<CompactionSummaryMessage>(),
                ),
            ],
        )
    }
}

/// Calls `$go!(literal, Type)` for every known entry type.
macro_rules! entry_types {
    ($go:ident) => {
        vec![
            $go!("message", MessageEntry),
            $go!("model_change", ModelChangeEntry),
            $go!("thinking_level_change", ThinkingLevelChangeEntry),
            $go!("compaction", CompactionEntry),
            $go!("branch_summary", BranchSummaryEntry),
            $go!("custom", CustomEntry),
            $go!("custom_message", CustomMessageEntry),
            $go!("label", LabelEntry),
            $go!("session_info", SessionInfoEntry),
            $go!("usage", UsageEntry),
            $go!("context_edit", ContextEditEntry),
            $go!("model_usage", ModelUsageEntry),
            $go!("service_tier_change", ServiceTierChangeEntry),
            $go!("reset_boundary", ResetBoundaryEntry),
            $go!("archive", ArchiveEntry),
            $go!("title_change", TitleChangeEntry),
            $go!("ttsr_injection", TtsrInjectionEntry),
            $go!("credential_pin", CredentialPinEntry),
            $go!("session_init", SessionInitEntry),
            $go!("mode_change", ModeChangeEntry),
        ]
    };
}

impl JsonSchema for Entry {
    fn schema_name() -> Cow<'static, str> {
        "Entry".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        macro_rules! sub {
            ($literal:literal, $ty:ty) => {
                ($literal, generator.subschema_for::<$ty>())
            };
        }
        known_or_other("An entry line, by `type`.", "type", entry_types!(sub))
    }
}

/// Every line a session file holds (omp's title slot, the header, an entry).
#[derive(Debug)]
pub struct Line;

impl JsonSchema for Line {
    fn schema_name() -> Cow<'static, str> {
        "SessionLine".into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let slot = generator.subschema_for::<TitleSlot>();
        let header = generator.subschema_for::<SessionHeader>();
        let entry = generator.subschema_for::<Entry>();
        json_schema!({
            "description": "One line of an omp or pi session file (JSONL): omp's title slot (line 1 only), the session header, or an entry.",
            "anyOf": [slot, header, entry]
        })
    }
}

/// The schema files to write: `(file name, schema)`. `line.schema.json` covers every line;
/// one file per line type (`title`, `session`, each entry type) follows.
pub fn schema_files() -> Vec<(String, Value)> {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let file = |name: &str, schema: Schema| (format!("{name}.schema.json"), schema.to_value());
    let mut files = vec![
        file(
            "line",
            settings
                .clone()
                .into_generator()
                .into_root_schema_for::<Line>(),
        ),
        file(
            "title",
            settings
                .clone()
                .into_generator()
                .into_root_schema_for::<TitleSlot>(),
        ),
        file(
            "session",
            settings
                .clone()
                .into_generator()
                .into_root_schema_for::<SessionHeader>(),
        ),
    ];
    macro_rules! one {
        ($literal:literal, $ty:ty) => {
            file(
                &format!("entry.{}", $literal),
                settings
                    .clone()
                    .into_generator()
                    .into_root_schema_for::<$ty>(),
            )
        };
    }
    files.extend(entry_types!(one));
    files
}
