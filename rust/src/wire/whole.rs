//! Whole responses: a generate response (chat) or a list of them (completions) in, the whole
//! OpenAI response out. Chat with and without a parser takes the one path below; only where a
//! choice's text goes differs ([`Text`]).

use super::checks;
use super::choice::{self, Out, Progress, Text};
use super::config::Config;
use super::error::{Res, WireError};
use super::finish::FinishReason;
use super::logprobs::Logprobs;
use serde_json::value::RawValue;

use super::input::{Body, Choice, raw_as};
use super::json::Json;
use super::json::key;
use super::output::{self, Answer, Chat, ChatPrompt, Form};
use super::request::{Params, hides_reasoning};
use crate::parse::Context;
use crate::stream::Stream;

/// A whole response's choice must carry ids; `at` is where the choice is in the body
/// (`generate_response.choices[0]`), for the error's `param`.
fn nonempty(choice: &Choice<'_>, at: impl FnOnce() -> String) -> Res<()> {
    if choice.token_ids.as_ref().is_none_or(Vec::is_empty) {
        return Err(WireError::bad_param(
            format!("choice {} has empty or null token_ids", choice.index),
            format!("{}.token_ids", at()),
        ));
    }
    Ok(())
}

/// A whole response's choice that says nothing of its finish defaults to `"stop"`.
fn whole_finish<'a>(choice: &Choice<'a>) -> Option<FinishReason<'a>> {
    match &choice.finish_reason {
        None => Some(FinishReason::Stop),
        Some(f) => f.clone().map(FinishReason::of),
    }
}

/// One choice of a whole response: its text complete, so flushed whatever the finish.
fn derender<'a>(
    c: &Config,
    choice: &Choice<'a>,
    prompt: &[u32],
    p: &Params<'_>,
    text: &mut Text<'_>,
    at: impl FnOnce() -> String,
) -> Res<Out<'a>> {
    nonempty(choice, at)?;
    let mut stream = Stream::new(&c.det, prompt, p.skip_special);
    let finish = whole_finish(choice);
    let turn = choice::Turn {
        choice,
        finish,
        flush: true,
    };
    choice::derender(c, turn, &mut stream, p, text, &mut Vec::new())
}

/// `POST /v1/chat/completions/derender` with a whole generate response.
pub(crate) fn chat(c: &Config, body: &Body<'_>) -> Res<Answer> {
    let resp = checks::required(body.generate_response.as_deref(), "generate_response")?;
    checks::limits(resp, "generate_response", c.max_model_len)?;
    let parser = c.parser.as_deref();
    let (p, ask) = checks::params(body, true, parser.is_some())?;
    let prompt_tokens: i64 = raw_as(body.prompt_tokens, "prompt_tokens")?.unwrap_or(0);
    checks::count(prompt_tokens, "prompt_tokens")?;
    let request_ids: Option<Vec<u32>> = raw_as(body.prompt_token_ids, "prompt_token_ids")?;
    checks::prompt_len(request_ids.as_deref(), c.max_model_len)?;
    // Without prompt ids a parser starts where it starts on an empty prompt, as vLLM's does.
    let prompt = request_ids.as_deref().or(resp.prompt_token_ids.as_deref());
    let hide = hides_reasoning(ask.as_ref());
    let request_id = output::request_id_of(resp);
    let mut outs = Vec::with_capacity(resp.choices.len());
    for (i, choice) in resp.choices.iter().enumerate() {
        let at = move || format!("generate_response.choices[{i}]");
        let prompt = prompt.unwrap_or_default();
        let out = match (parser, &ask) {
            (Some(parser), Some(ask)) => {
                nonempty(choice, at)?;
                let cx = Context {
                    prompt,
                    request: match parser.needs_request() {
                        true => body.chat_request.as_ref().and_then(|r| r.raw),
                        false => None,
                    },
                    rules: ask.rules,
                    whole: true,
                };
                let session = parser.start(&cx).map_err(choice::parse_err)?;
                let mut o = derender(
                    c,
                    choice,
                    prompt,
                    &p,
                    &mut Text::Parsed(session, Progress::default()),
                    at,
                )?;
                let called = o
                    .parsed
                    .as_ref()
                    .is_some_and(|d| d.calls.iter().any(|call| call.name.is_some()));
                o.finish_reason = o.finish_reason.map(|f| f.rewritten(called, ask.named));
                o
            }
            _ => {
                let text = &mut Text::Plain(Progress::default());
                derender(c, choice, prompt, &p, text, at)?
            }
        };
        outs.push(out);
    }
    let completion: usize = resp
        .choices
        .iter()
        .map(|c| c.token_ids.as_ref().map_or(0, Vec::len))
        .sum();

    let say = Chat::new(&request_id, ask.as_ref());
    let mut j = Json::with_capacity(512 + outs.iter().map(|o| o.text.len() * 2).sum::<usize>());
    let model = c.model_name(body.model.as_deref());
    output::open(&mut j, Form::Whole, true, &request_id, model);
    for (choice, o) in resp.choices.iter().zip(&outs) {
        j.obj();
        key!(j, "index");
        j.u64(u64::from(choice.index));
        say.message(&mut j, choice.index, o);
        key!(j, "logprobs");
        output::chat_logprobs(&mut j, if hide { &Logprobs::Absent } else { &o.logprobs });
        output::finish(
            &mut j,
            o.finish_reason.as_ref().map(FinishReason::as_str),
            o.stop_reason.as_ref(),
        );
        key!(j, "token_ids");
        j.opt_ids(
            choice
                .token_ids
                .as_deref()
                .filter(|_| p.return_token_ids && !hide),
        );
        key!(j, "routed_experts");
        j.null();
        key!(j, "weight_versions");
        j.null();
        j.end_obj();
    }
    // As vLLM: the generate response's prompt ids, when asked for.
    let prompt_ids = resp
        .prompt_token_ids
        .as_deref()
        .filter(|_| p.return_token_ids);
    let prompt = ChatPrompt {
        det: &c.det,
        logprobs: resp.prompt_logprobs.as_deref(),
        ids: prompt_ids,
    };
    Ok(output::close_whole(
        j,
        Some(prompt),
        resp.kv_transfer_params,
        resp.metrics.as_deref(),
        prompt_tokens,
        completion,
    ))
}

/// Whether two passed-through values are the same JSON (as Python compares the dicts).
fn same_json(a: Option<&RawValue>, b: Option<&RawValue>) -> bool {
    let value = |r: Option<&RawValue>| {
        r.map(|r| serde_json::from_str::<serde_json::Value>(r.get()).unwrap_or_default())
            .unwrap_or_default()
    };
    match (a, b) {
        (Some(a), Some(b)) if a.get() == b.get() => true,
        _ => value(a) == value(b),
    }
}

/// `POST /v1/completions/derender` with whole generate responses, one per prompt.
pub(crate) fn completion(c: &Config, body: &Body<'_>) -> Res<Answer> {
    let gens = checks::required(body.generate_responses.as_deref(), "generate_responses")?;
    if gens.is_empty() {
        return Err(WireError::bad_param(
            "generate_responses must not be empty",
            "generate_responses",
        ));
    }
    if gens.len() > checks::MAX_CHOICES {
        return Err(WireError::bad_param(
            format!(
                "generate_responses count ({}) exceeds the maximum ({})",
                gens.len(),
                checks::MAX_CHOICES
            ),
            "generate_responses",
        ));
    }
    for (i, g) in gens.iter().enumerate() {
        checks::limits(g, &format!("generate_responses[{i}]"), c.max_model_len)?;
    }
    let prompt_tokens: Option<Vec<i64>> = raw_as(body.prompt_tokens, "prompt_tokens")?;
    for &n in prompt_tokens.iter().flatten() {
        checks::count(n, "prompt_tokens")?;
    }
    let prompt_ids: Option<Vec<Option<Vec<u32>>>> =
        raw_as(body.prompt_token_ids, "prompt_token_ids")?;
    for ids in prompt_ids.iter().flatten() {
        checks::prompt_len(ids.as_deref(), c.max_model_len)?;
    }
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
    let p = Params::new(body.completion_request.as_deref(), false)?;
    let mut total_prompt: i64 = 0;
    let mut total_completion: usize = 0;
    let mut j = Json::with_capacity(1024);
    let request_id = output::request_id_of(&gens[0]);
    let model = c.model_name(body.model.as_deref());
    output::open(&mut j, Form::Whole, false, &request_id, model);
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
        for (i, choice) in resp.choices.iter().enumerate() {
            let at = move || format!("generate_responses[{g}].choices[{i}]");
            let text = &mut Text::Plain(Progress::default());
            let o = derender(c, choice, prompt.unwrap_or_default(), &p, text, at)?;
            total_completion += choice.token_ids.as_ref().map_or(0, Vec::len);
            j.obj();
            key!(j, "index");
            j.u64(index);
            index += 1;
            key!(j, "text");
            j.str(&o.text);
            key!(j, "logprobs");
            output::completion_logprobs(&mut j, &o.logprobs, 0);
            output::finish(
                &mut j,
                o.finish_reason.as_ref().map(FinishReason::as_str),
                o.stop_reason.as_ref(),
            );
            key!(j, "token_ids");
            j.opt_ids(choice.token_ids.as_deref().filter(|_| p.return_token_ids));
            key!(j, "prompt_logprobs");
            output::prompt_logprobs(&mut j, &c.det, resp.prompt_logprobs.as_deref());
            key!(j, "prompt_token_ids");
            j.opt_ids(
                resp.prompt_token_ids
                    .as_deref()
                    .filter(|_| p.return_token_ids),
            );
            key!(j, "routed_experts");
            j.null();
            key!(j, "weight_versions");
            j.null();
            j.end_obj();
        }
    }
    // As vLLM merges them: the first response's transfer parameters, null when they differ;
    // its metrics when there is one prompt (they describe one).
    let first = &gens[0];
    let kv = first.kv_transfer_params;
    let differ = gens
        .get(1..)
        .unwrap_or_default()
        .iter()
        .any(|g| !same_json(g.kv_transfer_params, kv));
    let metrics = first.metrics.as_deref().filter(|_| gens.len() == 1);
    Ok(output::close_whole(
        j,
        None,
        kv.filter(|_| !differ),
        metrics,
        total_prompt,
        total_completion,
    ))
}
