"""Two versions of ge_core's executor against ONNX Runtime: bench_executor.py run from two checkouts in turn.

    python bench/compare_versions.py BASE [HEAD] [--rounds 3] [--models squeezenet,resnet50] [--repeat 9]

BASE and HEAD are git revisions (HEAD defaults to the working tree as it is). Each is checked out into a
temporary git worktree (the working tree is used in place), and bench_executor.py runs from each in turn,
`--rounds` times, every run in a fresh process. It prints each run's O3 geomean and, per model, the median
O3 ratio over the rounds.

Why not one process: an in-process A/B of two variants (both kernels in one interpreter, alternating) was
wrong three times in issue 15's last round. The variant that ran right after another of ours started on
warm thread pools and caches; alternating the order and running ORT before each variant removed most of
that, not all (the rest is unexplained). Runs from two checkouts agreed with the benchmark each time. The
machine is shared and noisy: one round is not enough (the same code measured 1.75-1.96x over twelve runs),
so read the spread, not one pair.
numpy's BLAS runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from the environment, as bench/README.md's
benchmark command does.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| (\w+) \|.*\| ([0-9.]+)x \| [0-9.e+-]+ \|$")  # a model row: its O3 ratio, then the error
GEOMEAN = re.compile(r"^O3: geomean ratio ([0-9.]+)x")


def parse(report: str) -> tuple[float, dict[str, float]]:
    """The O3 geomean and each model's O3 ratio from bench_executor.py's output."""
    geomean = next((float(m.group(1)) for line in report.splitlines() if (m := GEOMEAN.match(line))), None)
    if geomean is None:
        raise ValueError(f"no O3 geomean in the benchmark's output:\n{report[-2000:]}")
    ratios = {m.group(1): float(m.group(2)) for line in report.splitlines() if (m := ROW.match(line))}
    return geomean, ratios


def bench(checkout: Path, models: str, repeat: int) -> tuple[float, dict[str, float]]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    command = [sys.executable, str(checkout / "bench" / "bench_executor.py"), "--repeat", str(repeat)]
    if models:
        command += ["--models", models]
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"bench_executor.py failed in {checkout} (exit {done.returncode}); its last output:\n"
                         f"{(done.stdout + done.stderr)[-2000:]}")
    return parse(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", help="git revision to compare against")
    parser.add_argument("head", nargs="?", default="", help="git revision (default: the working tree)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=9, help="bench_executor.py's --repeat")
    parser.add_argument("--models", default="", help="comma-separated (default: bench_executor.py's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ge_compare_") as scratch:
        checkouts = {}
        for label, revision in (("base", args.base), ("head", args.head)):
            if not revision:
                checkouts[label] = REPO
                continue
            path = Path(scratch) / label
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), revision],
                           check=True, capture_output=True)
            checkouts[label] = path
        try:
            runs: dict[str, list[tuple[float, dict[str, float]]]] = {label: [] for label in checkouts}
            for round_ in range(1, args.rounds + 1):
                for label, path in checkouts.items():
                    runs[label].append(bench(path, args.models, args.repeat))
                    print(f"round {round_} {label}: O3 geomean {runs[label][-1][0]:.2f}x", flush=True)
        finally:
            for path in checkouts.values():
                if path != REPO:
                    subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
                                   check=False, capture_output=True)
    print(f"\n| model | base ({args.base}) | head ({args.head or 'working tree'}) |\n|---|---:|---:|")
    models = [m for m in runs["base"][0][1] if m in runs["head"][0][1]]  # both versions' benchmark models
    for model in models:
        medians = [statistics.median(r[1][model] for r in runs[label]) for label in ("base", "head")]
        print(f"| {model} | {medians[0]:.2f}x | {medians[1]:.2f}x |")
    geomeans = [statistics.median(r[0] for r in runs[label]) for label in ("base", "head")]
    print(f"| geomean (median of {args.rounds}) | {geomeans[0]:.2f}x | {geomeans[1]:.2f}x |")


if __name__ == "__main__":
    main()
