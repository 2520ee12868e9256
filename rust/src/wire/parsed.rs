//! Chat derender with reasoning and tool parsers (REFERENCE section 6).
//!
//! Text is decoded with special tokens kept (the markers must be seen) and fed to the parsers
//! one token at a time. Whole responses parse the whole output; a stream chunk continues the
//! parsers from the state it carries (resumable), or rebuilds them by replaying every earlier
//! chunk with its original boundaries (replay, vLLM's way, also used to continue a state that
//! carries only the replay buffer).

use std::borrow::Cow;

use super::derender::{
    Answer, Params, Res, close_chunk, now, open_chunk, raw_as, request_id_of, write_chat_logprobs,
    write_finish,
};
use super::input::{Body, Generate, Obj, Request, State};
use super::json::Json;
use super::{Derenderer, WireError};
use crate::Parsers;
use crate::parse::{Delta, ParseState, ToolRules, tool_call_id};
use crate::stream::Stream;

/// A whole call, assembled from its deltas.
struct Call {
    index: u32,
    name: String,
    arguments: String,
}

/// What the request asks of the parsers.
struct Ask {
    rules: ToolRules,
    include_reasoning: bool,
    /// `tool_choice` names a function: `finish_reason` is never rewritten.
    named: bool,
}

impl Ask {
    fn new(req: &Request<'_>) -> Ask {
        let choice = req.tool_choice.map(|r| r.get().trim_start());
        let named = choice.is_some_and(|c| c.starts_with('{'));
        let none = choice == Some("\"none\"");
        let has_tools = req.tools.as_ref().is_some_and(|t| !t.is_empty());
        Ask {
            rules: ToolRules {
                enabled: has_tools && !none,
                parallel: req.parallel_tool_calls.unwrap_or(true),
            },
            include_reasoning: req.include_reasoning.unwrap_or(true),
            named,
        }
    }
}

fn decode_err(e: crate::Error) -> WireError {
    WireError::bad(format!("cannot detokenize: {e}"))
}

impl Derenderer {
    fn parsers_or_bug(&self) -> Res<&Parsers> {
        self.parsers
            .as_ref()
            .ok_or_else(|| WireError::bad("no parser is configured"))
    }

    /// The original request, which the parsers need.
    fn chat_request<'b>(body: &'b Body<'_>) -> Res<&'b Request<'b>> {
        match body.chat_request.as_deref() {
            Some(r) => Ok(r),
            None => Err(WireError::bad_param(
                "chat_request is required when a reasoning or tool parser is configured",
                "chat_request",
            )),
        }
    }

    fn required_prompt<'b>(
        request_ids: Option<&'b [u32]>,
        resp: &'b Generate<'_>,
    ) -> Res<&'b [u32]> {
        request_ids
            .or(resp.prompt_token_ids.as_deref())
            .ok_or_else(|| {
                WireError::bad_param(
                    "prompt_token_ids (the whole prompt) is required when a reasoning or tool \
                     parser is configured: the prompt decides whether the output starts in \
                     reasoning",
                    "prompt_token_ids",
                )
            })
    }

    /// Feeds `ids` through the stream and the parsers, one token at a time; with `flush`, the
    /// output ends here. Returns how many chars of text the ids decoded to.
    fn parse_ids(
        stream: &mut Stream,
        ids: &[u32],
        flush: bool,
        ps: &mut ParseState,
        pz: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) -> Res<u64> {
        let mut chars = 0;
        for &id in ids {
            let text = stream.step(&[id]).map_err(decode_err)?;
            chars += text.chars().count();
            ps.feed(text, pz.tag(id), pz, rules, out);
        }
        if flush {
            let text = stream.finish().map_err(decode_err)?;
            chars += text.chars().count();
            ps.feed(text, None, pz, rules, out);
            ps.finish(pz, rules, out);
        }
        Ok(chars as u64)
    }

    fn no_stop_strings(p: &Params<'_>) -> Res<()> {
        if p.stops.is_empty() {
            Ok(())
        } else {
            Err(WireError::bad_param(
                "stop strings cannot be combined with a reasoning or tool parser",
                "chat_request.stop",
            ))
        }
    }

    pub(super) fn chat_whole_parsed(&self, body: Body<'_>) -> Res<Answer> {
        let pz = self.parsers_or_bug()?;
        let resp = body.generate_response.as_deref().ok_or_else(|| {
            WireError::bad_param("missing field `generate_response`", "generate_response")
        })?;
        self.check_limits(resp, "generate_response")?;
        let req = Self::chat_request(&body)?;
        let mut p = Params::new(Some(req), true);
        p.skip_special = false;
        Self::no_stop_strings(&p)?;
        let ask = Ask::new(req);
        let prompt_tokens: i64 = raw_as(body.prompt_tokens, "prompt_tokens")?.unwrap_or(0);
        let request_ids: Option<Vec<u32>> = raw_as(body.prompt_token_ids, "prompt_token_ids")?;
        let prompt = Self::required_prompt(request_ids.as_deref(), resp)?;
        let request_id = request_id_of(resp);

        let mut j = Json::with_capacity(1024);
        j.raw("{\"id\":");
        j.str(&request_id);
        j.raw(",\"object\":\"chat.completion\",\"created\":");
        j.u64(now());
        j.raw(",\"model\":");
        j.str(self.model_name(&body));
        j.raw(",\"choices\":[");
        let mut completion = 0usize;
        for (i, choice) in resp.choices.iter().enumerate() {
            let ids = choice.token_ids.as_deref().unwrap_or_default();
            if ids.is_empty() {
                return Err(WireError::bad(format!(
                    "choice {} has empty or null token_ids",
                    choice.index
                )));
            }
            completion += ids.len();
            let finish = match &choice.finish_reason {
                None => Some(Cow::Borrowed("stop")),
                Some(f) => f.clone(),
            };
            let (keep, stop_reason) = self.stop_token(ids, choice, finish.as_deref(), &p);
            let mut stream = self.det.stream(prompt, false);
            let mut ps = pz.initial(prompt);
            let mut delta = Delta::default();
            let kept = ids.get(..keep).unwrap_or_default();
            Self::parse_ids(&mut stream, kept, true, &mut ps, pz, ask.rules, &mut delta)?;
            let calls = assemble(&delta);
            let logprobs = self.choice_logprobs(choice, p.top, &mut Vec::new())?;
            let finish = rewrite_finish(finish, !calls.is_empty(), ask.named);

            if i > 0 {
                j.raw(",");
            }
            j.raw("{\"index\":");
            j.u64(u64::from(choice.index));
            j.raw(",\"message\":{\"role\":\"assistant\",\"content\":");
            opt_text(&mut j, &delta.content);
            j.raw(
                ",\"refusal\":null,\"annotations\":null,\"audio\":null,\"function_call\":null,\
                 \"tool_calls\":[",
            );
            for (k, call) in calls.iter().enumerate() {
                if k > 0 {
                    j.raw(",");
                }
                j.raw("{\"id\":");
                j.str(&tool_call_id(&request_id, choice.index, call.index));
                j.raw(",\"type\":\"function\",\"function\":{\"name\":");
                j.str(&call.name);
                j.raw(",\"arguments\":");
                j.str(&call.arguments);
                j.raw("}}");
            }
            j.raw("],\"reasoning\":");
            if ask.include_reasoning {
                opt_text(&mut j, &delta.reasoning);
            } else {
                j.raw("null");
            }
            j.raw("},\"logprobs\":");
            write_chat_logprobs(&mut j, &logprobs);
            write_finish(&mut j, finish.as_deref(), stop_reason.as_ref());
            j.raw(",\"token_ids\":");
            j.opt_ids(choice.token_ids.as_deref().filter(|_| p.return_token_ids));
            j.raw("}");
        }
        Ok(self.close_whole_chat(j, resp, prompt_tokens, completion, Some(prompt), &p))
    }

    pub(super) fn chat_stream_parsed(&self, mut body: Body<'_>) -> Res<Answer> {
        let pz = self.parsers_or_bug()?;
        let carried = body.stream_state.is_some();
        let mut state: State = body
            .stream_state
            .take()
            .map(|s: Obj<State>| s.0)
            .unwrap_or_default();
        let resp = self.stream_generate(body.generate_chunk.as_deref())?;
        let req = Self::chat_request(&body)?;
        let mut p = Params::new(Some(req), true);
        p.skip_special = false;
        Self::no_stop_strings(&p)?;
        let ask = Ask::new(req);
        let prompt_tokens: Option<i64> = raw_as(body.prompt_tokens, "prompt_tokens")?;
        let request_ids: Option<Vec<u32>> = raw_as(body.prompt_token_ids, "prompt_token_ids")?;
        self.check_state(&state, &p)?;
        if let Some(Err(e)) = state.parser.as_deref().map(ParseState::check) {
            return Err(WireError::bad_param(
                format!("invalid stream_state.parser: {e}"),
                "stream_state",
            ));
        }
        if state.output_token_ids.len() > self.max_model_len.unwrap_or(usize::MAX) {
            return Err(WireError::bad_param(
                "stream_state.output_token_ids is longer than max_model_len",
                "stream_state",
            ));
        }
        let request_id = request_id_of(resp);

        let mut out = None;
        if let Some(choice) = resp.choices.first() {
            let replay = self.replay || !carried || state.parser.is_none();
            let (mut stream, mut ps) = if replay {
                let prompt = Self::required_prompt(request_ids.as_deref(), resp)?;
                let mut stream = self.det.stream(prompt, false);
                let mut ps = pz.initial(prompt);
                let mut scratch = Delta::default();
                let mut at = 0usize;
                for &n in &state.output_chunk_lens {
                    let n = usize::try_from(n).unwrap_or(usize::MAX);
                    let chunk = state
                        .output_token_ids
                        .get(at..at.saturating_add(n))
                        .unwrap_or_default();
                    at = at.saturating_add(n);
                    Self::parse_ids(
                        &mut stream,
                        chunk,
                        false,
                        &mut ps,
                        pz,
                        ask.rules,
                        &mut scratch,
                    )?;
                    scratch = Delta::default();
                }
                (stream, ps)
            } else {
                let prefix = usize::try_from(state.prefix_offset).unwrap_or(usize::MAX);
                let read = usize::try_from(state.read_offset).unwrap_or(usize::MAX);
                let stream = self
                    .det
                    .resume(&state.prev_tokens, prefix, read, false)
                    .map_err(|e| {
                        WireError::bad_param(format!("invalid stream_state: {e}"), "stream_state")
                    })?;
                (stream, state.parser.take().map(|p| p.0).unwrap_or_default())
            };
            let ids = choice.token_ids.as_deref().unwrap_or_default();
            let finish = choice.finish_reason.clone().flatten();
            let (keep, stop_reason) = self.stop_token(ids, choice, finish.as_deref(), &p);
            let mut delta = Delta::default();
            let kept = ids.get(..keep).unwrap_or_default();
            state.logprob_text_offset += Self::parse_ids(
                &mut stream,
                kept,
                finish.is_some(),
                &mut ps,
                pz,
                ask.rules,
                &mut delta,
            )?;
            let logprobs =
                self.choice_logprobs(choice, p.top, &mut state.logprob_context_token_ids)?;

            let (tokens, _, read) = stream.window();
            state.prev_tokens = tokens.into_iter().map(str::to_owned).collect();
            state.prefix_offset = 0;
            state.read_offset = read as u64;
            state.generated_tokens += ids.len() as u64;
            let started: Vec<u32> = delta
                .calls
                .iter()
                .filter(|c| c.name.is_some())
                .map(|c| c.index)
                .collect();
            state.tools_streamed |= !started.is_empty();
            if self.replay {
                state.output_token_ids.extend_from_slice(ids);
                if !ids.is_empty() {
                    state.output_chunk_lens.push(ids.len() as u64);
                }
                for &index in &started {
                    if state.last_tool_call_ids.len() == index as usize {
                        state.last_tool_call_ids.push(tool_call_id(
                            &request_id,
                            choice.index,
                            index,
                        ));
                    }
                }
                state.parser = None;
            } else {
                state.output_token_ids.clear();
                state.output_chunk_lens.clear();
                state.parser = Some(Obj(ps));
            }
            let finish = rewrite_finish(finish, state.tools_streamed, ask.named);
            out = Some((choice, delta, logprobs, finish, stop_reason));
        }

        let mut j = Json::with_capacity(512);
        open_chunk(&mut j, &request_id, true, self.model_name(&body));
        if let Some((choice, delta, logprobs, finish, stop_reason)) = &out {
            j.raw("{\"index\":");
            j.u64(u64::from(choice.index));
            j.raw(",\"delta\":{\"role\":");
            j.raw(if state.role_sent {
                "null"
            } else {
                "\"assistant\""
            });
            state.role_sent = true;
            j.raw(",\"content\":");
            opt_text(&mut j, &delta.content);
            j.raw(",\"reasoning\":");
            if ask.include_reasoning {
                opt_text(&mut j, &delta.reasoning);
            } else {
                j.raw("null");
            }
            if !delta.calls.is_empty() {
                j.raw(",\"tool_calls\":[");
                for (k, call) in delta.calls.iter().enumerate() {
                    if k > 0 {
                        j.raw(",");
                    }
                    match &call.name {
                        Some(name) => {
                            j.raw("{\"id\":");
                            j.str(&tool_call_id(&request_id, choice.index, call.index));
                            j.raw(",\"type\":\"function\",\"index\":");
                            j.u64(u64::from(call.index));
                            j.raw(",\"function\":{\"name\":");
                            j.str(name);
                        }
                        None => {
                            j.raw("{\"id\":null,\"type\":null,\"index\":");
                            j.u64(u64::from(call.index));
                            j.raw(",\"function\":{\"name\":null");
                        }
                    }
                    j.raw(",\"arguments\":");
                    j.str(&call.arguments);
                    j.raw("}}");
                }
                j.raw("]");
            }
            j.raw("},\"logprobs\":");
            write_chat_logprobs(&mut j, logprobs);
            write_finish(&mut j, finish.as_deref(), stop_reason.as_ref());
            j.raw(",\"token_ids\":");
            j.opt_ids(choice.token_ids.as_deref().filter(|_| p.return_token_ids));
            j.raw("}");
        }
        let tokens = out
            .as_ref()
            .map_or(0, |(c, ..)| c.token_ids.as_ref().map_or(0, Vec::len));
        Ok(close_chunk(j, resp, prompt_tokens, true, &state, tokens))
    }
}

/// `"tool_calls"` for a choice that called tools and that the engine stopped, unless the
/// request named the function (then the call was asked for, not chosen).
fn rewrite_finish<'a>(
    finish: Option<Cow<'a, str>>,
    tools: bool,
    named: bool,
) -> Option<Cow<'a, str>> {
    match finish {
        Some(f) if f == "stop" && tools && !named => Some(Cow::Borrowed("tool_calls")),
        other => other,
    }
}

/// A text, or null when it is empty.
fn opt_text(j: &mut Json, text: &str) {
    if text.is_empty() {
        j.raw("null");
    } else {
        j.str(text);
    }
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
