"""A task's child process: its value comes back; past its timeout it is killed; a crash is reported."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from ge_core.sweep.isolate import run_isolated


def test_the_childs_value_comes_back_and_the_parent_is_untouched() -> None:
    seen: list[int] = []
    outcome = run_isolated(lambda: (seen.append(1), os.getpid())[1])
    assert outcome.returned and outcome.value != os.getpid()
    assert seen == []  # the child's side effects stay in the child


def test_a_child_past_its_timeout_is_killed_at_once() -> None:
    start = time.monotonic()
    outcome = run_isolated(lambda: time.sleep(30), timeout=0.3)
    assert outcome.timed_out and not outcome.returned
    assert time.monotonic() - start < 5


def test_a_child_that_dies_says_how() -> None:
    crashed = run_isolated(lambda: os.kill(os.getpid(), signal.SIGKILL))
    assert crashed.died == "signal SIGKILL" and not crashed.returned
    raised = run_isolated(lambda: 1 / 0)  # the task functions catch their errors; anything else is an exit
    assert raised.died == "exit code 1"


def test_a_large_value_crosses_the_pipe_whole() -> None:
    outcome = run_isolated(lambda: b"x" * (5 << 20), timeout=30)
    assert outcome.value == b"x" * (5 << 20)


def test_a_quick_task_beside_a_slow_one_comes_back_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two worker threads: the slow task's child is forked while the quick task's pipe is open (its
    make-pipe is held up until then). Without the fork lock that child inherits the quick task's write end,
    and the quick task waits for the slow child's end: a timeout."""
    real_pipe = os.pipe
    quick_thread = threading.current_thread()
    slow_started = threading.Event()
    slow: list[object] = []

    def slow_task() -> None:
        slow_started.set()
        slow.append(run_isolated(lambda: time.sleep(30), timeout=2.5))

    def pipe_then_let_the_slow_task_fork() -> tuple[int, int]:
        ends = real_pipe()
        if threading.current_thread() is quick_thread and not slow_started.is_set():
            threading.Thread(target=slow_task, daemon=True).start()
            time.sleep(0.5)  # the slow task forks now, unless the lock holds it back
        return ends

    monkeypatch.setattr(os, "pipe", pipe_then_let_the_slow_task_fork)
    start = time.monotonic()
    quick = run_isolated(lambda: 42, timeout=2.0)
    elapsed = time.monotonic() - start
    assert quick.returned and quick.value == 42, quick
    assert elapsed < 2.0
    deadline = time.monotonic() + 10
    while not slow and time.monotonic() < deadline:
        time.sleep(0.05)
    assert slow and getattr(slow[0], "timed_out", False)
