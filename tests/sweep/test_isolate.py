"""A task's child process: its value comes back; past its timeout it is killed; a crash is reported."""

from __future__ import annotations

import os
import signal
import time

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
