//! One choice's parser state (carried in `stream_state["parser"]`) and the think reasoning
//! parser: output is reasoning until `</think>` ends it, then content, which goes on to the tool
//! parser. Reasoning ends once: after it, think markers are content text.

use serde::{Deserialize, Serialize};

use super::carry::carried;
use super::delta::{Delta, ToolRules};
use super::hermes::{self, ToolState};
use super::markers::{Marker, Parsers, Reasoning, Tag};
use crate::holdback::{first_marker, joined};

/// One choice's parser state, carried in `stream_state["parser"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseState {
    /// Inside reasoning (it has not ended yet).
    #[serde(rename = "r", default)]
    pub(crate) reasoning: bool,
    /// Reasoning text held back because it may begin a marker (text-matched markers only).
    #[serde(rename = "h", default, skip_serializing_if = "String::is_empty")]
    pub(crate) held: String,
    #[serde(rename = "t", default)]
    pub(crate) tool: ToolState,
    /// A response template's state (template parsers use only this field).
    #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
    pub(crate) template: Option<Box<super::template::TemplateState>>,
}

/// What a marker found in reasoning does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// `<think>` inside reasoning: dropped.
    Open,
    /// `</think>`: reasoning ends, the marker is dropped.
    Close,
    /// `<tool_call>` (Qwen3): reasoning ends and the marker starts the content.
    Call,
}

impl ParseState {
    /// The state a choice's output starts in, from the prompt's ids and (Qwen3) the request's
    /// `enable_thinking`.
    ///
    /// DeepSeek-R1: in reasoning unless the prompt's last think marker is `</think>`. Qwen3: in
    /// content when thinking is off; else in reasoning unless the prompt closed it in the
    /// current turn (a `</think>` or `<tool_call>` after the last turn marker and after any
    /// `<think>`).
    pub(crate) fn initial(p: &Parsers, prompt: &[u32], rules: ToolRules) -> ParseState {
        let open = p.think_open.id;
        let close = p.think_close.id;
        let reasoning = match p.reasoning {
            None => false,
            Some(Reasoning::DeepSeekR1) => prompt
                .iter()
                .rev()
                .find(|&&id| Some(id) == open || Some(id) == close)
                .is_none_or(|&id| Some(id) == open),
            Some(Reasoning::Qwen3) if !rules.thinking => false,
            Some(Reasoning::Qwen3) => {
                let call = p.call_open.id;
                let ends = |id: u32| Some(id) == close || Some(id) == call;
                let stops = |id: u32| Some(id) == open || p.turns.contains(&Some(id));
                prompt
                    .iter()
                    .rev()
                    .find(|&&id| ends(id) || stops(id))
                    .is_none_or(|&id| !ends(id))
            }
        };
        ParseState {
            reasoning,
            held: String::new(),
            tool: ToolState::default(),
            template: None,
        }
    }

    /// A template parser's state.
    pub(crate) fn template(state: super::template::TemplateState) -> ParseState {
        ParseState {
            template: Some(Box::new(state)),
            ..ParseState::default()
        }
    }

    /// Feeds one token's text; `tag` is the marker the token is, if it counts by id.
    pub(crate) fn feed(
        &mut self,
        text: &str,
        tag: Option<Tag>,
        p: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) {
        if !self.reasoning {
            if !self.held.is_empty() {
                // Held by an earlier version's parser, which held text in content too.
                let held = std::mem::take(&mut self.held);
                self.tool.feed(&held, None, p, rules, out);
            }
            self.tool.feed(text, tag, p, rules, out);
            return;
        }
        let found = match tag {
            Some(Tag::ThinkOpen) => Some((Found::Open, &p.think_open)),
            Some(Tag::ThinkClose) => Some((Found::Close, &p.think_close)),
            Some(Tag::CallOpen) if p.reasoning == Some(Reasoning::Qwen3) => {
                Some((Found::Call, &p.call_open))
            }
            _ => None,
        };
        let Some((found, marker)) = found else {
            self.think_text(text, p, rules, out);
            return;
        };
        let before = text.strip_suffix(marker.text).unwrap_or(text);
        let mark = text.get(before.len()..).unwrap_or_default();
        self.think_text(before, p, rules, out);
        if !self.reasoning {
            // Text before the marker ended reasoning: the marker is content.
            self.tool.feed(mark, tag, p, rules, out);
            return;
        }
        // A marker token: what was held cannot complete a text marker any more.
        let held = std::mem::take(&mut self.held);
        out.reasoning.push_str(&held);
        match found {
            Found::Open => {}
            Found::Close => self.reasoning = false,
            Found::Call => {
                self.reasoning = false;
                self.tool.feed(mark, tag, p, rules, out);
            }
        }
    }

    /// The markers that end or continue reasoning and count by their text, with what each does.
    fn text_markers(p: &Parsers) -> impl Iterator<Item = (Found, &Marker)> + Clone {
        let call = (p.reasoning == Some(Reasoning::Qwen3)).then_some((Found::Call, &p.call_open));
        [(Found::Open, &p.think_open), (Found::Close, &p.think_close)]
            .into_iter()
            .chain(call)
            .filter(|(_, m)| m.id.is_none())
    }

    /// Reasoning text outside marker tokens: scans for the text-matched markers, holding back a
    /// suffix that may begin one; once reasoning ends, the rest goes on as content.
    fn think_text(&mut self, text: &str, p: &Parsers, rules: ToolRules, out: &mut Delta) {
        if !self.reasoning {
            self.tool.feed(text, None, p, rules, out);
            return;
        }
        if Self::text_markers(p).next().is_none() {
            out.reasoning.push_str(text);
            return;
        }
        let buf = joined(std::mem::take(&mut self.held), text);
        let mut rest: &str = &buf;
        loop {
            let markers = Self::text_markers(p).map(|(f, m)| (f, m.text));
            let (at, found, marker) = match first_marker(rest, markers) {
                Ok(first) => first,
                Err(keep) => {
                    let (send, hold) = rest.split_at(rest.len() - keep);
                    out.reasoning.push_str(send);
                    self.held = hold.to_owned();
                    return;
                }
            };
            out.reasoning.push_str(rest.get(..at).unwrap_or_default());
            let after = rest.get(at + marker.len()..).unwrap_or_default();
            match found {
                Found::Open => rest = after,
                Found::Close => {
                    self.reasoning = false;
                    self.tool.feed(after, None, p, rules, out);
                    return;
                }
                Found::Call => {
                    self.reasoning = false;
                    self.tool
                        .feed(rest.get(at..).unwrap_or_default(), None, p, rules, out);
                    return;
                }
            }
        }
    }

    /// Whether a carried state is one the parsers could have written: a hostile one (long held
    /// text, say) would cost every later token a scan of it.
    pub(crate) fn check(&self) -> Result<(), String> {
        carried("held text", self.held.len(), hermes::MAX_HELD_BYTES)?;
        if let Some(t) = &self.template {
            t.check()?;
        }
        self.tool.check()
    }

    /// The output ended: what is held back is text after all, and a call still open is closed.
    pub(crate) fn finish(&mut self, p: &Parsers, rules: ToolRules, out: &mut Delta) {
        let held = std::mem::take(&mut self.held);
        if self.reasoning {
            out.reasoning.push_str(&held);
        } else {
            self.tool.feed(&held, None, p, rules, out);
        }
        self.tool.finish(rules, out);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::parse::markers::Marker;

    /// Parsers whose markers all count by text (as the hermes tags do on DeepSeek-R1).
    fn by_text(reasoning: Option<Reasoning>) -> Parsers {
        let m = |text| Marker { text, id: None };
        Parsers {
            reasoning,
            tools: true,
            think_open: m("<think>"),
            think_close: m("</think>"),
            call_open: m("<tool_call>"),
            call_close: m("</tool_call>"),
            turns: [None, None],
        }
    }

    const RULES: ToolRules = ToolRules {
        enabled: true,
        parallel: true,
        thinking: true,
        thinking_asked: false,
        thinking_unless_off: true,
        thinking_unless_given_off: true,
        thinking_first: true,
        effort_thinks: true,
        effort_thinks_by_default: true,
        thinking_mode_enabled: false,
    };

    /// Content, reasoning and `(name, arguments)` per call, from `pieces` fed in order.
    fn run(p: &Parsers, pieces: &[&str]) -> (String, String, Vec<(String, String)>) {
        let mut state = ParseState::initial(p, &[], RULES);
        let mut all = Delta::default();
        for piece in pieces {
            let mut d = Delta::default();
            state.feed(piece, None, p, RULES, &mut d);
            // The state travels as JSON between chunks.
            state = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
            all.append(d);
        }
        state.finish(p, RULES, &mut all);
        all.into_parts()
    }

    const OUTPUT: &str = "plan 中</think>\n\nHi 👋<tool_call>\n{\"arguments\": {\"q\": \"a}</tool_call>\\\"\", \
                          \"n\": [1, {\"x\": []}]}, \"name\": \"find\", \"arguments\": {\"z\": 1}}\n\
                          </tool_call>\n<tool_call>{\"name\": \"none\"}</tool_call>";

    #[test]
    fn one_piece_gives_content_reasoning_and_calls() {
        let (content, reasoning, calls) = run(&by_text(Some(Reasoning::DeepSeekR1)), &[OUTPUT]);
        assert_eq!(reasoning, "plan 中");
        assert_eq!(content, "\n\nHi 👋");
        let args = "{\"q\": \"a}</tool_call>\\\"\", \"n\": [1, {\"x\": []}]}";
        assert_eq!(
            calls,
            [("find".into(), args.into()), ("none".into(), "{}".into())]
        );
    }

    #[test]
    fn reasoning_ends_once_and_later_think_markers_are_content() {
        let p = by_text(Some(Reasoning::DeepSeekR1));
        let out = "a<think>b</think>c<think>d</think>e";
        let (content, reasoning, _) = run(&p, &[out]);
        assert_eq!(
            (reasoning.as_str(), content.as_str()),
            ("ab", "c<think>d</think>e")
        );
    }

    #[test]
    fn a_tool_call_ends_qwen3_reasoning_only() {
        let out = "plan<tool_call>{\"name\": \"f\"}</tool_call>";
        let (content, reasoning, calls) = run(&by_text(Some(Reasoning::Qwen3)), &[out]);
        assert_eq!((reasoning.as_str(), content.as_str()), ("plan", ""));
        assert_eq!(calls, [("f".into(), "{}".into())]);
        let (content, reasoning, calls) = run(&by_text(Some(Reasoning::DeepSeekR1)), &[out]);
        assert_eq!((reasoning.as_str(), content.as_str()), (out, ""));
        assert!(calls.is_empty());
    }

    #[test]
    fn every_split_gives_the_same_result() {
        let p = by_text(Some(Reasoning::DeepSeekR1));
        let whole = run(&p, &[OUTPUT]);
        let cuts: Vec<usize> = OUTPUT.char_indices().map(|(i, _)| i).collect();
        for &a in &cuts {
            for &b in cuts.iter().filter(|&&b| b > a).step_by(7) {
                let pieces = [&OUTPUT[..a], &OUTPUT[a..b], &OUTPUT[b..]];
                assert_eq!(run(&p, &pieces), whole, "cut at {a} and {b}");
            }
        }
    }

    #[test]
    fn the_prompt_decides_where_the_output_starts() {
        let mut p = by_text(Some(Reasoning::Qwen3));
        p.think_open.id = Some(7);
        p.think_close.id = Some(8);
        p.call_open.id = Some(9);
        p.turns = [Some(5), Some(6)];
        let start = |p: &Parsers, prompt: &[u32]| ParseState::initial(p, prompt, RULES).reasoning;
        assert!(start(&p, &[1, 7, 2]));
        assert!(!start(&p, &[7, 8, 2]));
        assert!(!start(&p, &[5, 9, 2]));
        // Qwen3 thinks by default; an earlier turn's </think> does not close this one.
        assert!(start(&p, &[1, 2]));
        assert!(start(&p, &[7, 8, 6, 5, 2]));
        let off = ToolRules {
            thinking: false,
            ..RULES
        };
        assert!(!ParseState::initial(&p, &[1, 7, 2], off).reasoning);
        p.reasoning = Some(Reasoning::DeepSeekR1);
        assert!(start(&p, &[1, 2]));
        assert!(!start(&p, &[7, 8]));
        assert!(!start(&p, &[7, 8, 6, 5, 2]));
        assert!(ParseState::initial(&p, &[1, 2], off).reasoning);
    }
}
