"""Loss ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (NLL over LogSoftmax along axis 1).

input is [N, C, d1, ..., dk], target [N, d1, ..., dk] holds class indices; the optional weight [C] scales
each class. An element whose target equals ignore_index contributes 0 and does not count in the mean.
reduction "none" keeps target's shape; "sum" and "mean" (the weighted mean: sum(w * l) / sum(w)) give a
scalar. Both are OPAQUE: a gather by class index followed by a full reduction.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import io_bytes, like, make_desc, operand, optional, require_inputs, shape_error
from ge_core.ops.math import FLOATS, check_dtype
from ge_core.ops.registry import Category, Cost, OpDef, Operand, VectorClass

REDUCTIONS = ("none", "sum", "mean")


def _infer_loss(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    """Checks input / target / weight against each other; the loss (and SCE's log_prob) descs."""
    require_inputs(node, operands, 2, 3)
    x, target = operand(node, operands, 0).desc, operand(node, operands, 1).desc
    check_dtype(node, operands, x.dtype, FLOATS, "input")
    if target.dtype not in ("int32", "int64"):
        raise shape_error(node, operands, f"target must be int32 or int64, got {target.dtype}")
    if x.rank < 2:
        raise shape_error(node, operands, f"input must be [N, C, d1...] (rank >= 2), got rank {x.rank}")
    want = (x.shape[0], *x.shape[2:])
    if target.rank != len(want) or any(a >= 0 and b >= 0 and a != b for a, b in zip(target.shape, want, strict=True)):
        raise shape_error(node, operands, f"target must have shape {list(want)} (input's without C), "
                                          f"got {list(target.shape)}")
    weight = optional(operands, 2)
    if weight is not None:
        c = x.shape[1]
        if weight.desc.dtype != x.dtype or weight.desc.rank != 1 or (c >= 0 and weight.desc.shape[0] not in (c, -1)):
            raise shape_error(node, operands, f"weight must be a 1-D {x.dtype} tensor of C={c} values, got "
                                              f"{weight.desc.text()}")
    reduction = str(node.attr("reduction", "mean"))
    if reduction not in REDUCTIONS:
        raise shape_error(node, operands, f"reduction {reduction!r} is not one of {', '.join(REDUCTIONS)}")
    loss = like(x, target.shape) if reduction == "none" else make_desc((), x.dtype)
    return [loss, like(x)] if node.op_type == "SoftmaxCrossEntropyLoss" else [loss]


def _nll(node: Node, inputs: list[np.ndarray | None], log_prob: np.ndarray) -> np.ndarray:
    """The negative log-likelihood of log_prob [N, C, ...] at the target classes, weighted and reduced."""
    target, weight = inputs[1], inputs[2] if len(inputs) > 2 else None
    assert target is not None
    t = target.astype(np.int64)
    ignore = node.attr("ignore_index")
    valid = np.ones(t.shape, dtype=bool) if ignore is None else t != int(ignore)
    c = log_prob.shape[1]
    bad = valid & ((t < 0) | (t >= c))
    if bad.any():
        raise ExecutionError(node.name, node.op_type, [None if a is None else list(a.shape) for a in inputs],
                             f"target {int(t[bad][0])} is not a class index in [0, {c}) nor ignore_index.")
    safe = np.where(valid, t, 0)
    picked = np.take_along_axis(log_prob, safe[:, None], axis=1)[:, 0]
    w = np.ones(t.shape, dtype=log_prob.dtype) if weight is None else weight.astype(log_prob.dtype)[safe]
    w = np.where(valid, w, 0).astype(log_prob.dtype)
    loss = -picked * w
    reduction = str(node.attr("reduction", "mean"))
    if reduction == "sum":
        return np.asarray(loss.sum())
    if reduction == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(loss.sum() / w.sum())
    return loss


def _work(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype.itemsize < 4 else x


def _nll_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    return [_nll(node, inputs, _work(x)).astype(x.dtype)]


def _log_softmax(x: np.ndarray) -> np.ndarray:
    shifted = x - np.max(x, axis=1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))


def _sce_kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    log_prob = _log_softmax(_work(x))
    return [_nll(node, inputs, log_prob).astype(x.dtype), log_prob.astype(x.dtype)]


def _loss_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """NLL: a gather, a multiply and an add per target element; SCE adds LogSoftmax's ~5 per score."""
    x, target = inputs[0], inputs[1]
    n_target = math.prod(target.shape) if target is not None and target.is_static else 0
    n_scores = (x.numel or 0) if x is not None else 0
    softmax = 5 * n_scores if node.op_type == "SoftmaxCrossEntropyLoss" else 0
    read, written = io_bytes(inputs, outputs)
    return Cost(3 * n_target + softmax, read, written)


OPS: list[OpDef] = [
    # -input[n, target[n, d], d] * weight[target], ignore_index skipped; none / sum / weighted mean
    OpDef("NegativeLogLikelihoodLoss", Category.OPAQUE, _infer_loss, _nll_kernel, _loss_cost,
          doc="negative log-likelihood loss"),
    # NLL of LogSoftmax(scores) along axis 1; the optional second output is that log_prob
    OpDef("SoftmaxCrossEntropyLoss", Category.OPAQUE, _infer_loss, _sce_kernel, _loss_cost,
          doc="softmax cross-entropy loss", vector_class=VectorClass.TRANSCENDENTAL),
]
