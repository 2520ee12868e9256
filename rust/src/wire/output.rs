//! The answers' JSON: stream chunks and whole responses, written field by field over [`Json`]
//! in the order vLLM's models declare them, every declared field present (nulls included).

use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::value::RawValue;

use super::choice::Out;
use super::input::{Generate, Obj, Pairs, PromptLogprob, State, StopReason};
use super::json::{Json, LOGPROB_FLOOR};
use super::logprobs::{Lp, clamp};
use crate::detokenizer::Detokenizer;
use crate::parse::{Delta, tool_call_id};

/// A 200 answer and what it did.
pub(crate) struct Answer {
    pub body: Vec<u8>,
    /// Output token ids derendered.
    pub tokens: u64,
    /// Bytes of the returned `stream_state` (0 for whole responses).
    pub state_bytes: u64,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn random_id() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut s = String::with_capacity(32);
    for _ in 0..2 {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(now());
        s.push_str(&format!("{:016x}", h.finish()));
    }
    s
}

/// The generate request id, or a fresh one.
pub(crate) fn request_id_of<'r>(resp: &'r Generate<'_>) -> Cow<'r, str> {
    match resp.request_id.as_deref() {
        Some(id) => Cow::Borrowed(id),
        None => Cow::Owned(random_id()),
    }
}

/// The head every answer shares: `"id"`, `"object"`, `"created"`, `"model"`, then `"choices"`
/// opened.
fn head(j: &mut Json, request_id: &str, object: &str, model: &str) {
    j.key("id");
    j.str(request_id);
    j.key("object");
    j.str(object);
    j.key("created");
    j.u64(now());
    j.key("model");
    j.str(model);
    j.key("choices");
    j.arr();
}

/// Opens a stream answer, up to its choices: `{"chunk":{"id":...,"choices":[`.
pub(crate) fn open_chunk(j: &mut Json, request_id: &str, chat: bool, model: &str) {
    j.obj();
    j.key("chunk");
    j.obj();
    let object = if chat {
        "chat.completion.chunk"
    } else {
        "text_completion"
    };
    head(j, request_id, object, model);
}

/// Closes a stream answer after its choices: usage, then the state for the next call.
pub(crate) fn close_chunk(
    mut j: Json,
    resp: &Generate<'_>,
    prompt_tokens: Option<i64>,
    chat: bool,
    state: &State,
    tokens: usize,
) -> Answer {
    j.end_arr();
    j.key("usage");
    match &resp.usage {
        None => j.null(),
        Some(u) => usage(
            &mut j,
            prompt_tokens.or(u.prompt_tokens).unwrap_or(0),
            u.completion_tokens.unwrap_or(0),
            (u.prompt_tokens_details, u.completion_tokens_details),
        ),
    }
    if chat {
        j.key("prompt_token_ids");
        j.null();
    }
    j.end_obj();
    j.key("stream_state");
    let state_at = j.len();
    write_state(&mut j, state);
    let state_bytes = (j.len() - state_at) as u64;
    j.end_obj();
    Answer {
        body: j.into_bytes(),
        tokens: tokens as u64,
        state_bytes,
    }
}

/// Opens a whole response, up to its choices.
pub(crate) fn open_whole(j: &mut Json, request_id: &str, chat: bool, model: &str) {
    j.obj();
    let object = if chat {
        "chat.completion"
    } else {
        "text_completion"
    };
    head(j, request_id, object, model);
}

/// Closes a whole chat response after its choices: usage, prompt logprobs and ids, transfer
/// parameters.
pub(crate) fn close_whole_chat(
    mut j: Json,
    det: &Detokenizer,
    resp: &Generate<'_>,
    prompt_tokens: i64,
    completion: usize,
    prompt_ids: Option<&[u32]>,
) -> Answer {
    j.end_arr();
    j.key("service_tier");
    j.null();
    j.key("system_fingerprint");
    j.null();
    j.key("usage");
    usage(&mut j, prompt_tokens, completion as i64, (None, None));
    j.key("prompt_logprobs");
    prompt_logprobs(&mut j, det, resp.prompt_logprobs.as_deref());
    j.key("prompt_token_ids");
    j.opt_ids(prompt_ids);
    j.key("kv_transfer_params");
    j.opt_raw(resp.kv_transfer_params.map(RawValue::get));
    j.end_obj();
    Answer {
        body: j.into_bytes(),
        tokens: completion as u64,
        state_bytes: 0,
    }
}

/// Closes a whole completion response after its choices.
pub(crate) fn close_whole_completion(
    mut j: Json,
    first: &Generate<'_>,
    prompt_tokens: i64,
    completion: usize,
) -> Answer {
    j.end_arr();
    j.key("service_tier");
    j.null();
    j.key("system_fingerprint");
    j.null();
    j.key("usage");
    usage(&mut j, prompt_tokens, completion as i64, (None, None));
    j.key("kv_transfer_params");
    j.opt_raw(first.kv_transfer_params.map(RawValue::get));
    j.end_obj();
    Answer {
        body: j.into_bytes(),
        tokens: completion as u64,
        state_bytes: 0,
    }
}

/// How a chat choice's text is said: the message of a whole response or a chunk's delta.
pub(crate) struct Chat<'r> {
    pub request_id: &'r str,
    pub include_reasoning: bool,
}

impl Chat<'_> {
    /// `"content"`: a plain choice's text, or the parser's content (null when empty).
    fn content(j: &mut Json, o: &Out<'_>) {
        j.key("content");
        match &o.parsed {
            None => j.str(&o.text),
            Some(d) => j.text_or_null(&d.content),
        }
    }

    /// `"reasoning"`: the parser's (null when empty, or not asked for); null for plain choices.
    fn reasoning(&self, j: &mut Json, o: &Out<'_>) {
        j.key("reasoning");
        match &o.parsed {
            Some(d) if self.include_reasoning => j.text_or_null(&d.reasoning),
            _ => j.null(),
        }
    }

    /// `"message"` of a whole chat choice.
    pub fn message(&self, j: &mut Json, index: u32, o: &Out<'_>) {
        j.key("message");
        j.obj();
        j.key("role");
        j.str("assistant");
        Self::content(j, o);
        for key in ["refusal", "annotations", "audio", "function_call"] {
            j.key(key);
            j.null();
        }
        j.key("tool_calls");
        j.arr();
        if let Some(d) = &o.parsed {
            for call in assemble(d) {
                j.obj();
                j.key("id");
                j.str(&tool_call_id(self.request_id, index, call.index));
                j.key("type");
                j.str("function");
                j.key("function");
                j.obj();
                j.key("name");
                j.str(&call.name);
                j.key("arguments");
                j.str(&call.arguments);
                j.end_obj();
                j.end_obj();
            }
        }
        j.end_arr();
        self.reasoning(j, o);
        j.end_obj();
    }

    /// `"delta"` of a chat stream chunk; the role comes with the first.
    pub fn delta(&self, j: &mut Json, index: u32, o: &Out<'_>, role_sent: bool) {
        j.key("delta");
        j.obj();
        j.key("role");
        if role_sent {
            j.null();
        } else {
            j.str("assistant");
        }
        Self::content(j, o);
        self.reasoning(j, o);
        match &o.parsed {
            Some(d) if !d.calls.is_empty() => {
                j.key("tool_calls");
                j.arr();
                for call in &d.calls {
                    j.obj();
                    j.key("id");
                    match &call.name {
                        Some(_) => j.str(&tool_call_id(self.request_id, index, call.index)),
                        None => j.null(),
                    }
                    j.key("type");
                    match &call.name {
                        Some(_) => j.str("function"),
                        None => j.null(),
                    }
                    j.key("index");
                    j.u64(u64::from(call.index));
                    j.key("function");
                    j.obj();
                    j.key("name");
                    j.opt_str(call.name.as_deref());
                    j.key("arguments");
                    j.str(&call.arguments);
                    j.end_obj();
                    j.end_obj();
                }
                j.end_arr();
            }
            _ => {}
        }
        j.end_obj();
    }
}

/// A whole call, assembled from its deltas.
struct Call {
    index: u32,
    name: String,
    arguments: String,
}

/// The calls of a whole output, from its deltas.
fn assemble(delta: &Delta) -> Vec<Call> {
    let mut calls: Vec<Call> = Vec::new();
    for d in &delta.calls {
        match (&d.name, calls.iter_mut().find(|c| c.index == d.index)) {
            (_, Some(call)) => call.arguments.push_str(&d.arguments),
            (Some(name), None) => calls.push(Call {
                index: d.index,
                name: name.clone(),
                arguments: d.arguments.clone(),
            }),
            (None, None) => {}
        }
    }
    calls
}

/// `"finish_reason"` and `"stop_reason"`.
pub(crate) fn finish(j: &mut Json, finish: Option<&str>, stop: Option<&StopReason<'_>>) {
    j.key("finish_reason");
    j.opt_str(finish);
    j.key("stop_reason");
    match stop {
        None => j.null(),
        Some(StopReason::Id(id)) => j.u64(*id),
        Some(StopReason::Text(t)) => j.str(t),
    }
}

fn usage(
    j: &mut Json,
    prompt: i64,
    completion: i64,
    (pd, cd): (Option<&RawValue>, Option<&RawValue>),
) {
    j.obj();
    j.key("prompt_tokens");
    j.i64(prompt);
    j.key("total_tokens");
    j.i64(prompt.saturating_add(completion));
    j.key("completion_tokens");
    j.i64(completion);
    j.key("prompt_tokens_details");
    j.opt_raw(pd.map(RawValue::get));
    j.key("completion_tokens_details");
    j.opt_raw(cd.map(RawValue::get));
    j.end_obj();
}

fn bytes(j: &mut Json, token: &str, sent: Option<&[u8]>) {
    match sent {
        Some(bytes) => j.nums(bytes),
        None => j.nums(token.as_bytes()),
    }
}

/// The chat shape of logprobs: one object per position.
pub(crate) fn chat_logprobs(j: &mut Json, lps: &Option<Option<Vec<Lp>>>) {
    let content = match lps {
        None => return j.null(),
        Some(None) => {
            j.obj();
            j.key("content");
            j.null();
            return j.end_obj();
        }
        Some(Some(c)) => c,
    };
    j.obj();
    j.key("content");
    j.arr();
    for lp in content {
        j.obj();
        j.key("token");
        j.str(&lp.token);
        j.key("logprob");
        j.f64(lp.logprob);
        j.key("bytes");
        bytes(j, &lp.token, lp.bytes.as_deref());
        j.key("top_logprobs");
        j.arr();
        for c in &lp.top {
            j.obj();
            j.key("token");
            j.str(&c.token);
            j.key("logprob");
            j.f64(c.logprob);
            j.key("bytes");
            bytes(j, &c.token, c.bytes.as_deref());
            j.end_obj();
        }
        j.end_arr();
        j.end_obj();
    }
    j.end_arr();
    j.end_obj();
}

/// The completion shape: parallel lists, `text_offset` counted in chars from `offset`.
pub(crate) fn completion_logprobs(j: &mut Json, lps: &Option<Option<Vec<Lp>>>, offset: u64) {
    let empty = Vec::new();
    let content = match lps {
        None => return j.null(),
        Some(None) => &empty,
        Some(Some(c)) => c,
    };
    j.obj();
    j.key("text_offset");
    j.arr();
    let mut at = offset;
    for lp in content {
        j.u64(at);
        at += lp.token.chars().count() as u64;
    }
    j.end_arr();
    j.key("token_logprobs");
    j.arr();
    for lp in content {
        j.f64(lp.logprob);
    }
    j.end_arr();
    j.key("tokens");
    j.arr();
    for lp in content {
        j.str(&lp.token);
    }
    j.end_arr();
    j.key("top_logprobs");
    j.arr();
    for lp in content {
        if lp.top.is_empty() {
            j.null();
            continue;
        }
        // A dict: the first position of a repeated text, the last value (as Python builds it).
        j.obj();
        for (k, c) in lp.top.iter().enumerate() {
            let t = &c.token;
            if lp
                .top
                .get(..k)
                .is_some_and(|before| before.iter().any(|b| &b.token == t))
            {
                continue;
            }
            let value = lp
                .top
                .iter()
                .rev()
                .find(|b| &b.token == t)
                .map_or(LOGPROB_FLOOR, |b| b.logprob);
            j.key_str(t);
            j.f64(value);
        }
        j.end_obj();
    }
    j.end_arr();
    j.end_obj();
}

/// `prompt_logprobs`, with `decoded_token` filled in from the id where it was not sent.
pub(crate) fn prompt_logprobs(
    j: &mut Json,
    det: &Detokenizer,
    p: Option<&[Option<Pairs<Obj<PromptLogprob>>>]>,
) {
    let Some(positions) = p else {
        return j.null();
    };
    j.arr();
    for pos in positions {
        let Some(pairs) = pos else {
            j.null();
            continue;
        };
        j.obj();
        for (key, lp) in &pairs.0 {
            j.key_str(key);
            j.obj();
            j.key("logprob");
            j.f64(clamp(Some(lp.logprob)));
            j.key("rank");
            match lp.rank {
                Some(r) => j.i64(r),
                None => j.null(),
            }
            j.key("decoded_token");
            match (&lp.decoded_token, key.parse::<u32>()) {
                (Some(t), _) => j.str(t),
                (None, Ok(id)) => match det.logprob_token(id, &[]) {
                    Ok(t) => j.str(&t),
                    Err(_) => j.null(),
                },
                (None, Err(_)) => j.null(),
            }
            j.end_obj();
        }
        j.end_obj();
    }
    j.end_arr();
}

/// The stream state for the next call (vLLM's fields, then tokstream's).
pub(crate) fn write_state(j: &mut Json, s: &State) {
    j.obj();
    j.key("prev_tokens");
    j.strs(&s.prev_tokens);
    j.key("prefix_offset");
    j.u64(s.prefix_offset);
    j.key("read_offset");
    j.u64(s.read_offset);
    j.key("role_sent");
    j.bool(s.role_sent);
    j.key("logprob_context_token_ids");
    j.nums(&s.logprob_context_token_ids);
    j.key("logprob_text_offset");
    j.u64(s.logprob_text_offset);
    j.key("output_token_ids");
    j.nums(&s.output_token_ids);
    j.key("output_chunk_lens");
    j.nums(&s.output_chunk_lens);
    j.key("tools_streamed");
    j.bool(s.tools_streamed);
    j.key("last_tool_call_ids");
    j.strs(&s.last_tool_call_ids);
    j.key("held_text");
    j.str(&s.held_text);
    j.key("generated_tokens");
    j.u64(s.generated_tokens);
    j.key("stopped");
    j.bool(s.stopped);
    if let Some(parser) = &s.parser {
        j.key("parser");
        // A plain struct of strings, numbers and booleans: serializing it cannot fail.
        j.with_buf(|buf| serde_json::to_writer(buf, &parser.0).is_ok());
    }
    j.end_obj();
}
