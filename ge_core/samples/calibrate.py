"""BatchNormalization calibration: set each BN's running mean/var to the statistics its input really has.

Randomized weights (`ge_core.samples.randomize_weights`) give BN random running statistics, so BN does
not normalise and activations grow layer after layer (resnet50's logits reach ~1e5 and its softmax is
one-hot). `calibrate_batch_norms` fixes that the way a real network's statistics come about: it runs
the model once on a seeded N(0, 1) input through ge_core's interpreter, node by node in topological order,
and at every BatchNormalization replaces mean (input 3) and var (input 4) by the per-channel mean and
variance of the BN's input (over every axis but the channel axis). The new statistics go into the
running values at once, so every later BN is calibrated on already-normalised activations, and into the
ONNX model's initializers. Deterministic for a given model and seed: the reference kernels run (not the
fast paths, which may round differently) with numpy's BLAS on one thread, so that the statistics, and so a
sample's bytes and its cache keys, are the same bits in every process of a machine (the CLI's, the app's, a
test's), whatever fast paths or thread settings it has.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from ge_core.frontend import load_onnx
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY, blas
from ge_core.ops.registry import OpDef
from ge_core.runtime.interpreter import Interpreter

# Variance floor: keeps var > 0 (a constant channel) so BN never divides by ~sqrt(epsilon) alone.
VAR_FLOOR = 1e-3
_MEAN, _VAR = 3, 4  # BatchNormalization input indices


def calibrate_batch_norms(model: onnx.ModelProto, seed: int = 0, *, in_place: bool = False) -> onnx.ModelProto:
    """`model` with every calibratable BatchNormalization's mean/var set to its input's statistics on a
    seeded N(0, 1) batch of the model's (static) input shapes. A BN is calibrated when its mean and var
    are initializers used by that BN only; others are left as they are. A model without BN is returned
    unchanged (a copy unless `in_place`)."""
    out = model if in_place else _copy(model)
    if not any(n.op_type == "BatchNormalization" for n in out.graph.node):
        return out
    graph = load_onnx(out)
    stats = _forward(graph, calibration_feeds(graph, seed))
    _write_initializers(out.graph, stats)
    return out


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def calibration_feeds(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    """A seeded N(0, 1) value for every graph input. The stream differs from `default_rng(seed)`, so a
    check run on `default_rng(seed)` data does not see the calibration batch itself."""
    rng = np.random.default_rng([seed, 0xBA7C4])
    feeds: dict[str, np.ndarray] = {}
    for name in graph.inputs:
        desc = graph.desc(name)
        if not desc.is_static:
            raise ValueError(f"input '{name}' has a dynamic shape {list(desc.shape)}; calibration needs a "
                             "static one")
        feeds[name] = rng.standard_normal(tuple(desc.shape)).astype(desc.dtype)
    return feeds


def _forward(graph: Graph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run `graph` through the interpreter, calibrating each BN just before it runs; the new mean/var values."""
    calibrator = _Calibrator(graph)
    with blas.one_thread():
        calibrator.run(feeds)
    return calibrator.stats


class _Calibrator(Interpreter):
    """The interpreter, with each calibratable BatchNormalization's statistics set just before it runs."""

    def __init__(self, graph: Graph) -> None:
        super().__init__(graph)
        self.targets = {n for n in graph.nodes if n.op_type == "BatchNormalization" and _calibratable(graph, n)}
        self.stats: dict[str, np.ndarray] = {}

    def before_node(self, node: Node, env: dict[str, np.ndarray]) -> None:
        if node in self.targets:
            self.stats.update(_calibrate(node, env))

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        return op.kernel(node, args)  # the reference kernel: the same bits with or without fast paths


def _calibratable(graph: Graph, node: Node) -> bool:
    """Mean and var are distinct initializers read by this node only, so rewriting them changes nothing else."""
    names = node.inputs[_MEAN:_VAR + 1]
    return (len(names) == 2 and names[0] != names[1]
            and all(graph.is_constant(t) and len(graph.users(t)) == 1 and not graph.is_output(t) for t in names))


def _calibrate(node: Node, env: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Set the BN's mean/var in `env` to its input's statistics; returns them by initializer name."""
    x = env[node.inputs[0]]
    axes = _stat_axes(node, x.ndim)
    mean_name, var_name = node.inputs[_MEAN], node.inputs[_VAR]
    old_mean, old_var = env[mean_name], env[var_name]
    wide = x.astype(np.float64)
    mean = wide.mean(axis=axes)
    var = np.maximum(wide.var(axis=axes), VAR_FLOOR)
    new = {mean_name: mean.astype(old_mean.dtype).reshape(old_mean.shape),
           var_name: var.astype(old_var.dtype).reshape(old_var.shape)}
    env.update(new)
    return new


def _stat_axes(node: Node, ndim: int) -> tuple[int, ...]:
    """Per channel (all axes but BN's channel axis, OpDef.channel_axis); before opset 9, spatial=0 keeps
    statistics per activation (axis 0)."""
    channel = REGISTRY.channel_axis(node, ndim)
    if (node.opset < 9 and int(node.attr("spatial", 1)) == 0) or channel is None:
        return (0,)
    return tuple(axis for axis in range(ndim) if axis != channel)


def _write_initializers(graph: onnx.GraphProto, values: dict[str, np.ndarray]) -> None:
    for tensor in graph.initializer:
        if tensor.name in values:
            tensor.CopyFrom(numpy_helper.from_array(values[tensor.name], tensor.name))
