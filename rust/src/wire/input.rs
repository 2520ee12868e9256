//! The derender request bodies, as far as derender reads them.
//!
//! One struct takes every shape (whole or stream, chat or completion), so a body is parsed once;
//! which fields are required is checked after parsing, by shape. Fields derender does not read
//! (`messages`, `tools`, multimodal data, metrics) are skipped unparsed, and the ones it only
//! passes through (`kv_transfer_params`, usage details) stay raw JSON borrowed from the body.
//!
//! Also here: fields parsed by shape after the body ([`raw_as`]). A body is read by
//! [`super::read`].

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::error::{Res, WireError, json_words};

/// Parses a raw field as `T` (null gives `None`).
pub(crate) fn raw_as<'a, T: Deserialize<'a>>(
    raw: Option<&'a RawValue>,
    name: &str,
) -> Res<Option<T>> {
    match raw {
        None => Ok(None),
        Some(r) => serde_json::from_str::<Option<T>>(r.get())
            .map_err(|e| WireError::bad_param(format!("invalid {name}: {}", json_words(&e)), name)),
    }
}

/// Keeps the chat request's JSON text in a body serde read (it reads the request's fields;
/// the text takes a second, shallow read, where the hand reader takes both in one).
pub(crate) fn take_request_text<'a>(out: &mut Body<'a>, body: &'a [u8]) {
    if let Some(request) = out.chat_request.as_mut() {
        request.raw = chat_request_text(body);
    }
}

/// The original chat request's JSON text.
fn chat_request_text(body: &[u8]) -> Option<&str> {
    #[derive(Deserialize)]
    struct Only<'a> {
        #[serde(default, borrow)]
        chat_request: Option<&'a RawValue>,
    }
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let only: Only<'_> = serde_json::from_slice(body).ok()?;
    only.chat_request.map(RawValue::get)
}

/// A derender body of any shape.
#[derive(Deserialize, Default, Debug)]
#[serde(expecting = "a derender request object")]
pub(crate) struct Body<'a> {
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default, borrow)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub generate_response: Option<Obj<Generate<'a>>>,
    #[serde(default, borrow)]
    pub generate_responses: Option<Vec<Obj<Generate<'a>>>>,
    #[serde(default, borrow)]
    pub generate_chunk: Option<Obj<Generate<'a>>>,
    #[serde(default)]
    pub stream_state: Option<Obj<State>>,
    /// An int (chat, streams) or a list of ints (whole completions): parsed by shape.
    #[serde(default, borrow)]
    pub prompt_tokens: Option<&'a RawValue>,
    /// A list of ids, or (whole completions) a list of lists or nulls: parsed by shape.
    #[serde(default, borrow)]
    pub prompt_token_ids: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub chat_request: Option<Obj<Request<'a>>>,
    #[serde(default, borrow)]
    pub completion_request: Option<Obj<Request<'a>>>,
}

/// A generate response or stream chunk (the chunk is the response minus a few fields).
#[derive(Deserialize, Debug)]
#[serde(expecting = "a generate response object")]
pub(crate) struct Generate<'a> {
    #[serde(default, borrow)]
    pub request_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub choices: Vec<Obj<Choice<'a>>>,
    #[serde(default, borrow)]
    pub usage: Option<Obj<Usage<'a>>>,
    #[serde(default)]
    pub prompt_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub prompt_logprobs: Option<Vec<Option<Pairs<Obj<PromptLogprob>>>>>,
    #[serde(default, borrow)]
    pub kv_transfer_params: Option<&'a RawValue>,
    /// Only `"tokens"` (the default) can be derendered: the other modes are detokenized already.
    #[serde(default, borrow)]
    pub output_mode: Option<Cow<'a, str>>,
    #[serde(default)]
    pub metrics: Option<Obj<Metrics>>,
}

/// vLLM's `PerRequestMetrics`, passed through with every field it declares.
#[derive(Deserialize, Debug)]
#[serde(expecting = "a metrics object")]
pub(crate) struct Metrics {
    #[serde(default)]
    pub time_to_first_token_ms: Option<f64>,
    #[serde(default)]
    pub generation_time_ms: Option<f64>,
    #[serde(default)]
    pub queue_time_ms: Option<f64>,
    #[serde(default)]
    pub mean_itl_ms: Option<f64>,
    #[serde(default)]
    pub tokens_per_second: Option<f64>,
    #[serde(default)]
    pub speculative_decoding: Option<Obj<SpecMetrics>>,
}

/// vLLM's `SpeculativeDecodingMetrics`.
#[derive(Deserialize, Debug)]
#[serde(expecting = "a speculative_decoding object")]
pub(crate) struct SpecMetrics {
    pub mean_acceptance_length: f64,
    pub draft_acceptance_rate: f64,
    pub acceptance_histogram: Vec<u64>,
    pub num_spec_steps: u64,
    pub num_accepted_draft_tokens: u64,
    pub num_draft_tokens: u64,
    pub num_spec_tokens: u64,
    #[serde(default)]
    pub per_step_accepted: Option<Vec<u64>>,
    #[serde(default)]
    pub per_step_drafted: Option<Vec<u64>>,
}

/// One generate choice.
#[derive(Deserialize, Debug)]
#[serde(expecting = "a choice object")]
pub(crate) struct Choice<'a> {
    pub index: u32,
    #[serde(default, borrow)]
    pub logprobs: Option<Obj<Logprobs<'a>>>,
    /// Absent and null differ: a whole response's choice defaults to `"stop"`.
    #[serde(default, borrow, deserialize_with = "present")]
    pub finish_reason: Option<Option<Cow<'a, str>>>,
    #[serde(default, borrow)]
    pub stop_reason: Option<StopReason<'a>>,
    #[serde(default)]
    pub token_ids: Option<Vec<u32>>,
}

/// `stop_reason`: the stop token id or the stop string that ended a choice.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StopReason<'a> {
    Id(u64),
    Text(Cow<'a, str>),
}

impl<'de: 'a, 'a> Deserialize<'de> for StopReason<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StopReason<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a token id or a string")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(StopReason::Id(v))
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(StopReason::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(StopReason::Text(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_any(V)
    }
}

/// Token counts from the generate side.
#[derive(Deserialize, Debug)]
#[serde(expecting = "a usage object")]
pub(crate) struct Usage<'a> {
    #[serde(default)]
    pub prompt_tokens: Option<i64>,
    #[serde(default)]
    pub completion_tokens: Option<i64>,
    #[serde(default, borrow)]
    pub prompt_tokens_details: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub completion_tokens_details: Option<&'a RawValue>,
}

/// A choice's logprobs, in either shape: by id or the chat shape with placeholders.
#[derive(Deserialize, Debug)]
#[serde(expecting = "a logprobs object")]
pub(crate) struct Logprobs<'a> {
    #[serde(default, borrow)]
    pub content: Option<Vec<Obj<LogprobEntry<'a>>>>,
}

/// One position: the sampled token and its alternatives.
#[derive(Deserialize, Debug)]
#[serde(expecting = "a logprob entry object")]
pub(crate) struct LogprobEntry<'a> {
    #[serde(default)]
    pub token_id: Option<u32>,
    #[serde(default, borrow)]
    pub token: Option<Cow<'a, str>>,
    #[serde(default)]
    pub logprob: Option<f64>,
    #[serde(default)]
    pub bytes: Option<Vec<u8>>,
    #[serde(default, borrow)]
    pub top_logprobs: Option<Vec<Obj<LogprobToken<'a>>>>,
}

/// A token of a logprob entry: `token_id` (by id) or `token` (chat shape: `"token_id:N"` or text).
#[derive(Deserialize, Debug, Default)]
#[serde(expecting = "a logprob object")]
pub(crate) struct LogprobToken<'a> {
    #[serde(default)]
    pub token_id: Option<u32>,
    #[serde(default, borrow)]
    pub token: Option<Cow<'a, str>>,
    #[serde(default)]
    pub logprob: Option<f64>,
    #[serde(default)]
    pub bytes: Option<Vec<u8>>,
}

/// One entry of a `prompt_logprobs` position.
#[derive(Deserialize, Debug)]
#[serde(expecting = "a prompt logprob object")]
pub(crate) struct PromptLogprob {
    pub logprob: f64,
    #[serde(default)]
    pub rank: Option<i64>,
    #[serde(default)]
    pub decoded_token: Option<String>,
}

/// A JSON object kept as key-value pairs in the order they came.
#[derive(Debug)]
pub(crate) struct Pairs<T>(pub Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Pairs<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Pairs<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut pairs = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, T>()? {
                    pairs.push((k, v));
                }
                Ok(Pairs(pairs))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// The fields of the original chat or completion request that derender reads.
#[derive(Deserialize, Default, Debug)]
#[serde(expecting = "a request object")]
pub(crate) struct Request<'a> {
    #[serde(default, borrow)]
    pub stop: Option<Stop<'a>>,
    #[serde(default)]
    pub stop_token_ids: Option<Vec<u32>>,
    #[serde(default)]
    pub ignore_eos: Option<bool>,
    #[serde(default)]
    pub min_tokens: Option<u64>,
    #[serde(default)]
    pub include_stop_str_in_output: Option<bool>,
    #[serde(default)]
    pub skip_special_tokens: Option<bool>,
    #[serde(default)]
    pub return_token_ids: Option<bool>,
    /// `true`/`false` (chat) or the number of alternatives (completions).
    #[serde(default)]
    pub logprobs: Option<BoolOrCount>,
    #[serde(default)]
    pub top_logprobs: Option<i64>,
    /// Ids whose logprobs are asked for: every candidate is then kept. Only whether there are
    /// any matters.
    #[serde(default)]
    pub logprob_token_ids: Option<Vec<serde::de::IgnoredAny>>,
    /// Only how many there are matters.
    #[serde(default)]
    pub tools: Option<Vec<serde::de::IgnoredAny>>,
    /// `"none"`, `"auto"`, `"required"`, or an object naming a function.
    #[serde(default, borrow)]
    pub tool_choice: Option<&'a RawValue>,
    #[serde(default)]
    pub parallel_tool_calls: Option<bool>,
    #[serde(default)]
    pub include_reasoning: Option<bool>,
    /// Read for the thinking switches only (`enable_thinking`, `thinking`: where the Qwen3 and
    /// DeepSeek-V3 reasoning parsers start).
    #[serde(default, borrow)]
    pub chat_template_kwargs: Option<&'a RawValue>,
    /// `"none"` turns thinking off when `chat_template_kwargs` does not say.
    #[serde(default, borrow)]
    pub reasoning_effort: Option<&'a RawValue>,
    /// The request's own JSON text, for parsers that read more of it (tool schemas, user
    /// parsers): taken in the body's one read.
    #[serde(skip)]
    pub raw: Option<&'a str>,
}

/// `stop`: one string or a list of them.
#[derive(Debug)]
pub(crate) struct Stop<'a>(pub Vec<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Stop<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Stop<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Stop(vec![Cow::Borrowed(v)]))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Stop(vec![Cow::Owned(v.to_owned())]))
            }
            fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let mut stops = Vec::new();
                while let Some(s) = seq.next_element::<Cow<'de, str>>()? {
                    stops.push(s);
                }
                Ok(Stop(stops))
            }
        }
        d.deserialize_any(V)
    }
}

/// A chat request's `logprobs` flag or a completion request's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoolOrCount {
    Flag(bool),
    Count(i64),
}

impl<'de> Deserialize<'de> for BoolOrCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = BoolOrCount;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a boolean or an integer")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(BoolOrCount::Flag(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(BoolOrCount::Count(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(BoolOrCount::Count(i64::try_from(v).unwrap_or(i64::MAX)))
            }
        }
        d.deserialize_any(V)
    }
}

/// How many of [`State`]'s fields, from the first, are vLLM's.
pub(crate) const VLLM_STATE_FIELDS: usize = 10;

/// The client-carried stream state: vLLM's fields (the first [`VLLM_STATE_FIELDS`]), then
/// tokstream's extensions. The order here is the order the wire writes them.
#[derive(Deserialize, Default, Debug)]
#[serde(default)]
#[serde(expecting = "a stream_state object")]
pub(crate) struct State {
    pub prev_tokens: Vec<String>,
    pub prefix_offset: u64,
    pub read_offset: u64,
    pub role_sent: bool,
    pub logprob_context_token_ids: Vec<u32>,
    pub logprob_text_offset: u64,
    pub output_token_ids: Vec<u32>,
    pub output_chunk_lens: Vec<u64>,
    pub tools_streamed: bool,
    pub last_tool_call_ids: Vec<String>,
    /// Text held back because it could begin a stop string.
    pub held_text: String,
    /// Output ids seen so far (for `min_tokens`).
    pub generated_tokens: u64,
    /// A stop string matched: the stream has ended.
    pub stopped: bool,
    /// The reasoning and tool parsers' state (resumable parsing).
    pub parser: Option<Obj<crate::parse::ParseState>>,
}

/// A struct that must come as a JSON object (serde alone also reads a struct from an array of
/// its field values, which no client means). Dereferences to the struct.
#[derive(Debug)]
pub(crate) struct Obj<T>(pub T);

impl<T> std::ops::Deref for Obj<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Obj<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData)).map(Obj)
    }
}

/// `Some(value)` for a present field, null included (`Some(None)`); absent stays `None`.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}
