//! Hugging Face response templates, run by one resumable executor.
//!
//! A response template (`response_template` in a checkpoint's `tokenizer_config.json`, read by
//! transformers' `parse_response`) describes a model's output as **fields** of the assistant
//! message. The semantics supported here, in our words:
//!
//! - Each field has an **open** and a **close** delimiter: a literal, a list of literals (any
//!   matches) or a pattern (a regular expression; `.` matches newlines). At most one field has
//!   no open delimiter: the **implicit** field, which takes the text outside every other
//!   region (when none is declared, that text is dropped). A field without a close delimiter
//!   runs to the end of the output.
//! - Outside an explicit region, every explicit open and the implicit field's close are
//!   watched; inside one, only its close. The earliest match wins (then the longest, then an
//!   open over a close). Text up to where a delimiter may still match is sent; from there it is
//!   held until more text decides: a whole literal at the end of the text is final unless
//!   another literal of its list extends it, a pattern at the end waits for the next text.
//!   A lookahead `(?=X)` that ends a pattern `P(?=X)` matches P's text where X follows it
//!   (empty, for a whole-pattern lookahead).
//! - **start_anchor**: the prompt's text after the anchor's last match runs through the
//!   template first (without sending anything), so a prompt that opened `<think>` starts the
//!   output in reasoning. Only the prompt's last [`PROMPT_TAIL`] ids are read.
//! - Field names say where text goes: `content`; `reasoning_content`, `reasoning` or
//!   `thinking` (reasoning); `tool_calls`; `tool_text` (our addition), the text of a call
//!   block around its calls (from the block's marker, its open delimiter, and from where each
//!   call closes, to the next call's open or the field's own close), dropped and watched only
//!   where calls are parsed; `tools_block` (our addition), a call block dropped where the tool
//!   parser is named and the request turns calls off (`tool_choice: "none"`); any
//!   other field's text is dropped. Text fields stream stripped of surrounding whitespace per
//!   region (`content_args.strip`, default on); a field's later regions are sent after its
//!   earlier ones (with `join` between them), where `parse_response` keeps only the last
//!   region of a field that does not repeat.
//! - Tool calls: the `json` content parser with `transform` `{"function": "{content}"}` (or
//!   none) reads `{"name", "arguments"}` objects, or a list of them (`transform_each`, keys
//!   from the placeholders; with `content_args.name_is_key`, objects of one key, the name,
//!   whose value is the arguments: `[{"get_weather": {...}}]`): the name is sent when read
//!   and the arguments' raw JSON as it arrives; a close delimiter inside one of its JSON strings is text of the call (where
//!   `parse_response` cuts the JSON and fails). With
//!   `{"function": {"name": "{G}", "arguments": "{content}"}}`, G a named group of the open
//!   pattern, the name is sent when the call opens and the region's text is the arguments (in a dialect with `string_delims` or `unquoted_keys`, converted to JSON when the
//!   call closes). `xml-inline` content (`tag_pattern` with groups `key` and `value`) gives
//!   arguments as a JSON object: when the call closes, or, under a name whose rules type each
//!   value alone (vLLM's, `hy_v3`'s) and where the pattern reads `OPEN(?P<value>.*?)END`, tag
//!   by tag as each value ends, a value that stays a string whatever its text as its text
//!   comes (a key given twice is then sent twice, and a string value the call's end cuts ends
//!   there; `content_args.value_stops` names markup that also ends one). Our additions, for DeepSeek's DSML: a
//!   group `string` makes a tag's value a string where it is `true`, else JSON (its text where
//!   it is not JSON); a group `next` is where the next tag begins (a tag without its close
//!   ends there); `content_args.wrappers` lists keys (`arguments`, `input`) that, alone and
//!   not declared by the tool, unwrap an object of keys it declares. For Kimi K3's XTML: a
//!   group `type` makes a value a string where it is `string` or did not match, else JSON (its
//!   text where it is not); `content_args.closed_only` sends a call, name and arguments, only
//!   once it closes (a call the output cuts is dropped, a call without a name too); and
//!   `content_args.entities` reads `&quot;` and `&amp;` in names and keys as `"` and `&`. For
//!   MiniMax-M3: `xml-tree` content reads nested elements whose tags begin with
//!   `content_args.marker` into a JSON object when the call closes or the output cuts it
//!   ([`tree`]), and `content_args.in_block` watches a call's open only inside a call block's
//!   text (`tool_text`). For Muse: `content_args.stop_pattern` ends a call left open where it
//!   matches (a call sent only once closed is then dropped), and
//!   `content_args.collapse_doubled_names` reads a name `X.X` as `X` where the request declares
//!   `X` and not `X.X`. For Cohere: a field with `content_args.inline` (an open delimiter only)
//!   has its matches dropped wherever text goes, without ending the region they are in;
//!   `"strip": "trailing"` strips only a region's trailing whitespace; and
//!   `content_args.lstrip_after` drops, from where its region opens, the leading whitespace of
//!   the text that follows in whatever region. Equal matches (as early, as long, both opens or
//!   both closes) go to the field whose name sorts first. For MiniCPM5 and K2 Horizon: `reader`
//!   content keeps a call region's text, delimiters included, until it closes and reads it
//!   whole with a named reader ([`readers`]): its calls, or, where it gives none or the output
//!   cuts the region, its text as content in its place; `content_args.once` makes a field's
//!   open delimiter text once a region of it has closed.
//! - JSON calls end where their JSON does (vLLM's JSON parsers read it with `raw_decode`):
//!   raw arguments where their value ends (and the call where the containers its open
//!   delimiter left open close, as Llama's `{"name": ..., "parameters": ` does), a calls field
//!   without a close delimiter where its object or list ends. The close delimiter is taken if
//!   it comes next (after whitespace); otherwise the region ends there and the text after it is
//!   outside every region (`parse_response` would run the arguments on and fail). Before raw
//!   arguments are whole, a close delimiter is text of the call; arguments that are not JSON
//!   run to the close delimiter as written.
//! - A call cut by the end of the output is sent as far as it came (`parse_response` raises).
//!   A raw JSON call whose arguments never came is sent with `{}`.
//! - Arguments built from tags or dialect JSON are typed by the request's
//!   tool schema ([`typed`]): under a vLLM tool parser's name (`qwen3_coder`, `glm45`) as vLLM
//!   types them (each value the tag's text, typed by the types its schema allows; no schema: a
//!   string; under `hy_v3` by its parser's own rules), otherwise as `parse_response(...,
//!   tools=...)` does (string values, after the value parser, by the declared types). Raw JSON arguments are sent as written under a vLLM
//!   name; otherwise, where the request declares the called tool's properties, they are typed
//!   as `parse_response` types them and sent when the call closes.
//! - Under a vLLM reasoning parser's name, reasoning starts as vLLM's parser of that name
//!   starts it (`Start`): where thinking is on for the request (`qwen3` and the Qwen3
//!   templates: unless `enable_thinking` is off; `glm45`, `kimi_k2`, `ling3`: unless `thinking`
//!   or `enable_thinking` is given and neither is true; `deepseek_r1` and its template,
//!   `ernie45`, `step3`: always; `deepseek_v3`: only where the request switches it on), the output
//!   starts in reasoning (a `<think>` it begins with is dropped) and the prompt after the start
//!   anchor moves it on (a prompt that closed it starts the output in content); reasoning ends
//!   once (a later `<think>` is text); for `qwen3`, `glm45`, `kimi_k2` and `ling3` a call's
//!   open delimiter ends it. Where thinking is off, the reasoning field is not watched: its
//!   markers are content. Under `granite` and `hunyuan_a13b` the output starts in content and
//!   reasoning is where its open delimiter opens it, once. Under `deepseek_v4` and
//!   `deepseek_v41` the output starts in reasoning unless the request switches thinking off
//!   (as `glm45`, a null switch and a `reasoning_effort` of `"none"` in
//!   `chat_template_kwargs` off too), reasoning is also where its open delimiter opens it,
//!   each time, and a call block's marker ends it. Under `kimi_k3` it starts in reasoning
//!   unless `thinking` is given (not null) and false, or, without it, `enable_thinking` is off;
//!   under `hy_v3` as `deepseek_r1`, where the request's reasoning effort is given and not
//!   `"no_think"`, and under `hy_v4` unless it is `"no_think"`; under `minimax_m3` only where
//!   `chat_template_kwargs.thinking_mode` is `"enabled"`, else where its open delimiter opens
//!   it, once, and a call does not end it.
//!
//! The whole state is [`TemplateState`] (in `stream_state["parser"]["x"]`): the open region,
//! the held text (bounded by [`exec::MAX_HELD`]) and the open call's scanner; each token's
//! text is scanned once plus the held text, so a chunk's work follows the chunk.

mod args;
mod builtin;
mod delim;
mod exec;
mod hf;
mod lax;
mod names;
mod pythonic;
mod readers;
mod spec;
mod start;
mod tree;
mod typed;
mod unescape;

use std::sync::Arc;

pub use builtin::{TEMPLATES, json as builtin_json};
pub use names::{ALIASES, Kind, REFUSED, accepted as accepted_names, auto_names, refusal};

pub use exec::TemplateState;
pub use spec::Template;

use self::exec::Knobs;
use self::start::Start;
use self::typed::Typing;
use super::{ChatParser, Context, Delta, ParseError, ParseState, Session};
use crate::detokenizer::Detokenizer;

/// Most bytes of a call's text kept to be read when the call closes (a dialect or Python call,
/// a typed tag value, a tag-form call sent only once closed, a region a reader reads): until
/// then it travels in the state, so a chunk's cost grows with it. Text past it is dropped (it
/// bounds a carried state; a request's body may be 32 MiB).
pub(crate) const MAX_BODY: usize = 1024 * 1024;

/// How many of the prompt's last ids are decoded to find the start anchor.
pub const PROMPT_TAIL: usize = 64;

/// A template as a chat parser, with the parts that are on.
#[derive(Debug, Clone)]
pub struct TemplateParser {
    template: Arc<Template>,
    /// The names its reasoning and its tool calls go by.
    names: [&'static str; 2],
    reasoning: bool,
    tools: bool,
    /// Where reasoning starts, by the reasoning parser's name.
    start: Start,
    /// Whose rules type the arguments built when a call closes: vLLM's under a vLLM tool
    /// parser's name, else transformers'.
    typing: Typing,
    /// How text keeps its whitespace under a vLLM parser's name ([`builtin::vllm_space`]).
    vllm_space: Option<bool>,
    /// Text the output's content starts with, in place of parsing reasoning (vLLM's
    /// `minimax_m2_append_think`: the prompt's `<think>` given back as content).
    prefix: Option<&'static str>,
    /// The template of each reasoning effort but the first, chosen by the request (K2 Horizon's
    /// think markers are the effort's).
    efforts: Option<Arc<Efforts>>,
    /// The checkpoint's template named `hf` or `beam`: read as vLLM's response-template parser
    /// reads it ([`Knobs::hf`]), the prompt from its last start anchor however far back.
    hf: bool,
    det: Arc<Detokenizer>,
}

/// K2 Horizon's template for its medium and low reasoning efforts (the parser's own is the
/// high one's).
#[derive(Debug)]
struct Efforts {
    medium: Template,
    low: Template,
}

impl Efforts {
    /// The variants of K2 Horizon's template, its high effort's markers replaced.
    fn of(json: &str) -> Result<Efforts, String> {
        use readers::k2::Effort;
        let (open, close) = Effort::High.markers();
        let variant = |e: Effort| {
            let (o, c) = e.markers();
            // The close first: the open is a part of it.
            Template::from_json(&json.replace(close, c).replace(open, o))
        };
        Ok(Efforts {
            medium: variant(Effort::Medium)?,
            low: variant(Effort::Low)?,
        })
    }
}

impl TemplateParser {
    /// A parser of `template` for `det`'s output; `reasoning` and `tools` say which fields
    /// count (the others' delimiters are not watched, so their text stays where it is).
    pub fn new(
        det: Arc<Detokenizer>,
        template: Template,
        name: &'static str,
        reasoning: bool,
        tools: bool,
    ) -> TemplateParser {
        TemplateParser {
            reasoning: reasoning && template.has(true),
            tools: tools && template.has(false),
            template: Arc::new(template),
            names: [name; 2],
            start: Start::AsWritten,
            typing: Typing::Transformers,
            vllm_space: None,
            prefix: None,
            efforts: None,
            hf: false,
            det,
        }
    }

    /// The template this request's output is read with: K2 Horizon's by the request's reasoning
    /// effort (an effort it does not support is the request's error), the one template else.
    fn template_for(&self, cx: &Context<'_>) -> Result<&Template, ParseError> {
        use readers::k2::{self, Effort};
        let request = |field: &str, e: String| ParseError::Request {
            message: e,
            param: Some(field.to_owned()),
        };
        if let (true, Some(r)) = (self.tools && self.efforts.is_some(), cx.request) {
            k2::format(r).map_err(|e| request("chat_template_kwargs", e))?;
        }
        let Some(efforts) = self.efforts.as_ref().filter(|_| self.reasoning) else {
            return Ok(&self.template);
        };
        match k2::effort(cx.request.unwrap_or("{}")) {
            Ok(Effort::High) => Ok(&self.template),
            Ok(Effort::Medium) => Ok(&efforts.medium),
            Ok(Effort::Low) => Ok(&efforts.low),
            Err(e) => Err(request("reasoning_effort", e)),
        }
    }

    /// The built-in template of this name, if one is.
    pub fn builtin(name: &str) -> Option<(&'static str, Template)> {
        builtin::get(name)
    }

    fn knobs<'r>(&self, cx: &Context<'r>) -> Knobs<'r> {
        Knobs {
            reasoning: self.reasoning && self.start.on(&cx.rules),
            calls_end_reasoning: matches!(
                self.start,
                Start::Qwen3
                    | Start::UnlessOff
                    | Start::UntilCall
                    | Start::Opened
                    | Start::DeepSeekV4
                    | Start::Plamo3
            ),
            reasoning_call_lead: builtin::reasoning_call_lead(self.names[1]),
            content_lstrip_newlines: self.names[0] == "granite_thinking_parser",
            lead_across_calls: self.tools && self.names[1] == "k2_horizon",
            unescape_newlines: self.names[0] == "minicpmv",
            hf: self.hf,
            reasoning_once: !matches!(
                self.start,
                Start::AsWritten | Start::Opened | Start::DeepSeekV4 | Start::Plamo3
            ),
            tools: self.tools,
            calls_off_block: !(self.reasoning
                && builtin::block_stays_beside_reasoning(self.names[1])),
            calls_off_unnamed: builtin::cohere(self.names[0]),
            rules: cx.rules,
            request: cx.request,
            typing: self.typing,
            vllm_space: self.vllm_space,
        }
    }

    fn session<'s>(
        &'s self,
        template: &'s Template,
        state: TemplateState,
        cx: &Context<'s>,
        prefix: Option<&'static str>,
    ) -> Box<dyn Session + 's> {
        Box::new(TemplateSession {
            template,
            knobs: self.knobs(cx),
            state,
            prefix,
        })
    }
}

struct TemplateSession<'p> {
    template: &'p Template,
    knobs: Knobs<'p>,
    state: TemplateState,
    /// Text not yet fed that the output starts with (fed before the output's first text, or at
    /// the first chunk's end, so a carried state has always had it).
    prefix: Option<&'static str>,
}

impl TemplateSession<'_> {
    fn feed_prefix(&mut self, out: &mut Delta) {
        if let Some(prefix) = self.prefix.take() {
            self.state
                .feed(self.template, self.knobs, prefix, false, out);
        }
    }
}

impl Session for TemplateSession<'_> {
    fn feed(&mut self, text: &str, _id: Option<u32>, out: &mut Delta) {
        let from = (out.reasoning.len(), out.content.len());
        self.feed_prefix(out);
        self.state.feed(self.template, self.knobs, text, false, out);
        if self.knobs.unescape_newlines {
            self.state.unescape(out, from, false);
        }
    }

    fn end_chunk(&mut self, _ids: &[u32], last: bool, out: &mut Delta) -> Result<(), ParseError> {
        let from = (out.reasoning.len(), out.content.len());
        self.feed_prefix(out);
        if last {
            self.state.feed(self.template, self.knobs, "", true, out);
        }
        if self.knobs.unescape_newlines {
            self.state.unescape(out, from, last);
        }
        Ok(())
    }

    fn into_state(self: Box<Self>) -> Option<ParseState> {
        Some(ParseState::template(self.state))
    }
}

impl ChatParser for TemplateParser {
    fn start<'s>(&'s self, cx: &Context<'s>) -> Result<Box<dyn Session + 's>, ParseError> {
        let template = self.template_for(cx)?;
        let mut state = TemplateState::default();
        let k = self.knobs(cx);
        let opens = k.reasoning && self.start.opens(&cx.rules);
        if opens {
            state.open_reasoning(template, k);
        }
        // The prompt's last ids; under `hf`, more of them while the anchor is not there, and
        // all of the prompt where it is nowhere.
        let mut n = PROMPT_TAIL;
        let (text, end) = loop {
            let tail = cx.prompt.get(cx.prompt.len().saturating_sub(n)..);
            let text = self
                .det
                .decode(tail.unwrap_or_default(), false)
                .unwrap_or_default();
            let end = template.anchor.last_end(&text);
            if end.is_some() || !self.hf {
                break (text, end);
            }
            if n >= cx.prompt.len() {
                break (text, Some(0));
            }
            n = n.saturating_mul(4);
        };
        if let Some(end) = end {
            let mut scratch = Delta::default();
            state.feed(
                template,
                k,
                text.get(end..).unwrap_or_default(),
                false,
                &mut scratch,
            );
            state.after_prompt(template, opens);
        }
        Ok(self.session(template, state, cx, self.prefix))
    }

    fn resume<'s>(&'s self, state: ParseState, cx: &Context<'s>) -> Option<Box<dyn Session + 's>> {
        let template = self.template_for(cx).unwrap_or(&self.template);
        let mut state = state.template.map(|t| *t).unwrap_or_default();
        state.fit(template);
        Some(self.session(template, state, cx, None))
    }

    fn resumable(&self) -> bool {
        true
    }

    fn needs_request(&self) -> bool {
        self.efforts.is_some()
            || (self.hf && self.tools)
            || self.tools
                && (self.template.builds_arguments()
                    || (self.typing == Typing::Transformers && self.template.has_raw_arguments()))
    }

    fn reasoning_name(&self) -> Option<&'static str> {
        (self.reasoning || self.prefix.is_some()).then_some(self.names[0])
    }

    fn tool_name(&self) -> Option<&'static str> {
        self.tools.then_some(self.names[1])
    }
}

/// The name a template given as JSON (not a built-in one) goes by.
pub const TEMPLATE_NAME: &str = "response_template";
/// The parser name that stands for the template given (the checkpoint's, or a file).
pub const AUTO: &str = "auto";
/// vLLM's reasoning parser that parses no reasoning: MiniMax-M2's whole output is content, after
/// the `<think>` its prompt opened (an alias of `minimax_m2` here).
const APPEND_THINK: &str = "minimax_m2_append_think";

/// The chat parser that parser names and a template ask for (`Ok(None)`: none).
///
/// Each name must be one of its kind ([`accepted_names`]: a hand-written parser's, a built-in
/// template's, an alias of vLLM's ([`ALIASES`], which stands for the name it maps to), or
/// `"auto"`); a name [`REFUSED`] lists is refused with its reason. With `template` (JSON), each name must be `"auto"` or absent: a
/// named part is on (both when neither is named). Without, a built-in template's name in
/// either place selects it (a hand-written parser's name in the other place turns that part of
/// it on), and the hand-written names alone select those parsers. Two built-in templates of
/// one chat format (one start anchor) parse together: reasoning and content as the one named
/// for reasoning says, tool calls as the one named for tools says. Reasoning starts as the
/// reasoning parser's name says (`Start`), and built arguments are typed by vLLM's rules.
pub fn select<'a>(
    det: &Arc<Detokenizer>,
    reasoning: Option<&'a str>,
    tool: Option<&'a str>,
    template: Option<&str>,
) -> Result<Option<Arc<dyn ChatParser>>, String> {
    let given = reasoning;
    let resolved = |kind, name: Option<&'a str>| match name {
        Some(n) => names::resolve(det, kind, n),
        None => Ok(None),
    };
    let (r, t) = (
        resolved(Kind::Reasoning, reasoning)?,
        resolved(Kind::Tool, tool)?,
    );
    let (reasoning, tool) = (r.map(|(n, _)| n), t.map(|(n, _)| n));
    if let Some(json) = template {
        if let Some(bad) = [reasoning, tool].into_iter().flatten().find(|&n| n != AUTO) {
            return Err(format!(
                "a response template parses reasoning and tool calls itself: name the parsers \
                 {AUTO:?} (or not at all) with it, not {bad:?}"
            ));
        }
        // vLLM's `hf` and `beam`: its response-template parser's rules, one name for both kinds.
        let hf_names: Vec<&str> = [r, t]
            .into_iter()
            .flatten()
            .filter_map(|(_, alias)| alias.filter(|a| matches!(*a, "hf" | "beam")))
            .collect();
        if let [a, b] = hf_names.as_slice()
            && a != b
        {
            return Err(format!(
                "the parsers {a:?} and {b:?} (vLLM's) cannot be named together: name one of \
                 them for both kinds"
            ));
        }
        let served;
        let json = match hf_names.first() {
            Some(name) => {
                served = hf::served(json, name, reasoning.is_some(), tool.is_some())?;
                served.as_str()
            }
            None => json,
        };
        let t = Template::from_json(json)?;
        let both = reasoning.is_none() && tool.is_none();
        let mut p = TemplateParser::new(
            Arc::clone(det),
            t,
            TEMPLATE_NAME,
            both || reasoning.is_some(),
            both || tool.is_some(),
        );
        p.hf = !hf_names.is_empty();
        return Ok(Some(Arc::new(p)));
    }
    if [reasoning, tool].contains(&Some(AUTO)) {
        return Err(format!(
            "the parser {AUTO:?} reads the checkpoint's response_template, and there is none"
        ));
    }
    // vLLM's Cohere parser takes the reasoning parser's preset, and another reasoning parser
    // beside a Cohere tool parser is refused at startup.
    if let Some(t) = tool.filter(|t| builtin::cohere(t)) {
        match reasoning {
            Some(r) if builtin::cohere(r) => {}
            Some(r) => {
                return Err(format!(
                    "the tool parser {t:?} parses reasoning too: name the reasoning parser \
                     \"cohere_command3\" or \"cohere_command4\" with it, or none, not {r:?}"
                ));
            }
            None => {}
        }
    }
    // Two of Cohere's names: the reasoning parser's template parses both parts, and the tool
    // parser goes by its own name.
    let cohere_tool = tool
        .filter(|t| reasoning.is_some_and(builtin::cohere) && builtin::cohere(t))
        .and_then(|t| TEMPLATES.iter().copied().find(|n| *n == t));
    let tool = cohere_tool.and(reasoning).or(tool);
    let named: Vec<&str> = [reasoning, tool]
        .into_iter()
        .flatten()
        .filter(|n| TEMPLATES.contains(n))
        .collect();
    let compiled = |name: &str| {
        TemplateParser::builtin(name)
            .ok_or_else(|| format!("the built-in template {name:?} does not compile"))
    };
    let mut p = match named.as_slice() {
        [] => {
            return Ok(super::Parsers::from_names(det, reasoning, tool)?
                .map(|p| Arc::new(p) as Arc<dyn ChatParser>));
        }
        [a, b] if a != b => {
            let (ra, tb) = (compiled(a)?.0, compiled(b)?.0);
            let json = builtin::paired(a, b).ok_or_else(|| {
                format!(
                    "two different built-in templates named ({a:?} and {b:?}) are of different \
                     chat formats (their start anchors differ): one parses both parts"
                )
            })?;
            let t = Template::from_json(&json)?;
            let mut p = TemplateParser::new(Arc::clone(det), t, ra, true, true);
            p.names = [ra, tb];
            p.vllm_space = builtin::vllm_space(ra);
            p
        }
        [name, ..] => {
            let (name, t) = compiled(name)?;
            // A tool parser that reports reasoning parses it, named alone.
            let reports = t.has(true) && tool.is_some_and(builtin::tool_reports_reasoning);
            let mut p = TemplateParser::new(
                Arc::clone(det),
                t,
                name,
                reasoning.is_some() || reports,
                tool.is_some(),
            );
            p.vllm_space = builtin::vllm_space(name);
            p
        }
    };
    p.start = match Start::of(given) {
        Start::AsWritten => Start::of(reasoning),
        start => start,
    };
    for (slot, alias) in [r, t].into_iter().enumerate() {
        if let Some((_, Some(name))) = alias
            && let Some(n) = p.names.get_mut(slot)
        {
            *n = name;
        }
    }
    // Reasoning parsed by the tool parser's name alone goes by that name.
    if r.is_none() && p.reasoning {
        p.names[0] = p.names[1];
    }
    if let Some(t) = cohere_tool {
        p.names[1] = t;
    }
    if given == Some(APPEND_THINK) {
        p.reasoning = false;
        p.prefix = Some("<think>");
    }
    p.typing = builtin::vllm_typing(p.names.get(1).copied().unwrap_or_default());
    if p.names.contains(&"k2_horizon")
        && let Some(json) = builtin::json("k2_horizon")
    {
        p.efforts = Some(Arc::new(Efforts::of(json)?));
    }
    Ok(Some(Arc::new(p)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
