//! Typed builders for the entries a host writes beyond rho's turn loop, each in the shape of the
//! dialect the file is written in ([`Dialect`]): what pi's and omp's own `SessionManager` append.
//!
//! | Entry | pi 0.73 / pi 1.6 | omp 18 |
//! |---|---|---|
//! | [`ModelChange`] | `{"provider","modelId"}` (`appendModelChange`) | `{"model":"provider/id","role"?}` |
//! | [`ThinkingLevelChange`] | `{"thinkingLevel"}` | `{"thinkingLevel","configured":null}` |
//! | [`Label`] | `{"targetId","label"?}` (no `label`: cleared) | the same |
//! | [`session_name`] | `{"type":"session_info","name"}` | `{"type":"title_change","title","source"}` and the title slot |
//! | [`CustomEntry`] | `{"customType","data"?}` | the same |
//! | [`CustomMessage`] | `{"customType","content","display","details"?}` | the same and `"attribution"` |
//!
//! Each builder gives an [`Entry`] without `id`, `parentId` and `timestamp`; append it through a
//! [`Session`](crate::Session), whose `set_*` methods pick the session's dialect for you.

use pi_session_tree::Dialect;
use pi_session_types::{Entry, JsonMap, JsonValue};

use crate::dialect::write_entries;
use crate::entries::Picture;
use crate::model::split_model;

fn entry(kind: &str, fields: JsonMap) -> Entry {
    let mut map = JsonMap::new();
    map.insert("type".into(), kind.into());
    map.extend(fields);
    Entry::from_map(map)
}

/// A switch to another model (`model_change`).
///
/// ```
/// use pi_session::{ModelChange, tree::Dialect, types::to_js_string};
/// let change = ModelChange::new("openai_codex:gpt-5");
/// assert_eq!(to_js_string(&change.entry(Dialect::PI)).unwrap(),
///     r#"{"type":"model_change","provider":"openai-codex","modelId":"gpt-5"}"#);
/// assert_eq!(to_js_string(&change.role("smol").entry(Dialect::OMP)).unwrap(),
///     r#"{"type":"model_change","model":"openai-codex/gpt-5","role":"smol"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChange {
    /// The model, a req_llm spec (`provider:id`).
    pub model: String,
    /// omp's model role (`default`, `smol`, `slow`, ...); pi has none and leaves it out.
    pub role: Option<String>,
}

impl ModelChange {
    /// A change to `model` (a req_llm spec), no role.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            role: None,
        }
    }

    /// Sets omp's role.
    #[must_use]
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.role = Some(role.into());
        self
    }

    /// The entry in `dialect`'s shape.
    pub fn entry(&self, dialect: Dialect) -> Entry {
        let (provider, id) = split_model(&self.model);
        let fields = write_entries(dialect).model_change(&provider, &id, self.role.as_deref());
        entry("model_change", fields)
    }
}

/// `model_change` to the req_llm spec `model` in `dialect`'s shape (see [`ModelChange`]).
pub fn model_change_in(dialect: Dialect, model: &str) -> Entry {
    ModelChange::new(model).entry(dialect)
}

/// A change of the thinking level (`thinking_level_change`): `off`, `minimal`, `low`, `medium`,
/// `high`, `xhigh` (pi's levels; omp adds its own), or `None` for the model's default.
///
/// ```
/// use pi_session::{ThinkingLevelChange, tree::Dialect, types::to_js_string};
/// let change = ThinkingLevelChange::new("high");
/// assert_eq!(to_js_string(&change.entry(Dialect::PI)).unwrap(),
///     r#"{"type":"thinking_level_change","thinkingLevel":"high"}"#);
/// assert_eq!(to_js_string(&change.entry(Dialect::OMP)).unwrap(),
///     r#"{"type":"thinking_level_change","thinkingLevel":"high","configured":null}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThinkingLevelChange {
    /// The level (`None`: written as `null` by omp, left out by pi).
    pub level: Option<String>,
}

impl ThinkingLevelChange {
    /// A change to `level`.
    pub fn new(level: impl Into<String>) -> Self {
        Self {
            level: Some(level.into()),
        }
    }

    /// The entry in `dialect`'s shape.
    pub fn entry(&self, dialect: Dialect) -> Entry {
        let level = self.level.clone().map_or(JsonValue::Null, JsonValue::from);
        entry(
            "thinking_level_change",
            write_entries(dialect).thinking_level_change(level),
        )
    }
}

/// A label on an entry (`label`), or with `label: None` the removal of its label. The same in
/// every dialect.
///
/// ```
/// use pi_session::{Label, types::to_js_string};
/// assert_eq!(to_js_string(&Label::set("a1b2c3d4", "good").entry()).unwrap(),
///     r#"{"type":"label","targetId":"a1b2c3d4","label":"good"}"#);
/// assert_eq!(to_js_string(&Label::clear("a1b2c3d4").entry()).unwrap(),
///     r#"{"type":"label","targetId":"a1b2c3d4"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The entry labelled.
    pub target_id: String,
    /// The label (`None`: clear it).
    pub label: Option<String>,
}

impl Label {
    /// Labels `target_id` with `label`.
    pub fn set(target_id: impl Into<String>, label: impl Into<String>) -> Self {
        Self {
            target_id: target_id.into(),
            label: Some(label.into()),
        }
    }

    /// Clears the label of `target_id`.
    pub fn clear(target_id: impl Into<String>) -> Self {
        Self {
            target_id: target_id.into(),
            label: None,
        }
    }

    /// The entry.
    pub fn entry(&self) -> Entry {
        let mut map = JsonMap::new();
        map.insert("targetId".into(), self.target_id.as_str().into());
        if let Some(label) = &self.label {
            map.insert("label".into(), label.as_str().into());
        }
        entry("label", map)
    }
}

/// The entry that names a session in `dialect`: pi's `session_info` (`name` trimmed, as pi
/// does), or omp's `title_change` (`source:"user"`; omp reads the name from the title slot,
/// which [`Session::set_name`](crate::Session::set_name) rewrites too).
///
/// ```
/// use pi_session::{session_name, tree::Dialect, types::to_js_string};
/// assert_eq!(to_js_string(&session_name(Dialect::PI, " Refactor ")).unwrap(),
///     r#"{"type":"session_info","name":"Refactor"}"#);
/// assert_eq!(to_js_string(&session_name(Dialect::OMP, "Refactor")).unwrap(),
///     r#"{"type":"title_change","title":"Refactor","source":"user"}"#);
/// ```
pub fn session_name(dialect: Dialect, name: &str) -> Entry {
    let (kind, fields) = write_entries(dialect).session_name(name);
    entry(kind, fields)
}

/// A host's own record (`custom`): kept in the file, never sent to the model.
///
/// ```
/// use pi_session::{CustomEntry, types::to_js_string};
/// use serde_json::json;
/// let entry = CustomEntry::new("my-host.checkpoint").data(json!({"step": 3})).entry();
/// assert_eq!(to_js_string(&entry).unwrap(),
///     r#"{"type":"custom","customType":"my-host.checkpoint","data":{"step":3}}"#);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CustomEntry {
    /// The host's type name.
    pub custom_type: String,
    /// What the host keeps (left out when `None`).
    pub data: Option<JsonValue>,
}

impl CustomEntry {
    /// A record of type `custom_type` without data.
    pub fn new(custom_type: impl Into<String>) -> Self {
        Self {
            custom_type: custom_type.into(),
            data: None,
        }
    }

    /// Sets the data.
    #[must_use]
    pub fn data(mut self, data: JsonValue) -> Self {
        self.data = Some(data);
        self
    }

    /// The entry.
    pub fn entry(&self) -> Entry {
        let mut map = JsonMap::new();
        map.insert("customType".into(), self.custom_type.as_str().into());
        if let Some(data) = &self.data {
            map.insert("data".into(), data.clone());
        }
        entry("custom", map)
    }
}

/// A message from the host that reaches the model as a user message (`custom_message`), with
/// any `customType`, `display` and `details`.
///
/// ```
/// use pi_session::{CustomMessage, tree::Dialect, types::to_js_string};
/// use serde_json::json;
/// let message = CustomMessage::new("my-host.reminder", "Tests must pass.")
///     .display(false)
///     .details(json!({"rule": 7}));
/// assert_eq!(to_js_string(&message.entry(Dialect::PI)).unwrap(),
///     r#"{"type":"custom_message","customType":"my-host.reminder","content":"Tests must pass.","display":false,"details":{"rule":7}}"#);
/// assert!(to_js_string(&message.entry(Dialect::OMP)).unwrap().ends_with(r#""attribution":"agent"}"#));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessage {
    /// The host's type name.
    pub custom_type: String,
    /// The content: a string, or an array of `text`/`image` parts.
    pub content: JsonValue,
    /// Whether a UI shows it.
    pub display: bool,
    /// The host's metadata (never sent to the model; left out when `None`).
    pub details: Option<JsonValue>,
    /// omp's attribution (`"agent"` unless set; pi writes none).
    pub attribution: Option<String>,
}

impl CustomMessage {
    /// A displayed message of type `custom_type` with text `content`.
    pub fn new(custom_type: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            custom_type: custom_type.into(),
            content: JsonValue::String(content.into()),
            display: true,
            details: None,
            attribution: None,
        }
    }

    /// Sets the content parts (`[{"type":"text",...},{"type":"image",...}]`).
    #[must_use]
    pub fn parts(mut self, parts: Vec<JsonValue>) -> Self {
        self.content = JsonValue::Array(parts);
        self
    }

    /// Shows it in a UI, or not.
    #[must_use]
    pub fn display(mut self, display: bool) -> Self {
        self.display = display;
        self
    }

    /// Sets the details.
    #[must_use]
    pub fn details(mut self, details: JsonValue) -> Self {
        self.details = Some(details);
        self
    }

    /// Sets omp's attribution (`"user"` or `"agent"`).
    #[must_use]
    pub fn attribution(mut self, attribution: impl Into<String>) -> Self {
        self.attribution = Some(attribution.into());
        self
    }

    /// The entry in `dialect`'s shape.
    pub fn entry(&self, dialect: Dialect) -> Entry {
        let mut map = JsonMap::new();
        map.insert("customType".into(), self.custom_type.as_str().into());
        map.insert("content".into(), self.content.clone());
        map.insert("display".into(), self.display.into());
        if let Some(details) = &self.details {
            map.insert("details".into(), details.clone());
        }
        let attribution = self.attribution.as_deref();
        if let Some(attribution) = write_entries(dialect).custom_message_attribution(attribution) {
            map.insert("attribution".into(), attribution.into());
        }
        entry("custom_message", map)
    }
}

/// A tool's result (rho's `tool_result/5` with named fields).
///
/// ```
/// use pi_session::{ToolResult, typed};
/// let entry = ToolResult::new("call-1", "read", "# App").error(false).entry();
/// assert_eq!(typed(entry.message().unwrap()), "# App");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The id of the call answered.
    pub call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The text part (always written, even empty).
    pub text: String,
    /// Whether the tool failed.
    pub is_error: bool,
    /// Pictures the tool returned.
    pub images: Vec<Picture>,
    /// The tool's details, when the host keeps them.
    pub details: Option<JsonValue>,
}

impl ToolResult {
    /// A successful result of call `call_id` of tool `tool_name` with `text`.
    pub fn new(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            tool_name: tool_name.into(),
            text: text.into(),
            is_error: false,
            images: Vec::new(),
            details: None,
        }
    }

    /// Marks the result as an error (or not).
    #[must_use]
    pub fn error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// Adds a picture.
    #[must_use]
    pub fn image(mut self, picture: Picture) -> Self {
        self.images.push(picture);
        self
    }

    /// Sets the details.
    #[must_use]
    pub fn details(mut self, details: JsonValue) -> Self {
        self.details = Some(details);
        self
    }

    /// The entry.
    pub fn entry(&self) -> Entry {
        crate::entries::tool_result(
            &self.call_id,
            &self.tool_name,
            &self.text,
            self.is_error,
            &self.images,
            self.details.clone(),
        )
    }
}

/// req_llm's usage map for [`Reply::usage`](crate::Reply::usage), with named fields.
///
/// ```
/// use pi_session::{UsageBuilder, usage};
/// let map = UsageBuilder::new().input(1200).output(80).cache_read(1000).total_cost(0.002).build();
/// let written = usage(&map);
/// assert_eq!(written.input(), 200); // input excludes cache reads, as pi counts it
/// assert_eq!(written.cache_read(), 1000);
/// assert_eq!(written.total_tokens(), 1280);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageBuilder {
    map: JsonMap,
}

impl UsageBuilder {
    /// No counts (all written as 0).
    pub fn new() -> Self {
        Self::default()
    }

    fn set(mut self, key: &str, value: impl Into<JsonValue>) -> Self {
        self.map.insert(key.into(), value.into());
        self
    }

    /// Input tokens, cache reads and writes included (req_llm's `input_tokens`).
    #[must_use]
    pub fn input(self, tokens: u64) -> Self {
        self.set("input_tokens", tokens)
    }

    /// Output tokens.
    #[must_use]
    pub fn output(self, tokens: u64) -> Self {
        self.set("output_tokens", tokens)
    }

    /// Tokens read from the prompt cache.
    #[must_use]
    pub fn cache_read(self, tokens: u64) -> Self {
        self.set("cache_read_tokens", tokens)
    }

    /// Tokens written to the prompt cache.
    #[must_use]
    pub fn cache_write(self, tokens: u64) -> Self {
        self.set("cache_write_tokens", tokens)
    }

    /// Cost of the input, in dollars.
    #[must_use]
    pub fn input_cost(self, dollars: f64) -> Self {
        self.set("input_cost", dollars)
    }

    /// Cost of the output, in dollars.
    #[must_use]
    pub fn output_cost(self, dollars: f64) -> Self {
        self.set("output_cost", dollars)
    }

    /// Total cost, in dollars.
    #[must_use]
    pub fn total_cost(self, dollars: f64) -> Self {
        self.set("total_cost", dollars)
    }

    /// The map.
    pub fn build(self) -> JsonMap {
        self.map
    }
}
