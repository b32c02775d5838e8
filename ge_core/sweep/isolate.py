"""Run one function in a forked child: a hard timeout, and a crash that takes the child, not the worker.

Dask cannot stop a task that is running (a thread cannot be killed), so a task that hangs would hold its
worker for good, and one that segfaults or is killed for its memory would take the worker down with every
task queued on it. A forked child shares the worker's imported modules (no start-up cost), is killed when
its time is up, and its death is reported, not inherited. Where there is no fork the function runs inline
and no timeout is enforced.

Forks are serialised: a worker runs several tasks on threads, and a child forked by one thread while
another thread's pipe was still open at both ends would inherit that pipe's write end. The other task's
parent then waits for an end of file that comes only when this child exits: a quick task reported as a
timeout beside a slow one (seen in 2 of 6 first sweeps of a process). Inside the lock a thread makes its
pipe, forks and closes its copy of the write end, so no child holds another task's write end.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_PR_SET_PDEATHSIG = 1  # Linux prctl: signal the child when its parent dies
_FORK_LOCK = threading.Lock()  # one pipe-and-fork at a time (see the module's docstring)


@dataclass(frozen=True)
class Outcome:
    """What became of the child: its return value, or that it timed out, or how it died."""

    value: Any = None
    timed_out: bool = False
    died: str = ""  # "signal SIGSEGV", "exit code 1": the child ended without returning a value

    @property
    def returned(self) -> bool:
        return not self.timed_out and not self.died


def run_isolated(fn: Callable[[], Any], timeout: float | None = None) -> Outcome:
    """fn() in a forked child, its (picklable) value sent back through a pipe; killed after `timeout` s."""
    if not hasattr(os, "fork"):
        return Outcome(value=fn())
    parent = os.getpid()
    with _FORK_LOCK:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _child(fn, write_end, parent)  # never returns; the child's copy of the lock is never taken again
        os.close(write_end)
    try:
        data, timed_out = _read_all(read_end, None if timeout is None else time.monotonic() + timeout)
    finally:
        os.close(read_end)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return Outcome(timed_out=True)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and data:
        return Outcome(value=pickle.loads(data))
    return Outcome(died=_how_it_ended(status))


def _child(fn: Callable[[], Any], pipe: int, parent: int) -> None:
    """Compute, send, and leave with os._exit: the worker's own clean-up (sockets, atexit) is not ours."""
    code = 1
    try:
        _die_with_parent(parent)
        payload = pickle.dumps(fn())
        with os.fdopen(pipe, "wb") as out:
            out.write(payload)
        code = 0
    finally:
        os._exit(code)


def _die_with_parent(parent: int) -> None:
    """A worker killed mid-task must not leave its child computing on (Linux only; elsewhere it finishes
    and finds its pipe closed)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _read_all(fd: int, deadline: float | None) -> tuple[bytes, bool]:
    """Everything the child writes until it closes the pipe; (data so far, True) once the deadline passes."""
    chunks: list[bytes] = []
    while True:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and wait <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            continue  # the deadline check above ends the wait
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


def _how_it_ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"signal {signal.Signals(number).name}"
        except ValueError:
            return f"signal {number}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"
