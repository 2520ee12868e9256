//! Logprobs resolution (REFERENCE section 4): each position's token string from its id (or a
//! `"token_id:N"` placeholder), with the sampled ids before it as context.

use super::error::{Res, WireError, clip};
use super::input::{Choice, LogprobEntry, Obj};
use super::json::LOGPROB_FLOOR;
use crate::detokenizer::Detokenizer;
use crate::logprobs::CONTEXT;

/// A resolved logprob position.
pub(crate) struct Lp {
    pub token: String,
    pub logprob: f64,
    /// The `bytes` a chat-shape entry sent with literal text; else the UTF-8 of `token`.
    pub bytes: Option<Vec<u8>>,
    pub top: Vec<Candidate>,
}

/// One alternative of a logprob position.
pub(crate) struct Candidate {
    pub token: String,
    pub logprob: f64,
    pub bytes: Option<Vec<u8>>,
}

pub(crate) fn clamp(x: Option<f64>) -> f64 {
    match x {
        Some(v) if v >= LOGPROB_FLOOR => v,
        _ => LOGPROB_FLOOR,
    }
}

/// A choice's logprobs as the engine sent them, their strings resolved.
#[derive(Default)]
pub(crate) enum Logprobs {
    /// None were sent (the answer's `logprobs` is `null`).
    #[default]
    Absent,
    /// `{"content": null}` was sent.
    NoContent,
    /// The positions sent.
    Content(Vec<Lp>),
}

impl Logprobs {
    /// The positions sent (none for [`Logprobs::Absent`] and [`Logprobs::NoContent`]).
    pub(crate) fn positions(&self) -> &[Lp] {
        match self {
            Logprobs::Content(c) => c,
            _ => &[],
        }
    }
}

/// A choice's logprobs with their strings resolved. `context` holds the last sampled ids
/// before the choice's ids and is left holding the last ones after them, whether or not
/// logprobs came.
pub(crate) fn choice_logprobs(
    det: &Detokenizer,
    choice: &Choice<'_>,
    top: Option<usize>,
    context: &mut Vec<u32>,
) -> Res<Logprobs> {
    let logprobs = match &choice.logprobs {
        None => Logprobs::Absent,
        Some(l) => match &l.content {
            None => Logprobs::NoContent,
            Some(entries) => {
                let mut running = context.clone();
                Logprobs::Content(resolve_logprobs(det, entries, top, &mut running)?)
            }
        },
    };
    context.extend_from_slice(choice.token_ids.as_deref().unwrap_or_default());
    context.drain(..context.len().saturating_sub(CONTEXT));
    Ok(logprobs)
}

fn resolve_token(
    det: &Detokenizer,
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
    let text = det
        .logprob_token(id, context)
        .map_err(|e| WireError::bad(format!("cannot decode logprob token {id}: {e}")))?;
    Ok((text, Some(id)))
}

/// Token strings for every position (REFERENCE section 4); `context` holds the last sampled
/// ids before the first position and is left holding the last ones after the last.
fn resolve_logprobs(
    det: &Detokenizer,
    entries: &[Obj<LogprobEntry<'_>>],
    top: Option<usize>,
    context: &mut Vec<u32>,
) -> Res<Vec<Lp>> {
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let (token, sampled) = resolve_token(det, e.token_id, e.token.as_deref(), context)?;
        let tops = e.top_logprobs.as_deref().unwrap_or_default();
        let n = top.unwrap_or(tops.len()).min(tops.len());
        let mut top_out = Vec::with_capacity(n);
        for t in tops.iter().take(n) {
            let (s, id) = resolve_token(det, t.token_id, t.token.as_deref(), context)?;
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
