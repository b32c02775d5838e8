"""No-copy Concat (GE's continuous memory / ConcatNotaskPass): inputs written straight into the output.

A Concat whose output is one contiguous run of its inputs' bytes — every dim before the axis is 1, so
input i is the byte range [k_i, k_i + nbytes_i) of the output — needs no kernel: each producer writes its
tensor at the output's offset + k_i and the Concat step becomes "no task". Its inputs are then *parts* of
the output: they share one block, which removes the copy and the second live copy of the features
(DenseNet's growing concats hold half the bytes).

A Concat qualifies only when every input can be pinned to its slice:
- every input is an activation of a numeric dtype of whole bytes (graph inputs and constants live outside
  the arena; packed int4/int2/float4 parts could start mid-byte),
  not a view (its bytes are another tensor's) and not a part of another no-copy Concat already;
- no tensor is concatenated twice, and no two inputs share a view root;
- every slice starts on the alignment (the arena's addresses are aligned; so are the parts').
"""

from __future__ import annotations

import math

from ge_core.ir.dtypes import dtype_bits
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.memory.lifetimes import Lifetimes

Parts = dict[str, tuple[str, int]]  # part tensor -> (Concat output holding it, byte offset inside it)
NON_ARENA_DTYPES = ("str", "undefined")  # the arena executor keeps these outside the arena


def find_no_copy_concats(graph: Graph, lt: Lifetimes, alignment: int) -> Parts:
    """Every qualifying Concat's inputs, pinned to their byte offsets in its output (in execution order)."""
    parts: Parts = {}
    for node in lt.steps:
        if node.op_type == "Concat" and node.domain in ("", "ai.onnx"):
            slices = _slices(node, graph, lt, alignment, parts)
            if slices is not None:
                parts.update(slices)
    return parts


def no_task_concats(parts: Parts, lt: Lifetimes) -> set[str]:
    """Names of the Concat nodes whose output holds parts (they launch no kernel)."""
    return {lt.tensors[container].producer for container, _ in parts.values()}


def _slices(node: Node, graph: Graph, lt: Lifetimes, alignment: int, parts: Parts) -> Parts | None:
    out = node.outputs[0] if node.outputs else ""
    if out not in lt.tensors or out in lt.aliases or not _byte_addressed(lt.tensors[out].dtype):
        return None
    shape = lt.tensors[out].shape
    axis = int(node.attrs.get("axis", 0))
    axis = axis + len(shape) if axis < 0 else axis
    if not 0 <= axis < len(shape) or math.prod(shape[:axis]) != 1:
        return None  # slices would be strided, not contiguous
    inputs = list(node.inputs)
    if len(set(inputs)) != len(inputs) or len({lt.root(t) if t in lt.tensors else t for t in inputs}) != len(inputs):
        return None
    slices: Parts = {}
    offset = 0
    for t in inputs:
        if not _can_be_part(t, lt, parts) or offset % alignment:
            return None
        slices[t] = (out, offset)
        offset += lt.tensors[t].nbytes
    return slices if offset == lt.tensors[out].nbytes else None


def _can_be_part(tensor: str, lt: Lifetimes, parts: Parts) -> bool:
    life = lt.tensors.get(tensor)
    return (life is not None and tensor not in lt.aliases and tensor not in parts
            and _byte_addressed(life.dtype))


def _byte_addressed(dtype: str) -> bool:
    """Held in the arena with whole bytes per element: packed sub-byte parts would start mid-byte."""
    return dtype not in NON_ARENA_DTYPES and dtype_bits(dtype) >= 8
