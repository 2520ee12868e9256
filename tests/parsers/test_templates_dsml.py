"""DeepSeek's DSML built-in templates under vLLM's parser names.

- ``deepseek_v32`` (tools; DeepSeek-V3.2, usually beside ``deepseek_v3`` reasoning):
  ``<｜DSML｜invoke name="NAME">`` calls, in a ``<｜DSML｜function_calls>`` block or bare, with
  ``<｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>`` arguments: a
  ``string="true"`` value is a string as written, any other (or no ``string``) JSON, else its
  text; then typed by the tool's schema as vLLM's engine types them (a JSON number for a
  ``string`` key becomes a string). The block's markers, text between calls and all text after
  a call are dropped; text before the calls is content as written (whitespace-only: dropped).
- ``deepseek_v4`` (reasoning and tools): ``<think>`` reasoning, on unless ``thinking`` or
  ``enable_thinking`` is given and neither is true; either way the output's ``<think>`` opens
  reasoning, each time, and a ``</think>`` outside it is dropped; calls as V3.2's in a
  ``<｜DSML｜tool_calls>`` block (or ``toolcalls``, ``tool``), whose marker ends reasoning (a
  bare call there is reasoning text).
- ``deepseek_v41``: V4's, with spaced markers (``<｜DSML｜ calls>``, ``<｜DSML｜ invoke``,
  ``<｜DSML｜ parameter``).

Each case's expected message is vLLM 0.33.0's whole answer for the same text, names, prompt and
tokenizer fixture (``vllm/parser/deepseek_v32.py``, ``deepseek_v4.py`` and ``deepseek_v41.py``
through their engine adapters, and ``vllm/reasoning/deepseek_v3_reasoning_parser.py``, run on
CPU from the 0.33.0 wheel; ``acceptance/vllm/parsers_oracle.py``, with the fixture loaded as a
``PreTrainedTokenizerFast``: transformers 5 rebuilds its ``LlamaTokenizerFast`` with a Metaspace
decoder, which garbles this byte-level vocabulary's text), whole and streamed at 1 and 3 ids a
chunk, except where a comment says how vLLM's differs and why the answer here is kept. The DSML
markers are not tokens of DeepSeek-R1's vocabulary: each is several ids, as text. Every case
runs whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes.
"""

# ruff: noqa: RUF001, RUF002
# (Full-width bars are the real spelling of DeepSeek's markers.)
from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check, encode
from helpers.parsers_oracle import SERVED, Message, chat_request
from helpers.parsers_util import derenderer_class, stream, whole
from helpers.stream_util import load_detokenizer
from hypothesis import given, settings
from hypothesis import strategies as st

D = "｜DSML｜"
HEAD = "<｜begin▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜>"
THINKING = HEAD + "<think>"
OFF = HEAD + "</think>"
ON = {"thinking": True}
PARIS = ("get_weather", '{"city": "Paris"}')
TIME = ("get_time", "{}")
CALC: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "calc",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "ok": {"type": "boolean"},
                    "f": {"type": "number"},
                    "s": {"type": "string"},
                    "o": {"type": "object", "properties": {"k": {"type": "string"}}},
                    "l": {"type": "array"},
                },
            },
        },
    }
]


def _param(key: str, value: str, string: str | None = "true", sp: str = "") -> str:
    attr = "" if string is None else f' string="{string}"'
    return f'<{D}{sp}parameter name="{key}"{attr}>{value}</{D}{sp}parameter>\n'


def _invoke(name: str, *params: str, sp: str = "") -> str:
    return f'<{D}{sp}invoke name="{name}">\n' + "".join(params) + f"</{D}{sp}invoke>\n"


def _block(*invokes: str, wrapper: str = "function_calls") -> str:
    return f"<{D}{wrapper}>\n" + "".join(invokes) + f"</{D}{wrapper}>"


def _v4block(*invokes: str) -> str:
    return _block(*invokes, wrapper="tool_calls")


CITY = _invoke("get_weather", _param("city", "Paris"))
NOW = _invoke("get_time")


def _case(
    label: str,
    names: tuple[str | None, str | None],
    prompt: str,
    text: str,
    expected: Message,
    **kw: Any,
) -> Case:
    return Case(label, "deepseek-r1", names[0], names[1], prompt, text, expected, **kw)


V32 = (None, "deepseek_v32")
PAIR = ("deepseek_v3", "deepseek_v32")
V4 = ("deepseek_v4", "deepseek_v4")
V41 = ("deepseek_v41", "deepseek_v41")

CASES = [
    # --- deepseek_v32 ---------------------------------------------------------------------
    _case(
        "v32-plain", V32, HEAD, "It is sunny in Paris.", Message("It is sunny in Paris.", "", ())
    ),
    _case("v32-one-call", V32, HEAD, _block(CITY), Message("", "", (PARIS,))),
    _case(
        "v32-text-before",
        V32,
        HEAD,
        "Let me check.\n\n" + _block(CITY),
        Message("Let me check.\n\n", "", (PARIS,)),
    ),
    _case("v32-space-before", V32, HEAD, "\n\n" + _block(CITY), Message("", "", (PARIS,))),
    _case(
        "v32-two-calls",
        V32,
        HEAD,
        _block(CITY, _invoke("get_weather", _param("city", "東京"), _param("unit", "celsius"))),
        Message("", "", (PARIS, ("get_weather", '{"city": "東京", "unit": "celsius"}'))),
    ),
    _case(
        "v32-non-string",
        V32,
        HEAD,
        _block(
            _invoke(
                "calc",
                _param("n", "42", "false"),
                _param("ok", "true", "false"),
                _param("f", "1.5", "false"),
                _param("s", "7", "false"),
                _param("l", '[1, "x", null]', "false"),
            )
        ),
        Message(
            "", "", (("calc", '{"n": 42, "ok": true, "f": 1.5, "s": "7", "l": [1, "x", null]}'),)
        ),
        tools=CALC,
    ),
    _case(
        "v32-string-typed-by-schema",
        V32,
        HEAD,
        _block(_invoke("calc", _param("n", "42"), _param("ok", "false"), _param("s", "7"))),
        Message("", "", (("calc", '{"n": 42, "ok": false, "s": "7"}'),)),
        tools=CALC,
    ),
    _case(
        "v32-nested-json",
        V32,
        HEAD,
        _block(
            _invoke(
                "search",
                _param("query", "rain"),
                _param(
                    "filters", '{"days": [1, 2], "where": {"city": "Paris", "ok": true}}', "false"
                ),
            )
        ),
        Message(
            "",
            "",
            (
                (
                    "search",
                    '{"query": "rain", "filters": '
                    '{"days": [1, 2], "where": {"city": "Paris", "ok": true}}}',
                ),
            ),
        ),
    ),
    _case(
        "v32-nested-typed",
        V32,
        HEAD,
        _block(_invoke("calc", _param("o", '{"k": 5, "x": 1}', "false"))),
        Message("", "", (("calc", '{"o": {"k": "5", "x": 1}}'),)),
        tools=CALC,
    ),
    _case(
        "v32-invalid-json",
        V32,
        HEAD,
        _block(_invoke("search", _param("query", "rain"), _param("filters", "{days: 1", "false"))),
        Message("", "", (("search", '{"query": "rain", "filters": "{days: 1"}'),)),
    ),
    _case(
        "v32-no-string-attribute",
        V32,
        HEAD,
        _block(
            _invoke("search", _param("query", "rain", None), _param("filters", '{"a": 1}', None))
        ),
        Message("", "", (("search", '{"query": "rain", "filters": {"a": 1}}'),)),
    ),
    _case(
        "v32-unknown-tool",
        V32,
        HEAD,
        _block(_invoke("lookup", _param("q", "x"), _param("n", "3", "false"))),
        Message("", "", (("lookup", '{"q": "x", "n": 3}'),)),
    ),
    _case(
        "v32-values-as-written",
        V32,
        HEAD,
        _block(
            _invoke("write_file", _param("path", " a.txt "), _param("content", "line 1\nline 2\n"))
        ),
        Message("", "", (("write_file", '{"path": " a.txt ", "content": "line 1\\nline 2\\n"}'),)),
    ),
    # A parameter without its close ends where the next one begins.
    _case(
        "v32-unclosed-parameter",
        V32,
        HEAD,
        _block(
            _invoke(
                "get_weather",
                f'<{D}parameter name="city" string="true">Paris',
                _param("unit", "celsius"),
            )
        ),
        Message("", "", (("get_weather", '{"city": "Paris", "unit": "celsius"}'),)),
    ),
    _case(
        "v32-text-between-calls-is-dropped",
        V32,
        HEAD,
        _block(CITY, "Now the time.\n", NOW),
        Message("", "", (PARIS, TIME)),
    ),
    _case(
        "v32-closers-without-a-call-are-text",
        V32,
        HEAD,
        f"A </{D}invoke> </{D}function_calls> B",
        Message(f"A </{D}invoke> </{D}function_calls> B", "", ()),
    ),
    # vLLM's answer is a call named by what came of the name, `get_wea` with `{}`: no tool of
    # that name was offered; the cut call's text is content here.
    _case(
        "v32-cut-in-the-name",
        V32,
        HEAD,
        f'Hi <{D}function_calls>\n<{D}invoke name="get_wea',
        Message(f'Hi <{D}invoke name="get_wea', "", ()),
        finish="length",
    ),
    _case(
        "v32-text-after-is-dropped",
        V32,
        HEAD,
        _block(CITY) + "\nI will tell you soon.",
        Message("", "", (PARIS,)),
    ),
    _case("v32-bare-invoke", V32, HEAD, "Checking. " + CITY, Message("Checking. ", "", (PARIS,))),
    _case(
        "v32-no-closers",
        V32,
        HEAD,
        f'<{D}function_calls>\n<{D}invoke name="get_weather">\n' + _param("city", "Paris"),
        Message("", "", (PARIS,)),
    ),
    # The string value cut by the end ends there (its text is sent as it comes). vLLM's whole
    # answer drops it; its streams send '{"unit": "celsius", "city": "', which is not JSON.
    _case(
        "v32-cut-by-length",
        V32,
        HEAD,
        f'<{D}function_calls>\n<{D}invoke name="get_weather">\n'
        + _param("unit", "celsius")
        + f'<{D}parameter name="city" string="true">Par',
        Message("", "", (("get_weather", '{"unit": "celsius", "city": "Par"}'),)),
        finish="length",
    ),
    _case(
        "v32-wrapped-arguments",
        V32,
        HEAD,
        _block(_invoke("get_weather", _param("arguments", '{"city": "Paris"}', "false"))),
        Message("", "", (PARIS,)),
    ),
    _case(
        "v32-think-is-content",
        V32,
        HEAD,
        "<think>Plan.</think>Sunny.",
        Message("<think>Plan.</think>Sunny.", "", ()),
    ),
    # --- deepseek_v3 reasoning + deepseek_v32 calls (DeepSeek-V3.2's pair) -------------------
    _case(
        "pair-thinking",
        PAIR,
        THINKING,
        "Plan.</think>Let me check." + _block(CITY),
        Message("Let me check.", "Plan.", (PARIS,)),
        kwargs=ON,
    ),
    # vLLM's stream at 3 ids a chunk keeps the output's '<think>' in the reasoning
    # ('<think>Plan.'); its whole answer and its stream at 1 id drop it, as here.
    _case(
        "pair-think-in-output",
        PAIR,
        HEAD,
        "<think>Plan.</think>Let me check." + _block(CITY),
        Message("Let me check.", "Plan.", (PARIS,)),
        kwargs=ON,
    ),
    _case("pair-thinking-off", PAIR, HEAD, "Sunny." + _block(NOW), Message("Sunny.", "", (TIME,))),
    _case(
        "pair-reasoning-parser-only",
        ("deepseek_v3", None),
        THINKING,
        "Plan.</think>" + _block(CITY),
        Message(_block(CITY), "Plan.", ()),
        kwargs=ON,
    ),
    # --- deepseek_v4 ----------------------------------------------------------------------
    _case(
        "v4-plain",
        V4,
        THINKING,
        "Plan it.</think>It is sunny.",
        Message("It is sunny.", "Plan it.", ()),
    ),
    _case(
        "v4-think-tag-dropped",
        V4,
        HEAD,
        "<think>Plan it.</think>It is sunny.",
        Message("It is sunny.", "Plan it.", ()),
    ),
    _case(
        "v4-call",
        V4,
        THINKING,
        "Plan.</think>\n\n" + _v4block(CITY),
        Message("", "Plan.", (PARIS,)),
    ),
    _case(
        "v4-two-calls-text-around",
        V4,
        THINKING,
        "Plan.</think>Let me check." + _v4block(CITY, NOW) + "\nDone.",
        Message("Let me check.", "Plan.", (PARIS, TIME)),
    ),
    _case(
        "v4-block-ends-reasoning",
        V4,
        THINKING,
        "Plan." + _v4block(CITY),
        Message("", "Plan.", (PARIS,)),
    ),
    _case(
        "v4-bare-invoke-in-reasoning",
        V4,
        THINKING,
        "Plan. " + CITY + "</think>Sunny.",
        Message("Sunny.", "Plan. " + CITY.rstrip(), ()),
    ),
    _case(
        "v4-toolcalls-spelling",
        V4,
        THINKING,
        "Plan.</think>" + _block(CITY, wrapper="toolcalls"),
        Message("", "Plan.", (PARIS,)),
    ),
    _case(
        "v4-thinking-off",
        V4,
        OFF,
        "It is sunny.",
        Message("It is sunny.", "", ()),
        kwargs={"thinking": False},
    ),
    _case(
        "v4-thinking-off-think-block",
        V4,
        OFF,
        "Sunny.<think>x</think>y</think>z",
        Message("Sunny.yz", "x", ()),
        kwargs={"thinking": False},
    ),
    # A switch given as null is off; so is `reasoning_effort: "none"` among the kwargs.
    _case(
        "v4-thinking-null",
        V4,
        HEAD,
        "Plan.</think>Sunny.",
        Message("Plan.Sunny.", "", ()),
        kwargs={"thinking": None},
    ),
    _case(
        "v4-kwargs-reasoning-effort-none",
        V4,
        HEAD,
        "Plan.</think>Sunny.",
        Message("Plan.Sunny.", "", ()),
        kwargs={"reasoning_effort": "none"},
    ),
    # vLLM drops a `<think>` anywhere in reasoning ('AB'); an open delimiter is dropped here
    # only where its region begins, and a later one is text.
    _case(
        "v4-think-inside-reasoning",
        V4,
        THINKING,
        "A<think>B</think>C",
        Message("C", "A<think>B", ()),
    ),
    _case(
        "v4-enable-thinking-off-call",
        V4,
        OFF,
        _v4block(NOW),
        Message("", "", (TIME,)),
        kwargs={"enable_thinking": False},
    ),
    _case(
        "v4-reasoning-again",
        V4,
        THINKING,
        "A.</think>B.<think>C.</think>D.",
        Message("B.D.", "A.C.", ()),
    ),
    _case(
        "v4-cut-in-reasoning", V4, THINKING, "Plan it", Message("", "Plan it", ()), finish="length"
    ),
    # As `v32-cut-by-length`: vLLM's streams send '{"city": "Paris", "unit": "'.
    _case(
        "v4-cut-in-call",
        V4,
        THINKING,
        "Plan.</think>"
        + f'<{D}tool_calls>\n<{D}invoke name="get_weather">\n'
        + _param("city", "Paris")
        + f'<{D}parameter name="unit" string="true">cel',
        Message("", "Plan.", (("get_weather", '{"city": "Paris", "unit": "cel"}'),)),
        finish="length",
    ),
    _case(
        "v4-tool-parser-only",
        (None, "deepseek_v4"),
        THINKING,
        "Plan.</think>" + _v4block(CITY),
        Message("Plan.</think>", "", (PARIS,)),
    ),
    _case(
        "v4-reasoning-parser-only",
        ("deepseek_v4", None),
        THINKING,
        "Plan." + _v4block(CITY),
        Message(_v4block(CITY), "Plan.", ()),
    ),
    # vLLM's whole answer does not read the prompt: after a prompt that closed `<think>`, with
    # thinking not switched off, the output is reasoning; its streams make it content, as here.
    _case("v4-closed-prompt", V4, OFF, "It is sunny.", Message("It is sunny.", "", ())),
    # --- deepseek_v41 ---------------------------------------------------------------------
    _case(
        "v41-call",
        V41,
        THINKING,
        "Plan.</think>"
        + f"<{D} calls>\n"
        + _invoke(
            "get_weather",
            _param("city", "Paris", sp=" "),
            _param("unit", "5", "false", sp=" "),
            sp=" ",
        )
        + f"</{D} calls>",
        Message("", "Plan.", (("get_weather", '{"city": "Paris", "unit": "5"}'),)),
    ),
    _case(
        "v41-two-calls-end-reasoning",
        V41,
        THINKING,
        "Plan."
        + f"<{D} calls>\n"
        + _invoke("get_time", sp=" ")
        + _invoke("search", _param("filters", '{"a": [1]}', "false", sp=" "), sp=" ")
        + f"</{D} calls>",
        Message("", "Plan.", (TIME, ("search", '{"filters": {"a": [1]}}'))),
    ),
    _case(
        "v41-unspaced-markers-are-text",
        V41,
        THINKING,
        "Plan.</think>" + _v4block(CITY),
        Message(_v4block(CITY), "Plan.", ()),
    ),
    _case(
        "v41-thinking-off",
        V41,
        OFF,
        "Sunny.",
        Message("Sunny.", "", ()),
        kwargs={"thinking": False},
    ),
    # --- edge cases ------------------------------------------------------------------------
    _case(
        "v4-text-between-the-block-marker-and-a-call",
        V4,
        HEAD,
        "Plan.</think>" + f"<{D}tool_calls>\nnote\n" + CITY + f"</{D}tool_calls>",
        Message("", "Plan.", (PARIS,)),
    ),
    _case(
        "v4-the-block-marker-ends-reasoning-before-text",
        V4,
        HEAD,
        "Plan." + f"<{D}tool_calls>\nnote\n" + CITY + f"</{D}tool_calls>",
        Message("", "Plan.", (PARIS,)),
    ),
    _case(
        "v32-a-quote-in-a-name",
        V32,
        HEAD,
        _block(_invoke('get"weather', _param("city", "Paris"))),
        Message("", "", (('get"weather', '{"city": "Paris"}'),)),
    ),
    _case(
        "v32-a-quote-in-a-key-is-no-parameter",
        V32,
        HEAD,
        _block(_invoke("get_weather", _param('ci"ty', "Paris"))),
        Message("", "", (("get_weather", "{}"),)),
    ),
    # `tool_choice: "none"`: the call block is dropped, as vLLM drops it; beside `deepseek_v3`
    # reasoning (V3.2's pair) vLLM keeps it as content, and so does this.
    _case(
        "v32-tool-choice-none",
        V32,
        HEAD,
        "Hi " + _block(CITY),
        Message("Hi ", "", ()),
        request={"tool_choice": "none"},
    ),
    _case(
        "v4-tool-choice-none",
        V4,
        HEAD,
        "Plan.</think>Hi " + _v4block(CITY),
        Message("Hi ", "Plan.", ()),
        request={"tool_choice": "none"},
    ),
    _case(
        "pair-tool-choice-none",
        PAIR,
        HEAD,
        "Hi " + _block(CITY),
        Message("Hi " + _block(CITY), "", ()),
        request={"tool_choice": "none"},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)


#: Pieces of DSML and reasoning markup, whole and cut, and text: any order of them.
PIECES = [
    f"<{D}function_calls>",
    f"</{D}function_calls>",
    f"<{D}tool_calls>",
    f"</{D}tool_calls>",
    f"<{D} calls>",
    f'<{D}invoke name="get_weather">',
    f'<{D} invoke name="search">',
    f"</{D}invoke>",
    f'<{D}parameter name="city" string="true">',
    f'<{D}parameter name="filters" string="false">',
    f'<{D} parameter name="query">',
    f"</{D}parameter>",
    f"<{D}",
    f"</{D}",
    '">',
    "<think>",
    "</think>",
    '{"a": [1, "}"]}',
    "Paris 東京",
    "\n",
    " ",
    '"',
    "<",
]
NAMES = [V32, PAIR, V4, V41, (None, "deepseek_v4"), ("deepseek_v41", None)]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(PIECES), max_size=24),
    st.sampled_from(NAMES),
    st.lists(st.integers(1, 7), min_size=1, max_size=30),
    st.sampled_from([None, ON, {"thinking": False}]),
)
def test_any_markup_streams_as_it_parses_whole(
    pieces: list[str],
    names: tuple[str | None, str | None],
    sizes: list[int],
    kwargs: dict[str, Any] | None,
) -> None:
    r = derenderer_class()(
        load_detokenizer("deepseek-r1"),
        served_model_name=SERVED,
        reasoning_parser=names[0],
        tool_parser=names[1],
    )
    request = chat_request(**({} if kwargs is None else {"chat_template_kwargs": kwargs}))
    prompt, gen = encode("deepseek-r1", THINKING), encode("deepseek-r1", "".join(pieces) + ".")
    got = whole(r, prompt, gen, request, "stop")
    chunks, i = [], 0
    for size in sizes:
        if i >= len(gen):
            break
        chunks.append(gen[i : i + size])
        i += size
    chunks.append(gen[i:])
    assert stream(r, prompt, chunks, request, "stop").result() == got
