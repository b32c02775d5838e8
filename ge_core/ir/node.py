"""Node: GE's OpDesc plus its place in the graph (data inputs/outputs by tensor name, control edges).

Inputs and outputs are tuples so that nobody edits them behind the graph's back: the graph keeps a
users map, and only `Graph` methods change edges.

A control-flow node (If, Loop, Scan) holds its subgraphs by attribute name (then_branch, else_branch,
body). ONNX subgraphs may read tensors of the enclosing graph by name; those *captured* tensors are the
node's last `num_captures` inputs, after its own ONNX inputs (as GE's parser makes them explicit inputs
of its functional ops). So every walk over inputs — users map, orders, lifetimes, dead code — sees them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ge_core.ir.graph import Graph


@dataclass(slots=True, eq=False)
class Node:
    """One operator instance. `inputs` holds tensor names ("" for an omitted optional input)."""

    name: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    control_inputs: tuple[str, ...] = ()  # names of nodes that must run first (ordering only)
    domain: str = ""
    opset: int = 21  # version of `domain` the node was written against
    # A fused node keeps the ops it replaced as its body: a Graph whose inputs are this node's inputs and
    # whose outputs are this node's outputs, original names preserved. Shared, never edited once built.
    body: Graph | None = None
    # Control flow: attribute name -> subgraph (a Graph whose `captures` name the outer tensors it reads).
    # Owned by the node: copies of the graph copy them, renames of captured tensors reach into them.
    subgraphs: dict[str, Graph] = field(default_factory=dict)
    num_captures: int = 0  # the last `num_captures` inputs are tensors captured by the subgraphs

    @property
    def explicit_inputs(self) -> tuple[str, ...]:
        """The inputs ONNX lists for the op (captured tensors excluded)."""
        return self.inputs[: len(self.inputs) - self.num_captures]

    @property
    def captures(self) -> tuple[str, ...]:
        """Outer tensors the subgraphs read (the trailing inputs)."""
        return self.inputs[len(self.inputs) - self.num_captures:] if self.num_captures else ()

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def input(self, index: int) -> str:
        """The tensor at input `index`, or "" when the optional input is absent."""
        return self.inputs[index] if index < len(self.inputs) else ""

    def has_input(self, index: int) -> bool:
        return bool(self.input(index))

    def clone(self) -> Node:
        """A copy sharing immutable parts (tuples, attribute values, a fused body); attrs dict is new and
        subgraphs are copied (they may be edited: a rename of a captured tensor reaches into them)."""
        return Node(self.name, self.op_type, self.inputs, self.outputs, dict(self.attrs),
                    self.control_inputs, self.domain, self.opset, self.body,
                    {k: g.copy() for k, g in self.subgraphs.items()}, self.num_captures)

    def __repr__(self) -> str:
        return f"Node({self.name!r}, {self.op_type}, in={list(self.inputs)}, out={list(self.outputs)})"
