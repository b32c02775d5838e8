"""The UB working-set model of a fused group: does one tile of its kernel fit in the Unified Buffer?

How an AI Core runs a UB-fused kernel: the cube op (if the group has one) writes its output through
FixPipe into the UB; the vector unit then runs every other op of the group on it, loading the group's
other inputs from global memory into the UB and storing the group's outputs back. Nothing in between
leaves the chip. The kernel walks its iteration space in tiles of T elements, and one tile needs:

    buffers, each of one tile in its own dtype (min(numel, T) elements), rounded up to 32 bytes:
      - the cube op's output (the FixPipe result); the cube's own operands live in L1/L0A/L0B, not UB;
      - every external input the vector ops read (graph inputs, other kernels' outputs, constants).
        A tensor smaller than a tile, such as a per-channel bias broadcast over an image, takes only its
        own size. Integer constants (shapes, axes, indices) are scalar parameters, not buffers;
      - the intermediates alive at once: at each op, the group's tensors made before it and still read
        at or after it; the peak over the ops counts. A view's output is its input's buffer reshaped;
      - every output of the group (read outside it, or a graph output).
    working set(T) = 2 * (sum of those buffers)   # double buffering: load tile i+1 while computing tile i

T is the largest tile whose working set fits the UB, but never below the minimum tile: 1 element (one
32-byte block per buffer), or for a group ending in a reduce one whole reduction slab (the input elements
that fold into one output element stay on chip together). A group whose working set at the minimum tile
exceeds the UB does not fit. A tensor with an unknown dim leaves the working set unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ge_core.hardware.ub_limits import UB_ALIGN_BYTES
from ge_core.ir.fusion import external_outputs
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.registry import Category

Buffer = tuple[int, int]  # (elements, bytes per element)


@dataclass(frozen=True)
class WorkingSet:
    """A group's buffers, ready to be priced at any tile size."""

    fixed: tuple[Buffer, ...]  # cube output, external inputs, outputs: alive for the whole tile
    live: tuple[tuple[Buffer, ...], ...]  # per op, the intermediates alive while it runs
    min_tile: int
    max_tile: int  # the largest buffer: past it every tensor fits whole

    def bytes_at(self, tile: int) -> int:
        fixed = sum(_tile_bytes(b, tile) for b in self.fixed)
        peak = max((sum(_tile_bytes(b, tile) for b in step) for step in self.live), default=0)
        return 2 * (fixed + peak)

    @property
    def min_bytes(self) -> int:
        """The working set at the minimum tile: what must fit for the group to run at all."""
        return self.bytes_at(self.min_tile)

    def best_tile(self, ub_bytes: int) -> int | None:
        """The largest tile that fits `ub_bytes` (bisection: the working set grows with the tile)."""
        lo, hi = self.min_tile, max(self.max_tile, self.min_tile)
        if self.bytes_at(lo) > ub_bytes:
            return None
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.bytes_at(mid) <= ub_bytes else (lo, mid - 1)
        return lo


def _tile_bytes(buffer: Buffer, tile: int) -> int:
    elements, itemsize = buffer
    size = min(elements, tile) * itemsize
    return -(-size // UB_ALIGN_BYTES) * UB_ALIGN_BYTES


def working_set(graph: Graph, group: Sequence[Node]) -> WorkingSet | str:
    """The group's working-set model (group in graph order), or why it is unknown."""
    cubes = [n for n in group if _category(n) == Category.CUBE]
    vector = [n for n in group if _category(n) != Category.CUBE]
    alias = _view_aliases(graph, group)
    outputs = {alias.get(t, t) for t in external_outputs(graph, group)}
    fixed_names = list(dict.fromkeys([*(t for c in cubes for t in c.outputs), *_inputs(graph, group, vector),
                                      *outputs]))
    fixed_set = set(fixed_names)
    live = [[t for t in step if t not in fixed_set] for step in _live_steps(group, vector, alias)]
    names = fixed_names + [t for step in live for t in step]
    unknown = next((t for t in names if graph.desc(t).numel is None), None)
    if unknown is not None:
        return f"working set unknown: '{unknown}' has a dynamic shape {graph.desc(unknown).text()}"
    slab = max((reduce_slab(graph, n) or 1 for n in group if _category(n) == Category.REDUCE), default=1)
    buffers = {t: (graph.desc(t).numel or 0, graph.desc(t).itemsize) for t in names}
    return WorkingSet(tuple(buffers[t] for t in fixed_names), tuple(tuple(buffers[t] for t in s) for s in live),
                      slab, max((b[0] for b in buffers.values()), default=1))


def _category(node: Node) -> Category:
    op = REGISTRY.for_node(node)
    return Category.OPAQUE if op is None else op.category


def _view_aliases(graph: Graph, group: Sequence[Node]) -> dict[str, str]:
    """View output -> the tensor whose buffer it reuses (chains of views resolved)."""
    alias: dict[str, str] = {}
    for n in group:
        op = REGISTRY.for_node(n)
        if op is not None and op.view and n.inputs and n.input(0):
            source = n.input(0)
            alias[n.outputs[0]] = alias.get(source, source)
    return alias


def _inputs(graph: Graph, group: Sequence[Node], vector: Sequence[Node]) -> list[str]:
    """External data inputs of the vector ops: integer constants are parameters, not buffers."""
    produced = {t for n in group for t in n.outputs}
    seen: dict[str, None] = {}
    for n in vector:
        for t in n.inputs:
            if t and t not in produced and not _parameter(graph, t):
                seen.setdefault(t, None)
    return list(seen)


def _parameter(graph: Graph, tensor: str) -> bool:
    return graph.is_constant(tensor) and graph.desc(tensor).dtype.startswith(("int", "uint"))


def _live_steps(group: Sequence[Node], vector: Sequence[Node], alias: dict[str, str]) -> list[list[str]]:
    """Per vector op, the group-made buffers alive while it runs (made at or before it, read at or after)."""
    step_of = {id(n): i for i, n in enumerate(vector)}
    made: dict[str, int] = {}
    last: dict[str, int] = {}
    for n in group:
        i = step_of.get(id(n), -1)  # the cube op runs before every vector op
        for t in n.outputs:
            made.setdefault(alias.get(t, t), i)
        for t in n.inputs:
            if t and alias.get(t, t) in made and i >= 0:
                last[alias.get(t, t)] = i
    return [[t for t, m in made.items() if m <= i <= max(last.get(t, m), m)] for i in range(len(vector))]


def reduce_slab(graph: Graph, node: Node) -> int | None:
    """Input elements folding into one output element of a reduce (its minimum tile), None if unknown."""
    x, y = graph.desc(node.input(0)), graph.desc(node.outputs[0])
    if x.numel is None or y.numel is None:
        return None
    if 0 < y.numel < x.numel:  # Reduce*, ArgMax, GlobalAveragePool: the output is smaller
        return x.numel // y.numel
    shape = x.shape
    if not shape:
        return 1
    op = REGISTRY.get(node.op_type, node.domain)  # the output keeps the shape: the op says how far one reaches
    span = op.reduce_span if op is not None else None
    return span(node, shape) if span is not None else shape[-1]
