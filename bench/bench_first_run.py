"""A new user's first run against the second: `python -m ge_core run MODEL` twice in a fresh environment,
after the README's install step (`python -m ge_core warmup`), and once more in a fresh environment without it.

    python bench/bench_first_run.py [--model sample:resnet50] [--repeat 3]

A fresh environment here is what a fresh install has not made yet: an empty numba cache (NUMBA_CACHE_DIR), no
byte-compiled Python (PYTHONPYCACHEPREFIX: every module is compiled to bytecode on its first import, as after
an editable install) and an empty compile cache (GE_CACHE_DIR). Each command is a new process, timed from
start to exit (interpreter start, imports, the model, the compile, the run). The target (issue 37): the first
run no more than 1.5x the second, after the install's warmup.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from bench.timing import cpu_model

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.5


def _timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ge_core", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"`python -m ge_core {' '.join(args)}` failed:\n{done.stderr[-2000:]}")
    return seconds


def _fresh_env(root: Path) -> dict[str, str]:
    return {**os.environ, "NUMBA_CACHE_DIR": str(root / "numba"), "PYTHONPYCACHEPREFIX": str(root / "pyc"),
            "GE_CACHE_DIR": str(root / "compile_cache"), "PYTHONPATH": str(REPO)}


def one_round(model: str) -> tuple[float, float, float, float]:
    """warmup s, first run s, second run s (after warmup), first run s without warmup."""
    with tempfile.TemporaryDirectory() as installed, tempfile.TemporaryDirectory() as bare:
        env = _fresh_env(Path(installed))
        warmup = _timed(["warmup"], env)
        first = _timed(["run", model], env)
        second = _timed(["run", model], env)
        unwarmed = _timed(["run", model], _fresh_env(Path(bare)))
    return warmup, first, second, unwarmed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="sample:resnet50")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{args.model}; CPU {cpu_model()}; load average {os.getloadavg()[0]:.1f}; median of {args.repeat} rounds, "
          f"each in fresh caches")
    rounds = [one_round(args.model) for _ in range(args.repeat)]
    warmup, first, second, unwarmed = (statistics.median(column) for column in zip(*rounds, strict=True))
    print("| install's warmup | first run | second run | first / second | first run without the warmup |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {warmup:.1f} s | {first:.1f} s | {second:.1f} s | {first / second:.2f}x (target <= {TARGET}x) | "
          f"{unwarmed:.1f} s ({unwarmed / second:.2f}x the second) |")
    print("rounds (warmup, first, second, unwarmed): " + "; ".join(", ".join(f"{v:.1f}" for v in r) for r in rounds))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
