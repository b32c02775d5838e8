"""Kernels after fusion vs ONNX Runtime's node count after its own (ORT_ENABLE_EXTENDED) optimisations.

    python bench/bench_fusion.py [--models resnet50,bert_encoder_torch,...]

For each model: nodes as imported, ge_core's kernels at O3 (nodes that launch a kernel: views such as
Reshape launch none), ONNX Runtime's node count in the optimised model it writes out, and the largest
relative difference between ge_core's O3 outputs and ONNX Runtime's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from ge_core.passes.infra.instruments import relative_error
from ge_core.samples.registry import get_sample, list_samples, sample_bytes


def ort_optimized_nodes(data: bytes) -> int:
    """Nodes in the model ONNX Runtime runs after ORT_ENABLE_EXTENDED (it writes the optimised graph)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "optimized.onnx")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = path
        ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        return len(onnx.load(path, load_external_data=False).graph.node)


def row(name: str) -> tuple[str, int, int, int, float, int]:
    sample = get_sample(name)
    data = sample_bytes(name)
    compiled = ge_core.compile(data, input_shapes=sample.input_shapes or None, opt_level="O3")
    feeds = ge_core.random_feeds(compiled.input_graph, seed=0)
    ours = compiled.run(feeds)
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    theirs = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True))
    error = max(relative_error(ours[t], theirs[t]) for t in theirs)
    decisions = compiled.report["fusion"]["decisions"]
    rejected = sum(not d["accepted"] for d in decisions)
    return name, len(compiled.input_graph), compiled.plan.kernels, ort_optimized_nodes(data), error, rejected


def main() -> None:
    ort.set_default_logger_severity(3)
    runnable = [s.name for s in list_samples() if s.kind in ("light", "exported", "sample")]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(runnable))
    args = parser.parse_args()
    ge_core.tune_process()  # the settings the CLI and the app run with (runtime/process.py)
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}")
    print("| model | nodes | ge_core kernels (O3) | ORT nodes (extended) | ours <= ORT | max rel. error | "
          "fusions rejected |")
    print("|---|---:|---:|---:|:---:|---:|---:|")
    for name in args.models.split(","):
        model, nodes, kernels, ort_nodes, error, rejected = row(name)
        ok = "yes" if kernels <= ort_nodes else "**no**"
        print(f"| {model} | {nodes} | {kernels} | {ort_nodes} | {ok} | {error:.1e} | {rejected} |", flush=True)


if __name__ == "__main__":
    main()
