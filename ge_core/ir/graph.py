"""Graph: GE's ComputeGraph. Nodes in topological order, a producer map and a users map.

Tensors are named (SSA: one producer each). Three kinds of tensor: graph inputs (activations fed at run
time), constants (initializers, kept apart, read-only arrays) and node outputs. Every tensor has a
TensorDesc in `descs`. The graph is edited only through its methods, which keep the maps right and the
order topological (in the style of torch.fx: insert_before/after, replace_all_uses, erase). The bulk edits
(reorder, replace_nodes, toposort, rename_tensor, fold_to_constants) live in graph_edits.GraphEdits; a
subgraph's captured tensors and the renames that reach into subgraphs live in scopes.ScopeEdits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ge_core.errors import GraphEditError
from ge_core.ir.graph_edits import GraphEdits
from ge_core.ir.node import Node
from ge_core.ir.scopes import ScopeEdits, capture_slot, rescope
from ge_core.ir.tensor import TensorDesc, desc_of
from ge_core.ir.text import graph_to_json, graph_to_text
from ge_core.ir.verify import verify_graph

if TYPE_CHECKING:
    from ge_core.ir.verify import ShapeChecker


class Graph(GraphEdits, ScopeEdits):
    def __init__(self, name: str = "graph", opset: dict[str, int] | None = None) -> None:
        self.name = name
        self.opset: dict[str, int] = dict(opset or {"": 21})
        self.inputs: list[str] = []
        self.captures: list[str] = []  # a subgraph's reads of enclosing-graph tensors (scopes.py)
        self._outputs: tuple[str, ...] = ()
        self._output_count: Counter[str] = Counter()  # O(1) "is this a graph output" on big output lists
        self.constants: dict[str, np.ndarray] = {}
        self.descs: dict[str, TensorDesc] = {}
        self.input_dim_params: dict[str, tuple[int | str, ...]] = {}  # symbolic dims as written
        self.metadata: dict[str, str] = {}
        self._nodes: list[Node] = []  # topological order; may hold erased nodes until compacted
        self._erased: set[int] = set()  # ids of erased nodes still in _nodes (erase is O(1))
        self._pos: dict[int, float] = {}  # node id -> order key, for O(1) "is a before b"
        self._by_name: dict[str, Node] = {}
        self._name_counters: dict[tuple[str, str], int] = {}
        self._producer: dict[str, Node] = {}
        self._uses: dict[str, dict[Node, int]] = {}  # tensor -> {reader: how many of its inputs read it}

    # ---- queries -------------------------------------------------------------------------------
    @property
    def outputs(self) -> list[str]:
        """Graph output tensor names, in order (a copy: change them with set_outputs)."""
        return list(self._outputs)

    def is_output(self, tensor: str) -> bool:
        return tensor in self._output_count

    @property
    def nodes(self) -> Sequence[Node]:
        """Nodes in topological order (a snapshot: edit through the graph's methods)."""
        return tuple(self._live())

    def __iter__(self) -> Iterator[Node]:
        return iter(tuple(self._live()))

    def __len__(self) -> int:
        return len(self._nodes) - len(self._erased)

    def index_key(self, node: Node) -> float:
        """A number that orders nodes like the graph does (not an index: keys may be fractional)."""
        return self._pos[id(node)]

    def is_before(self, a: Node, b: Node) -> bool:
        """True when node `a` comes before node `b` in the order (O(1))."""
        return self._pos[id(a)] < self._pos[id(b)]

    def node(self, name: str) -> Node:
        try:
            return self._by_name[name]
        except KeyError:
            raise GraphEditError(f"graph '{self.name}' has no node named '{name}'.") from None

    def has_node(self, name: str) -> bool:
        return name in self._by_name

    def producer(self, tensor: str) -> Node | None:
        """The node producing `tensor`, or None for graph inputs and constants."""
        return self._producer.get(tensor)

    def users(self, tensor: str) -> list[Node]:
        """Distinct nodes reading `tensor`, in graph order."""
        return list(self._uses.get(tensor, ()))

    def num_uses(self, tensor: str) -> int:
        """Uses by nodes plus one if it is a graph output: zero means nothing needs it."""
        return sum(self._uses.get(tensor, {}).values()) + self._output_count[tensor]

    def has_tensor(self, tensor: str) -> bool:
        """True for graph inputs, constants and node outputs (even before their desc is inferred)."""
        return tensor in self.descs or tensor in self._producer

    def desc(self, tensor: str) -> TensorDesc:
        try:
            return self.descs[tensor]
        except KeyError:
            raise GraphEditError(f"graph '{self.name}' has no tensor named '{tensor}'.") from None

    def is_constant(self, tensor: str) -> bool:
        return tensor in self.constants

    def input_dims_text(self, name: str) -> list[str]:
        """An input's dims as declared (symbolic names kept), for messages and summaries."""
        params = self.input_dim_params.get(name)
        if params is None:
            return ["?" if d < 0 else str(d) for d in self.desc(name).shape]
        shape = self.desc(name).shape
        return [str(shape[i]) if i < len(shape) and shape[i] >= 0 else str(p) for i, p in enumerate(params)]

    def index_of(self, node: Node) -> int:
        return self._live().index(node)

    def input_descs(self, node: Node) -> list[TensorDesc | None]:
        return [self.descs.get(t) if t else None for t in node.inputs]

    def output_descs(self, node: Node) -> list[TensorDesc]:
        return [self.descs[t] for t in node.outputs]

    # ---- building ------------------------------------------------------------------------------
    def add_input(self, name: str, desc: TensorDesc, dim_params: Sequence[int | str] | None = None) -> None:
        self._claim_tensor(name, "graph input")
        self.inputs.append(name)
        self.descs[name] = desc
        if dim_params is not None:
            self.input_dim_params[name] = tuple(dim_params)

    def add_constant(self, name: str, array: np.ndarray, desc: TensorDesc | None = None) -> None:
        self._claim_tensor(name, "constant")
        array = np.asarray(array)
        array.flags.writeable = False  # shared by every snapshot: nobody may write into it
        self.constants[name] = array
        self.descs[name] = desc or desc_of(array)

    def add_node(
        self,
        op_type: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        attrs: dict[str, Any] | None = None,
        *,
        name: str | None = None,
        descs: Sequence[TensorDesc] | None = None,
        before: Node | None = None,
        after: Node | None = None,
        domain: str = "",
        opset: int | None = None,
        control_inputs: Sequence[str] = (),
        body: Graph | None = None,
        subgraphs: dict[str, Graph] | None = None,
        captures: Sequence[str] = (),
    ) -> Node:
        """Create a node; placed before/after an anchor, else appended (valid: its outputs are new). A
        control-flow node's `subgraphs` read `captures`, which follow `inputs` as its trailing inputs."""
        node_name = name or self.unique_node_name(op_type)
        if node_name in self._by_name:
            raise GraphEditError(f"cannot add node '{node_name}': a node with that name exists.")
        for t in outputs:
            self._claim_tensor(t, f"output of node '{node_name}'")
        node = Node(node_name, op_type, (*inputs, *captures), tuple(outputs), dict(attrs or {}),
                    tuple(control_inputs), domain, opset if opset is not None else self.opset.get(domain, 21), body,
                    dict(subgraphs or {}), len(captures))
        nodes = self._live()
        if before is not None:
            position = nodes.index(before)
        elif after is not None:
            position = nodes.index(after) + 1
        else:
            position = len(nodes)
        nodes.insert(position, node)
        self._place(node, position)
        self._link(node)
        if descs is not None:
            for t, d in zip(outputs, descs, strict=True):
                self.descs[t] = d
        return node

    def insert_before(self, anchor: Node, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
                      attrs: dict[str, Any] | None = None, **kw: Any) -> Node:
        return self.add_node(op_type, inputs, outputs, attrs, before=anchor, **kw)

    def insert_after(self, anchor: Node, op_type: str, inputs: Sequence[str], outputs: Sequence[str],
                     attrs: dict[str, Any] | None = None, **kw: Any) -> Node:
        return self.add_node(op_type, inputs, outputs, attrs, after=anchor, **kw)

    # ---- editing -------------------------------------------------------------------------------
    def set_desc(self, tensor: str, desc: TensorDesc) -> None:
        self.descs[tensor] = desc

    def set_outputs(self, outputs: Iterable[str]) -> None:
        outputs = list(outputs)
        missing = [t for t in outputs if not self.has_tensor(t)]
        if missing:
            raise GraphEditError(f"cannot make {missing} graph outputs: no such tensors in '{self.name}'.")
        self._set_outputs(outputs)

    def set_input(self, node: Node, index: int, tensor: str) -> None:
        """Point input `index` of `node` at `tensor` ("" removes an optional input). A captured input
        pointed at another tensor renames it inside the node's subgraphs too."""
        old = node.input(index)
        captured = capture_slot(node, index)
        if node.num_captures and index >= len(node.inputs):
            raise GraphEditError(f"cannot add input {index} to '{node.name}': its last inputs are captured tensors.")
        if old:
            self._drop_use(old, node)
        inputs = list(node.inputs) + [""] * (index + 1 - len(node.inputs))
        inputs[index] = tensor
        while inputs and not inputs[-1]:
            inputs.pop()
        node.num_captures = min(node.num_captures, max(len(inputs) - len(node.explicit_inputs), 0))
        node.inputs = tuple(inputs)
        if tensor:
            self._add_use(tensor, node)
        if captured and old and tensor:
            rescope(node, old, tensor)

    def replace_all_uses(self, old: str, new: str) -> int:
        """Make every reader of `old` (nodes and graph outputs) read `new`; returns how many changed.

        The producer of `new` keeps reading `old` (so `t = Tanh(h); replace_all_uses(h, t)` wraps h).
        """
        if not self.has_tensor(new):
            raise GraphEditError(f"cannot replace uses of '{old}' with '{new}': '{new}' does not exist.")
        producer = self._producer.get(new)
        users = [u for u in self.users(old) if u is not producer]
        late = [u for u in users if producer is not None and not self.is_before(producer, u)]
        if late:
            raise GraphEditError(
                f"cannot replace uses of '{old}' with '{new}': '{new}' is produced by "
                f"'{producer.name if producer else ''}', after its user '{late[0].name}'. "
                "Insert the producer earlier (insert_before the first user).")
        count = 0
        for user in users:
            for i, t in enumerate(user.inputs):
                if t == old:
                    self.set_input(user, i, new)
                    count += 1
        if old in self._output_count:
            count += self._output_count[old]
            self._set_outputs([new if t == old else t for t in self._outputs])
        return count

    def erase(self, node: Node) -> None:
        """Remove a node. Refused while any of its outputs is still read or is a graph output."""
        busy = {t: [u.name for u in self.users(t)] for t in node.outputs if self.num_uses(t)}
        if busy:
            detail = "; ".join(
                f"'{t}' read by {users or []}{' and is a graph output' if self.is_output(t) else ''}"
                for t, users in busy.items())
            raise GraphEditError(f"cannot erase node '{node.name}' ({node.op_type}): {detail}. "
                                 "Replace those uses first (replace_all_uses).")
        for t in set(node.inputs):
            if t:
                self._uses[t].pop(node, None)
        for t in node.outputs:
            self._producer.pop(t, None)
            self._uses.pop(t, None)
            self.descs.pop(t, None)
        self._erased.add(id(node))
        del self._pos[id(node)]
        del self._by_name[node.name]

    def remove_constant(self, name: str) -> None:
        if self.num_uses(name):
            raise GraphEditError(f"cannot remove constant '{name}': it is still used.")
        del self.constants[name]
        del self.descs[name]
        self._uses.pop(name, None)

    def remove_input(self, name: str) -> None:
        if self.num_uses(name):
            raise GraphEditError(f"cannot remove graph input '{name}': it is still used.")
        self.inputs.remove(name)
        self.descs.pop(name, None)
        self.input_dim_params.pop(name, None)

    # ---- names ---------------------------------------------------------------------------------
    def unique_node_name(self, base: str) -> str:
        return self._unique(base, self._by_name, "node")

    def unique_tensor_name(self, base: str) -> str:
        return self._unique(base, self.descs, "tensor")

    def _unique(self, base: str, taken: dict[str, Any], kind: str) -> str:
        """`base`, else `base_N` with N counted on from the last name handed out (no rescan from 1)."""
        if base not in taken and (kind != "tensor" or base not in self._producer):
            return base
        key = (kind, base)
        i = self._name_counters.get(key, 0) + 1
        while f"{base}_{i}" in taken or (kind == "tensor" and f"{base}_{i}" in self._producer):
            i += 1
        self._name_counters[key] = i
        return f"{base}_{i}"

    # ---- copying -------------------------------------------------------------------------------
    def copy(self) -> Graph:
        """An independent graph sharing immutable parts (descs, constant arrays, attribute values).

        Cheap enough to snapshot a 10k-node graph after every pass: one Node object per node.
        """
        g = Graph(self.name, self.opset)
        g.inputs = list(self.inputs)
        g.captures = list(self.captures)
        g._set_outputs(self._outputs)
        g.constants = dict(self.constants)
        g.descs = dict(self.descs)
        g.input_dim_params = dict(self.input_dim_params)
        g.metadata = dict(self.metadata)
        g._nodes = [n.clone() for n in self._live()]
        for n in g._nodes:
            g._link(n)
        g._renumber()
        return g

    # ---- checks and forms (implemented in verify.py and text.py) -------------------------------
    def verify(self, ops: ShapeChecker | None = None) -> None:
        """Raise VerifyError listing every broken invariant (order, dangling tensors, users map...); with
        `ops` (the op registry: `graph.verify(REGISTRY)`) also every desc its operator infers otherwise."""
        verify_graph(self, ops)

    def to_text(self) -> str:
        return graph_to_text(self)

    def to_json(self) -> dict[str, Any]:
        return graph_to_json(self)

    def __str__(self) -> str:
        return self.to_text()

    # ---- internals -----------------------------------------------------------------------------
    def _claim_tensor(self, name: str, role: str) -> None:
        if not name:
            raise GraphEditError(f"a {role} needs a non-empty tensor name.")
        if name in self._producer or name in self.constants or name in self.inputs or name in self.captures:
            raise GraphEditError(f"tensor '{name}' ({role}) is already defined in graph '{self.name}'.")

    def _set_outputs(self, outputs: Sequence[str]) -> None:
        self._outputs = tuple(outputs)
        self._output_count = Counter(self._outputs)

    def _add_use(self, tensor: str, node: Node) -> None:
        readers = self._uses.setdefault(tensor, {})
        readers[node] = readers.get(node, 0) + 1

    def _drop_use(self, tensor: str, node: Node) -> None:
        readers = self._uses[tensor]
        if readers[node] > 1:
            readers[node] -= 1
        else:
            del readers[node]

    def _live(self) -> list[Node]:
        """The order list without erased nodes (compacted lazily: many erases cost one pass)."""
        if self._erased:
            self._nodes = [n for n in self._nodes if id(n) not in self._erased]
            self._erased.clear()
        return self._nodes

    def _renumber(self) -> None:
        self._pos = {id(n): float(i) for i, n in enumerate(self._live())}

    def _place(self, node: Node, position: int) -> None:
        """Give a node inserted at `position` an order key between its neighbours."""
        nodes = self._nodes
        lo = self._pos[id(nodes[position - 1])] if position > 0 else -1.0
        hi = self._pos[id(nodes[position + 1])] if position + 1 < len(nodes) else lo + 2.0
        key = (lo + hi) / 2
        if not lo < key < hi:  # float precision exhausted by many inserts at one spot
            self._renumber()
        else:
            self._pos[id(node)] = key

    def _link(self, node: Node) -> None:
        self._by_name[node.name] = node
        for t in node.outputs:
            self._producer[t] = node
        for t in node.inputs:
            if t:
                self._add_use(t, node)
