//! The fields a body object declares, read from its derived `Deserialize`: the one list that
//! the binding's state keys are built from, and that the fast reader and the state writer are
//! checked against (`quick::tests`, `output::tests`), so that a field added to a struct and
//! forgotten elsewhere fails a test rather than reading as absent.

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// `T`'s field names, in the order the struct declares them (empty if `T` is not a struct).
///
/// serde's derive hands them to [`Deserializer::deserialize_struct`]; a deserializer that only
/// records them and then refuses gives them without any input.
pub(crate) fn of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields = None;
    // The recorder always refuses, after keeping the list.
    let _ = T::deserialize(Recorder(&mut fields));
    fields.unwrap_or(&[])
}

struct Recorder<'r>(&'r mut Option<&'static [&'static str]>);

impl<'de> Deserializer<'de> for Recorder<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = Some(fields);
        Err(de::Error::custom("only the fields are read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::of;
    use crate::wire::input::{Body, State};

    #[test]
    fn lists_a_structs_fields_in_order() {
        let state = of::<State>();
        assert_eq!(state.first(), Some(&"prev_tokens"));
        assert_eq!(state.last(), Some(&"parser"));
        assert_eq!(state.len(), 14);
        assert!(of::<Body<'_>>().contains(&"chat_request"));
        assert!(of::<u32>().is_empty());
    }
}
