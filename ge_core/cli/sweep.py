"""The `sweep` verb: many models x configurations x hardware profiles on Dask, one row per task.

    python -m ge_core sweep sample:mlp models/ --configs O1,O3 --hardware ascend910,ascend310 \\
        --workers 2 --out results.parquet                     # or --scheduler tcp://HOST:8786

Progress (done, by status, rate, ETA) is a tqdm bar on stderr; the local cluster's dashboard address is
printed first. Rerunning the same command resumes: tasks already in --out are skipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

from tqdm import tqdm


def add_sweep_verb(verbs: Any) -> None:
    sweep = verbs.add_parser("sweep", help="many models x configs x hardware on Dask: one results row per task")
    sweep.add_argument("models", nargs="+", metavar="MODEL",
                       help="an .onnx file, a folder of .onnx files, or sample:NAME")
    sweep.add_argument("--configs", required=True, metavar="C.json|O1,O3",
                       help="opt levels (O0,O1,O3), or a JSON file holding a list of CompileConfig objects, each "
                            "with an optional \"name\"")
    sweep.add_argument("--hardware", default="", metavar="ascend910,ascend310",
                       help="simulate on each of these profiles (default: each config's own, none: no simulation)")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N",
                       help="worker processes of the local Dask cluster (default: one per core)")
    where.add_argument("--scheduler", metavar="tcp://HOST:8786",
                       help="a running Dask cluster's scheduler instead (its workers must see the model files)")
    sweep.add_argument("--out", required=True, metavar="results.parquet|.csv",
                       help="the results file, written as rows arrive; tasks it holds already are skipped")
    sweep.add_argument("--timeout", type=float, metavar="S",
                       help="seconds one task may take; then it is killed (status timeout)")
    sweep.add_argument("--seed", type=int, default=0, metavar="N",
                       help="seed of the inputs the numbers are checked on (default 0)")
    sweep.add_argument("--debug", action="store_true", help="print tracebacks")
    sweep.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    # Imported here, not at the top: dask costs every other verb half a second of start-up.
    from ge_core.sweep import sweep

    progress = BarProgress()
    start = time.perf_counter()
    try:
        rows = sweep(args.models, args.configs, args.hardware, workers=args.workers, scheduler=args.scheduler,
                     out=args.out, timeout=args.timeout, seed=args.seed, progress=progress)
    finally:
        progress.close()
    counts = Counter(str(s) for s in rows["status"])
    print(f"{len(rows)} task(s): " + ", ".join(f"{counts[s]} {s}" for s in ("ok", "refused", "failed", "timeout"))
          + f"; ran {progress.total}, {progress.skipped} already in {args.out}; {time.perf_counter() - start:.1f} s")
    print(f"wrote {args.out}")
    return 0


class BarProgress:
    """A tqdm bar over the tasks to run, with the count of each status beside it."""

    def __init__(self) -> None:
        self.bar: tqdm[Any] | None = None
        self.total = 0
        self.skipped = 0
        self.counts: Counter[str] = Counter()

    def start(self, total: int, skipped: int, cluster: str) -> None:
        self.total, self.skipped = total, skipped
        print(f"sweep: {total} task(s) to run, {skipped} already done; {cluster}", file=sys.stderr)
        if total:
            self.bar = tqdm(total=total, unit="task", file=sys.stderr, dynamic_ncols=True)

    def row(self, row: Mapping[str, Any]) -> None:
        self.counts[str(row["status"])] += 1
        if self.bar is not None:
            self.bar.set_postfix({status: n for status, n in sorted(self.counts.items())}, refresh=False)
            self.bar.update(1)
            if self.bar.n >= self.total:  # close now: the rate and ETA leave out the cluster's shutdown
                self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
