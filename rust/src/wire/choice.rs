//! One choice of one call: which ids are text (the stop token), the text itself (cut at stop
//! strings, or run through the chat parser), and its logprobs. Whole responses and stream chunks,
//! plain and parsed, all derender a choice here.

use std::borrow::Cow;

use super::config::Config;
use super::error::{Res, WireError};
use super::finish::FinishReason;
use super::input::{Choice, State, StopReason};
use super::logprobs::{Logprobs, choice_logprobs};
use super::request::Params;
use crate::detokenizer::Detokenizer;
use crate::parse::{Delta, ParseError, Session};
use crate::stop::{Held, MAX_STOP_BYTES, StopStep, StopStrings};
use crate::stream::Stream;

/// One choice's derendered output.
pub(crate) struct Out<'a> {
    /// The text (plain choices).
    pub text: String,
    /// What the parser made of the text (parsed choices).
    pub parsed: Option<Delta>,
    /// Chars of text the ids decoded to (parsed choices; plain ones count their `text`).
    pub chars: u64,
    /// `None` until the choice finishes (streams).
    pub finish_reason: Option<FinishReason<'a>>,
    pub stop_reason: Option<StopReason<'a>>,
    pub logprobs: Logprobs,
}

/// Text and stop-string progress of one plain choice between calls.
#[derive(Default)]
pub(crate) struct Progress {
    pub held: Held,
    pub generated: u64,
    pub stopped: bool,
}

/// Where a choice's text goes.
pub(crate) enum Text<'s> {
    /// Out as text, cut at the request's stop strings.
    Plain(Progress),
    /// Through a parser, after the request's stop strings cut it (the progress of that cut
    /// carried between calls as a plain choice's is).
    Parsed(Box<dyn Session + 's>, Progress),
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
/// not part of its text (vLLM's `_drop_stop_token`). A reported stop token id is left out when
/// it is the last id. With none reported, the last id is a stop token when the request lists it
/// or, unless `ignore_eos`, when it is an end-of-sequence id; every end-of-sequence id but the
/// primary one (the first of `eos_token_ids`, the tokenizer's) is then reported as the
/// `stop_reason`. A reported stop string leaves the ids alone.
pub(crate) fn stop_token<'a>(
    ids: &[u32],
    choice: &Choice<'a>,
    finish: Option<&FinishReason<'_>>,
    p: &Params<'_>,
    eos_token_ids: &[u32],
) -> (usize, Option<StopReason<'a>>) {
    let mut reason = choice.stop_reason.clone();
    let mut keep = ids.len();
    if let (Some(FinishReason::Stop), Some(&last)) = (finish, ids.last()) {
        let stopped = match &reason {
            Some(StopReason::Id(r)) => *r == u64::from(last),
            Some(StopReason::Text(_)) => false,
            None => {
                let honor_eos = !p.ignore_eos;
                if honor_eos && eos_token_ids.first() == Some(&last) {
                    true
                } else if p.stop_token_ids.contains(&last)
                    || (honor_eos && eos_token_ids.contains(&last))
                {
                    reason = Some(StopReason::Id(u64::from(last)));
                    true
                } else {
                    false
                }
            }
        };
        if stopped && !p.include_stop {
            keep -= 1;
        }
    }
    (keep, reason)
}

/// The stop strings a choice's text is cut at, when they are not the request's (`None`), by
/// vLLM's rule (`_decode_output`): the engine's finish is trusted, so there are none when it
/// finished for a reason other than `"stop"` or reported a stop token, and only the string it
/// reported when it reported one. A stream's chunks before its last (`last` false) have no
/// finish yet and follow the request's.
fn engine_stops<'s>(
    choice: &'s Choice<'_>,
    finish: Option<&FinishReason<'_>>,
    last: bool,
    include: bool,
) -> Res<Option<StopStrings<'s, Cow<'s, str>>>> {
    if !last {
        return Ok(None);
    }
    match (finish, &choice.stop_reason) {
        (Some(FinishReason::Stop), None) => Ok(None),
        (Some(FinishReason::Stop), Some(StopReason::Text(t))) => {
            let stops = StopStrings::new(std::slice::from_ref(t), include).map_err(|e| {
                WireError::bad_param(
                    format!(
                        "stop_reason has {} bytes; at most {MAX_STOP_BYTES} are accepted",
                        e.bytes
                    ),
                    "stop_reason",
                )
            })?;
            Ok(Some(stops))
        }
        _ => Ok(Some(StopStrings::default())),
    }
}

/// Detokenizes `ids` on `stream`, cutting at a stop string of `stops`; returns the index of the
/// stop string that matched.
fn plain_text<S: AsRef<str>>(
    stream: &mut Stream,
    ids: &[u32],
    finish: bool,
    stops: &StopStrings<'_, S>,
    min_tokens: u64,
    progress: &mut Progress,
    out: &mut String,
) -> Res<Option<usize>> {
    if stops.is_empty() {
        // Text an earlier chunk held back for the request's stop strings goes out first.
        stops.finish(&mut progress.held, out);
        out.push_str(stream.step(ids).map_err(decode_err)?);
        progress.generated += ids.len() as u64;
        if finish {
            out.push_str(stream.finish().map_err(decode_err)?);
        }
        return Ok(None);
    }
    for &id in ids {
        progress.generated += 1;
        let check = progress.generated > min_tokens;
        let text = stream.step(&[id]).map_err(decode_err)?;
        if let StopStep::Matched { index } = stops.step(&mut progress.held, text, check, out) {
            progress.stopped = true;
            return Ok(Some(index));
        }
    }
    if finish {
        let check = progress.generated > min_tokens;
        let text = stream.finish().map_err(decode_err)?;
        if !text.is_empty() {
            if let StopStep::Matched { index } = stops.step(&mut progress.held, text, check, out) {
                progress.stopped = true;
                return Ok(Some(index));
            }
        }
        stops.finish(&mut progress.held, out);
    }
    Ok(None)
}

/// Feeds `ids` to the stream and the parser one token at a time; with `flush` the output ends
/// here. `chunk` is the chunk's ids as sent (stop token included). With `stops` (the request's
/// stop strings, `min_tokens` and the progress carried from earlier calls) the text is cut at
/// the first match before the parser sees it, and text that may begin a stop string is held
/// back (in `progress`) until the next call decides it; a match ends the output there. Returns
/// the chars fed and the index of the stop string that matched.
pub(crate) fn parsed_text(
    stream: &mut Stream,
    ids: &[u32],
    chunk: &[u32],
    flush: bool,
    stops: Option<(&StopStrings<'_, Cow<'_, str>>, u64, &mut Progress)>,
    session: &mut dyn Session,
    out: &mut Delta,
) -> Res<(u64, Option<usize>)> {
    let mut chars = 0;
    let mut matched = None;
    match stops.filter(|(s, _, _)| !s.is_empty()) {
        None => {
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
        }
        Some((stops, min_tokens, progress)) => {
            // Decode first, cut as a plain choice is cut, then feed the parser the pieces up to
            // the cut: first the text held back before (as text only), then this call's (a
            // piece the cut splits is fed as text only: it is no whole marker).
            let mut pieces: Vec<(String, Option<u32>)> = Vec::with_capacity(ids.len() + 2);
            pieces.push((stops.held_text(progress.held.clone()), None));
            for &id in ids {
                pieces.push((stream.step(&[id]).map_err(decode_err)?.to_owned(), Some(id)));
            }
            if flush {
                pieces.push((stream.finish().map_err(decode_err)?.to_owned(), None));
            }
            let mut kept = String::new();
            for (text, id) in pieces.iter().skip(1) {
                if id.is_some() {
                    progress.generated += 1;
                }
                let check = progress.generated > min_tokens;
                let step = stops.step(&mut progress.held, text, check, &mut kept);
                if let StopStep::Matched { index } = step {
                    matched = Some(index);
                    progress.stopped = true;
                    break;
                }
            }
            if flush && matched.is_none() {
                stops.finish(&mut progress.held, &mut kept);
            }
            let mut at = 0;
            for (text, id) in &pieces {
                let left = kept.len() - at;
                if left == 0 {
                    break;
                }
                let (piece, id) = match text.get(..left) {
                    Some(piece) if piece.len() < text.len() => (piece, None),
                    _ => (text.as_str(), *id),
                };
                chars += piece.chars().count();
                session.feed(piece, id, out);
                at += piece.len();
            }
        }
    }
    session
        .end_chunk(chunk, flush || matched.is_some(), out)
        .map_err(parse_err)?;
    Ok((chars as u64, matched))
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
        parsed_text(
            stream,
            chunk,
            chunk,
            false,
            None,
            session,
            &mut Delta::default(),
        )?;
    }
    Ok(())
}

/// A choice to derender: its generate output, how it finished, and whether its text ends here.
pub(crate) struct Turn<'c, 'a> {
    pub choice: &'c Choice<'a>,
    pub finish: Option<FinishReason<'a>>,
    /// The choice's text ends with these ids (a whole response, or a stream's last chunk).
    pub flush: bool,
}

/// One choice: stop token, text (plain or parsed), stop strings and logprobs. `context` holds
/// the sampled ids before the choice's and is left holding the last ones after them.
pub(crate) fn derender<'a>(
    c: &Config,
    turn: Turn<'_, 'a>,
    stream: &mut Stream,
    p: &Params<'_>,
    text: &mut Text<'_>,
    context: &mut Vec<u32>,
) -> Res<Out<'a>> {
    let Turn {
        choice,
        finish,
        flush,
    } = turn;
    let det: &Detokenizer = &c.det;
    let eos_token_ids: &[u32] = &c.eos_token_ids;
    let ids = choice.token_ids.as_deref().unwrap_or_default();
    let (keep, mut stop_reason) = stop_token(ids, choice, finish.as_ref(), p, eos_token_ids);
    let kept = ids.get(..keep).unwrap_or_default();
    let own = engine_stops(choice, finish.as_ref(), flush, p.include_stop)?;
    let mut finish_reason = finish;
    let mut out_text = String::new();
    let (parsed, chars, matched) = match text {
        Text::Plain(progress) => {
            let matched = match &own {
                Some(stops) => plain_text(
                    stream,
                    kept,
                    flush,
                    stops,
                    p.min_tokens,
                    progress,
                    &mut out_text,
                )?,
                None => plain_text(
                    stream,
                    kept,
                    flush,
                    &p.stops,
                    p.min_tokens,
                    progress,
                    &mut out_text,
                )?,
            };
            progress.generated += (ids.len() - keep) as u64;
            // Chars of plain text are counted where they are needed (a completion stream's
            // `text_offset`), not for every whole response.
            (None, 0, matched)
        }
        Text::Parsed(session, progress) => {
            let mut delta = Delta::default();
            let stops = own.as_ref().unwrap_or(&p.stops);
            let (chars, matched) = parsed_text(
                stream,
                kept,
                ids,
                flush,
                Some((stops, p.min_tokens, progress)),
                &mut **session,
                &mut delta,
            )?;
            (Some(delta), chars, matched)
        }
    };
    if let Some(index) = matched {
        finish_reason = Some(FinishReason::Stop);
        let stops = match &own {
            Some(s) => s.stops().get(index).map(|s| s.to_string()),
            None => p.stops.stops().get(index).map(|s| s.to_string()),
        };
        stop_reason = Some(StopReason::Text(Cow::Owned(stops.unwrap_or_default())));
    }
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
