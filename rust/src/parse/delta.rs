//! What parsing adds to a response: content, reasoning and tool-call deltas, and what the
//! request allows the parsers.

/// What the request asks of the tool parser, and of Qwen3's reasoning.
#[derive(Debug, Clone, Copy)]
pub struct ToolRules {
    /// Tool calls are parsed at all (`tools` given, `tool_choice` not `"none"`).
    pub enabled: bool,
    /// More than one call may be sent.
    pub parallel: bool,
    /// Thinking is on (`chat_template_kwargs.enable_thinking`, default true): Qwen3's output
    /// starts in reasoning.
    pub thinking: bool,
    /// The request switches thinking on (`chat_template_kwargs.thinking` or `enable_thinking`,
    /// default off): DeepSeek-V3's output has reasoning only then, and starts in it.
    pub thinking_asked: bool,
    /// Thinking is on unless the request switches it off: neither `chat_template_kwargs`'
    /// `thinking` nor `enable_thinking` (nor a `reasoning_effort`, which stands for
    /// `enable_thinking`) is given, or one of them is true (GLM-4.5's and Kimi-K2's rule).
    pub thinking_unless_off: bool,
    /// Thinking is on unless the request switches it off as vLLM's `deepseek_v4` parser reads
    /// it: `thinking` or `enable_thinking` given (a null too) and neither true, or
    /// `chat_template_kwargs.reasoning_effort` `"none"` (a request's `reasoning_effort` stands
    /// for `enable_thinking`, as in [`ToolRules::thinking_unless_off`]).
    pub thinking_unless_given_off: bool,
    /// Thinking is on as vLLM's `kimi_k3` parser reads it: `chat_template_kwargs.thinking` by
    /// Python truth where it is given and not null, else `enable_thinking` as in
    /// [`ToolRules::thinking`].
    pub thinking_first: bool,
    /// Thinking is on as vLLM's `hy_v3` parser reads it: the request's `reasoning_effort`, else
    /// `chat_template_kwargs.reasoning_effort` (the first of them true by Python truth), is not
    /// `"no_think"`; neither given is `"no_think"`.
    pub effort_thinks: bool,
    /// As [`ToolRules::effort_thinks`], with neither given on (vLLM's `hy_v4`: its chat
    /// template's default effort is `"high"`).
    pub effort_thinks_by_default: bool,
    /// `chat_template_kwargs.thinking_mode` is the string `"enabled"` (vLLM's `minimax_m3`
    /// parser's switch: MiniMax-M3's output starts in reasoning only then).
    pub thinking_mode_enabled: bool,
}

/// A tool call's part of one delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallDelta {
    /// The call's place among the choice's calls (the wire's `tool_calls[].index`).
    pub index: u32,
    /// The name, on the call's first delta only.
    pub name: Option<String>,
    /// The arguments' text this delta adds (JSON once all of a call's deltas are joined).
    pub arguments: String,
}

/// What parsing one step added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delta {
    /// Content text added.
    pub content: String,
    /// Reasoning text added.
    pub reasoning: String,
    /// Tool-call parts added, in call order.
    pub calls: Vec<CallDelta>,
}

impl Delta {
    /// Call `index` starts, with its name.
    pub fn start_call(&mut self, index: u32, name: String) {
        self.calls.push(CallDelta {
            index,
            name: Some(name),
            arguments: String::new(),
        });
    }

    /// More argument text of call `index`.
    pub fn push_arguments(&mut self, index: u32, text: &str) {
        match self.calls.last_mut() {
            Some(last) if last.index == index => last.arguments.push_str(text),
            _ => self.calls.push(CallDelta {
                index,
                name: None,
                arguments: text.to_owned(),
            }),
        }
    }

    /// Appends a later delta (the tests add chunks' deltas up).
    #[cfg(test)]
    pub(crate) fn append(&mut self, later: Delta) {
        self.content.push_str(&later.content);
        self.reasoning.push_str(&later.reasoning);
        self.calls.extend(later.calls);
    }

    /// Content, reasoning and `(name, arguments)` per call, the calls' deltas joined (tests).
    #[cfg(test)]
    #[allow(clippy::unwrap_used)]
    pub(crate) fn into_parts(self) -> (String, String, Vec<(String, String)>) {
        let mut calls: Vec<(String, String)> = Vec::new();
        for c in self.calls {
            match c.name {
                Some(name) => calls.push((name, c.arguments)),
                None => calls.last_mut().unwrap().1.push_str(&c.arguments),
            }
        }
        (self.content, self.reasoning, calls)
    }
}
