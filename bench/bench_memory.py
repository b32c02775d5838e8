"""Arena size per memory strategy vs the lower bound, and the arena executor's outputs vs ONNX Runtime.

    python bench/bench_memory.py [--models resnet50,bert_encoder_torch,...]

For each model compiled at O3: bytes with no reuse (every activation its own range), the lower bound
(theory minimum: peak live bytes of the chosen layout; in brackets when Concats copying their inputs would
change it), the arena each strategy reaches ("copying / no-copy" where some Concats can take their inputs
in place), the strategy kept and how far it is from the bound; then the model runs on that arena (every
activation at its planned offset, no-copy Concats launching nothing) and its outputs are compared with
ONNX Runtime's (largest relative error).

    python bench/bench_memory.py --split [--split-sizes 1000,2000,5000,10000,20000]

The scaling of memory planning in the number of tensors alive at once (issue 12: a 10k-output Split used to
hang): a Split of x (1, N) into N outputs, (A) each read by its own Relu, the Relus being the graph's outputs
(in place: N blocks alive over the whole graph), or (B) the Split's outputs themselves the graph's outputs.
Per size: CPU seconds to compile at O0 (in-process, the best of --split-repeat) and, of those, the memory
stage run again alone (order search, every planner, validation), the arena against the lower bound, and
the compile time against the previous size's (linear growth gives the size ratio: 2, 2.5, 2, 2).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from ge_core.compiler import gc_paused
from ge_core.memory import validate_plan
from ge_core.memory.order import memory_aware_order, order_peak_bytes
from ge_core.memory.plan import MemoryPlan
from ge_core.memory.planners import NO_COPY, STRATEGIES, plan_memory
from ge_core.passes.infra.instruments import relative_error
from ge_core.runtime import ArenaExecutor
from ge_core.samples.registry import get_sample, list_samples, sample_bytes
from ge_core.viz import format_bytes


def plan_for(name: str) -> tuple[MemoryPlan, float]:
    """The model's O3 memory plan and the arena executor's largest relative error against ONNX Runtime."""
    sample = get_sample(name)
    data = sample_bytes(name)
    compiled = ge_core.compile(data, input_shapes=sample.input_shapes or None, opt_level="O3")
    plan = getattr(compiled, "memory", None) or plan_memory(compiled.graph)
    feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
    ours = ArenaExecutor(compiled.graph, plan).run(feeds).outputs
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    theirs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))
    return plan, max(relative_error(ours[t], theirs[t]) for t in theirs)


def header(strategies: list[str]) -> str:
    columns = ["model", "no-reuse", "lower bound", *strategies, "chosen", "chosen / bound", "max rel. error"]
    align = ["---", *["---:"] * (len(columns) - 4), "---", "---:", "---:"]
    return f"| {' | '.join(columns)} |\n|{'|'.join(align)}|"


def cell(plan: MemoryPlan, strategy: str) -> str:
    """`7.66 MiB` or, where some Concats can skip their copy, `copying / no-copy`."""
    copying = plan.strategies.get(strategy)
    no_copy = plan.strategies.get(strategy + NO_COPY)
    shown = [format_bytes(v) for v in (copying, no_copy) if v is not None]
    return " / ".join(shown) or "-"


def row(name: str, plan: MemoryPlan, strategies: list[str], error: float) -> str:
    ratio = plan.arena_bytes / plan.theory_min_bytes if plan.theory_min_bytes else 1.0
    bound = format_bytes(plan.theory_min_bytes)
    if plan.copy_concat_min_bytes != plan.theory_min_bytes:
        bound += f" ({format_bytes(plan.copy_concat_min_bytes)} copying)"
    cells = [name, format_bytes(plan.no_reuse_bytes), bound, *(cell(plan, s) for s in strategies),
             f"{plan.strategy} ({format_bytes(plan.arena_bytes)})", f"{ratio:.3f}", f"{error:.1e}"]
    return f"| {' | '.join(cells)} |"


SPLIT_SIZES = "1000,2000,5000,10000,20000"
SPLIT_VARIANTS = {"A": "Split -> N Relus (outputs)", "B": "Split outputs are outputs"}


def split_model(n: int, relus: bool) -> bytes:
    """x (1, n) split into n outputs, each read by its own Relu (the Relus are the outputs) or not."""
    outs = [f"o{i}" for i in range(n)]
    nodes = [helper.make_node("Split", ["x"], outs, name="split", axis=1, num_outputs=n)]
    finals = [f"r{i}" for i in range(n)] if relus else outs
    if relus:
        nodes += [helper.make_node("Relu", [f"o{i}"], [f"r{i}"], name=f"relu{i}") for i in range(n)]
    graph = helper.make_graph(nodes, "split", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                              [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in finals])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()


def memory_stage(compiled: ge_core.CompiledModel) -> float:
    """Seconds of the compile's memory stage, run again alone on the final graph as compiler.py runs it
    (with the garbage collector paused, as compile() pauses it)."""
    with gc_paused():
        start = time.process_time()
        memory_aware_order(compiled.graph)
        order_peak_bytes(compiled.graph, list(compiled.graph.nodes))
        validate_plan(plan_memory(compiled.graph), compiled.graph)
        return time.process_time() - start


def best_compile(data: bytes, repeat: int) -> tuple[float, ge_core.CompiledModel]:
    """CPU seconds of the fastest of `repeat` compiles at O0, and the compiled model. CPU time of this
    process rather than wall time, so that the ratios hold on a shared machine."""
    best: tuple[float, ge_core.CompiledModel] | None = None
    for _ in range(repeat):
        start = time.process_time()
        compiled = ge_core.compile(data, opt_level="O0")
        seconds = time.process_time() - start
        best = (seconds, compiled) if best is None or seconds < best[0] else best
    assert best is not None
    return best


def split_table(sizes: list[int], repeat: int) -> None:
    print(f"Python {platform.python_version()}, compile at O0 in-process, CPU seconds, best of {repeat}")
    print("| variant | N | compile O0 (s) | memory stage (s) | arena | lower bound | arena / bound | time / previous |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for variant, label in SPLIT_VARIANTS.items():
        previous: float | None = None
        for n in sizes:
            seconds, compiled = best_compile(split_model(n, relus=variant == "A"), repeat)
            plan = compiled.memory
            assert plan is not None
            ratio = f"{seconds / previous:.2f}" if previous else "-"
            print(f"| {variant}: {label} | {n:,} | {seconds:.2f} | {memory_stage(compiled):.2f} | "
                  f"{format_bytes(plan.arena_bytes)} | {format_bytes(plan.theory_min_bytes)} | "
                  f"{plan.arena_bytes / plan.theory_min_bytes:.3f} | {ratio} |", flush=True)
            previous = seconds


def main() -> None:
    ort.set_default_logger_severity(3)
    runnable = [s.name for s in list_samples() if s.kind in ("light", "exported")]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(runnable))
    parser.add_argument("--split", action="store_true", help="print the wide-Split scaling table instead")
    parser.add_argument("--split-sizes", default=SPLIT_SIZES, help="output counts N for --split")
    parser.add_argument("--split-repeat", type=int, default=3, help="compiles per size for --split (the best kept)")
    args = parser.parse_args()
    ge_core.tune_process()  # the settings the CLI and the app run with (runtime/process.py)
    if args.split:
        split_table([int(n) for n in args.split_sizes.split(",")], args.split_repeat)
        return
    print(f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    strategies: list[str] | None = None
    for name in args.models.split(","):
        plan, error = plan_for(name)
        if strategies is None:
            strategies = [s for s in STRATEGIES if s != "no_reuse"]
            print(header(strategies))
        print(row(name, plan, strategies, error), flush=True)


if __name__ == "__main__":
    main()
