//! How parser states are carried: every field bounded, and objects whose keys are shared by two
//! states read and written key by key. The hermes state and the JSON call scanner are one
//! object on the wire (hermes's keys beside the scanner's, as before they shared a scanner);
//! serde's `flatten` would read that through a buffer of every key, and cost a parsed stream
//! chunk 5-14% more instructions; so each writes its own keys and reads the keys it knows.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{Error as _, Serialize, Serializer};

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

/// Texts at least this long are written by [`text`]'s own escaping.
const LONG_TEXT: usize = 64;

/// Writes a carried text that may be long (a held call's, up to a MiB, written every chunk):
/// escaped by [`crate::escape::write_str`], eight bytes a step, and handed to the serializer as
/// JSON already written, where serde_json's own escaping goes a byte at a time (it was 40% of a
/// chunk's time with 21 KB held). Short texts go to the serializer as they are.
pub(crate) fn text<S: Serializer>(s: &str, ser: S) -> Result<S::Ok, S::Error> {
    if s.len() < LONG_TEXT {
        return ser.serialize_str(s);
    }
    let mut json = String::with_capacity(s.len() + 2);
    crate::escape::write_str(&mut json, s);
    serde_json::value::RawValue::from_string(json)
        .map_err(S::Error::custom)?
        .serialize(ser)
}

/// Reads a carried text that the chunk goes on to lengthen, with room for a chunk's text:
/// serde's own `String` is exactly as long as its text, so the first push copied it again.
pub(crate) fn text_in<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    d.deserialize_string(Roomy)
}

struct Roomy;

impl Visitor<'_> for Roomy {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E>(self, v: &str) -> Result<String, E> {
        let mut s = String::with_capacity(v.len() + 1024);
        s.push_str(v);
        Ok(s)
    }

    fn visit_string<E>(self, v: String) -> Result<String, E> {
        Ok(v)
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Carried {
        #[serde(serialize_with = "super::text", deserialize_with = "super::text_in")]
        t: String,
        n: u32,
    }

    #[derive(Serialize)]
    struct Plain<'a> {
        t: &'a str,
        n: u32,
    }

    #[test]
    fn long_and_short_texts_are_written_as_serde_writes_them_and_read_back() {
        for t in ["", "short \"q\"", &"a long\ttext \\ é 😀 \u{1}".repeat(40)] {
            let carried = Carried {
                t: t.to_owned(),
                n: 7,
            };
            let json = serde_json::to_string(&carried).unwrap();
            assert_eq!(json, serde_json::to_string(&Plain { t, n: 7 }).unwrap());
            let back: Carried = serde_json::from_str(&json).unwrap();
            assert_eq!(back, carried);
            assert!(back.t.capacity() >= t.len() + 1024);
        }
    }
}
