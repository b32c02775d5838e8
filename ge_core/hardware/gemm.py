"""The matrix-multiply view of a cube op: every Conv, ConvTranspose, MatMul and Gemm runs on the cube as
C[batch, M, N] = A[batch, M, K] @ B[batch, K, N] in 16x16x16 fractal blocks.

- MatMul/Gemm: M and N from the output, K the contracted dim, batch the broadcast leading dims.
- Conv (implicit GEMM, as the Ascend Conv2D kernel's img2col): M = N*Ho*Wo output pixels, K = Cin/group *
  kernel taps, N = Cout/group, batch = groups. The feature map goes to L1 as it is; MTE1's load3d expands
  it into im2col rows on the way to L0A, so L1->L0A moves M*K elements while MTE2 moved only the fmap.
- Grouped convs with fewer than 16 channels per group (depthwise) pack 16 // channels groups onto one
  block diagonal, as the cube cannot use a narrower block: a depthwise 3x3 costs ceil(M/16) * 9 fractal
  steps per 16 channels, 1/16 of them useful work.
- ConvTranspose: the cube runs it as a Conv over the stride-dilated input (Conv2DBackpropInput), so the
  GEMM is that of a Conv over the output: M = N*prod(out), K = Cin/group * taps, N = Cout/group.

Shapes are logical (a TensorDesc's shape always is; its format says how the NPU lays it out); byte
counts are physical: the device bytes of the format, with NC1HWC0's channels padded to 16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ge_core.hardware.sizes import shape_numel, stored_bytes
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc

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
    """The GEMM a cube op runs, or None (not a cube op, or an unknown dim). Each cube op maps its own
    operand layout to M, K and N, so the dispatch below is by op type (per-op arithmetic, not an op set)."""
    descs = graph.input_descs(node)
    outs = graph.output_descs(node)
    if len(descs) < 2 or descs[0] is None or descs[1] is None or not outs:
        return None
    a, b, y = descs[0], descs[1], outs[0]
    if shape_numel(a.shape) is None or shape_numel(b.shape) is None or shape_numel(y.shape) is None:
        return None
    if node.op_type == "MatMul":
        return _matmul(a, b, y)
    if node.op_type == "Gemm":
        k = a.shape[0 if node.attr("transA", 0) else 1]
        m, n = y.shape
        return Gemm("matmul", 1, m, k, n, stored_bytes(a), stored_bytes(b))
    if node.op_type in ("Conv", "ConvTranspose"):
        return _conv(node, a, b, y)
    return None


def _matmul(a: TensorDesc, b: TensorDesc, y: TensorDesc) -> Gemm:
    sa, sy = a.shape, y.shape
    k = sa[-1]
    m = sa[-2] if len(sa) >= 2 else 1
    n = b.shape[-1] if b.rank >= 2 else 1
    batch = max(math.prod(sy) // max(m * n, 1), 1)
    return Gemm("matmul", batch, m, k, n, stored_bytes(a), stored_bytes(b),
                a_shared=batch > 1 and a.rank <= 2, b_shared=batch > 1 and b.rank <= 2)


def _conv(node: Node, x: TensorDesc, w: TensorDesc, y: TensorDesc) -> Gemm:
    group = int(node.attr("group", 1))
    sw, sy = w.shape, y.shape
    taps = math.prod(sw[2:])
    if node.op_type == "Conv":
        cin_g, cout_g = sw[1], sw[0] // group
    else:  # ConvTranspose weights are (Cin, Cout/group, k...)
        cin_g, cout_g = sw[0] // group, sw[1]
    pack = min(group, max(1, FRACTAL // max(cin_g, cout_g))) if group > 1 else 1
    m = sy[0] * math.prod(sy[2:])
    return Gemm("conv", -(-group // pack), m, cin_g * taps * pack, cout_g * pack, stored_bytes(x), stored_bytes(w),
                pack)
