"""Arena size per memory strategy vs the lower bound, and the arena executor's outputs vs ONNX Runtime.

    python bench/bench_memory.py [--models resnet50,bert_encoder_torch,...]

For each model compiled at O3: bytes with no reuse (every activation its own range), the lower bound
(theory minimum: peak live bytes of the chosen layout; in brackets when Concats copying their inputs would
change it), the arena each strategy reaches ("copying / no-copy" where some Concats can take their inputs
in place), the strategy kept and how far it is from the bound; then the model runs on that arena (every
activation at its planned offset, no-copy Concats launching nothing) and its outputs are compared with
ONNX Runtime's (largest relative error).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
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


def main() -> None:
    ort.set_default_logger_severity(3)
    runnable = [s.name for s in list_samples() if s.kind in ("light", "exported")]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(runnable))
    args = parser.parse_args()
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
