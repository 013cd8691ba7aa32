"""The layering of solver/ (ARCHITECTURE.md), read from the import graph of its source:

    lang -> engine -> prover | queries -> render -> docs -> lsp | web -> cli

A module imports only modules of its own layer or of the layers before it; prover and queries
are siblings and import neither each other, nor do lsp and web (the editor's language server and
the browser explorer, two front ends the cli starts); no import cycle between modules, not even through an
import inside a function; no import of another module's `_private` name; lang imports no solver
library (z3, scipy, highspy); no module over the size limit unless its docstring says why."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

SOLVER = ROOT / "solver"
RANK = {"lang": 0, "engine": 1, "prover": 2, "queries": 2, "render": 3, "docs": 4,
        "lsp": 5, "web": 5, "cli": 6}
SIBLINGS = {frozenset({"prover", "queries"}), frozenset({"lsp", "web"})}
LANG_FORBIDDEN = {"z3", "scipy", "highspy", "numpy"}
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    """Dotted name (``solver.engine.game``) -> path, for every module of solver/."""
    out = {}
    for p in sorted(SOLVER.rglob("*.py")):
        rel = p.relative_to(ROOT).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _resolve(name: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package(name, path).split(".")
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(name: str, path: Path):
    """Yield (imported module, the name taken from it or None, line, external top package)."""
    tree = ast.parse(path.read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            mod = _resolve(name, path, node)
            for a in node.names:
                sub = f"{mod}.{a.name}"
                if sub in MODULES:           # `from . import ir`: the module itself
                    yield sub, None, node.lineno
                else:
                    yield mod, a.name, node.lineno


def _layer(mod: str) -> str | None:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "solver" and parts[1] in RANK else None


def _graph() -> dict[str, set[str]]:
    return {name: {m for m, _, _ in _imports(name, path) if m in MODULES and m != name}
            for name, path in MODULES.items()}


def test_every_module_is_in_a_layer():
    stray = [n for n in MODULES if n.count(".") >= 1 and _layer(n) is None
             and n not in ("solver.__main__", "solver.grammar", "solver.spec")]
    assert not stray, stray


def test_no_upward_import():
    bad = []
    for name, path in MODULES.items():
        here = _layer(name)
        if here is None:
            continue
        for mod, _, line in _imports(name, path):
            there = _layer(mod)
            if there is None or there == here:
                continue
            if RANK[there] > RANK[here] or frozenset({here, there}) in SIBLINGS:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {here} imports {mod}")
    assert not bad, "\n" + "\n".join(bad)


def test_lang_imports_no_solver_library():
    bad = [f"{path.relative_to(ROOT)}:{line}: imports {mod}"
           for name, path in MODULES.items() if _layer(name) == "lang"
           for mod, _, line in _imports(name, path) if mod.split(".")[0] in LANG_FORBIDDEN]
    assert not bad, "\n" + "\n".join(bad)


def test_no_import_of_another_modules_private_name():
    bad = []
    for name, path in MODULES.items():
        for mod, taken, line in _imports(name, path):
            if mod.startswith("solver") and taken and taken.startswith("_") \
                    and not taken.startswith("__"):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {taken} from {mod}")
        # `module._name` on a module imported whole (`from . import linear; linear._X`)
        tree = ast.parse(path.read_text("utf-8"))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = _resolve(name, path, node)
                for a in node.names:
                    if f"{mod}.{a.name}" in MODULES:
                        aliases[a.asname or a.name] = f"{mod}.{a.name}"
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in MODULES and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr.startswith("_") \
                    and not node.attr.startswith("__"):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                           f"{node.value.id}.{node.attr}")
    assert not bad, "\n" + "\n".join(bad)


def test_no_import_cycle():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles = []

    def visit(v: str) -> None:          # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            # A package's __init__ importing its own modules is no cycle of behaviour.
            comp = [c for c in comp if MODULES[c].name != "__init__.py"]
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, "\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    path = MODULES[name]
    text = path.read_text("utf-8")
    lines = text.count("\n")
    if lines <= MAX_LINES:
        return
    doc = ast.get_docstring(ast.parse(text)) or ""
    assert "longer than" in doc or "is larger" in doc, \
        f"{path.relative_to(ROOT)}: {lines} lines and no word in its docstring on why"


def test_no_module_level_mutable_flag():
    """A mode switch is an object handed down, never a module global mutated at run time:
    no `global` statement, no module-level one-element list used as a box."""
    bad = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: global {node.names}")
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.List) \
                    and len(node.value.elts) == 1:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: "
                           f"{', '.join(ast.unparse(t) for t in targets)} = [...] (a box)")
    assert not bad, "\n" + "\n".join(bad)
