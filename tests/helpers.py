"""What the test modules share as plain names, for the places a fixture cannot reach (``parametrize``,
``skipif``, module constants, helper functions): the shared data directory and the ways to run the
command line. ``conftest.py`` hands the same things to tests as the fixtures ``data`` and ``cli``.
Test modules import from here (``from helpers import DATA, run_cli``), never from one another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from click.testing import Result

ROOT = Path(__file__).resolve().parents[1]
"""The repository root (the directory of ``pyproject.toml``)."""

DATA = ROOT.parent / "shared" / "data"
"""``../shared/data`` beside the repository, as an absolute path: tests find it from any working
directory. Modules that need it mark their tests ``skipif(not ... .exists(), reason="needs ../shared/data")``."""


def run_cli(*args, input: str | bytes | None = None) -> Result:
    """``irbandits ARGS`` in this process (fast; arguments ``str()``-ed, so paths may be passed as they
    are). A user mistake comes back as ``result.exception``, an :class:`IrbanditsError`."""
    from typer.testing import CliRunner

    from irbandits.cli import app  # imported on first use: conftest.py imports this module early

    return CliRunner().invoke(app, [str(a) for a in args], input=input)


def cli_output(*args, input: str | bytes | None = None) -> str:
    """The output of a command that must succeed."""
    r = run_cli(*args, input=input)
    assert r.exit_code == 0, r.output
    return r.output


def cli_error(*args, input: str | bytes | None = None) -> str:
    """The one-line message of a command that must fail on a user mistake."""
    from irbandits.errors import IrbanditsError

    r = run_cli(*args, input=input)
    assert isinstance(r.exception, IrbanditsError), (r.exit_code, r.output, r.exception)
    return str(r.exception)


def shell(*args, input: str | None = None, cwd=None, env=None) -> subprocess.CompletedProcess:
    """``irbandits ARGS`` in a new process (``python -m irbandits.cli``): exit codes, stderr and signals
    as users meet them. Arguments are ``str()``-ed; output is text."""
    return subprocess.run([sys.executable, "-m", "irbandits.cli", *map(str, args)], capture_output=True, text=True,
                          input=input, cwd=cwd, env=env)
