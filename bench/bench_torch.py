"""PyTorch through ge_core: capture + compile time, torch.compile's first and warm calls, against eager.

    python bench/bench_torch.py [--repeat 20] [--samples mlp,cnn,transformer,lstm,gru]

Per sample (tests/torch/models.py and the web page's PyTorch samples, ge_core/samples/torch_models.py;
seeded random weights): `from_torch` (torch.export + the ATen table)
and `ge_core.compile` at O3, each timed once (after one small export, so torch.export's one-time
setup is not charged to the first sample); then `torch.compile(model, backend=ge_core.torch_backend())`:
the first call (Dynamo's capture, the export, the GE compile, the run) and the median of warm calls, and
eager PyTorch's median on the same inputs, all under no_grad in one process. The interpreter runs a graph
node by node in numpy, so warm calls are slower than eager on small models: the table shows where the
time goes, not a race. Absolute times on this shared machine are not to be trusted; the first-call /
warm-call gap is the point.

One thread each by default (--threads: torch's intra-op threads and numpy's OpenBLAS): on a 2-core machine
shared with other work, a two-thread op waits for its descheduled half, and OpenBLAS's threads left
spinning after GE's calls slow the eager calls measured next (seen here: eager MLP 0.04 ms alone, 46 ms in
this loop with both libraries at two threads under load 5; see ge_core/runtime/blas_threads.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

import ge_core
from bench.timing import median_seconds
from ge_core.runtime.blas_threads import set_blas_threads
from ge_core.samples.torch_models import FACTORIES
from ge_core.samples.torch_samples import available_torch_samples
from tests.torch.models import SAMPLES as TEST_SAMPLES

# the tests' models, then the web page's samples (torch_bert only with transformers installed)
SAMPLES = {**TEST_SAMPLES, **{name: FACTORIES[name] for name in available_torch_samples()}}


def row(name: str, repeat: int) -> str:
    module, inputs = SAMPLES[name]()
    start = time.perf_counter()
    graph = ge_core.from_torch(module, inputs)
    capture = time.perf_counter() - start
    start = time.perf_counter()
    compiled = ge_core.compile(graph, ge_core.CompileConfig(opt_level="O3"))
    compile_seconds = time.perf_counter() - start
    torch._dynamo.reset()
    ge_core.torch_stats(reset=True)
    fast = torch.compile(module, backend=ge_core.torch_backend())
    with torch.no_grad():
        start = time.perf_counter()
        fast(*inputs)
        first = time.perf_counter() - start
        warm = median_seconds(lambda: fast(*inputs), repeat)
        eager = median_seconds(lambda: module(*inputs), repeat)
    stats = ge_core.torch_stats()
    return (f"| {name} | {len(graph.nodes)} | {compiled.plan.kernels} | {capture * 1e3:.0f} | "
            f"{compile_seconds * 1e3:.0f} | {len(stats.compiles)} | {first * 1e3:.0f} | {warm * 1e3:.2f} | "
            f"{eager * 1e3:.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--samples", default=",".join(SAMPLES))
    parser.add_argument("--threads", type=int, default=1,
                        help="torch and numpy BLAS threads (default 1; 0 keeps both libraries' defaults)")
    args = parser.parse_args(argv)
    ge_core.tune_process()  # the settings the CLI and the app run with (runtime/process.py)
    if args.threads:
        torch.set_num_threads(args.threads)
        set_blas_threads(args.threads)
    ge_core.from_torch(torch.nn.Linear(2, 2).eval(), (torch.randn(1, 2),))  # torch.export's one-time setup
    print(f"torch {torch.__version__}, {torch.get_num_threads()} torch thread(s), BLAS threads "
          f"{args.threads or 'default'}, {args.repeat} repeats; load average {os.getloadavg()[0]:.1f} at the start")
    torch._dynamo.config.allow_rnn = True  # else Dynamo runs the LSTM and GRU samples eagerly, not through GE
    print("| sample | GE nodes | O3 kernels | from_torch ms | compile ms | compiles | first call ms | "
          "warm call ms | eager ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.samples.split(","):
        print(row(name, args.repeat), flush=True)


if __name__ == "__main__":
    main()
