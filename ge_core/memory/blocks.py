"""Blocks: groups of tensors sharing one byte range (a tensor, its views, and in-place successors).

In-place: an ELEMENTWISE/BROADCAST op's output may take the bytes of an input of the same size that dies
at that step (its last reader is this node, it is not a graph output, nothing aliasing it is read later,
it is neither a part nor the output of a no-copy Concat, and it is an activation: graph
inputs and constants are never written). A no-copy Concat's block holds its parts at their byte offsets
(Block.rel). Planners place blocks, not tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ge_core.ir.graph import Graph
from ge_core.memory.continuous import Parts
from ge_core.memory.lifetimes import Lifetimes
from ge_core.ops import REGISTRY, Category

INPLACE_CATEGORIES = (Category.ELEMENTWISE, Category.BROADCAST)


def aligned(nbytes: int, alignment: int) -> int:
    """`nbytes` rounded up to `alignment` (at least one unit: every tensor gets an address of its own)."""
    return max(1, -(-nbytes // alignment)) * alignment


@dataclass
class Block:
    id: int
    size: int
    start: int
    end: int
    members: list[str] = field(default_factory=list)
    rel: dict[str, int] = field(default_factory=dict)  # member -> its byte offset inside the block

    def overlaps_in_time(self, other: Block) -> bool:
        return self.start <= other.end and other.start <= self.end


def find_inplace(graph: Graph, lt: Lifetimes, parts: Parts | None = None) -> dict[str, dict[str, str]]:
    """node name -> {output: input whose bytes it reuses}."""
    output_roots = {lt.root(t) for t in graph.outputs if t in lt.tensors}
    # A no-copy Concat's parts and outputs are never overwritten in place: the parts' bytes are the output's,
    # and the output's hold parts that may still be read after it dies.
    held = set(parts or ()) | {container for container, _ in (parts or {}).values()}
    result: dict[str, dict[str, str]] = {}
    for step, node in enumerate(lt.steps):
        op = REGISTRY.for_node(node)
        if op is None or op.view or op.category not in INPLACE_CATEGORIES:
            continue
        claimed: set[str] = set()
        pairs: dict[str, str] = {}
        for out in node.outputs:
            for x in dict.fromkeys(t for t in node.inputs if t in lt.tensors):
                root = lt.root(x)
                if (root in claimed or root in output_roots or root in held or lt.tensors[root].end != step
                        or lt.tensors[x].nbytes != lt.tensors[out].nbytes
                        or lt.tensors[root].nbytes != lt.tensors[out].nbytes):
                    continue
                pairs[out] = x
                claimed.add(root)
                break
        if pairs:
            result[node.name] = pairs
    return result


def build_blocks(lt: Lifetimes, inplace: dict[str, dict[str, str]], alignment: int,
                 parts: Parts | None = None) -> dict[str, Block]:
    """tensor -> its block (views share their root's; an in-place output its input's; a no-copy Concat's
    parts sit inside its output's block at their byte offsets)."""
    owner: dict[str, Block] = {}
    blocks: list[Block] = []
    pairs = {out: x for per_node in inplace.values() for out, x in per_node.items()}
    held_by: dict[str, list[tuple[str, int]]] = {}
    for part, (container, offset) in (parts or {}).items():
        held_by.setdefault(container, []).append((part, offset))
    for t, life in lt.tensors.items():  # production order: a tensor's base, in-place input or parts come first
        base = lt.aliases.get(t) or pairs.get(t)
        if base is not None:
            block = owner[base]
            block.rel[t] = block.rel[base]
        else:
            block = Block(len(blocks), aligned(life.nbytes, alignment), life.start, life.end)
            blocks.append(block)
            block.rel[t] = 0
        block.members.append(t)
        block.size = max(block.size, block.rel[t] + aligned(life.nbytes, alignment))
        block.start, block.end = min(block.start, life.start), max(block.end, life.end)
        owner[t] = block
        for part, offset in held_by.get(t, ()):
            _absorb(block, owner[part], block.rel[t] + offset - owner[part].rel[part], owner)
    return owner


def _absorb(block: Block, other: Block, shift: int, owner: dict[str, Block]) -> None:
    """Move every member of `other` into `block`, `shift` bytes further in."""
    assert other is not block and shift >= 0, "a no-copy Concat part must sit inside its own output"
    for m in other.members:
        block.members.append(m)
        block.rel[m] = other.rel[m] + shift
        owner[m] = block
    block.size = max(block.size, other.size + shift)
    block.start, block.end = min(block.start, other.start), max(block.end, other.end)


def unique_blocks(owner: dict[str, Block]) -> list[Block]:
    return list({id(b): b for b in owner.values()}.values())


def peak_live_bytes(blocks: list[Block], steps: int) -> int:
    """The theory minimum: the most bytes alive at any step (a block counted once)."""
    delta = [0] * (steps + 1)
    for b in blocks:
        delta[b.start] += b.size
        delta[b.end + 1] -= b.size
    peak = live = 0
    for d in delta:
        live += d
        peak = max(peak, live)
    return peak
