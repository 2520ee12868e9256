//! Holding back text that may still begin a pattern: the parsers' text-matched markers send text
//! up to where a match could still start, and keep the rest until the next text decides it. (Stop
//! strings hold back the same way, through their automaton's state, in `stop.rs`: a request may
//! carry many long stop strings, where a marker is one short literal.)

use std::borrow::Cow;

/// Byte length of the longest suffix of `text`, starting on a char boundary, that is a proper
/// prefix of `pattern` (0 when none is).
pub(crate) fn open_suffix(text: &str, pattern: &str) -> usize {
    let max = pattern.len().saturating_sub(1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n)
                && pattern.starts_with(text.get(text.len() - n..).unwrap_or_default())
        })
        .unwrap_or(0)
}

/// The earliest of `markers` in `text` (the first listed of those starting there), as
/// `Ok((start, what, marker))`; else `Err(keep)`, the bytes at the end of `text` to hold back
/// because they may still begin one.
pub(crate) fn first_marker<'m, T>(
    text: &str,
    markers: impl Iterator<Item = (T, &'m str)> + Clone,
) -> Result<(usize, T, &'m str), usize> {
    markers
        .clone()
        .filter_map(|(what, m)| text.find(m).map(|at| (at, what, m)))
        .min_by_key(|&(at, _, _)| at)
        .ok_or_else(|| {
            markers
                .map(|(_, m)| open_suffix(text, m))
                .max()
                .unwrap_or(0)
        })
}

/// `held` then `text`, copied only when something was held.
pub(crate) fn joined(mut held: String, text: &str) -> Cow<'_, str> {
    if held.is_empty() {
        Cow::Borrowed(text)
    } else {
        held.push_str(text);
        Cow::Owned(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_proper_prefix_on_a_char_boundary() {
        assert_eq!(open_suffix("abc</tool", "</tool_call>"), 6);
        assert_eq!(open_suffix("abc</tool_call>", "</tool_call>"), 0);
        assert_eq!(open_suffix("x中", "中文"), 3);
        assert_eq!(open_suffix("", "ab"), 0);
        assert_eq!(joined(String::new(), "a"), "a");
        assert_eq!(joined("a".to_owned(), "b"), "ab");
    }

    #[test]
    fn the_earliest_marker_or_what_to_hold() {
        let markers = [(1, "</think>"), (2, "<think>")];
        assert_eq!(
            first_marker("a<think>b</think>", markers.into_iter()),
            Ok((1, 2, "<think>"))
        );
        assert_eq!(first_marker("ab</th", markers.into_iter()), Err(4));
        assert_eq!(first_marker("ab<", markers.into_iter()), Err(1));
        assert_eq!(first_marker("ab", markers.into_iter()), Err(0));
    }
}
