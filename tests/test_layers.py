"""The layers of ``docs/architecture.md`` hold: every import in the package, function-level ones included,
goes down a layer or stays in its own, and no two modules reach each other through imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "irbandits"
# the first part of a module's name below irbandits -> its layer (higher imports lower, never the reverse)
LAYERS = {
    0: {"errors", "rng", "params", "tasks", "io"},
    1: {"problems", "synthetic", "dueling", "simulate", "clicks", "judging", "pooling", "measures", "oltr",
        "plots", "data"},
    2: {"sweeps", "studies", "service", "client"},
    3: {"cli", "__main__"},
}
LAYER = {part: layer for layer, parts in LAYERS.items() for part in parts}


def module_name(path: Path, root: Path = SRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: set[str], root: Path = SRC) -> set[str]:
    """The ``modules`` that ``path`` imports anywhere in it: ``from pkg import mod`` is an import of
    ``pkg.mod`` when that is a module, else of ``pkg``; relative imports resolved."""
    name, found = module_name(path, root), set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
    return {m for m in found if m in modules and m != name}


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports."""
    root = package.parent
    paths = {module_name(p, root): p for p in package.rglob("*.py") if "migrations" not in p.parts}
    return {name: imports(path, set(paths), root) for name, path in paths.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYER.get(parts[1], -1) if len(parts) > 1 else 3   # the package's own __init__: the top


def upward(edges: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} (layer {layer(a)}) imports {b} (layer {layer(b)})"
                  for a, targets in edges.items() for b in targets if layer(b) > layer(a))


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
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
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    assert [m for m in graph() if layer(m) == -1] == []


def test_no_import_goes_up_a_layer():
    assert upward(graph()) == []


def test_no_two_modules_import_each_other_through_any_path():
    assert circles(graph()) == []


@pytest.mark.parametrize("planted, finds", [
    ("from irbandits.service import app\n", "upward"),          # the library reaching into the service
    ("def f():\n    from irbandits import cli\n", "upward"),    # function-level imports count
    ("from irbandits.dueling import rucb\n", "circle"),          # dueling.base <-> dueling.rucb
])
def test_the_checks_catch_a_planted_import(tmp_path, planted, finds):
    import shutil

    copy = tmp_path / "irbandits"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "migrations"))
    target = copy / "dueling" / "base.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n" + planted, encoding="utf-8")
    edges = graph(copy)
    assert (upward(edges) if finds == "upward" else circles(edges)), planted
