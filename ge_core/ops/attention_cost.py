"""What Attention and FlexAttention cost, their matrix view, and the kernel body the simulator prices them by.

FLOPs: the two matrix products, 2 * q_heads * q_len * total * (head + v_head) per batch, plus per score
the vector work between them: the scale (1), the softcap (3: divide, tanh, multiply), the bias add (1)
and the softmax (5, Softmax's own cost). Bytes: every input read once, every output written once; the
scores never leave the chip (as in the FusedAttention graph fusion makes, and FlashAttention).

The kernel body (OpDef.kernel_body) is that arithmetic as registered ops, so that tiling and the
simulator price an Attention node exactly as they price a FusedAttention kernel: MatMul(Q, K^T) on the
cube, Mul/Add/Tanh/Softmax on the vector unit, MatMul(P, V) on the cube, plus the Concat that writes the
present cache; FlexAttention's modifier subgraphs are nested kernels on the scores. Query heads sharing
a key/value head are stacked into one (group * q_len)-row matrix, as a GQA kernel loads each K and V
once per group. Its inputs are logical views of the op's (K as the cube reads it, transposed on load); it
is never run, the op's own kernel is. Their matrix view (OpDef.gemm) is that body's first product, Q @ K^T.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.attention_geometry import Geometry, flex_geometry, geometry
from ge_core.ops.common import io_bytes, make_desc
from ge_core.ops.matrix_view import GemmKind, MatrixView
from ge_core.ops.registry import Cost, Operand

SOFTMAX_FLOPS = 5  # per score: Softmax's cost (max, subtract, exp, sum, divide)
SOFTCAP_FLOPS = 3


def _operands(inputs: list[TensorDesc | None]) -> list[Operand | None]:
    return [None if d is None else Operand(d) for d in inputs]


def _masked(node: Node, inputs: list[TensorDesc | None]) -> bool:
    """Whether a bias is added to the scores: a mask, is_causal, padding or a window."""
    present = any(i < len(inputs) and inputs[i] is not None for i in (3, 6))
    windowed = int(node.attr("left_window_size", -1)) >= 0 or int(node.attr("right_window_size", -1)) >= 0
    return present or bool(node.attr("is_causal", 0)) or windowed


def score_flops(g: Geometry, *, masked: bool, softcap: bool) -> int:
    """FLOPs of the products and of the vector work per score (0 while a dim is unknown)."""
    dims = (g.batch, g.q_heads, g.q_len, g.total, g.head, g.v_head)
    if min(dims) < 0:
        return 0
    scores = g.batch * g.q_heads * g.q_len * g.total
    per_score = 1 + SOFTMAX_FLOPS + (SOFTCAP_FLOPS if softcap else 0) + (1 if masked else 0)
    return 2 * scores * (g.head + g.v_head) + per_score * scores


def attention_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    g = geometry(node, _operands(inputs))
    flops = score_flops(g, masked=_masked(node, inputs), softcap=float(node.attr("softcap", 0.0)) > 0)
    return Cost(flops, *io_bytes(inputs, outputs))


def flex_cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
    g = flex_geometry(node, _operands(inputs))
    return Cost(score_flops(g, masked=False, softcap=False), *io_bytes(inputs, outputs))


def attention_gemm(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> MatrixView | None:
    """Q @ K^T, the first of Attention's two products, as its kernel body computes it (query heads sharing a
    key/value head stacked into one matrix); None while a dim is unknown."""
    return _scores_view(geometry(node, _operands(inputs)))


def flex_gemm(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> MatrixView | None:
    """FlexAttention's Q @ K^T, as Attention's."""
    return _scores_view(flex_geometry(node, _operands(inputs)))


def _scores_view(g: Geometry) -> MatrixView | None:
    if min(g.batch, g.kv_heads, g.group, g.q_len, g.total, g.head) < 0:
        return None
    return MatrixView(GemmKind.MATMUL, g.batch * g.kv_heads, g.group * g.q_len, g.head, g.total)


def attention_body(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Graph | None:
    """Attention's kernel body for pricing; None while a dim is unknown (then it is priced as itself)."""
    g = geometry(node, _operands(inputs))
    q, v = inputs[0], inputs[2]
    assert q is not None and v is not None
    softcap = float(node.attr("softcap", 0.0))
    return _body(g, q.dtype, v.dtype, _masked(node, inputs), softcap)


def flex_body(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Graph | None:
    """FlexAttention's kernel body; its score_mod/prob_mod subgraphs sit in it as nested kernels on the
    scores (a FlexAttention kernel compiles them in), so the body is the node's own, not shared."""
    g = flex_geometry(node, _operands(inputs))
    q, v = inputs[0], inputs[2]
    assert q is not None and v is not None
    mods = tuple((name, node.subgraphs[name]) for name in ("score_mod", "prob_mod") if name in node.subgraphs)
    return _build(g, q.dtype, v.dtype, False, 0.0, mods) if mods else _body(g, q.dtype, v.dtype, False, 0.0)


@functools.lru_cache(maxsize=256)
def _body(g: Geometry, dtype: str, v_dtype: str, masked: bool, softcap: float) -> Graph | None:
    """One shared, never edited body per geometry (a model repeats its layers)."""
    return _build(g, dtype, v_dtype, masked, softcap, ())


def _build(g: Geometry, dtype: str, v_dtype: str, masked: bool, softcap: float,
           mods: tuple[tuple[str, Graph], ...]) -> Graph | None:
    if min(g.batch, g.q_heads, g.kv_heads, g.q_len, g.kv_len, g.past_len, g.head, g.v_head) < 0:
        return None
    body = Graph("attention_kernel", opset={"": 23})
    b, h, m, total = g.batch, g.kv_heads, g.group * g.q_len, g.total
    body.add_input("q", make_desc((b, h, m, g.head), dtype))
    kt = _cache(body, "kt", (b, h, g.head), g, dtype, axis=3)
    v = _cache(body, "v", (b, h), g, v_dtype, axis=2, size=g.v_head)
    scores = make_desc((b, h, m, total), dtype)
    body.add_constant("scale", np.asarray(1 / math.sqrt(max(g.head, 1)), np.float32))
    body.add_node("MatMul", ["q", kt], ["qk"], name="qk", descs=[scores])
    last = body.add_node("Mul", ["qk", "scale"], ["scores"], name="scale", descs=[scores]).outputs[0]
    if softcap > 0:
        body.add_constant("softcap", np.asarray(softcap, np.float32))
        body.add_constant("inverse_softcap", np.asarray(1 / softcap, np.float32))
        body.add_node("Mul", [last, "inverse_softcap"], ["capped_in"], name="softcap_in", descs=[scores])
        body.add_node("Tanh", ["capped_in"], ["capped_tanh"], name="softcap_tanh", descs=[scores])
        last = body.add_node("Mul", ["capped_tanh", "softcap"], ["capped"], name="softcap", descs=[scores]).outputs[0]
    if masked:  # the mask, causal and padding terms make one bias tile
        body.add_input("bias", scores)
        last = body.add_node("Add", [last, "bias"], ["biased"], name="bias", descs=[scores]).outputs[0]
    last = _modifier(body, dict(mods), "score_mod", last, scores)
    body.add_node("Softmax", [last], ["probs"], {"axis": -1}, name="softmax", descs=[scores])
    last = _modifier(body, dict(mods), "prob_mod", "probs", scores)
    body.add_node("MatMul", [last, v], ["y"], name="pv", descs=[make_desc((b, h, m, g.v_head), dtype)])
    body.set_outputs(["y"])
    return body


def _modifier(body: Graph, mods: dict[str, Graph], name: str, scores: str, desc: TensorDesc) -> str:
    """A modifier subgraph on the scores as a nested kernel (domain ge, the subgraph its body)."""
    sub = mods.get(name)
    if sub is None:
        return scores
    return body.add_node(name, [scores], [f"{name}_out"], name=name, domain="ge", descs=[desc], body=sub).outputs[0]


def _cache(body: Graph, name: str, lead: tuple[int, ...], g: Geometry, dtype: str, *, axis: int,
           size: int | None = None) -> str:
    """K^T (lead + (head, total); axis 3) or V (lead + (total, v_head); axis 2) as the kernel reads it:
    with a past cache, the Concat that writes the present one."""
    def desc(length: int) -> TensorDesc:
        return make_desc((*lead, length) if size is None else (*lead, length, size), dtype)

    if not g.past_len:
        body.add_input(name, desc(g.kv_len))
        return name
    body.add_input(f"past_{name}", desc(g.past_len))
    body.add_input(f"new_{name}", desc(g.kv_len))
    body.add_node("Concat", [f"past_{name}", f"new_{name}"], [name], {"axis": axis}, name=f"present_{name}",
                  descs=[desc(g.total)])
    return name
