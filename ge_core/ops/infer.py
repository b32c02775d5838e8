"""Shape/dtype inference over a whole graph through the op registry, with small-value propagation.

Values of small tensors computed from constants (Shape of a static tensor, the Concat/Gather chains that
build Reshape targets in exported models) are propagated so that data-dependent shapes resolve. All
problems are collected, not just the first: a failed node leaves its outputs without a desc and the
nodes downstream of it are skipped rather than reported again.

A control-flow node's op infers through its subgraphs (OpDef.infer_subgraphs) with a callback from here
that infers one subgraph: its formal inputs as the op says, its captured tensors as the enclosing graph
has them. With apply=True the subgraphs' descs are applied too; the fresh descs of every subgraph are kept
in the result either way (verify() compares them with what the subgraphs hold).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from ge_core.errors import GEError, ShapeError, quote
from ge_core.ir.graph import Graph
from ge_core.ir.limits import check_tensor_size
from ge_core.ir.limits import max_tensor_bytes as default_max_tensor_bytes
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc, known_dtype
from ge_core.ops.evaluate import evaluate
from ge_core.ops.registry import InferSubgraph, OpDef, Operand, OpRegistry

SubgraphDescs = dict[int, tuple[Graph, dict[str, TensorDesc]]]
# Known values are kept for tensors up to this many elements (shape tensors, small constants).
MAX_VALUE_ELEMENTS = 1 << 16


@dataclass
class InferResult:
    descs: dict[str, TensorDesc] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    errors: list[GEError] = field(default_factory=list)
    # id(subgraph) -> (subgraph, its freshly inferred descs), for every subgraph inferred on the way
    subgraphs: SubgraphDescs = field(default_factory=dict)


def infer_graph(graph: Graph, registry: OpRegistry, *, apply: bool = True, max_tensor_bytes: int | None = None,
                seed: Mapping[str, Operand] | None = None, subgraphs: SubgraphDescs | None = None) -> InferResult:
    """Infer every node's output descs in order. With apply=True the graph's descs are updated. `seed` gives
    inputs and captured tensors other descs (and values) than the graph holds (a subgraph's, from its node);
    `subgraphs` collects the fresh descs of nested subgraphs (shared by the whole walk)."""
    result = InferResult()
    if subgraphs is not None:
        result.subgraphs = subgraphs
    limit = default_max_tensor_bytes() if max_tensor_bytes is None else max_tensor_bytes  # read once, not per node
    descs = {t: graph.descs[t] for t in (*graph.inputs, *graph.constants, *graph.captures) if t in graph.descs}
    values = {t: a for t, a in graph.constants.items() if a.size <= MAX_VALUE_ELEMENTS}
    for t, operand in (seed or {}).items():
        descs[t] = operand.desc
        if operand.value is not None and operand.value.size <= MAX_VALUE_ELEMENTS:
            values[t] = operand.value
    for node in graph.nodes:
        op = registry.for_node(node)
        if op is None or any(t and t not in descs for t in node.inputs):
            continue  # unsupported (reported by the legality check) or downstream of a failure
        operands = [Operand(descs[t], values.get(t)) if t else None for t in node.inputs]
        try:
            if op.infer_subgraphs is not None:
                driver = _Subgraphs(node, operands, registry, apply, limit, result.subgraphs)
                known = _infer_control(node, op, operands, driver, limit)
                for t, o in zip(node.outputs, known, strict=False):
                    descs[t] = o.desc
                    if o.value is not None and o.value.size <= MAX_VALUE_ELEMENTS:
                        values[t] = o.value
                continue
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
    return _checked(node, operands, _guarded(node, operands, lambda: op.infer(node, operands)), limit)


def _infer_control(node: Node, op: OpDef, operands: list[Operand | None], driver: InferSubgraph,
                   limit: int) -> list[Operand]:
    """A control-flow node's outputs (with values when known: an If on a constant condition)."""
    fn = op.infer_subgraphs
    assert fn is not None
    explicit = operands[: len(operands) - node.num_captures]
    known = _guarded(node, operands, lambda: fn(node, explicit, driver))
    _checked(node, operands, [o.desc for o in known], limit)
    return known[: len(node.outputs)]


T = TypeVar("T")


def _guarded(node: Node, operands: list[Operand | None], call: Callable[[], T]) -> T:
    try:
        return call()
    except GEError:
        raise
    except Exception as exc:  # an op's infer tripping over a malformed attribute is still the model's fault
        shapes = [o.desc.shape if o else None for o in operands]
        raise ShapeError(node.name, node.op_type, shapes, f"invalid attributes or inputs ({exc})") from exc


def _checked(node: Node, operands: list[Operand | None], outs: list[TensorDesc], limit: int) -> list[TensorDesc]:
    """The op's output descs, as many as the node declares, each of a known dtype and an allowed size."""
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
    """Keep the values of a small node computed from known values (a value for a static desc only)."""
    computed = evaluate(node, op, operands, outs, MAX_VALUE_ELEMENTS)
    for t, d, v in zip(node.outputs, outs, computed or (), strict=False):
        if t and d.is_static:
            values[t] = v


class _Subgraphs:
    """Infers the subgraphs of one control-flow node for its op (an InferSubgraph): formal inputs as the op
    gives them, captured tensors as the enclosing graph has them; problems inside name the subgraph."""

    def __init__(self, node: Node, operands: list[Operand | None], registry: OpRegistry, apply: bool, limit: int,
                 fresh: SubgraphDescs) -> None:
        self.node, self.registry, self.apply, self.limit, self.fresh = node, registry, apply, limit, fresh
        self.shapes = [o.desc.shape if o else None for o in operands]
        self.captured = {t: o for t, o in zip(node.captures, operands[len(operands) - node.num_captures:],
                                              strict=True) if o is not None}

    def __call__(self, attr: str, formal: list[Operand]) -> list[Operand]:
        node = self.node
        sub = node.subgraphs.get(attr)
        if sub is None:
            raise ShapeError(node.name, node.op_type, self.shapes, f"it has no subgraph '{attr}'")
        if len(formal) != len(sub.inputs):
            raise ShapeError(node.name, node.op_type, self.shapes, f"its {attr} takes {len(sub.inputs)} inputs "
                             f"but the op gives it {len(formal)}")
        seed = dict(zip(sub.inputs, formal, strict=True))
        missing = [t for t in sub.captures if t not in self.captured]
        if missing:
            raise ShapeError(node.name, node.op_type, self.shapes, f"its {attr} reads {missing}, which the "
                             "node does not capture")
        seed.update((t, self.captured[t]) for t in sub.captures)
        result = infer_graph(sub, self.registry, apply=self.apply, max_tensor_bytes=self.limit, seed=seed,
                             subgraphs=self.fresh)
        problems = result.problems or [f"output '{t}' has no inferred desc" for t in sub.outputs
                                       if t not in result.descs][:1]
        if problems:
            raise ShapeError(node.name, node.op_type, self.shapes,
                             f"in {attr}: " + "; ".join(p.rstrip(".") for p in problems[:3]))
        self.fresh[id(sub)] = (sub, result.descs)
        return [Operand(result.descs[t], result.values.get(t)) for t in sub.outputs]


def infer_subgraphs_of(node: Node, operands: list[Operand | None], registry: OpRegistry) -> InferSubgraph:
    """An InferSubgraph for `node` (its operands captured ones included) that applies nothing."""
    return _Subgraphs(node, operands, registry, False, default_max_tensor_bytes(), {})


def shape_problems(graph: Graph, registry: OpRegistry) -> list[str]:
    """For verify(): re-infer every node (subgraphs' too) and compare with the descs the graph holds."""
    fresh = infer_graph(graph, registry, apply=False)
    problems = list(fresh.problems) + _disagreements(graph, fresh.descs, "")
    for sub, descs in fresh.subgraphs.values():
        problems += _disagreements(sub, descs, f"in subgraph '{sub.name}': ")
    return problems


def _disagreements(graph: Graph, fresh: Mapping[str, TensorDesc], where: str) -> list[str]:
    problems = []
    for node in graph.nodes:
        for t in node.outputs:
            have, want = graph.descs.get(t), fresh.get(t)
            if have is None or want is None:
                continue
            if have.dtype != want.dtype or not _shapes_agree(have.shape, want.shape):
                problems.append(f"{where}node '{node.name}' ({node.op_type}): output '{t}' is {have.text()} but "
                                f"the operator infers {want.text()}")
    return problems


def _shapes_agree(have: tuple[int, ...], want: tuple[int, ...]) -> bool:
    return len(have) == len(want) and all(a == b or a < 0 or b < 0 for a, b in zip(have, want, strict=True))
