//! One choice of one call: which ids are text (the stop token), the text itself (cut at stop
//! strings, or run through the chat parser), and its logprobs. Whole responses and stream chunks,
//! plain and parsed, all derender a choice here.

use std::borrow::Cow;

use super::error::{Res, WireError};
use super::input::{Choice, State, StopReason};
use super::logprobs::{Lp, choice_logprobs};
use super::request::Params;
use crate::detokenizer::Detokenizer;
use crate::parse::{Delta, ParseError, Session};
use crate::stop::{Held, StopStep};
use crate::stream::Stream;

/// One choice's derendered output.
pub(crate) struct Out<'a> {
    /// The text (plain choices).
    pub text: String,
    /// What the parser made of the text (parsed choices).
    pub parsed: Option<Delta>,
    /// Chars of text the ids decoded to (parsed choices; plain ones count their `text`).
    pub chars: u64,
    pub finish_reason: Option<Cow<'a, str>>,
    pub stop_reason: Option<StopReason<'a>>,
    /// `None`: no logprobs; `Some(None)`: `{"content": null}`.
    pub logprobs: Option<Option<Vec<Lp>>>,
}

/// Text and stop-string progress of one plain choice between calls.
#[derive(Default)]
pub(crate) struct Progress {
    pub held: Held,
    pub generated: u64,
    pub stopped: bool,
}

/// Where a choice's text goes.
pub(crate) enum Text<'p, 's> {
    /// Out as text, cut at the request's stop strings.
    Plain(&'p mut Progress),
    /// Through a parser.
    Parsed(&'p mut (dyn Session + 's)),
}

fn decode_err(e: crate::Error) -> WireError {
    WireError::bad(format!("cannot detokenize: {e}"))
}

/// A parser's failure as the wire answers it.
pub(crate) fn parse_err(e: ParseError) -> WireError {
    match e {
        ParseError::Request { message, param } => WireError {
            status: 400,
            message,
            param,
        },
        ParseError::Parser { message } => WireError::internal(message),
    }
}

/// The stream a carried state continues (a hostile window is a 400).
pub(crate) fn resume(det: &std::sync::Arc<Detokenizer>, state: &State, skip: bool) -> Res<Stream> {
    let prefix = usize::try_from(state.prefix_offset).unwrap_or(usize::MAX);
    let read = usize::try_from(state.read_offset).unwrap_or(usize::MAX);
    Stream::resume(det, &state.prev_tokens, prefix, read, skip)
        .map_err(|e| WireError::bad_param(format!("invalid stream_state: {e}"), "stream_state"))
}

/// Writes a stream's window back into the state for the next call, rebased.
pub(crate) fn write_back(state: &mut State, stream: &Stream) {
    let (tokens, _, read) = stream.window();
    state.prev_tokens.clear();
    state
        .prev_tokens
        .extend(tokens.into_iter().map(str::to_owned));
    state.prefix_offset = 0;
    state.read_offset = read as u64;
}

/// Which ids to detokenize, and the stop reason: a stop token that ended the choice is
/// not part of its text.
pub(crate) fn stop_token<'a>(
    ids: &[u32],
    choice: &Choice<'a>,
    finish: Option<&str>,
    p: &Params<'_>,
    eos_token_ids: &[u32],
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
                } else if !p.ignore_eos && !p.include_stop && eos_token_ids.contains(&last) {
                    keep -= 1;
                }
            }
        }
    }
    (keep, reason)
}

/// Detokenizes `ids` on `stream`, cutting at a stop string; returns the index of the stop
/// string that matched.
fn plain_text(
    stream: &mut Stream,
    ids: &[u32],
    finish: bool,
    p: &Params<'_>,
    progress: &mut Progress,
    out: &mut String,
) -> Res<Option<usize>> {
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
        if let StopStep::Matched { index } = p.stops.step(&mut progress.held, text, check, out) {
            progress.stopped = true;
            return Ok(Some(index));
        }
    }
    if finish {
        let check = progress.generated > p.min_tokens;
        let text = stream.finish().map_err(decode_err)?;
        if !text.is_empty() {
            if let StopStep::Matched { index } = p.stops.step(&mut progress.held, text, check, out)
            {
                progress.stopped = true;
                return Ok(Some(index));
            }
        }
        p.stops.finish(&mut progress.held, out);
    }
    Ok(None)
}

/// Feeds `ids` to the stream and the parser one token at a time; with `flush` the output ends
/// here. `chunk` is the chunk's ids as sent (stop token included). Returns the chars decoded.
pub(crate) fn parsed_text(
    stream: &mut Stream,
    ids: &[u32],
    chunk: &[u32],
    flush: bool,
    session: &mut dyn Session,
    out: &mut Delta,
) -> Res<u64> {
    let mut chars = 0;
    for &id in ids {
        let text = stream.step(&[id]).map_err(decode_err)?;
        chars += text.chars().count();
        session.feed(text, Some(id), out);
    }
    if flush {
        let text = stream.finish().map_err(decode_err)?;
        chars += text.chars().count();
        session.feed(text, None, out);
    }
    session.end_chunk(chunk, flush, out).map_err(parse_err)?;
    Ok(chars as u64)
}

/// Replays a replay buffer's history through a fresh stream and parser, with the original chunk
/// boundaries; what it parses was sent before and is dropped.
pub(crate) fn replay(stream: &mut Stream, session: &mut dyn Session, state: &State) -> Res<()> {
    let mut at = 0usize;
    for &n in &state.output_chunk_lens {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let chunk = state
            .output_token_ids
            .get(at..at.saturating_add(n))
            .unwrap_or_default();
        at = at.saturating_add(n);
        parsed_text(stream, chunk, chunk, false, session, &mut Delta::default())?;
    }
    Ok(())
}

/// One choice: stop token, text (plain or parsed), stop strings and logprobs. `context` holds
/// the sampled ids before the choice's and is left holding the last ones after them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn derender<'a>(
    det: &Detokenizer,
    eos_token_ids: &[u32],
    choice: &Choice<'a>,
    finish: Option<Cow<'a, str>>,
    flush: bool,
    stream: &mut Stream,
    p: &Params<'_>,
    text: Text<'_, '_>,
    context: &mut Vec<u32>,
) -> Res<Out<'a>> {
    let ids = choice.token_ids.as_deref().unwrap_or_default();
    let (keep, mut stop_reason) = stop_token(ids, choice, finish.as_deref(), p, eos_token_ids);
    let kept = ids.get(..keep).unwrap_or_default();
    let mut finish_reason = finish;
    let mut out_text = String::new();
    let (parsed, chars) = match text {
        Text::Plain(progress) => {
            let matched = plain_text(stream, kept, flush, p, progress, &mut out_text)?;
            progress.generated += (ids.len() - keep) as u64;
            if let Some(index) = matched {
                finish_reason = Some(Cow::Borrowed("stop"));
                let stop = p.stops.stops().get(index).map(|s| s.to_string());
                stop_reason = Some(StopReason::Text(Cow::Owned(stop.unwrap_or_default())));
            }
            // Chars of plain text are counted where they are needed (a completion stream's
            // `text_offset`), not for every whole response.
            (None, 0)
        }
        Text::Parsed(session) => {
            let mut delta = Delta::default();
            let chars = parsed_text(stream, kept, ids, flush, session, &mut delta)?;
            (Some(delta), chars)
        }
    };
    let logprobs = choice_logprobs(det, choice, p.top, context)?;
    Ok(Out {
        text: out_text,
        parsed,
        chars,
        finish_reason,
        stop_reason,
        logprobs,
    })
}

/// `"tool_calls"` for a choice that called tools and that the engine stopped, unless the
/// request named the function (then the call was asked for, not chosen).
pub(crate) fn rewrite_finish<'a>(
    finish: Option<Cow<'a, str>>,
    tools: bool,
    named: bool,
) -> Option<Cow<'a, str>> {
    match finish {
        Some(f) if f == "stop" && tools && !named => Some(Cow::Borrowed("tool_calls")),
        other => other,
    }
}
