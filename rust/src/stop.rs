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
//!
//! One automaton (Aho-Corasick, over bytes) matches every stop string at once, so a request costs
//! time linear in its text plus its stop strings, however many and however long they are: each
//! byte of text moves the automaton once (plus amortized failure moves), and the held suffix is
//! never rescanned, because it is the automaton's state: the held text is always the string its
//! state node spells. Matching bytes finds the same matches as matching chars, since a UTF-8
//! pattern can only match a UTF-8 text at a char boundary. Among the stop strings that the new
//! text completes, the one first in list order wins, at its leftmost match: each node knows the
//! lowest index of a stop string ending there (itself or through its failure chain), and that
//! index's first end in the new text is its leftmost match, since no lower index ends anywhere.

/// Most bytes the stop strings of one request may have in all (`StopStrings::new` refuses more):
/// the automaton takes about 36 bytes of memory per byte of stop strings.
pub const MAX_STOP_BYTES: usize = 1 << 20;

const NONE: u32 = u32::MAX;

/// The stop strings of a request (borrowed from it) and whether a match stays in the output.
#[derive(Debug, Clone)]
pub struct StopStrings<'s, S> {
    stops: &'s [S],
    include: bool,
    automaton: Automaton,
}

impl<S> Default for StopStrings<'_, S> {
    fn default() -> Self {
        StopStrings {
            stops: &[],
            include: false,
            automaton: Automaton::default(),
        }
    }
}

/// Too many bytes of stop strings (more than [`MAX_STOP_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// The stop strings' bytes in all.
    pub bytes: usize,
}

/// What one token did to a stopping stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopStep {
    /// No match: `out` got what may be sent, the rest stays held.
    Continue,
    /// Stop string number `index` matched: `out` got the text up to the cut, nothing is held.
    Matched {
        /// The stop string's place in the list given.
        index: usize,
    },
}

/// The text a stream holds back, carried between calls as a string and, while a request runs,
/// as the automaton's state.
#[derive(Debug, Clone, Default)]
pub struct Held {
    /// Text carried in from outside and not scanned yet.
    carried: String,
    /// The automaton node whose string is the held text, once `carried` was scanned.
    node: Option<u32>,
}

impl Held {
    /// Held text carried in from a previous call (a stream state's `held_text`).
    pub fn new(text: String) -> Held {
        Held {
            carried: text,
            node: None,
        }
    }
}

impl<'s, S: AsRef<str>> StopStrings<'s, S> {
    /// Empty stop strings are ignored (they would match everywhere); a match reports the index
    /// of its stop string in `stops`. Refuses stop strings of more than [`MAX_STOP_BYTES`] bytes
    /// in all.
    pub fn new(stops: &'s [S], include_stop_str_in_output: bool) -> Result<Self, TooLarge> {
        let bytes = stops.iter().map(|s| s.as_ref().len()).sum();
        if bytes > MAX_STOP_BYTES {
            return Err(TooLarge { bytes });
        }
        Ok(StopStrings {
            stops,
            include: include_stop_str_in_output,
            automaton: Automaton::new(stops, bytes),
        })
    }

    /// Whether there is no (non-empty) stop string.
    pub fn is_empty(&self) -> bool {
        self.automaton.nodes.len() < 2
    }

    /// The stop strings, in the request's order.
    pub fn stops(&self) -> &'s [S] {
        self.stops
    }

    /// Most chars held text may have: one fewer than the longest stop string's.
    pub fn max_held_chars(&self) -> usize {
        self.stops
            .iter()
            .map(|s| s.as_ref().chars().count().saturating_sub(1))
            .max()
            .unwrap_or(0)
    }

    /// Feeds the text one token added. `check` is false while the stream has generated no more
    /// than `min_tokens` tokens. Appends what may be sent to `out`.
    pub fn step(&self, held: &mut Held, new: &str, check: bool, out: &mut String) -> StopStep {
        let a = &self.automaton;
        let start = self.resume(held, out);
        let mut state = start;
        // The lowest stop index the new text completes, and where its first match ends.
        let mut found: Option<(u32, usize)> = None;
        for (i, &byte) in new.as_bytes().iter().enumerate() {
            state = a.next(state, byte);
            let best = a.best(state);
            if check && best != NONE && found.is_none_or(|(index, _)| best < index) {
                found = Some((best, i + 1));
            }
        }
        let held_text = a.spell(self.stops, start);
        if let Some((index, end)) = found {
            // `end` counts bytes of `new`; the match may begin in the held text.
            let len = self
                .stops
                .get(index as usize)
                .map_or(0, |s| s.as_ref().len());
            let cut = held_text.len() + end - if self.include { 0 } else { len };
            push_prefix(out, held_text, new, cut);
            held.node = Some(0);
            return StopStep::Matched {
                index: index as usize,
            };
        }
        let kept = a.hold(state);
        let release = held_text.len() + new.len() - a.depth(kept);
        push_prefix(out, held_text, new, release);
        held.node = Some(kept);
        StopStep::Continue
    }

    /// Releases what is held (the stream finished without a match).
    pub fn finish(&self, held: &mut Held, out: &mut String) {
        let node = self.resume(held, out);
        out.push_str(self.automaton.spell(self.stops, node));
        held.node = Some(0);
    }

    /// The held text, to carry to the next call.
    pub fn held_text(&self, held: Held) -> String {
        match held.node {
            None => held.carried,
            Some(node) => self.automaton.spell(self.stops, node).to_owned(),
        }
    }

    /// The node of the held text, scanning carried text first (its matches do not count; what
    /// of it cannot begin a stop string is released to `out`).
    fn resume(&self, held: &mut Held, out: &mut String) -> u32 {
        if let Some(node) = held.node {
            return node;
        }
        let a = &self.automaton;
        let mut state = 0;
        for &byte in held.carried.as_bytes() {
            state = a.next(state, byte);
        }
        let kept = a.hold(state);
        let release = held.carried.len() - a.depth(kept);
        out.push_str(held.carried.get(..release).unwrap_or_default());
        held.carried.clear();
        held.node = Some(kept);
        kept
    }
}

/// Appends the first `n` bytes of `a` followed by `b` to `out`.
fn push_prefix(out: &mut String, a: &str, b: &str, n: usize) {
    out.push_str(a.get(..n.min(a.len())).unwrap_or_default());
    out.push_str(b.get(..n.saturating_sub(a.len())).unwrap_or_default());
}

/// An Aho-Corasick automaton over the stop strings' bytes. Nodes are numbered in breadth-first
/// order (the root is 0), each node's children contiguous and sorted by byte, so a node's
/// children are a range of nodes and no child table is stored.
#[derive(Debug, Clone, Default)]
struct Automaton {
    nodes: Vec<Node>,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    /// The byte of the edge into this node.
    byte: u8,
    /// The node's children are the nodes `first_child..end_child`.
    first_child: u32,
    end_child: u32,
    /// The node of the longest proper suffix of its string that is also a node (while the
    /// automaton is built: the node's parent).
    fail: u32,
    /// The lowest stop index ending here or along the failure chain, or `NONE`.
    best: u32,
    /// The deepest node of its failure chain (itself included) that has children: its string
    /// is the longest suffix that can still grow into a stop string.
    hold: u32,
    /// The node's depth and a stop string it begins: its string is `stops[pat][..depth]`.
    depth: u32,
    pat: u32,
}

const ROOT: Node = Node {
    byte: 0,
    first_child: 0,
    end_child: 0,
    fail: 0,
    best: NONE,
    hold: 0,
    depth: 0,
    pat: 0,
};

impl Automaton {
    /// The automaton of `stops` (`bytes` long in all).
    fn new<S: AsRef<str>>(stops: &[S], bytes: usize) -> Automaton {
        if bytes == 0 {
            return Automaton::default();
        }
        let mut nodes = Vec::with_capacity(bytes + 1);
        nodes.push(ROOT);
        // The trie, level by level: the stop strings long enough for this level, grouped by
        // (node, next byte), become the next level's nodes in that order: breadth-first, each
        // node's children contiguous and sorted. `frontier` holds, for each stop string still
        // being read, its node, its index and its byte at this level.
        let mut frontier: Vec<(u32, u8, u32)> =
            (0..stops.len() as u32).map(|i| (0, 0, i)).collect();
        let mut level = 0usize;
        loop {
            frontier.retain_mut(|(_, byte, i)| {
                let at = stops
                    .get(*i as usize)
                    .and_then(|s| s.as_ref().as_bytes().get(level));
                at.map(|b| *byte = *b).is_some()
            });
            if frontier.is_empty() {
                break;
            }
            // Sorted already unless two strings share a node (then the first level's sort,
            // which orders by index too, keeps each group in index order).
            if !frontier.is_sorted() {
                frontier.sort_unstable();
            }
            let mut last = (u32::MAX, 0u8, 0u32);
            for entry in &mut frontier {
                let (node, byte, i) = *entry;
                let child = if (last.0, last.1) == (node, byte) {
                    last.2
                } else {
                    let child = nodes.len() as u32;
                    nodes.push(Node {
                        byte,
                        fail: node,
                        depth: level as u32 + 1,
                        pat: i,
                        ..ROOT
                    });
                    if let Some(up) = nodes.get_mut(node as usize) {
                        if up.end_child == 0 {
                            up.first_child = child;
                        }
                        up.end_child = child + 1;
                    }
                    last = (node, byte, child);
                    child
                };
                if stops.get(i as usize).map(|s| s.as_ref().len()) == Some(level + 1) {
                    if let Some(n) = nodes.get_mut(child as usize) {
                        n.best = n.best.min(i);
                    }
                }
                entry.0 = child;
            }
            level += 1;
        }
        let mut a = Automaton { nodes };
        // Failure links, best indices and hold nodes; a failure link points to a shallower
        // node, so breadth-first order computes each from finished ones.
        for node in 1..a.nodes.len() {
            let n = a.node(node as u32);
            let fail = match n.fail {
                0 => 0,
                up => a.next(a.node(up).fail, n.byte),
            };
            let below = a.node(fail);
            if let Some(n) = a.nodes.get_mut(node) {
                n.fail = fail;
                n.best = n.best.min(below.best);
                n.hold = if n.end_child > 0 {
                    node as u32
                } else {
                    below.hold
                };
            }
        }
        a
    }

    fn node(&self, node: u32) -> Node {
        self.nodes.get(node as usize).copied().unwrap_or(ROOT)
    }

    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        let n = self.nodes.get(node as usize)?;
        let children = self
            .nodes
            .get(n.first_child as usize..n.end_child as usize)?;
        let at = children.binary_search_by_key(&byte, |c| c.byte).ok()?;
        Some(n.first_child + at as u32)
    }

    /// The node after `node` reads `byte`.
    fn next(&self, mut node: u32, byte: u8) -> u32 {
        loop {
            if let Some(child) = self.child(node, byte) {
                return child;
            }
            if node == 0 {
                return 0;
            }
            node = self.node(node).fail;
        }
    }

    fn best(&self, node: u32) -> u32 {
        self.node(node).best
    }

    fn hold(&self, node: u32) -> u32 {
        self.node(node).hold
    }

    fn depth(&self, node: u32) -> usize {
        self.node(node).depth as usize
    }

    /// The string node `node` spells.
    fn spell<'s, S: AsRef<str>>(&self, stops: &'s [S], node: u32) -> &'s str {
        let n = self.node(node);
        stops
            .get(n.pat as usize)
            .and_then(|s| s.as_ref().get(..n.depth as usize))
            .unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// vLLM's whole-text check, token by token: the text and the matched stop string.
    fn whole<S: AsRef<str>>(
        stops: &StopStrings<'_, S>,
        deltas: &[&str],
        min_tokens: usize,
    ) -> (String, Option<usize>) {
        let mut text: Vec<char> = Vec::new();
        for (n, delta) in deltas.iter().enumerate() {
            let new: Vec<char> = delta.chars().collect();
            text.extend(&new);
            if n < min_tokens {
                continue;
            }
            for (index, stop) in stops.stops().iter().enumerate() {
                let s: Vec<char> = stop.as_ref().chars().collect();
                if s.is_empty() {
                    continue;
                }
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

    fn streamed<S: AsRef<str>>(
        stops: &StopStrings<'_, S>,
        deltas: &[&str],
        min_tokens: usize,
    ) -> (String, Option<usize>) {
        let (mut held, mut out) = (Held::default(), String::new());
        for (n, delta) in deltas.iter().enumerate() {
            let before = out.len();
            let step = stops.step(&mut held, delta, n + 1 > min_tokens, &mut out);
            // Carried out and back in as text, as a stream state does between chunks.
            held = Held::new(stops.held_text(held));
            // Held text never exceeds the longest stop string minus one char.
            let longest = stops
                .stops()
                .iter()
                .map(|s| s.as_ref().chars().count())
                .max()
                .unwrap_or(0);
            let kept = stops.held_text(held.clone());
            assert!(kept.chars().count() < longest.max(1));
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
        let s = StopStrings::new(&["world"], false).unwrap();
        assert_eq!(streamed(&s, &deltas, 0), ("Hello, ".to_owned(), Some(0)));
        let s = StopStrings::new(&["world"], true).unwrap();
        assert_eq!(
            streamed(&s, &deltas, 0),
            ("Hello, world".to_owned(), Some(0))
        );
        // Not checked during min_tokens, and a match completed then is not found later.
        let s = StopStrings::new(&["Hello"], false).unwrap();
        assert_eq!(
            streamed(&s, &["Hello", ", world"], 1),
            ("Hello, world".to_owned(), None)
        );
        // A match the new text completes counts, even if it began during min_tokens.
        assert_eq!(streamed(&s, &deltas, 1), (String::new(), Some(0)));
        // Multi-byte characters around the match are never split.
        let s = StopStrings::new(&["文字"], false).unwrap();
        assert_eq!(
            streamed(&s, &["中", "文", "字👍"], 0),
            ("中".to_owned(), Some(0))
        );
    }

    #[test]
    fn the_first_stop_in_list_order_wins_at_its_leftmost_match() {
        // "bc" ends first in the text, but "abcd" comes first in the list.
        let s = StopStrings::new(&["abcd", "bc"], false).unwrap();
        assert_eq!(streamed(&s, &["xabcdy"], 0), ("x".to_owned(), Some(0)));
        // A stop string that is a suffix of another is found through the failure links.
        let s = StopStrings::new(&["zzz", "c"], true).unwrap();
        assert_eq!(
            streamed(&s, &["ab", "cabc"], 0),
            ("abc".to_owned(), Some(1))
        );
        // Duplicates and empty strings: the first copy's index in the list, empties ignored.
        let s = StopStrings::new(&["", "ab", "ab"], false).unwrap();
        assert_eq!(streamed(&s, &["xxab"], 0), ("xx".to_owned(), Some(1)));
        assert!(StopStrings::new(&["", ""], false).unwrap().is_empty());
    }

    #[test]
    fn carried_text_that_cannot_begin_a_stop_is_released_first() {
        let s = StopStrings::new(&["abc"], false).unwrap();
        let (mut held, mut out) = (Held::new("xyab".to_owned()), String::new());
        assert_eq!(s.step(&mut held, "d", true, &mut out), StopStep::Continue);
        assert_eq!(out, "xyabd");
        let (mut held, mut out) = (Held::new("xyab".to_owned()), String::new());
        assert_eq!(
            s.step(&mut held, "c", true, &mut out),
            StopStep::Matched { index: 0 }
        );
        assert_eq!(out, "xy");
        let (mut held, mut out) = (Held::new("q".to_owned()), String::new());
        s.finish(&mut held, &mut out);
        assert_eq!(out, "q");
    }

    #[test]
    fn long_stop_strings_are_held_back_whole() {
        // The hold-back is the automaton's state: 4,095 held bytes are never rescanned.
        let stop = "a".repeat(4096);
        let stops = [stop.as_str(), "b"];
        let s = StopStrings::new(&stops, false).unwrap();
        let (mut held, mut out) = (Held::default(), String::new());
        for _ in 0..10_000 {
            assert_eq!(s.step(&mut held, "a", false, &mut out), StopStep::Continue);
        }
        assert_eq!(s.held_text(held.clone()).len(), 4095);
        assert_eq!(out.len(), 10_000 - 4095);
        assert_eq!(
            s.step(&mut held, "a", true, &mut out),
            StopStep::Matched { index: 0 }
        );
        assert_eq!(out.len(), 10_001 - 4096);
        assert_eq!(s.max_held_chars(), 4095);
    }

    #[test]
    fn stop_strings_over_the_limit_are_refused() {
        let big = "x".repeat(MAX_STOP_BYTES / 2 + 1);
        let stops = [big.as_str(), big.as_str()];
        let err = StopStrings::new(&stops, false).unwrap_err();
        assert_eq!(err.bytes, MAX_STOP_BYTES + 2);
        assert!(StopStrings::new(&stops[..1], false).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn streaming_equals_whole_text(
            deltas in prop::collection::vec("[ab中 ]{0,4}", 0..12),
            stops in prop::collection::vec("[ab中]{0,4}", 0..5),
            include in any::<bool>(),
            min_tokens in 0usize..4,
        ) {
            let s = StopStrings::new(&stops, include).unwrap();
            let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
            prop_assert_eq!(streamed(&s, &deltas, min_tokens), whole(&s, &deltas, min_tokens));
        }
    }
}
