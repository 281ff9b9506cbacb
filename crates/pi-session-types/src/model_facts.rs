//! [`ModelFacts`]: the few fields of an entry that decide which model is in effect, read from a
//! parsed JSON value or straight from a line's bytes without building one.
//!
//! The rule itself (rho's `model_from/1`: the last default-role `model_change`, else the last
//! assistant message naming provider and model) lives in `pi_session_tree::branch_facts`; it reads
//! entries only through this type, so a session opened from a file can answer it from a borrowed
//! parse of each line (everything else skipped, as [`crate::parse_envelope`] skips it) instead of
//! a `serde_json::Value` of every message body on the branch.

use crate::view::{EntryRef, key};
use serde::de::{self, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// What the model rule reads of one entry: strings only (a key holding any other JSON value, or
/// missing, is `None`, as `typeof x === "string"` fails in JavaScript). Later duplicate keys win,
/// as in `JSON.parse`.
///
/// ```
/// use pi_session_types::model_facts::ModelFacts;
/// let line = br#"{"type":"message","id":"a","parentId":null,"message":{"role":"assistant","content":[{"type":"text","text":"long"}],"provider":"anthropic","model":"claude-x"}}"#;
/// let facts = ModelFacts::parse(line).unwrap();
/// let message = facts.message.as_ref().unwrap();
/// assert_eq!((facts.kind.as_deref(), message.role.as_deref()), (Some("message"), Some("assistant")));
/// assert_eq!((message.provider.as_deref(), message.model.as_deref()), (Some("anthropic"), Some("claude-x")));
/// let value: serde_json::Value = serde_json::from_slice(line).unwrap();
/// assert_eq!(ModelFacts::of_value(&value), facts);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelFacts<'a> {
    /// `type`.
    pub kind: Option<Cow<'a, str>>,
    /// `id`.
    pub id: Option<Cow<'a, str>>,
    /// `role` (omp's `model_change`: which model role changed).
    pub role: Option<Cow<'a, str>>,
    /// `model` (omp's `model_change`: `provider/modelId`).
    pub model: Option<Cow<'a, str>>,
    /// `provider` (pi's `model_change`).
    pub provider: Option<Cow<'a, str>>,
    /// `modelId` (pi's `model_change`).
    pub model_id: Option<Cow<'a, str>>,
    /// `message`, when it is an object.
    pub message: Option<MessageModel<'a>>,
}

/// What the model rule reads of an entry's `message` object (strings only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageModel<'a> {
    /// `role`.
    pub role: Option<Cow<'a, str>>,
    /// `provider` (assistant messages).
    pub provider: Option<Cow<'a, str>>,
    /// `model` (assistant messages).
    pub model: Option<Cow<'a, str>>,
}

/// `provider`: a pi `model_change`'s and an assistant message's key.
const PROVIDER: &str = "provider";
/// `model`: an omp `model_change`'s and an assistant message's key.
const MODEL: &str = "model";
/// `modelId`: a pi `model_change`'s key.
const MODEL_ID: &str = "modelId";

impl<'a> ModelFacts<'a> {
    /// The facts of a parsed entry (borrowed from it; a non-object has none).
    pub fn of_value(entry: &'a Value) -> Self {
        let view = EntryRef::new(entry);
        let text = |value: Option<&'a Value>| value.and_then(Value::as_str).map(Cow::Borrowed);
        Self {
            kind: view.kind().map(Cow::Borrowed),
            id: view.id().map(Cow::Borrowed),
            role: text(view.role()),
            model: text(view.model()),
            provider: text(view.provider()),
            model_id: text(view.model_id()),
            message: view.message_ref().map(|message| MessageModel {
                role: message.role().map(Cow::Borrowed),
                provider: message.provider_str().map(Cow::Borrowed),
                model: message.model_str().map(Cow::Borrowed),
            }),
        }
    }

    /// The facts of one line, read without building its JSON (every other value is skipped,
    /// still checked for JSON syntax); strings without escapes borrow from `bytes`.
    ///
    /// `None` when serde_json does not read the line as an object: not JSON, or JSON that only
    /// JavaScript reads (a lone surrogate escape, invalid UTF-8 in a string read here). The
    /// caller then reads the line the full way ([`crate::parse_line`]), which repairs it or
    /// says what is wrong.
    pub fn parse(bytes: &'a [u8]) -> Option<Self> {
        let mut deserializer = serde_json::Deserializer::from_slice(bytes);
        let facts = deserializer.deserialize_any(FactsVisitor).ok()?;
        deserializer.end().ok()?;
        facts
    }
}

object_keys! {
    /// Which key of an entry (or of its message) the facts keep.
    FactKey {
        Type => key::TYPE,
        Id => key::ID,
        Role => key::ROLE,
        Model => MODEL,
        Provider => PROVIDER,
        ModelId => MODEL_ID,
        Message => key::MESSAGE,
    }
}

/// A value where a string is wanted: the string, or `None` for any other JSON value (consumed).
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

/// Visitor methods that consume a value of any other kind and give `$none`.
macro_rules! skip_other_values {
    ($none:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($none)
        }
    };
}

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Text(Some(Cow::Owned(v.to_owned()))))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text(None))
    }
    skip_other_values!(Text(None));
}

/// An entry's `message`: its facts when it is an object, else `None` (consumed).
struct Message<'a>(Option<MessageModel<'a>>);

impl<'de> de::Deserialize<'de> for Message<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Message(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut message = MessageModel::default();
        while let Some(key) = map.next_key::<FactKey>()? {
            match key {
                FactKey::Role => message.role = map.next_value::<Text<'de>>()?.0,
                FactKey::Provider => message.provider = map.next_value::<Text<'de>>()?.0,
                FactKey::Model => message.model = map.next_value::<Text<'de>>()?.0,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Message(Some(message)))
    }
    skip_other_values!(Message(None));
}

/// The top-level value: `Some(facts)` for an object, `None` for any other JSON value.
struct FactsVisitor;

impl<'de> Visitor<'de> for FactsVisitor {
    type Value = Option<ModelFacts<'de>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut facts = ModelFacts::default();
        while let Some(key) = map.next_key::<FactKey>()? {
            let slot = match key {
                FactKey::Type => &mut facts.kind,
                FactKey::Id => &mut facts.id,
                FactKey::Role => &mut facts.role,
                FactKey::Model => &mut facts.model,
                FactKey::Provider => &mut facts.provider,
                FactKey::ModelId => &mut facts.model_id,
                FactKey::Message => {
                    facts.message = map.next_value::<Message<'de>>()?.0;
                    continue;
                }
                FactKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *slot = map.next_value::<Text<'de>>()?.0;
        }
        Ok(Some(facts))
    }
    skip_other_values!(None);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The borrowed parse reads what the parsed value holds, whatever the shapes.
    #[test]
    fn a_line_reads_as_its_parsed_value() {
        let lines: [&[u8]; 9] = [
            br#"{"type":"model_change","id":"1","model":"a/b","role":"default"}"#,
            br#"{"type":"model_change","id":"1","provider":"p","modelId":"m","role":7}"#,
            br#"{"type":"model_change","model":{"x":1},"provider":["p"],"modelId":null}"#,
            br#"{"type":"message","message":{"role":"assistant","provider":"p","model":"m","content":[1,{"a":"\n"}]}}"#,
            br#"{"type":"message","message":{"role":"assistant","model":"m1","model":"m2"}}"#,
            br#"{"type":"message","message":{"role":"user"},"message":"text"}"#,
            br#"{"type":"message","message":[{"role":"assistant"}]}"#,
            br#"{"type":"m\u0065ssage","message":{"role":"\u0061ssistant","provider":"p\"q","model":"\ud83d\ude00"}}"#,
            br#"{"type":"message","message":{"role":"assistant","provider":true,"model":1.5}}"#,
        ];
        for line in lines {
            let value: Value = serde_json::from_slice(line).unwrap();
            assert_eq!(
                ModelFacts::parse(line),
                Some(ModelFacts::of_value(&value)),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn what_serde_json_does_not_read_as_an_object_is_none() {
        for line in [
            &b"[1]"[..],
            b"\"x\"",
            b"{",
            b"{} 1",
            br#"{"model":"\ud83d"}"#,
        ] {
            assert_eq!(
                ModelFacts::parse(line),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
