//! The readers of the derender body's objects: which fields each reads, which it hands to
//! serde, and which it skips.

use super::{Reader, Seen};
use crate::wire::input::{
    Body, Choice, Generate, LogprobEntry, LogprobToken, Logprobs, Obj, Request, State,
};

impl<'a> Reader<'a> {
    /// The body, read into `b` (a default one) where the caller keeps it: it is 1.6 kB, and
    /// returned by value it was copied ten times a chunk (`memcpy` under callgrind).
    pub(super) fn body(&mut self, b: &mut Body<'a>) -> Option<()> {
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"stream" => {
                    seen.once(0)?;
                    b.stream = r.opt(Self::bool)?;
                }
                b"model" => {
                    seen.once(1)?;
                    b.model = r.opt(Self::string)?;
                }
                b"generate_response" => {
                    seen.once(2)?;
                    b.generate_response = r.opt(Self::generate)?;
                }
                b"generate_responses" => {
                    seen.once(3)?;
                    b.generate_responses = r.opt(|r| r.list(Self::generate))?;
                }
                b"generate_chunk" => {
                    seen.once(4)?;
                    b.generate_chunk = r.opt(Self::generate)?;
                }
                b"stream_state" => {
                    seen.once(5)?;
                    b.stream_state = r.opt(Self::state)?;
                }
                b"prompt_tokens" => {
                    seen.once(6)?;
                    b.prompt_tokens = r.serde()?;
                }
                b"prompt_token_ids" => {
                    seen.once(7)?;
                    b.prompt_token_ids = r.serde()?;
                }
                b"chat_request" => {
                    seen.once(8)?;
                    let start = r.at;
                    b.chat_request = r.opt(Self::request)?;
                    if let Some(q) = b.chat_request.as_mut() {
                        q.raw = r.text.get(start..r.at);
                    }
                }
                b"completion_request" => {
                    seen.once(9)?;
                    b.completion_request = r.opt(Self::request)?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(())
    }

    fn generate(&mut self) -> Option<Obj<Generate<'a>>> {
        let mut g = Generate {
            request_id: None,
            choices: Vec::new(),
            usage: None,
            prompt_token_ids: None,
            prompt_logprobs: None,
            kv_transfer_params: None,
            output_mode: None,
            metrics: None,
        };
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"request_id" => {
                    seen.once(0)?;
                    g.request_id = r.opt(Self::string)?;
                }
                b"choices" => {
                    seen.once(1)?;
                    g.choices = r.list(Self::choice)?;
                }
                b"usage" => {
                    seen.once(2)?;
                    g.usage = r.serde()?;
                }
                b"prompt_token_ids" => {
                    seen.once(3)?;
                    g.prompt_token_ids = r.opt(Self::ids)?;
                }
                b"prompt_logprobs" => {
                    seen.once(4)?;
                    // Handed to serde, a value would be read twice (skipped, then parsed), and
                    // prompt logprobs can be most of a large body: serde reads such a body.
                    r.null()?;
                }
                b"kv_transfer_params" => {
                    seen.once(5)?;
                    g.kv_transfer_params = r.serde()?;
                }
                b"output_mode" => {
                    seen.once(6)?;
                    g.output_mode = r.opt(Self::string)?;
                }
                b"metrics" => {
                    seen.once(7)?;
                    g.metrics = r.serde()?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        // `choices` is required: serde says so.
        seen.has(1).then_some(Obj(g))
    }

    fn choice(&mut self) -> Option<Obj<Choice<'a>>> {
        let mut c = Choice {
            index: 0,
            logprobs: None,
            finish_reason: None,
            stop_reason: None,
            token_ids: None,
        };
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"index" => {
                    seen.once(0)?;
                    c.index = r.u32()?;
                }
                b"logprobs" => {
                    seen.once(1)?;
                    c.logprobs = r.opt(Self::logprobs)?;
                }
                b"finish_reason" => {
                    seen.once(2)?;
                    c.finish_reason = Some(r.opt(Self::string)?);
                }
                b"stop_reason" => {
                    seen.once(3)?;
                    c.stop_reason = r.serde()?;
                }
                b"token_ids" => {
                    seen.once(4)?;
                    c.token_ids = r.opt(Self::ids)?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        // `index` is required.
        seen.has(0).then_some(Obj(c))
    }

    fn state(&mut self) -> Option<Obj<State>> {
        let mut s = State::default();
        let mut seen = Seen::default();
        self.object(|r, key| {
            // Every field but `parser` defaults when absent and refuses null.
            match key {
                b"prev_tokens" => {
                    seen.once(0)?;
                    s.prev_tokens = r.list(Self::owned)?;
                }
                b"prefix_offset" => {
                    seen.once(1)?;
                    s.prefix_offset = r.u64()?;
                }
                b"read_offset" => {
                    seen.once(2)?;
                    s.read_offset = r.u64()?;
                }
                b"role_sent" => {
                    seen.once(3)?;
                    s.role_sent = r.bool()?;
                }
                b"logprob_context_token_ids" => {
                    seen.once(4)?;
                    s.logprob_context_token_ids = r.ids()?;
                }
                b"logprob_text_offset" => {
                    seen.once(5)?;
                    s.logprob_text_offset = r.u64()?;
                }
                b"output_token_ids" => {
                    seen.once(6)?;
                    s.output_token_ids = r.ids()?;
                }
                b"output_chunk_lens" => {
                    seen.once(7)?;
                    s.output_chunk_lens = r.list(Self::u64)?;
                }
                b"tools_streamed" => {
                    seen.once(8)?;
                    s.tools_streamed = r.bool()?;
                }
                b"last_tool_call_ids" => {
                    seen.once(9)?;
                    s.last_tool_call_ids = r.list(Self::owned)?;
                }
                b"held_text" => {
                    seen.once(10)?;
                    s.held_text = r.owned()?;
                }
                b"generated_tokens" => {
                    seen.once(11)?;
                    s.generated_tokens = r.u64()?;
                }
                b"stopped" => {
                    seen.once(12)?;
                    s.stopped = r.bool()?;
                }
                b"parser" => {
                    seen.once(13)?;
                    s.parser = r.serde()?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(Obj(s))
    }

    /// A choice's logprobs: every position is read here (an answer with logprobs is mostly
    /// them).
    fn logprobs(&mut self) -> Option<Obj<Logprobs<'a>>> {
        let mut l = Logprobs { content: None };
        let mut seen = Seen::default();
        self.object(|r, key| {
            if key == b"content" {
                seen.once(0)?;
                l.content = r.opt(|r| r.list(Self::position))?;
            } else {
                r.skip()?;
            }
            Some(())
        })?;
        Some(Obj(l))
    }

    fn position(&mut self) -> Option<Obj<LogprobEntry<'a>>> {
        let mut t = LogprobToken::default();
        let mut top_logprobs = None;
        let mut seen = Seen::default();
        self.object(|r, key| {
            if key == b"top_logprobs" {
                seen.once(4)?;
                top_logprobs = r.opt(|r| r.list(Self::alternative))?;
            } else if !r.token_field(key, &mut seen, &mut t)? {
                r.skip()?;
            }
            Some(())
        })?;
        let LogprobToken {
            token_id,
            token,
            logprob,
            bytes,
        } = t;
        Some(Obj(LogprobEntry {
            token_id,
            token,
            logprob,
            bytes,
            top_logprobs,
        }))
    }

    fn alternative(&mut self) -> Option<Obj<LogprobToken<'a>>> {
        let mut t = LogprobToken::default();
        let mut seen = Seen::default();
        self.object(|r, key| {
            if !r.token_field(key, &mut seen, &mut t)? {
                r.skip()?;
            }
            Some(())
        })?;
        Some(Obj(t))
    }

    /// A field a logprob position shares with its alternatives; false for any other key.
    fn token_field(
        &mut self,
        key: &[u8],
        seen: &mut Seen,
        t: &mut LogprobToken<'a>,
    ) -> Option<bool> {
        match key {
            b"token_id" => {
                seen.once(0)?;
                t.token_id = self.opt(Self::u32)?;
            }
            b"token" => {
                seen.once(1)?;
                t.token = self.opt(Self::string)?;
            }
            b"logprob" => {
                seen.once(2)?;
                t.logprob = self.opt(Self::f64)?;
            }
            b"bytes" => {
                seen.once(3)?;
                t.bytes = self.opt(|r| r.list(Self::u8))?;
            }
            _ => return Some(false),
        }
        Some(true)
    }

    /// A chat or completion request: its fields derender reads are few and small, and most
    /// requests carry none of them, so each goes to serde; what is skipped is the rest
    /// (`messages`, `prompt`, sampling parameters).
    fn request(&mut self) -> Option<Obj<Request<'a>>> {
        let mut q = Request::default();
        let mut seen = Seen::default();
        self.object(|r, key| {
            match key {
                b"stop" => {
                    seen.once(0)?;
                    q.stop = r.serde()?;
                }
                b"stop_token_ids" => {
                    seen.once(1)?;
                    q.stop_token_ids = r.serde()?;
                }
                b"ignore_eos" => {
                    seen.once(2)?;
                    q.ignore_eos = r.serde()?;
                }
                b"min_tokens" => {
                    seen.once(3)?;
                    q.min_tokens = r.serde()?;
                }
                b"include_stop_str_in_output" => {
                    seen.once(4)?;
                    q.include_stop_str_in_output = r.serde()?;
                }
                b"skip_special_tokens" => {
                    seen.once(5)?;
                    q.skip_special_tokens = r.serde()?;
                }
                b"return_token_ids" => {
                    seen.once(6)?;
                    q.return_token_ids = r.serde()?;
                }
                b"logprobs" => {
                    seen.once(7)?;
                    q.logprobs = r.serde()?;
                }
                b"top_logprobs" => {
                    seen.once(8)?;
                    q.top_logprobs = r.serde()?;
                }
                b"logprob_token_ids" => {
                    seen.once(9)?;
                    q.logprob_token_ids = r.serde()?;
                }
                b"tools" => {
                    seen.once(10)?;
                    q.tools = r.serde()?;
                }
                b"tool_choice" => {
                    seen.once(11)?;
                    q.tool_choice = r.serde()?;
                }
                b"parallel_tool_calls" => {
                    seen.once(12)?;
                    q.parallel_tool_calls = r.serde()?;
                }
                b"include_reasoning" => {
                    seen.once(13)?;
                    q.include_reasoning = r.serde()?;
                }
                b"chat_template_kwargs" => {
                    seen.once(14)?;
                    q.chat_template_kwargs = r.serde()?;
                }
                b"reasoning_effort" => {
                    seen.once(15)?;
                    q.reasoning_effort = r.serde()?;
                }
                _ => {
                    r.skip()?;
                }
            }
            Some(())
        })?;
        Some(Obj(q))
    }
}
