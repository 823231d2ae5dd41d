"""The task runner: outcomes by index, step reports, backend mistakes."""

from __future__ import annotations

import socket

import pytest

from irbandits.errors import IrbanditsError
from irbandits.tasks import Done, Failed, check_backend, report, run_tasks


def _maybe_fail(context, task):
    if task == 2:
        raise ValueError("two is bad")
    return context * task


@pytest.mark.parametrize("workers", [1, 2])
def test_run_tasks_reports_every_outcome_by_index(workers):
    outcomes = sorted(run_tasks(_maybe_fail, [1, 2, 3], context=10, workers=workers, progress=False),
                      key=lambda o: o.index)
    assert [type(o) for o in outcomes] == [Done, Failed, Done]
    assert outcomes[0].value == 10 and outcomes[2].value == 30
    assert outcomes[1].error == "ValueError: two is bad"


def test_backend_mistakes_are_caught_before_any_work(tmp_path):
    with pytest.raises(IrbanditsError, match="--backend must be local or ray, got 'dask'"):
        check_backend("dask", 1, None)
    with pytest.raises(IrbanditsError, match="--address names a Ray cluster; it needs --backend ray"):
        check_backend("local", 1, "127.0.0.1:6379")
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'irbandits[distributed]')")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(IrbanditsError, match=f"--address 127.0.0.1:{port}: no Ray head answers there"):
        check_backend("ray", 1, f"127.0.0.1:{port}")
    with pytest.raises(IrbanditsError, match="--address head: expected HOST:PORT"):
        check_backend("ray", 1, "head")


def _count_to(context, task):
    for _ in range(task):
        report(context)
    return task


@pytest.mark.parametrize("workers", [1, 2])
def test_steps_a_task_reports_reach_on_progress_with_its_index(workers):
    seen = []
    outcomes = list(run_tasks(_count_to, [3, 1, 2], context=5, workers=workers, progress=False,
                              on_progress=lambda i, steps: seen.append((i, steps))))
    assert sorted(o.value for o in outcomes) == [1, 2, 3]
    expected = [(0, 5)] * 3 + [(1, 5)] + [(2, 5)] * 2
    if workers == 1:  # in this process, each step report before its task's outcome
        assert seen == expected
    else:  # from the workers, some may come after the last outcome
        assert set(seen) <= set(expected) and len(seen) <= len(expected)
