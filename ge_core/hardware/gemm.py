"""The bytes and cube blocks of a cube op's matrix product C[batch, M, N] = A[batch, M, K] @ B[batch, K, N].

Each op's matrix view (M, K, N, batch, which inputs hold A and B) is its OpDef's fact (ops/matrix_view.py:
MatMul, Gemm, Conv, ConvTranspose, their quantized forms, DeformConv, Einsum when it is a batched matmul,
Attention's Q @ K^T). Here the hardware's side of it:

- A convolution's feature map goes to L1 as it is; MTE1's load3d expands it into im2col rows on the way to
  L0A, so L1->L0A moves M*K elements while MTE2 moved only the fmap (a_bytes is the fmap).
- Grouped convs with fewer than 16 channels per group (depthwise) pack 16 // channels groups onto one
  block diagonal, as the cube cannot use a narrower block: a depthwise 3x3 costs ceil(M/16) * 9 fractal
  steps per 16 channels, 1/16 of them useful work.

Shapes are logical (a TensorDesc's shape always is; its format says how the NPU lays it out); byte
counts are physical: the device bytes of the format, with NC1HWC0's channels padded to 16.
"""

from __future__ import annotations

from dataclasses import dataclass

from ge_core.hardware.sizes import stored_bytes
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.matrix_view import GemmKind, MatrixView

FRACTAL = 16


@dataclass(frozen=True)
class Gemm:
    """One cube op as a batched matrix product, with the bytes its operands occupy in global memory."""

    kind: str  # "matmul" or "conv"
    batch: int
    m: int
    k: int
    n: int
    a_bytes: int  # A as stored in global memory (a conv's feature map, not its im2col)
    b_bytes: int  # B (weights) as stored
    groups_packed: int = 1  # conv groups sharing one block diagonal
    a_shared: bool = False  # the same A for every batch (a 2-D operand broadcast over B's batch)
    b_shared: bool = False  # the same B for every batch (weights of a batched MatMul)

    def per_batch(self) -> tuple[int, int]:
        """Bytes of A and of B one batch reads."""
        a = self.a_bytes if self.a_shared else self.a_bytes // max(self.batch, 1)
        b = self.b_bytes if self.b_shared else self.b_bytes // max(self.batch, 1)
        return a, b

    @property
    def macs(self) -> int:
        return self.batch * self.m * self.k * self.n


def gemm_of(node: Node, graph: Graph) -> Gemm | None:
    """The GEMM a cube op runs (its OpDef's matrix view, with bytes and conv groups packed), or None: not a
    matrix product, or an unknown dim."""
    op = REGISTRY.get(node.op_type, node.domain)
    if op is None or op.gemm is None:
        return None
    descs = graph.input_descs(node)
    view = op.gemm(node, descs, graph.output_descs(node))
    if view is None:
        return None
    a, b = descs[view.a], descs[view.b]
    if a is None or b is None:
        return None
    if view.kind == GemmKind.CONV and view.batch > 1:
        return _packed_conv(view, stored_bytes(a), stored_bytes(b))
    return Gemm(view.kind.value, view.batch, view.m, view.k, view.n, stored_bytes(a), stored_bytes(b),
                a_shared=view.a_shared, b_shared=view.b_shared)


def _packed_conv(view: MatrixView, a_bytes: int, b_bytes: int) -> Gemm:
    """A grouped conv with its narrow groups packed onto one block diagonal (16 // channels per block)."""
    group, cin_g, cout_g = view.batch, view.k // view.taps, view.n
    pack = min(group, max(1, FRACTAL // max(cin_g, cout_g)))
    return Gemm("conv", -(-group // pack), view.m, view.k * pack, view.n * pack, a_bytes, b_bytes, pack)
