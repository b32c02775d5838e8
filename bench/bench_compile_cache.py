"""Compile cache: is a hit ever slower than the compile it replaces?

    python bench/bench_compile_cache.py [--samples resnet50,mlp] [--repeat 5] [--no-torch] [--snapshots]

For every sample (ge_core.samples, the broken ones aside) without and with `--hardware ascend310`, the
model's ONNX bytes are compiled as the CLI compiles them: `compile` is ge_core.compile with no cache (load,
passes, plan), `cached` the same call through a CompileCache holding that compile (the key's hashing, the
lookup, the load: a hit; or, where the cache decided at store time that a load does not pay, the compile
again). Both are timed in one process, alternating, median of --repeat runs after the storing compile, so
a burst of load on the machine hits both alike. `ratio` = cached / compile; done when every row's <= 1.
`--snapshots` uses the web page's cache (it rebuilds the graph after every pass on a hit), not the CLI's.
The torch samples need torch imported and each model exported (seconds each); `--no-torch` leaves them out.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
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
    compile_s: float
    cached_s: float
    entry: str  # "kept", or why not

    @property
    def ratio(self) -> float:
        return self.cached_s / self.compile_s


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


def timed(fn: object, *args: object, **kwargs: object) -> tuple[float, ge_core.CompiledModel]:
    start = time.perf_counter()
    value = fn(*args, **kwargs)  # type: ignore[operator]
    return time.perf_counter() - start, value


def bench_one(sample: Sample, hardware: str | None, folder: Path, repeat: int, snapshots: bool) -> Row:
    data = sample_bytes(sample.name)
    config = CompileConfig.build(input_shapes=sample.input_shapes or None, hardware=hardware)
    cache = CompileCache(folder / f"{sample.name}-{hardware}", snapshots=snapshots)
    stored = ge_core.compile(data, config, cache=cache)  # the miss that stores (or judges) the entry
    weights = sum(a.nbytes for a in stored.input_graph.constants.values()) / 1e6
    plain: list[float] = []
    cached: list[float] = []
    for _ in range(repeat):
        plain.append(timed(ge_core.compile, data, config)[0])
        seconds, model = timed(ge_core.compile, data, config, cache=cache)
        cached.append(seconds)
    entry = "kept" if model.cache["hit"] else f"not kept: {model.cache.get('why', 'miss')}"
    return Row(sample.name, hardware or "-", weights, statistics.median(plain), statistics.median(cached), entry)


def table(rows: list[Row]) -> list[str]:
    lines = ["| sample | hardware | weights MB | compile s | cached s | ratio | entry |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r.sample} | {r.hardware} | {r.weights_mb:.1f} | {r.compile_s:.3f} | {r.cached_s:.3f} | "
                     f"{r.ratio:.2f} | {r.entry} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", default="", help="sample names, comma separated (default: all but broken)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-torch", action="store_true", help="leave out the torch samples")
    parser.add_argument("--snapshots", action="store_true", help="the web page's cache (pass snapshots on a hit)")
    args = parser.parse_args()
    wanted = set(filter(None, args.samples.split(",")))
    samples = [s for s in list_samples() if s.kind != "broken" and (not wanted or s.name in wanted)
               and not (args.no_torch and s.kind == "torch")]
    print(f"CPU: {cpu_model()} ({os.cpu_count()} logical); load average before: {load_average()}")
    print(f"median of {args.repeat} runs, alternating; cache snapshots: {args.snapshots}\n")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as folder:
        for sample in samples:
            for hardware in HARDWARE:
                try:
                    rows.append(bench_one(sample, hardware, Path(folder), args.repeat, args.snapshots))
                except GEError as exc:
                    print(f"{sample.name} {hardware or '-'}: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                print(table(rows[-1:])[-1], flush=True)
    print("\n" + "\n".join(table(rows)))
    slower = [r for r in rows if r.ratio > 1]
    print(f"\nload average after: {load_average()}")
    print(f"rows whose cached compile is slower than compiling: {len(slower)} of {len(rows)}"
          + (f" ({', '.join(f'{r.sample}/{r.hardware}' for r in slower)})" if slower else ""))


if __name__ == "__main__":
    main()
