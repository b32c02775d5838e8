"""Linear algebra: Einsum and Det.

Einsum is CUBE: real models use it for contractions (attention, bilinear layers), which GE runs as
BatchMatMul on the cube. Its cost counts the multiply-adds of the contraction over every label. Det is an
LU factorisation per matrix: OPAQUE.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    UNK,
    broadcast,
    io_bytes,
    like,
    make_desc,
    operand,
    require_inputs,
    same_dtype,
    shape_error,
)
from ge_core.ops.math import FLOATS, MANY, NUMERIC, check_dtype
from ge_core.ops.matrix_view import GemmKind, MatrixView
from ge_core.ops.registry import Category, Cost, OpDef, Operand, VectorClass

ELLIPSIS = "..."


@dataclass(frozen=True)
class Equation:
    """A parsed einsum equation: one label string per input (ellipsis as '.'), the output's labels."""

    inputs: tuple[str, ...]
    output: str


def parse_equation(equation: str, n_inputs: int) -> Equation:
    """Raises ValueError with the reason when the equation is malformed (the caller adds the node)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = tuple(t.replace(ELLIPSIS, ".") for t in lhs.split(","))
    if len(terms) != n_inputs:
        raise ValueError(f"equation {equation!r} names {len(terms)} operands, the node has {n_inputs} inputs")
    for t in (*terms, rhs.replace(ELLIPSIS, ".")):
        if t.count(".") > 1 or any(not (c.isalpha() or c == ".") for c in t):
            raise ValueError(f"equation {equation!r}: term {t!r} is not letters with at most one '...'")
    if arrow:
        out = rhs.replace(ELLIPSIS, ".")
        unknown = sorted(set(out) - set("".join(terms)) - {"."})
        if unknown:
            raise ValueError(f"equation {equation!r}: output labels {unknown} appear in no input")
        if "." in out and not any("." in t for t in terms):
            raise ValueError(f"equation {equation!r}: the output has '...' but no input does")
    else:  # implicit: broadcast dims, then the labels used once, in alphabetical order (numpy's rule)
        labels = "".join(terms).replace(".", "")
        once = sorted(c for c in set(labels) if labels.count(c) == 1)
        out = ("." if any("." in t for t in terms) else "") + "".join(once)
    return Equation(terms, out)


def _merge_dim(node: Node, operands: list[Operand | None], label: str, have: int, dim: int, i: int) -> int:
    """A label's dim seen again: 1 broadcasts, an unknown dim takes the known one, else they must agree."""
    if have == 1 or (have == UNK and dim != 1):
        return dim
    if dim in (1, UNK) or dim == have:
        return have
    raise shape_error(node, operands, f"label {label!r} is {have} in one input and {dim} in input {i}")


def _label_dims(node: Node, operands: list[Operand | None], eq: Equation,
                shapes: list[tuple[int, ...]]) -> tuple[dict[str, int], tuple[int, ...]]:
    """Each label's dim and the broadcast shape of the ellipsis parts; a ShapeError on a mismatch."""
    dims: dict[str, int] = {}
    ellipses: list[tuple[int, ...]] = []
    for i, (term, shape) in enumerate(zip(eq.inputs, shapes, strict=True)):
        fixed = len(term.replace(".", ""))
        if ("." in term and len(shape) < fixed) or ("." not in term and len(shape) != fixed):
            raise shape_error(node, operands, f"input {i} has rank {len(shape)}, term {term.replace('.', ELLIPSIS)!r} "
                                              f"needs {'at least ' if '.' in term else ''}{fixed}")
        n_ell = len(shape) - fixed
        pos = term.find(".")
        labelled = shape if pos < 0 else shape[:pos] + shape[pos + n_ell:]
        if pos >= 0:
            ellipses.append(shape[pos:pos + n_ell])
        for label, d in zip(term.replace(".", ""), labelled, strict=True):
            dims[label] = _merge_dim(node, operands, label, dims.get(label, 1), d, i)
    return dims, broadcast(node, operands, ellipses) if ellipses else ()


def _equation(node: Node, operands: list[Operand | None]) -> Equation:
    try:
        return parse_equation(str(node.attr("equation", "")), len(operands))
    except ValueError as err:
        raise shape_error(node, operands, str(err)) from None


def _infer_einsum(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, MANY)
    if any(o is None for o in operands):
        raise shape_error(node, operands, "every input is required (none may be omitted)")
    dtype = same_dtype(node, operands, range(len(operands)))
    check_dtype(node, operands, dtype, NUMERIC)
    eq = _equation(node, operands)
    dims, ell = _label_dims(node, operands, eq, [o.desc.shape for o in operands if o is not None])
    shape: list[int] = []
    for label in eq.output:
        shape += list(ell) if label == "." else [dims[label]]
    return [make_desc(shape, dtype)]


def _einsum(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """numpy's einsum with contraction-order optimisation; half precision is computed in float32."""
    arrays = [x for x in inputs if x is not None]
    dtype = arrays[0].dtype
    work = [a.astype(np.float32) if a.dtype.kind == "f" and a.dtype.itemsize < 4 else a for a in arrays]
    if dtype.kind not in "fiub":  # ml_dtypes (bfloat16): numpy's einsum has no loops for it
        work = [a.astype(np.float32) for a in arrays]
    equation = str(node.attr("equation")).replace(" ", "")
    out = np.einsum(equation, *work, optimize=len(work) > 2)
    return [np.asarray(out).astype(dtype, copy=False)]


def _einsum_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """2 FLOPs (multiply, add) per point of the full label space per extra operand: a matmul's 2*M*K*N."""
    read, written = io_bytes(inputs, outputs)
    descs = [d for d in inputs if d is not None]
    if not all(d.is_static for d in descs):
        return Cost(0, read, written)
    try:
        eq = parse_equation(str(node.attr("equation", "")), len(descs))
    except ValueError:
        return Cost(0, read, written)
    sizes: dict[str, int] = {}
    ell = 1
    for term, d in zip(eq.inputs, descs, strict=True):
        n_ell = d.rank - len(term.replace(".", ""))
        pos = term.find(".")
        labelled = d.shape if pos < 0 else d.shape[:pos] + d.shape[pos + n_ell:]
        if pos >= 0:
            ell = max(ell, math.prod(d.shape[pos:pos + n_ell]))
        for label, dim in zip(term.replace(".", ""), labelled, strict=False):
            sizes[label] = max(sizes.get(label, 1), dim)
    space = ell * math.prod(sizes.values())
    return Cost(2 * space * max(len(descs) - 1, 1), read, written)


# ---- Det ----------------------------------------------------------------------------------------------
def _einsum_view(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> MatrixView | None:
    """Einsum as a batched matmul when it is one: two operands whose every label is kept from both (batch),
    kept from A only (M) or B only (N), or summed over both (K, at least one such label), a label's dims the
    same in both. None for any other einsum (one operand or three, a trace or diagonal, a label summed within
    one operand, a broadcast label, nothing summed): the cube runs no such product; it is priced as vector
    work."""
    descs = [d for d in inputs if d is not None]
    if len(inputs) != 2 or len(descs) != 2 or not all(d.is_static for d in descs):
        return None
    try:
        eq = parse_equation(str(node.attr("equation", "")), 2)
    except ValueError:
        return None
    a, b = (_term_dims(term, d) for term, d in zip(eq.inputs, descs, strict=True))
    if a is None or b is None or len(set(eq.output)) != len(eq.output):
        return None
    size = {"batch": 1, "m": 1, "k": 1, "n": 1}
    contracted = False
    for label in {*a, *b}:
        shared, kept = label in a and label in b, label in eq.output
        if shared and a[label] != b[label]:
            return None
        role = ("batch" if kept else "k") if shared else ("m" if label in a else "n") if kept else None
        if role is None:
            return None
        size[role] *= math.prod((a if label in a else b)[label])
        contracted = contracted or role == "k"
    if not contracted:
        return None  # an elementwise or outer product: nothing summed, vector work
    return MatrixView(GemmKind.MATMUL, size["batch"], size["m"], size["k"], size["n"])


def _term_dims(term: str, desc: TensorDesc) -> dict[str, tuple[int, ...]] | None:
    """Each label's dims in one operand (the ellipsis '.' its several); None for a repeated label."""
    fixed = term.replace(".", "")
    n_ell = desc.rank - len(fixed)
    if len(set(fixed)) != len(fixed) or n_ell < 0 or ("." not in term and n_ell):
        return None
    dims: dict[str, tuple[int, ...]] = {}
    at = 0
    for label in term:
        width = n_ell if label == "." else 1
        dims[label] = desc.shape[at:at + width]
        at += width
    return dims


def _infer_det(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, FLOATS, "X")
    if x.rank < 2:
        raise shape_error(node, operands, f"X must be [..., M, M] (rank >= 2), got rank {x.rank}")
    m, n = x.shape[-2:]
    if m >= 0 and n >= 0 and m != n:
        raise shape_error(node, operands, f"X must hold square matrices, got {m} x {n}")
    return [like(x, x.shape[:-2])]


def _det(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    work = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    return [np.asarray(np.linalg.det(work)).astype(x.dtype)]


def _det_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    """LU factorisation: ~2/3 n^3 FLOPs per matrix."""
    x = inputs[0]
    read, written = io_bytes(inputs, outputs)
    if x is None or not x.is_static:
        return Cost(0, read, written)
    n = x.shape[-1]
    return Cost(math.prod(x.shape[:-2]) * (2 * n ** 3) // 3, read, written)


OPS: list[OpDef] = [
    # sum of products over the labels an equation contracts ("bij,bjk->bik" is a batched matmul)
    OpDef("Einsum", Category.CUBE, _infer_einsum, _einsum, _einsum_cost, doc="Einstein summation",
          gemm=_einsum_view),
    # determinant of each square matrix in the last two dims
    OpDef("Det", Category.OPAQUE, _infer_det, _det, _det_cost, doc="determinant",
          vector_class=VectorClass.TRANSCENDENTAL),
]
