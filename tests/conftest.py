"""Suite-wide fixtures and hooks.

Fixtures: ``data``, the absolute path of ``../shared/data`` (found from this file, so tests pass from
any working directory), and ``cli``, which runs ``irbandits ARGS`` in this process. Both wrap the plain
names of ``helpers.py`` (``DATA``, ``run_cli``), which modules import where a fixture cannot reach
(``parametrize``, ``skipif``, module constants).

Hook: with ``IRBANDITS_TEST_STRICT=1`` (set by ``.ci/run``) a test that skips because PostgreSQL,
chromium, playwright, the service extra or Ray is missing fails instead, so CI never passes by skipping
the database and browser suites."""

from __future__ import annotations

import os

import pytest

pytest.register_assert_rewrite("helpers")

from helpers import DATA, run_cli  # noqa: E402

MISSING = ("PostgreSQL", "chromium", "playwright", "fastapi", "Ray")


@pytest.fixture
def data():
    """The absolute path of ``../shared/data`` (it may be missing: see ``helpers.DATA``)."""
    return DATA


@pytest.fixture
def cli():
    """``cli(*args, input=None)``: ``irbandits ARGS`` in this process (:func:`helpers.run_cli`); returns the
    click ``Result``, a user mistake as ``result.exception``."""
    return run_cli


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("IRBANDITS_TEST_STRICT") == "1":
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if any(word in reason for word in MISSING):
            report.outcome = "failed"
            report.longrepr = f"skipped under IRBANDITS_TEST_STRICT=1: {reason}"
