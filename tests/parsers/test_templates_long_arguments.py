"""A tag-form call's argument of about 46 KB: whole and streamed, its text is all there (a
string value's text is sent as it comes; a call's text kept for its close travels in the state,
up to 1 MiB)."""

from __future__ import annotations

import json

from helpers.family_cases import Case, check
from helpers.parsers_oracle import Message

HEAD = "<|im_start|>user\nWrite it.<|im_end|>\n<|im_start|>assistant\n"
LINE = "line {i}: the quick brown fox jumps over the lazy dog ☃\n"
VALUE = "".join(LINE.format(i=i) for i in range(800))  # about 46 KB


def test_a_long_parameter_is_whole() -> None:
    assert len(VALUE.encode()) > 40_000
    text = (
        "<think>Plan.</think><tool_call>\n<function=write_file>\n<parameter=path>\na.txt\n"
        f"</parameter>\n<parameter=content>\n{VALUE}\n</parameter>\n</function>\n</tool_call>"
    )
    arguments = json.dumps({"path": "a.txt", "content": VALUE}, ensure_ascii=False)
    expected = Message("", "Plan.", (("write_file", arguments),))
    check(Case("long", "qwen3", "qwen3", "qwen3_coder", HEAD, text, expected), "resumable")
