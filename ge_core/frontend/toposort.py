"""Order imported nodes topologically (ONNX files need not be sorted) and find structural problems.

Reports, all at once: tensors produced twice, inputs nobody produces, and cycles. Ordering is stable:
among ready nodes the one that came first in the file goes first, so a sorted file keeps its order.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from ge_core.ir.node import Node


def topo_order(nodes: list[Node], available: set[str]) -> tuple[list[Node], list[str]]:
    problems: list[str] = []
    producer: dict[str, int] = {}
    kept: list[Node] = []
    for node in nodes:
        clash = [t for t in node.outputs if t in producer or t in available]
        if clash:
            t = clash[0]
            first = f"node '{nodes[producer[t]].name}'" if t in producer else "a graph input or initializer"
            problems.append(f"tensor '{t}' is produced twice: by {first} and by node '{node.name}' "
                            f"({node.op_type}); node '{node.name}' is dropped")
            continue
        for t in node.outputs:
            producer[t] = len(kept)
        kept.append(node)
    # producer indices refer to `kept` from here on
    waiting = [0] * len(kept)
    consumers: dict[int, list[int]] = defaultdict(list)
    for i, node in enumerate(kept):
        for t in set(node.inputs):
            if not t or t in available:
                continue
            if t not in producer:
                problems.append(f"node '{node.name}' ({node.op_type}) reads tensor '{t}', which no node, "
                                "graph input or initializer provides")
                continue
            waiting[i] += 1
            consumers[producer[t]].append(i)
    ready = [i for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in consumers[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    if len(order) < len(kept):
        stuck = [kept[i].name for i in range(len(kept)) if waiting[i] > 0]
        shown = ", ".join(f"'{n}'" for n in stuck[:10]) + (" ..." if len(stuck) > 10 else "")
        problems.append(f"the graph has a cycle through {len(stuck)} node(s): {shown}; a dataflow graph must "
                        "be acyclic")
        order += [i for i in range(len(kept)) if waiting[i] > 0]
    return [kept[i] for i in order], problems
