"""The growth loop: draw weighted moves until the node target is met, then choose the graph's outputs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.tensor import desc_of
from ge_core.ops import REGISTRY, infer_graph
from tests.passes.random_graphs.builder import F32, Builder, Move
from tests.passes.random_graphs.constants import const_subgraph, duplicate
from tests.passes.random_graphs.control import add_control_flow
from tests.passes.random_graphs.cube import batchnorm_alone, conv, matmul
from tests.passes.random_graphs.elementwise import binary, const_binary, unary, where
from tests.passes.random_graphs.fusion import attention, conv_activation, gelu, hard_activation, layer_norm, matmul_add
from tests.passes.random_graphs.layout import channel_shuffle, reshape_chain, shape_reshape, transpose_chain
from tests.passes.random_graphs.noops import NOOPS, OUTPUT_NOOPS, noop
from tests.passes.random_graphs.pieces import pieces, reduce


@dataclass(frozen=True)
class MoveKind:
    move: Move
    weight: float  # relative probability of drawing it
    min_rank: int = 1
    max_rank: int = 6

    def eligible(self, shape: tuple[int, ...]) -> bool:
        return self.min_rank <= len(shape) <= self.max_rank


MOVES = (
    MoveKind(unary, 3.0, 0),
    MoveKind(binary, 2.0),
    MoveKind(const_binary, 2.5, 0),
    MoveKind(noop, 2.5),
    MoveKind(transpose_chain, 1.5, 2),
    MoveKind(reshape_chain, 1.5),
    MoveKind(channel_shuffle, 0.6, 4, 4),
    MoveKind(shape_reshape, 0.6, 2),
    MoveKind(const_subgraph, 1.0),
    MoveKind(duplicate, 1.5),
    MoveKind(matmul, 1.5, 2),
    MoveKind(conv, 2.5, 3, 4),
    MoveKind(batchnorm_alone, 0.5, 2),
    MoveKind(reduce, 1.0, 2),
    MoveKind(pieces, 1.5),
    MoveKind(where, 0.6),
    MoveKind(conv_activation, 0.8, 3, 4),  # the graph-fusion passes' patterns (fusion.py)
    MoveKind(matmul_add, 0.8, 2),
    MoveKind(layer_norm, 0.9, 2),
    MoveKind(gelu, 0.8),
    MoveKind(hard_activation, 0.7),
    MoveKind(attention, 0.6, 3, 4),
)


def add_inputs(b: Builder) -> None:
    """An NCHW image (mostly) and/or a 2-D or 3-D feature tensor."""
    shapes: list[tuple[int, ...]] = []
    if b.chance(0.8):
        shapes.append((b.choice((1, 2)), b.choice((2, 3, 4, 6, 8)), b.choice((3, 4, 5, 6)), b.choice((3, 4, 5, 6))))
    if not shapes or b.chance(0.5):
        k = b.choice((3, 4, 5, 8))
        shapes.append(b.choice(((b.choice((1, 2, 3, 4)), k), (b.choice((1, 2)), b.choice((2, 3, 4)), k))))
    for name, shape in zip(("x", "y"), shapes, strict=False):
        b.graph.add_input(name, desc_of(np.zeros(shape, F32)))
        b.pool.append(name)


def _wrap(b: Builder, move: Move, x: str) -> str | None:
    """Run a one-tensor move outside the growth loop (output wrappers); None if it does not apply."""
    before = len(b.pool)
    return b.pool[-1] if b.attempt(move, x, 1 << 30) and len(b.pool) > before else None


def choose_outputs(b: Builder) -> None:
    """Tips become outputs (the rest stay dead branches), plus the interface corner cases now and then."""
    read = {t for n in b.graph.nodes for t in n.inputs}
    tips = [t for t in b.pool if t not in read and b.graph.producer(t) is not None]
    if not tips:
        tips = [b.op("Relu", [b.pool[-1]])]
    outputs = [tips[-1]] + [t for t in tips[:-1] if b.chance(0.35)]
    internal = [t for t in b.pool if t in read and b.graph.producer(t) is not None]
    if internal and b.chance(0.2):  # an output that other nodes also read
        outputs.append(b.choice(internal))
    if b.chance(0.15):  # an output produced by a no-op
        kind = b.choice(OUTPUT_NOOPS)
        outputs[0] = _wrap(b, lambda b, x: [NOOPS[kind](b, x)], outputs[0]) or outputs[0]
    if b.chance(0.06):  # a no-op of a graph input
        outputs.append(b.op("Identity", [b.choice(b.graph.inputs)]))
    if b.chance(0.06):  # t and Identity(t), both outputs
        outputs.append(b.op("Identity", [outputs[-1]]))
    if b.chance(0.04):  # a graph input returned as it is
        outputs.append(b.choice(b.graph.inputs))
    if b.chance(0.04) and b.graph.constants:  # a constant (say a weight) returned as it is
        outputs.append(b.choice(list(b.graph.constants)))
    if b.chance(0.06):  # an output computed from constants only
        outputs.append(b.op("Add", [b.const(b.normal((3,))), b.const(b.normal((3,)))]))
    b.graph.set_outputs(dict.fromkeys(outputs))


def random_feeds(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([seed, 1])
    return {t: rng.standard_normal(graph.desc(t).shape).astype(F32) for t in graph.inputs}


def random_graph(seed: int, max_nodes: int = 40) -> tuple[Graph, dict[str, np.ndarray]]:
    """A valid random graph of at most `max_nodes` (>= 5) nodes, descs inferred, and feeds for it.

    Deterministic per seed: a failing test replays with its seed. Any change to this package's draws
    changes the graph of every seed.
    """
    rng = np.random.default_rng(seed)
    opset = int(rng.choice([21, 13, 11], p=[0.75, 0.15, 0.1]))
    b = Builder(Graph(f"random{seed}", {"": opset}), rng, control_rate=0.08 if rng.random() < 0.25 else 0.0)
    add_inputs(b)
    limit = max(max_nodes - 4, 1)  # room for the output wrappers (at most 4 nodes, or 5 on an empty graph)
    target = int(rng.integers(min(4, limit), limit + 1))
    weights = np.array([m.weight for m in MOVES])
    for _ in range(10 * target):
        if len(b.graph) >= target:
            break
        kind = MOVES[int(rng.choice(len(MOVES), p=weights / weights.sum()))]
        x = b.pick(kind.eligible)
        if x is not None:
            b.attempt(kind.move, x, limit)
    choose_outputs(b)
    add_control_flow(b, seed)  # an If or a Loop on some graphs, from a stream of its own (control.py)
    problems = infer_graph(b.graph, REGISTRY).problems
    if problems:
        raise AssertionError(f"generator bug: seed {seed} built an invalid graph: {problems}")
    return b.graph, random_feeds(b.graph, seed)
