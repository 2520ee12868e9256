//! The derender semantics (REFERENCE section 5) for the four body shapes.

use std::borrow::Cow;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::input::{
    Body, BoolOrCount, Choice, Generate, LogprobEntry, Obj, Pairs, PromptLogprob, Request, State,
    StopReason,
};
use super::json::Json;
use super::{Derenderer, LOGPROB_FLOOR, WireError, clip};
use crate::logprobs::CONTEXT;
use crate::stop::{StopStep, StopStrings};
use crate::stream::Stream;
use crate::vocab::MAX_WINDOW;

/// Most generate responses (completions) or choices a body may carry.
pub const MAX_CHOICES: usize = 256;
/// Most alternatives a logprob position may carry (OpenAI's limit).
pub const MAX_TOP_LOGPROBS: usize = 20;

pub(super) type Res<T> = Result<T, WireError>;

/// Parses a body, or says what is wrong with it (and where).
pub(super) fn parse(body: &[u8]) -> Res<Body<'_>> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    // Serde would also read a struct from a JSON array; a body must be an object.
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b != b'{') {
        return Err(WireError::bad("the body must be a JSON object"));
    }
    match serde_json::from_slice::<Body<'_>>(body) {
        Ok(b) => Ok(b),
        Err(e) => {
            // Parse again, slowly, only to say where the error is.
            let mut de = serde_json::Deserializer::from_slice(body);
            let path = match serde_path_to_error::deserialize::<_, Body<'_>>(&mut de) {
                Err(e) => e.path().to_string(),
                Ok(_) => String::new(),
            };
            let what = if e.is_syntax() || e.is_eof() {
                "the body is not valid JSON"
            } else {
                "invalid request body"
            };
            let message = format!("{what}: {}", clip(&e.to_string()));
            Err(
                if e.is_syntax() || e.is_eof() || path.is_empty() || path == "." {
                    WireError::bad(message)
                } else {
                    WireError::bad_param(message, path)
                },
            )
        }
    }
}

/// A 200 answer and what it did.
pub(crate) struct Answer {
    pub body: Vec<u8>,
    /// Output token ids derendered.
    pub tokens: u64,
    /// Bytes of the returned `stream_state` (0 for whole responses).
    pub state_bytes: u64,
}

/// A copy of `body` with the non-standard `NaN` and `-Infinity` tokens that Python's `json`
/// writes for non-finite floats replaced by the logprob floor; `None` when it has none.
pub(super) fn replace_non_finite(body: &[u8]) -> Option<Vec<u8>> {
    const TOKENS: [&[u8]; 3] = [b"-Infinity", b"-NaN", b"NaN"];
    let mut out = Vec::with_capacity(body.len());
    let (mut in_string, mut escaped, mut replaced) = (false, false, false);
    let mut rest = body;
    while let Some((&b, tail)) = rest.split_first() {
        if !in_string {
            if let Some(token) = TOKENS.into_iter().find(|t| rest.starts_with(t)) {
                out.extend_from_slice(b"-9999.0");
                rest = rest.get(token.len()..).unwrap_or_default();
                replaced = true;
                continue;
            }
            in_string = b == b'"';
        } else if escaped {
            escaped = false;
        } else if b == b'\\' {
            escaped = true;
        } else if b == b'"' {
            in_string = false;
        }
        out.push(b);
        rest = tail;
    }
    replaced.then_some(out)
}

/// What the original request asks of derender.
pub(super) struct Params<'r> {
    pub(super) skip_special: bool,
    pub(super) stops: StopStrings,
    pub(super) min_tokens: u64,
    pub(super) include_stop: bool,
    pub(super) stop_token_ids: &'r [u32],
    pub(super) ignore_eos: bool,
    pub(super) return_token_ids: bool,
    /// How many alternatives to keep per logprob position (`None`: all).
    pub(super) top: Option<usize>,
}

impl<'r> Params<'r> {
    pub(super) fn new(req: Option<&'r Request<'_>>, chat: bool) -> Params<'r> {
        let Some(req) = req else {
            return Params {
                skip_special: true,
                stops: StopStrings::default(),
                min_tokens: 0,
                include_stop: false,
                stop_token_ids: &[],
                ignore_eos: false,
                return_token_ids: false,
                top: None,
            };
        };
        let include_stop = req.include_stop_str_in_output.unwrap_or(false);
        let stops = match &req.stop {
            Some(s) => StopStrings::new(&s.0, include_stop),
            None => StopStrings::default(),
        };
        let count = |n: i64| usize::try_from(n).ok();
        let top = if chat {
            count(req.top_logprobs.unwrap_or(0))
        } else {
            match req.logprobs {
                Some(BoolOrCount::Count(n)) => count(n),
                _ => None,
            }
        };
        Params {
            skip_special: req.skip_special_tokens.unwrap_or(true),
            stops,
            min_tokens: req.min_tokens.unwrap_or(0),
            include_stop,
            stop_token_ids: req.stop_token_ids.as_deref().unwrap_or_default(),
            ignore_eos: req.ignore_eos.unwrap_or(false),
            return_token_ids: req.return_token_ids.unwrap_or(false),
            top,
        }
    }

    /// Most chars `held_text` may have: fewer than the longest stop string.
    fn max_held_chars(&self) -> usize {
        self.stops
            .stops()
            .iter()
            .map(|s| s.chars().count().saturating_sub(1))
            .max()
            .unwrap_or(0)
    }
}

/// A resolved logprob position.
pub(super) struct Lp {
    token: String,
    logprob: f64,
    /// The `bytes` a chat-shape entry sent with literal text; else the UTF-8 of `token`.
    bytes: Option<Vec<u8>>,
    top: Vec<Candidate>,
}

/// One alternative of a logprob position.
struct Candidate {
    token: String,
    logprob: f64,
    bytes: Option<Vec<u8>>,
}

/// One choice's derendered output.
struct Out<'a> {
    text: String,
    finish_reason: Option<Cow<'a, str>>,
    stop_reason: Option<StopReason<'a>>,
    /// `None`: no logprobs; `Some(None)`: `{"content": null}`.
    logprobs: Option<Option<Vec<Lp>>>,
}

/// Text and stop-string progress of one choice between calls.
struct Progress {
    held: String,
    generated: u64,
    stopped: bool,
}

fn clamp(x: Option<f64>) -> f64 {
    match x {
        Some(v) if v >= LOGPROB_FLOOR => v,
        _ => LOGPROB_FLOOR,
    }
}

pub(super) fn now() -> u64 {
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

/// Parses a raw field as `T` (null gives `None`).
pub(super) fn raw_as<'a, T: Deserialize<'a>>(
    raw: Option<&'a RawValue>,
    name: &str,
) -> Res<Option<T>> {
    match raw {
        None => Ok(None),
        Some(r) => serde_json::from_str::<Option<T>>(r.get()).map_err(|e| {
            WireError::bad_param(format!("invalid {name}: {}", clip(&e.to_string())), name)
        }),
    }
}

impl Derenderer {
    pub(super) fn derender(&self, chat: bool, body: Body<'_>) -> Res<Answer> {
        if let Some(model) = body.model.as_deref() {
            if model != self.served_model_name {
                return Err(WireError::not_found(format!(
                    "The model `{}` does not exist.",
                    clip(model)
                )));
            }
        }
        let stream = body.stream.unwrap_or(false);
        match (chat, stream) {
            (true, false) if self.parsers.is_some() => self.chat_whole_parsed(body),
            (true, false) => self.chat_whole(body),
            (false, false) => self.completion_whole(body),
            (true, true) if self.parsers.is_some() => self.chat_stream_parsed(body),
            (_, true) => self.stream_chunk(chat, body),
        }
    }

    pub(super) fn model_name<'b>(&'b self, body: &'b Body<'_>) -> &'b str {
        body.model.as_deref().unwrap_or(&self.served_model_name)
    }

    /// Rejects payloads over the resource bounds before any decoding.
    pub(super) fn check_limits(&self, resp: &Generate<'_>, at: &str) -> Res<()> {
        if resp.choices.len() > MAX_CHOICES {
            return Err(WireError::bad_param(
                format!(
                    "choices count ({}) exceeds the maximum ({MAX_CHOICES})",
                    resp.choices.len()
                ),
                format!("{at}.choices"),
            ));
        }
        let max = self.max_model_len.unwrap_or(usize::MAX);
        for (i, c) in resp.choices.iter().enumerate() {
            let n = c.token_ids.as_ref().map_or(0, Vec::len);
            if n > max {
                return Err(WireError::bad_param(
                    format!("token_ids length ({n}) exceeds max_model_len ({max})"),
                    format!("{at}.choices[{i}].token_ids"),
                ));
            }
            if let Some(content) = c.logprobs.as_ref().and_then(|l| l.content.as_ref()) {
                if content.len() > max {
                    return Err(WireError::bad_param(
                        format!(
                            "logprobs.content length ({}) exceeds max_model_len ({max})",
                            content.len()
                        ),
                        format!("{at}.choices[{i}].logprobs.content"),
                    ));
                }
                for (k, e) in content.iter().enumerate() {
                    let tops = e.top_logprobs.as_ref().map_or(0, Vec::len);
                    if tops > MAX_TOP_LOGPROBS {
                        return Err(WireError::bad_param(
                            format!(
                                "top_logprobs count ({tops}) exceeds the maximum \
                                 ({MAX_TOP_LOGPROBS})"
                            ),
                            format!("{at}.choices[{i}].logprobs.content[{k}].top_logprobs"),
                        ));
                    }
                }
            }
        }
        if let Some(p) = &resp.prompt_logprobs {
            let keys = p.iter().flatten().flat_map(|pairs| pairs.0.iter());
            if let Some((key, _)) = keys.clone().find(|(k, _)| k.parse::<u32>().is_err()) {
                return Err(WireError::bad_param(
                    format!("prompt_logprobs key `{}` is not a token id", clip(key)),
                    format!("{at}.prompt_logprobs"),
                ));
            }
            if p.len() > max {
                return Err(WireError::bad_param(
                    format!(
                        "prompt_logprobs length ({}) exceeds max_model_len ({max})",
                        p.len()
                    ),
                    format!("{at}.prompt_logprobs"),
                ));
            }
        }
        Ok(())
    }

    /// Which ids to detokenize, and the stop reason: a stop token that ended the choice is
    /// not part of its text.
    pub(super) fn stop_token<'a>(
        &self,
        ids: &[u32],
        choice: &Choice<'a>,
        finish: Option<&str>,
        p: &Params<'_>,
    ) -> (usize, Option<StopReason<'a>>) {
        let mut reason = choice.stop_reason.clone();
        let mut keep = ids.len();
        if let (Some("stop"), Some(&last)) = (finish, ids.last()) {
            match &reason {
                Some(StopReason::Id(r)) => {
                    if *r == u64::from(last) && !p.include_stop {
                        keep -= 1;
                    }
                }
                Some(StopReason::Text(_)) => {}
                None => {
                    if p.stop_token_ids.contains(&last) {
                        reason = Some(StopReason::Id(u64::from(last)));
                        if !p.include_stop {
                            keep -= 1;
                        }
                    } else if !p.ignore_eos && !p.include_stop && self.eos_token_ids.contains(&last)
                    {
                        keep -= 1;
                    }
                }
            }
        }
        (keep, reason)
    }

    /// Detokenizes `ids` on `stream`, cutting at a stop string; returns the index of the stop
    /// string that matched.
    fn run_text(
        stream: &mut Stream,
        ids: &[u32],
        finish: bool,
        p: &Params<'_>,
        progress: &mut Progress,
        out: &mut String,
    ) -> Res<Option<usize>> {
        let decode_err = |e: crate::Error| WireError::bad(format!("cannot detokenize: {e}"));
        if p.stops.is_empty() {
            out.push_str(stream.step(ids).map_err(decode_err)?);
            progress.generated += ids.len() as u64;
            if finish {
                out.push_str(stream.finish().map_err(decode_err)?);
            }
            return Ok(None);
        }
        for &id in ids {
            progress.generated += 1;
            let check = progress.generated > p.min_tokens;
            let text = stream.step(&[id]).map_err(decode_err)?;
            if let StopStep::Matched { index } = p.stops.step(&mut progress.held, text, check, out)
            {
                progress.stopped = true;
                return Ok(Some(index));
            }
        }
        if finish {
            let check = progress.generated > p.min_tokens;
            let text = stream.finish().map_err(decode_err)?;
            if !text.is_empty() {
                if let StopStep::Matched { index } =
                    p.stops.step(&mut progress.held, text, check, out)
                {
                    progress.stopped = true;
                    return Ok(Some(index));
                }
            }
            p.stops.finish(&mut progress.held, out);
        }
        Ok(None)
    }

    /// One choice: stop token, text, stop strings and logprobs.
    #[allow(clippy::too_many_arguments)]
    fn choice_out<'a>(
        &self,
        choice: &Choice<'a>,
        finish: Option<Cow<'a, str>>,
        flush: bool,
        stream: &mut Stream,
        p: &Params<'_>,
        progress: &mut Progress,
        context: &mut Vec<u32>,
    ) -> Res<Out<'a>> {
        let ids = choice.token_ids.as_deref().unwrap_or_default();
        let (keep, mut stop_reason) = self.stop_token(ids, choice, finish.as_deref(), p);
        let mut text = String::new();
        let dropped = (ids.len() - keep) as u64;
        let kept = ids.get(..keep).unwrap_or_default();
        let matched = Self::run_text(stream, kept, flush, p, progress, &mut text)?;
        progress.generated += dropped;
        let mut finish_reason = finish;
        if let Some(index) = matched {
            finish_reason = Some(Cow::Borrowed("stop"));
            let stop = p.stops.stops().get(index).cloned().unwrap_or_default();
            stop_reason = Some(StopReason::Text(Cow::Owned(stop)));
        }
        let logprobs = self.choice_logprobs(choice, p.top, context)?;
        Ok(Out {
            text,
            finish_reason,
            stop_reason,
            logprobs,
        })
    }

    /// A choice's logprobs with their strings resolved (`None`: none sent; `Some(None)`:
    /// `{"content": null}`). `context` holds the last sampled ids before the choice's ids and is
    /// left holding the last ones after them, whether or not logprobs came.
    pub(super) fn choice_logprobs(
        &self,
        choice: &Choice<'_>,
        top: Option<usize>,
        context: &mut Vec<u32>,
    ) -> Res<Option<Option<Vec<Lp>>>> {
        let logprobs = match &choice.logprobs {
            None => None,
            Some(l) => match &l.content {
                None => Some(None),
                Some(entries) => {
                    let mut running = context.clone();
                    Some(Some(self.resolve_logprobs(entries, top, &mut running)?))
                }
            },
        };
        context.extend_from_slice(choice.token_ids.as_deref().unwrap_or_default());
        context.drain(..context.len().saturating_sub(CONTEXT));
        Ok(logprobs)
    }

    fn resolve_token(
        &self,
        token_id: Option<u32>,
        token: Option<&str>,
        context: &[u32],
    ) -> Res<(String, Option<u32>)> {
        let id = match (token_id, token) {
            (Some(id), _) => id,
            (None, Some(t)) => match placeholder(t)? {
                Some(id) => id,
                None => return Ok((t.to_owned(), None)),
            },
            (None, None) => {
                return Err(WireError::bad(
                    "a logprob entry needs a `token_id` or a `token`",
                ));
            }
        };
        let text = self
            .det
            .logprob_token(id, context)
            .map_err(|e| WireError::bad(format!("cannot decode logprob token {id}: {e}")))?;
        Ok((text, Some(id)))
    }

    /// Token strings for every position (REFERENCE section 4); `context` holds the last sampled
    /// ids before the first position and is left holding the last ones after the last.
    pub(super) fn resolve_logprobs(
        &self,
        entries: &[Obj<LogprobEntry<'_>>],
        top: Option<usize>,
        context: &mut Vec<u32>,
    ) -> Res<Vec<Lp>> {
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            let (token, sampled) = self.resolve_token(e.token_id, e.token.as_deref(), context)?;
            let tops = e.top_logprobs.as_deref().unwrap_or_default();
            let n = top.unwrap_or(tops.len()).min(tops.len());
            let mut top_out = Vec::with_capacity(n);
            for t in tops.iter().take(n) {
                let (s, id) = self.resolve_token(t.token_id, t.token.as_deref(), context)?;
                top_out.push(Candidate {
                    token: s,
                    logprob: clamp(t.logprob),
                    bytes: if id.is_none() { t.bytes.clone() } else { None },
                });
            }
            out.push(Lp {
                token,
                logprob: clamp(e.logprob),
                bytes: if sampled.is_none() {
                    e.bytes.clone()
                } else {
                    None
                },
                top: top_out,
            });
            if let Some(id) = sampled {
                context.push(id);
                if context.len() > CONTEXT {
                    context.remove(0);
                }
            }
        }
        Ok(out)
    }

    fn new_stream(&self, prompt: Option<&[u32]>, p: &Params<'_>) -> Stream {
        self.det.stream(prompt.unwrap_or_default(), p.skip_special)
    }

    // --- whole responses ----------------------------------------------------------------------

    fn whole_choice<'a>(
        &self,
        choice: &Choice<'a>,
        prompt: Option<&[u32]>,
        p: &Params<'_>,
    ) -> Res<Out<'a>> {
        if choice.token_ids.as_ref().is_none_or(Vec::is_empty) {
            return Err(WireError::bad(format!(
                "choice {} has empty or null token_ids",
                choice.index
            )));
        }
        // A whole response's choice that says nothing of its finish defaults to "stop".
        let finish = match &choice.finish_reason {
            None => Some(Cow::Borrowed("stop")),
            Some(f) => f.clone(),
        };
        let mut stream = self.new_stream(prompt, p);
        let mut progress = Progress {
            held: String::new(),
            generated: 0,
            stopped: false,
        };
        let mut context = Vec::new();
        // The text is complete whatever the finish reason: flush it.
        self.choice_out(
            choice,
            finish,
            true,
            &mut stream,
            p,
            &mut progress,
            &mut context,
        )
    }

    fn chat_whole(&self, body: Body<'_>) -> Res<Answer> {
        let resp = body.generate_response.as_ref().ok_or_else(|| {
            WireError::bad_param("missing field `generate_response`", "generate_response")
        })?;
        self.check_limits(resp, "generate_response")?;
        let prompt_tokens: i64 = raw_as(body.prompt_tokens, "prompt_tokens")?.unwrap_or(0);
        let request_ids: Option<Vec<u32>> = raw_as(body.prompt_token_ids, "prompt_token_ids")?;
        let prompt = request_ids.as_deref().or(resp.prompt_token_ids.as_deref());
        let p = Params::new(body.chat_request.as_deref(), true);
        let mut outs = Vec::with_capacity(resp.choices.len());
        for c in &resp.choices {
            outs.push(self.whole_choice(c, prompt, &p)?);
        }
        let completion: usize = resp
            .choices
            .iter()
            .map(|c| c.token_ids.as_ref().map_or(0, Vec::len))
            .sum();

        let mut j = Json::with_capacity(512 + outs.iter().map(|o| o.text.len() * 2).sum::<usize>());
        j.raw("{\"id\":");
        j.str(&request_id_of(resp));
        j.raw(",\"object\":\"chat.completion\",\"created\":");
        j.u64(now());
        j.raw(",\"model\":");
        j.str(self.model_name(&body));
        j.raw(",\"choices\":[");
        for (i, (c, o)) in resp.choices.iter().zip(&outs).enumerate() {
            if i > 0 {
                j.raw(",");
            }
            j.raw("{\"index\":");
            j.u64(u64::from(c.index));
            j.raw(",\"message\":{\"role\":\"assistant\",\"content\":");
            j.str(&o.text);
            j.raw(
                ",\"refusal\":null,\"annotations\":null,\"audio\":null,\"function_call\":null,\
                 \"tool_calls\":[],\"reasoning\":null},\"logprobs\":",
            );
            write_chat_logprobs(&mut j, &o.logprobs);
            write_finish(&mut j, o.finish_reason.as_deref(), o.stop_reason.as_ref());
            j.raw(",\"token_ids\":");
            j.opt_ids(c.token_ids.as_deref().filter(|_| p.return_token_ids));
            j.raw("}");
        }
        Ok(self.close_whole_chat(j, resp, prompt_tokens, completion, prompt, &p))
    }

    /// Closes a whole chat answer after its choices: usage, prompt logprobs and ids, transfer
    /// parameters.
    pub(super) fn close_whole_chat(
        &self,
        mut j: Json,
        resp: &Generate<'_>,
        prompt_tokens: i64,
        completion: usize,
        prompt: Option<&[u32]>,
        p: &Params<'_>,
    ) -> Answer {
        j.raw("],\"service_tier\":null,\"system_fingerprint\":null,\"usage\":");
        write_usage(&mut j, prompt_tokens, completion as i64, None);
        j.raw(",\"prompt_logprobs\":");
        self.write_prompt_logprobs(&mut j, resp.prompt_logprobs.as_deref());
        j.raw(",\"prompt_token_ids\":");
        j.opt_ids(prompt.filter(|_| p.return_token_ids));
        j.raw(",\"kv_transfer_params\":");
        write_raw(&mut j, resp.kv_transfer_params);
        j.raw("}");
        Answer {
            body: j.buf,
            tokens: completion as u64,
            state_bytes: 0,
        }
    }

    fn completion_whole(&self, body: Body<'_>) -> Res<Answer> {
        let gens = body.generate_responses.as_deref().ok_or_else(|| {
            WireError::bad_param("missing field `generate_responses`", "generate_responses")
        })?;
        if gens.is_empty() {
            return Err(WireError::bad_param(
                "generate_responses must not be empty",
                "generate_responses",
            ));
        }
        if gens.len() > MAX_CHOICES {
            return Err(WireError::bad_param(
                format!(
                    "generate_responses count ({}) exceeds the maximum ({MAX_CHOICES})",
                    gens.len()
                ),
                "generate_responses",
            ));
        }
        for (i, g) in gens.iter().enumerate() {
            self.check_limits(g, &format!("generate_responses[{i}]"))?;
        }
        let prompt_tokens: Option<Vec<i64>> = raw_as(body.prompt_tokens, "prompt_tokens")?;
        let prompt_ids: Option<Vec<Option<Vec<u32>>>> =
            raw_as(body.prompt_token_ids, "prompt_token_ids")?;
        for (name, len) in [
            ("prompt_tokens", prompt_tokens.as_ref().map(Vec::len)),
            ("prompt_token_ids", prompt_ids.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len.filter(|&l| l != gens.len()) {
                return Err(WireError::bad_param(
                    format!(
                        "{name} length ({len}) must equal generate_responses length ({})",
                        gens.len()
                    ),
                    name,
                ));
            }
        }
        let p = Params::new(body.completion_request.as_deref(), false);
        let mut total_prompt: i64 = 0;
        let mut total_completion: usize = 0;
        let mut j = Json::with_capacity(1024);
        j.raw("{\"id\":");
        j.str(&request_id_of(&gens[0]));
        j.raw(",\"object\":\"text_completion\",\"created\":");
        j.u64(now());
        j.raw(",\"model\":");
        j.str(self.model_name(&body));
        j.raw(",\"choices\":[");
        let mut index: u64 = 0;
        for (g, resp) in gens.iter().enumerate() {
            let from_request = prompt_ids
                .as_ref()
                .and_then(|v| v.get(g))
                .and_then(Option::as_deref);
            let prompt = from_request.or(resp.prompt_token_ids.as_deref());
            total_prompt += prompt_tokens
                .as_ref()
                .and_then(|v| v.get(g))
                .copied()
                .unwrap_or(0);
            for c in &resp.choices {
                let o = self.whole_choice(c, prompt, &p)?;
                total_completion += c.token_ids.as_ref().map_or(0, Vec::len);
                if index > 0 {
                    j.raw(",");
                }
                j.raw("{\"index\":");
                j.u64(index);
                index += 1;
                j.raw(",\"text\":");
                j.str(&o.text);
                j.raw(",\"logprobs\":");
                write_completion_logprobs(&mut j, &o.logprobs, 0);
                write_finish(&mut j, o.finish_reason.as_deref(), o.stop_reason.as_ref());
                j.raw(",\"token_ids\":");
                j.opt_ids(c.token_ids.as_deref().filter(|_| p.return_token_ids));
                j.raw(",\"prompt_logprobs\":");
                self.write_prompt_logprobs(&mut j, resp.prompt_logprobs.as_deref());
                j.raw(",\"prompt_token_ids\":");
                j.opt_ids(prompt.filter(|_| p.return_token_ids));
                j.raw("}");
            }
        }
        j.raw("],\"service_tier\":null,\"system_fingerprint\":null,\"usage\":");
        write_usage(&mut j, total_prompt, total_completion as i64, None);
        j.raw(",\"kv_transfer_params\":");
        write_raw(&mut j, gens[0].kv_transfer_params);
        j.raw("}");
        Ok(Answer {
            body: j.buf,
            tokens: total_completion as u64,
            state_bytes: 0,
        })
    }

    pub(super) fn write_prompt_logprobs(
        &self,
        j: &mut Json,
        p: Option<&[Option<Pairs<Obj<PromptLogprob>>>]>,
    ) {
        let Some(positions) = p else {
            j.raw("null");
            return;
        };
        j.raw("[");
        for (i, pos) in positions.iter().enumerate() {
            if i > 0 {
                j.raw(",");
            }
            let Some(pairs) = pos else {
                j.raw("null");
                continue;
            };
            j.raw("{");
            for (k, (key, lp)) in pairs.0.iter().enumerate() {
                if k > 0 {
                    j.raw(",");
                }
                j.str(key);
                j.raw(":{\"logprob\":");
                j.f64(clamp(Some(lp.logprob)));
                j.raw(",\"rank\":");
                match lp.rank {
                    Some(r) => j.i64(r),
                    None => j.raw("null"),
                }
                j.raw(",\"decoded_token\":");
                match (&lp.decoded_token, key.parse::<u32>()) {
                    (Some(t), _) => j.str(t),
                    (None, Ok(id)) => match self.det.logprob_token(id, &[]) {
                        Ok(t) => j.str(&t),
                        Err(_) => j.raw("null"),
                    },
                    (None, Err(_)) => j.raw("null"),
                }
                j.raw("}");
            }
            j.raw("}");
        }
        j.raw("]");
    }

    // --- streaming ------------------------------------------------------------------------------

    pub(super) fn check_state(&self, s: &State, p: &Params<'_>) -> Res<()> {
        let bad =
            |m: String| WireError::bad_param(format!("invalid stream_state: {m}"), "stream_state");
        if s.prev_tokens.len() > MAX_WINDOW {
            return Err(bad(format!(
                "prev_tokens length ({}) exceeds the maximum ({MAX_WINDOW})",
                s.prev_tokens.len()
            )));
        }
        if s.prefix_offset > s.read_offset || s.read_offset > s.prev_tokens.len() as u64 {
            return Err(bad(format!(
                "offsets must satisfy prefix_offset ({}) <= read_offset ({}) <= len(prev_tokens) \
                 ({})",
                s.prefix_offset,
                s.read_offset,
                s.prev_tokens.len()
            )));
        }
        if s.logprob_context_token_ids.len() > CONTEXT {
            return Err(bad(format!(
                "logprob_context_token_ids holds {} ids; at most {CONTEXT} are carried",
                s.logprob_context_token_ids.len()
            )));
        }
        if s.output_chunk_lens.contains(&0) {
            return Err(bad("output_chunk_lens must be positive".to_owned()));
        }
        let total = s
            .output_chunk_lens
            .iter()
            .fold(0u64, |a, &b| a.saturating_add(b));
        if total != s.output_token_ids.len() as u64 {
            return Err(bad(format!(
                "output_chunk_lens must sum to len(output_token_ids) (got sum={total}, \
                 len(output_token_ids)={})",
                s.output_token_ids.len()
            )));
        }
        let held = s.held_text.chars().count();
        if held > p.max_held_chars() {
            return Err(bad(format!(
                "held_text has {held} chars; the request's stop strings allow at most {}",
                p.max_held_chars()
            )));
        }
        Ok(())
    }

    /// A stream request's generate chunk: present, at most one choice, within the limits.
    pub(super) fn stream_generate<'b, 'a>(
        &self,
        chunk: Option<&'b Generate<'a>>,
    ) -> Res<&'b Generate<'a>> {
        let resp = chunk.ok_or_else(|| {
            WireError::bad_param("missing field `generate_chunk`", "generate_chunk")
        })?;
        if resp.choices.len() > 1 {
            return Err(WireError::bad_param(
                format!(
                    "a stream chunk carries at most one choice, got {}; send one request per \
                     choice index, each with its own stream_state",
                    resp.choices.len()
                ),
                "generate_chunk.choices",
            ));
        }
        self.check_limits(resp, "generate_chunk")?;
        Ok(resp)
    }

    fn stream_chunk(&self, chat: bool, mut body: Body<'_>) -> Res<Answer> {
        let resp = self.stream_generate(body.generate_chunk.as_deref())?;
        let prompt_tokens: Option<i64> = raw_as(body.prompt_tokens, "prompt_tokens")?;
        let request = if chat {
            body.chat_request.as_ref()
        } else {
            body.completion_request.as_ref()
        };
        let p = Params::new(request.map(|r| &**r), chat);
        let carried = body.stream_state.is_some();
        let mut state = body.stream_state.take().map(|s| s.0).unwrap_or_default();
        self.check_state(&state, &p)?;

        let mut out = None;
        if let (Some(choice), false) = (resp.choices.first(), state.stopped) {
            let mut stream = if carried {
                let prefix = usize::try_from(state.prefix_offset).unwrap_or(usize::MAX);
                let read = usize::try_from(state.read_offset).unwrap_or(usize::MAX);
                self.det
                    .resume(&state.prev_tokens, prefix, read, p.skip_special)
                    .map_err(|e| {
                        WireError::bad_param(format!("invalid stream_state: {e}"), "stream_state")
                    })?
            } else {
                let request_ids: Option<Vec<u32>> =
                    raw_as(body.prompt_token_ids, "prompt_token_ids")?;
                let prompt = request_ids.as_deref().or(resp.prompt_token_ids.as_deref());
                self.new_stream(prompt, &p)
            };
            let mut progress = Progress {
                held: std::mem::take(&mut state.held_text),
                generated: state.generated_tokens,
                stopped: false,
            };
            let finish = choice.finish_reason.clone().flatten();
            let flush = finish.is_some();
            let o = self.choice_out(
                choice,
                finish,
                flush,
                &mut stream,
                &p,
                &mut progress,
                &mut state.logprob_context_token_ids,
            )?;
            let (tokens, _, read) = stream.window();
            state.prev_tokens = tokens.into_iter().map(str::to_owned).collect();
            state.prefix_offset = 0;
            state.read_offset = read as u64;
            state.held_text = progress.held;
            state.generated_tokens = progress.generated;
            state.stopped = progress.stopped;
            out = Some((choice, o));
        }

        let mut j = Json::with_capacity(512);
        open_chunk(&mut j, &request_id_of(resp), chat, self.model_name(&body));
        if let Some((choice, o)) = &out {
            j.raw("{\"index\":");
            j.u64(u64::from(choice.index));
            if chat {
                j.raw(",\"delta\":{\"role\":");
                j.raw(if state.role_sent {
                    "null"
                } else {
                    "\"assistant\""
                });
                state.role_sent = true;
                j.raw(",\"content\":");
                j.str(&o.text);
                j.raw(",\"reasoning\":null},\"logprobs\":");
                write_chat_logprobs(&mut j, &o.logprobs);
            } else {
                j.raw(",\"text\":");
                j.str(&o.text);
                j.raw(",\"logprobs\":");
                write_completion_logprobs(&mut j, &o.logprobs, state.logprob_text_offset);
            }
            write_finish(&mut j, o.finish_reason.as_deref(), o.stop_reason.as_ref());
            if !chat {
                j.raw(",\"prompt_token_ids\":null");
            }
            j.raw(",\"token_ids\":");
            j.opt_ids(choice.token_ids.as_deref().filter(|_| p.return_token_ids));
            j.raw("}");
            state.logprob_text_offset += o.text.chars().count() as u64;
        }
        let tokens = out
            .as_ref()
            .map_or(0, |(c, _)| c.token_ids.as_ref().map_or(0, Vec::len));
        Ok(close_chunk(j, resp, prompt_tokens, chat, &state, tokens))
    }
}

/// Opens a stream answer: `{"chunk":{"id":...,"object":...,"created":...,"model":...,"choices":[`.
pub(super) fn open_chunk(j: &mut Json, request_id: &str, chat: bool, model: &str) {
    j.raw("{\"chunk\":{\"id\":");
    j.str(request_id);
    j.raw(if chat {
        ",\"object\":\"chat.completion.chunk\",\"created\":"
    } else {
        ",\"object\":\"text_completion\",\"created\":"
    });
    j.u64(now());
    j.raw(",\"model\":");
    j.str(model);
    j.raw(",\"choices\":[");
}

/// Closes a stream answer after its choices: usage, then the state for the next call.
pub(super) fn close_chunk(
    mut j: Json,
    resp: &Generate<'_>,
    prompt_tokens: Option<i64>,
    chat: bool,
    state: &State,
    tokens: usize,
) -> Answer {
    j.raw("],\"usage\":");
    match &resp.usage {
        None => j.raw("null"),
        Some(u) => write_usage(
            &mut j,
            prompt_tokens.or(u.prompt_tokens).unwrap_or(0),
            u.completion_tokens.unwrap_or(0),
            Some((u.prompt_tokens_details, u.completion_tokens_details)),
        ),
    }
    if chat {
        j.raw(",\"prompt_token_ids\":null");
    }
    j.raw("},\"stream_state\":");
    let state_at = j.buf.len();
    write_state(&mut j, state);
    let state_bytes = (j.buf.len() - state_at) as u64;
    j.raw("}");
    Answer {
        body: j.buf,
        tokens: tokens as u64,
        state_bytes,
    }
}

/// The generate request id, or a fresh one.
pub(super) fn request_id_of<'r>(resp: &'r Generate<'_>) -> Cow<'r, str> {
    match resp.request_id.as_deref() {
        Some(id) => Cow::Borrowed(id),
        None => Cow::Owned(random_id()),
    }
}

fn write_bytes(j: &mut Json, token: &str, sent: Option<&[u8]>) {
    match sent {
        Some(bytes) => {
            j.raw("[");
            for (i, &b) in bytes.iter().enumerate() {
                if i > 0 {
                    j.raw(",");
                }
                j.u64(u64::from(b));
            }
            j.raw("]");
        }
        None => j.utf8_bytes(token),
    }
}

/// The id of a `"token_id:N"` placeholder (`N` decimal digits); `None` for other text.
fn placeholder(token: &str) -> Res<Option<u32>> {
    let Some(digits) = token.strip_prefix("token_id:") else {
        return Ok(None);
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    digits.parse::<u32>().map(Some).map_err(|_| {
        WireError::bad(format!(
            "logprob token `{}` names an id beyond the vocabulary's range",
            clip(token)
        ))
    })
}

pub(super) fn write_raw(j: &mut Json, raw: Option<&RawValue>) {
    j.raw(raw.map_or("null", RawValue::get));
}

pub(super) fn write_finish(j: &mut Json, finish: Option<&str>, stop: Option<&StopReason<'_>>) {
    j.raw(",\"finish_reason\":");
    j.opt_str(finish);
    j.raw(",\"stop_reason\":");
    match stop {
        None => j.raw("null"),
        Some(StopReason::Id(id)) => j.u64(*id),
        Some(StopReason::Text(t)) => j.str(t),
    }
}

pub(super) fn write_usage(
    j: &mut Json,
    prompt: i64,
    completion: i64,
    details: Option<(Option<&RawValue>, Option<&RawValue>)>,
) {
    let (pd, cd) = details.unwrap_or((None, None));
    j.raw("{\"prompt_tokens\":");
    j.i64(prompt);
    j.raw(",\"total_tokens\":");
    j.i64(prompt.saturating_add(completion));
    j.raw(",\"completion_tokens\":");
    j.i64(completion);
    j.raw(",\"prompt_tokens_details\":");
    write_raw(j, pd);
    j.raw(",\"completion_tokens_details\":");
    write_raw(j, cd);
    j.raw("}");
}

pub(super) fn write_chat_logprobs(j: &mut Json, lps: &Option<Option<Vec<Lp>>>) {
    let content = match lps {
        None => return j.raw("null"),
        Some(None) => return j.raw("{\"content\":null}"),
        Some(Some(c)) => c,
    };
    j.raw("{\"content\":[");
    for (i, lp) in content.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.raw("{\"token\":");
        j.str(&lp.token);
        j.raw(",\"logprob\":");
        j.f64(lp.logprob);
        j.raw(",\"bytes\":");
        write_bytes(j, &lp.token, lp.bytes.as_deref());
        j.raw(",\"top_logprobs\":[");
        for (k, c) in lp.top.iter().enumerate() {
            if k > 0 {
                j.raw(",");
            }
            j.raw("{\"token\":");
            j.str(&c.token);
            j.raw(",\"logprob\":");
            j.f64(c.logprob);
            j.raw(",\"bytes\":");
            write_bytes(j, &c.token, c.bytes.as_deref());
            j.raw("}");
        }
        j.raw("]}");
    }
    j.raw("]}");
}

/// The completion shape: parallel lists, `text_offset` counted in chars from `offset`.
fn write_completion_logprobs(j: &mut Json, lps: &Option<Option<Vec<Lp>>>, offset: u64) {
    let content = match lps {
        None => return j.raw("null"),
        Some(None) => {
            return j.raw(
                "{\"text_offset\":[],\"token_logprobs\":[],\"tokens\":[],\"top_logprobs\":[]}",
            );
        }
        Some(Some(c)) => c,
    };
    j.raw("{\"text_offset\":[");
    let mut at = offset;
    for (i, lp) in content.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.u64(at);
        at += lp.token.chars().count() as u64;
    }
    j.raw("],\"token_logprobs\":[");
    for (i, lp) in content.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.f64(lp.logprob);
    }
    j.raw("],\"tokens\":[");
    for (i, lp) in content.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.str(&lp.token);
    }
    j.raw("],\"top_logprobs\":[");
    for (i, lp) in content.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        if lp.top.is_empty() {
            j.raw("null");
            continue;
        }
        // A dict: the first position of a repeated text, the last value (as Python builds it).
        j.raw("{");
        let mut first = true;
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
            if !first {
                j.raw(",");
            }
            first = false;
            j.str(t);
            j.raw(":");
            j.f64(value);
        }
        j.raw("}");
    }
    j.raw("]}");
}

pub(super) fn write_state(j: &mut Json, s: &State) {
    j.raw("{\"prev_tokens\":[");
    for (i, t) in s.prev_tokens.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.str(t);
    }
    j.raw("],\"prefix_offset\":");
    j.u64(s.prefix_offset);
    j.raw(",\"read_offset\":");
    j.u64(s.read_offset);
    j.raw(",\"role_sent\":");
    j.bool(s.role_sent);
    j.raw(",\"logprob_context_token_ids\":");
    j.ids(&s.logprob_context_token_ids);
    j.raw(",\"logprob_text_offset\":");
    j.u64(s.logprob_text_offset);
    j.raw(",\"output_token_ids\":");
    j.ids(&s.output_token_ids);
    j.raw(",\"output_chunk_lens\":[");
    for (i, n) in s.output_chunk_lens.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.u64(*n);
    }
    j.raw("],\"tools_streamed\":");
    j.bool(s.tools_streamed);
    j.raw(",\"last_tool_call_ids\":[");
    for (i, t) in s.last_tool_call_ids.iter().enumerate() {
        if i > 0 {
            j.raw(",");
        }
        j.str(t);
    }
    j.raw("],\"held_text\":");
    j.str(&s.held_text);
    j.raw(",\"generated_tokens\":");
    j.u64(s.generated_tokens);
    j.raw(",\"stopped\":");
    j.bool(s.stopped);
    if let Some(parser) = &s.parser {
        j.raw(",\"parser\":");
        // A plain struct of strings, numbers and booleans: serializing it cannot fail.
        if serde_json::to_writer(&mut j.buf, &parser.0).is_err() {
            j.raw("null");
        }
    }
    j.raw("}");
}
