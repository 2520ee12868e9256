"""The crate's modules only look down: no file of ``rust/src`` uses, through other files, one
that uses it (docs/architecture.md, "Layers"). A use is a ``crate::``, ``super::`` or ``self::``
path outside comments and test modules, resolved to the file of its longest module prefix; a
child's use of its own ancestors (the module that declares it) is not counted."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "rust" / "src"

Module = tuple[str, ...]


def _modules(src: Path) -> dict[Module, Path]:
    out: dict[Module, Path] = {}
    for path in src.rglob("*.rs"):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] in ("mod", "lib"):
            parts = parts[:-1]
        out[parts] = path
    return out


def _uses(src: Path) -> dict[Module, set[Module]]:
    modules = _modules(src)

    def resolve(path: list[str]) -> Module | None:
        for n in range(len(path), 0, -1):
            if tuple(path[:n]) in modules:
                return tuple(path[:n])
        return None

    uses: dict[Module, set[Module]] = {m: set() for m in modules}
    for module, path in modules.items():
        text = path.read_text()
        text = re.split(r"#\[cfg\(test\)\]", text)[0]
        text = re.sub(r"//[^\n]*", "", text)
        for m in re.finditer(r"\b(crate|super|self)((?:::\w+)+)", text):
            rest = m.group(2).split("::")[1:]
            base = {"crate": [], "super": list(module[:-1]), "self": list(module)}[m.group(1)]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
            target = resolve(base + rest)
            if target is not None and module[: len(target)] != target:
                uses[module].add(target)
    return uses


def _circles(uses: dict[Module, set[Module]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[Module, int] = {}
    low: dict[Module, int] = {}
    stack: list[Module] = []
    on: set[Module] = set()
    found: list[list[str]] = []

    def visit(v: Module) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(uses[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append("/".join(w))
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(uses):
        if v not in index:
            visit(v)
    return found


def test_the_crate_has_no_import_circles() -> None:
    uses = _uses(SRC)
    assert len(uses) > 50
    assert sum(map(len, uses.values())) > 100
    assert _circles(uses) == []


def test_a_circle_between_two_files_is_found(tmp_path: Path) -> None:
    (tmp_path / "wire").mkdir()
    (tmp_path / "lib.rs").write_text("mod wire;\n")
    (tmp_path / "wire" / "mod.rs").write_text("mod a;\nmod b;\n")
    (tmp_path / "wire" / "a.rs").write_text("use super::b::Thing;\n// crate::nothing\n")
    (tmp_path / "wire" / "b.rs").write_text("pub struct Thing;\nfn f() { crate::wire::a::g() }\n")
    assert _circles(_uses(tmp_path)) == [["wire/a", "wire/b"]]
    # A use of the declaring module is not a circle.
    (tmp_path / "wire" / "b.rs").write_text("use super::*;\n")
    assert _circles(_uses(tmp_path)) == []
