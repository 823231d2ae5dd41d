"""Suite-wide hooks: with ``IRBANDITS_TEST_STRICT=1`` (set by ``.ci/run``) a test that skips because
PostgreSQL, chromium, playwright, the service extra or Ray is missing fails instead, so CI never passes
by skipping the database and browser suites."""

from __future__ import annotations

import os

import pytest

MISSING = ("PostgreSQL", "chromium", "playwright", "fastapi", "Ray")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("IRBANDITS_TEST_STRICT") == "1":
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if any(word in reason for word in MISSING):
            report.outcome = "failed"
            report.longrepr = f"skipped under IRBANDITS_TEST_STRICT=1: {reason}"
