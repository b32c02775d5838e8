"""GraphEdits: the Graph's bulk edits, which rewrite many of its maps at once.

Re-ordering (reorder, toposort), swapping a group of nodes for one (replace_nodes, fusion's edit), renaming
a node output everywhere (rename_tensor) and turning a node into constants (fold_to_constants). A mixin of
ge_core.ir.graph.Graph, which owns the state declared below and the bookkeeping helpers these call.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ge_core.errors import GraphEditError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc, desc_of


class GraphEdits:
    """Bulk edits of a Graph; every one keeps the producer/users maps and the order keys right."""

    name: str
    constants: dict[str, np.ndarray]
    descs: dict[str, TensorDesc]
    _outputs: tuple[str, ...]
    _output_count: Counter[str]
    _nodes: list[Node]
    _erased: set[int]
    _pos: dict[int, float]
    _by_name: dict[str, Node]
    _producer: dict[str, Node]
    _uses: dict[str, dict[Node, int]]

    if TYPE_CHECKING:  # provided by Graph
        def _claim_tensor(self, name: str, role: str) -> None: ...
        def _set_outputs(self, outputs: Sequence[str]) -> None: ...
        def _live(self) -> list[Node]: ...
        def _renumber(self) -> None: ...
        def _link(self, node: Node) -> None: ...
        def _retarget_reads(self, old: str, new: str) -> None: ...

    def reorder(self, order: Sequence[Node]) -> None:
        """Adopt a new node order (a permutation of the nodes); verify() checks it is topological."""
        nodes = self._live()
        if len(order) != len(nodes) or {id(n) for n in order} != {id(n) for n in nodes}:
            raise GraphEditError("reorder() needs a permutation of the graph's own nodes.")
        self._nodes = list(order)
        self._renumber()

    def replace_nodes(self, group: Sequence[Node], node: Node) -> Node:
        """Swap `group` for `node`, which produces the group's still-needed outputs under the same names
        (readers are not rewired). `node` takes the place of the group's last node; if a reader of its
        outputs came earlier in the order, the order is repaired with a stable topological sort."""
        if node.name in self._by_name and all(self._by_name[node.name] is not n for n in group):
            raise GraphEditError(f"cannot add node '{node.name}': a node with that name exists.")
        last = max(group, key=lambda n: self._pos[id(n)])
        key = self._pos[id(last)]
        self._nodes[self._nodes.index(last)] = node  # tombstones stay in place: no compaction needed
        for old in group:
            for t in set(old.inputs):
                if t and t in self._uses:
                    self._uses[t].pop(old, None)
            for t in old.outputs:
                self._producer.pop(t, None)
                if t not in node.outputs:
                    self.descs.pop(t, None)
                    self._uses.pop(t, None)
            del self._by_name[old.name]
            del self._pos[id(old)]
            if old is not last:
                self._erased.add(id(old))
        self._pos[id(node)] = key
        self._link(node)
        if any(self._pos[id(u)] < key for t in node.outputs for u in self._uses.get(t, ())):
            self.toposort()
        return node

    def toposort(self) -> None:
        """Re-order the nodes topologically, keeping the current order wherever it is already valid."""
        nodes = self._live()
        index = {id(n): i for i, n in enumerate(nodes)}
        waiting = {id(n): len({self._producer[t] for t in n.inputs if t in self._producer}) for n in nodes}
        ready = [i for i, n in enumerate(nodes) if waiting[id(n)] == 0]
        heapq.heapify(ready)
        order: list[Node] = []
        while ready:
            n = nodes[heapq.heappop(ready)]
            order.append(n)
            readers = {u for t in n.outputs for u in self._uses.get(t, ())}
            for user in readers:
                waiting[id(user)] -= 1
                if waiting[id(user)] == 0:
                    heapq.heappush(ready, index[id(user)])
        if len(order) != len(nodes):
            raise GraphEditError(f"graph '{self.name}' has a cycle; it cannot be ordered.")
        self._nodes = order
        self._renumber()

    def rename_tensor(self, old: str, new: str) -> None:
        """Give a node output a new name everywhere (producer, readers, graph outputs, desc, and the
        subgraphs that capture it)."""
        producer = self._producer.get(old)
        if producer is None:
            raise GraphEditError(f"cannot rename '{old}': only node outputs can be renamed.")
        self._claim_tensor(new, f"new name of '{old}'")
        producer.outputs = tuple(new if t == old else t for t in producer.outputs)
        self._producer[new] = self._producer.pop(old)
        self._retarget_reads(old, new)  # readers (their subgraphs too) and graph outputs
        if old in self.descs:
            self.descs[new] = self.descs.pop(old)

    def fold_to_constants(self, node: Node, values: Sequence[np.ndarray]) -> None:
        """Replace `node` by constants holding its outputs' values, under the same tensor names.

        Readers keep reading the same names, so nothing is rewired (constant folding's one edit).
        """
        if len(values) < len(node.outputs):
            raise GraphEditError(f"fold_to_constants('{node.name}'): {len(values)} values for "
                                 f"{len(node.outputs)} outputs.")
        for t in set(node.inputs):
            if t:
                self._uses[t].pop(node, None)
        self._erased.add(id(node))
        del self._pos[id(node)]
        del self._by_name[node.name]
        for t, value in zip(node.outputs, values, strict=False):
            del self._producer[t]
            array = np.asarray(value)
            array.flags.writeable = False
            self.constants[t] = array
            self.descs[t] = desc_of(array)
