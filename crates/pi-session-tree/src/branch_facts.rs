//! Facts about a branch that hosts ask for: what compaction kept, which model
//! and thinking level are in effect, what it cost (rho's `compacted/1`,
//! `model_from/1`, `totals/1`, `add_usage/2`, plus pi's usage breakdown).

use pi_session_types::model_facts::ModelFacts;
use pi_session_types::shallow::Keys;
use pi_session_types::view::{EntryRef, MessageRef, TaskDetailsRef, UsageRef, key};
use std::borrow::Cow;
use std::ops::Range;

use serde::Serialize;
use serde_json::Value;

use pi_session_types::js;
use pi_session_types::needle::{KeyNeedle, LineKeys};

/// How the latest compaction splits a branch (rho's `compacted/1`).
///
/// With a compaction at index `c`: `kept` runs from the entry whose id is the
/// compaction's `firstKeptEntryId` up to `c` (exclusive), and is empty when that
/// id is not a string or not found before `c`; `later` is `c+1..`. Without a
/// compaction: no compaction, empty `kept`, `later` = the whole branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compacted {
    /// Index of the latest compaction in the branch.
    pub compaction: Option<usize>,
    /// Indices of the entries kept verbatim before the compaction.
    pub kept: Range<usize>,
    /// Indices of the entries after the compaction.
    pub later: Range<usize>,
}

impl Compacted {
    /// Indices of entries the summary replaced (before `kept`, plus the
    /// compaction itself): rho's `away` set.
    pub fn away(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.kept.start).chain(self.compaction)
    }

    /// The compaction itself, in the branch this split was made of (JSON values, or the
    /// facade's typed entries).
    pub fn compaction_in<'a, T>(&self, branch: &'a [T]) -> Option<&'a T> {
        self.compaction.and_then(|c| branch.get(c))
    }

    /// The entries kept verbatim before the compaction, in the branch this split was made of.
    pub fn kept_in<'a, T>(&self, branch: &'a [T]) -> &'a [T] {
        branch.get(self.kept.clone()).unwrap_or_default()
    }

    /// The entries after the compaction (the whole branch without one), in the branch this
    /// split was made of.
    pub fn later_in<'a, T>(&self, branch: &'a [T]) -> &'a [T] {
        branch.get(self.later.clone()).unwrap_or_default()
    }
}

/// Splits `branch` at its latest compaction with rho's rule.
///
/// ```
/// use pi_session_tree::compacted;
/// use serde_json::json;
///
/// let branch = vec![
///     json!({"type":"message","id":"1"}), json!({"type":"message","id":"2"}),
///     json!({"type":"compaction","id":"3","firstKeptEntryId":"2"}),
///     json!({"type":"message","id":"4"}),
/// ];
/// let split = compacted(&branch);
/// assert_eq!(split.kept_in(&branch), &branch[1..2]);
/// assert_eq!((split.compaction, split.kept, split.later), (Some(2), 1..2, 3..4));
/// ```
pub fn compacted(branch: &[Value]) -> Compacted {
    let Some(c) = branch
        .iter()
        .rposition(|e| EntryRef::new(e).is("compaction"))
    else {
        return Compacted {
            compaction: None,
            kept: 0..0,
            later: 0..branch.len(),
        };
    };
    let kept = js::as_str(EntryRef::new(&branch[c]).first_kept_entry_id())
        .and_then(|first| {
            branch[..c]
                .iter()
                .position(|e| EntryRef::new(e).id() == Some(first))
        })
        .map_or(c..c, |start| start..c);
    Compacted {
        compaction: Some(c),
        kept,
        later: c + 1..branch.len(),
    }
}

/// A model named by a session: `provider` and model id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelRef {
    /// Provider id, e.g. `anthropic`.
    pub provider: String,
    /// Model id, e.g. `claude-sonnet-4-5` (may contain `/`).
    pub model_id: String,
}

impl ModelRef {
    /// Splits an omp/rho model string `provider/modelId` at the first `/`. A
    /// string without `/` is a model id with an empty provider.
    pub fn from_pi_string(text: &str) -> Self {
        match text.split_once('/') {
            Some((provider, model_id)) => Self {
                provider: provider.to_owned(),
                model_id: model_id.to_owned(),
            },
            None => Self {
                provider: String::new(),
                model_id: text.to_owned(),
            },
        }
    }

    /// `provider/modelId` (omp's and rho's session form).
    pub fn pi_string(&self) -> String {
        if self.provider.is_empty() {
            self.model_id.clone()
        } else {
            format!("{}/{}", self.provider, self.model_id)
        }
    }

    /// rho's `from_pi_model`: the req_llm spec `provider:id` (`openai-codex`
    /// maps to `openai_codex`; nothing else is renamed).
    pub fn req_llm_spec(&self) -> String {
        if self.provider.is_empty() {
            return self.model_id.clone();
        }
        format!("{}:{}", req_llm_provider(&self.provider), self.model_id)
    }
}

/// req_llm provider ids that pi and omp spell differently, as (req_llm id, pi id) pairs
/// (rho-reqllm.md §A.9). There is only one; every other provider keeps its name.
const PI_PROVIDER_NAMES: [(&str, &str); 1] = [("openai_codex", "openai-codex")];

/// The pi/omp spelling of a req_llm provider id (`openai_codex` → `openai-codex`).
///
/// ```
/// assert_eq!(pi_session_tree::branch_facts::pi_provider("openai_codex"), "openai-codex");
/// assert_eq!(pi_session_tree::branch_facts::pi_provider("anthropic"), "anthropic");
/// ```
pub fn pi_provider(req_llm: &str) -> &str {
    PI_PROVIDER_NAMES
        .iter()
        .find(|(r, _)| *r == req_llm)
        .map_or(req_llm, |(_, pi)| pi)
}

/// The req_llm spelling of a pi/omp provider id (`openai-codex` → `openai_codex`).
///
/// ```
/// assert_eq!(pi_session_tree::branch_facts::req_llm_provider("openai-codex"), "openai_codex");
/// ```
pub fn req_llm_provider(pi: &str) -> &str {
    PI_PROVIDER_NAMES
        .iter()
        .find(|(_, p)| *p == pi)
        .map_or(pi, |(r, _)| r)
}

/// The model in effect on a branch (rho's `model_from/1`, which the facade's `model_from`
/// gives as a req_llm spec): the last
/// `model_change` with the default role (a missing role is default), else the
/// last assistant message's provider/model, else none.
///
/// rho reads omp's `{model}` shape; pi's `{provider, modelId}` shape is read
/// too, as an explicit default change. For the exact string rho passes to
/// `from_pi_model` use [`pi_model_from`].
pub fn model_in_effect(branch: &[Value]) -> Option<ModelRef> {
    Some(match model_candidate(branch)?.name() {
        ModelName::PiString(model) => ModelRef::from_pi_string(model),
        ModelName::Parts(provider, model_id) => ModelRef {
            provider: provider.to_string(),
            model_id: model_id.to_string(),
        },
    })
}

/// The model in effect on a branch as the session spells it,
/// `provider/modelId`: the string rho's `model_from/1` hands to
/// `from_pi_model` (same choice of entry as [`model_in_effect`]).
///
/// Unlike [`ModelRef::pi_string`] it keeps what a split loses: a
/// `model_change` to `"/x"` stays `"/x"` (rho's req_llm spec `":x"`), not `"x"`.
///
/// ```
/// use pi_session_tree::{model_in_effect, pi_model_from};
/// use serde_json::json;
///
/// let branch = [json!({"type":"model_change","id":"1","model":"/x"})];
/// assert_eq!(pi_model_from(&branch).as_deref(), Some("/x"));
/// assert_eq!(model_in_effect(&branch).map(|m| m.pi_string()).as_deref(), Some("x"));
/// ```
pub fn pi_model_from(branch: &[Value]) -> Option<String> {
    model_candidate(branch).map(|named| named.name().pi_string())
}

/// A model as an entry names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelName<'a> {
    /// A `model_change`'s `model` string (`provider/modelId`, or anything).
    PiString(Cow<'a, str>),
    /// Separate provider and model id (pi's `model_change`, an assistant turn).
    Parts(Cow<'a, str>, Cow<'a, str>),
}

impl ModelName<'_> {
    /// The session's spelling, `provider/modelId` (a `model_change`'s `model` string as it is).
    pub fn pi_string(&self) -> String {
        match self {
            Self::PiString(model) => model.clone().into_owned(),
            Self::Parts(provider, model_id) => format!("{provider}/{model_id}"),
        }
    }
}

/// The model one entry names for rho's rule ([`pi_model_from`]), and with which weight.
///
/// The rule over a branch: the last [`Explicit`](Self::Explicit) entry wins, else the last
/// [`Assistant`](Self::Assistant) one. So a reader that walks back from the leaf can stop at the
/// first `model_change` that names one, else at the first assistant message that does, and
/// read no other entry ([`named_model`] reads the few fields it needs, [`ModelFacts`], e.g.
/// from a borrowed parse of the line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamedModel<'a> {
    /// A `model_change` with the default role (a missing or non-string role is default)
    /// naming a model: `model`, else both `provider` and `modelId`.
    Explicit(ModelName<'a>),
    /// An assistant message naming both `provider` and `model`.
    Assistant(ModelName<'a>),
}

impl<'a> NamedModel<'a> {
    /// The name, whatever its weight.
    pub fn name(&self) -> &ModelName<'a> {
        match self {
            Self::Explicit(name) | Self::Assistant(name) => name,
        }
    }
}

/// The model `entry` names for [`pi_model_from`]'s rule, if any.
///
/// ```
/// use pi_session_tree::branch_facts::{ModelName, NamedModel, named_model};
/// use pi_session_types::model_facts::ModelFacts;
/// let line = br#"{"type":"message","id":"a","message":{"role":"assistant","provider":"p","model":"m"}}"#;
/// let named = named_model(ModelFacts::parse(line).unwrap()).unwrap();
/// assert_eq!(named, NamedModel::Assistant(ModelName::Parts("p".into(), "m".into())));
/// assert_eq!(named.name().pi_string(), "p/m");
/// ```
pub fn named_model(entry: ModelFacts<'_>) -> Option<NamedModel<'_>> {
    match entry.kind.as_deref() {
        Some("model_change") => {
            if entry.role.as_deref().is_some_and(|role| role != "default") {
                return None;
            }
            let name = match (entry.model, entry.provider, entry.model_id) {
                (Some(model), _, _) => ModelName::PiString(model),
                (None, Some(provider), Some(model_id)) => ModelName::Parts(provider, model_id),
                _ => return None,
            };
            Some(NamedModel::Explicit(name))
        }
        Some("message") => {
            let message = entry.message?;
            if message.role.as_deref() != Some("assistant") {
                return None;
            }
            Some(NamedModel::Assistant(ModelName::Parts(
                message.provider?,
                message.model?,
            )))
        }
        _ => None,
    }
}

/// rho's choice: the last default-role `model_change`, else the last
/// assistant message naming both provider and model.
fn model_candidate(branch: &[Value]) -> Option<NamedModel<'_>> {
    explicit_model(branch).or_else(|| assistant_model(branch))
}

/// The last default-role `model_change` naming a model.
fn explicit_model(branch: &[Value]) -> Option<NamedModel<'_>> {
    last_named(branch, |named| matches!(named, NamedModel::Explicit(_)))
}

/// The last assistant message naming both provider and model.
fn assistant_model(branch: &[Value]) -> Option<NamedModel<'_>> {
    last_named(branch, |named| matches!(named, NamedModel::Assistant(_)))
}

/// The last entry of `branch` naming a model that `wanted` accepts.
fn last_named<'a>(
    branch: &'a [Value],
    wanted: impl Fn(&NamedModel<'a>) -> bool,
) -> Option<NamedModel<'a>> {
    branch
        .iter()
        .rev()
        .filter_map(|e| named_model(ModelFacts::of_value(e)))
        .find(|named| wanted(named))
}

/// [`totals`], [`pi_model_from`] and the compactions of a branch, added up one slice of the
/// branch at a time (root first), so a caller can read a long branch in chunks and keep none
/// of it: after every slice is added, each answer equals the function's over the whole branch.
///
/// ```
/// use pi_session_tree::{BranchTally, pi_model_from, totals};
/// use serde_json::json;
///
/// let branch = [
///     json!({"type":"model_change","id":"1","model":"a/b"}),
///     json!({"type":"message","id":"2","message":{"role":"assistant","provider":"c","model":"d","usage":{"totalTokens":5,"output":2,"cost":{"total":0.5}}}}),
///     json!({"type":"compaction","id":"3"}),
/// ];
/// let mut tally = BranchTally::default();
/// for slice in branch.chunks(2) {
///     tally.add(slice);
/// }
/// assert_eq!(tally.totals, totals(&branch));
/// assert_eq!(tally.model(), pi_model_from(&branch));
/// assert_eq!(tally.compactions, 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchTally {
    /// [`totals`] of the entries added so far.
    pub totals: Totals,
    /// How many `compaction` entries were added.
    pub compactions: usize,
    /// The latest explicit model seen (a default-role `model_change`).
    explicit: Option<String>,
    /// The latest assistant model seen.
    assistant: Option<String>,
}

impl BranchTally {
    /// Adds the next entries of the branch (in branch order, after those added before).
    pub fn add(&mut self, entries: &[Value]) {
        self.totals = fold_usage(self.totals, entries);
        self.compactions += entries
            .iter()
            .filter(|e| EntryRef::new(e).is("compaction"))
            .count();
        if let Some(model) = explicit_model(entries) {
            self.explicit = Some(model.name().pi_string());
        }
        if let Some(model) = assistant_model(entries) {
            self.assistant = Some(model.name().pi_string());
        }
    }

    /// [`pi_model_from`] of the entries added so far.
    pub fn model(&self) -> Option<String> {
        self.explicit.clone().or_else(|| self.assistant.clone())
    }
}

/// The thinking level in effect: the last `thinking_level_change` on the
/// branch with a string level, default `"off"`.
pub fn thinking_level(branch: &[Value]) -> String {
    branch
        .iter()
        .rev()
        .filter(|e| EntryRef::new(e).is("thinking_level_change"))
        .find_map(|e| js::as_str(EntryRef::new(e).thinking_level()))
        .unwrap_or("off")
        .to_owned()
}

fn assistant_message(entry: &Value) -> Option<&Value> {
    if !EntryRef::new(entry).is("message") {
        return None;
    }
    let message = EntryRef::new(entry).message()?;
    MessageRef::new(message)
        .is_role("assistant")
        .then_some(message)
}

/// rho's running totals: tokens, output tokens and cost.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Totals {
    /// Sum of `totalTokens`.
    pub tokens: f64,
    /// Sum of `output`.
    pub output: f64,
    /// Sum of `cost.total`.
    pub cost: f64,
}

fn number(value: Option<&Value>) -> f64 {
    value.and_then(Value::as_f64).unwrap_or(0.0)
}

/// rho's `add_usage/2`: adds one pi `Usage` object to a running total
/// (missing or non-numeric fields count as 0).
pub fn add_usage(totals: Totals, usage: &Value) -> Totals {
    let usage = UsageRef::new(usage);
    Totals {
        tokens: totals.tokens + number(usage.total_tokens()),
        output: totals.output + number(usage.output()),
        cost: totals.cost + number(usage.cost_ref().total()),
    }
}

/// rho's `totals/1`: [`add_usage`] over every assistant message with a usage
/// object (errored and aborted turns included).
pub fn totals(entries: &[Value]) -> Totals {
    fold_usage(Totals::default(), entries)
}

/// [`add_usage`] of each assistant message of `entries`, in order, onto `start`.
fn fold_usage(start: Totals, entries: &[Value]) -> Totals {
    entries
        .iter()
        .filter_map(assistant_message)
        .filter_map(|m| MessageRef::new(m).usage().filter(|u| u.is_object()))
        .fold(start, add_usage)
}

/// Token and cost sums of a set of `Usage` objects.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageSums {
    /// Records added.
    pub count: u64,
    /// Input tokens (excluding cache reads and writes).
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Cache-read tokens.
    pub cache_read: f64,
    /// Cache-write tokens.
    pub cache_write: f64,
    /// `totalTokens`.
    pub total_tokens: f64,
    /// Reasoning tokens (`reasoning`, or omp's `reasoningTokens`): a part of
    /// `output`, never added to it.
    pub reasoning: f64,
    /// `cost.input`.
    pub cost_input: f64,
    /// `cost.output`.
    pub cost_output: f64,
    /// `cost.cacheRead`.
    pub cost_cache_read: f64,
    /// `cost.cacheWrite`.
    pub cost_cache_write: f64,
    /// `cost.total`, as stored (never recomputed).
    pub cost_total: f64,
}

impl UsageSums {
    /// Adds one `Usage` object.
    pub fn add(&mut self, usage: &Value) {
        let usage = UsageRef::new(usage);
        let cost = usage.cost_ref();
        self.count += 1;
        self.input += number(usage.input());
        self.output += number(usage.output());
        self.cache_read += number(usage.cache_read());
        self.cache_write += number(usage.cache_write());
        self.total_tokens += number(usage.total_tokens());
        self.reasoning += number(usage.reasoning().or_else(|| usage.reasoning_tokens()));
        self.cost_input += number(cost.input());
        self.cost_output += number(cost.output());
        self.cost_cache_read += number(cost.cache_read());
        self.cost_cache_write += number(cost.cache_write());
        self.cost_total += number(cost.total());
    }

    /// Adds another set of sums, field by field (e.g. the sums of one chunk
    /// of a file to the running sums of the file).
    ///
    /// ```
    /// use pi_session_tree::UsageSums;
    /// use serde_json::json;
    ///
    /// let (mut first, mut second) = (UsageSums::default(), UsageSums::default());
    /// first.add(&json!({"input": 3, "cost": {"total": 0.5}}));
    /// second.add(&json!({"input": 4, "cost": {"total": 0.25}}));
    /// first.add_sums(&second);
    /// assert_eq!((first.count, first.input, first.cost_total), (2, 7.0, 0.75));
    /// ```
    pub fn add_sums(&mut self, other: &UsageSums) {
        self.count += other.count;
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.total_tokens += other.total_tokens;
        self.reasoning += other.reasoning;
        self.cost_input += other.cost_input;
        self.cost_output += other.cost_output;
        self.cost_cache_read += other.cost_cache_read;
        self.cost_cache_write += other.cost_cache_write;
        self.cost_total += other.cost_total;
    }
}

/// Usage of a set of entries, split by where it was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageBreakdown {
    /// Assistant messages (what pi's footer sums).
    pub assistant: UsageSums,
    /// Usage nested in tool results, reported apart: pi 1.x `toolResult.usage`
    /// and omp's `task` tool results (`details.usage`).
    pub nested_tools: UsageSums,
    /// Usage recorded outside the transcript: omp `model_usage`, pi 1.x
    /// `usage` entries, and `usage` on compactions and branch summaries.
    pub side_calls: UsageSums,
}

impl UsageBreakdown {
    /// Everything added together.
    pub fn total(&self) -> UsageSums {
        let mut sum = self.assistant;
        sum.add_sums(&self.nested_tools);
        sum.add_sums(&self.side_calls);
        sum
    }

    /// Adds the usage of more `entries`, as [`usage_breakdown`] counts it.
    /// Adding a file chunk by chunk gives exactly the breakdown of the whole
    /// file (same records, same order of additions).
    ///
    /// ```
    /// use pi_session_tree::{usage_breakdown, UsageBreakdown};
    /// use serde_json::json;
    ///
    /// let turn = |n: u64| json!({"type":"message","message":{"role":"assistant","usage":{"input":n}}});
    /// let entries = [turn(1), turn(2), turn(3)];
    /// let mut chunked = UsageBreakdown::default();
    /// for chunk in entries.chunks(2) {
    ///     chunked.add_entries(chunk);
    /// }
    /// assert_eq!(chunked, usage_breakdown(&entries));
    /// assert_eq!(chunked.assistant.input, 6.0);
    /// ```
    pub fn add_entries(&mut self, entries: &[Value]) {
        for entry in entries {
            self.add_entry(entry);
        }
    }

    /// Adds the usage one entry records (none, or one `Usage` object to one
    /// of the three parts).
    fn add_entry(&mut self, entry: &Value) {
        if let Some((part, usage)) = usage_record(entry) {
            self.add_record(part, usage);
        }
    }

    /// Adds one `Usage` object to `part`.
    pub fn add_record(&mut self, part: UsagePart, usage: &Value) {
        match part {
            UsagePart::Assistant => self.assistant.add(usage),
            UsagePart::NestedTool => self.nested_tools.add(usage),
            UsagePart::SideCall => self.side_calls.add(usage),
        }
    }
}

/// Where a `Usage` object was recorded (the parts of a [`UsageBreakdown`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum UsagePart {
    /// An assistant message's `usage`.
    Assistant,
    /// Usage nested in a tool result (pi 1.x `toolResult.usage`, omp `task` `details.usage`).
    NestedTool,
    /// omp `model_usage`, pi 1.x `usage` entries, compactions and branch summaries.
    SideCall,
}

/// The entry types [`usage_record`] finds a usage in; for every other type it returns `None`
/// (so a scan can skip other entries unread, by the type in their envelope).
pub const USAGE_RECORD_KINDS: [&str; 5] = [
    "message",
    "model_usage",
    "usage",
    "compaction",
    "branch_summary",
];

/// The one `Usage` object an entry records, and where, as [`usage_breakdown`]
/// counts it; `None` for an entry that records none. The one place the rule
/// lives: [`UsageBreakdown`] and cross-session reports both use it.
///
/// ```
/// use pi_session_tree::{usage_record, UsagePart};
/// use serde_json::json;
///
/// let turn = json!({"type":"message","message":{"role":"assistant","usage":{"input":1}}});
/// assert_eq!(usage_record(&turn).map(|(part, _)| part), Some(UsagePart::Assistant));
/// assert_eq!(usage_record(&json!({"type":"label"})), None);
/// ```
pub fn usage_record(entry: &Value) -> Option<(UsagePart, &Value)> {
    let kind = EntryRef::new(entry).kind()?;
    if !USAGE_RECORD_KINDS.contains(&kind) {
        return None;
    }
    match Some(kind) {
        Some("message") => {
            let message = EntryRef::new(entry).message();
            match MessageRef::new(message).role() {
                Some("assistant") => {
                    object(MessageRef::new(message).usage()).map(|u| (UsagePart::Assistant, u))
                }
                Some("toolResult") => {
                    let m = MessageRef::new(message);
                    let nested = object(m.usage()).or_else(|| {
                        let is_task = js::is_str(m.tool_name(), "task");
                        object(TaskDetailsRef::new(m.details()).usage()).filter(|_| is_task)
                    });
                    nested.map(|u| (UsagePart::NestedTool, u))
                }
                _ => None,
            }
        }
        Some("model_usage" | "usage" | "compaction" | "branch_summary") => {
            object(EntryRef::new(entry).usage()).map(|u| (UsagePart::SideCall, u))
        }
        _ => None,
    }
}

fn object(value: Option<&Value>) -> Option<&Value> {
    value.filter(|u| u.is_object())
}

/// Whether the entry of type `kind` written as `line` may record a usage ([`usage_record`]):
/// `false` only for one that surely records none, so a reader may leave its line unparsed and
/// no sum changes. That is an entry of another type ([`USAGE_RECORD_KINDS`]), or a line
/// without the key `"usage"` as JSON writes it and without a `\u` escape (with which a key
/// could spell `usage` otherwise). [`may_record_usage_in`] asks the same of what a reader knows
/// of the line.
///
/// ```
/// use pi_session_tree::branch_facts::may_record_usage;
/// let turn = br#"{"type":"message","message":{"role":"assistant","usage":{"input":1}}}"#;
/// assert!(may_record_usage("message", turn));
/// let question = br#"{"type":"message","message":{"role":"user","content":"a \"usage\" word"}}"#;
/// assert!(!may_record_usage("message", question));
/// assert!(may_record_usage("message", br#"{"type":"message","message":{"us\u0061ge":{}}}"#));
/// assert!(!may_record_usage("label", br#"{"type":"label","usage":{}}"#));
/// ```
pub fn may_record_usage(kind: &str, line: &[u8]) -> bool {
    may_record_usage_in(kind, LineKeys::Written(line))
}

/// [`may_record_usage`] of a line a reader knows as `keys`: its bytes, or the key filter the
/// store's open kept of it (then a line that cannot count is not even read).
///
/// ```
/// use pi_session_tree::branch_facts::may_record_usage_in;
/// use pi_session_types::envelope_scan::scan_envelope;
/// use pi_session_types::needle::LineKeys;
/// let result = br#"{"type":"message","id":"r","message":{"role":"toolResult","content":"ok"}}"#;
/// let filter = scan_envelope(result).unwrap().keys;
/// assert!(!may_record_usage_in("message", LineKeys::Filtered(filter)));
/// ```
pub fn may_record_usage_in(kind: &str, keys: LineKeys<'_>) -> bool {
    USAGE_RECORD_KINDS.contains(&kind) && keys.may_hold(&USAGE_KEY)
}

/// Whether the entry of type `kind` written as `line` may change a [`BranchTally`]: any entry
/// but a `message`, and a `message` whose line may record a usage or name a model: it holds
/// the key `"usage"` or `"provider"` as JSON writes them, or a `\u` escape
/// ([`may_record_usage`]). A message line without them is neither counted nor names a model, so
/// a reader may leave it unparsed. [`may_change_tally_in`] asks the same of what a reader knows
/// of the line.
///
/// ```
/// use pi_session_tree::branch_facts::may_change_tally;
/// let named = br#"{"type":"message","message":{"role":"assistant","provider":"p","model":"m"}}"#;
/// assert!(may_change_tally("message", named));
/// assert!(!may_change_tally("message", br#"{"type":"message","message":{"role":"user","content":"hi"}}"#));
/// assert!(may_change_tally("model_change", br#"{"type":"model_change","model":"p/m"}"#));
/// ```
pub fn may_change_tally(kind: &str, line: &[u8]) -> bool {
    may_change_tally_in(kind, LineKeys::Written(line))
}

/// [`may_change_tally`] of a line a reader knows as `keys` ([`may_record_usage_in`]). It lets
/// through every line [`may_record_usage_in`] does, so a reader of both asks it alone.
pub fn may_change_tally_in(kind: &str, keys: LineKeys<'_>) -> bool {
    // A `message` is one of `USAGE_RECORD_KINDS`: `may_record_usage_in` would ask for `usage`
    // alone, and the bytes be searched for a `\u` escape twice.
    kind != "message" || keys.may_hold_any(&[&USAGE_KEY, &PROVIDER_KEY])
}

/// What [`usage_record`] and a [`BranchTally`] read of a `message` entry: its `type` and
/// `id`, and of its message the `role`, `usage`, `provider` and `model` (an assistant's
/// usage and model), `toolName` and `details` (a usage nested in a tool result). A reader may
/// hand them such an entry cut down to these keys
/// ([`pi_session_types::shallow::entry_with_message_keys`]): they count the same. Entries of
/// other types are read whole.
pub const TALLY_MESSAGE_KEYS: Keys = Keys {
    entry: &[key::TYPE, key::ID, key::MESSAGE],
    message: &TALLY_MESSAGE,
    blocks: &[],
};

/// The message's keys of [`TALLY_MESSAGE_KEYS`].
pub const TALLY_MESSAGE: [&str; 6] = [
    key::ROLE,
    key::USAGE,
    key::PROVIDER,
    key::MODEL,
    key::TOOL_NAME,
    key::DETAILS,
];

/// The key `usage` ([`may_record_usage`]).
static USAGE_KEY: KeyNeedle = KeyNeedle::new(key::USAGE, b"\"usage\"");
/// The key `provider` ([`may_change_tally`]).
static PROVIDER_KEY: KeyNeedle = KeyNeedle::new(key::PROVIDER, b"\"provider\"");

/// The usage breakdown of `entries` (a branch, or every entry of a file for
/// pi's footer totals).
pub fn usage_breakdown(entries: &[Value]) -> UsageBreakdown {
    let mut breakdown = UsageBreakdown::default();
    breakdown.add_entries(entries);
    breakdown
}
