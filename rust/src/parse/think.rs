//! One choice's parser state (carried in `stream_state["parser"]`) and the think reasoning
//! parser: output between `<think>` and `</think>` is reasoning; content goes on to the tool
//! parser.

use serde::{Deserialize, Serialize};

use super::delta::{Delta, ToolRules};
use super::hermes::{self, ToolState};
use super::markers::{Parsers, Reasoning, Tag};
use crate::holdback::{joined, open_suffix};

/// One choice's parser state, carried in `stream_state["parser"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseState {
    /// Inside reasoning.
    #[serde(rename = "r", default)]
    pub(crate) reasoning: bool,
    /// Text held back because it may begin a think marker (text-matched markers only).
    #[serde(rename = "h", default, skip_serializing_if = "String::is_empty")]
    pub(crate) held: String,
    #[serde(rename = "t", default)]
    pub(crate) tool: ToolState,
    /// A response template's state (template parsers use only this field).
    #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
    pub(crate) template: Option<Box<super::template::TemplateState>>,
}

impl ParseState {
    /// The state a choice's output starts in, from the prompt's ids.
    pub(crate) fn initial(p: &Parsers, prompt: &[u32]) -> ParseState {
        let reasoning = match p.reasoning {
            None => false,
            Some(kind) => {
                let open = p.think_open.id;
                let close = p.think_close.id;
                let last = prompt
                    .iter()
                    .rev()
                    .find(|&&id| Some(id) == open || Some(id) == close);
                match last {
                    Some(&id) => Some(id) == open,
                    None => kind == Reasoning::DeepSeekR1,
                }
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
        if p.reasoning.is_none() {
            self.tool.feed(text, tag, p, rules, out);
            return;
        }
        match tag {
            Some(t @ (Tag::ThinkOpen | Tag::ThinkClose)) => {
                let marker = if t == Tag::ThinkOpen {
                    &p.think_open
                } else {
                    &p.think_close
                };
                let before = text.strip_suffix(marker.text).unwrap_or(text);
                self.route(before, None, p, rules, out);
                self.reasoning = t == Tag::ThinkOpen;
            }
            _ if p.think_open.id.is_some() && p.think_close.id.is_some() => {
                self.route(text, tag, p, rules, out);
            }
            _ => self.scan_think(text, tag, p, rules, out),
        }
    }

    /// Sends text to reasoning or, in content, on to the tool parser.
    fn route(
        &mut self,
        text: &str,
        tag: Option<Tag>,
        p: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) {
        if self.reasoning {
            out.reasoning.push_str(text);
        } else {
            self.tool.feed(text, tag, p, rules, out);
        }
    }

    /// Think markers matched by text: scan for the one that ends the current mode, holding back
    /// a suffix that may begin it.
    fn scan_think(
        &mut self,
        text: &str,
        tag: Option<Tag>,
        p: &Parsers,
        rules: ToolRules,
        out: &mut Delta,
    ) {
        let buf = joined(std::mem::take(&mut self.held), text);
        let mut rest: &str = &buf;
        loop {
            let marker = if self.reasoning {
                p.think_close.text
            } else {
                p.think_open.text
            };
            if let Some(at) = rest.find(marker) {
                self.route(rest.get(..at).unwrap_or_default(), None, p, rules, out);
                self.reasoning = !self.reasoning;
                rest = rest.get(at + marker.len()..).unwrap_or_default();
                continue;
            }
            let keep = open_suffix(rest, marker);
            let (send, hold) = rest.split_at(rest.len() - keep);
            self.route(send, tag, p, rules, out);
            self.held = hold.to_owned();
            break;
        }
    }

    /// Whether a carried state is one the parsers could have written: a hostile one (long held
    /// text, say) would cost every later token a scan of it.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.held.len() > hermes::MAX_HELD_BYTES {
            return Err(format!(
                "its held text is {} bytes, at most {} are carried",
                self.held.len(),
                hermes::MAX_HELD_BYTES
            ));
        }
        if let Some(t) = &self.template {
            t.check()?;
        }
        self.tool.check()
    }

    /// The output ended: what is held back is text after all, and a call still open is closed.
    pub(crate) fn finish(&mut self, p: &Parsers, rules: ToolRules, out: &mut Delta) {
        let held = std::mem::take(&mut self.held);
        self.route(&held, None, p, rules, out);
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
        }
    }

    const RULES: ToolRules = ToolRules {
        enabled: true,
        parallel: true,
    };

    /// Content, reasoning and `(name, arguments)` per call, from `pieces` fed in order.
    fn run(p: &Parsers, pieces: &[&str]) -> (String, String, Vec<(String, String)>) {
        let mut state = ParseState::initial(p, &[]);
        let mut all = Delta::default();
        for piece in pieces {
            let mut d = Delta::default();
            state.feed(piece, None, p, RULES, &mut d);
            // The state travels as JSON between chunks.
            state = serde_json::from_str(&serde_json::to_string(&state).unwrap()).unwrap();
            all.content.push_str(&d.content);
            all.reasoning.push_str(&d.reasoning);
            all.calls.extend(d.calls);
        }
        state.finish(p, RULES, &mut all);
        let mut calls: Vec<(String, String)> = Vec::new();
        for c in all.calls {
            match c.name {
                Some(name) => calls.push((name, c.arguments)),
                None => calls.last_mut().unwrap().1.push_str(&c.arguments),
            }
        }
        (all.content, all.reasoning, calls)
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
            [("find".into(), args.into()), ("none".into(), String::new())]
        );
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
        assert!(ParseState::initial(&p, &[1, 7, 2]).reasoning);
        assert!(!ParseState::initial(&p, &[7, 8, 2]).reasoning);
        assert!(!ParseState::initial(&p, &[1, 2]).reasoning);
        p.reasoning = Some(Reasoning::DeepSeekR1);
        assert!(ParseState::initial(&p, &[1, 2]).reasoning);
        assert!(!ParseState::initial(&p, &[7, 8]).reasoning);
    }
}
