"""Sweep throughput: tasks per second on a local Dask cluster of 1 and 2 workers, and the scaling ratio.

    python bench/bench_sweep.py [--workers 1,2] [--configs O0,O1,O3] [--hardware ascend910,ascend310]
                                [--models sample:mlp,...] [--repeat 1] [--scheduler tcp://HOST:8786]

Default: the bundled samples (the built ones and the two broken ones, which are refused) x the three opt
levels x two hardware profiles. Each worker count gets a LocalCluster of its own; its workers import
ge_core before the clock starts (start-up is printed apart), so the rate is the sweep's own. With
--scheduler the same sweep runs on that cluster instead (its workers, as they are). Wall times on a shared
machine are noisy: run it more than once (--repeat keeps the best).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from distributed import Client, LocalCluster

from ge_core.samples import list_samples
from ge_core.sweep import plan_tasks, sweep


def default_models() -> list[str]:
    return [f"sample:{s.name}" for s in list_samples() if s.kind in ("sample", "broken")]


def timed_sweep(models: list[str], configs: str, hardware: str, scheduler: str, repeat: int) -> tuple[float, Counter]:
    """The best wall time of `repeat` sweeps on the cluster at `scheduler`, and the statuses of the last."""
    best = float("inf")
    statuses: Counter[str] = Counter()
    for _ in range(repeat):
        start = time.perf_counter()
        rows = sweep(models, configs, hardware, scheduler=scheduler)
        best = min(best, time.perf_counter() - start)
        statuses = Counter(str(s) for s in rows["status"])
    return best, statuses


def on_local_cluster(workers: int, models: list[str], configs: str, hardware: str, repeat: int) -> float:
    start = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        client.run(importlib.import_module, "ge_core.sweep.task")  # the workers' imports, before the clock
        started = time.perf_counter() - start
        seconds, statuses = timed_sweep(models, configs, hardware, cluster.scheduler_address, repeat)
    tasks = sum(statuses.values())
    print(f"{workers:>7} {tasks:>6} {started:>10.1f} {seconds:>8.2f} {tasks / seconds:>8.2f}   "
          + ", ".join(f"{n} {s}" for s, n in sorted(statuses.items())))
    return tasks / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="1,2", help="worker counts to compare (default 1,2)")
    parser.add_argument("--models", default="", help="comma-separated MODELs (default: the bundled samples)")
    parser.add_argument("--configs", default="O0,O1,O3")
    parser.add_argument("--hardware", default="ascend910,ascend310")
    parser.add_argument("--repeat", type=int, default=1, help="sweeps per worker count; the best is kept")
    parser.add_argument("--scheduler", help="time the sweep on this running cluster instead")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m] or default_models()
    tasks = len(plan_tasks(models, args.configs, args.hardware))
    print(f"{len(models)} models x {args.configs} x {args.hardware}: {tasks} tasks")
    if args.scheduler:
        seconds, statuses = timed_sweep(models, args.configs, args.hardware, args.scheduler, args.repeat)
        print(f"{args.scheduler}: {tasks} tasks in {seconds:.2f} s, {tasks / seconds:.2f} tasks/s ({dict(statuses)})")
        return 0
    print(f"{'workers':>7} {'tasks':>6} {'start s':>10} {'sweep s':>8} {'tasks/s':>8}   statuses")
    rates = {n: on_local_cluster(n, models, args.configs, args.hardware, args.repeat)
             for n in (int(w) for w in args.workers.split(","))}
    counts = sorted(rates)
    if len(counts) > 1:
        print(f"scaling {counts[-1]} vs {counts[0]} worker(s): {rates[counts[-1]] / rates[counts[0]]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
