"""The README and the pages of ``docs/`` stay true.

- each ``curl`` under "With curl" in ``docs/server.md`` is sent to a real ``tokstream serve``
  (no flags, as the README runs it) and must get the answer printed below it, ``created``
  aside;
- the Python snippets run: the README's Quickstart, then each page's snippets in the namespace
  it leaves (they name its ``model``, ``d``, ``tok`` and ``prompt_ids``), on the default
  tokenizer;
- the README's first screen holds its two commands, and the README stays under 15 KB;
- every relative link of the README and of ``docs/*.md`` names a file that exists, and an
  anchor that is one of its headings.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.server_util import CHAT, COMPLETION, Server

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SERVER_PAGE = DOCS / "server.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def curl_examples() -> list[tuple[str, Any, Any]]:
    """``(path, request body, answer)`` for each curl block and the JSON block after it."""
    text = SERVER_PAGE.read_text()
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


def python_snippets(page: Path) -> list[str]:
    return [code for lang, code in _BLOCK.findall(page.read_text()) if lang == "python"]


def quickstart() -> str:
    text = README.read_text()
    section = text[text.index("## Quickstart") : text.index("## Install")]
    (code,) = [code for lang, code in _BLOCK.findall(section) if lang == "python"]
    return code


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server([], tmp_path_factory.mktemp("readme") / "server.log").start()
    try:
        yield server
    finally:
        server.stop()


def test_there_are_the_examples_the_docs_promise() -> None:
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


def test_the_quickstart_runs_as_written() -> None:
    namespace: dict[str, Any] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(quickstart(), namespace)
    tok, d = namespace["tok"], namespace["d"]
    generated = [i for ids in namespace["engine_output"] for i in ids]
    whole = d.decode(namespace["prompt_ids"] + generated, skip_special_tokens=True)
    prompt = d.decode(namespace["prompt_ids"], skip_special_tokens=True)
    assert out.getvalue() == whole[len(prompt) :] + "\n"
    assert tok.decode(generated) == whole[len(prompt) :]


@pytest.mark.parametrize("page", [p.name for p in PAGES if p != README])
def test_each_pages_python_snippets_run(page: str) -> None:
    namespace: dict[str, Any] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(quickstart(), namespace)
        for code in python_snippets(DOCS / page):
            exec(code, namespace)


def test_the_pages_that_promise_snippets_have_them() -> None:
    for name in ("semantics.md", "server.md", "parsers.md"):
        assert python_snippets(DOCS / name), name
    imports = [line for code in python_snippets(SERVER_PAGE) for line in code.splitlines()]
    assert "from tokstream.protocol import DerenderChatRequest" in imports


def test_the_first_screen_has_the_two_commands() -> None:
    text = README.read_text()
    first = text[: text.index("## Contents")]
    assert 'pip install ".[server]" && tokstream serve' in first
    assert 'pip install ".[dev]" && python -m pytest tests' in first
    assert "BENCHMARKS.md" in first


def test_the_readme_is_under_15_kb() -> None:
    assert len(README.read_bytes()) < 15_000


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _BLOCK.sub("", page.read_text())
    return {slug(h) for h in _HEADING.findall(text)}


def relative_links(page: Path) -> list[str]:
    text = _BLOCK.sub("", page.read_text())
    return [
        target
        for target in _LINK.findall(text)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:
    ]


def test_the_slug_is_githubs() -> None:
    assert slug("Many streams: `StreamSet`") == "many-streams-streamset"
    assert slug("vLLM's parser names") == "vllms-parser-names"
    assert slug("Models by name: `tokstream.config`") == "models-by-name-tokstreamconfig"


@pytest.mark.parametrize("page", [str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves(page: str) -> None:
    source = ROOT / page
    links = relative_links(source)
    assert links, page
    for link in links:
        path, _, anchor = link.partition("#")
        target = (source.parent / path).resolve() if path else source
        assert target.exists(), f"{page}: {link}"
        assert target.is_relative_to(ROOT), f"{page}: {link}"
        if anchor:
            assert target.suffix == ".md", f"{page}: {link}"
            assert anchor in anchors(target), f"{page}: {link}"


def test_the_readme_links_every_page() -> None:
    links = {link.partition("#")[0] for link in relative_links(README)}
    for page in sorted(DOCS.glob("*.md")):
        assert f"docs/{page.name}" in links, page.name
