"""A fast path for fused bodies: one kernel and one compiled epilogue pass: Conv, ConvTranspose, MatMul or
BatchNormalization, then adds and an activation.

Interpreted op by op, a FusedConv body is the Conv's GEMM and then a numpy pass over its result for the
bias, another for the residual and another for the activation (on SqueezeNet and ShuffleNet the Relu passes
alone were 10-13% of a run); a UB group BatchNormalization + Relu (DenseNet's pre-activations) is three
passes and two fresh maps. Here the head runs once (the Conv's GEMM; BatchNormalization's x * k, its
per-channel scale) and the rest is one compiled pass (ops/epilogue.py), as a fused kernel on GE (or
ONNX Runtime's MLAS) runs it. The arithmetic is the body ops' own, in the same order and dtype, so the result
is bit for bit the body loop's.

A MatMul head is a linear layer (FullyConnection, a UB group MatMul + bias + residual of a transformer
block, or such a group around a FullyConnection): its bias is one value per output feature (the last axis).
An activation with no epilogue form (Gelu, Sigmoid, Tanh ...) may end the body: its own kernel then runs on
the epilogue's result, as the loop would call it. On the small linear layers of BERT and the CRNN the loop's
per-op work was most of their time (BERT: (1, 128, 64) @ (64, 64) + bias took 20-26 us a body, the product
~5 us; in-process A/B of the planner with and without these: BERT 1.147 -> 1.032 ms, CRNN 1.851 -> 1.711).

The body loop stays the reference: the interpreter takes this path only when it calls kernels as they are
registered (an override of `call_kernel`, such as a precision mode rounding each body op, sees every op),
only for bodies with known dims, and falls back to the loop whenever the pass cannot run (float16, numba
off). Which ops fit is an OpDef fact (`epilogue`): Add and two-input Sum add an operand; Relu, LeakyRelu,
Clip, HardSigmoid and HardSwish are activations; any other op marked `activation` may end a body as its own
kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.kernels import epilogue
from ge_core.kernels.conv import conv_transpose_with_epilogue, conv_with_epilogue
from ge_core.kernels.registry import FAST_PATHS, BodyPath
from ge_core.ops.epilogue import Act, Epilogue
from ge_core.ops.norm import batch_norm_affine, batch_norm_is_per_channel
from ge_core.ops.registry import KernelFn, OpDef, OpRegistry

# Heads that produce a fresh accumulator and take the epilogue themselves: (node, inputs, residual, bias,
# ending) -> the body's output, or None when the compiled pass cannot run.
HEADS = {"Conv": conv_with_epilogue, "ConvTranspose": conv_transpose_with_epilogue}


@dataclass(frozen=True)
class EpiloguePlan:
    """What a fused body computes: its head node, and what the epilogue adds after it (by tensor name)."""

    head: Node  # a Conv, a ConvTranspose, a MatMul or an inference BatchNormalization
    bias: str | None  # an Add's operand: one value per output channel (Conv, ConvTranspose) or feature (MatMul)
    residual: str | None  # an Add's operand of the head output's shape
    ending: Epilogue
    tail: Node | None = None  # a last activation with no epilogue form, run as its own kernel
    head_kernel: KernelFn | None = None  # a MatMul head's (Conv heads and BatchNormalization have their own)
    tail_kernel: KernelFn | None = None

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
        y = self._head_and_epilogue(inputs, x, bias, residual)
        if y is None or self.tail is None:
            return None if y is None else [y]
        assert self.tail_kernel is not None
        return self.tail_kernel(self.tail, [y, *(value(t) if t else None for t in self.tail.inputs[1:])])

    def _head_and_epilogue(self, inputs: list[np.ndarray | None], x: np.ndarray, bias: np.ndarray | None,
                           residual: np.ndarray | None) -> np.ndarray | None:
        if self.head.op_type in HEADS:
            return HEADS[self.head.op_type](self.head, inputs, residual, bias, self.ending)
        if self.head_kernel is not None:  # MatMul: a fresh product, then the epilogue along its last axis
            y = self.head_kernel(self.head, inputs)[0]
            if not (y.flags.c_contiguous and y.flags.writeable and y.dtype == x.dtype and y.ndim >= 2):
                return None
            if bias is not None or residual is not None or self.ending.act != Act.NONE:
                epilogue.apply(y, bias, residual, self.ending, bias_axis=-1)
            return y
        k, shift = batch_norm_affine(self.head, inputs)
        if k.dtype != x.dtype:
            return None
        if k.size != x.shape[1] or x.ndim < 2:  # per activation (opset < 9, spatial=0): numpy's product
            y = x * k  # the kernel's own first step; then its `+= shift` and the rest in one pass
            epilogue.apply(y, shift, residual, self.ending)
            return y
        return epilogue.scaled(x, k, shift, residual, self.ending)  # x * k and the rest in one pass


def plan_body_epilogue(body: Graph, registry: OpRegistry) -> EpiloguePlan | None:
    """The plan when `body` is a chain head (-> Add) (-> Add) (-> activation), each step reading only the one
    before it, the ops after the head with an epilogue form, the last one possibly any activation; None for
    any other body (or unknown dims)."""
    nodes = body.nodes
    if not nodes or len(body.outputs) != 1 or len(nodes[0].outputs) != 1:
        return None
    linear = _fused_linear(nodes[0], registry)
    if linear is None and not _head_ok(body, nodes[0]):
        return None
    head, bias = linear if linear is not None else (nodes[0], None)
    out = body.desc(nodes[0].outputs[0])
    if not out.is_static:
        return None
    current, residual, ending, tail = nodes[0].outputs[0], None, None, None
    for node in nodes[1:]:
        op = registry.get(node.op_type, node.domain)
        if op is None or ending is not None or tail is not None or len(node.outputs) != 1 \
                or body.num_uses(current) != 1 or body.is_output(current):
            return None
        form = None if op.epilogue is None else op.epilogue(node, [body.constants.get(t) for t in node.inputs])
        if form is not None and form.adds:
            others = [t for t in node.inputs if t != current]
            if len(node.inputs) != 2 or len(others) != 1:
                return None
            shape = body.desc(others[0]).shape
            if _bias_shape(head, shape, out.shape, registry) and bias is None and residual is None:
                bias = others[0]
            elif shape == out.shape and residual is None and others[0] in body.inputs:
                residual = others[0]
            else:
                return None
        elif node.inputs[0] == current and current not in node.inputs[1:] and (form is not None or op.activation):
            ending, tail = (form, None) if form is not None else (None, node)
        else:
            return None
        current = node.outputs[0]
    if current != body.outputs[0] or len(nodes) < 2:
        return None
    head_kernel = _kernel(registry, head) if head.op_type == "MatMul" else None
    return EpiloguePlan(head, bias, residual, ending or Epilogue(), tail, head_kernel,
                        None if tail is None else _kernel(registry, tail))


def _fused_linear(node: Node, registry: OpRegistry) -> tuple[Node, str] | None:
    """A fused node whose own body is a MatMul and its bias (a FullyConnection that UB fusion grouped with a
    residual Add, in BERT's blocks): that MatMul and the bias, whose tensor names a body keeps from the
    graph it was cut from, so they are the enclosing body's too. None for anything else."""
    if node.body is None or node.domain != "ge":
        return None
    inner = plan_body_epilogue(node.body, registry)
    if inner is None or inner.head.op_type != "MatMul" or inner.bias is None or inner.residual is not None \
            or inner.tail is not None or inner.ending != Epilogue():
        return None
    if not all(t in node.inputs for t in (*inner.head.inputs, inner.bias)):
        return None
    return inner.head, inner.bias


def _kernel(registry: OpRegistry, node: Node) -> KernelFn:
    """The node's kernel as the interpreter calls it: its fast paths first, then its reference kernel."""
    op = registry.get(node.op_type, node.domain)
    assert op is not None

    def call(node: Node, args: list[np.ndarray | None], op: OpDef = op) -> list[np.ndarray]:
        return FAST_PATHS.call(node, op, args)

    return call


def _bias_shape(head: Node, shape: Sequence[int], out: Sequence[int], registry: OpRegistry) -> bool:
    """An Add operand the head's epilogue can take as its bias: one value per channel along the head's channel
    axis (OpDef.channel_axis: a Conv's or ConvTranspose's 1, a MatMul's last), after a Conv or ConvTranspose
    without its own bias or after a MatMul."""
    if head.op_type != "MatMul" and (head.op_type not in HEADS or head.input(2)):
        return False
    axis = registry.channel_axis(head, len(out))
    return axis is not None and _per_channel(shape, out, axis)


def _head_ok(body: Graph, head: Node) -> bool:
    """A Conv or ConvTranspose, a MatMul of matrices (or batches of them), or an inference BatchNormalization
    with per-channel statistics, of known dims."""
    out = body.desc(head.outputs[0]) if head.outputs else None
    if out is None or not out.is_static or head.domain:
        return False
    if head.op_type == "MatMul":
        return out.rank >= 2 and all(body.desc(t).rank >= 2 for t in head.inputs)
    if out.rank < 3:
        return False
    if head.op_type in HEADS:
        return True
    return head.op_type == "BatchNormalization" and len(head.outputs) == 1 and batch_norm_is_per_channel(head) \
        and not (head.opset >= 14 and int(head.attr("training_mode", 0)) == 1)


def _per_channel(shape: Sequence[int], out: Sequence[int], axis: int) -> bool:
    """A shape that broadcasts over `out` as one value per channel along `axis`: the channel count there and 1
    everywhere else (N x C x H x W: (1,) C, 1, 1; ... x N: (1, ...) N). Leading 1s may be left out, the channel
    axis may not."""
    lead = len(out) - len(shape)
    return 0 <= lead <= axis and all(d == (out[axis] if i + lead == axis else 1) for i, d in enumerate(shape))


PATHS = [BodyPath("FusedBody.epilogue", plan_body_epilogue,
                  "a Conv/ConvTranspose/MatMul/BatchNormalization body as one kernel and one epilogue pass")]
