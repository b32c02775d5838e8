"""TransData (domain `ge`): GE's layout conversion between tensor formats, e.g. NCHW <-> NC1HWC0.

The NPU lowering (ge_core/passes/npu) puts one at every format boundary. On the CPU arrays always stay in
their origin layout (ir/formats.py), so the kernel passes the values through unchanged; the format change
lives in the descs: the output takes `dst_format`, and the cost is the device bytes read in `src_format`
and written in `dst_format` (padding C to 16 is what makes an NCHW image expensive to convert).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import operand, require_inputs
from ge_core.ops.registry import Category, Cost, OpDef, Operand, VectorClass

DOMAIN = "ge"


def _infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    dst = str(node.attr("dst_format", x.format))
    origin_format = x.origin_format or str(node.attr("src_format", x.format))
    return [replace(x, format=dst, origin_shape=x.origin_shape or x.shape, origin_format=origin_format)]


def _kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    return [x]  # values stay in the origin layout on the CPU: only the device format changes


def _cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """No arithmetic: every device byte is read in the source format and written in the destination one."""
    read = sum(d.device_nbytes or 0 for d in inputs if d is not None)
    return Cost(0, read, sum(d.device_nbytes or 0 for d in outputs))


OPS = [
    # A real kernel on the NPU (an own output buffer, a launch), so neither a view nor fusable in place.
    OpDef("TransData", Category.INJECTIVE, _infer, _kernel, _cost, domain=DOMAIN, foldable=False,
          doc="layout conversion between formats (NCHW <-> NC1HWC0)",
          vector_class=VectorClass.DATA_MOVE, device_bytes=True),
]
