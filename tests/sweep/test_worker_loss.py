"""A worker process killed mid-sweep loses nothing: Dask reschedules its tasks, the file holds every row once."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from distributed import Client, LocalCluster

from ge_core.sweep import load_results, plan_tasks, sweep

MODELS = ["sample:mlp", "sample:conv_bn_relu", "sample:residual_block"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
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
