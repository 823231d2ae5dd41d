"""The command line's layout: one module per command group, shared helpers in ``cli/common.py``.

Only ``cli/__init__.py`` (and ``__main__``) import command modules; command modules import only
``common``; no import cycle. Imports are read from the source (ast), including those inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import irbandits.cli

CLI = Path(irbandits.cli.__file__).parent
PACKAGE = "irbandits.cli"


def cli_imports(folder: Path, package: str = PACKAGE) -> dict[str, set[str]]:
    """Per module of ``folder`` (by its short name, ``__init__`` included), the short names of the
    modules of the same package it imports."""
    names = {p.stem for p in folder.glob("*.py")}
    graph = {}
    for path in folder.glob("*.py"):
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from . import x / from .x import y
                    base = ".".join([package, *filter(None, [base])])
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for t in targets:
                if t == package:
                    found.add("__init__")
                elif t.startswith(package + ".") and t[len(package) + 1:].split(".")[0] in names:
                    found.add(t[len(package) + 1:].split(".")[0])
        graph[path.stem] = found - {path.stem}
    return graph


def layout_problems(graph: dict[str, set[str]]) -> list[str]:
    """Cycles, and command modules importing anything of the package but ``common``."""
    problems = []
    for name, targets in graph.items():
        if name not in ("__init__", "__main__", "common") and targets - {"common"}:
            problems.append(f"command module {name} imports {sorted(targets - {'common'})}")
        if name == "common" and targets:
            problems.append(f"common imports {sorted(targets)}")

    def visit(node: str, path: list[str]) -> None:
        for t in sorted(graph.get(node, ())):
            if t in path:
                problems.append("cycle " + " -> ".join(path[path.index(t):] + [t]))
            else:
                visit(t, path + [t])

    for start in graph:
        visit(start, [start])
    return sorted(set(problems))


def test_cli_package_has_no_cycle_and_commands_import_only_common():
    graph = cli_imports(CLI)
    assert {"__init__", "common", "simulate", "clicks", "evaluate", "judge", "pool", "reproduce", "sweep"} <= set(graph)
    assert graph["__init__"] >= {"simulate", "clicks", "evaluate", "judge", "pool", "reproduce", "sweep"}
    assert layout_problems(graph) == []


@pytest.mark.parametrize("files, problem", [
    ({"__init__.py": "from irbandits.cli import pool\n", "pool.py": "def f():\n    from irbandits.cli import app\n"},
     "cycle"),
    ({"__init__.py": "from irbandits.cli import pool, judge\n", "judge.py": "",
      "pool.py": "from irbandits.cli.judge import x\n"}, "command module pool imports ['judge']"),
    ({"__init__.py": "from . import pool\n", "common.py": "", "pool.py": "from .common import console\n",
      "x.py": "from . import pool\n"}, "command module x imports ['__init__', 'pool']"),
])
def test_the_checker_finds_cycles_and_cross_imports(tmp_path, files, problem):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    problems = layout_problems(cli_imports(tmp_path))
    assert any(p.startswith(problem) for p in problems), problems


def test_every_registered_study_is_a_reproduce_command():
    from irbandits.cli.reproduce import app
    from irbandits.studies import STUDIES

    assert [c.name for c in app.registered_commands] == list(STUDIES)
