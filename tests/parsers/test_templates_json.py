"""Built-in templates of the JSON-call families under vLLM's parser names.

- ``ernie45`` (reasoning and tools): the output starts in reasoning until ``</think>`` (a
  prompt that closed it starts the output in content; no thinking switch is read); the
  answer's ``<response>``/``</response>`` markers are dropped; ``<tool_call>`` JSON calls.
- ``hunyuan_a13b`` (reasoning and tools): ``<think>``/``</think>``/``<answer>`` are plain text;
  the output starts in content, reasoning is where ``<think>`` opens it; a ``<tool_calls>``
  JSON list.
- ``granite`` (reasoning and tools): reasoning between the phrases "Here is my thought
  process:" and "Here is my response:"; a JSON list after ``<|tool_call|>`` or ``<tool_call>``.
- ``ling3`` (reasoning and tools): GLM-4.5's ``<arg_key>``/``<arg_value>`` calls, arguments
  typed by the tool schema; thinking on unless ``chat_template_kwargs`` turns it off; a prompt
  that opened or closed ``<think>`` moves the start.
- ``step3`` (reasoning and tools): the output starts in reasoning until ``</think>``;
  ``<steptml:invoke>`` calls, arguments typed by the tool schema.
- ``granite4``, ``granite-20b-fc``, ``jamba``, ``phi4_mini_json``, ``internlm``, ``longcat``,
  ``gigachat3``, ``xlam``, ``dots``, ``apertus`` (tools; ``dots`` types its ``<parameter>``
  values by the tool schema; ``apertus`` names each call by its object's one key).
- everywhere: raw JSON arguments are sent as written (vLLM writes them again with
  ``json.dumps``, so ``\\u00e9`` comes back as ``é``: the same JSON value); text after a call is
  content (vLLM's whole answer drops it for most of these parsers); a call cut by ``length`` is
  sent as far as it came; a call to a tool the request did not offer is a call (vLLM's
  ``ling3`` and ``dots`` drop it); text fields are stripped of surrounding whitespace per
  region, the regions before and after a call joined as they are.

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt
and tokenizer fixture (``vllm/reasoning/ernie45_reasoning_parser.py``,
``vllm/tool_parsers/ernie45_tool_parser.py``, ``vllm/reasoning/hunyuan_a13b_reasoning_parser.py``,
``vllm/tool_parsers/hunyuan_a13b_tool_parser.py``, ``vllm/reasoning/granite_reasoning_parser.py``,
``vllm/parser/granite.py``, ``vllm/tool_parsers/granite4_tool_parser.py``,
``vllm/tool_parsers/granite_20b_fc_tool_parser.py``, ``vllm/tool_parsers/jamba_tool_parser.py``,
``vllm/tool_parsers/phi4mini_tool_parser.py``, ``vllm/tool_parsers/internlm2_tool_parser.py``,
``vllm/tool_parsers/longcat_tool_parser.py``, ``vllm/parser/ling3.py`` over
``vllm/parser/glm47_moe.py``, ``vllm/tool_parsers/gigachat3_tool_parser.py``,
``vllm/reasoning/step3_reasoning_parser.py``, ``vllm/tool_parsers/step3_tool_parser.py``,
``vllm/tool_parsers/xlam_tool_parser.py``, ``vllm/tool_parsers/dots_tool_parser.py``,
``vllm/tool_parsers/apertus_tool_parser.py``, run on CPU from the 0.33.0 wheel), except where
a comment says how vLLM's differs and why the answer here is kept. Every case runs whole and
streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes, against the whole
answer.
"""

# Step3's markers are spelled with full-width bars.
# ruff: noqa: RUF001

from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

PARIS = ("get_weather", '{"city": "Paris"}')
CAFE = ("search", '{"query": "caf\\u00e9 \\"x\\" ü"}')
CUT = ("get_weather", '{"city": "Pa')
#: A tag-form call the output cuts inside a string value: the value's text is sent as it comes,
#: and the cut ends it.
CUT_VALUE = ("get_weather", '{"city": "Pa"}')
NOPE = ("nope", '{"x": 1}')
W = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
S = '{"name": "search", "arguments": {"query": "caf\\u00e9 \\"x\\" ü"}}'
N = '{"name": "nope", "arguments": {"x": 1}}'
PART = '{"name": "get_weather", "arguments": {"city": "Pa'

QWEN_HEAD = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
GRANITE_HEAD = (
    "<|start_of_role|>user<|end_of_role|>Weather?<|end_of_text|>\n"
    "<|start_of_role|>assistant<|end_of_role|>"
)
HUNYUAN_HEAD = "<|startoftext|>Weather?<|extra_0|>"


def _ernie(label: str, text: str, expected: Message, head: str = "", **kw: Any) -> Case:
    return Case(
        f"ernie45-{label}",
        "ernie45-derived",
        "ernie45",
        "ernie45",
        QWEN_HEAD + head,
        text,
        expected,
        **kw,
    )


def _ernie_call(*calls: str) -> str:
    return "".join(f"<tool_call>\n{c}\n</tool_call>\n" for c in calls)


def _hunyuan(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"hunyuan_a13b-{label}",
        "llama-3.2-instruct",
        "hunyuan_a13b",
        "hunyuan_a13b",
        HUNYUAN_HEAD,
        text,
        expected,
        **kw,
    )


def _hunyuan_calls(*calls: str) -> str:
    return "<tool_calls>[" + ", ".join(calls) + "]</tool_calls>"


def _granite(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"granite-{label}",
        "granite-derived",
        "granite",
        "granite",
        GRANITE_HEAD,
        text,
        expected,
        **kw,
    )


LING_HEAD = "<role>HUMAN</role>Weather?<role>ASSISTANT</role>"
LING_CALL = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
LING_CALL2 = (
    '<tool_call>search<arg_key>query</arg_key><arg_value>café "x" ü</arg_value>'
    '<arg_key>filters</arg_key><arg_value>{"a": 1}</arg_value></tool_call>'
)
GIGA_HEAD = "user<|role_sep|>\nWeather?<|message_sep|>\n\nassistant<|role_sep|>\n"


def _ling3(label: str, text: str, expected: Message, head: str = "", **kw: Any) -> Case:
    return Case(f"ling3-{label}", "qwen3", "ling3", "ling3", LING_HEAD + head, text, expected, **kw)


def _giga(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"gigachat3-{label}",
        "gigachat3-derived",
        None,
        "gigachat3",
        GIGA_HEAD,
        text,
        expected,
        **kw,
    )


STEP3_HEAD = "<|BOT|>user\nWeather?<|EOT|><|BOT|>assistant\n"
STEP3_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "temp": {"type": "number"},
                    "metric": {"type": "boolean"},
                    "extra": {"type": "array"},
                },
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "filters": {"type": "object"}},
            },
        },
    },
]


def _step3_call(name: str, *params: tuple[str, str]) -> str:
    inner = "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in params)
    return (
        "<｜tool_call_begin｜>function<｜tool_sep｜>"
        f'<steptml:invoke name="{name}">{inner}</steptml:invoke><｜tool_call_end｜>'
    )


def _step3_block(*calls: str) -> str:
    return "<｜tool_calls_begin｜>" + "".join(calls) + "<｜tool_calls_end｜>"


def _step3(label: str, text: str, expected: Message, head: str = "", **kw: Any) -> Case:
    return Case(
        f"step3-{label}",
        "step3-derived",
        "step3",
        "step3",
        STEP3_HEAD + head,
        text,
        expected,
        tools=STEP3_TOOLS,
        **kw,
    )


def _xlam(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(f"xlam-{label}", "qwen3", None, "xlam", QWEN_HEAD, text, expected, **kw)


DOTS_HEAD = "<|userprompt|>Weather?<|endofuserprompt|><|response|>"


def _dots_invoke(name: str, *params: tuple[str, str]) -> str:
    inner = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
    return f'<invoke name="{name}">\n{inner}</invoke>\n'


def _dots_block(*invokes: str) -> str:
    return "<dots_function_call>\n" + "".join(invokes) + "</dots_function_call>"


DOTS_W = _dots_invoke("get_weather", ("city", "Paris"))


#: A tool whose parameter ``location`` is given by a reference into its ``$defs``.
LOCATION_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "set_location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {"$ref": "#/$defs/Location"},
                    "days": {"type": "integer"},
                    "include_weather": {"type": "boolean"},
                },
                "$defs": {
                    "Location": {"type": "object", "properties": {"city": {"type": "string"}}}
                },
            },
        },
    }
]


def _dots(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"dots-{label}",
        "qwen3",
        None,
        "dots",
        DOTS_HEAD,
        text,
        expected,
        tools=kw.pop("tools", STEP3_TOOLS),
        **kw,
    )


APERTUS_HEAD = "<|user_start|>Weather?<|user_end|><|assistant_start|>"
APERTUS_W = '{"get_weather": {"city": "Paris"}}'


def _apertus_calls(*calls: str) -> str:
    return "<|tools_prefix|>[" + ", ".join(calls) + "]<|tools_suffix|>"


def _apertus(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"apertus-{label}", "apertus-derived", None, "apertus", APERTUS_HEAD, text, expected, **kw
    )


THINK = "Plan.\n</think>\n\n"
HY_THINK = "<think>\nPlan.\n</think>\n<answer>\n"
GR_THINK = "Here is my thought process: Plan. Here is my response: "

CASES = [
    # --- ernie45 ---------------------------------------------------------------------------
    # vLLM answers reasoning "Plan.\n" and content "\n\n" (whitespace kept; stripped here).
    _ernie("reasoning-only", THINK, Message("", "Plan.", ())),
    # vLLM keeps the text between <response> and </response>: "\nSunny.\n".
    _ernie("response", THINK + "<response>\nSunny.\n</response>\n", Message("Sunny.", "Plan.", ())),
    _ernie("plain-answer", "Plan.\n</think>\nSunny.", Message("Sunny.", "Plan.", ())),
    # A <think> the output begins with is dropped.
    _ernie(
        "opened",
        "<think>\nPlan.\n</think>\n\n<response>\nSunny.\n</response>\n",
        Message("Sunny.", "Plan.", ()),
    ),
    _ernie("no-end", "Plan without end", Message("", "Plan without end", ())),
    _ernie(
        "prompt-opened",
        "Plan.\n</think>\n\nSunny.",
        Message("Sunny.", "Plan.", ()),
        head="<think>\n",
    ),
    # vLLM's whole answer (which does not read the prompt) is reasoning "Sunny."; its stream,
    # which does, gives content "Sunny.", as here.
    _ernie("prompt-closed", "Sunny.", Message("Sunny.", "", ()), head="<think>\n\n</think>\n\n"),
    # The parser reads no thinking switch.
    _ernie(
        "enable-thinking-off",
        "Sunny.",
        Message("", "Sunny.", ()),
        kwargs={"enable_thinking": False},
    ),
    _ernie("one-call", THINK + _ernie_call(W), Message("", "Plan.", (PARIS,))),
    _ernie("two-calls", THINK + _ernie_call(W, S), Message("", "Plan.", (PARIS, CAFE))),
    _ernie(
        "text-before-call",
        THINK + "Let me check.\n" + _ernie_call(W),
        Message("Let me check.", "Plan.", (PARIS,)),
    ),
    # vLLM's content is the text before the first call: "Done." is dropped.
    _ernie(
        "text-after-call", THINK + _ernie_call(W) + "Done.", Message("Done.", "Plan.", (PARIS,))
    ),
    # vLLM gives no call (its pattern needs </tool_call>) and content None.
    _ernie(
        "cut",
        THINK + "<tool_call>\n" + PART,
        Message("", "Plan.", (CUT,)),
        finish="length",
    ),
    # A call inside reasoning is reasoning.
    _ernie(
        "call-in-reasoning",
        "Plan " + _ernie_call(W) + " more</think>Sunny.",
        Message("Sunny.", "Plan " + _ernie_call(W).strip() + "\n more", ()),
    ),
    Case(
        "ernie45-tools-only",
        "ernie45-derived",
        None,
        "ernie45",
        QWEN_HEAD,
        "Sure.\n" + _ernie_call(W),
        Message("Sure.", "", (PARIS,)),
    ),
    # --- hunyuan_a13b ----------------------------------------------------------------------
    # vLLM's stream follows Hunyuan's own token ids, which no fixture has, and fails at more
    # than one id a chunk (400); its whole answer, read from the text, is the one taken.
    _hunyuan("reasoning", HY_THINK + "Sunny.\n</answer>", Message("Sunny.", "Plan.", ())),
    _hunyuan("content", "Sunny.", Message("Sunny.", "", ())),
    _hunyuan(
        "no-think", "<think>\n\n</think>\n<answer>\nSunny.\n</answer>", Message("Sunny.", "", ())
    ),
    # vLLM keeps "<answer>\n" where no reasoning came before it; the marker is dropped here.
    _hunyuan("answer-only", "<answer>\nSunny.\n</answer>", Message("Sunny.", "", ())),
    # vLLM's whole answer is content "<think>\nPlan"; its stream gives reasoning "Plan".
    _hunyuan("cut-reasoning", "<think>\nPlan", Message("", "Plan", ()), finish="length"),
    _hunyuan(
        "one-call", HY_THINK + _hunyuan_calls(W) + "\n</answer>", Message("", "Plan.", (PARIS,))
    ),
    _hunyuan(
        "two-calls",
        HY_THINK + _hunyuan_calls(W, S) + "\n</answer>",
        Message("", "Plan.", (PARIS, CAFE)),
    ),
    _hunyuan(
        "text-before-call",
        HY_THINK + "Let me check." + _hunyuan_calls(W) + "\n</answer>",
        Message("Let me check.", "Plan.", (PARIS,)),
    ),
    # vLLM's content is the text before the calls: "Done." is dropped.
    _hunyuan(
        "text-after-call",
        HY_THINK + _hunyuan_calls(W) + "Done.\n</answer>",
        Message("Done.", "Plan.", (PARIS,)),
    ),
    # vLLM's whole answer gives the cut call as content text.
    _hunyuan(
        "cut",
        HY_THINK + "<tool_calls>[" + PART,
        Message("", "Plan.", (CUT,)),
        finish="length",
    ),
    _hunyuan(
        "nested-arguments",
        '<tool_calls>[{"name": "search", "arguments": {"query": "x", "filters": {"a": {"b": 1}}}}]'
        "</tool_calls>",
        Message("", "", (("search", '{"query": "x", "filters": {"a": {"b": 1}}}'),)),
    ),
    # vLLM keeps a call to a tool the request did not offer.
    _hunyuan("unknown-tool", _hunyuan_calls(N), Message("", "", (NOPE,))),
    Case(
        "hunyuan_a13b-tools-only",
        "llama-3.2-instruct",
        None,
        "hunyuan_a13b",
        HUNYUAN_HEAD,
        "Sure. " + _hunyuan_calls(W),
        Message("Sure.", "", (PARIS,)),
    ),
    # --- granite ---------------------------------------------------------------------------
    # vLLM answers reasoning " Plan. " and content " Sunny." (whitespace kept).
    _granite("reasoning", GR_THINK + "Sunny.", Message("Sunny.", "Plan.", ())),
    _granite(
        "heres",
        "Here's my thought process:\nPlan.\nHere's my response:\nSunny.",
        Message("Sunny.", "Plan.", ()),
    ),
    _granite("content", "Sunny.", Message("Sunny.", "", ())),
    # vLLM's whole answer is content "Here is my thought process: Plan"; its stream gives
    # reasoning " Plan", as here.
    _granite(
        "cut-reasoning",
        "Here is my thought process: Plan",
        Message("", "Plan", ()),
        finish="length",
    ),
    # Reasoning comes once: a later phrase is content.
    _granite(
        "twice",
        "Here is my thought process: A. Here is my response: B. Here is my thought process: C.",
        Message("B. Here is my thought process: C.", "A.", ()),
    ),
    _granite("token-call", "<|tool_call|>[" + W + "]", Message("", "", (PARIS,))),
    _granite("string-call", "<tool_call> [" + W + "]", Message("", "", (PARIS,))),
    _granite("two-calls", "<tool_call> [" + W + ", " + S + "]", Message("", "", (PARIS, CAFE))),
    _granite(
        "text-before-call",
        "Let me check. <tool_call> [" + W + "]",
        Message("Let me check.", "", (PARIS,)),
    ),
    # vLLM's whole answer drops the text after the list.
    _granite("text-after-call", "<tool_call> [" + W + "] Done.", Message("Done.", "", (PARIS,))),
    _granite("cut", "<tool_call> [" + PART, Message("", "", (CUT,)), finish="length"),
    _granite(
        "reasoning-call", GR_THINK + "<tool_call> [" + W + "]", Message("", "Plan.", (PARIS,))
    ),
    # vLLM keeps a call to a tool the request did not offer.
    _granite("unknown-tool", "<tool_call> [" + N + "]", Message("", "", (NOPE,))),
    # vLLM reads only a list after the marker (an object is content); the object is a call here.
    _granite("object", "<tool_call> " + W, Message("", "", (PARIS,))),
    # --- granite4, granite-20b-fc, jamba, phi4_mini_json, internlm, longcat -----------------
    # Common to these: vLLM keeps calls to tools the request did not offer, writes the
    # arguments again (``\u00e9`` as ``é``), and gives a cut call as content text (or fails).
    *(
        case
        for name, fixture, head, calls, cut in (
            (
                "granite4",
                "granite4-derived",
                GRANITE_HEAD,
                lambda *cs: "".join(f"<tool_call>\n{c}\n</tool_call>\n" for c in cs),
                "<tool_call>\n",
            ),
            (
                "granite-20b-fc",
                "llama-3.2-instruct",
                "USER: Weather?\nASSISTANT:",
                lambda *cs: "".join(f"<function_call> {c}\n" for c in cs),
                "<function_call> ",
            ),
            (
                "jamba",
                "jamba-derived",
                "<|assistant|>",
                lambda *cs: "<tool_calls>[" + ", ".join(cs) + "]</tool_calls>",
                "<tool_calls>[",
            ),
            (
                "phi4_mini_json",
                "phi-3-mini",
                "<|user|>Weather?<|end|><|assistant|>",
                lambda *cs: "functools[" + ", ".join(cs) + "]",
                "functools[",
            ),
            (
                "internlm",
                "internlm-derived",
                QWEN_HEAD,
                lambda *cs: "".join(
                    f"<|action_start|><|plugin|>\n{c.replace('arguments', 'parameters')}"
                    "<|action_end|>\n"
                    for c in cs
                ),
                "<|action_start|><|plugin|>\n",
            ),
            (
                "longcat",
                "longcat-derived",
                "USER: Weather? ASSISTANT:",
                lambda *cs: "".join(f"<longcat_tool_call>{c}</longcat_tool_call>\n" for c in cs),
                "<longcat_tool_call>",
            ),
        )
        for case in (
            Case(
                f"{name}-content",
                fixture,
                None,
                name,
                head,
                "Sunny today.",
                Message("Sunny today.", "", ()),
            ),
            Case(
                f"{name}-one-call", fixture, None, name, head, calls(W), Message("", "", (PARIS,))
            ),
            # internlm: vLLM fails on a second call ("too many values to unpack").
            Case(
                f"{name}-two-calls",
                fixture,
                None,
                name,
                head,
                calls(W, S),
                Message("", "", (PARIS, CAFE)),
            ),
            # phi4_mini_json: vLLM's content is always None (this text is dropped).
            Case(
                f"{name}-text-before-call",
                fixture,
                None,
                name,
                head,
                "Let me check. " + calls(W),
                Message("Let me check.", "", (PARIS,)),
            ),
            # vLLM drops the text after the calls, except granite4 (content "\nDone.").
            Case(
                f"{name}-text-after-call",
                fixture,
                None,
                name,
                head,
                calls(W) + "Done.",
                Message("Done.", "", (PARIS,)),
            ),
            # vLLM's whole answer gives the cut call as content text (internlm fails instead).
            Case(
                f"{name}-cut",
                fixture,
                None,
                name,
                head,
                cut + PART,
                Message("", "", (CUT,)),
                finish="length",
            ),
            Case(
                f"{name}-unknown-tool",
                fixture,
                None,
                name,
                head,
                calls(N),
                Message("", "", (NOPE,)),
            ),
        )
    ),
    # internlm reads "arguments" where "parameters" is not given.
    Case(
        "internlm-arguments",
        "internlm-derived",
        None,
        "internlm",
        QWEN_HEAD,
        "<|action_start|><|plugin|>\n" + W + "<|action_end|>",
        Message("", "", (PARIS,)),
    ),
    # granite for tools alone: the text around the list is content (vLLM's whole answer drops
    # the text after it; its stream keeps it).
    Case(
        "granite-tools-only",
        "granite-derived",
        None,
        "granite",
        GRANITE_HEAD,
        "Let me check. <|tool_call|>[" + W + "] Done.",
        Message("Let me check.Done.", "", (PARIS,)),
    ),
    # --- ling3 -----------------------------------------------------------------------------
    # GLM-4.5's format; thinking on unless ``thinking`` or ``enable_thinking`` is given and
    # neither is true.
    _ling3("reasoning", "<think>Plan.</think>Sunny.", Message("Sunny.", "Plan.", ())),
    _ling3("no-open", "Plan.</think>Sunny.", Message("Sunny.", "Plan.", ())),
    _ling3(
        "thinking-off",
        "<think>Plan.</think>Sunny.",
        Message("<think>Plan.</think>Sunny.", "", ()),
        kwargs={"thinking": False},
    ),
    _ling3(
        "enable-thinking-off",
        "<think>Plan.</think>Sunny.",
        Message("<think>Plan.</think>Sunny.", "", ()),
        kwargs={"enable_thinking": False},
    ),
    _ling3("prompt-opened", "Plan.</think>Sunny.", Message("Sunny.", "Plan.", ()), head="<think>"),
    # vLLM's whole answer (which does not read the prompt) is reasoning "Sunny."; its stream,
    # which does, gives content "Sunny.", as here.
    _ling3("prompt-closed", "Sunny.", Message("Sunny.", "", ()), head="<think></think>"),
    _ling3("one-call", "<think>Plan.</think>" + LING_CALL, Message("", "Plan.", (PARIS,))),
    # The arguments typed by the schema: "filters" is an object.
    _ling3(
        "two-calls",
        "<think>Plan.</think>" + LING_CALL + LING_CALL2,
        Message(
            "", "Plan.", (PARIS, ("search", '{"query": "café \\"x\\" ü", "filters": {"a": 1}}'))
        ),
    ),
    _ling3("call-ends-reasoning", "<think>Plan." + LING_CALL, Message("", "Plan.", (PARIS,))),
    # vLLM's whole answer drops the text after the call; its stream keeps it, as here.
    _ling3(
        "text-after-call",
        "<think>Plan.</think>Let me check." + LING_CALL + "Done.",
        Message("Let me check.Done.", "Plan.", (PARIS,)),
    ),
    # vLLM's whole answer drops the cut value: "{}".
    _ling3(
        "cut",
        "<think>Plan.</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Pa",
        Message("", "Plan.", (CUT_VALUE,)),
        finish="length",
    ),
    # vLLM drops a call to a tool the request did not offer; it is kept here, its value a
    # string (no schema).
    _ling3(
        "unknown-tool",
        "<think>Plan.</think><tool_call>nope<arg_key>x</arg_key><arg_value>1</arg_value></tool_call>",
        Message("", "Plan.", (("nope", '{"x": "1"}'),)),
    ),
    # --- gigachat3 -------------------------------------------------------------------------
    _giga("content", "Sunny today.", Message("Sunny today.", "", ())),
    _giga("call", "<|message_sep|>\n\nfunction call<|role_sep|>\n" + W, Message("", "", (PARIS,))),
    _giga(
        "text-before-call",
        "Let me check.<|message_sep|>\n\nfunction call<|role_sep|>\n" + W,
        Message("Let me check.", "", (PARIS,)),
    ),
    _giga(
        "call-token", "Let me check.<|function_call|>" + W, Message("Let me check.", "", (PARIS,))
    ),
    # vLLM's content is the whole text where no <|message_sep|> comes before the call; the
    # call's text is not content here.
    _giga("unicode", "function call<|role_sep|>\n" + S, Message("", "", (CAFE,))),
    # vLLM's whole answer fails to read the object followed by text (all of it is content);
    # its stream puts " Done." into the arguments. The call ends where its JSON does here.
    _giga(
        "text-after-call",
        "<|message_sep|>\n\nfunction call<|role_sep|>\n" + W + " Done.",
        Message("Done.", "", (PARIS,)),
    ),
    # vLLM's whole answer gives the cut call as content text; its stream, as here, the call.
    _giga(
        "cut",
        "<|message_sep|>\n\nfunction call<|role_sep|>\n" + PART,
        Message("", "", (CUT,)),
        finish="length",
    ),
    # vLLM's whole answer keeps the separator; its stream drops the text after it. The
    # separator is dropped and the text kept here.
    _giga(
        "text-after-separator",
        "Sunny.<|message_sep|>\n\nMore text.",
        Message("Sunny.More text.", "", ()),
    ),
    # vLLM keeps a call to a tool the request did not offer.
    _giga(
        "unknown-tool",
        "<|message_sep|>\n\nfunction call<|role_sep|>\n" + N,
        Message("", "", (NOPE,)),
    ),
    # --- step3 -----------------------------------------------------------------------------
    _step3("reasoning", "Plan.</think>Sunny.", Message("Sunny.", "Plan.", ())),
    # vLLM keeps the <think> in the reasoning ("<think>Plan."); it is dropped here.
    _step3("opened", "<think>Plan.</think>Sunny.", Message("Sunny.", "Plan.", ())),
    _step3("no-end", "Plan without end", Message("", "Plan without end", ())),
    _step3(
        "prompt-opened", "Plan.</think>Sunny.", Message("Sunny.", "Plan.", ()), head="<think>\n"
    ),
    # vLLM's whole answer (which does not read the prompt) is reasoning "Sunny."; its stream,
    # which does, gives content "Sunny.", as here.
    _step3("prompt-closed", "Sunny.", Message("Sunny.", "", ()), head="<think>\n</think>\n"),
    _step3(
        "one-call",
        "Plan.</think>" + _step3_block(_step3_call("get_weather", ("city", "Paris"))),
        Message("", "Plan.", (PARIS,)),
    ),
    # vLLM leaves an object-typed value a string ('"filters": "{\"a\": 1}"'); it is the
    # object here, as the schema says.
    _step3(
        "two-calls",
        "Plan.</think>"
        + _step3_block(
            _step3_call("get_weather", ("city", "Paris")),
            _step3_call("search", ("query", ' café "x" ü '), ("filters", '{"a": 1}')),
        ),
        Message(
            "", "Plan.", (PARIS, ("search", '{"query": "café \\"x\\" ü", "filters": {"a": 1}}'))
        ),
    ),
    # vLLM gives "temp": 5.0 (the same number) and "extra": "[1, 2]" (a string for an
    # array-typed value).
    _step3(
        "typed",
        "Plan.</think>"
        + _step3_block(
            _step3_call(
                "get_weather",
                ("city", "Paris"),
                ("days", "3"),
                ("temp", "5"),
                ("metric", "true"),
                ("extra", "[1, 2]"),
            )
        ),
        Message(
            "",
            "Plan.",
            (
                (
                    "get_weather",
                    '{"city": "Paris", "days": 3, "temp": 5, "metric": true, "extra": [1, 2]}',
                ),
            ),
        ),
    ),
    _step3(
        "text-around-calls",
        "Plan.</think>Let me check."
        + _step3_block(_step3_call("get_weather", ("city", "Paris")))
        + "Done.",
        Message("Let me check.Done.", "Plan.", (PARIS,)),
    ),
    # vLLM's whole answer gives the cut call as content text; its stream, the call with
    # arguments "".
    _step3(
        "cut",
        "Plan.</think><｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="get_weather"><steptml:parameter name="city">Pa',
        Message("", "Plan.", (CUT_VALUE,)),
        finish="length",
    ),
    # vLLM keeps a call to a tool the request did not offer (its values strings).
    _step3(
        "unknown-tool",
        "Plan.</think>" + _step3_block(_step3_call("nope", ("x", "1"))),
        Message("", "Plan.", (("nope", '{"x": "1"}'),)),
    ),
    _step3(
        "call-in-reasoning",
        "Plan " + _step3_block(_step3_call("get_weather", ("city", "Paris"))) + "</think>Sunny.",
        Message(
            "Sunny.", "Plan " + _step3_block(_step3_call("get_weather", ("city", "Paris"))), ()
        ),
    ),
    # --- xlam ------------------------------------------------------------------------------
    # vLLM's stream repeats the arguments of a list's calls; its whole answer is taken.
    _xlam("content", "Sunny today.", Message("Sunny today.", "", ())),
    _xlam("list", "[" + W + "]", Message("", "", (PARIS,))),
    _xlam("two-calls", "[" + W + ", " + S + "]", Message("", "", (PARIS, CAFE))),
    _xlam("tag", "<tool_call>[" + W + "]</tool_call>", Message("", "", (PARIS,))),
    _xlam(
        "tag-text-before",
        "Let me check.<tool_call>[" + W + "]</tool_call>",
        Message("Let me check.", "", (PARIS,)),
    ),
    _xlam("tool-calls-marker", "[TOOL_CALLS][" + W + "]", Message("", "", (PARIS,))),
    # The text through </think> is content, as vLLM gives it.
    _xlam(
        "think", "<think>Plan.</think>[" + W + "]", Message("<think>Plan.</think>", "", (PARIS,))
    ),
    # A code fence around the list is dropped with it, as vLLM drops it (its test
    # `test_extract_tool_calls[single_tool_with_json_code_block]`); a fence of other code stays.
    _xlam("fence", "```json\n[" + W + "]\n```", Message("", "", (PARIS,))),
    _xlam(
        "fence-after-text",
        "I'll help you with that.\n```json\n[" + W + "]\n```",
        Message("I'll help you with that.", "", (PARIS,)),
    ),
    _xlam("fence-then-text", "```\n[" + W + "]\n```\nDone.", Message("Done.", "", (PARIS,))),
    # vLLM's whole answer fails on text after the list (all of it is content); its stream
    # gives the call and drops the text.
    _xlam("text-after-call", "[" + W + "] Done.", Message("Done.", "", (PARIS,))),
    # vLLM reads a bare list only at the start of the output (this is content there).
    _xlam("text-before-call", "Sure: [" + W + "]", Message("Sure:", "", (PARIS,))),
    # vLLM's whole answer gives the cut list as content text; its stream, the call.
    _xlam("cut", "[" + PART, Message("", "", (CUT,)), finish="length"),
    # vLLM keeps a call to a tool the request did not offer.
    _xlam("unknown-tool", "[" + N + "]", Message("", "", (NOPE,))),
    _xlam(
        "code",
        "Use ```python\nprint([1])\n``` here.",
        Message("Use ```python\nprint([1])\n``` here.", "", ()),
    ),
    _xlam("list-text", "A list: [1, 2].", Message("A list: [1, 2].", "", ())),
    # --- dots ------------------------------------------------------------------------------
    _dots("content", "Sunny today.", Message("Sunny today.", "", ())),
    _dots("one-call", _dots_block(DOTS_W), Message("", "", (PARIS,))),
    _dots(
        "two-invokes",
        _dots_block(
            DOTS_W, _dots_invoke("search", ("query", 'café "x" ü'), ("filters", '{"a": 1}'))
        ),
        Message("", "", (PARIS, ("search", '{"query": "café \\"x\\" ü", "filters": {"a": 1}}'))),
    ),
    _dots(
        "two-blocks",
        _dots_block(DOTS_W) + "\n" + _dots_block(_dots_invoke("search", ("query", "x"))),
        Message("", "", (PARIS, ("search", '{"query": "x"}'))),
    ),
    _dots(
        "typed",
        _dots_block(
            _dots_invoke(
                "get_weather",
                ("city", "Paris"),
                ("days", "3"),
                ("temp", "5.5"),
                ("metric", "true"),
                ("extra", "[1, 2]"),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "get_weather",
                    '{"city": "Paris", "days": 3, "temp": 5.5, "metric": true, "extra": [1, 2]}',
                ),
            ),
        ),
    ),
    _dots(
        "text-before-call",
        "Let me check.\n" + _dots_block(DOTS_W),
        Message("Let me check.", "", (PARIS,)),
    ),
    # A parameter whose schema is a reference (`$ref`) is typed by the schema it names, as
    # vLLM's `dots` types it (its `test_non_stream_xml_converts_schema_types_and_resolves_ref`).
    _dots(
        "ref",
        "ok"
        + _dots_block(
            _dots_invoke(
                "set_location",
                ("location", '{"city": "Shanghai"}'),
                ("days", "3"),
                ("include_weather", "true"),
            )
        ),
        Message(
            "ok",
            "",
            (
                (
                    "set_location",
                    '{"location": {"city": "Shanghai"}, "days": 3, "include_weather": true}',
                ),
            ),
        ),
        tools=LOCATION_TOOLS,
    ),
    # A block may hold one call as JSON instead, alone or after a block of invokes, as vLLM's
    # `dots` reads it (its `test_non_stream_supports_multiple_invokes_and_json_fallback`); the
    # arguments as written.
    _dots(
        "json-form",
        'ok<dots_function_call>{"name":"get_weather","arguments":{"city":"Paris"}}'
        "</dots_function_call>",
        Message("ok", "", (("get_weather", '{"city":"Paris"}'),)),
    ),
    _dots(
        "json-form-after-invokes",
        _dots_block(DOTS_W)
        + '<dots_function_call>{"name": "get_weather", "arguments": {"city": "Rome"}}'
        + "</dots_function_call>",
        Message("", "", (PARIS, ("get_weather", '{"city": "Rome"}'))),
    ),
    # vLLM's whole answer drops the text after the block; its stream keeps it, as here.
    _dots("text-after-call", _dots_block(DOTS_W) + "\nDone.", Message("Done.", "", (PARIS,))),
    # vLLM gives the cut call as content text (whole) or nothing (streamed).
    _dots(
        "cut",
        '<dots_function_call>\n<invoke name="get_weather">\n<parameter name="city">Pa',
        Message("", "", (CUT_VALUE,)),
        finish="length",
    ),
    # vLLM drops a call to a tool the request did not offer (its text becomes content); the
    # call is kept here, its value a string (no schema).
    _dots(
        "unknown-tool",
        _dots_block(_dots_invoke("nope", ("x", "1"))),
        Message("", "", (("nope", '{"x": "1"}'),)),
    ),
    _dots(
        "unquoted-names",
        "<dots_function_call><invoke name=get_weather><parameter name=city>Paris</parameter>"
        "</invoke></dots_function_call>",
        Message("", "", (PARIS,)),
    ),
    _dots(
        "json-body", "<dots_function_call>" + W + "</dots_function_call>", Message("", "", (PARIS,))
    ),
    # --- apertus ---------------------------------------------------------------------------
    _apertus("content", "Sunny today.", Message("Sunny today.", "", ())),
    _apertus("one-call", _apertus_calls(APERTUS_W), Message("", "", (PARIS,))),
    _apertus(
        "two-calls",
        _apertus_calls(APERTUS_W, '{"search": {"query": "caf\\u00e9 \\"x\\" ü"}}'),
        Message("", "", (PARIS, CAFE)),
    ),
    # The text before and after the calls, joined by a newline, as vLLM joins it.
    _apertus(
        "text-around-calls",
        "Let me see. " + _apertus_calls(APERTUS_W) + "Done.",
        Message("Let me see.\nDone.", "", (PARIS,)),
    ),
    _apertus(
        "text-after-calls", _apertus_calls(APERTUS_W) + " Done.", Message("Done.", "", (PARIS,))
    ),
    _apertus("no-suffix", "<|tools_prefix|>[" + APERTUS_W + "]", Message("", "", (PARIS,))),
    # vLLM's whole answer closes the cut JSON ('{"city": "Pa"}'); its stream, as here, sends
    # it as far as it came.
    _apertus(
        "cut",
        '<|tools_prefix|>[{"get_weather": {"city": "Pa',
        Message("", "", (CUT,)),
        finish="length",
    ),
    # vLLM keeps a call to a tool the request did not offer.
    _apertus("unknown-tool", _apertus_calls('{"nope": {"x": 1}}'), Message("", "", (NOPE,))),
    _apertus(
        "empty-arguments",
        _apertus_calls('{"get_time": {}}'),
        Message("", "", (("get_time", "{}"),)),
    ),
    _apertus(
        "object",
        "<|tools_prefix|>" + APERTUS_W + "<|tools_suffix|>",
        Message("", "", (PARIS,)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)
