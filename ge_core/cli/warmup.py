"""`python -m ge_core warmup`: compile the fast CPU kernels for this machine once, ahead of any run.

numba compiles a kernel on its first call and keeps the machine code in its cache (beside ge_core/kernels),
so without this the first run after an install pays for every kernel it meets (seconds each). This verb runs
one small model that meets every fast path (ge_core/kernels) as loaded and at O3, the way real models reach
them (float32 values, constant weights as the ONNX reader makes them), so that later runs find every kernel in
the cache. It prints which fast paths this CPU takes, and why not the others.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ge_core.compiler import compile as compile_graph
from ge_core.frontend import load_onnx
from ge_core.kernels import FAST_PATHS, cpu, jit
from ge_core.runtime import random_feeds

OPSET = 20  # Gelu's


def add_warmup_verb(verbs: Any) -> None:
    warmup = verbs.add_parser("warmup", help="compile the fast CPU kernels for this machine once (run after install)")
    warmup.set_defaults(func=cmd_warmup)
    warmup.add_argument("--debug", action="store_true", help="print tracebacks")


def cmd_warmup(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    graph = load_onnx(warmup_model())
    feeds = random_feeds(graph, seed=0)
    for level in ("O0", "O3"):
        compile_graph(graph, opt_level=level).run(feeds)
    seconds = time.perf_counter() - start
    print(f"CPU: {cpu.summary()}; numba {'on' if jit.ENABLED else 'off'}")
    for decision in FAST_PATHS.decisions():
        mark = "taken" if decision.taken else f"not taken: {decision.reason}"
        print(f"  {decision.path.name:<28} {mark}")
    print(f"compiled {jit.compiles()} kernel signatures in {seconds:.1f} s (numba's cache: later runs load them)")
    return 0


def warmup_model() -> bytes:
    """An ONNX model with a node for every fast path: convs (im2col, depthwise on small and large maps, few
    output channels), a 2x2/2 ConvTranspose, pools, a squeeze-and-excitation gate, nearest upsampling,
    Sigmoid, BatchNormalization + Relu, and a transformer block's MatMul + bias + Gelu, LayerNormalization
    and Softmax."""
    rng = np.random.default_rng(0)
    inits: list[onnx.TensorProto] = []

    def const(name: str, *shape: int) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name))
        return name

    def op(kind: str, inputs: list[str], output: str, **attrs: Any) -> onnx.NodeProto:
        return helper.make_node(kind, inputs, [output], name=output, **attrs)

    nodes = [
        op("Conv", ["x", const("w1", 32, 16, 3, 3), const("b1", 32)], "c1", pads=[1, 1, 1, 1]),  # im2col
        op("Relu", ["c1"], "r1"),
        op("Sigmoid", ["d1"], "s1"),
        op("Conv", ["r1", const("wd", 32, 1, 3, 3), const("bd", 32)], "d1", group=32, pads=[1, 1, 1, 1]),
        op("AveragePool", ["r1"], "a1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),  # a large map: separable
        op("MaxPool", ["d1"], "p1", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),  # large: separable
        op("MaxPool", ["p1"], "y7", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),  # small: rows
        op("Conv", ["p1", const("wd2", 32, 1, 3, 3)], "d2", group=32, pads=[1, 1, 1, 1]),  # small-map depthwise
        op("Conv", ["p1", const("wt", 8, 32, 3, 3)], "t1", pads=[1, 1, 1, 1]),  # few output channels: tap sums
        op("ConvTranspose", ["t1", const("wct", 8, 8, 2, 2), const("bct", 8)], "u1", strides=[2, 2]),
        op("Relu", ["u1"], "u2"),
        op("Add", ["u2", "a1_8"], "ua"),
        op("BatchNormalization", ["ua", const("g", 8), const("be", 8), const("mu", 8), "var"], "bn"),
        op("Relu", ["bn"], "y1"),
        op("GlobalAveragePool", ["d2"], "gap"),
        op("Conv", ["gap", const("wse", 32, 32, 1, 1), const("bse", 32)], "se"),
        op("HardSigmoid", ["se"], "gate"),
        op("Mul", ["d2", "gate"], "y2"),
        op("Resize", ["y2", "", "scales"], "y3", mode="nearest"),
        op("Slice", ["a1", "zero", "eight", "one"], "a1_8"),
        op("MatMul", ["s", const("wq", 64, 64)], "q"),
        op("Add", ["q", const("bq", 64)], "qb"),
        op("Gelu", ["qb"], "y4"),
        op("LayerNormalization", ["s", "gamma", const("beta", 64)], "y5", axis=-1),
        op("Transpose", ["s"], "st", perm=[0, 2, 1]),
        op("MatMul", ["s", "st"], "scores"),
        op("Softmax", ["scores"], "y6", axis=-1),  # long rows: exp32 in the loop
        op("Slice", ["scores", "zero", "sixteen", "two"], "short"),
        op("Softmax", ["short"], "y8", axis=-1),  # rows shorter than 32: numpy's exp between two loops
    ]
    inits += [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
              numpy_helper.from_array(np.ones(8, np.float32), "var"),
              numpy_helper.from_array(np.ones(64, np.float32), "gamma"),
              numpy_helper.from_array(np.array([0], np.int64), "zero"),
              numpy_helper.from_array(np.array([8], np.int64), "eight"),
              numpy_helper.from_array(np.array([1], np.int64), "one"),
              numpy_helper.from_array(np.array([16], np.int64), "sixteen"),
              numpy_helper.from_array(np.array([2], np.int64), "two")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 40, 40]),
              helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 64, 64])]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
               for name in ("s1", "y1", "y3", "y4", "y5", "y6", "y7", "y8")]
    graph = helper.make_graph(nodes, "warmup", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    return bytes(model.SerializeToString())
