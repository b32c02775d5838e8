"""The matrix-multiply view of a cube op (OpDef.gemm): C[batch, M, N] = A[batch, M, K] @ B[batch, K, N].

Each cube op maps its own operand layout to these dims, from its node and descs; the hardware model
(hardware/gemm.py) adds the bytes the operands occupy and how the cube's 16x16 blocks hold them.

- Matrix products (MatMul, MatMulInteger, QLinearMatMul): M and N from the output, K the contracted dim,
  batch the broadcast leading dims. Gemm: one product, A and B maybe transposed.
- Convolutions (implicit GEMM, as the Ascend Conv2D kernel's img2col): M = N*Ho*Wo output pixels, K = Cin/group
  * kernel taps, N = Cout/group, batch = groups. ConvTranspose runs as a Conv over the stride-dilated input
  (Conv2DBackpropInput), so its GEMM is that of a Conv over its output. DeformConv's taps are bilinear
  samples of its input at offset positions, then the same product.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc


class GemmKind(StrEnum):
    MATMUL = "matmul"  # A and B are the operands as they are stored
    CONV = "conv"  # implicit GEMM: A is a feature map, expanded into im2col rows on the way to the cube


@dataclass(frozen=True, slots=True)
class MatrixView:
    """One cube op as `batch` independent products of [M, K] by [K, N]."""

    kind: GemmKind
    batch: int  # a matrix product's broadcast leading dims; a convolution's groups
    m: int
    k: int
    n: int
    a: int = 0  # the input that holds A (a convolution's feature map)
    b: int = 1  # the input that holds B (the weights)
    taps: int = 1  # a convolution's kernel taps: K is taps x input channels per group
    a_shared: bool = False  # the same A for every batch (a 2-D operand broadcast over B's batch)
    b_shared: bool = False  # the same B for every batch (weights of a batched MatMul)


# (node, input descs, output descs) -> the view, or None (an unknown dim, or not a matrix product this time)
GemmFn = Callable[[Node, list[TensorDesc | None], list[TensorDesc]], MatrixView | None]


def known(descs: list[TensorDesc | None], *indices: int) -> list[TensorDesc] | None:
    """The descs at `indices`, when each is there and has no unknown dim; else None."""
    picked = [descs[i] if i < len(descs) else None for i in indices]
    if any(d is None or not d.is_static for d in picked):
        return None
    return [d for d in picked if d is not None]


def matmul_view(a_index: int, b_index: int) -> GemmFn:
    """numpy.matmul of inputs `a_index` and `b_index` (1-D operands promoted, batch dims broadcast)."""

    def view(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> MatrixView | None:
        operands = known([*inputs, *outputs[:1]], a_index, b_index, len(inputs))
        if operands is None:
            return None
        a, b, y = operands
        k = a.shape[-1]
        m = a.shape[-2] if a.rank >= 2 else 1
        n = b.shape[-1] if b.rank >= 2 else 1
        batch = max(math.prod(y.shape) // max(m * n, 1), 1)
        return MatrixView(GemmKind.MATMUL, batch, m, k, n, a_index, b_index,
                          a_shared=batch > 1 and a.rank <= 2, b_shared=batch > 1 and b.rank <= 2)

    return view


def conv_view(x_index: int, w_index: int, *, transposed: bool = False) -> GemmFn:
    """A convolution of input `x_index` by weights `w_index`: [Cout, Cin/group, k...], or a transposed
    convolution's [Cin, Cout/group, k...]."""

    def view(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> MatrixView | None:
        operands = known([*inputs, *outputs[:1]], x_index, w_index, len(inputs))
        if operands is None:
            return None
        _, w, y = operands
        group = int(node.attr("group", 1))
        taps = math.prod(w.shape[2:])
        cin_g, cout_g = (w.shape[0] // group, w.shape[1]) if transposed else (w.shape[1], w.shape[0] // group)
        m = y.shape[0] * math.prod(y.shape[2:])
        return MatrixView(GemmKind.CONV, group, m, cin_g * taps, cout_g, x_index, w_index, taps)

    return view
