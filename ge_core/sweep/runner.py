"""`ge_core.sweep(models, configs, hardware, workers, scheduler, out)`: every task on Dask distributed.

Dask does the distributing: a LocalCluster of worker processes by default, or the cluster at a scheduler
address (the same code); its scheduler reschedules the tasks of a worker that dies (up to
`distributed.scheduler.allowed-failures` times, then the task's row says so). We only submit one function
per task (ge_core.sweep.task.execute_task) and write each row as it arrives (ge_core.sweep.results).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

import pandas as pd
from distributed import Client, Future, KilledWorker, LocalCluster, as_completed

from ge_core.errors import GEError, UsageError, quote
from ge_core.sweep.plan import ModelSpec, Task, plan_tasks
from ge_core.sweep.results import ResultsStore, Row, empty_row
from ge_core.sweep.task import execute_task

CONNECT_TIMEOUT = "10s"


class SweepError(GEError):
    """The sweep itself could not go on (the scheduler unreachable or lost); the rows so far are kept. Exit 2:
    the cluster pointed at is at fault, not a model."""

    exit_code = 2


class Progress(Protocol):
    """What the CLI's progress bar is told: the tasks to run (and found done), then each row."""

    def start(self, total: int, skipped: int, cluster: str) -> None: ...

    def row(self, row: Mapping[str, Any]) -> None: ...


def sweep(models: Iterable[ModelSpec] | ModelSpec, configs: Any, hardware: Iterable[str] | str = (),
          workers: int | None = None, scheduler: str | None = None, out: str | os.PathLike[str] | None = None,
          *, timeout: float | None = None, seed: int = 0, progress: Progress | None = None) -> pd.DataFrame:
    """Run every (model, config, hardware) task and return their rows (ge_core.sweep.results.COLUMNS).

    models: "sample:NAME", .onnx paths or folders; configs: CompileConfigs, (name, config) pairs, a
    {name: config} mapping, opt levels ("O1,O3") or a JSON file (ge_core.sweep.plan); hardware: profile
    names (none: each config's own target). workers: size of the local cluster (default: one per core);
    scheduler: "tcp://HOST:8786" of a running Dask cluster instead (its workers must see the model files).
    out: a .parquet or .csv file written as rows arrive; tasks whose key it holds already are skipped.
    timeout: seconds one task may take before it is killed and recorded as "timeout"."""
    if workers is not None and scheduler is not None:
        raise UsageError("give workers or a scheduler address, not both.",
                         hint="workers starts a local cluster; a scheduler address uses a running one.")
    if workers is not None and workers < 1:
        raise UsageError(f"workers must be at least 1, not {workers}.")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"timeout must be a positive number of seconds, not {timeout:g}.")
    tasks = plan_tasks(models, configs, hardware, seed)
    store = ResultsStore(out)
    todo = [t for t in tasks if t.key not in store.keys]
    try:
        if not todo:
            if progress is not None:
                progress.start(0, len(tasks), "nothing to run")
        else:
            with connect(workers, scheduler) as (client, where):
                if progress is not None:
                    progress.start(len(todo), len(tasks) - len(todo), where)
                _run(client, todo, store, timeout, progress)
    finally:
        store.close()
    return store.frame([t.key for t in tasks])


def _run(client: Client, todo: list[Task], store: ResultsStore, timeout: float | None,
         progress: Progress | None) -> None:
    token = uuid.uuid4().hex[:8]  # keys unique to this sweep: a cluster may hold another's results
    futures = {client.submit(execute_task, task, timeout, key=f"ge_sweep-{token}-{i}", pure=False): task
               for i, task in enumerate(todo)}
    lost = 0
    for future in as_completed(futures):
        row = _row_of(future, futures[future])
        future.release()
        if row is None:
            lost += 1
            continue
        store.add(row)
        if progress is not None:
            progress.row(row)
    if lost:
        raise SweepError(f"{lost} task(s) were cancelled by the cluster before they reported (the scheduler was "
                         "lost or restarted).", hint="Run the same sweep again: it resumes with those tasks.")


def _row_of(future: Future, task: Task) -> Row | None:
    """The task's row; a task whose workers kept dying becomes a failed row; None if it was cancelled."""
    if future.status == "finished":
        row: Row = future.result()
        return row
    if future.status == "cancelled":
        return None
    exc = future.exception()
    row = empty_row(task)
    if isinstance(exc, KilledWorker):
        row["error"] = ("every worker that ran it died (Dask retried it on others, then gave up): the task may "
                        "take more memory than a worker has.")
    else:
        row["error"] = f"the worker could not run it: {type(exc).__name__}: {exc}. Do the workers have ge_core?"
    return row


@contextmanager
def connect(workers: int | None, scheduler: str | None) -> Iterator[tuple[Client, str]]:
    """A client of the cluster at `scheduler`, else of a LocalCluster of `workers` processes (one thread
    each: tasks are CPU-bound Python), and a line saying where it runs (with the dashboard's address)."""
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise SweepError(f"cannot reach the Dask scheduler {quote(scheduler)} ({exc}).",
                             hint="Start one with `dask scheduler` and workers with `dask worker ADDRESS`, or "
                                  "leave the scheduler out for a local cluster.") from None
        with client:
            yield client, f"Dask scheduler {scheduler} ({len(client.scheduler_info()['workers'])} workers)"
        return
    count = workers or os.cpu_count() or 1
    dashboard = importlib.util.find_spec("bokeh") is not None  # Dask's dashboard needs bokeh
    with LocalCluster(n_workers=count, threads_per_worker=1, processes=True, silence_logs=logging.ERROR,
                      dashboard_address=":0" if dashboard else None) as cluster, Client(cluster) as client:
        where = f"local Dask cluster, {count} worker(s)"
        yield client, where + (f", dashboard {client.dashboard_link}" if dashboard else ", no dashboard "
                               "(install bokeh for it)")
