"""Generations for the response-template tests, transformers' ``parse_response`` as oracle, and
the derenderers that parse with each family's template.

Each family's assistant messages (plain, reasoning and content, one call, parallel calls, nested
and unicode arguments) are rendered the way the model emits them: through the family's own chat
template where a fixture has it (rendered by transformers from the fixture directory, offline),
else as hand-built text in the family's format. The text is then tokenized with a real
tokenizer, so markers split across tokens wherever the vocabulary splits them.
"""

# DeepSeek's markers are spelled with full-width bars.
# ruff: noqa: RUF001

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import TemplateError
from tokenizers import Tokenizer

from fixtures import model_dir
from helpers.parsers_oracle import SERVED, chat_request
from helpers.parsers_util import Result, derenderer_class
from helpers.real_tokenizers import load_tokenizer
from helpers.stream_util import import_tokstream, load_detokenizer

USER = [{"role": "user", "content": "Weather in Paris and 東京? 🌦️"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": name,
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    for name in ("get_weather", "search")
]
NESTED = {"query": 'say "hi" } ] 東京 👋', "filters": {"a": [1, {"b": None}], "ok": True, "n": 2.5}}


def _call(name: str, arguments: dict[str, Any], n: int) -> dict[str, Any]:
    function = {"name": name, "arguments": arguments}
    return {"id": f"call{n:05d}", "type": "function", "function": function}


#: The assistant messages every family renders (those a family cannot express are left out).
MESSAGES: dict[str, dict[str, Any]] = {
    "plain": {"content": "It is sunny in Paris, 晴れ in 東京. 🌞"},
    "reasoning": {"reasoning_content": "The user wants weather.\nNo tool.", "content": "Sunny."},
    "one_call": {"tool_calls": [_call("get_weather", {"city": "Paris"}, 1)]},
    "content_call": {
        "content": "Let me check.",
        "tool_calls": [_call("get_weather", {"city": "東京"}, 1)],
    },
    "parallel": {
        "tool_calls": [
            _call("get_weather", {"city": "Paris"}, 1),
            _call("search", {"query": "東京 weather"}, 2),
        ]
    },
    "nested": {"tool_calls": [_call("search", NESTED, 1)]},
    "reasoning_call": {
        "reasoning_content": "Need the tool.",
        "tool_calls": [_call("get_weather", {"city": "Paris"}, 1)],
    },
}


@dataclass(frozen=True)
class Family:
    """A built-in template, the tokenizer its text is tokenized with, and how it is rendered."""

    template: str
    tokenizer: str
    #: Renders a message to (prompt text, generated text); ``None`` when it cannot be expressed.
    render: Callable[[dict[str, Any]], tuple[str, str] | None]


def _args(call: dict[str, Any]) -> str:
    return json.dumps(call["function"]["arguments"], ensure_ascii=False)


@functools.cache
def _hf_tokenizer(fixture: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_dir(fixture)), local_files_only=True)


def _chat(fixture: str, ends: Sequence[str]) -> Callable[[dict[str, Any]], tuple[str, str] | None]:
    """Renders through the fixture's own chat template, less the end-of-turn marker."""

    def render(message: dict[str, Any]) -> tuple[str, str] | None:
        tok = _hf_tokenizer(fixture)
        kw: dict[str, Any] = {"tokenize": False, "tools": TOOLS}
        prompt = tok.apply_chat_template(USER, add_generation_prompt=True, **kw)
        assistant = {"role": "assistant", "content": "", **message}
        try:
            full = tok.apply_chat_template([*USER, assistant], **kw)
        except TemplateError:  # a message this chat template refuses (Llama's parallel calls)
            return None
        assert full.startswith(prompt), (prompt, full)
        text = full[len(prompt) :]
        for end in ends:
            text = text.removesuffix(end)
        return prompt, text

    return render


def _hand(
    prompt: str,
    think: tuple[str, str] | None,
    call: Callable[[dict[str, Any]], str] | None,
    *,
    before: str = "",
    between: str = "",
    after: str = "",
) -> Callable[[dict[str, Any]], tuple[str, str] | None]:
    """Hand-built text: reasoning between ``think``'s markers, content, then each call."""

    def render(message: dict[str, Any]) -> tuple[str, str] | None:
        text = ""
        if "reasoning_content" in message:
            if think is None:
                return None
            text += f"{think[0]}{message['reasoning_content']}{think[1]}"
        text += message.get("content", "")
        calls = message.get("tool_calls", [])
        if calls:
            if call is None:
                return None
            text += before + between.join(call(c) for c in calls) + after
        return prompt, text

    return render


def _qwen_coder(c: dict[str, Any]) -> str:
    params = "".join(
        f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
        for k, v in c["function"]["arguments"].items()
    )
    return f"\n<tool_call>\n<function={c['function']['name']}>\n{params}</function>\n</tool_call>"


def _glm(c: dict[str, Any]) -> str:
    pairs = "".join(
        f"<arg_key>{k}</arg_key>\n<arg_value>{v if isinstance(v, str) else json.dumps(v)}"
        "</arg_value>\n"
        for k, v in c["function"]["arguments"].items()
    )
    return f"\n<tool_call>{c['function']['name']}\n{pairs}</tool_call>"


QWEN_PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"
DS_PROMPT = "<｜begin▁of▁sentence｜><｜User｜>Weather?<｜Assistant｜>"
THINK = ("<think>\n", "\n</think>\n\n")

FAMILIES: dict[str, Family] = {
    "qwen3_template": Family("qwen3_template", "qwen3", _chat("qwen3", ["<|im_end|>\n"])),
    "llama3_json": Family(
        "llama3_json", "llama-3.2-instruct", _chat("llama-3.2-instruct", ["<|eot_id|>"])
    ),
    "deepseek_r1_template": Family(
        "deepseek_r1_template",
        "deepseek-r1",
        _hand(DS_PROMPT + "<think>\n", ("", "\n</think>\n\n"), None),
    ),
    "qwen3_coder": Family(
        "qwen3_coder", "qwen3", _hand(QWEN_PROMPT, THINK, _qwen_coder, before="")
    ),
    "deepseek_v3": Family(
        "deepseek_v3",
        "deepseek-r1",
        _hand(
            DS_PROMPT,
            THINK,
            lambda c: (
                "<｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                f"{c['function']['name']}\n```json\n{_args(c)}\n```<｜tool▁call▁end｜>"
            ),
            before="<｜tool▁calls▁begin｜>",
            between="\n",
            after="<｜tool▁calls▁end｜>",
        ),
    ),
    "deepseek_v31": Family(
        "deepseek_v31",
        "deepseek-r1",
        _hand(
            DS_PROMPT,
            ("<think>", "</think>"),
            lambda c: (
                f"<｜tool▁call▁begin｜>{c['function']['name']}<｜tool▁sep｜>{_args(c)}"
                "<｜tool▁call▁end｜>"
            ),
            before="<｜tool▁calls▁begin｜>",
            after="<｜tool▁calls▁end｜>",
        ),
    ),
    "mistral": Family(
        "mistral", "mistral-7b-instruct-v0.3", _chat("mistral-7b-instruct-v0.3", ["</s>"])
    ),
    "mistral (nemo)": Family(
        "mistral", "mistral-nemo-tekken", _chat("mistral-nemo-tekken", ["</s>"])
    ),
    "mistral_v11": Family(
        "mistral_v11",
        "mistral-nemo-tekken",
        _hand(
            "[INST]Weather?[/INST]",
            ("[THINK]", "[/THINK]"),
            lambda c: f"[TOOL_CALLS]{c['function']['name']}[ARGS]{_args(c)}",
        ),
    ),
    "glm45": Family("glm45", "qwen3", _hand("<|user|>\nWeather?<|assistant|>", THINK, _glm)),
    "kimi_k2": Family(
        "kimi_k2",
        "qwen3",
        _hand(
            "<|im_user|>user<|im_middle|>Weather?<|im_end|><|im_assistant|>assistant<|im_middle|>",
            ("<think>", "</think>"),
            lambda c: (
                f"<|tool_call_begin|>functions.{c['function']['name']}:0"
                f"<|tool_call_argument_begin|>{_args(c)}<|tool_call_end|>"
            ),
            before="<|tool_calls_section_begin|>",
            after="<|tool_calls_section_end|>",
        ),
    ),
    "gpt_oss": Family(
        "gpt_oss",
        "qwen3",
        _hand(
            "<|start|>user<|message|>Weather?<|end|><|start|>assistant",
            ("<|channel|>analysis<|message|>", "<|end|><|start|>assistant"),
            lambda c: (
                f"<|start|>assistant to=functions.{c['function']['name']}"
                f"<|channel|>commentary json<|message|>{_args(c)}<|call|>"
            ),
        ),
    ),
}


def template_json(name: str) -> str:
    """A built-in template's JSON text, from the core."""
    text = import_tokstream()._core.builtin_template(name)
    assert text is not None, name
    return str(text)


def encode(tok: Tokenizer, text: str) -> list[int]:
    """Ids for ``text`` with no special tokens added (added tokens in the text are matched)."""
    return list(tok.encode(text, add_special_tokens=False).ids)


@dataclass(frozen=True)
class Case:
    """One generation: prompt and output ids, and the output's text as the derender sees it."""

    family: str
    message: str
    prompt_text: str
    prompt: list[int]
    gen: list[int]
    text: str


def case(family: str, message: str) -> Case | None:
    """The generation of ``message`` in ``family``'s format, or ``None`` if it has no form."""
    fam = FAMILIES[family]
    msg = dict(MESSAGES[message])
    if family == "gpt_oss" and "content" in msg:
        msg["content"] = f"<|channel|>final<|message|>{msg['content']}"
    rendered = fam.render(msg)
    if rendered is None:
        return None
    prompt_text, text = rendered
    tok = load_tokenizer(fam.tokenizer)
    prompt, gen = encode(tok, prompt_text), encode(tok, text)
    full = tok.decode(prompt + gen, skip_special_tokens=False)
    head = tok.decode(prompt, skip_special_tokens=False)
    assert full.startswith(head), (head, full)
    return Case(family, message, prompt_text, prompt, gen, full[len(head) :])


def oracle(template: str, text: str, prefix: str) -> tuple[str, str, list[tuple[str, Any]]]:
    """transformers' ``parse_response``: content, reasoning and (name, arguments) per call."""
    from transformers.utils.chat_parsing import parse_response

    parsed = parse_response(text, json.loads(template), prefix=prefix)
    calls = [
        (c["function"]["name"], c["function"].get("arguments", {}))
        for c in parsed.get("tool_calls", [])
    ]
    names = ("reasoning_content", "reasoning", "thinking")
    reasoning = next((parsed[n] for n in names if n in parsed), "")
    return parsed.get("content", "") or "", reasoning or "", calls


# --- derenderers over the templates ----------------------------------------------------------

#: The chat request of the template tests.
REQUEST = chat_request()


#: Templates whose name parses otherwise than the template as written, as vLLM's parser of the
#: name does: the output starts in reasoning where thinking is on (``deepseek_v3``: only where
#: the request switches it on), reasoning ends once, and text keeps its whitespace as vLLM's
#: parser keeps it. Their derenderers here are given the template itself.
AS_WRITTEN = {"deepseek_v3", "deepseek_v31", "qwen3_template", "qwen3_coder",
              "deepseek_r1_template", "glm45", "kimi_k2", "mistral", "mistral_v11",
              "gpt_oss"}  # fmt: skip


@functools.cache
def derenderer(family: str, mode: str = "resumable") -> Any:
    """A derenderer parsing with ``family``'s built-in response template, built once."""
    fam = FAMILIES[family]
    if fam.template in AS_WRITTEN:
        names: dict[str, Any] = {"response_template": template_json(fam.template)}
    else:
        names = {"reasoning_parser": fam.template, "tool_parser": fam.template}
    return derenderer_class()(
        load_detokenizer(fam.tokenizer), served_model_name=SERVED, parser_state=mode, **names
    )


def parsed(result: Result) -> tuple[str, str, list[tuple[str, Any]]]:
    """A parsed message as ``oracle`` gives it: content, reasoning, calls with decoded arguments."""
    m = result.message
    return m.content, m.reasoning, [(name, json.loads(args)) for name, args in m.calls]
