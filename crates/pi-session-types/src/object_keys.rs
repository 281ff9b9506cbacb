//! `object_keys!`: the keys a borrowed reader keeps of a JSON object, as an enum serde reads
//! straight from the key's text (every other key is `Other`, its value skipped by the caller).

/// Declares `enum $name { $variant, …, Other }` and its `Deserialize`, matching each key's text.
macro_rules! object_keys {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $key:expr),+ $(,)? }) => {
        $(#[$doc])*
        enum $name {
            $($variant,)+
            Other,
        }

        impl<'de> serde::de::Deserialize<'de> for $name {
            fn deserialize<D: serde::de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct KeyVisitor;
                impl serde::de::Visitor<'_> for KeyVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("an object key")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $(if v == $key {
                            return Ok($name::$variant);
                        })+
                        Ok($name::Other)
                    }
                }
                d.deserialize_identifier(KeyVisitor)
            }
        }
    };
}
