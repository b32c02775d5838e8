"""The vector work of one op: how many vector repeats it issues, of which instruction class.

One vector repeat processes `vector_bytes_per_cycle` bytes (256 B: 64 fp32 or 128 fp16 lanes) and takes
`class_cycles[class]` cycles (profile data: simple arithmetic 1, transcendental functions more, reductions
and data reordering in between). An op issues one pass of repeats over its elements per FLOP it costs per
element (the registry's cost: Gelu is 8 FLOPs per element, Relu 1), at least one pass; a data-moving op
one pass. The class is a fact of the op (OpDef.vector_class).
"""

from __future__ import annotations

from collections.abc import Sequence

from ge_core.hardware.profile import HardwareProfile
from ge_core.hardware.sizes import shape_numel
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.registry import OpDef, VectorClass


def vector_cycles_of(op: OpDef | None, ins: Sequence[TensorDesc | None], outs: Sequence[TensorDesc],
                     flops: int, share: float, p: HardwareProfile, float_bytes: int | None) -> float:
    """Vector cycles of an op (its registry op: None if unknown) on one core doing `share` (0..1] of its
    elements, from the descs of its tensors (None: an omitted optional input); `outs` of one output alone
    for a cube op's epilogue (the bias add on C, not on the weights). `float_bytes` overrides the width of
    float data (2 when a precision mode runs vector ops in fp16)."""
    elements = 0
    for d in (*ins, *outs):
        if d is not None:
            n = shape_numel(d.shape) or 0
            if n > elements:
                elements = n
    if elements == 0:
        return 0.0
    itemsize = 4
    if outs:
        out = outs[0]
        itemsize = out.itemsize
        if float_bytes is not None and itemsize == 4 and out.dtype.startswith("float"):
            itemsize = float_bytes
    cls = instruction_class_of(op)
    passes = 1 if cls == VectorClass.DATA_MOVE else max(1, -(-flops // elements))
    repeats = -(-int(elements * share * itemsize) // p.vector_bytes_per_cycle)
    return float(repeats * passes * p.vector_class_cycles[cls])


def instruction_class_of(op: OpDef | None) -> VectorClass:
    """The vector instruction class of an op (`op`: its registry op; an unknown op counts as elementwise)."""
    if op is None or op.vector_class is None:
        return VectorClass.ELEMENTWISE
    return op.vector_class
