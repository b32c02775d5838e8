"""The op registry: for every operator, shape/dtype inference, a numpy kernel, a cost and a fusion category.

Each op family lives in one file (`elementwise.py`, `nn.py`, ...) that lists its `OPS`; `ge_core.ops`
registers those lists explicitly — no scanning of globals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ge_core.errors import UnsupportedOpError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc


class Category(StrEnum):
    """Fusion category (TVM's OpPattern, as GE's UB fusion uses it)."""

    ELEMENTWISE = "elementwise"  # one output element from the same-index input element(s)
    BROADCAST = "broadcast"  # elementwise with numpy broadcasting of an input
    INJECTIVE = "injective"  # each output element from one input element (reshape, transpose, slice...)
    REDUCE = "reduce"  # output elements combine many input elements along axes
    CUBE = "cube"  # Conv/MatMul/Gemm: runs on the cube unit
    OPAQUE = "opaque"  # anything else: never fused through


@dataclass(frozen=True, slots=True)
class Operand:
    """An input as inference sees it: its desc and, when known before running, its value."""

    desc: TensorDesc
    value: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class Cost:
    flops: int
    bytes_read: int
    bytes_written: int


InferFn = Callable[[Node, list[Operand | None]], list[TensorDesc]]
KernelFn = Callable[[Node, list[np.ndarray | None]], list[np.ndarray]]
CostFn = Callable[[Node, list[TensorDesc | None], list[TensorDesc]], Cost]
ValueFn = Callable[[Node, list[Operand | None]], list[np.ndarray | None]]


def default_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """One FLOP per output element; bytes are every input read once and every output written once."""
    out_elems = sum(d.numel or 0 for d in outputs)
    return Cost(out_elems, sum(d.nbytes or 0 for d in inputs if d is not None),
                sum(d.nbytes or 0 for d in outputs))


@dataclass(frozen=True)
class OpDef:
    op_type: str
    category: Category
    infer: InferFn
    kernel: KernelFn
    cost: CostFn = default_cost
    domain: str = ""
    # Computes output values from input descs alone (Shape, Size); None means "run the kernel on
    # known input values", which inference does for small constant subgraphs.
    value: ValueFn | None = None
    # False for ops whose output must not be precomputed (random, huge or data-independent shapes).
    foldable: bool = True
    # The output is input 0's memory under another shape (Reshape, Squeeze, Identity...): no kernel is
    # launched for it (GE's no-task ops), and memory planning lets it alias its input.
    view: bool = False
    doc: str = ""


class OpRegistry:
    def __init__(self) -> None:
        self._ops: dict[tuple[str, str], OpDef] = {}

    def register(self, op: OpDef) -> None:
        key = (op.domain, op.op_type)
        if key in self._ops:
            raise ValueError(f"op {op.domain}::{op.op_type} registered twice")
        self._ops[key] = op

    def register_all(self, ops: Iterable[OpDef]) -> None:
        for op in ops:
            self.register(op)

    def get(self, op_type: str, domain: str = "") -> OpDef | None:
        return self._ops.get((_canonical_domain(domain), op_type))

    def for_node(self, node: Node) -> OpDef | None:
        """The node's op: its registered one, else (for a fused node) one that runs its body."""
        op = self.get(node.op_type, node.domain)
        if op is None and node.body is not None:
            from ge_core.ops.fused import fused_opdef

            return fused_opdef(node, self)
        return op

    def lookup(self, node: Node) -> OpDef:
        op = self.for_node(node)
        if op is None:
            raise UnsupportedOpError(
                f"node '{node.name}' uses operator '{_qualified(node)}', which GE Workbench does not support.",
                hint=f"Supported operators: {', '.join(self.supported())}.")
        return op

    def supports(self, node: Node) -> bool:
        return self.for_node(node) is not None

    def supported(self) -> list[str]:
        return sorted(_qualified_key(k) for k in self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def __contains__(self, op_type: str) -> bool:
        return ("", op_type) in self._ops


def _canonical_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def _qualified(node: Node) -> str:
    return _qualified_key((_canonical_domain(node.domain), node.op_type))


def _qualified_key(key: Sequence[str]) -> str:
    domain, op_type = key
    return f"{domain}::{op_type}" if domain else op_type
