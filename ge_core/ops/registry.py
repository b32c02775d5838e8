"""The op registry: for every operator, shape/dtype inference, a numpy kernel, a cost, a fusion category and
the facts passes, hardware and the simulator ask about (commutative, deterministic, unit, activation ...).

Each op family lives in one file (`activation.py`, `math.py`, `conv.py`, ...) that lists its `OPS`;
`ge_core.ops` registers those lists explicitly — no scanning of globals. Code outside `ge_core/ops/` asks
the registry for these facts and keeps no op-name sets of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from ge_core.errors import UnsupportedOpError
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.epilogue import EpilogueFn
from ge_core.ops.matrix_view import GemmFn

if TYPE_CHECKING:
    from ge_core.ir.graph import Graph


class Category(StrEnum):
    """Fusion category (TVM's OpPattern, as GE's UB fusion uses it)."""

    ELEMENTWISE = "elementwise"  # one output element from the same-index input element(s)
    BROADCAST = "broadcast"  # elementwise with numpy broadcasting of an input
    INJECTIVE = "injective"  # each output element from one input element (reshape, transpose, slice...)
    REDUCE = "reduce"  # output elements combine many input elements along axes
    CUBE = "cube"  # Conv/MatMul/Gemm: runs on the cube unit
    OPAQUE = "opaque"  # anything else: never fused through


class Unit(StrEnum):
    """The AI Core unit a kernel of the op runs on (what tiling and the simulator price)."""

    CUBE = "cube"  # the matrix unit (category CUBE)
    VECTOR = "vector"  # vector instructions through the UB
    MTE = "mte"  # DMA only: the bytes are copied as they are (through the UB), no vector instruction
    SCALAR = "scalar"  # shape arithmetic on the scalar unit
    NONE = "none"  # a view: no kernel at all


class VectorClass(StrEnum):
    """The vector instruction class of an op (keys of a profile's `vector_class_cycles`)."""

    ELEMENTWISE = "elementwise"  # simple arithmetic: one cycle per repeat
    TRANSCENDENTAL = "transcendental"  # exp, log, tanh, division, sqrt...: several cycles per repeat
    REDUCE = "reduce"  # folds elements along axes
    DATA_MOVE = "data_move"  # reorders elements (transpose, gather, layout conversion)


class NpuLayout(StrEnum):
    """How the op's NPU kernel works in NC1HWC0 (GE's FE reads it from each kernel's supported formats).

    An op with none: elementwise/broadcast ops follow the format of their inputs, every other op needs its
    origin layout (NCHW/ND)."""

    CUBE = "cube"  # feature map in NC1HWC0, weight (input 1) in FRACTAL_Z, whatever its neighbours do
    POOL = "pool"  # pools NC1HWC0 tiles (input 0), whatever its neighbours do
    CHANNEL_NORM = "channel_norm"  # per-channel normalisation on NC1HWC0 tiles (input 0)
    CONCAT = "concat"  # joins feature maps in whatever layout they come
    RESIZE = "resize"  # spatial resize (input 0; roi/scales/sizes are parameters): follows its input
    PASS_THROUGH = "pass_through"  # output 0 is input 0's values as they are (at inference): follows it


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
SpanFn = Callable[[Node, tuple[int, ...]], int]
# Control flow. A subgraph is inferred from the operands of its formal inputs (its captured tensors come
# from the node's own operands, which the driver in infer.py supplies), and run on the values of its formal
# inputs by the interpreter (`where` says which iteration, for errors). Both return its outputs in order.
InferSubgraph = Callable[[str, list[Operand]], list[Operand]]  # (attribute name, formal inputs) -> outputs
RunSubgraph = Callable[[str, list[np.ndarray], str], list[np.ndarray]]  # (attribute, formal inputs, where)
# The node's explicit operands (captured ones excluded) and the callback; outputs with known values if any.
ControlInferFn = Callable[[Node, list[Operand | None], InferSubgraph], list[Operand]]
# The node's explicit inputs, the runner and its output descs (an empty scan output takes its shape there).
ControlKernelFn = Callable[[Node, list[np.ndarray | None], RunSubgraph, Sequence[TensorDesc | None]],
                           list[np.ndarray]]
BodyFn = Callable[[Node, list[TensorDesc | None], list[TensorDesc]], "Graph | None"]


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
    # False for ops whose output must not be precomputed at compile time (constant folding, values
    # propagated by inference): random ops, and ops whose result is not a plain value (TransData, fused).
    foldable: bool = True
    # The output is input 0's memory under another shape (Reshape, Squeeze, Identity...): no kernel is
    # launched for it (GE's no-task ops), and memory planning lets it alias its input.
    view: bool = False
    doc: str = ""
    # ---- facts the passes, hardware and simulator ask (never their own op-name sets) --------------------
    # A binary op whose two inputs may be swapped bit for bit (a+b is b+a): CSE sorts its inputs.
    commutative: bool = False
    # Two runs on the same inputs give the same outputs. False (random ops) also means never foldable: a
    # nondeterministic op is neither precomputed nor merged by CSE. `foldable` alone is the weaker fact.
    deterministic: bool = True
    # The index of a training_mode input: the op is random unless that input is absent or a constant False
    # (Dropout), so CSE merges it only then.
    training_input: int | None = None
    # Where its kernel runs; None: derived (NONE for a view, CUBE for category CUBE, VECTOR otherwise).
    unit: Unit | None = None
    # Its vector instruction class; None: derived (REDUCE for category REDUCE, ELEMENTWISE otherwise).
    vector_class: VectorClass | None = None
    # One input applied elementwise on the way out: a Conv/MatMul kernel can apply it in its epilogue, so
    # graph fusion absorbs it (FusedConv, FullyConnection).
    activation: bool = False
    # Its form in a Conv's compiled epilogue (ops/epilogue.py), from the node and its constant inputs: the
    # interpreter then applies it with the bias and a residual in one pass. None: no such form.
    epilogue: EpilogueFn | None = None
    # How its NPU kernel works in NC1HWC0 (see NpuLayout); None: by category.
    npu_layout: NpuLayout | None = None
    # A reduce whose output keeps its input's shape (softmax, normalisations): how many input elements one
    # reduction reads, from the input shape (the smallest UB tile). None: the last axis.
    reduce_span: SpanFn | None = None
    # Its cost already counts device bytes (NC1HWC0 padding included): the simulator adds no padding.
    device_bytes: bool = False
    # Its names in GE's own graphs and msprof profiles where they differ from the ONNX name (Conv2D for Conv,
    # MatMulV2 for MatMul...): a measured op is matched to ours by them.
    ge_types: tuple[str, ...] = ()
    # An input read only where the indices point (Gather's table, an embedding): the kernel moves the rows it
    # gathers, not the table, so the table takes no UB buffer and sets no element count. None: no such input.
    indexed_input: int | None = None
    # A cube op as a batched matrix product (ops/matrix_view.py), from its node and descs: what tiling and
    # the simulator price on the cube. None for an op that is no matrix product.
    gemm: GemmFn | None = None
    # The output axis that indexes its channels, for an op with weights or parameters per output channel: 1
    # for convolutions and channel normalisations (N, C, ...), -1 (the last) for matrix products (..., N).
    # Where a per-channel scale or bias applies (weight folding, a fused kernel's bias). None: no such axis.
    channel_axis: int | None = None
    # ---- control flow (If, Loop, Scan): the op's work is its node's subgraphs ----------------------------
    # Inference through the subgraphs (infer.py's driver calls it; `infer` is the same without applying the
    # subgraphs' descs) and the kernel the interpreter calls with a runner of the subgraphs (`kernel` refuses).
    infer_subgraphs: ControlInferFn | None = None
    run_subgraphs: ControlKernelFn | None = None
    # The one subgraph the node runs exactly once, given its explicit operands (an If whose condition is
    # known), else None: constant folding inlines it, as GE folds such an If.
    inline_branch: Callable[[Node, list[Operand | None]], str | None] | None = None
    # Its kernel written as a body of simpler registered ops, from the node and its descs (None while it
    # cannot say, e.g. unknown dims): tiling and the simulator price the op as they price a fused kernel of
    # that body (Attention: MatMul, scale, mask, Softmax, MatMul, like the FusedAttention graph fusion
    # makes). For pricing only: the op's own kernel runs. A shared body, never edited.
    kernel_body: BodyFn | None = None

    def __post_init__(self) -> None:
        if not self.deterministic and self.foldable:
            raise ValueError(f"op {self.op_type}: a nondeterministic op cannot be foldable")
        if self.unit is None:  # a frozen dataclass: the derived defaults are set once, here
            derived = Unit.NONE if self.view else Unit.CUBE if self.category == Category.CUBE else Unit.VECTOR
            object.__setattr__(self, "unit", derived)
        if self.vector_class is None:
            cls = VectorClass.REDUCE if self.category == Category.REDUCE else VectorClass.ELEMENTWISE
            object.__setattr__(self, "vector_class", cls)


# The two parts of the registry built on top of this module (fused.py and infer.py import it): ge_core.ops hands
# them in, so the modules form no cycle.
BodyOpFn = Callable[[Node, "OpRegistry"], OpDef]  # the OpDef of a fused node, from its body
ShapeProblemsFn = Callable[["Graph", "OpRegistry"], list[str]]  # every node's descs against inference


class OpRegistry:
    """The registered ops by (domain, op type). `body_op` gives a fused node (a body and no op of its own) its
    OpDef; `check_shapes` is the shape check of `graph.verify(registry)`."""

    def __init__(self, *, body_op: BodyOpFn, check_shapes: ShapeProblemsFn) -> None:
        self._ops: dict[tuple[str, str], OpDef] = {}
        self._body_op = body_op
        self._check_shapes = check_shapes

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
        """The node's op: its registered one, else (for a fused node) one that infers and costs its body."""
        op = self.get(node.op_type, node.domain)
        if op is None and node.body is not None:
            return self._body_op(node, self)
        return op

    def channel_axis(self, node: Node, rank: int) -> int | None:
        """The axis of the node's output (of `rank` dims) that indexes its channels (OpDef.channel_axis), or
        None (no such axis, or an output too small to have it)."""
        op = self.get(node.op_type, node.domain)
        axis = None if op is None else op.channel_axis
        return None if axis is None or not -rank <= axis < rank else axis % rank

    def runs_body(self, node: Node) -> bool:
        """A fused node: a body and no registered op of its own. The interpreter runs its body; its OpDef
        (from `for_node`) has inference, cost and category but no kernel."""
        return node.body is not None and self.get(node.op_type, node.domain) is None

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

    def shape_problems(self, graph: Graph) -> list[str]:
        """For graph.verify(self): every node's output descs against what its op infers (ir.ShapeChecker)."""
        return self._check_shapes(graph, self)

    def __iter__(self) -> Iterator[OpDef]:
        """Every registered op, in registration order."""
        return iter(self._ops.values())

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
