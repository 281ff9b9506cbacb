//! Tri-state fields: keys that may be absent, `null`, or set, where the file tells them apart.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A key that a session file may omit, write as `null`, or set to a value.
///
/// Used where the difference matters on disk, e.g. `parentId: null` (a root) or omp's
/// `thinkingLevel: null`. In a `#[record]` struct such a field gets
/// `#[serde(default, skip_serializing_if = "Field::is_absent")]`, so an absent key stays absent;
/// elsewhere, declare it with that attribute.
///
/// ```
/// use pi_session_types::Field;
/// let f: Field<String> = serde_json::from_str("null").unwrap();
/// assert!(f.is_null());
/// assert_eq!(Field::Value("x".to_string()).as_option().map(String::as_str), Some("x"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Field<T> {
    /// The key is not in the object.
    #[default]
    Absent,
    /// The key is present with the value `null`.
    Null,
    /// The key is present with a non-null value.
    Value(T),
}

impl<T> Field<T> {
    /// True when the key is not in the object (used by `skip_serializing_if`).
    pub fn is_absent(&self) -> bool {
        matches!(self, Field::Absent)
    }
    /// True when the key is present and `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Field::Null)
    }
    /// The value when set; `None` for both absent and `null`.
    pub fn as_option(&self) -> Option<&T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }
    /// Consumes the field, giving the value when set.
    pub fn into_option(self) -> Option<T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }
}

impl Field<String> {
    /// The string value when set; `None` for absent and `null`.
    pub fn as_deref(&self) -> Option<&str> {
        self.as_option().map(String::as_str)
    }
}

impl<T> From<Option<T>> for Field<T> {
    /// `None` becomes `Null` (an explicit JSON null), `Some(v)` becomes `Value(v)`.
    fn from(value: Option<T>) -> Self {
        match value {
            Some(v) => Field::Value(v),
            None => Field::Null,
        }
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Value(v) => v.serialize(serializer),
            // `Absent` is skipped by `skip_serializing_if`; if it is reached anyway, null is the
            // only honest JSON for it.
            Field::Absent | Field::Null => serializer.serialize_unit(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(deserializer)? {
            Some(v) => Field::Value(v),
            None => Field::Null,
        })
    }
}

/// `deserialize_with` helper for `Option<T>` fields that are absent-or-set (`#[record]` gives it
/// to every `Option` field of a record): a present key is
/// deserialised as `T` itself, so a `null` where the format never writes one is a type error
/// (the entry then falls back to `Unknown`, keeping the JSON) instead of silently becoming
/// "absent" and losing the key on write. For `T = serde_json::Value`, `null` is kept as
/// `Some(Value::Null)`.
pub(crate) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A value that is normally of type `T` but is kept as raw JSON when a file holds something
/// else, so that one odd field does not make its whole object untyped.
///
/// Used for message `timestamp`s (Unix ms numbers; an odd file may hold a string).
///
/// ```
/// use pi_session_types::field::MaybeTyped;
/// let n: MaybeTyped<serde_json::Number> = serde_json::from_str("17").unwrap();
/// assert!(n.typed().is_some());
/// let s: MaybeTyped<serde_json::Number> = serde_json::from_str("\"soon\"").unwrap();
/// assert_eq!(s.typed(), None);
/// assert_eq!(serde_json::to_string(&s).unwrap(), "\"soon\"");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum MaybeTyped<T> {
    /// The value has the expected type.
    Typed(T),
    /// Anything else, kept as written.
    Raw(serde_json::Value),
}

impl<T> MaybeTyped<T> {
    /// The typed value, `None` when the file held something else.
    pub fn typed(&self) -> Option<&T> {
        match self {
            MaybeTyped::Typed(v) => Some(v),
            MaybeTyped::Raw(_) => None,
        }
    }
}

impl<T> From<T> for MaybeTyped<T> {
    fn from(value: T) -> Self {
        MaybeTyped::Typed(value)
    }
}

impl<T: Serialize> Serialize for MaybeTyped<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MaybeTyped::Typed(v) => v.serialize(serializer),
            MaybeTyped::Raw(v) => v.serialize(serializer),
        }
    }
}

impl<'de, T: for<'a> Deserialize<'a>> Deserialize<'de> for MaybeTyped<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(match T::deserialize(&value) {
            Ok(typed) => MaybeTyped::Typed(typed),
            Err(_) => MaybeTyped::Raw(value),
        })
    }
}

/// Types a record by moving its JSON, after typing the value under `key` by move with `nested`
/// (which takes it out of the JSON, leaving a cheap stand-in for serde to read, and says `None`
/// when it leaves the value where it is). The typed nested value then replaces the stand-in.
///
/// This is how [`crate::parse_line`]'s one pass avoids copying the large nested parts of a line
/// (a message, its content blocks, its images): serde's derived code cannot carry a mode down to
/// them (a `#[serde(flatten)]` field buffers the whole object first), so the caller types them
/// itself, explicitly. A mismatch in `nested` or in the record is an error, and the caller
/// retries with the copying, fallback-keeping path.
pub(crate) fn moved_with<T: serde::de::DeserializeOwned, N>(
    mut value: serde_json::Value,
    key: &str,
    nested: impl FnOnce(&mut serde_json::Value) -> Option<Result<N, serde_json::Error>>,
    set: impl FnOnce(&mut T, N),
) -> Result<T, serde_json::Error> {
    let typed = value.get_mut(key).and_then(nested).transpose()?;
    let mut record = serde_json::from_value(value)?;
    if let Some(typed) = typed {
        set(&mut record, typed);
    }
    Ok(record)
}
