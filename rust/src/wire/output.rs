//! The answers' JSON: stream chunks and whole responses, written field by field over [`Json`]
//! in the order vLLM's models declare them, every declared field present (nulls included).

use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::value::RawValue;

use super::choice::Out;
use super::input::{Generate, Metrics, Obj, Pairs, PromptLogprob, State, StopReason};
use super::json::{Json, LOGPROB_FLOOR, key};
use super::logprobs::{Logprobs, clamp};
use super::request::{Ask, hides_reasoning};
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

/// Which answer is written: a stream chunk or a whole response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Chunk,
    Whole,
}

/// Opens an answer, up to its choices: `{"chunk":{"id":...,"choices":[` for a stream chunk,
/// `{"id":...,"choices":[` for a whole response (`id`, `object`, `created`, `model`).
pub(crate) fn open(j: &mut Json, form: Form, chat: bool, request_id: &str, model: &str) {
    j.obj();
    if form == Form::Chunk {
        key!(j, "chunk");
        j.obj();
    }
    key!(j, "id");
    j.str(request_id);
    key!(j, "object");
    j.str(match (chat, form) {
        (true, Form::Chunk) => "chat.completion.chunk",
        (true, Form::Whole) => "chat.completion",
        (false, _) => "text_completion",
    });
    key!(j, "created");
    j.u64(now());
    key!(j, "model");
    j.str(model);
    key!(j, "choices");
    j.arr();
}

/// Ends the answer's JSON: the body and what it did.
fn answer(mut j: Json, tokens: usize, state_bytes: u64) -> Answer {
    j.end_obj();
    Answer {
        body: j.into_bytes(),
        tokens: tokens as u64,
        state_bytes,
    }
}

/// Closes a stream answer after its choices: usage and the rest of vLLM's fields, then the
/// state for the next call. `prompt_ids` are the chunk's prompt ids when asked for (chat; a
/// completion chunk carries them in its choice).
pub(crate) fn close_chunk(
    mut j: Json,
    resp: &Generate<'_>,
    prompt_tokens: Option<i64>,
    chat: bool,
    prompt_ids: Option<&[u32]>,
    state: &State,
    tokens: usize,
) -> Answer {
    j.end_arr();
    key!(j, "usage");
    match &resp.usage {
        None => j.null(),
        Some(u) => usage(
            &mut j,
            prompt_tokens.or(u.prompt_tokens).unwrap_or(0),
            u.completion_tokens.unwrap_or(0),
            (u.prompt_tokens_details, u.completion_tokens_details),
        ),
    }
    key!(j, "system_fingerprint");
    j.null();
    if chat {
        key!(j, "prompt_token_ids");
        j.opt_ids(prompt_ids);
        key!(j, "prompt_text");
        j.null();
    }
    key!(j, "metrics");
    metrics(&mut j, resp.metrics.as_deref());
    key!(j, "kv_transfer_params");
    j.null();
    j.end_obj();
    key!(j, "stream_state");
    let state_at = j.len();
    write_state(&mut j, state);
    let state_bytes = (j.len() - state_at) as u64;
    answer(j, tokens, state_bytes)
}

/// What a whole chat response says of its prompt, after its usage.
pub(crate) struct ChatPrompt<'r> {
    pub det: &'r Detokenizer,
    pub logprobs: Option<&'r [Option<Pairs<Obj<PromptLogprob>>>]>,
    /// The prompt's ids, when asked for.
    pub ids: Option<&'r [u32]>,
}

/// Closes a whole response after its choices: usage, (chat) the prompt's logprobs and ids,
/// transfer parameters, metrics. A completion's `kv_transfer_params` and `metrics` are the
/// ones its generate responses share, as vLLM merges them.
pub(crate) fn close_whole(
    mut j: Json,
    chat: Option<ChatPrompt<'_>>,
    kv_transfer_params: Option<&RawValue>,
    metrics_of: Option<&Metrics>,
    prompt_tokens: i64,
    completion: usize,
) -> Answer {
    j.end_arr();
    key!(j, "service_tier");
    j.null();
    key!(j, "system_fingerprint");
    j.null();
    key!(j, "usage");
    usage(&mut j, prompt_tokens, completion as i64, (None, None));
    if let Some(prompt) = chat {
        key!(j, "prompt_logprobs");
        prompt_logprobs(&mut j, prompt.det, prompt.logprobs);
        key!(j, "prompt_token_ids");
        j.opt_ids(prompt.ids);
        key!(j, "prompt_text");
        j.null();
    }
    key!(j, "kv_transfer_params");
    j.opt_raw(kv_transfer_params.map(RawValue::get));
    key!(j, "ec_transfer_params");
    j.null();
    key!(j, "metrics");
    metrics(&mut j, metrics_of);
    answer(j, completion, 0)
}

/// `metrics` as vLLM's `PerRequestMetrics` writes it: every field, null when unset.
fn metrics(j: &mut Json, m: Option<&Metrics>) {
    let Some(m) = m else { return j.null() };
    let opt = |j: &mut Json, x: Option<f64>| match x {
        Some(x) => j.f64(x),
        None => j.null(),
    };
    j.obj();
    key!(j, "time_to_first_token_ms");
    opt(j, m.time_to_first_token_ms);
    key!(j, "generation_time_ms");
    opt(j, m.generation_time_ms);
    key!(j, "queue_time_ms");
    opt(j, m.queue_time_ms);
    key!(j, "mean_itl_ms");
    opt(j, m.mean_itl_ms);
    key!(j, "tokens_per_second");
    opt(j, m.tokens_per_second);
    key!(j, "speculative_decoding");
    match m.speculative_decoding.as_deref() {
        None => j.null(),
        Some(s) => {
            j.obj();
            key!(j, "mean_acceptance_length");
            j.f64(s.mean_acceptance_length);
            key!(j, "draft_acceptance_rate");
            j.f64(s.draft_acceptance_rate);
            key!(j, "acceptance_histogram");
            j.nums(&s.acceptance_histogram);
            key!(j, "num_spec_steps");
            j.u64(s.num_spec_steps);
            key!(j, "num_accepted_draft_tokens");
            j.u64(s.num_accepted_draft_tokens);
            key!(j, "num_draft_tokens");
            j.u64(s.num_draft_tokens);
            key!(j, "num_spec_tokens");
            j.u64(s.num_spec_tokens);
            key!(j, "per_step_accepted");
            j.opt_nums(s.per_step_accepted.as_deref());
            key!(j, "per_step_drafted");
            j.opt_nums(s.per_step_drafted.as_deref());
            j.end_obj();
        }
    }
    j.end_obj();
}

/// How a chat choice's text is said: the message of a whole response or a chunk's delta.
pub(crate) struct Chat<'r> {
    request_id: &'r str,
    include_reasoning: bool,
}

impl<'r> Chat<'r> {
    /// A choice's text as the request asks it said (reasoning shown unless hidden).
    pub fn new(request_id: &'r str, ask: Option<&Ask>) -> Self {
        Chat {
            request_id,
            include_reasoning: !hides_reasoning(ask),
        }
    }

    /// `"content"`: a plain choice's text, or the parser's content; a delta's is null when
    /// empty, as is a parsed message's.
    fn content(j: &mut Json, o: &Out<'_>, delta: bool) {
        key!(j, "content");
        match &o.parsed {
            None if delta => j.text_or_null(&o.text),
            None => j.str(&o.text),
            Some(d) => j.text_or_null(&d.content),
        }
    }

    /// `"reasoning"`: the parser's (null when empty, or not asked for); null for plain choices.
    fn reasoning(&self, j: &mut Json, o: &Out<'_>) {
        key!(j, "reasoning");
        match &o.parsed {
            Some(d) if self.include_reasoning => j.text_or_null(&d.reasoning),
            _ => j.null(),
        }
    }

    /// `"message"` of a whole chat choice.
    pub fn message(&self, j: &mut Json, index: u32, o: &Out<'_>) {
        key!(j, "message");
        j.obj();
        key!(j, "role");
        j.str("assistant");
        Self::content(j, o, false);
        key!(j, "refusal");
        j.null();
        key!(j, "annotations");
        j.null();
        key!(j, "audio");
        j.null();
        key!(j, "function_call");
        j.null();
        // Left out when there are none, as vLLM's `ChatMessage` does.
        let calls = o.parsed.as_ref().map(assemble).unwrap_or_default();
        if !calls.is_empty() {
            key!(j, "tool_calls");
            j.arr();
            for call in calls {
                let id = tool_call_id(self.request_id, index, call.index);
                tool_call(j, Some(&id), None, Some(&call.name), &call.arguments);
            }
            j.end_arr();
        }
        self.reasoning(j, o);
        j.end_obj();
    }

    /// `"delta"` of a chat stream chunk; the role comes with the first.
    pub fn delta(&self, j: &mut Json, index: u32, o: &Out<'_>, role_sent: bool) {
        key!(j, "delta");
        j.obj();
        key!(j, "role");
        if role_sent {
            j.null();
        } else {
            j.str("assistant");
        }
        Self::content(j, o, true);
        self.reasoning(j, o);
        match &o.parsed {
            Some(d) if !d.calls.is_empty() => {
                key!(j, "tool_calls");
                j.arr();
                for call in &d.calls {
                    // The call's first delta (its name) carries its id.
                    let id = call
                        .name
                        .as_ref()
                        .map(|_| tool_call_id(self.request_id, index, call.index));
                    let name = call.name.as_deref();
                    tool_call(j, id.as_deref(), Some(call.index), name, &call.arguments);
                }
                j.end_arr();
            }
            _ => {}
        }
        j.end_obj();
    }
}

/// A tool call of a message (no `index`) or of a delta: `type` is `"function"` where there is
/// an `id`, null where there is none.
fn tool_call(j: &mut Json, id: Option<&str>, index: Option<u32>, name: Option<&str>, args: &str) {
    j.obj();
    key!(j, "id");
    j.opt_str(id);
    key!(j, "type");
    j.opt_str(id.map(|_| "function"));
    if let Some(index) = index {
        key!(j, "index");
        j.u64(u64::from(index));
    }
    key!(j, "function");
    j.obj();
    key!(j, "name");
    j.opt_str(name);
    key!(j, "arguments");
    j.str(args);
    j.end_obj();
    j.end_obj();
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
    key!(j, "finish_reason");
    j.opt_str(finish);
    key!(j, "stop_reason");
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
    key!(j, "prompt_tokens");
    j.i64(prompt);
    key!(j, "total_tokens");
    j.i64(prompt.saturating_add(completion));
    key!(j, "completion_tokens");
    j.i64(completion);
    key!(j, "prompt_tokens_details");
    j.opt_raw(pd.map(RawValue::get));
    key!(j, "completion_tokens_details");
    j.opt_raw(cd.map(RawValue::get));
    j.end_obj();
}

/// A token's `"token"`, `"logprob"` and `"bytes"` (its text's bytes where none were sent).
fn token_logprob(j: &mut Json, token: &str, logprob: f64, sent: Option<&[u8]>) {
    key!(j, "token");
    j.str(token);
    key!(j, "logprob");
    j.f64(logprob);
    key!(j, "bytes");
    j.nums(sent.unwrap_or(token.as_bytes()));
}

/// The chat shape of logprobs: one object per position.
pub(crate) fn chat_logprobs(j: &mut Json, lps: &Logprobs) {
    let content = match lps {
        Logprobs::Absent => return j.null(),
        Logprobs::NoContent => {
            j.obj();
            key!(j, "content");
            j.null();
            return j.end_obj();
        }
        Logprobs::Content(c) => c,
    };
    j.obj();
    key!(j, "content");
    j.arr();
    for lp in content {
        j.obj();
        token_logprob(j, &lp.token, lp.logprob, lp.bytes.as_deref());
        key!(j, "top_logprobs");
        j.arr();
        for c in &lp.top {
            j.obj();
            token_logprob(j, &c.token, c.logprob, c.bytes.as_deref());
            j.end_obj();
        }
        j.end_arr();
        j.end_obj();
    }
    j.end_arr();
    j.end_obj();
}

/// Where the next chunk's `text_offset` starts (vLLM's rule): after the last reported token
/// string when there are any, else after the chunk's text.
pub(crate) fn next_text_offset(lps: &Logprobs, offset: u64, text: &str) -> u64 {
    match lps.positions() {
        [] => offset + text.chars().count() as u64,
        content => {
            offset
                + content
                    .iter()
                    .map(|lp| lp.token.chars().count() as u64)
                    .sum::<u64>()
        }
    }
}

/// The completion shape: parallel lists, `text_offset` counted in chars from `offset`.
pub(crate) fn completion_logprobs(j: &mut Json, lps: &Logprobs, offset: u64) {
    if matches!(lps, Logprobs::Absent) {
        return j.null();
    }
    let content = lps.positions();
    j.obj();
    key!(j, "text_offset");
    j.arr();
    let mut at = offset;
    for lp in content {
        j.u64(at);
        at += lp.token.chars().count() as u64;
    }
    j.end_arr();
    key!(j, "token_logprobs");
    j.arr();
    for lp in content {
        j.f64(lp.logprob);
    }
    j.end_arr();
    key!(j, "tokens");
    j.arr();
    for lp in content {
        j.str(&lp.token);
    }
    j.end_arr();
    key!(j, "top_logprobs");
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
            key!(j, "logprob");
            j.f64(clamp(Some(lp.logprob)));
            key!(j, "rank");
            match lp.rank {
                Some(r) => j.i64(r),
                None => j.null(),
            }
            key!(j, "decoded_token");
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
    key!(j, "prev_tokens");
    j.strs(&s.prev_tokens);
    key!(j, "prefix_offset");
    j.u64(s.prefix_offset);
    key!(j, "read_offset");
    j.u64(s.read_offset);
    key!(j, "role_sent");
    j.bool(s.role_sent);
    key!(j, "logprob_context_token_ids");
    j.nums(&s.logprob_context_token_ids);
    key!(j, "logprob_text_offset");
    j.u64(s.logprob_text_offset);
    key!(j, "output_token_ids");
    j.nums(&s.output_token_ids);
    key!(j, "output_chunk_lens");
    j.nums(&s.output_chunk_lens);
    key!(j, "tools_streamed");
    j.bool(s.tools_streamed);
    key!(j, "last_tool_call_ids");
    j.strs(&s.last_tool_call_ids);
    key!(j, "held_text");
    j.str(&s.held_text);
    key!(j, "generated_tokens");
    j.u64(s.generated_tokens);
    key!(j, "stopped");
    j.bool(s.stopped);
    if let Some(parser) = &s.parser {
        key!(j, "parser");
        // A plain struct of strings, numbers and booleans: serializing it cannot fail.
        j.with_buf(|buf| serde_json::to_writer(buf, &parser.0).is_ok());
    }
    j.end_obj();
}
