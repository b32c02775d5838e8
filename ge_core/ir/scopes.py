"""Scopes: what a Graph does for control flow — the subgraphs of its nodes and the tensors they capture.

A subgraph (an If's then_branch, a Loop's body) is a Graph whose nodes may read tensors of the enclosing
graph by name. Those names are its `captures` (with descs, like inputs fed by the enclosing node), and the
control-flow node lists them as its trailing inputs (Node.num_captures), so the enclosing graph's users
map, orders, lifetimes and dead code see the reads. When the enclosing graph points such an input at
another tensor (set_input, replace_all_uses, rename_tensor), the subgraphs are renamed to match, nested
subgraphs included: names inside a subgraph always match the tensors they read outside.

A ScopeEdits mixin of ge_core.ir.graph.Graph, which owns the state declared below.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ge_core.errors import GraphEditError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc


class ScopeEdits:
    """Captured tensors of a subgraph, and renames that reach into the subgraphs of a graph's nodes."""

    name: str
    inputs: list[str]
    captures: list[str]  # outer tensors this graph reads (empty for a top-level graph)
    constants: dict[str, np.ndarray]
    descs: dict[str, TensorDesc]
    input_dim_params: dict[str, tuple[int | str, ...]]
    _outputs: tuple[str, ...]
    _output_count: Counter[str]
    _producer: dict[str, Node]
    _uses: dict[str, dict[Node, int]]

    if TYPE_CHECKING:  # provided by Graph
        def _claim_tensor(self, name: str, role: str) -> None: ...
        def _set_outputs(self, outputs: Sequence[str]) -> None: ...
        def has_tensor(self, tensor: str) -> bool: ...
        def unique_tensor_name(self, base: str) -> str: ...
        def rename_tensor(self, old: str, new: str) -> None: ...
        def num_uses(self, tensor: str) -> int: ...

    def add_capture(self, name: str, desc: TensorDesc) -> None:
        """Declare that this (sub)graph reads `name` from the enclosing graph."""
        self._claim_tensor(name, "captured tensor")
        self.captures.append(name)
        self.descs[name] = desc

    def remove_capture(self, name: str) -> None:
        if self.num_uses(name):
            raise GraphEditError(f"cannot remove captured tensor '{name}' of '{self.name}': it is still read.")
        self.captures.remove(name)
        self.descs.pop(name, None)

    def rename_capture(self, old: str, new: str) -> None:
        """The enclosing graph now gives this subgraph `new` where it gave `old`: rename the reads (nested
        subgraphs too). A tensor of this subgraph's own already called `new` is renamed out of the way."""
        if old == new or old not in self.captures:
            return
        if new in self.captures:  # the subgraph already reads `new`: the two captures become one
            self._retarget_reads(old, new)
            self.captures.remove(old)
            self.descs.pop(old, None)
            return
        if self.has_tensor(new) or new in self.inputs:
            self._rename_local(new, self.unique_tensor_name(new))
        self.captures[self.captures.index(old)] = new
        self.descs[new] = self.descs.pop(old)
        self._retarget_reads(old, new)

    def _retarget_reads(self, old: str, new: str) -> None:
        """Every read of `old` in this graph (node inputs, graph outputs) reads `new`; users map moved."""
        users = self._uses.pop(old, {})
        into = self._uses.setdefault(new, {})
        for user, count in users.items():
            into[user] = into.get(user, 0) + count
            first_capture = len(user.inputs) - user.num_captures
            captured = any(t == old and i >= first_capture for i, t in enumerate(user.inputs))
            user.inputs = tuple(new if t == old else t for t in user.inputs)
            if captured:
                rescope(user, old, new)
        if not into:
            del self._uses[new]
        if old in self._output_count:
            self._set_outputs([new if t == old else t for t in self._outputs])

    def _rename_local(self, old: str, new: str) -> None:
        """Rename a tensor this graph defines itself (node output, input or constant) to a free name."""
        if old in self._producer:
            self.rename_tensor(old, new)
            return
        if old in self.constants:
            self.constants[new] = self.constants.pop(old)
        elif old in self.inputs:
            self.inputs[self.inputs.index(old)] = new
            if old in self.input_dim_params:
                self.input_dim_params[new] = self.input_dim_params.pop(old)
        else:
            raise GraphEditError(f"graph '{self.name}' defines no tensor '{old}' to rename.")
        self.descs[new] = self.descs.pop(old)
        self._retarget_reads(old, new)


def rescope(node: Node, old: str, new: str) -> None:
    """`node` now captures `new` where it captured `old`: rename inside each of its subgraphs."""
    for sub in node.subgraphs.values():
        sub.rename_capture(old, new)


def capture_slot(node: Node, index: int) -> bool:
    """Whether input `index` of `node` is one of its captured tensors."""
    return node.num_captures > 0 and index >= len(node.inputs) - node.num_captures
