"""The README's examples stay true: each ``curl`` under "With curl" is sent to a real
``tokstream serve`` (no flags, as the README runs it) and must get the answer printed below it,
``created`` aside; the Python snippets' imports resolve."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.server_util import CHAT, COMPLETION, Server

README = Path(__file__).resolve().parent.parent / "README.md"
_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)


def curl_examples() -> list[tuple[str, Any, Any]]:
    """``(path, request body, answer)`` for each curl block and the JSON block after it."""
    text = README.read_text()
    section = text[text.index("### With curl") : text.index("## Scaling out")]
    blocks = _BLOCK.findall(section)
    out = []
    for (lang, command), (next_lang, answer) in itertools.pairwise(blocks):
        if lang != "bash":
            continue
        assert next_lang == "json", command
        path = re.search(r"http://127\.0\.0\.1:8000(/\S+)", command)
        body = re.search(r"-d '(.*)'", command, re.S)
        assert path and body, command
        out.append((path.group(1), json.loads(body.group(1)), json.loads(answer)))
    return out


def without_created(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_created(v) for k, v in value.items() if k != "created"}
    if isinstance(value, list):
        return [without_created(v) for v in value]
    return value


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server([], tmp_path_factory.mktemp("readme") / "server.log").start()
    try:
        yield server
    finally:
        server.stop()


def test_there_are_the_examples_the_readme_promises() -> None:
    paths = [path for path, _, _ in curl_examples()]
    assert paths.count(CHAT) == 3
    assert paths.count(COMPLETION) == 1


@pytest.mark.parametrize("index", range(4))
def test_each_curl_gets_the_answer_shown(default_server: Server, index: int) -> None:
    path, body, shown = curl_examples()[index]
    answer = default_server.ok(path, body)
    assert without_created(answer) == without_created(shown)


def test_the_second_stream_chunk_carries_the_first_answers_state() -> None:
    (_, _, first), (_, second, _) = curl_examples()[1:3]
    assert second["stream_state"] == first["stream_state"]


def test_python_snippets_import_what_they_use() -> None:
    text = README.read_text()
    imports = [
        line
        for lang, code in _BLOCK.findall(text)
        if lang == "python"
        for line in code.splitlines()
        if line.startswith(("from tokstream", "import tokstream"))
    ]
    assert "from tokstream.protocol import DerenderChatRequest" in imports
    for line in imports:
        exec(line, {})
