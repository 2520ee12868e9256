//! A region's delimiter (a literal, a list of literals or a pattern) and how a stream finds it:
//! an anchored dense DFA run from each place a match could start, which tells a match that is
//! final from one that more text could still make, grow or break (then the text from its start
//! is held back).

use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::{Anchored, Input, MatchKind, util::syntax};

/// Most bytes of DFA one delimiter may take.
const DFA_BYTES: usize = 4 << 20;

/// What a delimiter is in a text, looked for from some offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// No match starts there or later.
    None,
    /// A match may start at this offset, but more text decides it.
    Pending(usize),
    /// A final match.
    Match(usize, usize),
}

/// A compiled delimiter.
#[derive(Debug, Clone)]
pub(crate) struct Delim {
    /// For the captures of a match already found.
    re: regex::Regex,
    dfa: dense::DFA<Vec<u32>>,
    /// Given as literals, none of which another extends: a whole one at the edge is final.
    fixed: bool,
    /// Bytes a match can begin with (all, when the pattern may match empty or looks behind).
    first: Box<[bool; 256]>,
    /// A lookahead `(?=X)`: the match is empty, where X matches.
    ahead: bool,
    /// A lookahead at the end, `P(?=X)`: the match is P's text, where X follows it (the pattern
    /// runs as `P(?P<tokstream_ahead>X)` and the match ends where that group begins).
    tail: bool,
}

/// The group a trailing lookahead becomes.
const TAIL: &str = "tokstream_ahead";

/// Python's `regex` and Rust's differ in a few spellings; these are the ones templates use.
fn rust_syntax(pattern: &str) -> String {
    pattern.replace("\\Z", "\\z")
}

/// `(?=X)`, optionally followed by `|$` (the end of output closes every region anyway): X.
fn lookahead(pattern: &str) -> Option<&str> {
    let mut p = pattern;
    for end in ["|$", "|\\Z", "|\\z"] {
        p = p.strip_suffix(end).unwrap_or(p);
    }
    let inner = p.strip_prefix("(?=")?.strip_suffix(')')?;
    // The parenthesis that closes at the end must be the lookahead's own.
    let mut depth = 0i32;
    let mut escaped = false;
    for c in inner.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            _ => {}
        }
    }
    (depth == 0).then_some(inner)
}

/// `P(?=X)` (a lookahead that ends the pattern, after text of its own) as `P(?P<tail>X)`.
fn trailing_lookahead(pattern: &str) -> Option<String> {
    let body = pattern.strip_suffix(')')?;
    // The group that closes at the end: where it opens, at depth 0 scanning backwards.
    let bytes = body.as_bytes();
    let mut depth = 0i32;
    let mut open = None;
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        let escaped = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1;
        match bytes[i] {
            _ if escaped => {}
            b')' => depth += 1,
            b'(' if depth == 0 => {
                open = Some(i);
                break;
            }
            b'(' => depth -= 1,
            _ => {}
        }
    }
    let at = open?;
    let head = body.get(..at)?;
    let inner = body.get(at..)?.strip_prefix("(?=")?;
    (!head.is_empty() && !head.ends_with('\\')).then(|| format!("{head}(?P<{TAIL}>{inner})"))
}

impl Delim {
    /// A delimiter given as literal strings (any of them matches).
    pub(crate) fn literals(literals: &[String]) -> Result<Delim, String> {
        let mut ordered: Vec<&String> = literals.iter().collect();
        ordered.sort_by_key(|s| std::cmp::Reverse(s.len()));
        let pattern: Vec<String> = ordered.iter().map(|s| regex::escape(s)).collect();
        let extends = literals
            .iter()
            .any(|a| literals.iter().any(|b| a != b && a.starts_with(b.as_str())));
        let mut d = Delim::build(&pattern.join("|"), false)?;
        d.fixed = !extends;
        Ok(d)
    }

    /// A delimiter given as a pattern (Python `regex` syntax, the subset Rust's `regex` has,
    /// plus a whole-pattern lookahead).
    pub(crate) fn pattern(pattern: &str) -> Result<Delim, String> {
        let pattern = rust_syntax(pattern);
        if let Some(inner) = lookahead(&pattern) {
            return Delim::build(inner, true);
        }
        match trailing_lookahead(&pattern) {
            Some(tailed) => {
                let mut d = Delim::build(&tailed, false)?;
                d.tail = true;
                Ok(d)
            }
            None => Delim::build(&pattern, false),
        }
    }

    fn build(pattern: &str, ahead: bool) -> Result<Delim, String> {
        let re = regex::RegexBuilder::new(pattern)
            .dot_matches_new_line(true)
            .build()
            .map_err(|e| format!("pattern {pattern:?}: {e}"))?;
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Anchored)
                    .match_kind(MatchKind::LeftmostFirst)
                    .dfa_size_limit(Some(DFA_BYTES))
                    .determinize_size_limit(Some(DFA_BYTES))
                    .unicode_word_boundary(true),
            )
            .syntax(syntax::Config::new().dot_matches_new_line(true))
            .build(pattern)
            .map_err(|e| format!("pattern {pattern:?}: {e}"))?;
        let mut first = Box::new([true; 256]);
        if let Some(start) = dfa.universal_start_state(Anchored::Yes) {
            let empty = dfa.is_match_state(dfa.next_eoi_state(start));
            if !empty {
                for (b, slot) in first.iter_mut().enumerate() {
                    let next = dfa.next_state(start, b as u8);
                    *slot = !(dfa.is_dead_state(next) || dfa.is_quit_state(next));
                }
            }
        }
        Ok(Delim {
            re,
            dfa,
            fixed: false,
            first,
            ahead,
            tail: false,
        })
    }

    /// [`Delim::find`], a match whose text does not begin with `lead` passed over (the next
    /// one counts).
    pub(crate) fn find_led(&self, hay: &str, mut from: usize, eos: bool, lead: &str) -> Found {
        loop {
            match self.find(hay, from, eos) {
                Found::Match(s, e) if !hay.get(s..e).is_some_and(|m| m.starts_with(lead)) => {
                    from = s + 1;
                }
                found => return found,
            }
        }
    }

    /// The leftmost match (or possible match) in `hay` starting at `from` or later. At the end
    /// of the output (`eos`) nothing is pending.
    pub(crate) fn find(&self, hay: &str, from: usize, eos: bool) -> Found {
        let bytes = hay.as_bytes();
        for s in from..=bytes.len() {
            if !hay.is_char_boundary(s) {
                continue;
            }
            match bytes.get(s) {
                Some(&b) if !self.first[usize::from(b)] => continue,
                // Only an empty match could start at the edge, and more text decides it.
                None if !eos => return Found::None,
                _ => {}
            }
            match self.at(hay, s, eos) {
                Found::None => {}
                found => return found,
            }
        }
        Found::None
    }

    /// Whether a match starts at `s`; a trailing lookahead's match ends where its text does.
    fn at(&self, hay: &str, s: usize, eos: bool) -> Found {
        match self.at_whole(hay, s, eos) {
            Found::Match(s, e) if self.tail => {
                let end = self
                    .captures_at(hay, s)
                    .and_then(|c| c.name(TAIL).map(|g| g.start()));
                Found::Match(s, end.unwrap_or(e))
            }
            found => found,
        }
    }

    /// Whether a match of the whole pattern starts at `s`.
    fn at_whole(&self, hay: &str, s: usize, eos: bool) -> Found {
        let bytes = hay.as_bytes();
        let input = Input::new(hay).anchored(Anchored::Yes).range(s..);
        let Ok(mut state) = self.dfa.start_state_forward(&input) else {
            return Found::None;
        };
        let mut last = None;
        let mut live = true;
        for (i, &b) in bytes.get(s..).unwrap_or_default().iter().enumerate() {
            state = self.dfa.next_state(state, b);
            if self.dfa.is_special_state(state) {
                if self.dfa.is_match_state(state) {
                    last = Some(s + i);
                } else if self.dfa.is_dead_state(state) || self.dfa.is_quit_state(state) {
                    live = false;
                    break;
                }
            }
        }
        if live && self.dfa.is_match_state(self.dfa.next_eoi_state(state)) {
            last = Some(bytes.len());
        }
        match last {
            // Where the lookahead's pattern matches, the empty match is decided.
            Some(_) if self.ahead => Found::Match(s, s),
            _ if eos || !live => last.map_or(Found::None, |e| Found::Match(s, e)),
            // A whole literal at the edge that no other literal extends is final.
            Some(e) if self.fixed && e == bytes.len() => Found::Match(s, e),
            // A match that ended before the edge, in a state no byte continues.
            Some(e) if e < bytes.len() && self.finished(state) => Found::Match(s, e),
            // A match that ends at the edge, which no byte can make longer.
            Some(e) if e == bytes.len() && !self.grows(state) => Found::Match(s, e),
            _ => Found::Pending(s),
        }
    }

    /// The bytes that tell the DFA's states apart, one of each class.
    fn classes(&self) -> impl Iterator<Item = u8> + '_ {
        self.dfa
            .byte_classes()
            .representatives(0..=255)
            .filter_map(|u| u.as_u8())
    }

    /// Whether `state` (a match state) can go on to no longer match.
    fn finished(&self, state: StateID) -> bool {
        self.dfa.is_match_state(state)
            && !self.dfa.is_match_state(self.dfa.next_eoi_state(state))
            && self
                .classes()
                .all(|b| self.dfa.is_dead_state(self.dfa.next_state(state, b)))
    }

    /// Whether a match that ends in `state` could take more bytes.
    fn grows(&self, state: StateID) -> bool {
        self.classes().any(|b| {
            let next = self.dfa.next_state(state, b);
            !self.dfa.is_dead_state(next) && !self.finished(next)
        })
    }

    /// The pattern, for its group names.
    pub(crate) fn regex(&self) -> &regex::Regex {
        &self.re
    }

    /// The groups of the match that starts at `s` (one [`Delim::find`] found).
    pub(crate) fn captures_at<'h>(&self, hay: &'h str, s: usize) -> Option<regex::Captures<'h>> {
        self.re
            .captures_at(hay, s)
            .filter(|c| c.get(0).is_some_and(|m| m.start() == s))
    }

    /// Whether a match depends on the text before it (`^`, `\b`, ...).
    pub(crate) fn looks_behind(&self) -> bool {
        self.dfa.universal_start_state(Anchored::Yes).is_none()
    }

    /// The named groups of the match at `start` (as found by [`Delim::find`]).
    pub(crate) fn captures(&self, hay: &str, start: usize) -> Vec<(String, String)> {
        let Some(caps) = self.re.captures_at(hay, start) else {
            return Vec::new();
        };
        self.re
            .capture_names()
            .flatten()
            .filter(|name| *name != TAIL)
            .filter_map(|name| Some((name.to_owned(), caps.name(name)?.as_str().to_owned())))
            .collect()
    }

    /// The names of the pattern's groups.
    pub(crate) fn group_names(&self) -> Vec<String> {
        self.re
            .capture_names()
            .flatten()
            .filter(|name| *name != TAIL)
            .map(str::to_owned)
            .collect()
    }

    /// End of the last match in `hay` (for the start anchor, looked for in the prompt's tail).
    pub(crate) fn last_end(&self, hay: &str) -> Option<usize> {
        self.re.find_iter(hay).last().map(|m| m.end())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_final_at_the_edge_and_patterns_wait() {
        let lit = Delim::literals(&["</think>".to_owned()]).unwrap();
        assert_eq!(lit.find("ab</think>", 0, false), Found::Match(2, 10));
        assert_eq!(lit.find("ab</th", 0, false), Found::Pending(2));
        assert_eq!(lit.find("ab</x", 0, false), Found::None);
        let pat = Delim::pattern(r"</think>\s*").unwrap();
        assert_eq!(pat.find("ab</think>\n", 0, false), Found::Pending(2));
        assert_eq!(pat.find("ab</think>\nx", 0, false), Found::Match(2, 11));
        assert_eq!(pat.find("ab</think>\n", 0, true), Found::Match(2, 11));
    }

    #[test]
    fn a_match_without_the_lead_is_passed_over() {
        let d = Delim::pattern(r"(?:<b>)?<i>").unwrap();
        assert_eq!(
            d.find_led("x<i> <b><i>", 0, false, "<b>"),
            Found::Match(5, 11)
        );
        assert_eq!(d.find_led("x<i> <b", 0, false, "<b>"), Found::Pending(5));
        assert_eq!(d.find_led("x<i>", 0, false, ""), Found::Match(1, 4));
    }

    #[test]
    fn lookaheads_match_empty_and_ends_wait_for_the_end() {
        let la = Delim::pattern(r"(?=\[TOOL_CALLS\])|$").unwrap();
        assert_eq!(la.find("{}[TOOL_CALLS]", 0, false), Found::Match(2, 2));
        assert_eq!(la.find("{}[TOOL", 0, false), Found::Pending(2));
        let end = Delim::pattern(r"\}\s*$").unwrap();
        assert_eq!(end.find(r#"{"a": {}}"#, 0, false), Found::Pending(8));
        assert_eq!(end.find(r#"{"a": {}} "#, 0, true), Found::Match(8, 10));
        let tail = Delim::pattern(r"(?:```(?:json)?\s*)?(?=\[\{)").unwrap();
        assert_eq!(tail.find("a ```json\n[{", 0, false), Found::Match(2, 10));
        assert_eq!(tail.find("a [{", 0, false), Found::Match(2, 2));
        assert_eq!(tail.find("a ```json\n[", 0, false), Found::Pending(2));
        assert_eq!(tail.find("a ```py\n[{", 0, false), Found::Match(8, 8));
        assert!(tail.group_names().is_empty());
        assert_eq!(trailing_lookahead(r"a\(?=b)"), None);
        assert_eq!(trailing_lookahead(r"(?=b)"), None);
        let caps = Delim::pattern(r"<f=(?P<name>[^>]+)>").unwrap();
        assert_eq!(caps.find("x<f=ab>", 0, false), Found::Match(1, 7));
        assert_eq!(caps.captures("x<f=ab>", 1), [("name".into(), "ab".into())]);
    }
}
