"""vLLM 0.33.0's parser names, as its registries list them, against ``parser_names.json``.

``tests/parsers/test_vllm_names.py`` checks that tokstream serves or refuses (saying why) each
name of ``parser_names.json``; this checks that the file holds exactly the names of the
installed vLLM wheel's registries (``vllm/tool_parsers/__init__.py`` and
``vllm/reasoning/__init__.py``, read as source: importing vLLM needs torch). Run with the
acceptance virtualenv's interpreter:

    target/vllm-acceptance/venv/bin/python acceptance/vllm/parser_names.py
"""

from __future__ import annotations

import ast
import json
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
REGISTRIES = {
    "tool": ("tool_parsers/__init__.py", "_TOOL_PARSERS_TO_REGISTER"),
    "reasoning": ("reasoning/__init__.py", "_REASONING_PARSERS_TO_REGISTER"),
}


def registered(kind: str) -> list[str]:
    """The keys of the wheel's registry of ``kind``, in its order."""
    path, name = REGISTRIES[kind]
    source = Path(sysconfig.get_paths()["purelib"]) / "vllm" / path
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Dict)
        ):
            return [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    raise SystemExit(f"parser_names: no {name} in {source}")


def main() -> int:
    recorded = json.loads((HERE / "parser_names.json").read_text(encoding="utf-8"))
    bad = 0
    for kind in REGISTRIES:
        got, want = registered(kind), recorded[kind]
        if got != want:
            bad += 1
            print(
                f"parser_names: {kind}: the wheel has {sorted(set(got) - set(want))} more and "
                f"{sorted(set(want) - set(got))} fewer (or another order)",
                file=sys.stderr,
            )
        else:
            print(f"parser_names: {kind}: {len(got)} names, as recorded")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
