"""NPU simulator cost vs the CPU executor, and simulated time O0 vs O3, on whole models.

    python bench/bench_sim.py [--repeat 5] [--hardware ascend910] [--models resnet50,squeezenet,...]

Per model (compiled at O3 for the hardware target): the CPU executor's run, the simulator's run (the same
kernels for the outputs, plus pricing every kernel: the schedule is rebuilt every run, as on a first
simulation after the compile, which reuses the tilings the compile's TilingPass made), their ratio (the
bar: <= 2x); the same ratio with every tiling made afresh (forget_tilings() before each simulation: a
first simulation on a profile or precision mode the compile did not tile for); the simulated total at O0
and O3, and ONNX Runtime for reference. Medians of --repeat runs after a warm-up, CPU and simulator back to
back in one process; the ratios are medians of the per-pair ratios (noisy machines: trust the ratios, not
the absolute times).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from bench.timing import median_seconds
from ge_core.hardware import forget_tilings
from ge_core.samples.registry import get_sample, sample_bytes
from ge_core.sim import simulate

DEFAULT_MODELS = ["resnet50", "squeezenet", "inception_v1", "bert_encoder_torch", "ocr_det_db_paddle",
                  "ocr_rec_crnn_paddle"]


def paired_seconds(first: Callable[[], object], second: Callable[[], object],
                   repeat: int) -> tuple[float, float, float]:
    """Median times of `first` and `second` run back to back, and the median of their per-pair ratios
    (a pair sees the same machine load, so the ratio is steadier than the ratio of medians)."""
    first(), second()  # warm-up
    a, b = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        first()
        middle = time.perf_counter()
        second()
        a.append(middle - start)
        b.append(time.perf_counter() - middle)
    return statistics.median(a), statistics.median(b), statistics.median(y / x for x, y in zip(a, b, strict=True))


def bench(name: str, hardware: str, repeat: int) -> str:
    sample = get_sample(name)
    data = sample_bytes(name)
    shapes = sample.input_shapes or None
    o3 = ge_core.compile(data, input_shapes=shapes, opt_level="O3", hardware=hardware)
    o0 = ge_core.compile(data, input_shapes=shapes, opt_level="O0", hardware=hardware)
    feeds = ge_core.random_feeds(o3.graph, seed=0)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    cpu, sim, ratio = paired_seconds(lambda: o3.run(feeds), lambda: simulate(o3, hardware, feeds, reuse_schedule=False),
                                     repeat)

    def afresh() -> object:
        forget_tilings()
        return simulate(o3, hardware, feeds, reuse_schedule=False)

    _, _, afresh_ratio = paired_seconds(lambda: o3.run(feeds), afresh, repeat)
    ort_s = median_seconds(lambda: session.run(None, feeds), repeat)
    t0 = simulate(o0, hardware, run=False).total_us
    t3 = simulate(o3, hardware, run=False).total_us
    return (f"| {name} | {cpu * 1e3:.2f} | {sim * 1e3:.2f} | {ratio:.2f}x | {afresh_ratio:.2f}x | {ort_s * 1e3:.2f} | "
            f"{t0:.1f} | {t3:.1f} | {t0 / t3:.2f}x |")


def main() -> None:
    ort.set_default_logger_severity(3)  # the light models carry unused initializers ORT warns about
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hardware", default="ascend910")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    args = parser.parse_args()
    ge_core.tune_process()  # the settings the CLI and the app run with (runtime/process.py)
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}; {args.hardware}; "
          f"median of {args.repeat} runs")
    print("| model | CPU executor ms | simulate ms | simulate / CPU | tiled afresh / CPU | ORT ms | simulated O0 us "
          "| simulated O3 us | O0 / O3 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.models.split(","):
        print(bench(name, args.hardware, args.repeat), flush=True)


if __name__ == "__main__":
    main()
