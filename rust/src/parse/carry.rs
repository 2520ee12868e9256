//! How parser states are carried: every field bounded, and objects whose keys are shared by two
//! states read and written key by key. The hermes state and the JSON call scanner are one
//! object on the wire (hermes's keys beside the scanner's, as before they shared a scanner);
//! serde's `flatten` would read that through a buffer of every key, and cost a parsed stream
//! chunk 5-14% more instructions; so each writes its own keys and reads the keys it knows.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

/// A carried state's bound: a field of `len` bytes where at most `max` are carried is refused
/// (a hostile state would otherwise cost every later token a scan of it).
pub(crate) fn carried(what: &str, len: usize, max: usize) -> Result<(), String> {
    if len > max {
        return Err(format!(
            "its {what} is {len} bytes, at most {max} are carried"
        ));
    }
    Ok(())
}

/// A carried object read key by key; each key is one char.
pub(crate) trait Fields: Default {
    /// Reads the value of `key`, or (`false`) leaves it: not a key of this object.
    fn field<'de, A: MapAccess<'de>>(&mut self, key: char, map: &mut A) -> Result<bool, A::Error>;
}

/// Reads a [`Fields`] object: a key it does not know (or of more than one char) is skipped, a
/// key left out keeps its default, and a repeated key's last value counts.
pub(crate) fn read<'de, D: Deserializer<'de>, T: Fields>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(Object(PhantomData))
}

struct Object<T>(PhantomData<T>);

impl<'de, T: Fields> Visitor<'de> for Object<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a parser state object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut out = T::default();
        while let Some(Key(key)) = map.next_key()? {
            let known = match key {
                Some(k) => out.field(k, &mut map)?,
                None => false,
            };
            if !known {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

/// A key: its char when it is one char long.
struct Key(Option<char>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct K;
        impl Visitor<'_> for K {
            type Value = Key;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }

            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                let mut chars = v.chars();
                Ok(Key(match (chars.next(), chars.next()) {
                    (Some(c), None) => Some(c),
                    _ => None,
                }))
            }
        }
        d.deserialize_str(K)
    }
}
