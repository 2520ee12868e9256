"""The parser names table of ``docs/parsers.md`` says what the code does for each of vLLM
0.33.0's names: a refused name's cell gives the reason ``_core.parser_refusal`` gives, a served
one says how it is served, and a blank cell is a name vLLM does not register for that kind; the
counts above the table are the table's."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.stream_util import import_tokstream

ROOT = Path(__file__).resolve().parents[2]
NAMES = json.loads((ROOT / "acceptance" / "vllm" / "parser_names.json").read_text("utf-8"))
ROW = re.compile(r"^\| `([^`]+)` \| (.*?) \| (.*?) \|$")


def _table() -> dict[str, tuple[str, str]]:
    text = (ROOT / "docs" / "parsers.md").read_text("utf-8")
    return {m[1]: (m[2], m[3]) for m in map(ROW.match, text.splitlines()) if m}


def _plain(cell: str) -> str:
    return cell.replace("&lt;", "<").replace("\\|", "|").replace("`", "")


def test_every_vllm_name_is_a_row_saying_what_the_code_does() -> None:
    core = import_tokstream()._core
    table = _table()
    assert set(table) == set(NAMES["tool"]) | set(NAMES["reasoning"])
    counts: dict[str, dict[str, int]] = {"tool": {}, "reasoning": {}}
    for name, cells in table.items():
        for kind, cell in zip(("tool", "reasoning"), cells, strict=True):
            if name not in NAMES[kind]:
                assert cell == "", (name, kind)
                continue
            why = core.parser_refusal(kind, name)
            hand = core.TOOL_PARSERS if kind == "tool" else core.REASONING_PARSERS
            if why is not None:
                fmt = why.split(" is not served yet: ", 1)[1].split(" format has no ", 1)[0]
                assert _plain(cell) == _plain(f"refused: {fmt} format"), (name, kind)
                how = "refused"
            elif name in hand:
                assert cell == "hand-written", (name, kind)
                how = "hand-written"
            elif name in core.TEMPLATES:
                assert cell.startswith("built-in template"), (name, kind)
                how = "built-in template"
            else:
                served = re.match(r"served as `([^`]+)`", cell)
                accepted = core.TOOL_NAMES if kind == "tool" else core.REASONING_NAMES
                assert served and name in accepted and served[1] in accepted, (name, kind, cell)
                how = "served as"
            counts[kind][how] = counts[kind].get(how, 0) + 1
    text = (ROOT / "docs" / "parsers.md").read_text("utf-8")
    tool, reasoning = counts["tool"], counts["reasoning"]
    refused = tool.get("refused", 0)
    said = (
        f"{tool['hand-written']} is\nhand-written, {tool['built-in template']} are built-in "
        f"templates, {tool['served as']} are served as another name and {refused} "
        f"{'is' if refused == 1 else 'are'} refused; of\nthe reasoning names, "
        f"{reasoning['hand-written']}, {reasoning['built-in template']}, "
        f"{reasoning['served as']} and {reasoning.get('refused', 0)}."
    )
    assert said in text, said
