"""Attention (opsets 23-25) and FlexAttention (ai.onnx.preview): scaled dot-product attention as one op.

Attention takes Q, K, V in 4-D (batch, heads, sequence, head size) or 3-D (batch, sequence, heads * head
size, with q_num_heads/kv_num_heads), several query heads per key/value head (GQA, MQA), an additive or
boolean mask, a causal mask aligned bottom-right, an in-op KV cache (past_key/past_value -> present_*),
an external one (nonpad_kv_seqlen), sliding windows (opset 25), a softcap and four views of the scores
(qk_matmul_output_mode). This file holds inference and the OpDef rows; attention_geometry.py the dims
and checks every part shares; attention_kernel.py the numpy kernels (onnx.reference's arithmetic, in the
inputs' dtype); attention_cost.py the cost and the kernel body the simulator prices.

Category CUBE, like the GE FusedAttention graph fusion makes: its two matrix products run on the cube, the
scale, mask and softmax on the vector unit between them (OpDef.kernel_body says so to the simulator). As a
cube op, UB fusion may append elementwise ops after it, never fuse through it.
"""

from __future__ import annotations

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.attention_cost import attention_body, attention_cost, attention_gemm, flex_body, flex_cost, flex_gemm
from ge_core.ops.attention_geometry import check_attrs, check_mask, flex_geometry, geometry
from ge_core.ops.attention_kernel import attention_kernel, flex_dtype, flex_kernel, flex_run
from ge_core.ops.common import UNK, make_desc, operand, shape_error
from ge_core.ops.registry import Category, InferSubgraph, OpDef, Operand


def _infer_attention(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    g = geometry(node, operands)
    check_attrs(node, operands)
    q, v = operand(node, operands, 0).desc, operand(node, operands, 2).desc
    check_mask(node, operands, g, q.dtype)
    y = (g.batch, g.q_heads, g.q_len, g.v_head) if g.rank == 4 else (g.batch, g.q_len, _times(g.q_heads, g.v_head))
    return [make_desc(y, q.dtype), make_desc((g.batch, g.kv_heads, g.total, g.head), q.dtype),
            make_desc((g.batch, g.kv_heads, g.total, g.v_head), v.dtype),
            make_desc((g.batch, g.q_heads, g.q_len, g.total), q.dtype)]


def _times(a: int, b: int) -> int:
    return a * b if min(a, b) >= 0 else UNK


def _infer_flex(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    g = flex_geometry(node, operands)
    v = operand(node, operands, 2).desc
    return [make_desc((g.batch, g.q_heads, g.q_len, g.v_head), v.dtype)]


def _infer_flex_mods(node: Node, operands: list[Operand | None], infer_subgraph: InferSubgraph) -> list[Operand]:
    """The output, and each modifier subgraph given the scores (probabilities) it modifies: one output of
    their shape, in the softmax dtype."""
    (y,) = _infer_flex(node, operands)
    g = flex_geometry(node, operands)
    dtype = flex_dtype(node, np.dtype(operand(node, operands, 0).desc.dtype)).name
    scores = make_desc((g.batch, g.q_heads, g.q_len, g.total), dtype)
    for name in ("score_mod", "prob_mod"):
        if name not in node.subgraphs:
            continue
        outs = infer_subgraph(name, [Operand(scores)])
        if len(outs) != 1 or any(a != b and min(a, b) >= 0 for a, b in zip(outs[0].desc.shape, scores.shape,
                                                                          strict=False)):
            raise shape_error(node, operands, f"{name} must map the {scores.text()} scores to one tensor of their "
                                              f"shape, it gives {[o.desc.text() for o in outs]}")
    return [Operand(y)]


OPS: list[OpDef] = [
    # softmax(Q K^T * scale + softcap/mask/causal/window bias) V, with GQA, KV cache and 3-D or 4-D inputs
    OpDef("Attention", Category.CUBE, _infer_attention, attention_kernel, attention_cost,
          kernel_body=attention_body, gemm=attention_gemm, doc="scaled dot-product attention"),
    # softmax(score_mod(Q K^T * scale)), prob_mod applied, times V; rank 4, GQA. The modifiers are subgraphs
    # the interpreter runs (run_subgraphs); without them it is a plain kernel
    OpDef("FlexAttention", Category.CUBE, _infer_flex, flex_kernel, flex_cost, domain="ai.onnx.preview",
          kernel_body=flex_body, gemm=flex_gemm, infer_subgraphs=_infer_flex_mods, run_subgraphs=flex_run,
          doc="attention with score/probability modifier subgraphs"),
]
