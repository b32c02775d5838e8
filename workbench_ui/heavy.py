"""The server's worker pool (workbench_ui.workers) as the pages use it: heavy work runs there while the page
shows its place in the queue, then its progress (issue 41). Light work stays on the page's thread, so it never
queues behind heavy work.

Settings (environment): GE_WORKBENCH_WORKERS (jobs at once; default the machine's cores),
GE_WORKBENCH_JOB_SECONDS (time limit of one job), GE_WORKBENCH_JOB_MEMORY (bytes of memory one job may use;
default half the memory budget), GE_WORKBENCH_HEAVY_NODES and GE_WORKBENCH_WORKER_MAX_NODES (a compile or
bisection of a graph with at least the first and fewer than the second many nodes goes to a worker).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from ge_core import Graph
from workbench_ui.shared_cache import memory_budget
from workbench_ui.workers import JobLimits, JobStatus, WorkerPool

DEFAULT_JOB_SECONDS = 600.0
DEFAULT_HEAVY_NODES = 500  # densenet121 and BERT go to a worker; resnet50 (176 nodes) does not
DEFAULT_WORKER_MAX_NODES = 5000  # synthetic_10k does not either: see is_heavy
T = TypeVar("T")


@st.cache_resource(show_spinner=False)
def worker_pool() -> WorkerPool:
    """The pool of this server process, its forkserver started in the background on the first page."""
    memory = os.environ.get("GE_WORKBENCH_JOB_MEMORY")
    limits = JobLimits(seconds=float(os.environ.get("GE_WORKBENCH_JOB_SECONDS", DEFAULT_JOB_SECONDS)),
                       memory=int(float(memory)) if memory else memory_budget().capacity // 2)
    pool = WorkerPool(int(os.environ.get("GE_WORKBENCH_WORKERS", os.cpu_count() or 2)), limits)
    pool.warm()
    return pool


def is_heavy(graph: Graph) -> bool:
    """Whether compiling `graph` is heavy work a worker should do, by its size. Not past
    GE_WORKBENCH_WORKER_MAX_NODES: the result comes back pickled, and for synthetic_10k that cost about as much
    as the compile (measured at load 20: compile 38 s; pickle 11 s in the worker, unpickle 17 s here)."""
    nodes = len(graph.nodes)
    return (int(os.environ.get("GE_WORKBENCH_HEAVY_NODES", DEFAULT_HEAVY_NODES)) <= nodes
            < int(os.environ.get("GE_WORKBENCH_WORKER_MAX_NODES", DEFAULT_WORKER_MAX_NODES)))


def run_heavy(job: Callable[..., T], *args: Any, what: str) -> T:
    """`job(*args, progress=...)` in a worker, with a progress bar that first says how many jobs are ahead
    (JobStopped when it goes over its limits; JobBug for a bug of ours)."""
    bar = st.progress(0.0, text=f"{what}: waiting for a worker…")

    def show(status: JobStatus) -> None:
        if status.running:
            bar.progress(status.done / max(status.total, 1),
                         text=f"{what} (in a worker): step {status.done + 1} of {status.total}, {status.step}")
        else:
            jobs = "job" if status.ahead == 1 else "jobs"
            bar.progress(0.0, text=f"{what}: {status.ahead} {jobs} ahead of yours on this server…")

    try:
        return worker_pool().run(job, *args, waiting=show)
    finally:
        bar.empty()
