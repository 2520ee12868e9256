"""A checkpoint's response template under vLLM's parser names ``hf`` and ``beam``.

vLLM 0.33.0 reads the ``response_template`` of a checkpoint's ``tokenizer_config.json`` under
the parser name ``hf`` (``beam`` is the same parser), by its own rules, which are not all
transformers' (``auto`` reads the template by transformers' rules). The differences, in short:
text is sent as written, not stripped; a JSON field of calls is read when it closes and a call
whose JSON does not parse is dropped; arguments are typed by the request's schema and written
as Python's ``json.dumps`` writes them; the prompt is read from the last start anchor in it; and
vLLM refuses at startup a template whose fields are not ``thinking``, ``content`` and
``tool_calls``, or whose ``thinking`` or ``content`` is not plain text.

The cases run on ``qwen3``'s tokenizer with each template in its ``tokenizer_config.json``. Each
case's expected message is vLLM 0.33.0's whole answer for the same checkpoint, text, names,
prompt and request (run on CPU from the 0.33.0 wheel through ``acceptance/vllm/parsers_oracle.py``),
except where a comment says how vLLM's differs and why the answer here is kept. Every case runs
whole and streamed at 1, 3 and random ids a chunk, in both ``parser_state`` modes.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.family_cases import Case, check_on, tools_of
from helpers.parsers_oracle import SERVED, Message
from helpers.parsers_util import derenderer_class
from helpers.real_tokenizers import model_dir
from helpers.stream_util import import_tokstream

Q = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
THINK = "<think>\n"
CLOSED = "<think>\n\n</think>\n\n"
LONG_PREFILL = Q + THINK + " ".join(["step"] * 80) + "\n"
NO_ANCHOR = "User: Weather?\nAssistant: <think>\n"
G = "[gMASK]<sop><|user|>\nWeather?<|assistant|>"
H = "<|start|>user<|message|>Weather?<|end|><|start|>assistant"
C = (
    "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Weather?<|END_OF_TURN_TOKEN|>"
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"
)
WEATHER = tools_of(
    "get_weather",
    {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "metric": {"type": "boolean"},
        "ratio": {"type": "number"},
        "tags": {"type": "array"},
        "opts": {"type": "object"},
    },
    required=["city"],
)


def _vllm_fields(builtin: str) -> dict[str, Any]:
    """A built-in template with its ``reasoning_content`` field named ``thinking``, as vLLM's
    ``hf`` parser wants it."""
    template = json.loads(import_tokstream()._core.builtin_template(builtin))
    fields = template["fields"]
    template["fields"] = {
        ("thinking" if k == "reasoning_content" else k): v for k, v in fields.items()
    }
    return template


def _qwen3(**fields: Any) -> dict[str, Any]:
    """Qwen3's template with ``fields`` replaced (a field set to ``None`` removed)."""
    template = _vllm_fields("qwen3_template")
    template["fields"] = {k: v for k, v in (template["fields"] | fields).items() if v is not None}
    return template


def _call(name: str = "{name}") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "arguments": "{content}"}}


TEMPLATES: dict[str, dict[str, Any]] = {
    "qwen3": _qwen3(),
    "qwen3_nocontent": _qwen3(content=None),
    "qwen3_nothink": _qwen3(thinking=None),
    "qwen3_notransform": _qwen3(
        tool_calls={
            "open": "<tool_call>",
            "close_pattern": "</tool_call>\\s*",
            "repeats": True,
            "content": "json",
        }
    ),
    "qwen3_join": _qwen3(
        content={"close_pattern": "<\\|im_end\\|>\\s*", "repeats": True, "join": "\n"}
    ),
    "qwen3_reasoning_content": json.loads(
        import_tokstream()._core.builtin_template("qwen3_template")
    ),
    "glm45": _vllm_fields("glm45"),
    # Qwen3.5's calls: a function tag, then a tag per parameter, values as written.
    "qwen3_xml": {
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "thinking": {"open": "<think>", "close": "</think>"},
            "tool_calls": {
                "open_pattern": "\\s*<tool_call>\\s*<function=(?P<name>[^>\\n]+)>",
                "close_pattern": "</function>\\s*</tool_call>",
                "repeats": True,
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": "<parameter=(?P<key>[^>\\n]+)>\\s*(?P<value>.*?)\\s*</parameter>"
                },
                "transform": _call(),
            },
            "content": {"close_pattern": "\\s*(?:<\\|im_end\\|>|<\\|endoftext\\|>)"},
        },
    },
    # Cohere's calls: one JSON list of {"tool_name", "parameters"} in an action block.
    "cohere": {
        "start_anchor": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
        "fields": {
            "thinking": {"open": "<|START_THINKING|>", "close": "<|END_THINKING|>"},
            "content": {"open": "<|START_RESPONSE|>", "close": "<|END_RESPONSE|>"},
            "tool_calls": {
                "open": "<|START_ACTION|>",
                "close": "<|END_ACTION|>",
                "content": "json",
                "transform_each": True,
                "transform": {
                    "type": "function",
                    "function": {"name": "{tool_name}", "arguments": "{parameters}"},
                },
            },
        },
    },
    # Harmony's channels: the thinking closer runs into the next message's start anchor.
    "harmony_like": {
        "start_anchor": "<|start|>assistant",
        "fields": {
            "thinking": {
                "open": "<|channel|>analysis<|message|>",
                "close": "<|end|><|start|>assistant",
            },
            "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>"},
            "tool_calls": {
                "open_pattern": (
                    "<\\|channel\\|>commentary to=functions\\.(?P<name>\\w+)<\\|message\\|>"
                ),
                "close": "<|call|>",
                "repeats": True,
                "content": "json",
                "transform": _call(),
            },
        },
    },
}


def _h(label: str, template: str, text: str, expected: Message, **kw: Any) -> tuple[str, Case]:
    return template, Case(
        label,
        "qwen3",
        kw.pop("reasoning", "hf"),
        kw.pop("tool", "hf"),
        kw.pop("prompt", {"glm45": G, "harmony_like": H, "cohere": C}.get(template, Q)),
        text,
        expected,
        **kw,
    )


CASES = [
    _h("q-ws", "qwen3", "  Hello  \n", Message("  Hello  \n", "", ())),
    _h(
        "q-think-content",
        "qwen3",
        "<think>\nPlan.\n</think>\n\nIt is sunny.",
        Message("\n\nIt is sunny.", "\nPlan.\n", ()),
    ),
    _h(
        "q-think-call",
        "qwen3",
        (
            "<think>\nPlan.\n</think>\n\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>"
        ),
        Message("\n\n", "\nPlan.\n", (("get_weather", '{"city": "Paris"}'),)),
    ),
    _h(
        "q-think-only-ws", "qwen3", "<think>\nPlan.\n</think>\n\n", Message("\n\n", "\nPlan.\n", ())
    ),
    _h(
        "q-content-call-text",
        "qwen3",
        (
            "Let me check.\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>\nDone."
        ),
        Message("Let me check.\nDone.", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    _h(
        "q-two-calls-text-between",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>\nAnd:\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Rome"}}\n'
            "</tool_call>"
        ),
        Message(
            "And:\n",
            "",
            (
                ("get_weather", '{"city": "Paris"}'),
                ("get_weather", '{"city": "Rome"}'),
            ),
        ),
    ),
    _h(
        "q-two-think-regions",
        "qwen3",
        "<think>a</think> b <think>c</think> d",
        Message(" b  d", "ac", ()),
    ),
    _h("q-im-end-regions", "qwen3", "Hi.<|im_end|>\n more", Message("Hi.more", "", ())),
    _h("q-stray-close-think", "qwen3", "Hi</think> there", Message("Hi</think> there", "", ())),
    _h(
        "q-call-inside-think",
        "qwen3",
        (
            "<think>maybe <tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call></think>ok"
        ),
        Message(
            "ok",
            (
                "maybe <tool_call>\n"
                '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
                "</tool_call>"
            ),
            (),
        ),
    ),
    _h("q-cut-reasoning", "qwen3", "<think>\nPlan", Message("", "\nPlan", ()), finish="length"),
    _h(
        "q-cut-args",
        "qwen3",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa',
        Message("", "", ()),
        finish="length",
    ),
    _h(
        "q-cut-after-json",
        "qwen3",
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
        finish="length",
    ),
    _h(
        "q-malformed-json",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}\n'
            "</tool_call>\nDone."
        ),
        Message("Done.", "", ()),
    ),
    _h(
        "q-text-after-json",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}} trai'
            "ling\n</tool_call>"
        ),
        Message("", "", ()),
    ),
    _h(
        "q-unbalanced-quote",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris}}\n'
            "</tool_call>\nDone."
        ),
        Message("Done.", "", ()),
    ),
    _h(
        "q-raw-newline-in-string",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "write_file", "arguments": {"path": "a", "content":'
            ' "line1\nline2"}}\n</tool_call>'
        ),
        Message("", "", ()),
    ),
    # vLLM drops a call without "arguments"; it is a call of no arguments.
    _h(
        "q-no-arguments",
        "qwen3",
        '<tool_call>\n{"name": "get_time"}\n</tool_call>',
        Message("", "", (("get_time", "{}"),)),
    ),
    _h(
        "q-compact-unicode",
        "qwen3",
        (
            '<tool_call>{"name":"get_weather","arguments":{"city":"S\\u00e'
            '3o Paulo","unit":"c"}}</tool_call>'
        ),
        Message("", "", (("get_weather", '{"city": "São Paulo", "unit": "c"}'),)),
    ),
    _h(
        "q-string-arguments",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"'
            "}\n</tool_call>"
        ),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    _h(
        "q-typed-json",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris", "days'
            '": "3", "metric": "true", "ratio": "0.5", "tags": "[\\"a\\"]",'
            ' "opts": "{\\"x\\": 1}", "extra": "5"}}\n</tool_call>'
        ),
        Message(
            "",
            "",
            (
                (
                    "get_weather",
                    (
                        '{"city": "Paris", "days": 3, "metric": true, "ratio": 0.5, "'
                        'tags": ["a"], "opts": {"x": 1}, "extra": "5"}'
                    ),
                ),
            ),
        ),
        tools=WEATHER,
    ),
    _h(
        "q-close-in-string",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "write_file", "arguments": {"path": "a", "content":'
            ' "x</tool_call>y"}}\n</tool_call>'
        ),
        Message('y"}}\n</tool_call>', "", ()),
    ),
    _h(
        "q-unknown-tool",
        "qwen3",
        ('<tool_call>\n{"name": "book_flight", "arguments": {"to": "Rome"}}\n</tool_call>'),
        Message("", "", (("book_flight", '{"to": "Rome"}'),)),
    ),
    # vLLM's whole answer reads the prompt from the generate response only; its streams, as here,
    # read the request's.
    _h(
        "q-prompt-think",
        "qwen3",
        "Plan.\n</think>\n\nHi.",
        Message("\n\nHi.", "Plan.\n", ()),
        prompt=Q + THINK,
    ),
    _h(
        "q-prompt-closed-think-again",
        "qwen3",
        "<think>x</think>Hi.",
        Message("Hi.", "x", ()),
        prompt=Q + CLOSED,
    ),
    _h(
        "q-thinking-off-kwargs",
        "qwen3",
        "<think>\nPlan.\n</think>\n\nHi.",
        Message("\n\nHi.", "\nPlan.\n", ()),
        kwargs={"enable_thinking": False},
    ),
    _h(
        "q-include-reasoning-false",
        "qwen3",
        "<think>\nPlan.\n</think>\n\nHi.",
        Message("\n\nHi.", "", ()),
        request={"include_reasoning": False},
    ),
    _h(
        "q-tool-choice-none",
        "qwen3",
        (
            "Let me check.\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>\nDone."
        ),
        Message(
            (
                "Let me check.\n<tool_call>\n"
                '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
                "</tool_call>\nDone."
            ),
            "",
            (),
        ),
        request={"tool_choice": "none"},
    ),
    # vLLM's whole content is "", its streams send none.
    _h(
        "q-tool-choice-required",
        "qwen3",
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
        request={"tool_choice": "required"},
    ),
    # vLLM parses the call of a request without tools and drops it; no tool is offered, so the text
    # stays content.
    _h(
        "q-no-tools-choice-null",
        "qwen3",
        (
            "Let me check.\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>"
        ),
        Message(
            (
                "Let me check.\n<tool_call>\n"
                '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
                "</tool_call>"
            ),
            "",
            (),
        ),
        request={"tools": None, "tool_choice": None},
    ),
    _h(
        "q-no-tools-choice-none",
        "qwen3",
        (
            "Let me check.\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>"
        ),
        Message(
            (
                "Let me check.\n<tool_call>\n"
                '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
                "</tool_call>"
            ),
            "",
            (),
        ),
        request={"tools": None, "tool_choice": "none"},
    ),
    _h(
        "q-parallel-false",
        "qwen3",
        (
            "<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Rome"}}\n'
            "</tool_call>"
        ),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
        request={"parallel_tool_calls": False},
    ),
    _h(
        "q-reasoning-parser-alone",
        "qwen3",
        (
            "<think>\nPlan.\n</think>\n\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>"
        ),
        Message(
            (
                "\n\n<tool_call>\n"
                '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
                "</tool_call>"
            ),
            "\nPlan.\n",
            (),
        ),
        tool=None,
    ),
    # vLLM sends the thinking field's text without its markers as content; the output as written
    # here.
    _h(
        "q-tool-parser-alone",
        "qwen3",
        (
            "<think>\nPlan.\n</think>\n\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>"
        ),
        Message("<think>\nPlan.\n</think>\n\n", "", (("get_weather", '{"city": "Paris"}'),)),
        reasoning=None,
    ),
    _h(
        "q-beam",
        "qwen3",
        (
            "<think>\nPlan.\n</think>\n\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>"
        ),
        Message("\n\n", "\nPlan.\n", (("get_weather", '{"city": "Paris"}'),)),
        reasoning="beam",
        tool="beam",
    ),
    # the same as q-tool-parser-alone.
    _h(
        "q-beam-tool-alone",
        "qwen3",
        (
            "<think>\nPlan.\n</think>\n\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
            "</tool_call>"
        ),
        Message("<think>\nPlan.\n</think>\n\n", "", (("get_weather", '{"city": "Paris"}'),)),
        reasoning=None,
        tool="beam",
    ),
    _h(
        "q-own-prompt-think",
        "qwen3",
        "Plan.\n</think>\n\nHi.",
        Message("\n\nHi.", "Plan.\n", ()),
        prompt=Q + THINK,
    ),
    # the same (the whole prompt read, no anchor in it): vLLM's streams answer this.
    _h(
        "q-prompt-no-anchor",
        "qwen3",
        "Plan.\n</think>\n\nHi.",
        Message("\n\nHi.", "Plan.\n", ()),
        prompt=NO_ANCHOR,
    ),
    # the same: vLLM's streams answer this.
    _h(
        "q-prompt-long-prefill",
        "qwen3",
        "more.\n</think>\n\nHi.",
        Message("\n\nHi.", "more.\n", ()),
        prompt=LONG_PREFILL,
    ),
    _h(
        "q-no-content-field",
        "qwen3_nocontent",
        "<think>a</think> Hello",
        Message(" Hello", "a", ()),
    ),
    _h(
        "q-nothink-tool-only",
        "qwen3_nothink",
        "<think>x</think>Hi.",
        Message("<think>x</think>Hi.", "", ()),
        reasoning=None,
    ),
    # vLLM drops the call when the field has no transform; the object's name and arguments are the
    # call.
    _h(
        "q-no-transform",
        "qwen3_notransform",
        ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
    ),
    _h(
        "g-think-text-call",
        "glm45",
        (
            "<think>Plan.</think>\nLet me check.\n<tool_call>get_weather\n"
            "<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
            "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>\nDone."
        ),
        Message(
            "\nLet me check.\nDone.", "Plan.", (("get_weather", '{"city": "Paris", "days": 3}'),)
        ),
        tools=WEATHER,
    ),
    _h(
        "g-untyped-values",
        "glm45",
        (
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n"
            "<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n"
            "<arg_value>3</arg_value>\n<arg_key>opts</arg_key>\n"
            '<arg_value>{"a": 1}</arg_value>\n</tool_call>'
        ),
        Message("", "", (("get_weather", '{"city": "Paris", "days": 3, "opts": {"a": 1}}'),)),
    ),
    _h(
        "g-two-calls",
        "glm45",
        (
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n"
            "<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n"
            "<arg_value>3</arg_value>\n</tool_call>\n<tool_call>get_weather\n"
            "<arg_key>city</arg_key>\n<arg_value>Rome</arg_value>\n"
            "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
        ),
        Message(
            "",
            "",
            (
                ("get_weather", '{"city": "Paris", "days": 3}'),
                ("get_weather", '{"city": "Rome", "days": 3}'),
            ),
        ),
        tools=WEATHER,
    ),
    _h(
        "g-cut",
        "glm45",
        (
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n"
            "<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3"
        ),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
        finish="length",
        tools=WEATHER,
    ),
    # the same: vLLM's streams answer this.
    _h(
        "g-prompt-think",
        "glm45",
        "Plan.</think>Hi.",
        Message("Hi.", "Plan.", ()),
        prompt=G + "<think>",
    ),
    # the same: vLLM's streams answer this.
    _h(
        "s-prompt-think-call",
        "qwen3_xml",
        (
            "Plan.\n</think>\n\nLet me check.\n\n<tool_call>\n<function=get_weather>\n"
            "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n"
            "</function>\n</tool_call>"
        ),
        Message("\n\nLet me check.", "Plan.\n", (("get_weather", '{"city": "Paris", "days": 3}'),)),
        prompt=Q + THINK,
        tools=WEATHER,
    ),
    _h("s-content-ws", "qwen3_xml", "\n\nHello  \n\n", Message("\n\nHello  \n\n", "", ())),
    _h(
        "s-untyped-param",
        "qwen3_xml",
        (
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
            "</parameter>\n<parameter=extra>\n5\n</parameter>\n</function>\n"
            "</tool_call>"
        ),
        Message("", "", (("get_weather", '{"city": "Paris", "extra": "5"}'),)),
    ),
    _h(
        "s-cut",
        "qwen3_xml",
        (
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
            "</parameter>\n<parameter=days>\n3"
        ),
        Message("", "", (("get_weather", '{"city": "Paris"}'),)),
        finish="length",
        tools=WEATHER,
    ),
    _h(
        "c-think-calls",
        "cohere",
        (
            "<|START_THINKING|>Plan.<|END_THINKING|>\n"
            '<|START_ACTION|>[{"tool_name": "get_weather", "parameters": '
            '{"city": "Paris"}}, {"tool_name": "get_time", "parameters": '
            "{}}]<|END_ACTION|>"
        ),
        Message(
            "",
            "Plan.",
            (
                ("get_weather", '{"city": "Paris"}'),
                ("get_time", "{}"),
            ),
        ),
    ),
    _h(
        "c-outside-text",
        "cohere",
        "stray <|START_RESPONSE|> Hi. <|END_RESPONSE|> tail",
        Message(" Hi. ", "", ()),
    ),
    # vLLM drops the whole list when one call lacks "parameters"; it is a call of no arguments.
    _h(
        "c-list-one-incomplete",
        "cohere",
        (
            '<|START_ACTION|>[{"tool_name": "get_weather", "parameters": '
            '{"city": "Paris"}}, {"tool_name": "get_time"}]<|END_ACTION|>'
        ),
        Message(
            "",
            "",
            (
                ("get_weather", '{"city": "Paris"}'),
                ("get_time", "{}"),
            ),
        ),
    ),
    # vLLM completes the closer the output was cut in ("Plan."); the held text is sent here.
    _h(
        "h-closer-cut",
        "harmony_like",
        "<|channel|>analysis<|message|>Plan.<|end|>",
        Message("", "Plan.<|end|>", ()),
    ),
    _h(
        "h-think-final",
        "harmony_like",
        (
            "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant"
            "<|channel|>final<|message|> Hi. <|end|>"
        ),
        Message(" Hi. ", "Plan.", ()),
    ),
    _h(
        "h-typed-raw",
        "harmony_like",
        (
            '<|channel|>commentary to=functions.get_weather<|message|>{"c'
            'ity": "Paris", "days": "3"}<|call|>'
        ),
        Message("", "", (("get_weather", '{"city": "Paris", "days": 3}'),)),
        tools=WEATHER,
    ),
    _h(
        "h-cut-raw",
        "harmony_like",
        '<|channel|>commentary to=functions.get_weather<|message|>{"city": "Pa',
        Message("", "", ()),
        finish="length",
    ),
]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``checkpoints(template)``: a folder of qwen3's tokenizer with that response template."""
    root = tmp_path_factory.mktemp("checkpoints")
    source = model_dir("qwen3")

    @functools.cache
    def folder(template: str) -> Path:
        out = root / template
        out.mkdir()
        shutil.copyfile(source / "tokenizer.json", out / "tokenizer.json")
        config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
        config["response_template"] = TEMPLATES[template]
        (out / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
        return out

    return folder


@functools.cache
def _derenderer(
    folder: Path, reasoning: str | None, tool: str | None, mode: str = "resumable"
) -> Any:
    return derenderer_class()(
        import_tokstream().Detokenizer.from_file(str(folder)),
        served_model_name=SERVED,
        reasoning_parser=reasoning,
        tool_parser=tool,
        parser_state=mode,
    )


@pytest.mark.parametrize(("template", "case"), [pytest.param(*c, id=c[1].label) for c in CASES])
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(checkpoints: Any, template: str, case: Case, mode: str) -> None:
    check_on(_derenderer(checkpoints(template), case.reasoning, case.tool, mode), case, mode)


# vLLM's refusals at startup, each with the message vLLM gives it (the reason in other words
# here, and what to name instead).
REFUSED = [
    ("qwen3_join", "hf", "hf", 'the field "content" is not plain text'),
    ("qwen3_nothink", "hf", "hf", 'the reasoning parser is named and there is no "thinking" field'),
    ("qwen3_reasoning_content", "hf", "hf", 'a field "reasoning_content"'),
    ("qwen3", "hf", "beam", '"hf" and "beam" .* cannot be named together'),
    ("qwen3", "hf", "hermes", 'not "hermes"'),
]


@pytest.mark.parametrize(("template", "reasoning", "tool", "message"), REFUSED)
def test_refused_as_vllm_refuses(
    checkpoints: Any, template: str, reasoning: str, tool: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        _derenderer(checkpoints(template), reasoning, tool)


def test_the_same_template_under_auto_reads_by_transformers_rules(checkpoints: Any) -> None:
    # Under auto the text is stripped, and a template vLLM refuses is served.
    (_, case) = next(c for c in CASES if c[1].label == "q-think-content")
    auto = dict(reasoning="auto", tool="auto")
    check_on(
        _derenderer(checkpoints("qwen3"), "auto", "auto"),
        Case(**{**case.__dict__, **auto, "expected": Message("It is sunny.", "Plan.", ())}),
        "resumable",
    )
    _derenderer(checkpoints("qwen3_reasoning_content"), "auto", "auto")
    _derenderer(checkpoints("qwen3_join"), "auto", "auto")
