"""Fused bodies run as one kernel and one compiled epilogue pass: Conv, ConvTranspose or BatchNormalization,
then adds and an activation.

Interpreted op by op, a FusedConv body is the Conv's GEMM and then a numpy pass over its result for the
bias, another for the residual and another for the activation (on SqueezeNet and ShuffleNet the Relu passes
alone were 10-13% of a run); a UB group BatchNormalization + Relu (DenseNet's pre-activations) is three
passes and two fresh maps. Here the head runs once (the Conv's GEMM; BatchNormalization's x * k, its
per-channel scale) and the rest is one compiled pass (ops/epilogue.py), as a fused kernel on GE (or
ONNX Runtime's MLAS) runs it. The arithmetic is the body ops' own, in the same order and dtype, so the result
is bit for bit the body loop's.

The body loop stays the reference: the interpreter takes this path only when it calls kernels as they are
registered (an override of `call_kernel`, such as a precision mode rounding each body op, sees every op),
only for bodies with known dims, and falls back to the loop whenever the pass cannot run (float16, numba
off). Which ops fit is an OpDef fact (`epilogue`): Add and two-input Sum add an operand; Relu, LeakyRelu,
Clip, HardSigmoid and HardSwish are activations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import epilogue
from ge_core.ops.conv import conv_transpose_with_epilogue, conv_with_epilogue
from ge_core.ops.epilogue import Epilogue
from ge_core.ops.norm import batch_norm_affine, batch_norm_is_per_channel
from ge_core.ops.registry import OpRegistry

# Heads that produce a fresh accumulator and take the epilogue themselves: (node, inputs, residual, bias,
# ending) -> the body's output, or None when the compiled pass cannot run.
HEADS = {"Conv": conv_with_epilogue, "ConvTranspose": conv_transpose_with_epilogue}


@dataclass(frozen=True)
class EpiloguePlan:
    """What a fused body computes: its head node, and what the epilogue adds after it (by tensor name)."""

    head: Node  # a Conv, a ConvTranspose or an inference BatchNormalization
    bias: str | None  # an Add's operand with one value per output channel (Conv/ConvTranspose heads only)
    residual: str | None  # an Add's operand of the head output's shape
    ending: Epilogue

    def run(self, body: Graph, args: Sequence[np.ndarray | None]) -> list[np.ndarray] | None:
        """The body's one output, or None when the compiled pass cannot run on these values."""
        feeds = dict(zip(body.inputs, args, strict=True))

        def value(t: str) -> np.ndarray:
            known = feeds.get(t)
            return body.constants[t] if known is None else known

        inputs = [value(t) if t else None for t in self.head.inputs]
        x = inputs[0]
        assert x is not None
        bias = None if self.bias is None else value(self.bias)
        residual = None if self.residual is None else value(self.residual)
        if not epilogue.runs_on(x.dtype) or any(v is not None and v.dtype != x.dtype for v in (bias, residual)):
            return None
        if self.head.op_type in HEADS:
            y = HEADS[self.head.op_type](self.head, inputs, residual, bias, self.ending)
            return None if y is None else [y]
        k, shift = batch_norm_affine(self.head, inputs)
        if k.dtype != x.dtype:
            return None
        y = x * k  # the kernel's own first step; then its `+= shift` and the rest in one pass
        epilogue.apply(y, shift, residual, self.ending)
        return [y]


def plan_body_epilogue(body: Graph, registry: OpRegistry) -> EpiloguePlan | None:
    """The plan when `body` is a chain head (-> Add) (-> Add) (-> activation), each step reading only the one
    before it, the ops after the head with an epilogue form; None for any other body (or unknown dims)."""
    nodes = body.nodes
    if not nodes or len(body.outputs) != 1 or not _head_ok(body, nodes[0]):
        return None
    head = nodes[0]
    out = body.desc(head.outputs[0])
    current, bias, residual, ending = head.outputs[0], None, None, None
    for node in nodes[1:]:
        op = registry.get(node.op_type, node.domain)
        form = None if op is None or op.epilogue is None else \
            op.epilogue(node, [body.constants.get(t) for t in node.inputs])
        if form is None or ending is not None or len(node.outputs) != 1 or body.num_uses(current) != 1 \
                or body.is_output(current):
            return None
        if form.adds:
            others = [t for t in node.inputs if t != current]
            if len(node.inputs) != 2 or len(others) != 1:
                return None
            shape = body.desc(others[0]).shape
            if _per_channel(shape, out.shape) and bias is None and residual is None and head.op_type in HEADS \
                    and not head.input(2):
                bias = others[0]
            elif shape == out.shape and residual is None and others[0] in body.inputs:
                residual = others[0]
            else:
                return None
        elif node.inputs[0] == current:
            ending = form
        else:
            return None
        current = node.outputs[0]
    if current != body.outputs[0] or len(nodes) < 2:
        return None
    return EpiloguePlan(head, bias, residual, ending or Epilogue())


def _head_ok(body: Graph, head: Node) -> bool:
    """A Conv or ConvTranspose, or an inference BatchNormalization with per-channel statistics, of known dims."""
    out = body.desc(head.outputs[0]) if head.outputs else None
    if out is None or not out.is_static or out.rank < 3 or head.domain:
        return False
    if head.op_type in HEADS:
        return True
    return head.op_type == "BatchNormalization" and len(head.outputs) == 1 and batch_norm_is_per_channel(head) \
        and not (head.opset >= 14 and int(head.attr("training_mode", 0)) == 1)


def _per_channel(shape: Sequence[int], out: Sequence[int]) -> bool:
    """A shape that broadcasts over an N x C x ... output as one value per channel: (1,) C, 1, ..."""
    shape = tuple(shape)
    if len(shape) == len(out) and shape[0] == 1:
        shape = shape[1:]
    return len(shape) == len(out) - 1 and shape[0] == out[1] and all(d == 1 for d in shape[1:])
