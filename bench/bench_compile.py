"""Compile scaling: ge_core's whole O3 compile vs ONNX Runtime's session creation, on synthetic models.

    python bench/bench_compile.py [--sizes 1000,5000,10000] [--repeat 3] [--profile]

The speed target (the issue): on the 10k-node model the whole O3 compile (load -> passes -> plan, the
report's compile_seconds) takes at most 3x ONNX Runtime's session creation with ORT_ENABLE_EXTENDED on
the same file, and 10k costs at most 2.5x what 5k costs. Both are timed in one process, alternating,
median of --repeat runs after a warm-up, so the ratios hold on a noisy machine; absolute times do not.
Models come from bench/synthetic.py (seeded), written to a temporary folder and read from the path.
A per-pass breakdown of the largest model follows, so a slow pass stands out; --profile adds cProfile's
hottest functions for one compile of it.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from bench.synthetic import write_synthetic
from ge_core.compiler import CompiledModel, gc_paused

TARGET_VS_ORT = 3.0  # 10k: O3 compile <= 3x ORT session creation
TARGET_SCALING = 2.5  # 10k costs <= 2.5x 5k
T = TypeVar("T")


def timed(fn: Callable[..., T], *args: object) -> tuple[float, T]:
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def ort_session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def ge_compile(path: Path) -> CompiledModel:
    return ge_core.compile(str(path), opt_level="O3")


def bench_sizes(paths: dict[int, Path], repeat: int, threads: int) -> tuple[list[tuple[int, float, float]],
                                                                          CompiledModel]:
    """Per size, median seconds of (ge_core O3 compile, ORT session creation); and the largest model's fastest
    compile (the least disturbed, for the breakdown). Each round times every size, ge_core then ORT, so a
    burst of load on the machine hits all sizes alike."""
    for path in paths.values():  # warm-up: imports, registries, ORT's lazy init, the file cache
        ge_compile(path)
        ort_session(path, threads)
    ours: dict[int, list[float]] = {n: [] for n in paths}
    theirs: dict[int, list[float]] = {n: [] for n in paths}
    fastest: CompiledModel | None = None
    for _ in range(repeat):
        for n, path in paths.items():
            seconds, compiled = timed(ge_compile, path)
            if n == max(paths) and (fastest is None or seconds < min(ours[n])):
                fastest = compiled
            ours[n].append(seconds)
            theirs[n].append(timed(ort_session, path, threads)[0])
            del compiled
    rows = [(n, statistics.median(ours[n]), statistics.median(theirs[n])) for n in paths]
    assert fastest is not None
    return rows, fastest


def scaling_table(rows: list[tuple[int, float, float]]) -> list[str]:
    lines = ["| nodes | ge_core O3 s | ORT session s | ratio | ge_core vs previous size | ORT vs previous size |",
             "|---:|---:|---:|---:|---:|---:|"]
    previous: tuple[int, float, float] | None = None
    for nodes, ours, theirs in rows:
        ge_scale = ort_scale = "-"
        if previous is not None:
            factor = nodes / previous[0]
            ge_scale = f"{ours / previous[1]:.2f}x for {factor:g}x nodes"
            ort_scale = f"{theirs / previous[2]:.2f}x"
        lines.append(f"| {nodes} | {ours:.3f} | {theirs:.3f} | {ours / theirs:.2f}x | {ge_scale} | {ort_scale} |")
        previous = (nodes, ours, theirs)
    return lines


def pass_table(compiled: CompiledModel, load_seconds: float) -> list[str]:
    """Where the compile time of one model goes: load, each pass, and the rest (graph copies, plan)."""
    total = compiled.compile_seconds
    lines = ["| step | stage | nodes | seconds | share |", "|---|---|---:|---:|---:|"]
    lines.append(f"| load_onnx (parse, import, infer) | - | {len(compiled.input_graph)} | {load_seconds:.3f} | "
                 f"{load_seconds / total:.0%} |")
    for r in compiled.records:
        lines.append(f"| {r.index}. {r.name} | {r.stage} | {r.nodes_before}->{r.nodes_after} | {r.seconds:.3f} | "
                     f"{r.seconds / total:.0%} |")
    rest = total - load_seconds - sum(r.seconds for r in compiled.records)
    lines.append(f"| rest (graph copies for snapshots, plan, GC on exit) | - | - | {rest:.3f} | {rest / total:.0%} |")
    lines.append(f"| **total compile_seconds** | | {len(compiled.input_graph)}->{len(compiled.graph)} | "
                 f"**{total:.3f}** | 100% |")
    return lines


def verdicts(rows: list[tuple[int, float, float]]) -> list[str]:
    by_size = {n: (ours, theirs) for n, ours, theirs in rows}
    lines = []
    if 10000 in by_size:
        ours, theirs = by_size[10000]
        ok = ours <= TARGET_VS_ORT * theirs
        lines.append(f"- 10k O3 compile / ORT session = {ours / theirs:.2f}x (target <= {TARGET_VS_ORT:g}x): "
                     f"{'PASS' if ok else 'FAIL'}")
    if 10000 in by_size and 5000 in by_size:
        scale = by_size[10000][0] / by_size[5000][0]
        lines.append(f"- 10k / 5k O3 compile = {scale:.2f}x (target <= {TARGET_SCALING:g}x): "
                     f"{'PASS' if scale <= TARGET_SCALING else 'FAIL'}")
    return lines


def profile(path: Path, top: int) -> str:
    profiler = cProfile.Profile()
    profiler.runcall(ge_compile, path)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def median_load(path: Path, repeat: int) -> float:
    """load_onnx as compile runs it (garbage collector paused), so the breakdown adds up."""
    def load() -> object:
        with gc_paused():
            return ge_core.load_onnx(str(path))

    return statistics.median(timed(load)[0] for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,5000,10000", help="node counts, comma separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="ORT intra-op threads (ge_core is single-threaded)")
    parser.add_argument("--profile", action="store_true", help="cProfile one compile of the largest model")
    args = parser.parse_args()
    ge_core.tune_process()  # the settings the CLI and the app run with (runtime/process.py)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}; median of {args.repeat} runs, alternating; "
          f"ORT_ENABLE_EXTENDED, {args.threads} thread(s)\n")
    with tempfile.TemporaryDirectory() as folder:
        paths = {n: write_synthetic(Path(folder) / f"synthetic_{n}.onnx", n, args.seed) for n in sizes}
        rows, compiled = bench_sizes(paths, args.repeat, args.threads)
        print("\n".join(scaling_table(rows)))
        print("\n" + "\n".join(verdicts(rows)))
        largest = max(sizes)
        print(f"\nPer pass, {largest}-node model (its fastest compile above; load_onnx timed apart, median):\n")
        print("\n".join(pass_table(compiled, median_load(paths[largest], args.repeat))))
        if args.profile:
            print(f"\ncProfile of one O3 compile of the {largest}-node model:\n")
            print(profile(paths[largest], 25))


if __name__ == "__main__":
    main()
