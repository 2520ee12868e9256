//! Stop strings (REFERENCE section 5), for whole responses and, beyond vLLM, for streams.
//!
//! vLLM checks stop strings after each generated token, once more than `min_tokens` tokens were
//! generated: for each stop string in list order it searches the output text from
//! `len(text) - len(new) - len(stop) + 1` (in chars; `new` is the text this token added), so only
//! a match that the new text completes counts, and the first stop string found wins. The text is
//! cut before the match, or after it with `include_stop_str_in_output`.
//!
//! A stream cannot take back sent text, so it holds back the longest suffix of its text that
//! could still begin a stop string (fewer chars than the longest stop string), and releases it
//! once it cannot, or on finish. Searching the held suffix plus the new text finds exactly the
//! matches the whole-text search finds: a match that began in released text would have meant the
//! released text ended with a prefix of that stop string, which is never released.

use crate::holdback::open_suffix_any;

/// The stop strings of a request and whether a match stays in the output.
#[derive(Debug, Clone, Default)]
pub struct StopStrings {
    stops: Vec<String>,
    include: bool,
}

/// What one token did to a stopping stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopStep {
    /// No match: `out` got what may be sent, the rest stays held.
    Continue,
    /// Stop string number `index` matched: `out` got the text up to the cut, nothing is held.
    Matched { index: usize },
}

impl StopStrings {
    /// Empty stop strings are ignored (they would match everywhere).
    pub fn new<S: AsRef<str>>(stops: &[S], include_stop_str_in_output: bool) -> StopStrings {
        StopStrings {
            stops: stops
                .iter()
                .map(|s| s.as_ref().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
            include: include_stop_str_in_output,
        }
    }

    /// Whether there is any stop string.
    pub fn is_empty(&self) -> bool {
        self.stops.is_empty()
    }

    /// The stop strings, in the request's order.
    pub fn stops(&self) -> &[String] {
        &self.stops
    }

    /// Feeds the text one token added. `held` is the text held back so far (carried between
    /// chunks); `check` is false while the stream has generated no more than `min_tokens` tokens.
    /// Appends what may be sent to `out`.
    pub fn step(&self, held: &mut String, new: &str, check: bool, out: &mut String) -> StopStep {
        let before = held.chars().count();
        held.push_str(new);
        if check {
            for (index, stop) in self.stops.iter().enumerate() {
                let from = (before + 1).saturating_sub(stop.chars().count());
                let from_byte = held.char_indices().nth(from).map_or(held.len(), |(i, _)| i);
                if let Some(at) = held.get(from_byte..).and_then(|t| t.find(stop.as_str())) {
                    let cut = from_byte + at + if self.include { stop.len() } else { 0 };
                    out.push_str(held.get(..cut).unwrap_or_default());
                    held.clear();
                    return StopStep::Matched { index };
                }
            }
        }
        let keep = open_suffix_any(held, &self.stops);
        let release = held.len() - keep;
        out.push_str(held.get(..release).unwrap_or_default());
        held.drain(..release);
        StopStep::Continue
    }

    /// Releases what is held (the stream finished without a match).
    pub fn finish(&self, held: &mut String, out: &mut String) {
        out.push_str(held);
        held.clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// vLLM's whole-text check, token by token: the text and the matched stop string.
    fn whole(stops: &StopStrings, deltas: &[&str], min_tokens: usize) -> (String, Option<usize>) {
        let mut text: Vec<char> = Vec::new();
        for (n, delta) in deltas.iter().enumerate() {
            let new: Vec<char> = delta.chars().collect();
            text.extend(&new);
            if n < min_tokens {
                continue;
            }
            for (index, stop) in stops.stops().iter().enumerate() {
                let s: Vec<char> = stop.chars().collect();
                let from = (text.len() + 1).saturating_sub(new.len() + s.len());
                let found = (from..=text.len().saturating_sub(s.len()))
                    .find(|&i| i + s.len() <= text.len() && text[i..i + s.len()] == s[..]);
                if let Some(i) = found {
                    let cut = if stops.include { i + s.len() } else { i };
                    return (text[..cut].iter().collect(), Some(index));
                }
            }
        }
        (text.iter().collect(), None)
    }

    fn streamed(
        stops: &StopStrings,
        deltas: &[&str],
        min_tokens: usize,
    ) -> (String, Option<usize>) {
        let (mut held, mut out) = (String::new(), String::new());
        for (n, delta) in deltas.iter().enumerate() {
            let before = out.len();
            let step = stops.step(&mut held, delta, n + 1 > min_tokens, &mut out);
            // Held text never exceeds the longest stop string minus one char.
            let longest = stops
                .stops()
                .iter()
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0);
            assert!(held.chars().count() < longest.max(1));
            assert!(out.len() >= before);
            if let StopStep::Matched { index } = step {
                return (out, Some(index));
            }
        }
        stops.finish(&mut held, &mut out);
        (out, None)
    }

    #[test]
    fn cuts_before_or_after_the_match() {
        let deltas = ["Hel", "lo, wor", "ld!", " more"];
        let s = StopStrings::new(&["world"], false);
        assert_eq!(streamed(&s, &deltas, 0), ("Hello, ".to_owned(), Some(0)));
        let s = StopStrings::new(&["world"], true);
        assert_eq!(
            streamed(&s, &deltas, 0),
            ("Hello, world".to_owned(), Some(0))
        );
        // Not checked during min_tokens, and a match completed then is not found later.
        let s = StopStrings::new(&["Hello"], false);
        assert_eq!(
            streamed(&s, &["Hello", ", world"], 1),
            ("Hello, world".to_owned(), None)
        );
        // A match the new text completes counts, even if it began during min_tokens.
        assert_eq!(streamed(&s, &deltas, 1), (String::new(), Some(0)));
        // Multi-byte characters around the match are never split.
        let s = StopStrings::new(&["文字"], false);
        assert_eq!(
            streamed(&s, &["中", "文", "字👍"], 0),
            ("中".to_owned(), Some(0))
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn streaming_equals_whole_text(
            deltas in prop::collection::vec("[ab中 ]{0,4}", 0..12),
            stops in prop::collection::vec("[ab中]{1,4}", 0..3),
            include in any::<bool>(),
            min_tokens in 0usize..4,
        ) {
            let s = StopStrings::new(&stops, include);
            let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
            prop_assert_eq!(streamed(&s, &deltas, min_tokens), whole(&s, &deltas, min_tokens));
        }
    }
}
