//! The fields a body object declares, read from its derived `Deserialize`: the one list that
//! the binding's state keys are built from, and that the fast reader and the state writer are
//! checked against (`quick::tests` and the tests here), so that a field added to a struct and
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
    #![allow(clippy::unwrap_used)]

    use super::of;
    use crate::wire::input::{Body, Obj, Pairs, State};
    use crate::wire::json::Json;
    use crate::wire::output::write_state;

    #[test]
    fn lists_a_structs_fields_in_order() {
        let state = of::<State>();
        assert_eq!(state.first(), Some(&"prev_tokens"));
        assert_eq!(state.last(), Some(&"parser"));
        assert_eq!(state.len(), 14);
        assert!(of::<Body<'_>>().contains(&"chat_request"));
        assert!(of::<u32>().is_empty());
    }

    /// The writer writes every field the state declares, in the declared order, and serde reads
    /// back what it wrote.
    #[test]
    fn the_state_is_written_as_declared() {
        let state = State {
            prev_tokens: vec!["a\"".into(), "b".into()],
            prefix_offset: 1,
            read_offset: 2,
            role_sent: true,
            logprob_context_token_ids: vec![3],
            logprob_text_offset: 4,
            output_token_ids: vec![5, 6],
            output_chunk_lens: vec![2],
            tools_streamed: true,
            last_tool_call_ids: vec!["call_1".into()],
            held_text: "<".into(),
            generated_tokens: 7,
            stopped: true,
            parser: Some(Obj(crate::parse::ParseState::default())),
        };
        let mut j = Json::with_capacity(256);
        write_state(&mut j, &state);
        let text = String::from_utf8(j.into_bytes()).unwrap();
        let pairs: Pairs<serde::de::IgnoredAny> = serde_json::from_str(&text).unwrap();
        let keys: Vec<String> = pairs.0.into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, of::<State>(), "{text}");
        let back: State = serde_json::from_str(&text).unwrap();
        assert_eq!(format!("{back:?}"), format!("{state:?}"));
    }
}
