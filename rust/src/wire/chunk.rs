//! Stream chunks: one generate chunk and the state the previous call returned in, the chunk's
//! OpenAI delta and the next state out. Plain chat, completions and chat with a parser take the
//! one path below; only where a choice's text goes differs ([`Text`]), and what the state keeps
//! of it.

use super::checks;
use super::choice::{self, Progress, Text};
use super::config::Config;
use super::error::{Res, WireError};
use super::finish::FinishReason;
use super::input::{Body, Obj, raw_as};
use super::json::Json;
use super::json::key;
use super::logprobs::Logprobs;
use super::output::{self, Answer, Chat, Form};
use super::request::hides_reasoning;
use crate::parse::{Context, tool_call_id};
use crate::stop::Held;
use crate::stream::Stream;

/// `POST` of a stream chunk to either endpoint (`chat` says which).
pub(crate) fn chunk(c: &Config, chat: bool, body: &mut Body<'_>) -> Res<Answer> {
    let carried = body.stream_state.is_some();
    let mut state = body.stream_state.take().map(|s| s.0).unwrap_or_default();
    let resp = checks::stream_generate(body.generate_chunk.as_deref(), c.max_model_len)?;
    let parser = c.parser.as_deref().filter(|_| chat);
    let (p, ask) = checks::params(body, chat, parser.is_some())?;
    if parser.is_some_and(|parser| c.replays(parser)) {
        checks::no_stop_strings(&p)?;
    }
    let prompt_tokens: Option<i64> = raw_as(body.prompt_tokens, "prompt_tokens")?;
    if let Some(n) = prompt_tokens {
        checks::count(n, "prompt_tokens")?;
    }
    let request_ids: Option<Vec<u32>> = raw_as(body.prompt_token_ids, "prompt_token_ids")?;
    if chat {
        checks::chat_stream_len(request_ids.as_deref(), &state, resp, c.max_model_len)?;
    } else {
        checks::prompt_len(request_ids.as_deref(), c.max_model_len)?;
    }
    checks::state(&state, &p)?;
    if parser.is_some() {
        checks::parser_state(&state, c.max_model_len)?;
    } else {
        // The parsers' fields mean nothing here: they are not carried on (a state from a
        // parsing server, or a forged one, would otherwise come back as large as it was sent).
        state.output_token_ids = Vec::new();
        state.output_chunk_lens = Vec::new();
        state.last_tool_call_ids = Vec::new();
        state.tools_streamed = false;
        state.parser = None;
    }
    let request_id = output::request_id_of(resp);

    let mut out = None;
    // A stream a stop string ended answers later chunks with no choice.
    let ended = state.stopped;
    if let (Some(choice), false) = (resp.choices.first(), ended) {
        let finish = choice.finish_reason.clone().flatten().map(FinishReason::of);
        let flush = finish.is_some();
        let ids = choice.token_ids.as_deref().unwrap_or_default();
        let replays = parser.is_some_and(|parser| c.replays(parser));
        let progress = Progress {
            held: Held::new(std::mem::take(&mut state.held_text)),
            generated: state.generated_tokens,
            stopped: false,
        };
        let (mut stream, mut text) = match (parser, &ask) {
            (Some(parser), Some(ask)) => {
                let mut cx = Context {
                    prompt: &[],
                    request: match parser.needs_request() {
                        true => body.chat_request.as_ref().and_then(|r| r.raw),
                        false => None,
                    },
                    rules: ask.rules,
                    whole: false,
                };
                if replays || !carried || state.parser.is_none() {
                    cx.prompt = checks::required_prompt(request_ids.as_deref(), resp)?;
                    let mut stream = Stream::new(&c.det, cx.prompt, false);
                    let mut session = parser.start(&cx).map_err(choice::parse_err)?;
                    choice::replay(&mut stream, &mut *session, &state)?;
                    (stream, Text::Parsed(session, progress))
                } else {
                    let stream = choice::resume(&c.det, &state, false)?;
                    let carried = state.parser.take().map(|p| p.0).unwrap_or_default();
                    let session = parser
                        .resume(carried, &cx)
                        .ok_or_else(|| WireError::internal("the parser cannot resume"))?;
                    (stream, Text::Parsed(session, progress))
                }
            }
            _ => {
                let stream = if carried {
                    choice::resume(&c.det, &state, p.skip_special)?
                } else {
                    let prompt = request_ids.as_deref().or(resp.prompt_token_ids.as_deref());
                    Stream::new(&c.det, prompt.unwrap_or_default(), p.skip_special)
                };
                (stream, Text::Plain(progress))
            }
        };
        let turn = choice::Turn {
            choice,
            finish,
            flush,
        };
        let mut o = choice::derender(
            c,
            turn,
            &mut stream,
            &p,
            &mut text,
            &mut state.logprob_context_token_ids,
        )?;
        choice::write_back(&mut state, &stream);
        match text {
            Text::Parsed(session, progress) => {
                state.held_text = p.stops.held_text(progress.held);
                state.stopped = progress.stopped;
                state.generated_tokens += ids.len() as u64;
                let calls = o
                    .parsed
                    .as_ref()
                    .map(|d| d.calls.as_slice())
                    .unwrap_or_default();
                let mut started = calls.iter().filter(|c| c.name.is_some()).map(|c| c.index);
                if replays {
                    for index in started {
                        if state.last_tool_call_ids.len() == index as usize {
                            let id = tool_call_id(&request_id, choice.index, index);
                            state.last_tool_call_ids.push(id);
                        }
                        state.tools_streamed = true;
                    }
                    state.output_token_ids.extend_from_slice(ids);
                    if !ids.is_empty() {
                        state.output_chunk_lens.push(ids.len() as u64);
                    }
                    state.parser = None;
                } else {
                    state.tools_streamed |= started.next().is_some();
                    state.output_token_ids.clear();
                    state.output_chunk_lens.clear();
                    state.parser = session.into_state().map(Obj);
                }
                let named = ask.as_ref().is_some_and(|a| a.named);
                o.finish_reason = o
                    .finish_reason
                    .map(|f| f.rewritten(state.tools_streamed, named));
            }
            Text::Plain(progress) => {
                state.held_text = p.stops.held_text(progress.held);
                state.generated_tokens = progress.generated;
                state.stopped = progress.stopped;
            }
        }
        out = Some((choice, o));
    }

    // An answer is some 700 bytes plus a few hundred a logprob position: sized once, it is
    // written without growing.
    let positions = resp
        .choices
        .first()
        .and_then(|c| c.logprobs.as_ref())
        .and_then(|l| l.content.as_ref())
        .map_or(0, Vec::len);
    let mut j = Json::with_capacity(1024 + 448 * positions.min(1024));
    let model = c.model_name(body.model.as_deref());
    output::open(&mut j, Form::Chunk, chat, &request_id, model);
    let hide = hides_reasoning(ask.as_ref());
    if let Some((choice, o)) = &out {
        j.obj();
        key!(j, "index");
        j.u64(u64::from(choice.index));
        let logprobs = if hide { &Logprobs::Absent } else { &o.logprobs };
        if chat {
            let say = Chat::new(&request_id, ask.as_ref());
            say.delta(&mut j, choice.index, o, state.role_sent);
            state.role_sent = true;
            key!(j, "logprobs");
            output::chat_logprobs(&mut j, logprobs);
        } else {
            key!(j, "text");
            j.str(&o.text);
            key!(j, "logprobs");
            output::completion_logprobs(&mut j, logprobs, state.logprob_text_offset);
        }
        output::finish(
            &mut j,
            o.finish_reason.as_ref().map(FinishReason::as_str),
            o.stop_reason.as_ref(),
        );
        if !chat {
            key!(j, "prompt_token_ids");
            j.opt_ids(
                resp.prompt_token_ids
                    .as_deref()
                    .filter(|_| p.return_token_ids),
            );
        }
        key!(j, "token_ids");
        j.opt_ids(
            choice
                .token_ids
                .as_deref()
                .filter(|_| p.return_token_ids && !hide),
        );
        key!(j, "weight_versions");
        j.null();
        j.end_obj();
        state.logprob_text_offset = match o.parsed {
            Some(_) => state.logprob_text_offset + o.chars,
            // vLLM's rule: past the reported token strings, else past the text.
            None => output::next_text_offset(logprobs, state.logprob_text_offset, &o.text),
        };
    }
    let tokens = out
        .as_ref()
        .map_or(0, |(c, _)| c.token_ids.as_ref().map_or(0, Vec::len));
    let prompt_ids = resp
        .prompt_token_ids
        .as_deref()
        .filter(|_| p.return_token_ids);
    Ok(output::close_chunk(
        j,
        resp,
        prompt_tokens,
        chat,
        prompt_ids,
        &state,
        tokens,
    ))
}
