"""Each cube op's matrix view (OpDef.gemm) and channel axis (OpDef.channel_axis) on a real shape: the graphs are
inferred by the registry, so the shapes are ones the ops accept; every cube op of the registry has a case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from ge_core.hardware.gemm import gemm_of
from ge_core.hardware.tiling import kernel_body
from ge_core.ir import Graph, TensorDesc
from ge_core.ops import REGISTRY, Category, infer_graph
from ge_core.ops.matrix_view import GemmKind

F32, U8 = "float32", "uint8"


@dataclass(frozen=True)
class Case:
    op_type: str
    inputs: tuple[tuple[tuple[int, ...], str] | None, ...]  # (shape, dtype) per input; None: absent
    attrs: dict[str, Any]
    view: tuple[int, int, int, int, int, int]  # batch, M, K, N, the inputs holding A and B
    kind: GemmKind = GemmKind.MATMUL
    domain: str = ""
    opset: int = 21
    channels: int | None = None  # output channels, for an op with a channel axis


def _scalar(dtype: str) -> tuple[tuple[int, ...], str]:
    return (), dtype


CASES = [
    # [2, 8, 16] @ [16, 32]: a batch of 2 over shared weights
    Case("MatMul", (((2, 8, 16), F32), ((16, 32), F32)), {}, (2, 8, 16, 32, 0, 1), channels=32),
    Case("Gemm", (((8, 16), F32), ((32, 16), F32)), {"transB": 1}, (1, 8, 16, 32, 0, 1), channels=32),
    # 2 groups of 4 -> 8 channels, 3x3 taps, a 10x10 output: M 100, K 4 * 9, N 8 per group
    Case("Conv", (((1, 8, 10, 10), F32), ((16, 4, 3, 3), F32)), {"group": 2, "pads": [1, 1, 1, 1]},
         (2, 100, 36, 8, 0, 1), GemmKind.CONV, channels=16),
    # stride 2: a 5x5 input becomes 11x11, the GEMM that of a conv over the output
    Case("ConvTranspose", (((1, 8, 5, 5), F32), ((8, 6, 3, 3), F32)), {"strides": [2, 2]},
         (1, 121, 72, 6, 0, 1), GemmKind.CONV, channels=6),
    Case("ConvInteger", (((1, 3, 8, 8), U8), ((4, 3, 3, 3), U8)), {}, (1, 36, 27, 4, 0, 1), GemmKind.CONV,
         channels=4),
    # x, x_scale, x_zero_point, w (input 3), w_scale, w_zero_point, y_scale, y_zero_point
    Case("QLinearConv", (((1, 3, 8, 8), U8), _scalar(F32), _scalar(U8), ((4, 3, 3, 3), U8), _scalar(F32),
                         _scalar(U8), _scalar(F32), _scalar(U8)), {}, (1, 36, 27, 4, 0, 3), GemmKind.CONV, channels=4),
    Case("MatMulInteger", (((4, 8), U8), ((8, 5), U8)), {}, (1, 4, 8, 5, 0, 1), channels=5),
    Case("QLinearMatMul", (((4, 8), U8), _scalar(F32), _scalar(U8), ((8, 5), U8), _scalar(F32), _scalar(U8),
                           _scalar(F32), _scalar(U8)), {}, (1, 4, 8, 5, 0, 3), channels=5),
    # X, W, offset (2 * 9 taps per output pixel): a 4x4 output of a 6x6 input
    Case("DeformConv", (((1, 4, 6, 6), F32), ((8, 4, 3, 3), F32), ((1, 18, 4, 4), F32)), {"kernel_shape": [3, 3]},
         (1, 16, 36, 8, 0, 1), GemmKind.CONV, opset=19, channels=8),
    # the batched product of attention scores: b and h kept from both, q from A, k from B, d summed
    Case("Einsum", (((2, 4, 8, 16), F32), ((2, 4, 10, 16), F32)), {"equation": "bhqd,bhkd->bhqk"},
         (8, 8, 16, 10, 0, 1), opset=12),
    # 4 query heads over 2 key/value heads: each K, V head serves 2 x 8 query rows
    Case("Attention", (((1, 4, 8, 16), F32), ((1, 2, 10, 16), F32), ((1, 2, 10, 16), F32)), {},
         (2, 16, 16, 10, 0, 1), opset=23),
    Case("FlexAttention", (((1, 2, 8, 16), F32), ((1, 2, 10, 16), F32), ((1, 2, 10, 16), F32)), {},
         (2, 8, 16, 10, 0, 1), domain="ai.onnx.preview", opset=1),
]


def _graph(case: Case) -> Graph:
    g = Graph(case.op_type, opset={case.domain: case.opset} if case.domain else {"": case.opset})
    names = []
    for i, spec in enumerate(case.inputs):
        name = f"in{i}" if spec is not None else ""
        if spec is not None:
            g.add_input(name, TensorDesc(spec[0], spec[1]))
        names.append(name)
    g.add_node(case.op_type, names, ["y"], case.attrs, name="op", domain=case.domain)
    g.set_outputs(["y"])
    result = infer_graph(g, REGISTRY)
    assert not result.problems, result.problems
    return g


@pytest.mark.parametrize("case", CASES, ids=[c.op_type for c in CASES])
def test_cube_op_matrix_view(case: Case) -> None:
    g = _graph(case)
    node = g.node("op")
    op = REGISTRY.get(case.op_type, case.domain)
    assert op is not None and op.gemm is not None
    view = op.gemm(node, g.input_descs(node), g.output_descs(node))
    assert view is not None and view.kind == case.kind
    assert (view.batch, view.m, view.k, view.n, view.a, view.b) == case.view
    gemm = gemm_of(node, g)  # the hardware's bytes (A's and B's inputs as stored) and blocks
    packed = gemm.groups_packed if gemm is not None else 0  # narrow conv groups share a block diagonal (zeros)
    assert gemm is not None and gemm.macs == view.batch * view.m * view.k * view.n * packed
    assert gemm.a_bytes == g.desc(node.inputs[view.a]).nbytes and gemm.b_bytes == g.desc(node.inputs[view.b]).nbytes


def test_every_cube_op_has_a_case() -> None:
    cube = {op.op_type for op in REGISTRY if op.category == Category.CUBE}
    assert cube == {c.op_type for c in CASES}
    assert all(op.gemm is not None for op in REGISTRY if op.category == Category.CUBE)


@pytest.mark.parametrize("case", [c for c in CASES if c.channels], ids=[c.op_type for c in CASES if c.channels])
def test_channel_axis_indexes_the_output_channels(case: Case) -> None:
    g = _graph(case)
    axis = REGISTRY.channel_axis(g.node("op"), g.desc("y").rank)
    assert axis is not None and g.desc("y").shape[axis] == case.channels


def test_channel_normalisations_have_their_channels_on_axis_1() -> None:
    g = Graph("bn")
    g.add_input("x", TensorDesc((2, 6, 4, 4), F32))
    for name in ("scale", "bias", "mean", "var"):
        g.add_constant(name, np.ones(6, np.float32))
    g.add_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], name="op")
    g.set_outputs(["y"])
    assert REGISTRY.channel_axis(g.node("op"), 4) == 1
    assert [op.op_type for op in REGISTRY if op.channel_axis == 1 and op.category != Category.CUBE] == \
        ["BatchNormalization", "InstanceNormalization", "GroupNormalization"]


def test_attention_view_is_its_kernel_bodys_first_product() -> None:
    """Attention is priced by its kernel body; its own view is that body's Q @ K^T, dims and all."""
    case = next(c for c in CASES if c.op_type == "Attention")
    g = _graph(case)
    body = kernel_body(g.node("op"), g)
    assert body is not None
    own, first = gemm_of(g.node("op"), g), gemm_of(body.nodes[0], body)
    assert own is not None and first is not None and body.nodes[0].op_type == "MatMul"
    assert (own.batch, own.m, own.k, own.n) == (first.batch, first.m, first.k, first.n)


@pytest.mark.parametrize(("equation", "shapes"), [
    ("ii,ij->j", ((3, 3), (3, 5))),  # a trace (a repeated label)
    ("ij,jk->k", ((3, 4), (4, 5))),  # i summed within A alone
    ("ij,ij->ij", ((3, 4), (3, 4))),  # elementwise: nothing summed
    ("ij,kl->ijkl", ((3, 4), (5, 6))),  # an outer product
    ("bij,bjk->bik", ((1, 3, 4), (2, 4, 5))),  # b broadcast from 1
])
def test_einsum_is_a_matmul_only_when_it_is_one(equation: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    case = Case("Einsum", tuple((s, F32) for s in shapes), {"equation": equation}, (0, 0, 0, 0, 0, 0), opset=12)
    g = _graph(case)
    op = REGISTRY.get("Einsum")
    assert op is not None and op.gemm is not None
    assert op.gemm(g.node("op"), g.input_descs(g.node("op")), g.output_descs(g.node("op"))) is None
    assert gemm_of(g.node("op"), g) is None  # priced as vector work


def test_unknown_dims_have_no_view() -> None:
    g = Graph("mm")
    g.add_input("a", TensorDesc((-1, 16), F32))
    g.add_input("b", TensorDesc((16, 8), F32))
    g.add_node("MatMul", ["a", "b"], ["y"], name="op")
    g.set_outputs(["y"])
    infer_graph(g, REGISTRY)
    assert gemm_of(g.node("op"), g) is None
