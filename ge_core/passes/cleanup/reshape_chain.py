"""ReshapeChainPass: a chain of reshape-like views (Reshape, Flatten, Squeeze, Unsqueeze, Identity) becomes one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.passes.infra.base import PassResult
from ge_core.passes.infra.rewrite import bypass, control_pinned, drop_unused_constants, single_reader


@dataclass(frozen=True)
class ReshapeChainPass:
    """Collapse a chain of reshape-like ops into one Reshape to the final shape, or remove it entirely
    when the chain ends at the shape it started from (Unsqueeze then Squeeze, Flatten then Reshape back).

    These ops only relabel the same elements in the same order, so only the last shape matters. Exporters
    leave such chains everywhere; collapsing them shortens the graph and lets later fusions see the real
    producer and consumer side by side. Intermediates read elsewhere are kept (they are still needed).
    """

    name: ClassVar[str] = "ReshapeChainPass"

    def run(self, graph: Graph) -> PassResult:
        pinned = control_pinned(graph)
        outcomes: Counter[str] = Counter()
        erased = 0
        for node in graph.nodes:
            if not is_view(node) or node.name in pinned or not graph.has_node(node.name):
                continue
            if _next_in_chain(graph, node) is not None:
                continue  # not the end of its chain: the chain is handled from its last node
            chain = _chain_ending_at(graph, node, pinned)
            before = len(graph)
            outcome = _collapse(graph, chain) if len(chain) > 1 else None
            if outcome:
                outcomes[outcome] += 1
                erased += before - len(graph)
        if not outcomes:
            return PassResult(False)
        return PassResult(True, (f"collapsed {sum(outcomes.values())} chain(s) of reshape-like ops, removing "
                                 f"{erased} node(s); {outcomes['removed']} chain(s) ended at their input's shape "
                                 "and are gone",))


def is_view(node: Node) -> bool:
    """Reshape-like: the output is input 0's elements, in order, under another shape (OpDef.view)."""
    op = REGISTRY.for_node(node)
    return op is not None and op.view and len(node.outputs) == 1


def _next_in_chain(graph: Graph, node: Node) -> Node | None:
    """The view op that is the only reader of `node`'s output, reading it as its data input."""
    reader = single_reader(graph, node.outputs[0])
    return reader if reader is not None and is_view(reader) and reader.input(0) == node.outputs[0] else None


def _chain_ending_at(graph: Graph, end: Node, pinned: set[str]) -> list[Node]:
    chain = [end]
    while True:
        prev = graph.producer(chain[-1].input(0))
        if prev is None or prev.name in pinned or not is_view(prev) or _next_in_chain(graph, prev) is not chain[-1]:
            return chain[::-1]
        chain.append(prev)


def _collapse(graph: Graph, chain: list[Node]) -> str | None:
    """Rewrite one chain; 'removed', 'merged' or None when it is left alone."""
    x, end = chain[0].input(0), chain[-1]
    out = end.outputs[0]
    have, want = graph.desc(x), graph.desc(out)
    if have.dtype != want.dtype:
        return None
    freed = [t for n in chain for t in n.inputs[1:]]
    if want.is_static and want.shape == have.shape and _can_bypass(graph, out, x):
        bypass(graph, end, x)  # the chain computes nothing: readers read x
        _erase_all(graph, chain[:-1])
        outcome = "removed"
    elif want.is_static and 0 not in want.shape:  # 0 in a Reshape target would copy a dim
        _static_rewrite(graph, chain, x, have, want)
        outcome = "merged"
    elif _dynamic_rewrite(graph, chain, x):
        outcome = "merged"
    else:
        return None
    drop_unused_constants(graph, freed)
    return outcome


def _can_bypass(graph: Graph, out: str, x: str) -> bool:
    """bypass() keeps a graph output's name by renaming x, which needs x to be an intermediate tensor."""
    return not graph.is_output(out) or (graph.producer(x) is not None and not graph.is_output(x))


def _static_rewrite(graph: Graph, chain: list[Node], x: str, have: TensorDesc, want: TensorDesc) -> None:
    """One node maps x to the final static shape: the end itself if it can express it, else another
    chain node that can, else a new Reshape (only for chains with no Reshape, e.g. Flatten -> Unsqueeze)."""
    end = chain[-1]
    host = next((n for n in reversed(chain) if _retarget(graph, n, x, have, want)), None)
    if host is None:
        name = graph.unique_tensor_name(f"{end.name}.shape")
        graph.add_constant(name, np.array(want.shape, np.int64))
        out = graph.unique_tensor_name(f"{end.outputs[0]}.reshaped")
        host = graph.insert_before(end, "Reshape", [x, name], [out], descs=[want],
                                   name=graph.unique_node_name(f"{end.name}.reshape"))
    if host is not end:
        graph.set_desc(host.outputs[0], want)
        bypass(graph, end, host.outputs[0])  # host's output is intermediate: bypass cannot refuse
    _erase_all(graph, [n for n in chain[:-1] if n is not host])


def _retarget(graph: Graph, node: Node, x: str, have: TensorDesc, want: TensorDesc) -> bool:
    """Make `node` read x and produce `want`'s shape, if its op can say so; False (untouched) if not.
    (How each view op is re-pointed, Reshape by its shape input and Squeeze/Unsqueeze by their axes, is
    this rewrite itself, so the op names stay here.)"""
    if node.op_type == "Reshape":
        _set_shape_input(graph, node, "shape", want.shape)
        graph.set_input(node, 0, x)
        return True
    if node.op_type not in ("Squeeze", "Unsqueeze") or not have.is_static:
        return False
    short, long = (have.shape, want.shape) if node.op_type == "Unsqueeze" else (want.shape, have.shape)
    axes = inserted_ones(short, long)
    if not axes:
        return False
    if node.opset >= 13:
        _set_shape_input(graph, node, "axes", axes)
    else:
        node.attrs["axes"] = list(axes)
    graph.set_input(node, 0, x)
    return True


def _set_shape_input(graph: Graph, node: Node, role: str, values: Sequence[int]) -> None:
    """Input 1 becomes an int64 constant holding `values` (the current one is kept if it already does)."""
    current = graph.constants.get(node.input(1))
    if current is not None and current.dtype == np.int64 and current.reshape(-1).tolist() == list(values):
        return
    name = graph.unique_tensor_name(f"{node.name}.{role}")
    graph.add_constant(name, np.array(values, np.int64))
    graph.set_input(node, 1, name)


def inserted_ones(short: Sequence[int], long: Sequence[int]) -> list[int] | None:
    """The axes of `long` that are 1s inserted into `short` (as Unsqueeze's axes), or None if `long` is
    not `short` with 1s inserted. Greedy matching is enough: which 1 counts as inserted does not matter."""
    if len(long) <= len(short):
        return None
    axes: list[int] = []
    j = 0
    for i, d in enumerate(long):
        if j < len(short) and d == short[j]:
            j += 1
        elif d == 1:
            axes.append(i)
        else:
            return None
    return axes if j == len(short) else None


def _dynamic_rewrite(graph: Graph, chain: list[Node], x: str) -> bool:
    """Final shape unknown: a chain ending in a Reshape with a constant target reads x directly, if no 0 in
    the target copies a dim that could differ between x and the Reshape's current input."""
    end = chain[-1]
    target = graph.constants.get(end.input(1)) if end.op_type == "Reshape" else None
    if target is None:
        return False
    allowzero = end.opset >= 14 and bool(end.attr("allowzero", 0))
    if not allowzero:
        have, mid = graph.desc(x).shape, graph.desc(end.input(0)).shape
        for i, d in enumerate(target.reshape(-1).tolist()):
            if d == 0 and not (i < len(have) and i < len(mid) and have[i] == mid[i] >= 0):
                return False
    graph.set_input(end, 0, x)
    _erase_all(graph, chain[:-1])
    return True


def _erase_all(graph: Graph, nodes: list[Node]) -> None:
    """Erase detached chain nodes, last first (each one's reader is gone before it goes)."""
    for node in reversed(nodes):
        graph.erase(node)
