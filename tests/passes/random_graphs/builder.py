"""The graph being grown: a `Builder` holding the graph, its RNG and the activations moves may read.

A move calls `Builder.op`/`Builder.const` to add nodes and constants; every node is inferred as it is
added, and `Builder.attempt` rolls back a whole move when one of its nodes does not infer (`Reject`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY, Operand

F32 = np.float32
MAX_ELEMENTS = 2048  # per tensor: keeps every graph cheap to run
MAX_VALUE_ELEMENTS = 1 << 16  # constant values kept for inference (as ge_core.ops.infer does)
INT64_MAX = int(np.iinfo(np.int64).max)
T = TypeVar("T")


class Reject(Exception):
    """The move does not apply to the chosen tensor, or one of its nodes does not infer: roll it back."""


@dataclass
class Builder:
    """The graph being grown, its RNG, and the float32 activations a move may read (`pool`)."""

    graph: Graph
    rng: np.random.Generator
    control_rate: float = 0.0  # chance that a new node also gets a control edge from a recent node
    pool: list[str] = field(default_factory=list)
    values: dict[str, np.ndarray] = field(default_factory=dict)  # known values (shape arithmetic)
    added: list[Node] = field(default_factory=list)  # nodes of the move in progress
    new_constants: list[str] = field(default_factory=list)
    counter: int = 0

    # ---- drawing -------------------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, options: Sequence[T]) -> T:
        return options[int(self.rng.integers(len(options)))]

    def normal(self, shape: Sequence[int], scale: float = 1.0) -> np.ndarray:
        return (self.rng.standard_normal(tuple(shape)) * scale).astype(F32)

    def uniform(self, shape: Sequence[int], lo: float, hi: float) -> np.ndarray:
        return self.rng.uniform(lo, hi, tuple(shape)).astype(F32)

    def scale(self, shape: Sequence[int]) -> np.ndarray:
        """A multiplier or divisor: |v| in [0.5, 2], a random sign now and then."""
        sign = np.where(self.rng.random(tuple(shape)) < 0.15, -1.0, 1.0)
        return (self.uniform(shape, 0.5, 2.0) * sign).astype(F32)

    def shape(self, tensor: str) -> tuple[int, ...]:
        return self.graph.desc(tensor).shape

    @property
    def opset(self) -> int:
        return self.graph.opset[""]

    def pick(self, eligible: Callable[[tuple[int, ...]], bool]) -> str | None:
        """An activation for the next move: mostly the newest eligible one (chains), else any (DAGs)."""
        options = [t for t in self.pool if eligible(self.shape(t))]
        if not options:
            return None
        return options[-1] if self.chance(0.55) else self.choice(options)

    # ---- building ------------------------------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any, dtype: Any = F32) -> str:
        name = self.fresh("c")
        array = np.array(value, dtype=dtype)
        self.graph.add_constant(name, array)
        self.new_constants.append(name)
        if array.size <= MAX_VALUE_ELEMENTS:
            self.values[name] = array
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.const(list(values), np.int64)

    def op(self, op_type: str, inputs: Sequence[str], attrs: dict[str, Any] | None = None) -> str:
        return self.ops(op_type, inputs, attrs, 1)[0]

    def ops(self, op_type: str, inputs: Sequence[str], attrs: dict[str, Any] | None = None,
            n_out: int = 1) -> list[str]:
        outs = [self.fresh("t") for _ in range(n_out)]
        control: tuple[str, ...] = ()
        if self.control_rate and len(self.graph) and self.chance(self.control_rate):
            control = (self.choice(self.graph.nodes[-6:]).name,)  # ordering only: pins that node
        node = self.graph.add_node(op_type, inputs, outs, attrs, name=outs[0], control_inputs=control)
        self.added.append(node)
        self._infer(node)
        return outs

    def _infer(self, node: Node) -> None:
        opdef = REGISTRY.lookup(node)
        operands = [Operand(self.graph.descs[t], self.values.get(t)) if t else None for t in node.inputs]
        try:
            descs = opdef.infer(node, operands)
        except Exception as exc:
            raise Reject(f"{node.op_type} does not infer: {exc}") from exc
        for t, d in zip(node.outputs, descs, strict=False):
            if not d.is_static or (d.numel or 0) > MAX_ELEMENTS or 0 in d.shape:
                raise Reject(f"{node.op_type} output {d.text()} is dynamic, empty or too big")
            self.graph.set_desc(t, d)
        if not opdef.foldable:
            return
        if opdef.value is not None:
            computed = opdef.value(node, operands)
        elif all(o is None or o.value is not None for o in operands):
            try:
                computed = opdef.kernel(node, [o.value if o else None for o in operands])
            except Exception as exc:
                raise Reject(f"{node.op_type} fails on its constant inputs: {exc}") from exc
        else:
            return
        for t, v in zip(node.outputs, computed, strict=False):
            if v is not None and np.asarray(v).size <= MAX_VALUE_ELEMENTS:
                self.values[t] = np.asarray(v)

    def attempt(self, move: Callable[[Builder, str], list[str]], x: str, node_limit: int) -> bool:
        """Run a move; on Reject (or over the node budget) undo everything it added."""
        self.added, self.new_constants = [], []
        try:
            new = move(self, x)
            if len(self.graph) > node_limit:
                raise Reject("over the node budget")
        except Reject:
            self._rollback()
            return False
        self.pool.extend(new)
        return True

    def _rollback(self) -> None:
        for node in reversed(self.added):
            self.graph.erase(node)
            for t in node.outputs:
                self.values.pop(t, None)
        for name in reversed(self.new_constants):
            self.graph.remove_constant(name)
            self.values.pop(name, None)
        self.added, self.new_constants = [], []


Move = Callable[[Builder, str], list[str]]  # reads x, returns the activations it leaves for later moves
