"""Every fast path (ge_core/kernels) against the reference kernel it replaces, on the nodes of real models,
on this CPU and on an AVX2 target without AVX-512.

    python bench/bench_kernels.py [--repeat 7] [--models resnet50,...] [--targets native,avx2]

For each model (as loaded and compiled at O3) the node inputs of one run are captured; then, per node a path
takes, the path and the reference are timed alternately (`repeat` times each, after a warm-up) and the
medians summed per path: a ratio above 1 means the path is faster. The reference of an op path is the op's
registered kernel (numpy and numpy's BLAS); the reference of a fused-body path is the body's kernels called
one by one, as the interpreter runs a body no compiled path takes. Both run in one process on the same
arrays, hot: the comparison of kernels, not of whole runs (bench_executor.py times whole runs).

`avx2` runs the same measurement in a child process compiled for an AVX2 CPU without AVX-512
(`ge_core.kernels.cpu.avx2_environment()`: numba's target CPU and features, numpy's OpenBLAS on its AVX2
kernels) with a numba cache of its own. That is how an AVX-512 machine stands in for the AVX2 CPUs many users
have; the header says which CPU ran it. A path slower than its reference on either target must not be taken
there (issue 37).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from bench.timing import cpu_model, median_seconds
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.kernels import FAST_PATHS, cpu
from ge_core.kernels.registry import FastPath
from ge_core.ops import REGISTRY
from ge_core.ops.blas import blas_core, set_blas_threads
from ge_core.ops.registry import OpDef
from ge_core.runtime.body_chain import plan_body_chain
from ge_core.runtime.interpreter import Interpreter, _owned
from ge_core.samples.registry import get_sample, sample_bytes

MODELS: dict[str, str] = {
    "squeezenet": "", "resnet50": "", "inception_v2": "", "densenet121": "", "shufflenet": "",
    "bert_encoder_torch": "input_ids:1,128;attention_mask:1,128;token_type_ids:1,128",
    "ocr_det_db_paddle": "x:1,3,320,320", "ocr_rec_crnn_paddle": "x:1,3,32,320",
}


@dataclass
class Totals:
    calls: int = 0
    reference: float = 0.0
    fast: float = 0.0


class Capture(Interpreter):
    """Runs a graph as the executor does and keeps the inputs of every node a fast path may take."""

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        self.ops: list[tuple[Node, OpDef, list[np.ndarray | None]]] = []
        self.bodies: list[tuple[Graph, list[np.ndarray | None]]] = []

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> list[np.ndarray]:
        if FAST_PATHS.for_op(op.op_type) and not op.domain:
            self.ops.append((node, op, list(args)))
        return super().call_kernel(node, op, args)

    def run_body(self, body: Graph, args: list[np.ndarray | None]) -> list[np.ndarray]:
        self.bodies.append((body, list(args)))
        return super().run_body(body, args)


def _alternating(reference: Callable[[], object], fast: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Medians of the two, timed in alternation (one round each, `repeat` rounds)."""
    ref, fst = [], []
    reference(), fast()
    for _ in range(repeat):
        ref.append(median_seconds(reference, 1))
        fst.append(median_seconds(fast, 1))
    return statistics.median(ref), statistics.median(fst)


def measure(models: Sequence[str], repeat: int) -> dict[str, dict[str, float]]:
    totals: dict[str, Totals] = {}
    for name in models:
        shapes = MODELS.get(name, "")
        graph = ge_core.load_onnx(sample_bytes(name), shapes or get_sample(name).input_shapes or None)
        feeds = ge_core.random_feeds(graph, seed=0)
        for level in ("O0", "O3"):
            compiled = ge_core.compile(graph, opt_level=level).graph
            capture = Capture(compiled)
            capture.run(feeds)
            _measure_ops(capture, totals, repeat)
            _measure_bodies(capture, totals, repeat)
        print(f"  measured {name}", file=sys.stderr, flush=True)
    return {k: {"calls": v.calls, "reference_ms": v.reference * 1e3, "fast_ms": v.fast * 1e3}
            for k, v in totals.items()}


def _measure_ops(capture: Capture, totals: dict[str, Totals], repeat: int) -> None:
    for node, op, args in capture.ops:
        for path in FAST_PATHS.for_op(op.op_type):
            if path.run(node, args) is None:
                continue
            ref, fast = _alternating(lambda o=op, n=node, a=args: o.kernel(n, a),
                                     lambda p=path, n=node, a=args: p.run(n, a), repeat)
            total = totals.setdefault(path.name, Totals())
            total.calls, total.reference, total.fast = total.calls + 1, total.reference + ref, total.fast + fast
            break  # the interpreter takes the first path that takes the inputs


def _measure_bodies(capture: Capture, totals: dict[str, Totals], repeat: int) -> None:
    for body, args in capture.bodies:
        if any(not body.desc(t).is_static for t in (*body.inputs, *body.outputs)):
            continue
        for path in FAST_PATHS.decisions():
            if not path.taken or isinstance(path.path, FastPath):
                continue
            plan = path.path.plan(body, REGISTRY)
            chain = plan_body_chain(body, REGISTRY, _owned)
            if plan is None or chain is None or plan.run(body, args) is None:
                continue
            ref, fast = _alternating(lambda c=chain, b=body, a=args: c.run(b, a),
                                     lambda p=plan, b=body, a=args: p.run(b, a), repeat)
            total = totals.setdefault(path.path.name, Totals())
            total.calls, total.reference, total.fast = total.calls + 1, total.reference + ref, total.fast + fast
            break


def _child(target: str, models: str, repeat: int, blas_threads: int, cache: str) -> dict[str, object]:
    # OpenBLAS chooses its kernels for the CPU unless OPENBLAS_CORETYPE forces some (this machine's environment
    # forces Haswell's): native runs what OpenBLAS picks for this CPU, avx2 its AVX2 Zen kernels.
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["NUMBA_CACHE_DIR"] = cache
    if target == "avx2":
        env.update(cpu.avx2_environment())
    done = subprocess.run([sys.executable, __file__, "--child", "--models", models, "--repeat", str(repeat),
                           "--blas-threads", str(blas_threads)],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {target} run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--targets", default="native,avx2")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="numpy's BLAS threads (default 1: a two-thread GEMM on a loaded 2-core machine waits for "
                             "its descheduled half, which drowns the kernels' differences)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ge_core.tune_process()
    set_blas_threads(args.blas_threads)
    if args.child:
        print(json.dumps({"cpu": cpu.summary(), "blas": blas_core(),
                          "paths": measure(args.models.split(","), args.repeat)}))
        return
    print(f"host CPU: {cpu_model()} ({cpu.summary()}); load average {os.getloadavg()[0]:.1f}; median of "
          f"{args.repeat} alternating calls per node, summed per path; BLAS threads {args.blas_threads}; "
          f"models: {args.models}")
    results = {}
    with tempfile.TemporaryDirectory() as cache:
        for target in args.targets.split(","):
            results[target] = _child(target, args.models, args.repeat, args.blas_threads, str(Path(cache) / target))
            print(f"{target}: numba target {results[target]['cpu']}, OpenBLAS {results[target]['blas']} kernels",
                  flush=True)
    _table(results)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


def _table(results: dict[str, dict[str, object]]) -> None:
    targets = list(results)
    names = sorted({name for r in results.values() for name in r["paths"]})  # type: ignore[attr-defined]
    head = " | ".join(f"{t}: reference ms | {t}: fast ms | {t}: speedup" for t in targets)
    print(f"\n| path | nodes | {head} |")
    print("|---|---:|" + "---:|" * 3 * len(targets))
    for name in names:
        cells, calls = [], 0
        for t in targets:
            row = results[t]["paths"].get(name)  # type: ignore[attr-defined]
            if row is None:
                cells += ["—"] * 3
                continue
            calls = int(row["calls"])
            cells += [f"{row['reference_ms']:.2f}", f"{row['fast_ms']:.2f}",
                      f"{row['reference_ms'] / max(row['fast_ms'], 1e-9):.2f}x"]
        print(f"| {name} | {calls} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
