"""BatchNormFoldPass: fold an inference BatchNormalization into the Conv/ConvTranspose/Gemm that feeds it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.passes.cleanup.fold_scale import (
    RULES,
    Affine,
    apply_affine,
    channel_count,
    fold_into_producer,
)
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import bypass, control_pinned, drop_unused_constants, is_onnx, single_reader

# BatchNormalization's X may come from these (MatMul has no bias to take BN's shift): the cases of
# fold_scale's weight rewrites with a bias, so the names stay with the rewrite.
FOLDS_INTO = ("Conv", "ConvTranspose", "Gemm")


@dataclass(frozen=True)
class BatchNormFoldPass:
    """Fold each inference BatchNormalization into the Conv, ConvTranspose or Gemm right before it.

    At inference BN is y = (x - mean) * s + B with s = scale / sqrt(var + eps), all constants: one
    multiply-add per channel. Scaling the weights by s and setting the bias to (b - mean) * s + B gives the
    same result with no BN at all, saving a full read and write of the activation. Every deployment
    compiler does this (GE's ConvBatchnormFusionPass); it is why BN costs nothing at inference.
    A per-channel Add/Mul by a constant between the two (a bias written as its own op) is folded along.
    """

    name: ClassVar[str] = "BatchNormFoldPass"

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        folds: Counter[str] = Counter()
        removed = 0  # BNs and the per-channel ops folded along with them
        for node in graph.nodes:
            if node.op_type == "BatchNormalization" and is_onnx(node) and node.name not in pinned:
                before = len(graph)
                target = fold_batch_norm(graph, node, pinned)
                removed += before - len(graph)
                if target:
                    folds[target] += 1
        if not removed:
            return PassResult(False)
        detail = ", ".join(f"{n} into {op}" for op, n in sorted(folds.items()))
        between = removed - sum(folds.values())
        along = f"; {between} per-channel Add/Mul between them folded along" if between else ""
        return PassResult(True, (f"folded {sum(folds.values())} BatchNormalization node(s) into the op before "
                                 f"them ({detail}){along}",))


def fold_batch_norm(graph: Graph, bn: Node, pinned: set[str]) -> str | None:
    """Fold `bn` into its producer and remove it; the producer's op type, or None when not safe."""
    x = bn.input(0)
    affine = _bn_affine(graph, bn)
    desc = graph.desc(x)
    axis = REGISTRY.channel_axis(bn, desc.rank)  # 1, None for an input of fewer dims
    if affine is None or single_reader(graph, x) is not bn or axis is None or desc.shape[axis] != len(affine.scale):
        return None
    producer = _fold_ops_between(graph, graph.producer(x), pinned)
    if producer is None or producer.op_type not in FOLDS_INTO or REGISTRY.channel_axis(producer, desc.rank) != axis:
        return None  # the producer's channels must lie on the axis BN normalises (for Gemm: its column axis)
    x = bn.input(0)  # the producer's output, now that the ops between are folded
    if channel_count(graph, producer) != len(affine.scale):
        return None
    params = bn.inputs[1:5]
    apply_affine(graph, producer, affine)
    bypass(graph, bn, x)  # x is the producer's intermediate output: bypass cannot refuse
    drop_unused_constants(graph, params)
    return producer.op_type


def _fold_ops_between(graph: Graph, producer: Node | None, pinned: set[str]) -> Node | None:
    """BN's producer, after folding a per-channel Add/Mul by a constant that sits between it and a Conv
    (exporters such as Paddle's write Conv without bias, then Add(bias), then BN)."""
    while producer is not None and producer.op_type in RULES:
        weighted = [p for p in map(graph.producer, producer.inputs) if p is not None]
        if len(weighted) != 1 or weighted[0].op_type not in FOLDS_INTO:
            return producer
        if fold_into_producer(graph, producer, pinned) is None:
            return producer
        producer = weighted[0]
    return producer


def _bn_affine(graph: Graph, bn: Node) -> Affine | None:
    """BN as y = x * s + t per channel (float64), when it is an inference BN with constant parameters."""
    if len(bn.inputs) != 5 or len([t for t in bn.outputs if t]) != 1:
        return None  # training-mode outputs (running mean/var) are refused at import; stay safe anyway
    if bn.opset >= 14 and int(bn.attr("training_mode", 0)):
        return None
    if bn.opset < 9 and int(bn.attr("spatial", 1)) == 0:
        return None  # statistics per activation, not per channel
    arrays = [graph.constants.get(t) for t in bn.inputs[1:5]]
    if any(a is None or a.ndim != 1 for a in arrays):
        return None
    scale, bias, mean, var = (np.asarray(a, np.float64) for a in arrays if a is not None)
    s = scale / np.sqrt(var + float(bn.attr("epsilon", 1e-5)))
    if not np.all(np.isfinite(s)):
        return None
    return Affine(s, bias - mean * s)
