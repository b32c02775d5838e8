"""Shape/dtype inference over a whole graph through the op registry, with small-value propagation.

Values of small tensors computed from constants (Shape of a static tensor, the Concat/Gather chains that
build Reshape targets in exported models) are propagated so that data-dependent shapes resolve. All
problems are collected, not just the first: a failed node leaves its outputs without a desc and the
nodes downstream of it are skipped rather than reported again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ge_core.errors import GEError, ShapeError, quote
from ge_core.ir.graph import Graph
from ge_core.ir.limits import check_tensor_size
from ge_core.ir.limits import max_tensor_bytes as default_max_tensor_bytes
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc, known_dtype
from ge_core.ops.registry import OpDef, Operand, OpRegistry

# Known values are kept for tensors up to this many elements (shape tensors, small constants).
MAX_VALUE_ELEMENTS = 1 << 16


@dataclass
class InferResult:
    descs: dict[str, TensorDesc] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    errors: list[GEError] = field(default_factory=list)


def infer_graph(graph: Graph, registry: OpRegistry, *, apply: bool = True,
                max_tensor_bytes: int | None = None) -> InferResult:
    """Infer every node's output descs in order. With apply=True the graph's descs are updated."""
    result = InferResult()
    limit = default_max_tensor_bytes() if max_tensor_bytes is None else max_tensor_bytes  # read once, not per node
    descs = {t: graph.descs[t] for t in list(graph.inputs) + list(graph.constants) if t in graph.descs}
    values = {t: a for t, a in graph.constants.items() if a.size <= MAX_VALUE_ELEMENTS}
    for node in graph.nodes:
        op = registry.for_node(node)
        if op is None or any(t and t not in descs for t in node.inputs):
            continue  # unsupported (reported by the legality check) or downstream of a failure
        operands = [Operand(descs[t], values.get(t)) if t else None for t in node.inputs]
        try:
            outs = _infer_node(node, op, operands, limit)
        except GEError as err:
            # a ShapeError's hint is generic; the list gets one hint at its end
            result.problems.append(err.message if isinstance(err, ShapeError) else str(err))
            result.errors.append(err)
            continue
        for t, d in zip(node.outputs, outs, strict=False):
            if t:
                descs[t] = d
        _propagate_values(node, op, operands, outs, values)
    result.descs, result.values = descs, values
    if apply:
        for t, d in descs.items():
            graph.set_desc(t, d)
    return result


def _infer_node(node: Node, op: OpDef, operands: list[Operand | None], limit: int) -> list[TensorDesc]:
    try:
        outs = op.infer(node, operands)
    except GEError:
        raise
    except Exception as exc:  # an op's infer tripping over a malformed attribute is still the model's fault
        shapes = [o.desc.shape if o else None for o in operands]
        raise ShapeError(node.name, node.op_type, shapes, f"invalid attributes or inputs ({exc})") from exc
    if len(outs) < len([t for t in node.outputs if t]):
        raise ShapeError(node.name, node.op_type, [o.desc.shape if o else None for o in operands],
                         f"declares {len(node.outputs)} outputs but the operator produces {len(outs)}")
    for t, d in zip(node.outputs, outs, strict=False):
        if t and not known_dtype(d.dtype):  # e.g. passed through from an input of no known element type
            raise ShapeError(node.name, node.op_type, [o.desc.shape if o else None for o in operands],
                             f"output {quote(t)} has no known element type ({d.dtype}): check the types of "
                             "its inputs")
        if t and d.is_static:
            check_tensor_size(f"tensor '{t}' (output of node '{node.name}', {node.op_type})",
                              d.shape, d.dtype, limit=limit)
    return outs[: len(node.outputs)]


def _propagate_values(node: Node, op: OpDef, operands: list[Operand | None], outs: list[TensorDesc],
                      values: dict[str, np.ndarray]) -> None:
    if not op.foldable:
        return
    if op.value is not None:
        computed = op.value(node, operands)
    else:
        if any(o is not None and o.value is None for o in operands):
            return
        if any(not d.is_static or (d.numel or 0) > MAX_VALUE_ELEMENTS for d in outs):
            return
        try:
            computed = list(op.kernel(node, [o.value if o is not None else None for o in operands]))
        except Exception:  # folding is an optimisation of inference; the executor reports real failures
            return
    for t, v in zip(node.outputs, computed, strict=False):
        if t and v is not None and np.asarray(v).size <= MAX_VALUE_ELEMENTS:
            values[t] = np.asarray(v)


def shape_problems(graph: Graph, registry: OpRegistry) -> list[str]:
    """For verify(): re-infer every node and compare with the descs the graph holds."""
    fresh = infer_graph(graph, registry, apply=False)
    problems = list(fresh.problems)
    for node in graph.nodes:
        for t in node.outputs:
            have, want = graph.descs.get(t), fresh.descs.get(t)
            if have is None or want is None:
                continue
            if have.dtype != want.dtype or not _shapes_agree(have.shape, want.shape):
                problems.append(f"node '{node.name}' ({node.op_type}): output '{t}' is {have.text()} but "
                                f"the operator infers {want.text()}")
    return problems


def _shapes_agree(have: tuple[int, ...], want: tuple[int, ...]) -> bool:
    return len(have) == len(want) and all(a == b or a < 0 or b < 0 for a, b in zip(have, want, strict=True))
