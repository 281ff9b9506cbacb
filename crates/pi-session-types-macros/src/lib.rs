//! `#[record]`: the serde rule every record of `pi-session-types` follows, written once.
//!
//! A session file's objects carry many optional keys, and the typed model must write back exactly
//! what it read: a key that was absent stays absent, a key that was present keeps its value. That
//! rule takes three serde attributes per field, and the model has some two hundred fields. This
//! attribute adds them, so a record reads as the table of its keys:
//!
//! - a field of type `Option<T>` gets
//!   `#[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "crate::field::present")]`:
//!   absent when `None`, and a present key must hold a `T` (a `null` where the format never
//!   writes one is a type error, so the line falls back to its untyped form instead of losing the
//!   key);
//! - a field of type `Field<T>` (absent, `null` or set) gets
//!   `#[serde(default, skip_serializing_if = "Field::is_absent")]`.
//!
//! A field that already says how it is (de)serialised (`default`, `skip_serializing_if`,
//! `deserialize_with`, `with`, `flatten` or `skip` in a `#[serde(...)]` of its own) is left as it
//! is; a `rename` alone does not count. Key names come from the record's own
//! `#[serde(rename_all = "camelCase")]` and `rename`s. The attribute must come before the
//! `#[derive]`s, so serde (and schemars) see the added attributes.
//!
//! It is used only inside `pi-session-types` (the paths it writes start with `crate::`).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use proc_macro::TokenStream;
use quote::quote;
use syn::{Attribute, Data, DeriveInput, Fields, Type, parse_macro_input};

/// Gives every `Option<T>` and `Field<T>` field of a struct with named fields the serde rule of
/// the session model (see the crate docs).
#[proc_macro_attribute]
pub fn record(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[record] takes no arguments",
        )
        .to_compile_error()
        .into();
    }
    let mut input = parse_macro_input!(item as DeriveInput);
    let Data::Struct(data) = &mut input.data else {
        return syn::Error::new_spanned(&input.ident, "#[record] is for structs")
            .to_compile_error()
            .into();
    };
    let Fields::Named(fields) = &mut data.fields else {
        return syn::Error::new_spanned(&input.ident, "#[record] is for structs with named fields")
            .to_compile_error()
            .into();
    };
    for field in &mut fields.named {
        if says_how(&field.attrs) {
            continue;
        }
        let rule: Option<Attribute> = match outer_type(&field.ty).as_deref() {
            Some("Option") => Some(syn::parse_quote! {
                #[serde(
                    default,
                    skip_serializing_if = "Option::is_none",
                    deserialize_with = "crate::field::present"
                )]
            }),
            Some("Field") => Some(syn::parse_quote! {
                #[serde(default, skip_serializing_if = "Field::is_absent")]
            }),
            _ => None,
        };
        field.attrs.extend(rule);
    }
    quote!(#input).into()
}

/// The last path segment of `ty` (`Option` for `Option<String>`, `Field` for `crate::Field<T>`).
fn outer_type(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            path.path.segments.last().map(|s| s.ident.to_string())
        }
        _ => None,
    }
}

/// Whether the field's own `#[serde(...)]` already decides how it is read or written.
fn says_how(attrs: &[Attribute]) -> bool {
    const DECIDING: [&str; 6] = [
        "default",
        "skip_serializing_if",
        "deserialize_with",
        "with",
        "flatten",
        "skip",
    ];
    let mut decided = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        // A malformed serde attribute is serde's to report; parse what can be parsed.
        let _ = attr.parse_nested_meta(|meta| {
            if DECIDING.iter().any(|key| meta.path.is_ident(key)) {
                decided = true;
            }
            // Skip the value (`= "..."`) or the nested list, whatever it is.
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _content;
                syn::parenthesized!(_content in meta.input);
            }
            Ok(())
        });
    }
    decided
}
