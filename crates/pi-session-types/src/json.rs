//! Writing JSON exactly as JavaScript's `JSON.stringify` does.
//!
//! This is the one place in the workspace where these rules live; every line the store writes
//! goes through [`to_js_string`] / [`to_js_writer`]:
//!
//! - compact output, object keys in insertion order, except that **integer-like keys** (array
//!   indices `"0"`, `"1"`, ... up to 2³²−2, no leading zeros) come first in ascending numeric
//!   order, as V8 does;
//! - numbers as ECMAScript `Number::toString` (via `ryu-js`): `2` not `2.0`, `1e-7`, `1e+21`,
//!   `0.000001`, shortest round-trip digits; `-0` becomes `0`; `NaN`/`±Infinity` become `null`;
//!   integers beyond ±2⁵³ are written as the nearest double, like JavaScript would hold them;
//! - strings escape only `"`, `\` and U+0000–U+001F (`\b \f \n \r \t`, else lowercase `\u00xx`);
//!   `/`, DEL, U+2028/U+2029 and all other non-ASCII are written raw.
//!
//! - a lone UTF-16 surrogate (which a JavaScript string may hold) is written as the lowercase
//!   escape `\udxxx`, as `JSON.stringify` does. A Rust `String` cannot hold one, so it is
//!   *carried* as the code point U+10F800+k for U+D800+k ([`crate::js::carrier_of`]): reading a
//!   line makes the carrier, this writer turns it back into the escape. So a line read from a
//!   file pi or omp wrote is written back byte for byte, lone surrogates included.
//!
//! ```
//! use pi_session_types::json::to_js_string;
//! let v = serde_json::json!({"b": 2.0, "1": 1e21, "a": 1e-7, "0": -0.0});
//! assert_eq!(to_js_string(&v).unwrap(), r#"{"0":0,"1":1e+21,"b":2,"a":1e-7}"#);
//! ```

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};
use std::cell::Cell;
use std::io::{self, Write};

/// An error while writing JSON.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// The value could not be serialised (e.g. a map with non-string keys); fix the value.
    #[error("value cannot be written as JSON: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The destination writer failed; check the file or stream it writes to.
    #[error("writing JSON to the destination failed: {0}")]
    Io(#[from] io::Error),
}

/// Serialises `value` as JavaScript's `JSON.stringify(value)` would (no trailing newline).
pub fn to_js_string<T: Serialize + ?Sized>(value: &T) -> Result<String, JsonError> {
    let bytes = to_js_vec(value)?;
    // The formatter only ever writes UTF-8 (from `&str` fragments and ASCII).
    String::from_utf8(bytes)
        .map_err(|e| JsonError::Io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// Serialises `value` like [`to_js_string`], returning the bytes.
///
/// Written by this module's own serializer (`fast::Walk`: the formatter calls serde_json's
/// `Serializer` makes, in the same order, with strings scanned 16 bytes at a time as
/// [`value_to_js_vec`] scans them); a value it does not take (a map key that is not a string,
/// bytes, serde_json's private structs) is written by serde_json's `Serializer` instead
/// ([`to_js_vec_through_serde_json`]), which gives the same bytes or the error.
pub fn to_js_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, JsonError> {
    let mut buffer = JsBuffer::default();
    buffer.write(value)?;
    Ok(buffer.state.out)
}

/// [`to_js_vec`] into `state` (empty): the fast walk, or serde_json's `Serializer` for a value
/// the walk does not take.
fn write_into<T: Serialize + ?Sized>(state: &mut State, value: &T) -> Result<(), JsonError> {
    let walked = value.serialize(&mut fast::Walk {
        f: JsFormatter { state: &mut *state },
        spelled: false,
    });
    match walked {
        Ok(()) => Ok(()),
        Err(fast::NotTaken) => {
            // What the walk wrote before it gave up goes; its layout starts again.
            let layout = state.layout.map(|layout| layout.base);
            state.clear();
            if let Some(depth) = layout {
                state.clear_pretty(depth);
            }
            through_serde_json_into(state, value)
        }
    }
}

/// A buffer that [`to_js_vec`]'s and [`value_to_js_vec`]'s bytes are written into, for a
/// writer of many values: each is written into the memory the ones before it left (the
/// buffer grows only past the longest value yet, and the bookkeeping of objects' keys is
/// reused), instead of a new `Vec` grown from empty for each.
///
/// ```
/// use pi_session_types::json::{JsBuffer, to_js_vec};
/// use serde_json::json;
/// let mut buffer = JsBuffer::default();
/// for value in [json!({"b": [1, "x\n"], "1": null}), json!("text"), json!({})] {
///     assert_eq!(buffer.write(&value).unwrap(), to_js_vec(&value).unwrap());
///     assert_eq!(buffer.write_value(&value), to_js_vec(&value).unwrap());
/// }
/// ```
#[derive(Default)]
pub struct JsBuffer {
    state: State,
}

impl std::fmt::Debug for JsBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsBuffer")
            .field("capacity", &self.state.out.capacity())
            .finish()
    }
}

impl JsBuffer {
    /// [`to_js_vec`] of `value`, written over what the buffer held: the bytes, until the
    /// next write.
    ///
    /// # Errors
    /// What [`to_js_vec`] gives.
    pub fn write<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<&[u8], JsonError> {
        self.state.clear();
        write_into(&mut self.state, value)?;
        Ok(&self.state.out)
    }

    /// [`value_to_js_vec`] of `value`, written over what the buffer held: the bytes, until
    /// the next write.
    pub fn write_value(&mut self, value: &serde_json::Value) -> &[u8] {
        self.state.clear();
        self.value_written(value);
        &self.state.out
    }

    /// [`Self::write`] laid out as `JSON.stringify(value, null, 2)` lays it out `depth` levels
    /// deep in a larger answer (each line after the first indented by two spaces a level
    /// more), written as it is made: no compact text laid out in a second pass. `None` when
    /// `value` holds an object whose integer-like keys `JSON.stringify` would move (they come
    /// first, ascending; an object that holds them so is written laid out): [`Self::write`]
    /// moves them, and a caller lays its bytes out ([`write_laid_out`]).
    ///
    /// ```
    /// use pi_session_types::json::JsBuffer;
    /// use serde_json::json;
    /// let mut buffer = JsBuffer::default();
    /// let value = json!({"a": [1, {}, []], "b": {"c": "x"}});
    /// let pretty = buffer.write_pretty(&value, 1).unwrap().unwrap();
    /// assert_eq!(pretty, "{\n    \"a\": [\n      1,\n      {},\n      []\n    ],\n    \"b\": {\n      \"c\": \"x\"\n    }\n  }".as_bytes());
    /// assert_eq!(buffer.write_pretty(&json!({"b": 1, "1": 2}), 0).unwrap(), None);
    /// ```
    ///
    /// # Errors
    /// What [`to_js_vec`] gives.
    pub fn write_pretty<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
        depth: usize,
    ) -> Result<Option<&[u8]>, JsonError> {
        self.state.clear_pretty(depth);
        write_into(&mut self.state, value)?;
        Ok(self.state.pretty_out())
    }

    /// [`Self::write_value`] laid out as [`Self::write_pretty`] lays a value out.
    pub fn write_value_pretty(&mut self, value: &serde_json::Value, depth: usize) -> Option<&[u8]> {
        self.state.clear_pretty(depth);
        self.value_written(value);
        self.state.pretty_out()
    }

    /// `value` written after what the buffer holds, compact or laid out as its state says.
    fn value_written(&mut self, value: &serde_json::Value) {
        let mut formatter = JsFormatter {
            state: &mut self.state,
        };
        // The formatter writes to its own buffer and never fails.
        let _ = write_value(&mut formatter, value);
    }
}

/// [`to_js_vec`] through serde_json's own `Serializer` (with this module's formatter): the
/// reference the faster walk is checked against, and what it falls back on.
///
/// ```
/// use pi_session_types::json::{to_js_vec, to_js_vec_through_serde_json};
/// let v = serde_json::json!({"b": [2.0, "x\ny"], "1": null});
/// assert_eq!(to_js_vec(&v).unwrap(), to_js_vec_through_serde_json(&v).unwrap());
/// ```
pub fn to_js_vec_through_serde_json<T: Serialize + ?Sized>(
    value: &T,
) -> Result<Vec<u8>, JsonError> {
    let mut state = State::default();
    through_serde_json_into(&mut state, value)?;
    Ok(state.out)
}

/// [`to_js_vec_through_serde_json`] into `state` (empty; its layout kept).
fn through_serde_json_into<T: Serialize + ?Sized>(
    state: &mut State,
    value: &T,
) -> Result<(), JsonError> {
    let formatter = JsFormatter { state };
    let mut serializer = serde_json::Serializer::with_formatter(io::sink(), formatter);
    value.serialize(&mut serializer)?;
    Ok(())
}

/// [`to_js_vec`]'s serializer.
mod fast {
    use super::{JsFormatter, write_str};
    use serde::ser::{self, Serialize};
    use serde_json::ser::Formatter;
    use std::io;

    /// A value the walk does not write (serde_json's `Serializer` writes it instead), or an
    /// error a `Serialize` impl raised (serde_json's then reports it).
    #[derive(Debug)]
    pub(super) struct NotTaken;

    impl std::fmt::Display for NotTaken {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("not written by the walk")
        }
    }

    impl std::error::Error for NotTaken {}

    impl ser::Error for NotTaken {
        fn custom<T: std::fmt::Display>(_: T) -> Self {
            NotTaken
        }
    }

    type Done = Result<(), NotTaken>;

    fn done(result: io::Result<()>) -> Done {
        result.map_err(|_| NotTaken)
    }

    /// Drives [`JsFormatter`] as serde_json's `Serializer` drives its formatter.
    pub(super) struct Walk<'a> {
        pub(super) f: JsFormatter<'a>,
        /// Inside a [`JsString`](crate::js_string::JsString)'s newtype struct: the string it
        /// hands `collect_str` next is shown as its spelling (`{:#}`) and copied as it is.
        pub(super) spelled: bool,
    }

    /// What serde_json's private structs (raw values, arbitrary-precision numbers) are named
    /// after: left to serde_json.
    const SERDE_JSON_PRIVATE: &str = "$serde_json::private";

    impl Walk<'_> {
        fn variant_key(&mut self, variant: &str) -> Done {
            let w = &mut io::sink();
            done(self.f.begin_object(w))?;
            done(self.f.begin_object_key(w, true))?;
            done(write_str(&mut self.f, variant))?;
            done(self.f.end_object_key(w))?;
            done(self.f.begin_object_value(w))
        }

        fn variant_end(&mut self) -> Done {
            let w = &mut io::sink();
            done(self.f.end_object_value(w))?;
            done(self.f.end_object(w))
        }
    }

    /// An array or object being written; `variant` closes the `{"Variant": ...}` around it.
    pub(super) struct Compound<'w, 'a> {
        walk: &'w mut Walk<'a>,
        first: bool,
        /// Opened and closed at once (`[]`, `{}`), as serde_json does for a length of 0.
        empty: bool,
        variant: bool,
    }

    impl<'w, 'a> ser::Serializer for &'w mut Walk<'a> {
        type Ok = ();
        type Error = NotTaken;
        type SerializeSeq = Compound<'w, 'a>;
        type SerializeTuple = Compound<'w, 'a>;
        type SerializeTupleStruct = Compound<'w, 'a>;
        type SerializeTupleVariant = Compound<'w, 'a>;
        type SerializeMap = Compound<'w, 'a>;
        type SerializeStruct = Compound<'w, 'a>;
        type SerializeStructVariant = Compound<'w, 'a>;

        fn serialize_bool(self, v: bool) -> Done {
            done(self.f.write_bool(&mut io::sink(), v))
        }
        fn serialize_i8(self, v: i8) -> Done {
            done(self.f.write_i8(&mut io::sink(), v))
        }
        fn serialize_i16(self, v: i16) -> Done {
            done(self.f.write_i16(&mut io::sink(), v))
        }
        fn serialize_i32(self, v: i32) -> Done {
            done(self.f.write_i32(&mut io::sink(), v))
        }
        fn serialize_i64(self, v: i64) -> Done {
            done(self.f.write_i64(&mut io::sink(), v))
        }
        fn serialize_i128(self, v: i128) -> Done {
            done(self.f.write_i128(&mut io::sink(), v))
        }
        fn serialize_u8(self, v: u8) -> Done {
            done(self.f.write_u8(&mut io::sink(), v))
        }
        fn serialize_u16(self, v: u16) -> Done {
            done(self.f.write_u16(&mut io::sink(), v))
        }
        fn serialize_u32(self, v: u32) -> Done {
            done(self.f.write_u32(&mut io::sink(), v))
        }
        fn serialize_u64(self, v: u64) -> Done {
            done(self.f.write_u64(&mut io::sink(), v))
        }
        fn serialize_u128(self, v: u128) -> Done {
            done(self.f.write_u128(&mut io::sink(), v))
        }
        // serde_json writes `null` for a non-finite number; so does the formatter's own write.
        fn serialize_f32(self, v: f32) -> Done {
            done(self.f.write_f32(&mut io::sink(), v))
        }
        fn serialize_f64(self, v: f64) -> Done {
            done(self.f.write_f64(&mut io::sink(), v))
        }
        fn serialize_char(self, v: char) -> Done {
            done(write_str(&mut self.f, v.encode_utf8(&mut [0; 4])))
        }
        fn serialize_str(self, v: &str) -> Done {
            done(write_str(&mut self.f, v))
        }
        fn serialize_bytes(self, _: &[u8]) -> Done {
            Err(NotTaken)
        }
        fn serialize_none(self) -> Done {
            done(self.f.write_null(&mut io::sink()))
        }
        fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Done {
            value.serialize(self)
        }
        fn serialize_unit(self) -> Done {
            done(self.f.write_null(&mut io::sink()))
        }
        fn serialize_unit_struct(self, _: &'static str) -> Done {
            done(self.f.write_null(&mut io::sink()))
        }
        fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Done {
            done(write_str(&mut self.f, variant))
        }
        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            name: &'static str,
            value: &T,
        ) -> Done {
            if name.starts_with(SERDE_JSON_PRIVATE) {
                return Err(NotTaken);
            }
            if name == crate::js_string::SPELLED_TOKEN {
                self.spelled = true;
                let written = value.serialize(&mut *self);
                self.spelled = false;
                return written;
            }
            value.serialize(self)
        }
        fn collect_str<T: std::fmt::Display + ?Sized>(self, value: &T) -> Done {
            if !std::mem::take(&mut self.spelled) {
                return self.serialize_str(&value.to_string());
            }
            // A spelling `JSON.stringify` writes: copied between the quotes as it is.
            use std::io::Write as _;
            let out = &mut self.f.state.out;
            out.push(b'"');
            write!(out, "{value:#}").map_err(|_| NotTaken)?;
            out.push(b'"');
            Ok(())
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            variant: &'static str,
            value: &T,
        ) -> Done {
            self.variant_key(variant)?;
            value.serialize(&mut *self)?;
            self.variant_end()
        }
        fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'w, 'a>, NotTaken> {
            let w = &mut io::sink();
            done(self.f.begin_array(w))?;
            let empty = len == Some(0);
            if empty {
                done(self.f.end_array(w))?;
            }
            Ok(Compound {
                walk: self,
                first: true,
                empty,
                variant: false,
            })
        }
        fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 'a>, NotTaken> {
            self.serialize_seq(Some(len))
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            len: usize,
        ) -> Result<Compound<'w, 'a>, NotTaken> {
            self.serialize_seq(Some(len))
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            variant: &'static str,
            len: usize,
        ) -> Result<Compound<'w, 'a>, NotTaken> {
            self.variant_key(variant)?;
            let mut compound = self.serialize_seq(Some(len))?;
            compound.variant = true;
            Ok(compound)
        }
        fn serialize_map(self, len: Option<usize>) -> Result<Compound<'w, 'a>, NotTaken> {
            let w = &mut io::sink();
            done(self.f.begin_object(w))?;
            let empty = len == Some(0);
            if empty {
                done(self.f.end_object(w))?;
            }
            Ok(Compound {
                walk: self,
                first: true,
                empty,
                variant: false,
            })
        }
        fn serialize_struct(
            self,
            name: &'static str,
            len: usize,
        ) -> Result<Compound<'w, 'a>, NotTaken> {
            if name.starts_with(SERDE_JSON_PRIVATE) {
                return Err(NotTaken);
            }
            self.serialize_map(Some(len))
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            variant: &'static str,
            len: usize,
        ) -> Result<Compound<'w, 'a>, NotTaken> {
            self.variant_key(variant)?;
            let mut compound = self.serialize_map(Some(len))?;
            compound.variant = true;
            Ok(compound)
        }
    }

    impl Compound<'_, '_> {
        fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
            done(self.walk.f.begin_array_value(&mut io::sink(), self.first))?;
            self.first = false;
            value.serialize(&mut *self.walk)?;
            done(self.walk.f.end_array_value(&mut io::sink()))
        }

        fn end_array(self) -> Done {
            if !self.empty {
                done(self.walk.f.end_array(&mut io::sink()))?;
            }
            if self.variant {
                self.walk.variant_end()?;
            }
            Ok(())
        }

        /// A key: a string (or a char, written as one); any other key is left to serde_json,
        /// which spells numbers and booleans as strings.
        fn key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
            let first = std::mem::replace(&mut self.first, false);
            key.serialize(KeyWalk {
                walk: &mut *self.walk,
                first,
            })
        }

        /// A member's value, after its key and the separator ([`JsFormatter::member_key`]).
        fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
            value.serialize(&mut *self.walk)?;
            done(self.walk.f.end_object_value(&mut io::sink()))
        }

        fn end_object(self) -> Done {
            if !self.empty {
                done(self.walk.f.end_object(&mut io::sink()))?;
            }
            if self.variant {
                self.walk.variant_end()?;
            }
            Ok(())
        }
    }

    /// The array-like serializers: each element written by [`Compound::element`].
    macro_rules! array_like {
        ($($trait:ident::$method:ident),*) => {$(
            impl ser::$trait for Compound<'_, '_> {
                type Ok = ();
                type Error = NotTaken;
                fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
                    self.element(value)
                }
                fn end(self) -> Done {
                    self.end_array()
                }
            }
        )*};
    }
    array_like!(
        SerializeSeq::serialize_element,
        SerializeTuple::serialize_element,
        SerializeTupleStruct::serialize_field,
        SerializeTupleVariant::serialize_field
    );

    impl ser::SerializeMap for Compound<'_, '_> {
        type Ok = ();
        type Error = NotTaken;
        fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
            self.key(key)
        }
        fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
            self.value(value)
        }
        fn end(self) -> Done {
            self.end_object()
        }
    }

    /// The struct serializers: each field written as a key and its value.
    macro_rules! struct_like {
        ($($trait:ident),*) => {$(
            impl ser::$trait for Compound<'_, '_> {
                type Ok = ();
                type Error = NotTaken;
                fn serialize_field<T: Serialize + ?Sized>(
                    &mut self,
                    key: &'static str,
                    value: &T,
                ) -> Done {
                    self.key(key)?;
                    self.value(value)
                }
                fn end(self) -> Done {
                    self.end_object()
                }
            }
        )*};
    }
    struct_like!(SerializeStruct, SerializeStructVariant);

    /// A map key: strings and chars only, written with what comes before and after it
    /// ([`JsFormatter::member_key`]).
    struct KeyWalk<'w, 'a> {
        walk: &'w mut Walk<'a>,
        /// Whether it is its object's first.
        first: bool,
    }

    impl ser::Serializer for KeyWalk<'_, '_> {
        type Ok = ();
        type Error = NotTaken;
        type SerializeSeq = ser::Impossible<(), NotTaken>;
        type SerializeTuple = ser::Impossible<(), NotTaken>;
        type SerializeTupleStruct = ser::Impossible<(), NotTaken>;
        type SerializeTupleVariant = ser::Impossible<(), NotTaken>;
        type SerializeMap = ser::Impossible<(), NotTaken>;
        type SerializeStruct = ser::Impossible<(), NotTaken>;
        type SerializeStructVariant = ser::Impossible<(), NotTaken>;

        fn serialize_str(self, v: &str) -> Done {
            done(self.walk.f.member_key(self.first, v))
        }
        fn serialize_char(self, v: char) -> Done {
            done(
                self.walk
                    .f
                    .member_key(self.first, v.encode_utf8(&mut [0; 4])),
            )
        }
        fn serialize_bool(self, _: bool) -> Done {
            Err(NotTaken)
        }
        fn serialize_i8(self, _: i8) -> Done {
            Err(NotTaken)
        }
        fn serialize_i16(self, _: i16) -> Done {
            Err(NotTaken)
        }
        fn serialize_i32(self, _: i32) -> Done {
            Err(NotTaken)
        }
        fn serialize_i64(self, _: i64) -> Done {
            Err(NotTaken)
        }
        fn serialize_u8(self, _: u8) -> Done {
            Err(NotTaken)
        }
        fn serialize_u16(self, _: u16) -> Done {
            Err(NotTaken)
        }
        fn serialize_u32(self, _: u32) -> Done {
            Err(NotTaken)
        }
        fn serialize_u64(self, _: u64) -> Done {
            Err(NotTaken)
        }
        fn serialize_f32(self, _: f32) -> Done {
            Err(NotTaken)
        }
        fn serialize_f64(self, _: f64) -> Done {
            Err(NotTaken)
        }
        fn serialize_bytes(self, _: &[u8]) -> Done {
            Err(NotTaken)
        }
        fn serialize_none(self) -> Done {
            Err(NotTaken)
        }
        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Done {
            Err(NotTaken)
        }
        fn serialize_unit(self) -> Done {
            Err(NotTaken)
        }
        fn serialize_unit_struct(self, _: &'static str) -> Done {
            Err(NotTaken)
        }
        fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Done {
            Err(NotTaken)
        }
        fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> Done {
            Err(NotTaken)
        }
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Done {
            Err(NotTaken)
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotTaken> {
            Err(NotTaken)
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotTaken> {
            Err(NotTaken)
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, NotTaken> {
            Err(NotTaken)
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, NotTaken> {
            Err(NotTaken)
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotTaken> {
            Err(NotTaken)
        }
        fn serialize_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStruct, NotTaken> {
            Err(NotTaken)
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, NotTaken> {
            Err(NotTaken)
        }
    }
}

/// [`to_js_vec`] of a JSON value, written by walking the value through the same formatter (no
/// serde `Serializer`): its strings are scanned for the characters `JSON.stringify` escapes
/// 16 bytes at a time instead of one (`push_escaped`), which is most of printing a long text. Byte-equal
/// to [`to_js_vec`] of `value` (`tests/canonical.rs` compares both on generated values).
///
/// ```
/// use pi_session_types::json::{to_js_vec, value_to_js_vec};
/// let v = serde_json::json!({"b": [2.0, null, true], "1": "a\"b\n\u{1}é", "a": {}});
/// assert_eq!(value_to_js_vec(&v), to_js_vec(&v).unwrap());
/// ```
pub fn value_to_js_vec(value: &serde_json::Value) -> Vec<u8> {
    let mut buffer = JsBuffer::default();
    buffer.write_value(value);
    buffer.state.out
}

/// [`value_to_js_vec`]'s walk: the formatter calls serde_json's `Serializer` makes for the
/// value, in the same order.
fn write_value(f: &mut JsFormatter<'_>, value: &serde_json::Value) -> io::Result<()> {
    use serde_json::Value;
    let w = &mut io::sink();
    match value {
        Value::Null => f.write_null(w),
        Value::Bool(b) => f.write_bool(w, *b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => f.write_u64(w, u),
            (None, Some(i), _) => f.write_i64(w, i),
            (None, None, Some(x)) => f.write_f64(w, x),
            (None, None, None) => f.write_null(w),
        },
        Value::String(text) => write_str(f, text),
        Value::Array(items) => {
            f.begin_array(w)?;
            for (i, item) in items.iter().enumerate() {
                f.begin_array_value(w, i == 0)?;
                write_value(f, item)?;
                f.end_array_value(w)?;
            }
            f.end_array(w)
        }
        Value::Object(map) => {
            f.begin_object(w)?;
            for (i, (key, item)) in map.iter().enumerate() {
                f.begin_object_key(w, i == 0)?;
                write_str(f, key)?;
                f.end_object_key(w)?;
                f.begin_object_value(w)?;
                write_value(f, item)?;
                f.end_object_value(w)?;
            }
            f.end_object(w)
        }
    }
}

/// The longest text [`write_str`] tells plain at once ([`is_plain_short`]) before it copies it
/// whole.
const SHORT: usize = 32;

/// Whether `bytes` are at most [`SHORT`] bytes of ASCII that `JSON.stringify` writes as they
/// are (no control character, `"` or `\\`): a key, a role, a type, an id. Read in two words
/// or chunks that overlap when the text is shorter than both (every byte in one of them): 16
/// bytes each from 16 bytes on ([`crate::envelope_scan::stops`]), 8 from 8 on
/// ([`escaped_in_word`], and no top bit set), byte by byte below.
#[inline(always)]
fn is_plain_short(bytes: &[u8]) -> bool {
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<16>(), bytes.last_chunk::<16>()) {
        use crate::envelope_scan::stops;
        return bytes.len() <= SHORT && stops(head) | stops(tail) == 0;
    }
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        let plain = |word: u64| word & HIGH | escaped_in_word(word) == 0;
        return plain(u64::from_le_bytes(*head)) && plain(u64::from_le_bytes(*tail));
    }
    bytes
        .iter()
        .all(|&byte| byte.is_ascii() && !is_escaped_byte(byte))
}

/// A string with nothing to escape ([`is_plain_short`]) written as it is after its opening
/// quote, followed by `after` (its closing quote, and what comes next).
#[inline(always)]
fn push_quoted(out: &mut Vec<u8>, bytes: &[u8], after: &[u8]) {
    out.reserve(bytes.len() + after.len() + 1);
    out.push(b'"');
    out.extend_from_slice(bytes);
    out.extend_from_slice(after);
}

/// Eight ones, one in each byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The top bit of each byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The bytes of `word` (eight of a text, little-endian) that `JSON.stringify` escapes: below
/// 0x20, `"` or `\\` ([`is_escaped_byte`]), each flagged in its top bit. Zero or not, it is
/// exact for the word as a whole (a borrow can only flag a byte above one rightly flagged),
/// bytes that are not ASCII among them.
#[inline(always)]
fn escaped_in_word(word: u64) -> u64 {
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    below | zero_byte(word ^ (ONES * u64::from(b'"'))) | zero_byte(word ^ (ONES * u64::from(b'\\')))
}

/// Whether `JSON.stringify` escapes `byte` in a string: `"`, `\\` or U+0000–U+001F.
#[inline(always)]
const fn is_escaped_byte(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// A string as serde_json's `format_escaped_str` hands it to the formatter: the runs between
/// the bytes `JSON.stringify` escapes as fragments, each of those bytes as its escape.
fn write_str(f: &mut JsFormatter<'_>, text: &str) -> io::Result<()> {
    let w = &mut io::sink();
    let bytes = text.as_bytes();
    let out = &mut f.state.out;
    // A short ASCII text with nothing to escape (a key, a role, a type, an id: most strings
    // written) holds no carrier: copied between its quotes at once.
    if is_plain_short(bytes) {
        push_quoted(out, bytes, b"\"");
        return Ok(());
    }
    // Written as it is, each run copied whole, unless it holds a carrier (never ASCII: looked
    // for only in a text with a byte that is not), which takes the way through the formatter
    // below instead.
    let mark = out.len();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    if !push_escaped(out, bytes) || !crate::js::has_lone_surrogate(text) {
        out.push(b'"');
        return Ok(());
    }
    out.truncate(mark);
    f.begin_string(w)?;
    let mut start = 0;
    while let Some(at) = next_escaped(bytes, start) {
        if start < at {
            // Escaped bytes are ASCII: the run ends on a character boundary.
            f.write_string_fragment(w, text.get(start..at).unwrap_or_default())?;
        }
        f.write_char_escape(w, char_escape(bytes.get(at).copied().unwrap_or_default()))?;
        start = at + 1;
    }
    if start < bytes.len() {
        f.write_string_fragment(w, text.get(start..).unwrap_or_default())?;
    }
    f.end_string(w)
}

/// Writes the escape `JSON.stringify` writes for `byte` (`"`, `\` or U+0000–U+001F), as
/// [`JsFormatter`]'s `write_char_escape` writes serde_json's escape of it.
fn push_escape(out: &mut Vec<u8>, byte: u8) {
    write_escape(out, char_escape(byte));
}

/// serde_json's escape of a byte `JSON.stringify` escapes.
fn char_escape(byte: u8) -> CharEscape {
    match byte {
        b'"' => CharEscape::Quote,
        b'\\' => CharEscape::ReverseSolidus,
        0x08 => CharEscape::Backspace,
        0x09 => CharEscape::Tab,
        0x0a => CharEscape::LineFeed,
        0x0c => CharEscape::FormFeed,
        0x0d => CharEscape::CarriageReturn,
        control => CharEscape::AsciiControl(control),
    }
}

/// `bytes` (a string's text) as `JSON.stringify` writes them between the quotes, pushed to
/// `out`: the bytes it escapes (`"`, `\`, U+0000–U+001F) found 16 at a time
/// ([`envelope_scan::escaped`](crate::envelope_scan)), every one of a chunk from its mask, the
/// runs between them copied whole. Whether any of `bytes` is not ASCII.
fn push_escaped(out: &mut Vec<u8>, bytes: &[u8]) -> bool {
    let mut start = 0;
    let mut at = 0;
    let mut not_ascii = 0;
    while let Some(chunk) = bytes.get(at..at + 16).and_then(|c| c.first_chunk()) {
        let (mut mask, chunk_not_ascii) = crate::envelope_scan::escaped_and_not_ascii(chunk);
        not_ascii |= chunk_not_ascii;
        while mask != 0 {
            let escaped = at + mask.trailing_zeros() as usize;
            out.extend_from_slice(bytes.get(start..escaped).unwrap_or_default());
            push_escape(out, bytes.get(escaped).copied().unwrap_or_default());
            start = escaped + 1;
            mask &= mask - 1;
        }
        at += 16;
    }
    while let Some(escaped) = next_escaped(bytes, start.max(at)) {
        out.extend_from_slice(bytes.get(start..escaped).unwrap_or_default());
        push_escape(out, bytes.get(escaped).copied().unwrap_or_default());
        start = escaped + 1;
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    not_ascii != 0 || !bytes.get(at..).unwrap_or_default().is_ascii()
}

/// The position of the first byte at or after `from` that `JSON.stringify` escapes (`"`, `\`,
/// U+0000–U+001F), looked for eight bytes at a time: for the last bytes of a text after its
/// 16-byte chunks ([`push_escaped`]) and for a text that holds a lone surrogate (written
/// through the formatter a fragment at a time).
fn next_escaped(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let mut words = rest.chunks_exact(8);
    let mut at = from;
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if escaped_in_word(u64::from_le_bytes(word)) != 0 {
            return chunk
                .iter()
                .position(|&b| is_escaped_byte(b))
                .map(|i| at + i);
        }
        at += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| is_escaped_byte(b))
        .map(|i| at + i)
}

/// Serialises `value` like [`to_js_string`] and writes the bytes to `writer` in one call.
pub fn to_js_writer<W: Write, T: Serialize + ?Sized>(
    mut writer: W,
    value: &T,
) -> Result<(), JsonError> {
    let bytes = to_js_vec(value)?;
    writer.write_all(&bytes)?;
    Ok(())
}

/// ECMAScript `Number::toString(value)`: `NaN`, `Infinity`, `-Infinity`, `0` for both zeros,
/// otherwise the shortest round-trip digits in JavaScript's notation (`1e+21`, `1e-7`). For a
/// finite number these are the bytes `JSON.stringify` writes; [`crate::js::format_f64`] uses
/// it for `String(x)`.
pub(crate) fn number_to_js_string(value: f64, buffer: &mut ryu_js::Buffer) -> &str {
    buffer.format(value)
}

/// Largest integer magnitude a JavaScript number holds exactly (2⁵³).
const MAX_SAFE: u64 = 1 << 53;

/// Output buffer plus the bookkeeping needed to move integer-like keys to the front.
#[derive(Default)]
struct State {
    out: Vec<u8>,
    frames: Vec<Frame>,
    members: Vec<Member>,
    /// `JSON.stringify(value, null, 2)`'s layout, when the value is written so
    /// ([`JsBuffer::write_pretty`]); compact when `None`.
    layout: Option<Layout>,
}

/// Where a value written laid out ([`JsBuffer::write_pretty`]) is: as serde_json's
/// `PrettyFormatter` keeps it, whose layout is `JSON.stringify`'s with two spaces.
#[derive(Clone, Copy)]
struct Layout {
    /// How deep the value sits in the answer around it.
    base: usize,
    /// How deep the writer is.
    depth: usize,
    /// Whether the array or object open last has a value yet (`[]` and `{}` are written so).
    has_value: bool,
    /// Whether an object held integer-like keys out of `JSON.stringify`'s order: the layout
    /// does not move them ([`State::pretty_out`] then gives `None`).
    reordered: bool,
}

/// A newline and two spaces a level, up to 64 levels: the indentation of
/// `JSON.stringify(value, null, 2)` ([`write_newline`], [`State::newline`]).
const INDENT: &[u8; 129] = &{
    let mut indent = [b' '; 129];
    indent[0] = b'\n';
    indent
};

/// Compact JSON text (as [`to_js_vec`] writes it) laid out as `JSON.stringify(value, null,
/// 2)` lays its value out `depth` levels deep in a larger answer (0: alone; each line after
/// the first indented two spaces a level more), written to `out` as it goes: structural
/// characters are ASCII, so string contents (UTF-8 or not) are copied through in runs up to
/// the closing quote ([`string_len`]: the next quote not escaped, a text's many `\n` escapes
/// not stopping the search). Also the rest of a value after a part written apart (e.g.
/// `,"key":1}` after an array at `depth` 1). A value written by this crate is laid out as it
/// is written instead ([`JsBuffer::write_pretty`]); this lays out bytes copied from elsewhere
/// (a line's message).
///
/// ```
/// use pi_session_types::json::write_laid_out;
/// let mut out = Vec::new();
/// write_laid_out(br#"{"a":[1,{}],"b":"x,{y}"}"#, &mut out, 0).unwrap();
/// assert_eq!(out, b"{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"x,{y}\"\n}");
/// ```
///
/// # Errors
/// What `out` gives.
pub fn write_laid_out<W: Write + ?Sized>(
    compact: &[u8],
    out: &mut W,
    depth: usize,
) -> io::Result<()> {
    let mut depth = depth;
    let mut at = 0;
    // Bytes copied through unchanged since the last structural character.
    let mut plain = 0;
    while at < compact.len() {
        let c = compact[at];
        match c {
            b'"' => {
                // Through the closing quote (to the end without one).
                at = string_len(&compact[at..]).map_or(compact.len(), |len| at + len);
                continue;
            }
            b'{' | b'[' | b'}' | b']' | b',' | b':' => {}
            _ => {
                at += 1;
                continue;
            }
        }
        // What comes before the character goes out with it: one write for both where the
        // layout allows (a plain run is most often empty or short).
        let before = &compact[plain..at];
        at += 1;
        match c {
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                if compact.get(at) == Some(&close) {
                    // `{}` or `[]`, through the closing character.
                    at += 1;
                    out.write_all(&compact[plain..at])?;
                } else {
                    out.write_all(&compact[plain..at])?;
                    depth += 1;
                    write_newline(out, depth)?;
                }
            }
            b'}' | b']' => {
                out.write_all(before)?;
                depth = depth.saturating_sub(1);
                write_newline(out, depth)?;
                out.write_all(&[c])?;
            }
            b',' => {
                out.write_all(&compact[plain..at])?;
                write_newline(out, depth)?;
            }
            _ => {
                out.write_all(before)?;
                out.write_all(b": ")?;
            }
        }
        plain = at;
    }
    out.write_all(&compact[plain..])
}

/// A newline and the indentation of `depth` levels (two spaces each), as
/// `JSON.stringify(value, null, 2)` writes them: one write from a run of spaces up to 64
/// levels deep.
///
/// # Errors
/// What `out` gives.
pub fn write_newline<W: Write + ?Sized>(out: &mut W, depth: usize) -> io::Result<()> {
    let mut left = depth * 2;
    let first = left.min(INDENT.len() - 1);
    out.write_all(&INDENT[..=first])?;
    left -= first;
    while left > 0 {
        let n = left.min(INDENT.len() - 1);
        out.write_all(&INDENT[1..=n])?;
        left -= n;
    }
    Ok(())
}

struct Frame {
    members_base: usize,
    has_index_key: bool,
}

struct Member {
    /// Offset of the member's key (after any separating comma).
    start: usize,
    /// The key as an array index, when it is one.
    index: Option<u32>,
}

struct JsFormatter<'a> {
    state: &'a mut State,
}

impl JsFormatter<'_> {
    /// A member's key where the fast walk meets it: what `begin_object_key`, the key's string,
    /// `end_object_key` and `begin_object_value` write one after the other (the comma and line
    /// before it, the key, `:` or `: ` after it), in one step; an integer-like key noted for
    /// its object's reordering as `end_object_key` notes it. A short key with nothing to
    /// escape (nearly every one) is written with its closing quote and separator at once
    /// ([`push_quoted`]).
    fn member_key(&mut self, first: bool, key: &str) -> io::Result<()> {
        let state = &mut *self.state;
        state.item(first);
        let bytes = key.as_bytes();
        // Only a key that starts with a digit may be an array index.
        let index = match bytes.first() {
            Some(b'0'..=b'9') => array_index(bytes),
            _ => None,
        };
        state.members.push(Member {
            start: state.out.len(),
            index,
        });
        if index.is_some() {
            state.key_is_index();
        }
        // The closing quote and the separator, written at once after a plain key.
        let after: &[u8] = match state.layout {
            Some(_) => b"\": ",
            None => b"\":",
        };
        if is_plain_short(bytes) {
            push_quoted(&mut state.out, bytes, after);
            return Ok(());
        }
        write_str(self, key)?;
        self.state
            .out
            .extend_from_slice(after.get(1..).unwrap_or_default());
        Ok(())
    }
}

/// Whether an object's members are in the order `JSON.stringify` writes them: its
/// integer-like keys first, ascending, then the others.
fn in_js_order(members: &[Member]) -> bool {
    members
        .iter()
        .enumerate()
        .map(|(order, member)| js_order(member.index, order))
        .is_sorted()
}

/// Where `JSON.stringify` writes the member that is `order`-th in its object, whose key is the
/// array index `index` when it is one: the integer-like keys first, ascending, then the others
/// in their order. The one rule of [`State::reorder_members`] and [`in_js_order`].
fn js_order(index: Option<u32>, order: usize) -> (u8, u64, usize) {
    match index {
        Some(n) => (0, u64::from(n), order),
        None => (1, 0, order),
    }
}

/// `Some(n)` when `key` (the raw bytes between the quotes) is a canonical array index.
fn array_index(key: &[u8]) -> Option<u32> {
    if key.is_empty() || key.len() > 10 || !key.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if key.len() > 1 && key[0] == b'0' {
        return None;
    }
    let value = key
        .iter()
        .fold(0u64, |acc, d| acc * 10 + u64::from(d - b'0'));
    // Array indices stop at 2^32 - 2; larger integer keys keep insertion order in V8.
    (value <= 4_294_967_294).then_some(value as u32)
}

impl State {
    /// Empties the buffer and the bookkeeping, keeping their memory; what follows is written
    /// compact.
    fn clear(&mut self) {
        self.out.clear();
        self.frames.clear();
        self.members.clear();
        self.layout = None;
    }

    /// [`Self::clear`], what follows laid out `depth` levels deep.
    fn clear_pretty(&mut self, depth: usize) {
        self.clear();
        self.layout = Some(Layout {
            base: depth,
            depth,
            has_value: false,
            reordered: false,
        });
    }

    /// The bytes written laid out, `None` when an object needed its keys moved.
    fn pretty_out(&self) -> Option<&[u8]> {
        match self.layout {
            Some(layout) if layout.reordered => None,
            _ => Some(&self.out),
        }
    }

    /// A newline and the indentation of `depth` levels ([`write_newline`]).
    fn newline(&mut self, depth: usize) {
        // Writing to a `Vec` cannot fail.
        let _ = write_newline(&mut self.out, depth);
    }

    /// An array or object opens: one level deeper, nothing in it yet.
    fn open(&mut self, bracket: u8) {
        self.out.push(bracket);
        if let Some(layout) = &mut self.layout {
            layout.depth += 1;
            layout.has_value = false;
        }
    }

    /// An array or object closes: on a line of its own unless it is empty.
    fn close(&mut self, bracket: u8) {
        if let Some(layout) = &mut self.layout {
            layout.depth = layout.depth.saturating_sub(1);
            if layout.has_value {
                let depth = layout.depth;
                self.newline(depth);
            }
        }
        self.out.push(bracket);
    }

    /// The key just begun is an array index: its object is put in `JSON.stringify`'s order
    /// when it ends.
    fn key_is_index(&mut self) {
        if let Some(frame) = self.frames.last_mut() {
            frame.has_index_key = true;
        }
    }

    /// Before an element or a key: the comma after the one before, and its line.
    fn item(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
        if let Some(layout) = self.layout {
            self.newline(layout.depth);
        }
    }

    /// After an element or a member's value: the array or object has one.
    fn item_end(&mut self) {
        if let Some(layout) = &mut self.layout {
            layout.has_value = true;
        }
    }

    fn write_number_f64(&mut self, value: f64) {
        if value.is_finite() {
            let mut buffer = ryu_js::Buffer::new();
            self.out
                .extend_from_slice(number_to_js_string(value, &mut buffer).as_bytes());
        } else {
            self.out.extend_from_slice(b"null");
        }
    }

    fn write_unsigned(&mut self, value: u128, negative: bool) {
        if value <= u128::from(MAX_SAFE) {
            if negative && value != 0 {
                self.out.push(b'-');
            }
            let mut digits = [0u8; 40];
            let mut n = value;
            let mut i = digits.len();
            loop {
                i -= 1;
                digits[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            self.out.extend_from_slice(&digits[i..]);
        } else {
            let magnitude = value as f64;
            self.write_number_f64(if negative { -magnitude } else { magnitude });
        }
    }

    /// Moves the members of the object that starts at `first` so that array-index keys come
    /// first in ascending order, then the other keys in their original order.
    fn reorder_members(&mut self, base: usize) {
        let members = &self.members[base..];
        let Some(first) = members.first() else { return };
        let region_start = first.start;
        let end = self.out.len();
        let mut spans: Vec<(Option<u32>, usize, usize, usize)> = Vec::with_capacity(members.len());
        for (i, member) in members.iter().enumerate() {
            // The next member's start is preceded by its separating comma.
            let member_end = members.get(i + 1).map_or(end, |next| next.start - 1);
            spans.push((member.index, i, member.start, member_end));
        }
        spans.sort_by_key(|&(index, order, _, _)| js_order(index, order));
        let mut reordered = Vec::with_capacity(end - region_start);
        for (i, &(_, _, start, stop)) in spans.iter().enumerate() {
            if i > 0 {
                reordered.push(b',');
            }
            reordered.extend_from_slice(&self.out[start..stop]);
        }
        self.out.truncate(region_start);
        self.out.extend_from_slice(&reordered);
    }
}

impl Formatter for JsFormatter<'_> {
    fn write_null<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.extend_from_slice(b"null");
        Ok(())
    }
    fn write_bool<W: ?Sized + Write>(&mut self, _: &mut W, value: bool) -> io::Result<()> {
        self.state
            .out
            .extend_from_slice(if value { b"true" } else { b"false" });
        Ok(())
    }
    fn write_i8<W: ?Sized + Write>(&mut self, w: &mut W, value: i8) -> io::Result<()> {
        self.write_i64(w, i64::from(value))
    }
    fn write_i16<W: ?Sized + Write>(&mut self, w: &mut W, value: i16) -> io::Result<()> {
        self.write_i64(w, i64::from(value))
    }
    fn write_i32<W: ?Sized + Write>(&mut self, w: &mut W, value: i32) -> io::Result<()> {
        self.write_i64(w, i64::from(value))
    }
    fn write_i64<W: ?Sized + Write>(&mut self, w: &mut W, value: i64) -> io::Result<()> {
        self.write_i128(w, i128::from(value))
    }
    fn write_i128<W: ?Sized + Write>(&mut self, _: &mut W, value: i128) -> io::Result<()> {
        self.state.write_unsigned(value.unsigned_abs(), value < 0);
        Ok(())
    }
    fn write_u8<W: ?Sized + Write>(&mut self, w: &mut W, value: u8) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u16<W: ?Sized + Write>(&mut self, w: &mut W, value: u16) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u32<W: ?Sized + Write>(&mut self, w: &mut W, value: u32) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u64<W: ?Sized + Write>(&mut self, w: &mut W, value: u64) -> io::Result<()> {
        self.write_u128(w, u128::from(value))
    }
    fn write_u128<W: ?Sized + Write>(&mut self, _: &mut W, value: u128) -> io::Result<()> {
        self.state.write_unsigned(value, false);
        Ok(())
    }
    fn write_f32<W: ?Sized + Write>(&mut self, _: &mut W, value: f32) -> io::Result<()> {
        self.state.write_number_f64(f64::from(value));
        Ok(())
    }
    fn write_f64<W: ?Sized + Write>(&mut self, _: &mut W, value: f64) -> io::Result<()> {
        self.state.write_number_f64(value);
        Ok(())
    }
    fn write_number_str<W: ?Sized + Write>(&mut self, _: &mut W, value: &str) -> io::Result<()> {
        match value.parse::<f64>() {
            Ok(number) => self.state.write_number_f64(number),
            Err(_) => self.state.out.extend_from_slice(value.as_bytes()),
        }
        Ok(())
    }
    fn begin_string<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.push(b'"');
        Ok(())
    }
    fn end_string<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.out.push(b'"');
        Ok(())
    }
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if crate::js::has_lone_surrogate(fragment) {
            write_carrying(&mut self.state.out, fragment);
        } else {
            self.state.out.extend_from_slice(fragment.as_bytes());
        }
        Ok(())
    }
    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        write_escape(&mut self.state.out, escape);
        Ok(())
    }
    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.state.out.extend_from_slice(fragment.as_bytes());
        Ok(())
    }
    fn begin_array<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.open(b'[');
        Ok(())
    }
    fn end_array<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.close(b']');
        Ok(())
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        self.state.item(first);
        Ok(())
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.item_end();
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        let state = &mut *self.state;
        state.open(b'{');
        state.frames.push(Frame {
            members_base: state.members.len(),
            has_index_key: false,
        });
        Ok(())
    }
    fn end_object<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        let state = &mut *self.state;
        if let Some(frame) = state.frames.pop() {
            if frame.has_index_key {
                match &mut state.layout {
                    // The members' spans hold their lines' indentation: not moved here. Most
                    // such objects (a map of numbered things) are in order already.
                    Some(layout) => {
                        layout.reordered |= !in_js_order(&state.members[frame.members_base..]);
                    }
                    None => state.reorder_members(frame.members_base),
                }
            }
            state.members.truncate(frame.members_base);
        }
        state.close(b'}');
        Ok(())
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        let state = &mut *self.state;
        state.item(first);
        state.members.push(Member {
            start: state.out.len(),
            index: None,
        });
        Ok(())
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        let state = &mut *self.state;
        let Some(member) = state.members.last_mut() else {
            return Ok(());
        };
        let key = &state.out[member.start..];
        if key.len() >= 2 && key[0] == b'"' && key[key.len() - 1] == b'"' {
            member.index = array_index(&key[1..key.len() - 1]);
        }
        if member.index.is_some() {
            state.key_is_index();
        }
        Ok(())
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        if self.state.layout.is_some() {
            self.state.out.extend_from_slice(b": ");
        } else {
            self.state.out.push(b':');
        }
        Ok(())
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.state.item_end();
        Ok(())
    }
}

/// Writes serde_json's `escape` as `JSON.stringify` spells it (lowercase `\u00xx`).
fn write_escape(out: &mut Vec<u8>, escape: CharEscape) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match escape {
        CharEscape::Quote => out.extend_from_slice(b"\\\""),
        CharEscape::ReverseSolidus => out.extend_from_slice(b"\\\\"),
        CharEscape::Solidus => out.push(b'/'),
        CharEscape::Backspace => out.extend_from_slice(b"\\b"),
        CharEscape::FormFeed => out.extend_from_slice(b"\\f"),
        CharEscape::LineFeed => out.extend_from_slice(b"\\n"),
        CharEscape::CarriageReturn => out.extend_from_slice(b"\\r"),
        CharEscape::Tab => out.extend_from_slice(b"\\t"),
        CharEscape::AsciiControl(byte) => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xf)],
        ]),
    }
}

/// Writes `fragment` with each carried lone surrogate as its `\udxxx` escape.
fn write_carrying(out: &mut Vec<u8>, fragment: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut utf8 = [0u8; 4];
    for c in fragment.chars() {
        match crate::js::carried_surrogate(c) {
            Some(unit) => out.extend_from_slice(&[
                b'\\',
                b'u',
                HEX[usize::from(unit >> 12)],
                HEX[usize::from((unit >> 8) & 0xf)],
                HEX[usize::from((unit >> 4) & 0xf)],
                HEX[usize::from(unit & 0xf)],
            ]),
            None => out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Bytes that are already what `JSON.stringify` prints: copied instead of parsed and printed
// ---------------------------------------------------------------------------------------------

/// Deepest nesting [`is_js_canonical`] follows (serde_json's own parse limit is 128).
const CANONICAL_MAX_DEPTH: usize = 128;
/// Most members of one object [`is_js_canonical`] checks for duplicate keys (pairwise);
/// a larger object is left to the parsed path.
const CANONICAL_MAX_KEYS: usize = 64;

/// True when `bytes` are exactly what [`to_js_string`] prints for the value a session line's
/// JSON parses to (lone surrogate escapes read as carriers, as the store reads them), so a
/// writer may copy the bytes instead of parsing and printing them. pi and omp write their lines
/// with `JSON.stringify`, so almost every body is; anything else says `false`, and the caller
/// takes the parsed path:
///
/// - whitespace outside strings; a `\/`, `\u00e9`-style or uppercase `\u` escape (only control
///   characters without a short form and lone surrogates are written as `\u`, in lowercase); an
///   escaped surrogate *pair* (printed as the character); a raw U+10F800–U+10FFFF character
///   (the carrier range, printed as a lone surrogate escape); invalid UTF-8;
/// - a number that ECMAScript's `Number::toString` spells differently (`1.0`, `1e2`, `-0`,
///   `1E+21`, integers beyond 2⁵³);
/// - an object with a duplicate key (the last value wins, at the first key's place), with an
///   integer-like key (printed first, in ascending order), or with more than 64 keys;
/// - nesting deeper than 128, or anything that is not one JSON value.
///
/// ```
/// use pi_session_types::json::is_js_canonical;
/// assert!(is_js_canonical(r#"{"role":"user","content":"café\n\ud83d","n":[1,-2.5,1e+21]}"#.as_bytes()));
/// assert!(is_js_canonical(br#"{"a":"\ud83d!"}"#));
/// for other in [r#"{"a": 1}"#, r#"{"a":"\u00e9"}"#, r#"{"a":1.0}"#, r#"{"a":1,"a":2}"#,
///               r#"{"b":1,"0":2}"#, r#"{"a":"\uD83D"}"#, r#"{"a":"\ud83d\ude00"}"#, r#"{"a":"\/"}"#] {
///     assert!(!is_js_canonical(other.as_bytes()), "{other}");
/// }
/// ```
pub fn is_js_canonical(bytes: &[u8]) -> bool {
    is_js_canonical_given(bytes, Strings::Unknown)
}

/// [`is_js_canonical`] of bytes whose strings are known to be spelled as `JSON.stringify`
/// spells them when `strings` says so: only what lies between them is checked (numbers, keys,
/// layout, nesting).
///
/// ```
/// use pi_session_types::envelope_scan::scan_envelope;
/// use pi_session_types::json::{Strings, is_js_canonical_given};
/// let line = br#"{"type":"message","n":1.0}"#;
/// let scanned = scan_envelope(line).unwrap();
/// assert!(scanned.stringify_spelled);
/// // Its strings are, its number is not.
/// assert!(!is_js_canonical_given(line, Strings::of_scanned(&scanned)));
/// ```
pub fn is_js_canonical_given(bytes: &[u8], strings: Strings) -> bool {
    canonical_walk(bytes, NoReport, strings)
}

/// What a reader knows of the strings of the bytes it hands the canonical walks
/// ([`is_js_canonical_given`], [`crate::shallow::canonical_keyed_message_given`]).
///
/// The open's scan of a line proves it JSON and UTF-8 and, most often, that each of its
/// strings is `JSON.stringify`'s spelling ([`Scanned::stringify_spelled`]); a reader that
/// later checks a part of that line for `JSON.stringify`'s spelling, to copy it, need not
/// read its strings' bytes again: the walk then steps over a string by its quotes.
///
/// [`Scanned::stringify_spelled`]: crate::envelope_scan::Scanned::stringify_spelled
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Strings {
    /// Nothing: each string's escapes, UTF-8 and carriers are checked.
    #[default]
    Unknown,
    /// Each string is valid and spelled as `JSON.stringify` spells it, and no whitespace
    /// lies between tokens. Bytes that are not so (a line changed since it was scanned) may
    /// then be taken as canonical: say so only of bytes a scan proved.
    Stringified,
}

impl Strings {
    /// What the open's scan of a line proved of its strings.
    pub fn of_scanned(scanned: &crate::envelope_scan::Scanned<'_>) -> Self {
        if scanned.stringify_spelled {
            Strings::Stringified
        } else {
            Strings::Unknown
        }
    }
}

/// Where a member handed out by [`canonical_members`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberOf {
    /// A member of the top-level object.
    Top,
    /// A member of the object that is the value of the top-level member named `inner`.
    Inner,
}

/// [`is_js_canonical`] of `bytes`, handing `each` on the way every member of the top-level
/// object ([`MemberOf::Top`]) and of the object that is the value of its member `inner`
/// ([`MemberOf::Inner`]): the key as written between its quotes and the value's bytes, in
/// order (an inner object's members before the top-level member that holds it). One pass over
/// the bytes does both, where [`for_each_member`] and [`is_js_canonical`] would take one each.
/// What was handed out before a `false` is to be dropped: it may be part of a value that is
/// not canonical (or not JSON).
///
/// ```
/// use pi_session_types::json::{MemberOf, canonical_members};
/// let line = br#"{"id":"a","message":{"role":"user","content":"hi"}}"#;
/// let mut members = Vec::new();
/// assert!(canonical_members(line, "message", |of, key, value| members.push((of, key, value))));
/// assert_eq!(members, [
///     (MemberOf::Top, &b"id"[..], &br#""a""#[..]),
///     (MemberOf::Inner, b"role", br#""user""#),
///     (MemberOf::Inner, b"content", br#""hi""#),
///     (MemberOf::Top, b"message", br#"{"role":"user","content":"hi"}"#),
/// ]);
/// assert!(!canonical_members(br#"{"id": "a"}"#, "message", |_, _, _| {}));
/// ```
pub fn canonical_members<'b>(
    bytes: &'b [u8],
    inner: &str,
    mut each: impl FnMut(MemberOf, &'b [u8], &'b [u8]),
) -> bool {
    canonical_members_marked(bytes, inner, Strings::Unknown, |met| {
        each(met.of, met.key, met.value);
    })
}

/// A member [`canonical_members_marked`] hands out: what [`canonical_members`] hands out, and
/// whether its key, and its value when a string, hold an escape (as the walk saw them: no
/// second look at their bytes).
pub(crate) struct Met<'b> {
    /// Where the member is.
    pub(crate) of: MemberOf,
    /// The key as written between its quotes.
    pub(crate) key: &'b [u8],
    /// The value's bytes.
    pub(crate) value: &'b [u8],
    /// Whether the key holds an escape.
    pub(crate) key_escaped: bool,
    /// Whether the value is a string holding an escape (`false` for any other value).
    pub(crate) value_escaped: bool,
}

/// [`canonical_members`], each member handed out as a [`Met`].
pub(crate) fn canonical_members_marked<'b>(
    bytes: &'b [u8],
    inner: &str,
    strings: Strings,
    each: impl FnMut(Met<'b>),
) -> bool {
    canonical_walk(
        bytes,
        Reporter {
            inner: inner.as_bytes(),
            each,
        },
        strings,
    )
}

/// [`is_js_canonical`], with what [`canonical_members`] hands out.
fn canonical_walk<'b>(bytes: &'b [u8], report: impl Report<'b>, strings: Strings) -> bool {
    walk_value(bytes, 0, 0, report, strings) == Some(bytes.len())
}

/// The walk of the value of a top-level member that starts at `start` in the line `bytes`
/// (one level deep, as [`canonical_members_marked`] walks it), handing `each` its members when
/// it is an object ([`MemberOf::Inner`]); the offset just past the value, `None` when it is
/// not `JSON.stringify`'s spelling. What comes after the value is not looked at.
///
/// The same checks as the walk of the whole line, and the same depth limit: the line's other
/// members are the caller's to read.
pub(crate) fn canonical_inner_value<'b>(
    bytes: &'b [u8],
    start: usize,
    strings: Strings,
    each: impl FnMut(Met<'b>),
) -> Option<usize> {
    let report = Reporter { inner: b"", each };
    walk_value(bytes, start, 1, report, strings)
}

/// The walk of the value at `at`, `depth` levels deep (its members handed out as
/// [`MemberOf::Inner`] from depth 1, as [`MemberOf::Top`] and the inner object's at 0): the
/// offset past it, or `None` when it is not canonical.
fn walk_value<'b>(
    bytes: &'b [u8],
    at: usize,
    depth: usize,
    report: impl Report<'b>,
    strings: Strings,
) -> Option<usize> {
    // Invalid UTF-8 and the carriers are found where the walk meets a byte that is not ASCII
    // (in a string: anywhere else the walk refuses it), not in a pass of their own.
    let mut scanner = Canonical {
        bytes,
        at,
        keys: WALK_KEYS.with(Cell::take),
        escaped: false,
        in_inner: depth > 0,
        report,
        strings,
    };
    let canonical = scanner.value(depth);
    let end = scanner.at;
    let mut keys = scanner.keys;
    keys.clear();
    // Kept for the thread's next walk unless a deep, wide line grew it past the usual.
    if keys.capacity() <= KEPT_WALK_KEYS {
        WALK_KEYS.with(|kept| kept.set(keys));
    }
    canonical.then_some(end)
}

thread_local! {
    /// The key stack of [`canonical_walk`], kept between the walks of a thread: a line's walk
    /// would otherwise allocate it, and grow it, every time (a `message` line holds eight keys
    /// or so: two allocations a line).
    static WALK_KEYS: Cell<Vec<(usize, usize)>> = const { Cell::new(Vec::new()) };
}

/// The largest key stack kept between walks (keys of the objects open at once).
const KEPT_WALK_KEYS: usize = 256;

/// Who is handed the members the walk meets ([`canonical_members_marked`]), or not
/// ([`NoReport`]): a type of its own each, so that the walk is compiled for each and a walk
/// without one does no work for it.
trait Report<'b> {
    /// The top-level member whose object's members are handed out too.
    fn inner(&self) -> Option<&[u8]>;
    /// A member met.
    fn member(&mut self, met: Met<'b>);
}

/// No one: [`is_js_canonical`]'s walk.
struct NoReport;

impl Report<'_> for NoReport {
    #[inline(always)]
    fn inner(&self) -> Option<&[u8]> {
        None
    }

    #[inline(always)]
    fn member(&mut self, _: Met<'_>) {}
}

/// Who is handed the members of [`canonical_members_marked`].
struct Reporter<'r, F> {
    /// The top-level member whose object's members are handed out too.
    inner: &'r [u8],
    each: F,
}

impl<'b, F: FnMut(Met<'b>)> Report<'b> for Reporter<'_, F> {
    #[inline(always)]
    fn inner(&self) -> Option<&[u8]> {
        Some(self.inner)
    }

    #[inline(always)]
    fn member(&mut self, met: Met<'b>) {
        (self.each)(met);
    }
}

/// The walk of [`is_js_canonical`]: every byte outside strings is ASCII (anything else is
/// refused where a token is expected); a string's run of text that is not ASCII is checked as
/// UTF-8 holding no carrier ([`Canonical::string`]).
struct Canonical<'b, R> {
    bytes: &'b [u8],
    at: usize,
    /// The keys (byte ranges, quotes excluded) of the objects open on the way down.
    keys: Vec<(usize, usize)>,
    /// Whether the last string walked ([`Canonical::string`]) holds an escape.
    escaped: bool,
    /// Whether the walk is inside the value of the top-level member [`Report::inner`] names.
    in_inner: bool,
    /// Who is handed the members.
    report: R,
    /// What is known of the strings: [`Strings::Stringified`] steps over each by its quotes.
    strings: Strings,
}

impl<'b, R: Report<'b>> Canonical<'b, R> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        past_literal(self.bytes, self.at, word).is_some_and(|end| {
            self.at = end;
            true
        })
    }

    fn value(&mut self, depth: usize) -> bool {
        if depth > CANONICAL_MAX_DEPTH {
            return false;
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string(),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => false,
        }
    }

    /// Past `byte` when it is next.
    fn eat(&mut self, byte: u8) -> bool {
        let next = self.peek() == Some(byte);
        self.at += usize::from(next);
        next
    }

    /// After an array item or object member: `Some(true)` past the closing `close`,
    /// `Some(false)` past a comma, `None` for anything else.
    fn after_item(&mut self, close: u8) -> Option<bool> {
        if self.eat(close) {
            Some(true)
        } else {
            self.eat(b',').then_some(false)
        }
    }

    fn array(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b']') {
            return true;
        }
        loop {
            if !self.value(depth + 1) {
                return false;
            }
            match self.after_item(b']') {
                Some(true) => return true,
                Some(false) => {}
                None => return false,
            }
        }
    }

    fn object(&mut self, depth: usize) -> bool {
        self.at += 1;
        if self.eat(b'}') {
            return true;
        }
        let base = self.keys.len();
        let ok = self.members(depth, base);
        self.keys.truncate(base);
        ok
    }

    fn members(&mut self, depth: usize, base: usize) -> bool {
        loop {
            let start = self.at + 1;
            if self.peek() != Some(b'"') || !self.string() {
                return false;
            }
            let key = &self.bytes[start..self.at - 1];
            let bytes = self.bytes;
            if array_index(key).is_some()
                || self.keys.len() - base >= CANONICAL_MAX_KEYS
                || self.keys[base..].iter().any(|&(s, e)| &bytes[s..e] == key)
            {
                return false;
            }
            let key_escaped = self.escaped;
            self.keys.push((start, self.at - 1));
            if !self.eat(b':') {
                return false;
            }
            let value_start = self.at;
            if depth == 0 {
                self.in_inner = self.report.inner() == Some(key);
            }
            if !self.value(depth + 1) {
                return false;
            }
            let value = &bytes[value_start..self.at];
            let of = match depth {
                0 => Some(MemberOf::Top),
                1 if self.in_inner => Some(MemberOf::Inner),
                _ => None,
            };
            if let Some(of) = of {
                self.report.member(Met {
                    of,
                    key,
                    value,
                    key_escaped,
                    // `escaped` is the last string's: the value's, when it is one.
                    value_escaped: value.first() == Some(&b'"') && self.escaped,
                });
            }
            match self.after_item(b'}') {
                Some(true) => return true,
                Some(false) => {}
                None => return false,
            }
        }
    }

    /// A string from its opening quote: only the escapes `JSON.stringify` writes. Plain text
    /// is skipped 16 bytes at a time and, from an escape on, text full of the common escapes
    /// (`\n`, `\t`, `\"`, all of them `JSON.stringify`'s) 32 at a time, as the open's scan
    /// skips them ([`envelope_scan`](crate::envelope_scan)); a run of text that is not ASCII
    /// (up to the next quote or backslash) must be valid UTF-8 without a carrier
    /// (U+10F800–U+10FFFF, printed as a lone surrogate's escape).
    #[inline(always)]
    fn string(&mut self) -> bool {
        self.escaped = false;
        // A short plain string is told inline, without a call (the open's scan reads it so).
        match crate::envelope_scan::short_plain_end(self.bytes, self.at + 1) {
            Ok(end) => {
                self.at = end + 1;
                true
            }
            Err(at) if self.strings == Strings::Stringified => self.string_known(at),
            Err(at) => self.string_on(at),
        }
    }

    /// The rest of a [`Canonical::string`] known to be `JSON.stringify`'s spelling
    /// ([`Strings::Stringified`]), from `at` (not inside an escape): past its closing quote,
    /// found by a search for quotes; whether it holds an escape is told by a search for a
    /// backslash (the members handed out say so).
    fn string_known(&mut self, at: usize) -> bool {
        let Some((_, end, escaped)) = known_string(self.bytes, self.at, at) else {
            return false;
        };
        self.escaped = escaped;
        self.at = end;
        true
    }

    /// The rest of a [`Canonical::string`] its first mask does not settle (longer, or holding
    /// an escape or a byte that is not ASCII), from `at`: the bytes before it are plain ASCII.
    fn string_on(&mut self, mut at: usize) -> bool {
        use crate::envelope_scan::{skip_common_escapes, skip_plain};
        let bytes = self.bytes;
        loop {
            at = skip_plain(bytes, at);
            let Some(&byte) = bytes.get(at) else {
                return false;
            };
            match byte {
                b'"' => {
                    self.at = at + 1;
                    return true;
                }
                b'\\' => {
                    self.escaped = true;
                    let past = skip_common_escapes(bytes, at);
                    if past > at {
                        at = past;
                        continue;
                    }
                    self.at = at;
                    if !self.escape() {
                        return false;
                    }
                    at = self.at;
                }
                0..0x20 => return false,
                0x20..0x80 => at += 1,
                // Text that is not ASCII (where the chunks stop at every byte): up to the
                // next quote or backslash (a character's boundary in UTF-8), valid UTF-8 with
                // no control character and no carrier on the way.
                _ => {
                    let rest = bytes.get(at..).unwrap_or_default();
                    let Some(run) = memchr::memchr2(b'"', b'\\', rest).and_then(|n| rest.get(..n))
                    else {
                        return false;
                    };
                    if run.iter().any(|&b| b < 0x20)
                        || std::str::from_utf8(run).is_err()
                        || crate::js::carrier_bytes(run)
                    {
                        return false;
                    }
                    at += run.len();
                }
            }
        }
    }

    /// One escape from its backslash.
    fn escape(&mut self) -> bool {
        let Some((escape, len)) = stringify_escape(self.bytes, self.at) else {
            return false;
        };
        self.at += len;
        match escape {
            StringifyEscape::Short | StringifyEscape::Control => true,
            // A high surrogate is lone unless a low one's escape follows (any case).
            StringifyEscape::Surrogate(0xD800..=0xDBFF) => {
                !starts_low_surrogate_escape(&self.bytes[self.at..])
            }
            // A low one after a high one was refused with the high one.
            StringifyEscape::Surrogate(_) => true,
        }
    }

    /// A number, when ECMAScript spells the value it reads as exactly these bytes.
    fn number(&mut self) -> bool {
        let start = self.at;
        let bytes = self.bytes;
        let end = bytes[start..]
            .iter()
            .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
            .map_or(bytes.len(), |n| start + n);
        self.at = end;
        let text = &bytes[start..end];
        let digits = text.strip_prefix(b"-").unwrap_or(text);
        // The common case: a small integer without a leading zero (and not `-0`).
        if !digits.is_empty()
            && digits.len() <= 15
            && digits.iter().all(u8::is_ascii_digit)
            && (digits[0] != b'0' || (digits.len() == 1 && text.len() == 1))
        {
            return true;
        }
        let Some(value) = std::str::from_utf8(text)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|v| v.is_finite())
        else {
            return false;
        };
        let mut buffer = ryu_js::Buffer::new();
        number_to_js_string(value, &mut buffer).as_bytes() == text
    }
}

/// The four lowercase hex digits `hex` spells (`None` for anything else, uppercase included).
/// An escape `JSON.stringify` writes in a string ([`stringify_escape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StringifyEscape {
    /// `\" \\ \b \f \n \r \t`.
    Short,
    /// `\u00xx` (lowercase) of a control character without a short form.
    Control,
    /// `\udxxx` (lowercase) of a surrogate: `JSON.stringify` writes a lone one so; whether this
    /// one is lone is the caller's to tell.
    Surrogate(u16),
}

/// The escape whose backslash is at `at` in `bytes`, and its length, when it is one
/// `JSON.stringify` may write; `None` for any other (`\/`, `\u00e9`, uppercase hex, a control
/// character's `\u` where a short form exists). The one place this rule lives: the canonical
/// walk and the readers that keep a string's spelling ([`crate::js_string`]) ask it.
pub(crate) fn stringify_escape(bytes: &[u8], at: usize) -> Option<(StringifyEscape, usize)> {
    match bytes.get(at + 1)? {
        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => Some((StringifyEscape::Short, 2)),
        b'u' => {
            let escape = match lowercase_hex4(bytes.get(at + 2..at + 6))? {
                // Control characters without a short form.
                0x00..=0x07 | 0x0b | 0x0e..=0x1f => StringifyEscape::Control,
                unit @ 0xD800..=0xDFFF => StringifyEscape::Surrogate(unit),
                _ => return None,
            };
            Some((escape, 6))
        }
        _ => None,
    }
}

fn lowercase_hex4(hex: Option<&[u8]>) -> Option<u16> {
    hex?.iter().try_fold(0u16, |acc, &d| {
        let digit = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        Some(acc << 4 | u16::from(digit))
    })
}

/// True when `rest` starts with the escape of a low surrogate (`\udc00`–`\udfff`, any case).
fn starts_low_surrogate_escape(rest: &[u8]) -> bool {
    matches!(
        rest,
        [b'\\', b'u', b'd' | b'D', b'c' | b'C' | b'd' | b'D' | b'e' | b'E' | b'f' | b'F', a, b, ..]
            if a.is_ascii_hexdigit() && b.is_ascii_hexdigit()
    )
}

/// The bytes of the value of the member `key` of the JSON object `object` (a line as written,
/// whitespace allowed), when the key is spelled without escapes and appears once; `None`
/// otherwise, or when `object` is not an object. The values are skipped, not checked: the line
/// is one the store has already parsed.
///
/// ```
/// use pi_session_types::json::top_level_member;
/// let line = br#"{"type":"message","id":"a","message":{"role":"user","id":"x"}}"#;
/// assert_eq!(top_level_member(line, "message"), Some(&br#"{"role":"user","id":"x"}"#[..]));
/// assert_eq!(top_level_member(line, "id"), Some(&br#""a""#[..]));
/// assert_eq!(top_level_member(br#"{"id":1,"id":2}"#, "id"), None);
/// ```
pub fn top_level_member<'a>(object: &'a [u8], key: &str) -> Option<&'a [u8]> {
    top_level_members(object, [key]).and_then(|[value]| value)
}

/// [`top_level_member`] of several keys in one pass: `None` when `object` is not an object or
/// one of `keys` appears more than once; else each key's value, `None` for a key not there.
///
/// ```
/// use pi_session_types::json::top_level_members;
/// let line = br#"{"type":"message","id":"a","message":{}}"#;
/// let [kind, id, nope] = top_level_members(line, ["type", "id", "nope"]).unwrap();
/// assert_eq!((kind, id, nope), (Some(&br#""message""#[..]), Some(&br#""a""#[..]), None));
/// ```
pub fn top_level_members<'a, const N: usize>(
    object: &'a [u8],
    keys: [&str; N],
) -> Option<[Option<&'a [u8]>; N]> {
    let mut found = [None; N];
    let mut duplicate = false;
    for_each_member(object, |key, value| {
        if let Some(slot) = keys.iter().position(|k| k.as_bytes() == key) {
            duplicate |= found[slot].is_some();
            found[slot] = Some(value);
        }
    })?;
    (!duplicate).then_some(found)
}

/// Hands each member of the object `object` to `each`, in order: its key as written between
/// the quotes (escapes left as they are) and its value's bytes. `None` when `object` is not an
/// object followed by nothing but whitespace; nothing inside the values is checked (as
/// [`top_level_members`] reads them).
///
/// ```
/// use pi_session_types::json::for_each_member;
/// let mut members = Vec::new();
/// for_each_member(br#"{"a":[1,{"b":2}], "c" : "d"}"#, |key, value| members.push((key, value)));
/// assert_eq!(members, [(&b"a"[..], &b"[1,{\"b\":2}]"[..]), (b"c", b"\"d\"")]);
/// assert_eq!(for_each_member(b"[1]", |_, _| {}), None);
/// ```
pub fn for_each_member<'a>(
    object: &'a [u8],
    mut each: impl FnMut(&'a [u8], &'a [u8]),
) -> Option<()> {
    let at = skip_whitespace(object, 0);
    let len = read_members(object.get(at..)?, |key, rest| {
        let len = value_len(rest)?;
        each(key, &rest[..len]);
        Some(len)
    })?;
    (skip_whitespace(object, at + len) == object.len()).then_some(())
}

/// The members of the object that starts `bytes` (with its `{`; what follows its `}` is left
/// alone), each handed to `each` in order: its key as written between the quotes and the bytes
/// from its value's first byte to the end of `bytes`. `each` gives back the length of the value
/// there, having read it itself (a parse that ends where the value does, so that the value is
/// not skipped first and read after) or measured it with [`value_len`]; `None` ends the walk.
/// The object's length, or `None` when `bytes` do not start with an object (or `each` gave
/// up). Nothing is checked but the object's own punctuation: for text known to be JSON.
///
/// ```
/// use pi_session_types::json::{read_members, value_len};
/// let mut keys = Vec::new();
/// let bytes = br#"{"a":[1,{"b":2}], "c" : "d"} and more"#;
/// let len = read_members(bytes, |key, rest| {
///     keys.push(key);
///     value_len(rest)
/// });
/// assert_eq!((len, keys), (Some(28), vec![&b"a"[..], b"c"]));
/// assert_eq!(read_members(b"[1]", |_, rest| value_len(rest)), None);
/// ```
pub fn read_members<'a>(
    bytes: &'a [u8],
    mut each: impl FnMut(&'a [u8], &'a [u8]) -> Option<usize>,
) -> Option<usize> {
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut at = skip_whitespace(bytes, 1);
    if bytes.get(at) == Some(&b'}') {
        return Some(at + 1);
    }
    loop {
        let key_start = at + 1;
        at = skip_string(bytes, at)?;
        let key = &bytes[key_start..at - 1];
        at = skip_whitespace(bytes, at);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_whitespace(bytes, at + 1);
        let len = each(key, bytes.get(at..)?)?;
        at = skip_whitespace(bytes, at.checked_add(len)?);
        match bytes.get(at) {
            Some(b',') => at = skip_whitespace(bytes, at + 1),
            Some(b'}') => return Some(at + 1),
            _ => return None,
        }
    }
}

/// The length of the JSON value that starts `bytes` (strings and nesting followed, nothing
/// checked: for text known to be JSON); `None` when none starts there or it is cut short.
///
/// ```
/// use pi_session_types::json::value_len;
/// assert_eq!(value_len(br#"{"a":"}"}, 1"#), Some(9));
/// assert_eq!(value_len(b"12, 3"), Some(2));
/// assert_eq!(value_len(b"[1"), None);
/// ```
pub fn value_len(bytes: &[u8]) -> Option<usize> {
    skip_value(bytes, 0)
}

/// [`value_len`] of a string (`bytes` start with its opening quote): through its closing
/// quote, found by one search for quotes, a quote after an odd run of backslashes passed over
/// (text's many `\n` escapes do not stop the search); `None` when no string starts `bytes` or
/// it is not closed.
///
/// ```
/// use pi_session_types::json::string_len;
/// assert_eq!(string_len(br#""a\"b\\", 1"#), Some(8));
/// assert_eq!(string_len(br#""open"#), None);
/// assert_eq!(string_len(b"1"), None);
/// ```
#[inline]
pub fn string_len(bytes: &[u8]) -> Option<usize> {
    skip_string(bytes, 0)
}

/// Calls `each` with the bytes of every item of the JSON array `array`, in order; `None` when
/// it is not an array (or is cut short). Items are skipped as [`for_each_member`] skips values:
/// for text known to be JSON.
///
/// ```
/// use pi_session_types::json::for_each_element;
/// let mut items = Vec::new();
/// for_each_element(br#"[1, {"b":[2]} ,"c"]"#, |item| items.push(item));
/// assert_eq!(items, [&b"1"[..], br#"{"b":[2]}"#, br#""c""#]);
/// assert_eq!(for_each_element(b"[]", |_| {}), Some(()));
/// assert_eq!(for_each_element(b"{}", |_| {}), None);
/// ```
pub fn for_each_element<'a>(array: &'a [u8], mut each: impl FnMut(&'a [u8])) -> Option<()> {
    let mut at = skip_whitespace(array, 0);
    if array.get(at) != Some(&b'[') {
        return None;
    }
    at = skip_whitespace(array, at + 1);
    if array.get(at) == Some(&b']') {
        return (skip_whitespace(array, at + 1) == array.len()).then_some(());
    }
    loop {
        let start = at;
        at = skip_value(array, at)?;
        each(&array[start..at]);
        at = skip_whitespace(array, at);
        match array.get(at) {
            Some(b',') => at = skip_whitespace(array, at + 1),
            Some(b']') => return (skip_whitespace(array, at + 1) == array.len()).then_some(()),
            _ => return None,
        }
    }
}

/// The offset of the first byte from `at` that is not JSON whitespace (serde_json's four
/// bytes): the one rule of the crate's readers.
#[inline]
pub(crate) fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The offset past `literal` when `bytes` hold it at `at`.
#[inline]
pub(crate) fn past_literal(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    let end = at.checked_add(literal.len())?;
    (bytes.get(at..end)? == literal).then_some(end)
}

/// Past the string that starts (with its quote) at `at`: one search for quotes, a quote after
/// an odd run of backslashes (escaped) passed over. Text's many `\n` escapes do not stop the
/// search (measured: half the time of a search that stops at every backslash, on the 50 MB
/// session's strings and on the chain's).
#[inline]
pub(crate) fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    skip_string_from(bytes, at, at + 1)
}

/// A string known to be `JSON.stringify`'s spelling ([`Strings::Stringified`]), opened at
/// `open` and searched on from `at` (as [`skip_string_from`]): its text between the quotes,
/// where it ends (past its closing quote, found by a search for quotes) and whether it holds
/// an escape (told by a search for a backslash). The one reading of such a string: the
/// canonical walk steps over it so, `value_read`'s listing reader copies its spelling so.
#[inline]
pub(crate) fn known_string(bytes: &[u8], open: usize, at: usize) -> Option<(&[u8], usize, bool)> {
    let end = skip_string_from(bytes, open, at)?;
    let text = bytes.get(open + 1..end - 1)?;
    Some((text, end, memchr::memchr(b'\\', text).is_some()))
}

/// [`skip_string`] of the string opened at `open`, searched on from `at` (inside it, not inside
/// an escape: the bytes between are known to hold no quote).
#[inline]
pub(crate) fn skip_string_from(bytes: &[u8], open: usize, mut at: usize) -> Option<usize> {
    loop {
        let quote = next_quote(bytes, at)?;
        at = quote + 1;
        let text = bytes.get(open + 1..quote)?;
        if text.last() != Some(&b'\\') {
            return Some(at);
        }
        let backslashes = text.iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(at);
        }
    }
}

/// The first quote of `bytes` from `at`: the next 16 bytes looked at first
/// ([`envelope_scan::quotes`](crate::envelope_scan::quotes)), where most strings end, then a
/// search of the rest.
#[inline(always)]
fn next_quote(bytes: &[u8], at: usize) -> Option<usize> {
    if let Some(chunk) = bytes.get(at..at + 16).and_then(|rest| rest.first_chunk()) {
        let quotes = crate::envelope_scan::quotes(chunk);
        if quotes != 0 {
            return Some(at + quotes.trailing_zeros() as usize);
        }
        return Some(at + 16 + memchr::memchr(b'"', bytes.get(at + 16..)?)?);
    }
    Some(at + memchr::memchr(b'"', bytes.get(at..)?)?)
}

/// Past the value that starts at `at` (strings and nesting followed, nothing checked).
pub(crate) fn skip_value(bytes: &[u8], mut at: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *bytes.get(at)? {
            b'"' => at = skip_string(bytes, at)?,
            b'{' | b'[' => {
                depth += 1;
                at += 1;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                at += 1;
            }
            _ if depth == 0 => {
                // A scalar: up to the next delimiter.
                while !matches!(
                    bytes.get(at),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    at += 1;
                }
                return Some(at);
            }
            _ => at += 1,
        }
        if depth == 0 {
            return Some(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shape serde hands a serializer, and the ones the walk leaves to serde_json (bytes,
    /// keys that are not strings, an error raised midway), print as serde_json prints them.
    #[test]
    fn the_walk_writes_every_serde_shape_as_serde_json_does() {
        use std::collections::BTreeMap;
        #[derive(Serialize)]
        struct Unit;
        #[derive(Serialize)]
        struct Newtype(String);
        #[derive(Serialize)]
        struct Pair(i8, f32);
        #[derive(Serialize)]
        enum Kind {
            Plain,
            Wrapped(u16),
            Tuple(i64, Option<bool>),
            Record { a: char, b: Vec<u8> },
            EmptyTuple(),
            EmptyRecord {},
        }
        #[derive(Serialize)]
        #[serde(tag = "type", rename_all = "camelCase")]
        enum Tagged {
            One { x: u128 },
            Two(BTreeMap<String, i128>),
        }
        #[derive(Serialize)]
        struct All<'a> {
            unit: Unit,
            unit_value: (),
            newtype: Newtype,
            pair: Pair,
            tuple: (u8, &'a str, char),
            empty_tuple: (),
            kinds: Vec<Kind>,
            tagged: Vec<Tagged>,
            none: Option<u32>,
            some: Option<&'a str>,
            floats: [f64; 6],
            float32: [f32; 3],
            nested: Vec<Vec<BTreeMap<String, Vec<()>>>>,
            char_keys: BTreeMap<char, u8>,
            text: String,
        }
        let mut strings = BTreeMap::new();
        strings.insert("1".to_owned(), -5i128);
        strings.insert("a\"\n".to_owned(), i128::MAX);
        let mut nested = BTreeMap::new();
        nested.insert("k".to_owned(), vec![(), ()]);
        nested.insert("e".to_owned(), Vec::new());
        let all = All {
            unit: Unit,
            unit_value: (),
            newtype: Newtype("n\u{1}\u{10f800}".into()),
            pair: Pair(-3, 1.5),
            tuple: (7, "t\t", '"'),
            empty_tuple: (),
            kinds: vec![
                Kind::Plain,
                Kind::Wrapped(9),
                Kind::Tuple(-1, None),
                Kind::Record { a: 'é', b: vec![] },
                Kind::EmptyTuple(),
                Kind::EmptyRecord {},
            ],
            tagged: vec![Tagged::One { x: u128::MAX }, Tagged::Two(strings)],
            none: None,
            some: Some("\u{10f801}x"),
            floats: [0.1, -0.0, 1e21, 1e-7, f64::NAN, f64::INFINITY],
            float32: [0.1, f32::NAN, -2.5],
            nested: vec![vec![nested, BTreeMap::new()], vec![]],
            char_keys: [('z', 1), ('2', 2)].into_iter().collect(),
            text: "x".repeat(50) + "\"\\\u{7f}\u{2028}",
        };
        assert_eq!(
            to_js_vec(&all).unwrap(),
            to_js_vec_through_serde_json(&all).unwrap()
        );
        // Left to serde_json: bytes, integer and boolean keys.
        let bytes = serde_bytes_like(b"ab");
        assert_eq!(to_js_vec(&bytes).unwrap(), b"[97,98]");
        let numbered: BTreeMap<u32, &str> = [(10, "a"), (2, "b")].into_iter().collect();
        assert_eq!(to_js_vec(&numbered).unwrap(), br#"{"2":"b","10":"a"}"#);
        let flags: BTreeMap<bool, u8> = [(true, 1)].into_iter().collect();
        assert_eq!(
            to_js_vec(&flags).unwrap(),
            to_js_vec_through_serde_json(&flags).unwrap()
        );
        // An error raised midway is serde_json's.
        struct Fails;
        impl Serialize for Fails {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("no"))
            }
        }
        let failing = (1, Fails);
        assert_eq!(
            to_js_vec(&failing).unwrap_err().to_string(),
            to_js_vec_through_serde_json(&failing)
                .unwrap_err()
                .to_string()
        );
    }

    /// A value serialized as bytes (`serialize_bytes`).
    fn serde_bytes_like(bytes: &'static [u8]) -> impl Serialize {
        struct Bytes(&'static [u8]);
        impl Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        Bytes(bytes)
    }

    #[test]
    fn the_value_walk_escapes_every_byte_at_every_place_of_a_word() {
        // Each byte JSON.stringify escapes (and neighbours that it does not), at every offset
        // of strings long enough to span several eight-byte words, beside multi-byte
        // characters and carried lone surrogates.
        let specials = [
            "\"",
            "\\",
            "\u{0}",
            "\u{1f}",
            "\n",
            "\t",
            "\u{8}",
            "\u{c}",
            "\r",
            " ",
            "!",
            "#",
            "[",
            "]",
            "\u{7f}",
            "é",
            "\u{10F83D}",
            "😀",
        ];
        for len in 0..40 {
            for at in 0..=len {
                for special in specials {
                    let mut text = "x".repeat(at);
                    text.push_str(special);
                    text.push_str(&"y".repeat(len - at));
                    let value = serde_json::Value::String(text.clone());
                    assert_eq!(
                        value_to_js_vec(&value),
                        to_js_vec(&value).unwrap(),
                        "{text:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_next_quote_is_the_first_at_any_distance() {
        // Every place of a quote from 0 to 47 bytes on, from every start, among plain bytes
        // and backslashes: the chunk's mask and the search past it agree with a byte walk.
        for fill in [b'a', b'\\', 0xe2] {
            for len in 0..48 {
                for quote in 0..=len {
                    let mut bytes = vec![fill; len];
                    if quote < len {
                        bytes[quote] = b'"';
                    }
                    for at in 0..=len {
                        let expected = bytes[at..].iter().position(|&b| b == b'"').map(|n| at + n);
                        assert_eq!(
                            super::next_quote(&bytes, at),
                            expected,
                            "{len} {quote} {at}"
                        );
                    }
                }
            }
        }
        assert_eq!(
            super::string_len(br#""0123456789abcdef\"ghijklmnopq" "#),
            Some(31)
        );
        assert_eq!(super::string_len(br#""0123456789abc\\"x"#), Some(17));
    }

    /// [`is_plain_short`] against its definition: every length up to past [`SHORT`], each
    /// kind of byte at each place (ASCII that stays, the three that are escaped, a control
    /// character, DEL, bytes that are not ASCII).
    #[test]
    fn short_plain_texts_are_told_exactly() {
        let plain = |bytes: &[u8]| {
            bytes.len() <= SHORT
                && bytes
                    .iter()
                    .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\')
        };
        for len in 0..=SHORT + 8 {
            for at in 0..len.max(1) {
                for byte in [
                    b'a', b' ', b'~', 0x7f, b'"', b'\\', 0, 0x1f, 0x80, 0xc3, 0xff,
                ] {
                    let mut text = vec![b'k'; len];
                    if let Some(slot) = text.get_mut(at) {
                        *slot = byte;
                    }
                    assert_eq!(is_plain_short(&text), plain(&text), "{len} {at} {byte:#x}");
                }
            }
        }
    }

    #[test]
    fn array_index_rules() {
        assert_eq!(array_index(b"0"), Some(0));
        assert_eq!(array_index(b"42"), Some(42));
        assert_eq!(array_index(b"01"), None);
        assert_eq!(array_index(b"4294967294"), Some(4_294_967_294));
        assert_eq!(array_index(b"4294967295"), None);
        assert_eq!(array_index(b"-1"), None);
        assert_eq!(array_index(b""), None);
    }

    #[test]
    fn carried_lone_surrogates_are_written_as_escapes() {
        let value = serde_json::json!({"k\u{10FC00}": "a\u{10F83D}b😀\u{10FFFF}"});
        assert_eq!(
            to_js_string(&value).unwrap(),
            r#"{"k\udc00":"a\ud83db😀\udfff"}"#
        );
    }

    /// A carrier at every place of a text up to three 16-byte chunks long (in a chunk or in
    /// the bytes after them, beside an escape or another character that is not ASCII) is
    /// written as its escape by the writer that scans chunks, as by serde_json's way.
    #[test]
    fn a_carrier_anywhere_in_a_long_text_is_written_as_its_escape() {
        for len in [15, 16, 17, 31, 33, 47, 48, 50] {
            for at in 0..len {
                for other in ["x", "\n", "é"] {
                    let mut text: String = "abcdefghij\"klmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN"
                        .chars()
                        .take(len)
                        .collect();
                    text.replace_range(at..=at, "\u{10F83D}");
                    text.push_str(other);
                    let mut expected = serde_json::to_string(&text).unwrap();
                    expected = expected.replace('\u{10F83D}', "\\ud83d");
                    let value = serde_json::Value::String(text.clone());
                    assert_eq!(value_to_js_vec(&value), expected.as_bytes(), "{text:?}");
                    assert_eq!(to_js_vec(&value).unwrap(), expected.as_bytes(), "{text:?}");
                    assert_eq!(
                        to_js_vec_through_serde_json(&value).unwrap(),
                        expected.as_bytes(),
                        "{text:?}"
                    );
                }
            }
        }
    }
}
