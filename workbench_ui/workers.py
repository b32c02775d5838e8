"""Heavy work in worker processes, one job at a time per slot, each with a time and a memory limit (issue 41).

    pool = WorkerPool(slots=2, limits=JobLimits(seconds=600, memory=1 << 30))
    result = pool.run(compile_job, graph, config, waiting=show)   # show(JobStatus) while it waits and runs

A job runs in a process of its own, forked from a forkserver that imported ge_core once (a warm start: the
first import costs seconds, a fork milliseconds; numba's kernels load from its on-disk cache, which
`python -m ge_core warmup` fills). The calling thread (a page's script) waits without holding the GIL, so the
other sessions' light work goes on; jobs wait in one queue, first come first served, and a waiting page is told
how many jobs are ahead of its own. A job over its time or memory (RSS) limit is killed and JobStopped says so
in plain words; so is a worker that died (the server itself is never harmed). Nothing here imports Streamlit.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import psutil

from ge_core.errors import ResourceLimitError
from ge_core.viz import format_bytes

PRELOAD = ["ge_core", "ge_core.debugging", "workbench_ui.jobs"]  # imported once, in the forkserver
POLL_SECONDS = 0.2
START_SECONDS = 120.0  # allowed for a worker to start (the forkserver's first start imports ge_core)
Progress = Callable[[int, int, str], None]


class JobStopped(ResourceLimitError):
    """A job went over its time or memory limit (or its worker died): it was stopped, nothing else was."""


class JobBug(RuntimeError):
    """A job raised an exception it does not handle itself: a bug of ours; the worker's traceback is the text."""


@dataclass(frozen=True)
class JobLimits:
    seconds: float
    memory: int  # bytes of resident memory


@dataclass(frozen=True)
class JobStatus:
    """What a waiting page shows: jobs ahead of its own, or its job's progress."""

    ahead: int
    running: bool
    done: int = 0
    total: int = 0
    step: str = ""


def _context() -> Any:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def _serve(conn: Connection, job: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """The worker: run the job, sending its progress, then its result (or the traceback of a bug)."""
    def progress(done: int, total: int, step: str) -> None:
        conn.send(("progress", done, total, step))

    conn.send(("started",))  # the job's clock starts now: not while the forkserver starts or forks
    try:
        result = job(*args, progress=progress)
    except BaseException:  # a bug: its text goes back, the worker ends
        conn.send(("bug", traceback.format_exc()))
    else:
        conn.send(("done", result))
    finally:
        conn.close()


class WorkerPool:
    """`slots` jobs at once, each in a fresh forked worker; the rest wait in one queue."""

    def __init__(self, slots: int, limits: JobLimits) -> None:
        self.slots = slots
        self.limits = limits
        self._context = _context()
        self._queue: list[object] = []  # tickets of waiting and running jobs, in arrival order
        self._changed = threading.Condition()

    def warm(self) -> None:
        """Start the forkserver now, not on the first job: it returns at once, the forkserver importing
        PRELOAD meanwhile."""
        multiprocessing.forkserver.ensure_running()

    @property
    def queued(self) -> int:
        with self._changed:
            return len(self._queue)

    def run(self, job: Callable[..., Any], *args: Any, waiting: Callable[[JobStatus], None]) -> Any:
        """`job(*args, progress=...)` in a worker, its result returned; JobStopped over a limit."""
        ticket = object()
        with self._changed:
            self._queue.append(ticket)
        try:
            self._wait_for_slot(ticket, waiting)
            return self._run_in_worker(job, args, waiting)
        finally:
            with self._changed:
                self._queue.remove(ticket)
                self._changed.notify_all()

    def _wait_for_slot(self, ticket: object, waiting: Callable[[JobStatus], None]) -> None:
        while True:
            with self._changed:
                ahead = self._queue.index(ticket)
                if ahead < self.slots:
                    return
                self._changed.wait(POLL_SECONDS * 5)
            waiting(JobStatus(ahead - self.slots + 1, False))

    def _run_in_worker(self, job: Callable[..., Any], args: tuple[Any, ...],
                       waiting: Callable[[JobStatus], None]) -> Any:
        receiver, sender = self._context.Pipe(duplex=False)
        worker = self._context.Process(target=_serve, args=(sender, job, args), daemon=True)
        started = time.monotonic() + START_SECONDS  # until the worker says it started
        worker.start()
        sender.close()
        try:
            while True:
                if receiver.poll(POLL_SECONDS):
                    message = receiver.recv()
                    if message[0] == "done":
                        return message[1]
                    if message[0] == "bug":
                        raise JobBug(message[1])
                    if message[0] == "started":
                        started = time.monotonic()
                    else:
                        waiting(JobStatus(0, True, *message[1:]))
                self._check_limits(worker, started)  # after a message too: a chatty job is checked as well
        except EOFError:  # the worker ended without a word: killed by the system, or crashed
            raise JobStopped(f"The worker process running this job ended unexpectedly (exit code "
                             f"{worker.exitcode}); the job was stopped.",
                             hint="Try again; if it happens again, the model may need more memory than "
                                  "this server gives one job.") from None
        finally:
            if worker.is_alive():
                worker.kill()
            worker.join(5)
            receiver.close()

    def _check_limits(self, worker: Any, started: float) -> None:
        seconds = time.monotonic() - started
        if seconds > self.limits.seconds:
            worker.kill()
            raise JobStopped(f"This job ran for more than {self.limits.seconds:g} s, the time one job may take "
                             "on this server, and was stopped; other sessions were not affected.",
                             hint="Switch passes off, use a smaller model, or run the workbench yourself "
                                  "(GE_WORKBENCH_JOB_SECONDS sets the limit).")
        try:
            rss = psutil.Process(worker.pid).memory_info().rss
        except psutil.Error:
            return  # it just ended: the next poll reads its result or its end
        if rss > self.limits.memory:
            worker.kill()
            raise JobStopped(f"This job used {format_bytes(rss)} of memory, over the "
                             f"{format_bytes(self.limits.memory)} one job may use on this server, and was "
                             "stopped; other sessions were not affected.",
                             hint="Use a smaller model or input shapes, or run the workbench yourself "
                                  "(GE_WORKBENCH_JOB_MEMORY sets the limit in bytes).")
