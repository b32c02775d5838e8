"""CPU executor vs ONNX Runtime on whole models: median wall time per inference, one process, one run.

    python bench/bench_executor.py [--repeat 5] [--models resnet50,squeezenet,...]

Both run on the same machine in the same process, alternating, so the ratio is meaningful even on a
noisy shared machine; absolute times are not. ONNX Runtime runs with all graph optimisations (its fused
kernels): the ratio says how far a plain numpy reference executor is from a production runtime.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

import ge_core
from bench.timing import median_seconds
from ge_core.samples.registry import get_sample, sample_bytes

DEFAULT_MODELS = ["conv_bn_relu", "transformer_encoder", "squeezenet", "resnet50", "inception_v2", "densenet121",
                  "bert_encoder_torch", "ocr_det_db_paddle", "ocr_rec_crnn_paddle"]


def bench(name: str, repeat: int, threads: int) -> tuple[str, float, float, float]:
    sample = get_sample(name)
    data = sample_bytes(name)
    graph = ge_core.load_onnx(data, sample.input_shapes or None)
    feeds = ge_core.random_feeds(graph, seed=0)
    executor = ge_core.Executor(graph)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    ours = median_seconds(lambda: executor.run(feeds), repeat)
    theirs = median_seconds(lambda: session.run(None, feeds), repeat)
    got = executor.run(feeds).outputs[graph.outputs[0]]
    want = session.run([graph.outputs[0]], feeds)[0]
    error = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-12))
    return name, ours, theirs, error


def main() -> None:
    ort.set_default_logger_severity(3)  # the light models carry unused initializers ORT warns about
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2, help="ORT intra-op threads (numpy BLAS uses its own)")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    args = parser.parse_args()
    print(f"onnx {onnx.__version__}, onnxruntime {ort.__version__}, numpy {np.__version__}; "
          f"median of {args.repeat} runs")
    print("| model | ge_core CPU ms | ONNX Runtime ms | ratio | max rel. error |")
    print("|---|---:|---:|---:|---:|")
    for name in args.models.split(","):
        model, ours, theirs, error = bench(name, args.repeat, args.threads)
        print(f"| {model} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | {ours / theirs:.1f}x | {error:.1e} |", flush=True)


if __name__ == "__main__":
    main()
