"""Tensor lifetimes over the execution order (the graph's node order).

Every activation (a node output; graph inputs and constants live outside the arena) is alive from the step
producing it to the step of its last reader; graph outputs stay alive to the last step. A view op's output
(OpDef.view: Reshape, Squeeze, Identity...) has no bytes of its own: it aliases input 0's block, so the
tensor it aliases stays alive until the view's last reader (views of views chain to the root).

A control-flow node (If, Loop, Scan) reads the outer tensors its subgraphs capture: they are its trailing
inputs, so they stay alive until it runs, like any input. Its outputs are planned like any node's; the
activations of its subgraphs are not: they live outside the arena, in the interpreter's environment of each
subgraph run, for the length of that run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ge_core.errors import GEError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY


@dataclass
class TensorLife:
    name: str
    producer: str  # node name
    start: int  # step producing it
    end: int  # step of its last reader (its views' readers included); the last step for graph outputs
    nbytes: int
    shape: tuple[int, ...]
    dtype: str


@dataclass
class Lifetimes:
    steps: list[Node]
    tensors: dict[str, TensorLife] = field(default_factory=dict)  # every activation, in production order
    aliases: dict[str, str] = field(default_factory=dict)  # view tensor -> the tensor it aliases (its input 0)

    def root(self, tensor: str) -> str:
        """The tensor owning `tensor`'s bytes: itself, or the root of its view chain."""
        while tensor in self.aliases:
            tensor = self.aliases[tensor]
        return tensor

    def alive_at(self, step: int) -> list[str]:
        return [t for t, life in self.tensors.items() if life.start <= step <= life.end]


def static_problem(graph: Graph) -> str | None:
    """Why the graph's activations cannot be planned (a tensor of unknown size), or None."""
    for node in graph.nodes:
        for t in node.outputs:
            desc = graph.descs.get(t)
            if desc is None or desc.nbytes is None:
                shape = desc.text() if desc is not None else "no inferred shape"
                return (f"memory planning needs static shapes: tensor '{t}' (output of node '{node.name}', "
                        f"{node.op_type}) has {shape}. Pass --input-shape / input_shapes to fix its size.")
    return None


def compute_lifetimes(graph: Graph, order: Sequence[Node] | None = None) -> Lifetimes:
    """Lifetimes of every activation in `graph`, run in `order` (default: the graph's own); raises
    GEError naming a tensor of unknown size."""
    problem = static_problem(graph)
    if problem is not None:
        raise GEError(problem)
    lt = Lifetimes(list(order) if order is not None else list(graph.nodes))
    last = len(lt.steps) - 1
    for step, node in enumerate(lt.steps):
        for t in {t for t in node.inputs if t}:
            if t in lt.tensors:
                lt.tensors[t].end = max(lt.tensors[t].end, step)
        op = REGISTRY.for_node(node)
        is_view = op is not None and op.view and bool(node.inputs) and node.inputs[0] in lt.tensors
        for t in node.outputs:
            desc = graph.descs[t]
            lt.tensors[t] = TensorLife(t, node.name, step, step, desc.nbytes or 0, desc.shape, desc.dtype)
        if is_view:
            for t in node.outputs[:1]:
                lt.aliases[t] = node.inputs[0]
    for t in graph.outputs:
        if t in lt.tensors:
            lt.tensors[t].end = last
    for view in reversed(list(lt.aliases)):  # a view keeps what it aliases alive (chains: later views first)
        base = lt.tensors[lt.aliases[view]]
        base.end = max(base.end, lt.tensors[view].end)
    return lt
