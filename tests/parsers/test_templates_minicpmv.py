"""MiniCPM-V's built-in template under vLLM's reasoning parser name ``minicpmv``.

MiniCPM-V (4.5, on Qwen3-8B's vocabulary) reasons as Qwen3 does: the output starts in reasoning
unless ``chat_template_kwargs.enable_thinking`` is off (or ``reasoning_effort`` is ``"none"``),
``</think>`` or a ``<tool_call>`` ends it, once. Its tokenizer decodes some newlines as a backslash
and ``n``: those are read back in reasoning and content (not in call arguments), except in code
(backtick spans and fences), math (``$``, ``$$``, ``\\(``, ``\\[``) and runs of backslashes. The
vocabulary's other special tokens and its reserved markers are dropped wherever they are. Calls
are ``qwen3_coder``'s, with that tool parser beside it.

The cases run on ``qwen3``. Each case's expected message is vLLM 0.33.0's whole answer for the
same text, names, prompt and request (``vllm/parser/minicpmv.py``, run on CPU from the 0.33.0
wheel; ``acceptance/vllm/parsers_oracle.py``), except where a comment says how vLLM's differs and
why the answer here is kept. Every case runs whole and streamed at 1, 3 and random ids a chunk,
in both ``parser_state`` modes.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

HEAD = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
OFF_PROMPT = HEAD + "<think>\n\n</think>\n\n"
OFF = {"enable_thinking": False}
CODER_CALL = (
    "<tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n</parameter>\n"
    "<parameter=content>\nx\\ny\n</parameter>\n</function>\n</tool_call>"
)


def _v(label: str, text: str, expected: Message, **kw: Any) -> Case:
    return Case(
        f"minicpmv-{label}",
        "qwen3",
        "minicpmv",
        kw.pop("tool", None),
        kw.pop("prompt", HEAD),
        text,
        expected,
        **kw,
    )


CASES = [
    _v(
        "reasoning-then-content",
        "<think>\nStep 1\\nStep 2\n</think>\n\nLine A\\nLine B",
        Message("\n\nLine A\nLine B", "\nStep 1\nStep 2\n", ()),
    ),
    _v(
        "content-thinking-off",
        "Hello\\nWorld\\n\\nBye",
        Message("Hello\nWorld\n\nBye", "", ()),
        prompt=OFF_PROMPT,
        kwargs=OFF,
    ),
    _v("no-think-markers", "Just an answer\\nline 2", Message("", "Just an answer\nline 2", ())),
    _v(
        "code-fence-and-inline-code",
        "<think>Plan</think>Code:\\n```python\nprint('a\\nb')\n```\\nAfter `x\\ny` end",
        Message("Code:\n```python\nprint('a\\nb')\n```\nAfter `x\\ny` end", "Plan", ()),
    ),
    _v(
        "latex",
        "<think>m</think>Math $a\\n b$ and $$c\\nd$$ and \\(e\\nf\\) and \\[g\\nh\\]\\nDone",
        Message("Math $a\\n b$ and $$c\\nd$$ and \\(e\\nf\\) and \\[g\\nh\\]\nDone", "m", ()),
    ),
    _v(
        "backslashes",
        "<think>t</think>Keep \\\\n and \\\\\\n; CRLF a\\r\\nb; CR c\\rd; tab \\t; unicode \\u00e9",
        Message("Keep \\\\n and \\\\\\n; CRLF a\nb; CR c\nd; tab \\t; unicode \\u00e9", "t", ()),
    ),
    # The rule reads a path's `\n` as a newline too, as vLLM's parser does.
    _v(
        "windows-path",
        "<think>t</think>Saved to C:\\new\\notes.txt",
        Message("Saved to C:\new\notes.txt", "t", ()),
    ),
    _v(
        "currency-reads-as-math",
        "<think>t</think>It costs $5\\nand then $6\\nmore",
        Message("It costs $5\\nand then $6\nmore", "t", ()),
    ),
    _v(
        "unclosed-backtick",
        "<think>t</think>Type ` then\\nmore\\nlines",
        Message("Type ` then\\nmore\\nlines", "t", ()),
    ),
    _v(
        "reasoning-cut",
        "<think>\nThinking\\nmore",
        Message("", "\nThinking\nmore", ()),
        finish="length",
    ),
    # vLLM's streams send the markers after reasoning as content.
    _v(
        "markers-dropped",
        "<think>a<|im_end|>b</think>c<|im_end|>d <reserved_12> e <|endoftext|> f\\ng",
        Message("cd  e  f\ng", "ab", ()),
        finish="length",
    ),
    _v(
        "a-call-without-a-tool-parser",
        "<think>Plan</think>\n\n" + CODER_CALL,
        # As content, the call's text has its newlines read back too.
        Message("\n\n" + CODER_CALL.replace("x\\ny", "x\ny"), "Plan", ()),
    ),
    # qwen3_coder's own whole answer strips the content beside a call; its streams keep it.
    _v(
        "beside-qwen3-coder",
        "<think>Plan\\nA</think>\n\nSure\\nthing.\n" + CODER_CALL,
        Message(
            "\n\nSure\nthing.\n",
            "Plan\nA",
            (("write_file", '{"path": "a.txt", "content": "x\\\\ny"}'),),
        ),
        tool="qwen3_coder",
    ),
    # Thinking off, a `<think>` block in the output stays content, as vLLM's streams keep it
    # (its whole answer drops it).
    _v(
        "thinking-off-by-effort",
        "<think>Hidden</think>Visible\\ntext",
        Message("<think>Hidden</think>Visible\ntext", "", ()),
        request={"reasoning_effort": "none"},
    ),
    _v(
        "thinking-off-a-block-in-the-output",
        "<think>Sneaky</think>Answer\\nhere",
        Message("<think>Sneaky</think>Answer\nhere", "", ()),
        prompt=OFF_PROMPT,
        kwargs=OFF,
    ),
    _v(
        "the-prompt-opened-reasoning",
        "Plan\\nX</think>\n\nAnswer\\nY",
        Message("\n\nAnswer\nY", "Plan\nX", ()),
        prompt=HEAD + "<think>\n",
        kwargs={"enable_thinking": True},
    ),
    # vLLM's streams end this turn's reasoning at an earlier turn's `</think>`.
    _v(
        "an-earlier-turn-closed-reasoning",
        "<think>Plan</think>Answer\\nY<|im_end|>",
        Message("Answer\nY", "Plan", ()),
        prompt=HEAD + "<think>\nx\n</think>\n\nHello<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n"
        "<|im_start|>assistant\n",
    ),
    _v(
        "include-reasoning-false",
        "<think>Secret\\nplan</think>Shown\\ntext",
        Message("Shown\ntext", "", ()),
        request={"include_reasoning": False},
    ),
    _v(
        "unicode",
        "<think>Réflexion\\n東京</think>Café 🌦️\\nnaïve",
        Message("Café 🌦️\nnaïve", "Réflexion\n東京", ()),
    ),
    _v(
        "escapes-split-over-ids",
        "<think>t</think>" + "a\\" * 3 + "n end",
        Message("a\\a\\a\n end", "t", ()),
    ),
    _v(
        "a-call-ends-reasoning",
        "<think>Plan\\n<tool_call>\n<function=get_time>\n</function>\n</tool_call>\nAfter\\nall",
        Message(
            "<tool_call>\n<function=get_time>\n</function>\n</tool_call>\nAfter\nall", "Plan\n", ()
        ),
    ),
    # vLLM's whole answer drops a second block's `</think>`; its streams keep it, as here.
    _v(
        "a-second-think-block",
        "<think>one</think>mid<think>two</think>end",
        Message("mid<think>two</think>end", "one", ()),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("mode", ["resumable", "replay"])
def test_whole_and_streamed(case: Case, mode: str) -> None:
    check(case, mode)
