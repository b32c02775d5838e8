"""Matrix products: MatMul (numpy matmul semantics) and Gemm (alpha * A' @ B' + beta * C).

float16 and bfloat16 are multiplied in float32 (numpy has no BLAS for them) and cast back; integer types use numpy's
integer matmul, which wraps on overflow as ONNX Runtime does.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import blas
from ge_core.ops.common import (
    broadcast,
    io_bytes,
    make_desc,
    narrowed,
    operand,
    optional,
    require_inputs,
    same_dtype,
    shape_error,
    widened,
)
from ge_core.ops.matrix_view import GemmKind, MatrixView, known, matmul_view
from ge_core.ops.registry import Category, Cost, OpDef, Operand

MATMUL_TYPES = ("float16", "float32", "float64", "bfloat16", "int32", "int64", "uint32", "uint64")


def _dims_agree(a: int, b: int) -> bool:
    return a < 0 or b < 0 or a == b


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b as an array (numpy returns a scalar for 1-D @ 1-D)."""
    wide_a = widened(a)
    if wide_a is not a:  # float16/bfloat16: in float32, rounded once
        return narrowed(blas.matmul(wide_a, widened(b)), a.dtype)
    return np.asarray(blas.matmul(a, b))


def _known(*dims: int) -> int:
    """Product of dims for cost estimates, 0 while any is unknown."""
    return 0 if any(d < 0 for d in dims) else math.prod(dims)


# ---- MatMul ------------------------------------------------------------------------------------------

def _matmul_shape(node: Node, operands: list[Operand | None]) -> tuple[tuple[int, ...], int]:
    """Output shape and the contracted dim K, per numpy.matmul (1-D operands are promoted, then dropped)."""
    a, b = operand(node, operands, 0).desc.shape, operand(node, operands, 1).desc.shape
    if not a or not b:
        raise shape_error(node, operands, "MatMul inputs must have rank >= 1 (scalars are not matrices)")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if not _dims_agree(a2[-1], b2[-2]):
        raise shape_error(node, operands, f"inner dimensions differ: {list(a)} @ {list(b)} "
                                          f"({a2[-1]} vs {b2[-2]})")
    batch = broadcast(node, operands, [a2[:-2], b2[:-2]])
    out = [*batch, a2[-2], b2[-1]]
    if len(b) == 1:
        out.pop(-1)
    if len(a) == 1:
        out.pop(-2 if len(b) > 1 else -1)
    return tuple(out), a2[-1] if a2[-1] >= 0 else b2[-2]


def _infer_matmul(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 2)
    dtype = same_dtype(node, operands, [0, 1])
    if dtype not in MATMUL_TYPES:
        raise shape_error(node, operands, f"MatMul supports {', '.join(MATMUL_TYPES)}, got {dtype}")
    shape, _ = _matmul_shape(node, operands)
    return [make_desc(shape, dtype)]


def _matmul(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    a, b = inputs
    assert a is not None and b is not None
    return [_product(a, b)]


def _matmul_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    a, b = inputs
    assert a is not None and b is not None
    k = a.shape[-1] if a.shape[-1] >= 0 else b.shape[0 if b.rank == 1 else -2]
    read, written = io_bytes(inputs, outputs)
    return Cost(2 * _known(k, *outputs[0].shape), read, written)


# ---- Gemm --------------------------------------------------------------------------------------------

def _gemm_dims(node: Node, operands: list[Operand | None]) -> tuple[int, int, int]:
    """(M, N, K) after transA/transB, checking the inner dims and C."""
    a, b = operand(node, operands, 0).desc.shape, operand(node, operands, 1).desc.shape
    if len(a) != 2 or len(b) != 2:
        raise shape_error(node, operands,
                          f"A and B must be matrices (rank 2), got ranks {len(a)} and {len(b)}")
    m, k = a[::-1] if node.attr("transA", 0) else a
    k2, n = b[::-1] if node.attr("transB", 0) else b
    if not _dims_agree(k, k2):
        trans = f"transA={node.attr('transA', 0)}, transB={node.attr('transB', 0)}"
        raise shape_error(node, operands, f"inner dimensions differ: A' is [{m},{k}] and B' is [{k2},{n}] "
                                          f"({trans})")
    _check_c(node, operands, (m, n))
    return m, n, k if k >= 0 else k2


def _check_c(node: Node, operands: list[Operand | None], out: tuple[int, int]) -> None:
    c = optional(operands, 2)
    if c is None:
        if node.opset < 11:
            raise shape_error(node, operands, "input C is required before opset 11")
        return
    shape = c.desc.shape
    exact = node.opset < 7 and not node.attr("broadcast", 0)  # opset 6 and older: C as is, no broadcast
    if exact:
        ok = len(shape) == 2 and all(_dims_agree(s, t) for s, t in zip(shape, out, strict=True))
    else:  # unidirectional broadcasting of C to (M, N)
        tail = out[2 - len(shape):] if len(shape) <= 2 else ()
        ok = len(shape) <= 2 and all(s in (1, t) or s < 0 or t < 0 for s, t in zip(shape, tail, strict=True))
    if not ok:
        raise shape_error(node, operands,
                          f"C {list(shape)} does not broadcast to the output [{out[0]},{out[1]}]")


def _infer_gemm(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 3)
    dtype = same_dtype(node, operands, [0, 1, 2])
    if dtype not in MATMUL_TYPES:
        raise shape_error(node, operands, f"Gemm supports {', '.join(MATMUL_TYPES)}, got {dtype}")
    m, n, _ = _gemm_dims(node, operands)
    return [make_desc((m, n), dtype)]


def _gemm(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    a, b = inputs[0], inputs[1]
    c = inputs[2] if len(inputs) > 2 else None
    assert a is not None and b is not None
    a = a.T if node.attr("transA", 0) else a
    b = b.T if node.attr("transB", 0) else b
    alpha, beta = float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))
    c = None if beta == 0.0 else c
    if a.dtype.kind in "iu" and alpha == 1.0 and beta == 1.0:  # exact integer arithmetic
        y = np.matmul(a, b)
        return [y + c if c is not None else y]
    # Otherwise scale in float: float32 for float16/32, float64 for float64 and the integer types.
    wide = np.dtype(np.float64) if a.dtype.kind in "iu" or a.dtype == np.float64 else np.dtype(np.float32)
    y = blas.matmul(a.astype(wide, copy=False), b.astype(wide, copy=False))
    if alpha != 1.0:
        y *= alpha
    if c is not None:
        cw = c.astype(wide, copy=False)
        y += np.multiply(cw, beta) if beta != 1.0 else cw
    return [y.astype(a.dtype, copy=False)]


def _gemm_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    a = inputs[0]
    assert a is not None
    k = a.shape[0] if node.attr("transA", 0) else a.shape[1]
    m, n = outputs[0].shape
    epilogue = 2 * _known(m, n) if len(inputs) > 2 and inputs[2] is not None else 0
    read, written = io_bytes(inputs, outputs)
    return Cost(2 * _known(m, n, k) + epilogue, read, written)


def _gemm_view(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> MatrixView | None:
    """One product [M, K] @ [K, N], A and B as stored (transposed on load when transA/transB say so)."""
    operands = known([*inputs, *outputs[:1]], 0, 1, len(inputs))
    if operands is None:
        return None
    a, _, y = operands
    m, n = y.shape
    return MatrixView(GemmKind.MATMUL, 1, m, a.shape[0 if node.attr("transA", 0) else 1], n)


OPS: list[OpDef] = [
    # matrix product with numpy semantics: 1-D operands promoted, batch dims broadcast
    OpDef("MatMul", Category.CUBE, _infer_matmul, _matmul, _matmul_cost, channel_axis=-1, gemm=matmul_view(0, 1),
          ge_types=("MatMulV2", "MatMulV3", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")),
    # alpha * op(A) @ op(B) + beta * C, op = optional transpose, C broadcast to (M, N)
    OpDef("Gemm", Category.CUBE, _infer_gemm, _gemm, _gemm_cost, channel_axis=-1, gemm=_gemm_view,
          ge_types=("MatMulV2", "FullyConnection")),
]
