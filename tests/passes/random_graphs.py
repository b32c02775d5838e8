"""A seeded generator of random valid GE graphs, for the compile passes' property tests.

`random_graph(seed)` grows a DAG of registered ops through the Graph API, one "move" at a time. A move adds
a few nodes for one pattern the passes look for (Conv+BatchNormalization, Transpose pairs, Reshape chains,
no-ops, constant-only subgraphs, duplicate subexpressions...) or a near miss that must not fire (a scale
that varies over space, a Pad that pads, a Dropout whose mask is read). Every node is inferred as it is
added; a move whose nodes do not infer is rolled back and another one is drawn, so only valid graphs come
out. Dead branches come for free: tips not chosen as graph outputs are read by nobody.

Values stay modest (inputs ~N(0,1), weights scaled by 1/sqrt(fan_in), divisors away from zero) and avoid
discontinuities on rewritten values (Where's condition reads graph inputs only), so that any rewrite the
passes make must keep outputs within 1e-4 relative. Same seed, same graph and feeds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import desc_of
from ge_core.ops import REGISTRY, Operand, infer_graph

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


# ---- shape helpers -------------------------------------------------------------------------------

def broadcast_shape(b: Builder, shape: Sequence[int]) -> tuple[int, ...]:
    """A random shape that broadcasts into `shape` without growing it (scalar, per-axis, full...)."""
    roll = b.rng.random()
    if roll < 0.2 or not shape:
        return ()
    if roll < 0.3:
        return (1,)
    dims = [d if b.chance(0.5) else 1 for d in shape]
    while dims and dims[0] == 1 and b.chance(0.5):
        dims.pop(0)
    return tuple(dims)


def channel_shape(b: Builder, shape: Sequence[int], axis: int, per_channel: bool) -> tuple[int, ...]:
    """A constant shape for a scale/shift after Conv (axis 1) or MatMul (axis -1).

    per_channel: one value per channel (or a scalar) — foldable into the weights. Otherwise the constant
    varies along another axis (space, batch, rows) — a near miss that must not fold.
    """
    rank, a = len(shape), axis % len(shape)
    full = [1] * rank
    if per_channel:
        if b.chance(0.2):
            return b.choice([(), (1,)])
        full[a] = shape[a]
        return tuple(full[int(b.rng.integers(0, a + 1)):])
    others = [i for i in range(rank) if i != a and shape[i] > 1]
    if not others:  # nothing but the channel can vary: per channel it is
        return channel_shape(b, shape, axis, True)
    for i in others:
        if b.chance(0.5):
            full[i] = shape[i]
    keep = b.choice(others)
    full[keep] = shape[keep]
    if b.chance(0.5):
        full[a] = shape[a]
    first = next(i for i, d in enumerate(full) if d > 1)
    return tuple(full[int(b.rng.integers(0, first + 1)):])


def factor_shape(b: Builder, n: int, rank: int) -> list[int]:
    """Spread the prime factors of n over `rank` dims at random."""
    dims, p, rest = [1] * rank, 2, n
    while rest > 1:
        while rest % p == 0:
            dims[int(b.rng.integers(rank))] *= p
            rest //= p
        p += 1
    return dims


def reshape_spec(b: Builder, src: Sequence[int], dst: Sequence[int]) -> list[int]:
    """Reshape's shape input for dst: sometimes with a -1, or a 0 copying an input dim."""
    spec = list(dst)
    if spec and b.chance(0.25):
        spec[int(b.rng.integers(len(spec)))] = -1
    for i in range(min(len(spec), len(src))):
        if spec[i] == src[i] and b.chance(0.15):
            spec[i] = 0
    return spec


def reshape(b: Builder, x: str, dst: Sequence[int]) -> str:
    spec = reshape_spec(b, b.shape(x), dst)
    allowzero = b.opset >= 14 and 0 not in spec and b.chance(0.1)
    return b.op("Reshape", [x, b.ints(spec)], {"allowzero": 1} if allowzero else {})


def with_axes(b: Builder, op_type: str, x: str, axes: Sequence[int], attrs: dict[str, Any] | None = None) -> str:
    """Squeeze/Unsqueeze/Reduce*: axes as an input from the opset that made them one, else an attribute."""
    since = {"Squeeze": 13, "Unsqueeze": 13, "ReduceSum": 13}.get(op_type, 18)
    if b.opset >= since:
        return b.op(op_type, [x, b.ints(axes)], attrs)
    return b.op(op_type, [x], {**(attrs or {}), "axes": list(axes)})


def inverse(perm: Sequence[int]) -> list[int]:
    return [int(i) for i in np.argsort(perm)]


def random_perm(b: Builder, rank: int) -> list[int]:
    return [int(i) for i in b.rng.permutation(rank)]


def fits(small: Sequence[int], big: Sequence[int]) -> bool:
    """True when `small` broadcasts into `big` without growing it."""
    try:
        return np.broadcast_shapes(tuple(small), tuple(big)) == tuple(big)
    except ValueError:
        return False


# ---- moves: each reads x, adds a few nodes and returns the activations it leaves for later moves ----

Move = Callable[[Builder, str], list[str]]
UNARY = ("Relu", "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "Exp", "Sqrt", "Abs", "Softsign", "Elu",
         "HardSigmoid", "Neg")


def apply_unary(b: Builder, kind: str, x: str) -> str:
    if kind == "LeakyRelu":
        return b.op(kind, [x], {"alpha": b.choice((0.01, 0.1, 0.2))})
    if kind == "Clip":
        lo, hi = b.const(-b.rng.uniform(0.5, 2.0)), b.const(b.rng.uniform(0.5, 2.0))
        return b.op(kind, b.choice(([x, lo, hi], [x, lo], [x, "", hi])))
    if kind == "Exp":  # of bounded values: e^[-1, 1]
        return b.op("Exp", [b.op("Tanh", [x])])
    if kind == "Sqrt":
        return b.op("Sqrt", [b.op("Abs", [x])])
    return b.op(kind, [x])


def unary(b: Builder, x: str) -> list[str]:
    return [apply_unary(b, b.choice(UNARY), x)]


def binary(b: Builder, x: str) -> list[str]:
    """x op y for another activation y broadcasting into x (or a gate computed from x, as in SE blocks)."""
    shape = b.shape(x)
    others = [y for y in b.pool if (y != x or b.chance(0.1)) and fits(b.shape(y), shape)]
    if others and b.chance(0.75):
        y = b.choice(others)
    else:
        axes = [i for i in range(len(shape)) if b.chance(0.5)] or [len(shape) - 1]
        y = b.op("Sigmoid", [with_axes(b, "ReduceMean", x, axes)])
    kind = b.choice(("Add", "Mul", "Max", "Min", "Div"))
    if kind == "Div":  # a safe denominator: |y| + 1
        return [b.op("Div", [x, b.op("Add", [b.op("Abs", [y]), b.const(1.0)])])]
    return [b.op(kind, [x, y] if b.chance(0.7) else [y, x])]


def const_binary(b: Builder, x: str) -> list[str]:
    kind = b.choice(("Add", "Sub", "Mul", "Div"))
    shape = broadcast_shape(b, b.shape(x))
    c = b.const(b.scale(shape) if kind in ("Mul", "Div") else b.normal(shape, 0.5))
    return [b.op(kind, [c, x] if kind != "Div" and b.chance(0.3) else [x, c])]


# ---- no-ops (and near misses that look like them) --------------------------------------------------

def _dropout(b: Builder, x: str) -> str:
    n_out = b.choice((1, 1, 2))  # 2: a mask nobody reads
    if b.opset < 12:  # the ratio was an attribute
        return b.ops("Dropout", [x], {"ratio": 0.3} if b.chance(0.5) else {}, n_out=n_out)[0]
    inputs = b.choice(([x], [x, b.const(b.choice((0.0, 0.3, 0.5)))],
                       [x, b.const(0.5), b.const(False, np.bool_)]))
    return b.ops("Dropout", inputs, n_out=n_out)[0]


def _dropout_mask_read(b: Builder, x: str) -> str:
    """Near miss: the mask is read, so the Dropout node must stay (its data output may still bypass)."""
    out, mask = b.ops("Dropout", [x], n_out=2)
    return b.op("Mul", [out, b.op("Cast", [mask], {"to": 1})])


def _pad(b: Builder, x: str) -> str:
    pads = [0] * (2 * len(b.shape(x)))
    if pads and b.chance(0.25):  # near miss: it does pad
        pads[int(b.rng.integers(len(pads)))] = 1
    mode = {"mode": b.choice(("reflect", "edge"))} if b.chance(0.2) else {}
    return b.op("Pad", [x, b.ints(pads)] + ([b.const(0.0)] if b.chance(0.4) and not mode else []), mode)


def _expand(b: Builder, x: str) -> str:
    """Expand to x's own shape; now and then to a bigger one (no no-op)."""
    shape = list(b.shape(x))
    grow = [i for i, d in enumerate(shape) if d == 1]
    if grow and b.chance(0.3):
        shape[b.choice(grow)] = 2
    return b.op("Expand", [x, b.ints(shape)])


def _single_piece(b: Builder, x: str) -> str:
    """Variadic ops of one input, Split into one piece, CastLike a tensor of the same dtype."""
    kind = b.choice(("Sum", "Max", "Min", "Mean", "Split", "CastLike"))
    if kind == "Split":
        axis = int(b.rng.integers(len(b.shape(x))))
        if b.opset >= 18:
            return b.op("Split", [x], {"axis": axis, "num_outputs": 1})
        return b.op("Split", [x], {"axis": axis})
    return b.op(kind, [x, b.choice(b.pool)] if kind == "CastLike" else [x])


def _resize(b: Builder, x: str) -> str:
    """Resize by scale 1; or by 1.1 on short axes, which keeps the size but moves every sample (near miss)."""
    shape = b.shape(x)
    scales = [1.0] * len(shape)
    if b.chance(0.3):
        scales[-1] = 1.1 if shape[-1] < 10 else 1.0
    attrs = {"mode": b.choice(("nearest", "linear"))}
    return b.op("Resize", [x, b.const(np.zeros(0, F32)), b.const(scales)], attrs)


def _neutral(b: Builder, x: str) -> str:
    """Mul/Div by ones, Add/Sub zeros; now and then broadcasting grows the rank (then it is no no-op)."""
    kind = b.choice(("Mul", "Div", "Add", "Sub"))
    shape = (1, *b.shape(x)) if b.chance(0.15) else broadcast_shape(b, b.shape(x))
    c = b.const(np.ones(shape, F32) if kind in ("Mul", "Div") else np.zeros(shape, F32))
    return b.op(kind, [c, x] if kind in ("Mul", "Add") and b.chance(0.3) else [x, c])


def _full_slice(b: Builder, x: str) -> str:
    shape = b.shape(x)
    axes = [i for i in range(len(shape)) if b.chance(0.6)] or [0]
    starts = [b.choice((0, -shape[a])) for a in axes]
    ends = [b.choice((shape[a], INT64_MAX, 1000)) for a in axes]
    steps = [b.ints([1] * len(axes))] if b.chance(0.3) else []
    return b.op("Slice", [x, b.ints(starts), b.ints(ends), b.ints(axes), *steps])


NOOPS: dict[str, Callable[[Builder, str], str]] = {
    "Identity": lambda b, x: b.op("Identity", [x]),
    "Dropout": _dropout,
    "DropoutMaskRead": _dropout_mask_read,
    "Cast": lambda b, x: b.op("Cast", [x], {"to": 1}),
    "CastRoundTrip": lambda b, x: b.op("Cast", [b.op("Cast", [x], {"to": 11})], {"to": 1}),  # exact via f64
    "Reshape": lambda b, x: reshape(b, x, b.shape(x)),
    "Transpose": lambda b, x: b.op("Transpose", [x], {"perm": list(range(len(b.shape(x))))}),
    "Pad": _pad,
    "Neutral": _neutral,
    "Slice": _full_slice,
    "Concat": lambda b, x: b.op("Concat", [x], {"axis": int(b.rng.integers(-len(b.shape(x)), len(b.shape(x))))}),
    "Expand": _expand,
    "SinglePiece": _single_piece,
    "Resize": _resize,
}
OUTPUT_NOOPS = ("Identity", "Dropout", "Cast", "Reshape", "Transpose", "Slice", "Concat")


def noop(b: Builder, x: str) -> list[str]:
    return [NOOPS[b.choice(tuple(NOOPS))](b, x)]


# ---- data movement -----------------------------------------------------------------------------------

def transpose_chain(b: Builder, x: str) -> list[str]:
    """Transpose pairs and triples: inverse (cancel), random (compose), or returning to x's layout."""
    p = random_perm(b, len(b.shape(x)))
    if b.chance(0.15):  # no perm attribute: the axes reversed
        p = list(range(len(p)))[::-1]
    y = b.op("Transpose", [x], {"perm": p} if p != list(range(len(p)))[::-1] or b.chance(0.5) else {})
    keep = [y] if b.chance(0.2) else []  # the middle tensor is read elsewhere too
    roll = b.rng.random()
    if roll < 0.45:
        z = b.op("Transpose", [y], {"perm": inverse(p)})
    elif roll < 0.75:
        z = b.op("Transpose", [y], {"perm": random_perm(b, len(p))})
    elif roll < 0.9:
        q = random_perm(b, len(p))
        z = b.op("Transpose", [b.op("Transpose", [y], {"perm": q})], {"perm": inverse([p[i] for i in q])})
    else:
        return [y]
    return [*keep, z]


def reshape_chain(b: Builder, x: str) -> list[str]:
    """Reshape/Flatten/Squeeze/Unsqueeze chains, many of them returning to x's shape."""
    src = b.shape(x)
    kind = b.choice(("roundtrip", "random", "flatten", "unsqueeze", "chain"))
    if kind == "unsqueeze":
        ones = [i for i, d in enumerate(src) if d == 1]
        if ones and b.chance(0.4):
            y = with_axes(b, "Squeeze", x, ones) if b.chance(0.7) else b.op("Squeeze", [x])
            return [with_axes(b, "Unsqueeze", y, ones)] if b.chance(0.7) else [y]
        axes = sorted({int(a) for a in b.rng.integers(0, len(src) + 1, size=int(b.rng.integers(1, 3)))})
        y = with_axes(b, "Unsqueeze", x, axes)
        return [with_axes(b, "Squeeze", y, axes)] if b.chance(0.7) else [y]
    if kind == "flatten":
        y = b.op("Flatten", [x], {"axis": int(b.rng.integers(0, len(src) + 1))})
    else:
        n = int(np.prod(src))
        y = reshape(b, x, factor_shape(b, n, int(b.rng.integers(1, 5))))
        if kind == "chain":
            y = reshape(b, y, factor_shape(b, n, int(b.rng.integers(1, 5))))
    back = b.chance(0.8) if kind in ("roundtrip", "flatten") else b.chance(0.3)
    return [reshape(b, y, src)] if back else [y]


def channel_shuffle(b: Builder, x: str) -> list[str]:
    """ShuffleNet's Reshape [N,g,C/g,H,W] -> Transpose(0,2,1,3,4) -> Reshape [N,C,H,W]."""
    n, c, h, w = b.shape(x)
    groups = [g for g in range(2, c) if c % g == 0]
    if not groups:
        raise Reject("channels do not split into groups")
    g = b.choice(groups)
    y = b.op("Transpose", [reshape(b, x, [n, g, c // g, h, w])], {"perm": [0, 2, 1, 3, 4]})
    return [reshape(b, y, [n, c, h, w])]


def shape_reshape(b: Builder, x: str) -> list[str]:
    """Reshape to [N, -1] with the target computed from Shape(x): Gather/Unsqueeze/Concat, all foldable."""
    src = b.shape(x)
    roll = b.rng.random()
    if roll < 0.5:
        lead = with_axes(b, "Unsqueeze", b.op("Gather", [b.op("Shape", [x]), b.const(0, np.int64)]), [0])
    elif roll < 0.75 or b.opset < 15:  # Shape's start/end came with opset 15
        lead = b.op("Gather", [b.op("Shape", [x]), b.ints(list(range(int(b.rng.integers(1, len(src))))))])
    else:
        lead = b.op("Shape", [x], {"start": 0, "end": int(b.rng.integers(1, len(src)))})
    y = b.op("Reshape", [x, b.op("Concat", [lead, b.ints([-1])], {"axis": 0})])
    return [reshape(b, y, src)] if b.chance(0.4) else [y]


# ---- constants and duplicates ---------------------------------------------------------------------

def const_subgraph(b: Builder, x: str) -> list[str]:
    """A value computed from constants only (Add/Mul, Concat, Reshape, a Constant node), then used on x."""
    shape = broadcast_shape(b, b.shape(x))
    kind = b.choice(("arith", "concat", "reshape", "constant"))
    wide = [i for i, d in enumerate(shape) if d >= 2]
    if kind == "concat" and wide:
        axis = b.choice(wide)
        cut = int(b.rng.integers(1, shape[axis]))
        parts = [[*shape[:axis], m, *shape[axis + 1:]] for m in (cut, shape[axis] - cut)]
        v = b.op("Concat", [b.const(b.uniform(p, 0.5, 1.5)) for p in parts], {"axis": axis})
    elif kind == "reshape":
        v = b.op("Reshape", [b.const(b.uniform([int(np.prod(shape))], 0.5, 1.5)), b.ints(shape)])
    elif kind == "constant":
        v = b.op("Mul", [b.op("Constant", [], {"value": b.uniform(shape, 0.5, 1.5)}), b.const(b.scale(shape))])
    else:
        v = b.op("Add", [b.const(b.uniform(shape, 0.25, 0.75)), b.const(b.uniform(shape, 0.25, 0.75))])
        v = b.op("Mul", [v, b.const(b.uniform(shape, 0.8, 1.2))])
    return [b.op(b.choice(("Mul", "Add")), [x, v])]


def duplicate(b: Builder, x: str) -> list[str]:
    """The same computation twice (CSE's food), or twice with a small difference (must not merge)."""
    kind = b.choice(("unary", "const", "weights", "near_attr", "near_const", "commuted", "constant_node"))
    if kind == "constant_node":  # two Constant nodes holding the same value
        value = b.scale(broadcast_shape(b, b.shape(x)))
        y1, y2 = (b.op("Mul", [x, b.op("Constant", [], {"value": value.copy()})]) for _ in range(2))
    elif kind in ("unary", "near_attr"):
        op = b.choice(("Relu", "Sigmoid", "Tanh", "LeakyRelu", "Transpose"))
        attrs = [{"alpha": 0.1}, {"alpha": 0.1 if kind == "unary" else 0.2}] if op == "LeakyRelu" else [{}, {}]
        y1, y2 = (b.op(op, [x], a) for a in attrs)
    elif kind in ("const", "near_const"):
        c = b.scale(broadcast_shape(b, b.shape(x)))
        c2 = c.copy()
        if kind == "near_const":
            c2.reshape(-1)[0] += 0.25
        y1, y2 = b.op("Mul", [x, b.const(c)]), b.op("Mul", [x, b.const(c2)])
    elif kind == "weights":
        k = b.shape(x)[-1]
        w = b.normal((k, b.choice((2, 4))), 1 / np.sqrt(k))
        w1 = b.const(w)
        y1, y2 = b.op("MatMul", [x, w1]), b.op("MatMul", [x, w1 if b.chance(0.5) else b.const(w.copy())])
    else:
        same = [y for y in b.pool if b.shape(y) == b.shape(x)]
        y = b.choice(same)
        op = b.choice(("Add", "Mul", "Max"))
        y1, y2 = b.op(op, [x, y]), b.op(op, [y, x])
    return [b.op("Add", [y1, y2])] if b.chance(0.5) else [y1, y2]


# ---- weights: MatMul/Gemm, Conv, BatchNormalization --------------------------------------------------

def affine(b: Builder, y: str, axis: int) -> str:
    """Scale and/or shift by constants after a Conv (axis 1) or MatMul (axis -1).

    Per-channel constants fold into the weights; others (varying over space, batch or rows) must not.
    """
    shape = b.shape(y)
    if b.chance(0.55):
        c = b.const(b.scale(channel_shape(b, shape, axis, b.chance(0.7))))
        kind = b.choice(("Mul", "Mul", "Div"))
        y = b.op(kind, [c, y] if kind == "Mul" and b.chance(0.2) else [y, c])
    if b.chance(0.45):
        c = b.const(b.normal(channel_shape(b, shape, axis, b.chance(0.7)), 0.3))
        kind = b.choice(("Add", "Add", "Sub"))
        y = b.op(kind, [c, y] if b.chance(0.2) else [y, c])
    return y


def batchnorm(b: Builder, y: str) -> str:
    c = b.shape(y)[1]
    params = [b.scale((c,)), b.normal((c,), 0.1), b.normal((c,), 0.1), b.uniform((c,), 0.5, 1.5)]
    attrs = {"epsilon": b.choice((1e-5, 1e-3))} if b.chance(0.5) else {}
    return b.op("BatchNormalization", [y, *(b.const(p) for p in params)], attrs)


def batchnorm_alone(b: Builder, x: str) -> list[str]:
    """BatchNormalization after whatever x is (mostly not a Conv: nothing to fold into)."""
    return [batchnorm(b, x)]


def _gemm(b: Builder, x: str, m: int) -> str:
    rows, k = b.shape(x)
    trans_b = b.chance(0.5)
    attrs: dict[str, Any] = {"transB": 1} if trans_b else {}
    if b.chance(0.1):  # x read transposed
        attrs["transA"] = 1
        rows, k = k, rows
    if b.chance(0.3):
        attrs["alpha"] = b.choice((0.5, 2.0))
    inputs = [x, b.const(b.normal((m, k) if trans_b else (k, m), 1 / np.sqrt(k)))]
    activations = [t for t in b.pool if fits(b.shape(t), (rows, m))]
    if activations and b.chance(0.1):  # C is an activation: nothing can fold into it
        inputs.append(b.choice(activations))
    elif b.chance(0.6):
        inputs.append(b.const(b.normal(b.choice(((m,), (1, m), (), (rows, m))), 0.1)))
        if b.chance(0.2):
            attrs["beta"] = 0.5
    return b.op("Gemm", inputs, attrs)


def matmul(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    m = b.choice((2, 3, 4, 6, 8))
    if len(shape) == 2 and b.chance(0.5):
        y = _gemm(b, x, m)
    elif len(shape) == 2 and b.chance(0.1):  # the constant on the left: its columns are x's
        y = b.op("MatMul", [b.const(b.normal((m, shape[0]), 1 / np.sqrt(shape[0]))), x])
    else:
        y = b.op("MatMul", [x, b.const(b.normal((shape[-1], m), 1 / np.sqrt(shape[-1])))])
    if len(b.shape(y)) == 2 and b.chance(0.2):
        y = batchnorm(b, y)
    return [affine(b, y, -1)]


def _conv_group(b: Builder, c: int) -> int:
    roll = b.rng.random()
    divisors = [g for g in range(2, c) if c % g == 0]
    if roll < 0.5 or (roll >= 0.75 and not divisors):
        return 1
    return c if roll < 0.75 else b.choice(divisors)


def conv(b: Builder, x: str) -> list[str]:
    """Conv (1-D/2-D; 1x1/3x3, strided, grouped, depthwise) or ConvTranspose with constant weights, then
    maybe a bias as its own Add, BatchNormalization, a scale/shift and a Relu."""
    c, spatial = b.shape(x)[1], b.shape(x)[2:]
    k, stride = b.choice((1, 3)), b.choice((1, 1, 2))
    pad = int(k == 3 and b.chance(0.7))
    if min(spatial) + 2 * pad < k:
        raise Reject("input smaller than the kernel")
    group = _conv_group(b, c)
    widths = [m for m in range(1, 9) if group * m <= max(12, group)]
    cout = c * b.choice((1, 1, 2)) if group == c else group * b.choice(widths)
    op = "ConvTranspose" if b.chance(0.12) else "Conv"
    kernel = (k,) * len(spatial)
    w_shape = (c, cout // group, *kernel) if op == "ConvTranspose" else (cout, c // group, *kernel)
    inputs = [x, b.const(b.normal(w_shape, 1 / np.sqrt(c // group * k ** len(spatial))))]
    bias_op = b.chance(0.15)  # exporters without a Conv bias write Conv -> Add(bias) -> BN
    if not bias_op and b.chance(0.6):
        inputs.append(b.const(b.normal((cout,), 0.1)))
    attrs: dict[str, Any] = {}
    if stride != 1 or b.chance(0.3):
        attrs["strides"] = [stride] * len(spatial)
    if pad or b.chance(0.3):
        attrs["pads"] = [pad] * (2 * len(spatial))
    if group != 1 or b.chance(0.2):
        attrs["group"] = group
    if b.chance(0.3):
        attrs["kernel_shape"] = list(kernel)
    y = b.op(op, inputs, attrs)
    if bias_op:
        y = b.op("Add", [y, b.const(b.normal((cout, *(1,) * len(spatial)), 0.1))])
    if b.chance(0.6):
        y = batchnorm(b, y)
    y = affine(b, y, 1)
    return [b.op("Relu", [y])] if b.chance(0.35) else [y]


# ---- variety: reductions, Concat/Split/Slice/Gather, Where -------------------------------------------

def reduce(b: Builder, x: str) -> list[str]:
    rank = len(b.shape(x))
    kind = b.choice(("ReduceMean", "ReduceMean", "ReduceMax", "ReduceSum", "Softmax", "LogSoftmax"))
    if kind.endswith("Softmax"):
        return [b.op(kind, [x], {"axis": int(b.rng.integers(-rank, rank))})]
    axes = [i for i in range(rank) if b.chance(0.4)][: rank - 1] or [rank - 1]  # keep an axis: no lone mean
    axes = [a - rank if b.chance(0.3) else a for a in axes]
    return [with_axes(b, kind, x, axes, {"keepdims": 0} if b.chance(0.4) else {})]


def _concat(b: Builder, x: str) -> list[str]:
    shape, axis = b.shape(x), int(b.rng.integers(len(b.shape(x))))
    others = [y for y in b.pool if len(b.shape(y)) == len(shape)
              and all(d == e for i, (d, e) in enumerate(zip(b.shape(y), shape, strict=True)) if i != axis)]
    if others and b.chance(0.7):
        y = b.choice(others)
    else:
        y = apply_unary(b, b.choice(("Relu", "Tanh")), x) if b.chance(0.6) else b.const(b.normal(shape))
    parts = [x, y] if b.chance(0.5) else [y, x]
    if b.chance(0.2):
        parts.append(x)
    return [b.op("Concat", parts, {"axis": axis - len(shape) if b.chance(0.3) else axis})]


def _split(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    axis = b.choice([i for i, d in enumerate(shape) if d >= 2] or [-1])
    if axis < 0:
        raise Reject("nothing to split")
    d = shape[axis]
    parts = b.choice((2, 3)) if d >= 3 else 2
    if b.chance(0.5):
        cuts = sorted(int(v) for v in b.rng.choice(np.arange(1, d), parts - 1, replace=False))
        sizes = np.diff([0, *cuts, d]).tolist()
        if b.opset < 13:  # split sizes were an attribute
            return b.ops("Split", [x], {"axis": axis, "split": sizes}, n_out=parts)
        return b.ops("Split", [x, b.ints(sizes)], {"axis": axis}, n_out=parts)
    attrs = {"axis": axis, "num_outputs": parts} if b.opset >= 18 else {"axis": axis}  # equal parts before 18
    return b.ops("Split", [x], attrs, n_out=parts)


def _slice(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    axes = [i for i, d in enumerate(shape) if d >= 2 and b.chance(0.6)] or [len(shape) - 1]
    starts, ends, steps = [], [], []
    for a in axes:
        d, step = shape[a], b.choice((1, 1, 1, 2, -1))
        if step < 0:
            start, end = b.choice((d - 1, -1)), -(d + 1)
        else:
            start = int(b.rng.integers(0, max(d - 1, 1)))
            end = int(b.rng.integers(start + 1, d + 1))
            start, end = (start - d if b.chance(0.2) else start), (INT64_MAX if end == d and b.chance(0.3) else end)
        starts, ends, steps = [*starts, start], [*ends, end], [*steps, step]
    inputs = [x, b.ints(starts), b.ints(ends), b.ints(axes)]
    return [b.op("Slice", inputs + ([b.ints(steps)] if any(s != 1 for s in steps) or b.chance(0.3) else []))]


def _gather(b: Builder, x: str) -> list[str]:
    shape = b.shape(x)
    axis = int(b.rng.integers(len(shape)))
    d = shape[axis]
    if b.chance(0.3):
        index = b.const(int(b.rng.integers(-d, d)), np.int64)
    else:
        index = b.ints(b.rng.integers(-d, d, size=int(b.rng.integers(1, d + 1))).tolist())
    return [b.op("Gather", [x, index], {"axis": axis})]


def pieces(b: Builder, x: str) -> list[str]:
    return b.choice((_concat, _split, _slice, _gather))(b, x)


def where(b: Builder, x: str) -> list[str]:
    """Where with a condition read from graph inputs (exact, so rewrites upstream cannot flip it)."""
    shape = b.shape(x)
    sources = [t for t in b.graph.inputs if fits(b.shape(t), shape)]
    if sources:
        src = b.choice(sources)
        cond = (b.op("Equal", [b.op("Sign", [src]), b.const(1.0)]) if b.chance(0.5)
                else b.op("Greater", [src, b.const(0.0)]))
    else:  # a constant-only condition
        cond = b.op("Greater", [b.const(b.normal(broadcast_shape(b, shape))), b.const(0.0)])
    same = [y for y in b.pool if b.shape(y) == shape and y != x]
    other = b.choice(same) if same and b.chance(0.6) else b.const(b.normal(broadcast_shape(b, shape)))
    return [b.op("Where", [cond, x, other] if b.chance(0.5) else [cond, other, x])]


# ---- the graph --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MoveKind:
    move: Move
    weight: float  # relative probability of drawing it
    min_rank: int = 1
    max_rank: int = 6

    def eligible(self, shape: tuple[int, ...]) -> bool:
        return self.min_rank <= len(shape) <= self.max_rank


MOVES = (
    MoveKind(unary, 3.0, 0),
    MoveKind(binary, 2.0),
    MoveKind(const_binary, 2.5, 0),
    MoveKind(noop, 2.5),
    MoveKind(transpose_chain, 1.5, 2),
    MoveKind(reshape_chain, 1.5),
    MoveKind(channel_shuffle, 0.6, 4, 4),
    MoveKind(shape_reshape, 0.6, 2),
    MoveKind(const_subgraph, 1.0),
    MoveKind(duplicate, 1.5),
    MoveKind(matmul, 1.5, 2),
    MoveKind(conv, 2.5, 3, 4),
    MoveKind(batchnorm_alone, 0.5, 2),
    MoveKind(reduce, 1.0, 2),
    MoveKind(pieces, 1.5),
    MoveKind(where, 0.6),
)


def add_inputs(b: Builder) -> None:
    """An NCHW image (mostly) and/or a 2-D or 3-D feature tensor."""
    shapes: list[tuple[int, ...]] = []
    if b.chance(0.8):
        shapes.append((b.choice((1, 2)), b.choice((2, 3, 4, 6, 8)), b.choice((3, 4, 5, 6)), b.choice((3, 4, 5, 6))))
    if not shapes or b.chance(0.5):
        k = b.choice((3, 4, 5, 8))
        shapes.append(b.choice(((b.choice((1, 2, 3, 4)), k), (b.choice((1, 2)), b.choice((2, 3, 4)), k))))
    for name, shape in zip(("x", "y"), shapes, strict=False):
        b.graph.add_input(name, desc_of(np.zeros(shape, F32)))
        b.pool.append(name)


def _wrap(b: Builder, move: Move, x: str) -> str | None:
    """Run a one-tensor move outside the growth loop (output wrappers); None if it does not apply."""
    before = len(b.pool)
    return b.pool[-1] if b.attempt(move, x, 1 << 30) and len(b.pool) > before else None


def choose_outputs(b: Builder) -> None:
    """Tips become outputs (the rest stay dead branches), plus the interface corner cases now and then."""
    read = {t for n in b.graph.nodes for t in n.inputs}
    tips = [t for t in b.pool if t not in read and b.graph.producer(t) is not None]
    if not tips:
        tips = [b.op("Relu", [b.pool[-1]])]
    outputs = [tips[-1]] + [t for t in tips[:-1] if b.chance(0.35)]
    internal = [t for t in b.pool if t in read and b.graph.producer(t) is not None]
    if internal and b.chance(0.2):  # an output that other nodes also read
        outputs.append(b.choice(internal))
    if b.chance(0.15):  # an output produced by a no-op
        kind = b.choice(OUTPUT_NOOPS)
        outputs[0] = _wrap(b, lambda b, x: [NOOPS[kind](b, x)], outputs[0]) or outputs[0]
    if b.chance(0.06):  # a no-op of a graph input
        outputs.append(b.op("Identity", [b.choice(b.graph.inputs)]))
    if b.chance(0.06):  # t and Identity(t), both outputs
        outputs.append(b.op("Identity", [outputs[-1]]))
    if b.chance(0.04):  # a graph input returned as it is
        outputs.append(b.choice(b.graph.inputs))
    if b.chance(0.04) and b.graph.constants:  # a constant (say a weight) returned as it is
        outputs.append(b.choice(list(b.graph.constants)))
    if b.chance(0.06):  # an output computed from constants only
        outputs.append(b.op("Add", [b.const(b.normal((3,))), b.const(b.normal((3,)))]))
    b.graph.set_outputs(dict.fromkeys(outputs))


def random_feeds(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng([seed, 1])
    return {t: rng.standard_normal(graph.desc(t).shape).astype(F32) for t in graph.inputs}


def random_graph(seed: int, max_nodes: int = 40) -> tuple[Graph, dict[str, np.ndarray]]:
    """A valid random graph of at most `max_nodes` (>= 5) nodes, descs inferred, and feeds for it.

    Deterministic per seed: a failing test replays with its seed. Any change to this module's draws
    changes the graph of every seed.
    """
    rng = np.random.default_rng(seed)
    opset = int(rng.choice([21, 13, 11], p=[0.75, 0.15, 0.1]))
    b = Builder(Graph(f"random{seed}", {"": opset}), rng, control_rate=0.08 if rng.random() < 0.25 else 0.0)
    add_inputs(b)
    limit = max(max_nodes - 4, 1)  # room for the output wrappers (at most 4 nodes, or 5 on an empty graph)
    target = int(rng.integers(min(4, limit), limit + 1))
    weights = np.array([m.weight for m in MOVES])
    for _ in range(10 * target):
        if len(b.graph) >= target:
            break
        kind = MOVES[int(rng.choice(len(MOVES), p=weights / weights.sum()))]
        x = b.pick(kind.eligible)
        if x is not None:
            b.attempt(kind.move, x, limit)
    choose_outputs(b)
    problems = infer_graph(b.graph, REGISTRY).problems
    if problems:
        raise AssertionError(f"generator bug: seed {seed} built an invalid graph: {problems}")
    return b.graph, random_feeds(b.graph, seed)
