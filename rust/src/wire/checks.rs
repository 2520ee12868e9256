//! The checks a body passes before anything is decoded: resource limits, required fields, and
//! a carried stream state (it comes from the client, so it may be hostile).

use serde_json::value::RawValue;

use super::error::{Res, WireError, clip};
use super::input::{Body, Generate, Request, State};
use super::request::{Ask, Params};
use crate::logprobs::CONTEXT;
use crate::parse::ParseState;
use crate::vocab::MAX_WINDOW;

/// Most generate responses (completions) or choices a body may carry.
pub const MAX_CHOICES: usize = 256;
/// Most alternatives a logprob position may carry (OpenAI's limit).
pub const MAX_TOP_LOGPROBS: usize = 20;

/// A field the shape requires.
pub(crate) fn required<'b, T: ?Sized>(field: Option<&'b T>, name: &str) -> Res<&'b T> {
    field.ok_or_else(|| WireError::bad_param(format!("missing field `{name}`"), name))
}

/// Rejects payloads over the resource bounds before any decoding.
/// Largest token count or text offset accepted: 2**53 - 1, which every JSON reader keeps exact;
/// sums of a few hundred of them stay far inside `i64`, so no count derender adds can wrap.
pub const MAX_COUNT: i64 = (1 << 53) - 1;

/// Deepest nesting of a value passed through to the answer (`kv_transfer_params`, usage
/// details), as deep as the typed parts of a body may nest.
pub const MAX_DEPTH: usize = 128;

/// A count from the body or the generate side: 0 to [`MAX_COUNT`].
pub(crate) fn count(value: i64, name: &str) -> Res<i64> {
    if (0..=MAX_COUNT).contains(&value) {
        return Ok(value);
    }
    Err(WireError::bad_param(
        format!("{name} must be an integer from 0 to {MAX_COUNT}, got {value}"),
        name,
    ))
}

/// A passed-through JSON value nests at most [`MAX_DEPTH`] levels (a linear scan of its text),
/// so the answer is one any JSON reader can read back. The field's name is made only for an
/// error (every stream chunk passes here).
pub(crate) fn nesting(raw: Option<&RawValue>, name: impl Fn() -> String) -> Res<()> {
    let Some(raw) = raw else { return Ok(()) };
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in raw.get().as_bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    let name = name();
                    return Err(WireError::bad_param(
                        format!("{name} nests deeper than {MAX_DEPTH} levels"),
                        name,
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

pub(crate) fn limits(resp: &Generate<'_>, at: &str, max_model_len: Option<usize>) -> Res<()> {
    if let Some(mode) = resp.output_mode.as_deref().filter(|&m| m != "tokens") {
        return Err(WireError::bad_param(
            format!(
                "only output_mode \"tokens\" responses can be derendered, got \"{}\": the \
                 others are detokenized already, and decoding their token_ids again would undo \
                 the engine's stop string truncation",
                clip(mode)
            ),
            format!("{at}.output_mode"),
        ));
    }
    nesting(resp.kv_transfer_params, || {
        format!("{at}.kv_transfer_params")
    })?;
    if let Some(u) = resp.usage.as_deref() {
        nesting(u.prompt_tokens_details, || {
            format!("{at}.usage.prompt_tokens_details")
        })?;
        nesting(u.completion_tokens_details, || {
            format!("{at}.usage.completion_tokens_details")
        })?;
        for (v, name) in [
            (u.prompt_tokens, "prompt_tokens"),
            (u.completion_tokens, "completion_tokens"),
        ] {
            if let Some(v) = v {
                count(v, &format!("{at}.usage.{name}"))?;
            }
        }
    }
    if resp.choices.len() > MAX_CHOICES {
        return Err(WireError::bad_param(
            format!(
                "choices count ({}) exceeds the maximum ({MAX_CHOICES})",
                resp.choices.len()
            ),
            format!("{at}.choices"),
        ));
    }
    let max = max_model_len.unwrap_or(usize::MAX);
    for (i, c) in resp.choices.iter().enumerate() {
        let n = c.token_ids.as_ref().map_or(0, Vec::len);
        if n > max {
            return Err(WireError::bad_param(
                format!(
                    "token_ids length ({n}) in choice {} exceeds max_model_len ({max}).",
                    c.index
                ),
                format!("{at}.choices[{i}].token_ids"),
            ));
        }
        if let Some(content) = c.logprobs.as_ref().and_then(|l| l.content.as_ref()) {
            if content.len() > max {
                return Err(WireError::bad_param(
                    format!(
                        "logprobs.content length ({}) in choice {} exceeds max_model_len \
                         ({max}).",
                        content.len(),
                        c.index
                    ),
                    format!("{at}.choices[{i}].logprobs.content"),
                ));
            }
            for (k, e) in content.iter().enumerate() {
                let tops = e.top_logprobs.as_ref().map_or(0, Vec::len);
                if tops > MAX_TOP_LOGPROBS {
                    return Err(WireError::bad_param(
                        format!(
                            "top_logprobs count ({tops}) in choice {} exceeds max_logprobs \
                             ({MAX_TOP_LOGPROBS}).",
                            c.index
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

/// Prompt ids the request carries fit in `max_model_len` (vLLM's check and wording).
pub(crate) fn prompt_len(ids: Option<&[u32]>, max_model_len: Option<usize>) -> Res<()> {
    let (Some(ids), Some(max)) = (ids, max_model_len) else {
        return Ok(());
    };
    if ids.len() > max {
        return Err(WireError::bad_param(
            format!(
                "prompt_token_ids length ({}) exceeds max_model_len ({max}).",
                ids.len()
            ),
            "prompt_token_ids",
        ));
    }
    Ok(())
}

/// A chat stream chunk: the prompt, the output carried so far and the chunk's ids fit in
/// `max_model_len` together (vLLM's check and wording).
pub(crate) fn chat_stream_len(
    prompt: Option<&[u32]>,
    state: &State,
    chunk: &Generate<'_>,
    max_model_len: Option<usize>,
) -> Res<()> {
    let Some(max) = max_model_len else {
        return Ok(());
    };
    let prompt = prompt.map_or(0, <[u32]>::len);
    let prior = state.output_token_ids.len();
    let delta: usize = chunk
        .choices
        .iter()
        .map(|c| c.token_ids.as_ref().map_or(0, Vec::len))
        .sum();
    if prompt.saturating_add(prior).saturating_add(delta) > max {
        return Err(WireError::bad_param(
            format!(
                "prompt_token_ids length ({prompt}) plus output_token_ids length ({prior}) plus \
                 delta ({delta}) exceeds max_model_len ({max})."
            ),
            "prompt_token_ids",
        ));
    }
    Ok(())
}

/// A carried stream state is one derender could have written, for this request.
pub(crate) fn state(s: &State, p: &Params<'_>) -> Res<()> {
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
    for (v, name) in [
        (s.generated_tokens, "generated_tokens"),
        (s.logprob_text_offset, "logprob_text_offset"),
    ] {
        if v > MAX_COUNT as u64 {
            return Err(bad(format!("{name} must be at most {MAX_COUNT}, got {v}")));
        }
    }
    let held = s.held_text.chars().count();
    if held > p.stops.max_held_chars() {
        return Err(bad(format!(
            "held_text has {held} chars; the request's stop strings allow at most {}",
            p.stops.max_held_chars()
        )));
    }
    Ok(())
}

/// A stream request's generate chunk: present, at most one choice, within the limits.
pub(crate) fn stream_generate<'b, 'a>(
    chunk: Option<&'b Generate<'a>>,
    max_model_len: Option<usize>,
) -> Res<&'b Generate<'a>> {
    let resp = chunk
        .ok_or_else(|| WireError::bad_param("missing field `generate_chunk`", "generate_chunk"))?;
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
    limits(resp, "generate_chunk", max_model_len)?;
    Ok(resp)
}

/// The original request, which the parsers need.
pub(crate) fn chat_request<'b>(body: &'b Body<'_>) -> Res<&'b Request<'b>> {
    match body.chat_request.as_deref() {
        Some(r) => Ok(r),
        None => Err(WireError::bad_param(
            "chat_request is required when a reasoning or tool parser is configured",
            "chat_request",
        )),
    }
}

/// The request's parameters (the chat or the completion request's, as `chat` says), and with a
/// parser (`parsed`, chat only) what the request asks of it; the parser's markers must be seen,
/// so special tokens are not skipped.
pub(crate) fn params<'b>(
    body: &'b Body<'_>,
    chat: bool,
    parsed: bool,
) -> Res<(Params<'b>, Option<Ask>)> {
    if !parsed {
        let request = if chat {
            body.chat_request.as_deref()
        } else {
            body.completion_request.as_deref()
        };
        return Ok((Params::new(request, chat)?, None));
    }
    let req = chat_request(body)?;
    let mut p = Params::new(Some(req), true)?;
    p.skip_special = false;
    Ok((p, Some(Ask::new(req))))
}

/// The whole prompt, which the parsers need to know where the output starts.
pub(crate) fn required_prompt<'b>(
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

/// Stop strings are not applied in a stream whose parser replays its history.
pub(crate) fn no_stop_strings(p: &Params<'_>) -> Res<()> {
    if p.stops.is_empty() {
        Ok(())
    } else {
        Err(WireError::bad_param(
            "stop strings in a parsed stream need parser_state \"resumable\" and a built-in parser",
            "chat_request.stop",
        ))
    }
}

/// A carried state's parser fields: the parser state one the parsers could have written, the
/// replay buffer within the token bound.
pub(crate) fn parser_state(s: &State, max_model_len: Option<usize>) -> Res<()> {
    if let Some(Err(e)) = s.parser.as_deref().map(ParseState::check) {
        return Err(WireError::bad_param(
            format!("invalid stream_state.parser: {e}"),
            "stream_state",
        ));
    }
    if s.output_token_ids.len() > max_model_len.unwrap_or(usize::MAX) {
        return Err(WireError::bad_param(
            "stream_state.output_token_ids is longer than max_model_len",
            "stream_state",
        ));
    }
    Ok(())
}
