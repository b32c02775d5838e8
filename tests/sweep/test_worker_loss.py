"""A worker process killed mid-sweep loses nothing: Dask reschedules its tasks, the file holds every row once;
a task that kills every worker it runs on becomes a failed row once Dask gives up on it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dask
import pytest
from distributed import Client, LocalCluster, Worker, WorkerPlugin

import ge_core.sweep.task as sweep_task
from ge_core.sweep import load_results, plan_tasks, sweep

MODELS = ["sample:mlp", "sample:conv_bn_relu", "sample:residual_block"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # One retry per task: a single kill is survived, a task that kills its worker twice is given up on.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                         memory_limit="1GiB") as local:
        yield local


class KillABusyWorker:
    """At the first row, SIGKILL a worker process that is running a task (the OOM killer's way)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.killed: list[int] = []

    def start(self, total: int, skipped: int, cluster: str) -> None:
        pass

    def row(self, row: Mapping[str, Any]) -> None:
        if self.killed:
            return
        busy = [address for address, keys in self.client.processing().items() if keys]
        if busy:
            pid = self.client.run(os.getpid, workers=busy[:1])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            self.killed.append(pid)


def test_a_worker_killed_mid_sweep_loses_nothing(cluster: LocalCluster, tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    with Client(cluster) as client:
        killer = KillABusyWorker(client)
        rows = sweep(MODELS, "O1,O3", ["ascend910"], scheduler=cluster.scheduler_address, out=out,
                     progress=killer)
    assert killer.killed, "no worker was busy at the first row: nothing was tested"
    keys = sorted(t.key for t in plan_tasks(MODELS, "O1,O3", ["ascend910"]))
    stored = load_results(out)
    assert sorted(stored["key"]) == keys and stored["key"].is_unique
    assert set(rows["status"]) == {"ok"}
    with pytest.raises(ProcessLookupError):  # the worker really is gone: its task was run again elsewhere
        os.kill(killer.killed[0], 0)
    assert os.getpid() not in {int(w) for w in rows["worker"].str.rpartition(":")[2]}  # run by worker processes


class KillTheWorkerOn(WorkerPlugin):
    """Planted in every worker process (the scheduler hands it to restarted ones too): running `model`'s
    task kills the worker process itself, as a task outside its child would."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.real = sweep_task.run_isolated

    def setup(self, worker: Worker) -> None:
        def run_isolated(fn: Any, timeout: float | None = None) -> Any:
            if fn.args[0].model.name == self.model:
                os.kill(os.getpid(), signal.SIGKILL)
            return self.real(fn, timeout)

        sweep_task.run_isolated = run_isolated  # type: ignore[assignment]

    def teardown(self, worker: Worker) -> None:
        sweep_task.run_isolated = self.real


def test_a_task_that_kills_every_worker_it_runs_on_is_a_failed_row(cluster: LocalCluster, tmp_path: Path) -> None:
    with Client(cluster) as client:
        client.register_plugin(KillTheWorkerOn("sample:mlp"), name="kill-the-worker")
        try:
            rows = sweep(MODELS, "O3", "ascend910", scheduler=cluster.scheduler_address,
                         out=tmp_path / "r.parquet").set_index("model")
        finally:
            client.unregister_worker_plugin("kill-the-worker")
    died = "every worker that ran it died"
    assert rows.loc["sample:mlp", "status"] == "failed" and died in rows.loc["sample:mlp", "error"]
    assert sorted(rows.index) == sorted(MODELS)  # every task has its row, once
    # A task that shared the dying worker counts the death too (Dask's rule): ok, or failed for the same reason.
    others = rows.drop(index="sample:mlp")
    assert all(status == "ok" or died in error for status, error in zip(others["status"], others["error"], strict=True))
