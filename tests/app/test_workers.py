"""Heavy work in worker processes (issue 41): a hostile job over its time or memory limit is stopped with a
clear message and the pool goes on serving; a job's bug comes back as its traceback; a job that waits is told
how many are ahead of it; through the app, a compile over its time limit says so and the next session's
compile runs."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import streamlit as st

from tests.app.apptest import open_page
from workbench_ui.heavy import worker_pool
from workbench_ui.workers import JobBug, JobLimits, JobStatus, JobStopped, Progress, WorkerPool


def square(x: int, *, progress: Progress) -> int:
    progress(1, 1, "squaring")
    return x * x


def sleep_forever(*, progress: Progress) -> None:
    time.sleep(3600)


def hoard_memory(*, progress: Progress) -> int:
    held = [np.ones(64 << 20, np.uint8) for _ in range(64)]  # 4 GiB, 64 MiB at a time
    return len(held)


def broken(*, progress: Progress) -> None:
    raise KeyError("a bug of ours")


def nap(seconds: float, *, progress: Progress) -> float:
    time.sleep(seconds)
    return seconds


@pytest.fixture(scope="module")
def pool() -> WorkerPool:
    return WorkerPool(1, JobLimits(seconds=8.0, memory=300 << 20))


def test_a_job_runs_in_a_worker_and_reports_its_progress(pool: WorkerPool) -> None:
    seen: list[JobStatus] = []
    assert pool.run(square, 7, waiting=seen.append) == 49
    assert JobStatus(0, True, 1, 1, "squaring") in seen


def test_hostile_jobs_are_stopped_at_their_limits_and_the_pool_goes_on(pool: WorkerPool) -> None:
    with pytest.raises(JobStopped, match=r"ran for more than 8 s.*was stopped; other sessions were not affected"):
        pool.run(sleep_forever, waiting=lambda status: None)
    with pytest.raises(JobStopped, match=r"over the 300\.0 MiB one job may use on this server, and was stopped"):
        pool.run(hoard_memory, waiting=lambda status: None)
    with pytest.raises(JobBug, match="KeyError: 'a bug of ours'"):
        pool.run(broken, waiting=lambda status: None)
    assert pool.run(square, 3, waiting=lambda status: None) == 9


def test_a_waiting_job_is_told_how_many_jobs_are_ahead_of_it(pool: WorkerPool) -> None:
    results: list[Any] = []
    first = threading.Thread(target=lambda: results.append(pool.run(nap, 3.0, waiting=lambda s: None)))
    first.start()
    while pool.queued == 0:
        time.sleep(0.05)
    seen: list[JobStatus] = []
    assert pool.run(square, 5, waiting=seen.append) == 25
    first.join()
    assert results == [3.0] and JobStatus(1, False) in seen


@pytest.fixture
def every_compile_in_a_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A server whose every compile is heavy work, with a time limit no compile can meet."""
    monkeypatch.setenv("GE_WORKBENCH_HEAVY_NODES", "0")
    monkeypatch.setenv("GE_WORKBENCH_JOB_SECONDS", "0.001")
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def test_a_compile_over_its_time_limit_says_so_and_the_next_session_compiles(
        every_compile_in_a_worker: None) -> None:
    hostile = open_page("app_pages/passes.py", "mlp")
    assert not hostile.exception
    text = " ".join(e.value for e in [*hostile.error, *hostile.markdown, *hostile.caption])
    assert "This job ran for more than 0" in text and "other sessions were not affected" in text
    pool = worker_pool()
    pool.limits = JobLimits(seconds=300.0, memory=pool.limits.memory)
    other = open_page("app_pages/passes.py", "conv_bn_relu")  # compiled in a worker, within the limits
    assert not other.exception and not other.error
    assert other.dataframe  # the pipeline table: the compile came back from its worker


def test_the_debug_pages_bisection_in_a_worker_gives_the_table_the_thread_gives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    st.cache_resource.clear()
    here = open_page("app_pages/debug.py", "conv_bn_relu")
    monkeypatch.setenv("GE_WORKBENCH_HEAVY_NODES", "0")
    st.cache_resource.clear()
    worker = open_page("app_pages/debug.py", "conv_bn_relu")
    st.cache_resource.clear()
    assert not here.exception and not worker.exception
    assert worker.dataframe[0].value.equals(here.dataframe[0].value)
