"""Compile cache: is a hit ever slower than the compile it replaces?

    python bench/bench_compile_cache.py [--samples resnet50,mlp] [--repeat 5] [--no-torch] [--graph --snapshots]

For every sample (ge_core.samples, the broken ones aside) without and with `--hardware ascend310`, the
model's ONNX bytes are compiled as the CLI compiles them: `compile` is ge_core.compile with no cache (import,
passes, plan), `cached` the same call through a CompileCache holding that compile (hashing the bytes, the
lookup, the load: a hit; or, where the cache judged at store time that a hit does not pay, the compile
again). Both are timed in one process, in pairs (in turn first), after the storing compile, so a burst of
load on the machine hits both alike: at least --repeat pairs, more for fast models (until the compiles have taken
--seconds). `ratio` = the median of the pairs' cached / compile wall times; done when every row's <= 1.
`cpu ratio` is the same in this process's CPU time, which other processes on a shared machine disturb less.
`--graph` compiles the imported Graph instead (as the web page, the Session and torch.compile do: a hit
still imports the model), `--snapshots` with the web page's cache (a hit rebuilds the graph after each pass).
The torch samples need torch imported and each model exported (seconds each); `--no-torch` leaves them out.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from ge_core.config import CompileConfig
from ge_core.errors import GEError
from ge_core.offline.cache import CompileCache
from ge_core.samples import Sample, list_samples, sample_bytes

HARDWARE = (None, "ascend310")


@dataclass
class Row:
    sample: str
    hardware: str
    weights_mb: float
    compile_s: float  # medians
    cached_s: float
    ratio: float  # the median of the pairs' ratios
    cpu_ratio: float
    runs: int
    entry: str  # "kept", or why not


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def timed(fn: Callable[[], ge_core.CompiledModel]) -> tuple[float, float, ge_core.CompiledModel]:
    """Wall and CPU seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, value


def bench_one(sample: Sample, hardware: str | None, folder: Path, repeat: int, seconds: float,
              graph: bool, snapshots: bool) -> Row:
    config = CompileConfig.build(input_shapes=sample.input_shapes or None, hardware=hardware)
    onnx_bytes = sample_bytes(sample.name)
    data = ge_core.load_onnx(onnx_bytes, config.input_shapes or None) if graph else onnx_bytes
    cache = CompileCache(folder / f"{sample.name}-{hardware}", snapshots=snapshots, keep_all=False)
    stored = ge_core.compile(data, config, cache=cache)  # the miss that stores (or judges) the entry
    weights = sum(a.nbytes for a in stored.input_graph.constants.values()) / 1e6
    plain: list[tuple[float, float]] = []
    cached: list[tuple[float, float]] = []
    entry = ""
    while len(plain) < repeat or (sum(w for w, _ in plain) < seconds and len(plain) < 200):
        for used in (None, cache) if len(plain) % 2 else (cache, None):  # neither always goes first
            wall, cpu, model = timed(functools.partial(ge_core.compile, data, config, cache=used))
            with_cache = used is not None
            (cached if with_cache else plain).append((wall, cpu))
            if with_cache:
                entry = "kept" if model.cache["hit"] else f"not kept: {model.cache.get('why', 'miss')}"
            del model  # no model lives on into the next compile
    pairs = list(zip(cached, plain, strict=True))
    return Row(sample.name, hardware or "-", weights, statistics.median(w for w, _ in plain),
               statistics.median(w for w, _ in cached), statistics.median(a[0] / b[0] for a, b in pairs),
               statistics.median(a[1] / max(b[1], 1e-9) for a, b in pairs), len(plain), entry)


def table(rows: list[Row]) -> list[str]:
    lines = ["| sample | hardware | weights MB | compile s | cached s | ratio | cpu ratio | runs | entry |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r.sample} | {r.hardware} | {r.weights_mb:.1f} | {r.compile_s:.4f} | {r.cached_s:.4f} | "
                     f"{r.ratio:.2f} | {r.cpu_ratio:.2f} | {r.runs} | {r.entry} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", default="", help="sample names, comma separated (default: all but broken)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, at least")
    parser.add_argument("--seconds", type=float, default=1.0, help="more runs of fast models, up to this (or 200)")
    parser.add_argument("--no-torch", action="store_true", help="leave out the torch samples")
    parser.add_argument("--graph", action="store_true", help="compile the imported Graph, not the ONNX bytes")
    parser.add_argument("--snapshots", action="store_true", help="the web page's cache (pass snapshots on a hit)")
    args = parser.parse_args()
    wanted = set(filter(None, args.samples.split(",")))
    samples = [s for s in list_samples() if s.kind != "broken" and (not wanted or s.name in wanted)
               and not (args.no_torch and s.kind == "torch")]
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical); load average before: {load_average()}")
    print(f">= {args.repeat} pairs of runs (up to {args.seconds:g} s of compiles); source: "
          f"{'Graph' if args.graph else 'ONNX bytes'}; cache snapshots: {args.snapshots}\n")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        for sample in samples:
            for hardware in HARDWARE:
                try:
                    rows.append(bench_one(sample, hardware, Path(folder), args.repeat, args.seconds, args.graph,
                                          args.snapshots))
                except GEError as exc:
                    print(f"{sample.name} {hardware or '-'}: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                print(table(rows[-1:])[-1], flush=True)
    print("\n" + "\n".join(table(rows)))
    kept = [r for r in rows if r.entry == "kept"]
    slower = [r for r in kept if r.ratio > 1]
    print(f"\nload average after: {load_average()}")
    print(f"hits slower than compiling: {len(slower)} of {len(kept)} kept entries"
          + (f" ({', '.join(f'{r.sample}/{r.hardware}' for r in slower)})" if slower else ""))
    others = [r for r in rows if r.entry != "kept"]
    if others:  # compiled either way: their ratio is the machine's noise plus the costs' lookup
        print(f"not kept (compiled, no weight hashed): {len(others)} rows, ratio {min(r.ratio for r in others):.2f}-"
              f"{max(r.ratio for r in others):.2f}, cpu ratio {min(r.cpu_ratio for r in others):.2f}-"
              f"{max(r.cpu_ratio for r in others):.2f}")


if __name__ == "__main__":
    main()
