//! Reading a body into its types ([`super::input`]): the hand reader ([`super::quick`]) first,
//! serde where it is not sure, and a second, slow read only to say where an error is; with the
//! repair of Python's non-finite floats ([`replace_non_finite`]).

use super::error::{Res, WireError, json_words};
use super::input::{Body, take_request_text};

/// Parses a body into `out` (a default one, kept by the caller: see `Reader::body`), or says
/// what is wrong with it (and where).
pub(crate) fn parse<'a>(body: &'a [u8], out: &mut Body<'a>) -> Res<()> {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    // Serde would also read a struct from a JSON array; a body must be an object.
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|&b| b != b'{') {
        return Err(WireError::bad("the body must be a JSON object"));
    }
    // UTF-8 is checked once for the whole body, so the parser need not check string by string
    // (12% of a one-id chat chunk's instructions, by callgrind); a body that is not UTF-8 takes
    // the byte path, which says where.
    let parsed = match std::str::from_utf8(body) {
        Ok(text) => match super::quick::body(text, out) {
            Some(()) => return Ok(()),
            None => serde_json::from_str::<Body<'_>>(text),
        },
        Err(_) => serde_json::from_slice::<Body<'_>>(body),
    };
    match parsed {
        Ok(b) => {
            *out = b;
            take_request_text(out, body);
            Ok(())
        }
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
            let message = format!("{what}: {}", json_words(&e));
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

/// A copy of `body` with the non-standard `NaN` and `-Infinity` tokens that Python's `json`
/// writes for non-finite floats replaced by the logprob floor; `None` when it has none.
pub(crate) fn replace_non_finite(body: &[u8]) -> Option<Vec<u8>> {
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
