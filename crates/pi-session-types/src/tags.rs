//! Zero-sized markers for the literal `type`/`role` value of each known object.
//!
//! Each marker serialises as its literal string and only deserialises from it. Structs hold one
//! as their `kind`/`role` field so they write their discriminator in the right key position
//! without storing a `String`.

macro_rules! tag {
    ($(#[$doc:meta])* $name:ident = $lit:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            /// The literal string this marker stands for.
            pub const VALUE: &'static str = $lit;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        #[cfg(feature = "schema")]
        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({"type": "string", "const": $lit})
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        write!(f, "the string {:?}", $lit)
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        if v == $lit {
                            Ok($name)
                        } else {
                            Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                        }
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

tag!(/// `"type":"title"` (omp's fixed-width title slot).
    Title = "title");
tag!(/// `"type":"session"` (the header line).
    Session = "session");
tag!(/// `"type":"message"`.
    Message = "message");
tag!(/// `"type":"model_change"`.
    ModelChange = "model_change");
tag!(/// `"type":"thinking_level_change"`.
    ThinkingLevelChange = "thinking_level_change");
tag!(/// `"type":"compaction"`.
    Compaction = "compaction");
tag!(/// `"type":"branch_summary"`.
    BranchSummary = "branch_summary");
tag!(/// `"type":"custom"`.
    Custom = "custom");
tag!(/// `"type":"custom_message"`.
    CustomMessage = "custom_message");
tag!(/// `"type":"label"`.
    Label = "label");
tag!(/// `"type":"session_info"` (pi).
    SessionInfo = "session_info");
tag!(/// `"type":"usage"` (pi 1.6).
    Usage = "usage");
tag!(/// `"type":"context_edit"` (pi 1.6).
    ContextEdit = "context_edit");
tag!(/// `"type":"model_usage"` (omp).
    ModelUsage = "model_usage");
tag!(/// `"type":"service_tier_change"` (omp).
    ServiceTierChange = "service_tier_change");
tag!(/// `"type":"reset_boundary"` (omp).
    ResetBoundary = "reset_boundary");
tag!(/// `"type":"archive"` (omp).
    Archive = "archive");
tag!(/// `"type":"title_change"` (omp).
    TitleChange = "title_change");
tag!(/// `"type":"ttsr_injection"` (omp).
    TtsrInjection = "ttsr_injection");
tag!(/// `"type":"credential_pin"` (omp).
    CredentialPin = "credential_pin");
tag!(/// `"type":"session_init"` (omp subagent sessions).
    SessionInit = "session_init");
tag!(/// `"type":"mode_change"` (omp).
    ModeChange = "mode_change");

tag!(/// `"role":"user"`.
    RoleUser = "user");
tag!(/// `"role":"developer"` (omp).
    RoleDeveloper = "developer");
tag!(/// `"role":"system"` (pi 1.6).
    RoleSystem = "system");
tag!(/// `"role":"assistant"`.
    RoleAssistant = "assistant");
tag!(/// `"role":"toolResult"`.
    RoleToolResult = "toolResult");
tag!(/// `"role":"bashExecution"`.
    RoleBashExecution = "bashExecution");
tag!(/// `"role":"pythonExecution"` (omp).
    RolePythonExecution = "pythonExecution");
tag!(/// `"role":"fileMention"` (omp).
    RoleFileMention = "fileMention");
tag!(/// `"role":"custom"`.
    RoleCustom = "custom");
tag!(/// `"role":"hookMessage"` (legacy, migrated to `custom` at v3).
    RoleHookMessage = "hookMessage");
tag!(/// `"role":"branchSummary"` (normally only built in memory).
    RoleBranchSummary = "branchSummary");
tag!(/// `"role":"compactionSummary"` (normally only built in memory).
    RoleCompactionSummary = "compactionSummary");

tag!(/// `"type":"text"` content block.
    BlockText = "text");
tag!(/// `"type":"thinking"` content block.
    BlockThinking = "thinking");
tag!(/// `"type":"image"` content block.
    BlockImage = "image");
tag!(/// `"type":"toolCall"` content block.
    BlockToolCall = "toolCall");
