"""Attention (opsets 23-25) and FlexAttention: kernels against onnx.reference (and ONNX Runtime, which runs
Attention-23) over heads, masks, caches, softcap, score modes and dtypes; inference and its errors naming
the node; the cost against the kernel body the simulator prices; ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import ge_core
from ge_core.errors import GEError
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY, Category, Operand, Unit
from ge_core.ops.common import make_desc
from tests.ops.conformance import all_cases, cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, reference, run_ge

RNG = np.random.default_rng(0)
F32 = "float32"
NONE: Any = None


def _rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def qkv(rank: int = 4, b: int = 2, hq: int = 4, hkv: int = 2, sq: int = 3, skv: int = 5, d: int = 8, dv: int = 6,
        dtype: Any = np.float32) -> list[np.ndarray]:
    shapes = [(b, hq, sq, d), (b, hkv, skv, d), (b, hkv, skv, dv)] if rank == 4 else \
        [(b, sq, hq * d), (b, skv, hkv * d), (b, skv, hkv * dv)]
    return [_rand(*shape, dtype=dtype) for shape in shapes]


HEADS_3D = {"q_num_heads": 4, "kv_num_heads": 2}
FLEX = [c for c in all_cases() if {n.op_type for n in c.model.graph.node} == {"FlexAttention"}]


# ---- kernels against the oracles -------------------------------------------------------------------------

@pytest.mark.parametrize("rank", [3, 4])
@pytest.mark.parametrize("hkv", [4, 2, 1])  # MHA, GQA, MQA
@pytest.mark.parametrize("attrs", [{}, {"is_causal": 1}, {"scale": 0.3}, {"softcap": 2.0},
                                   {"is_causal": 1, "softcap": 1.5}])
def test_heads_scale_causal_softcap(rank: int, hkv: int, attrs: dict[str, Any]) -> None:
    heads = {"q_num_heads": 4, "kv_num_heads": hkv} if rank == 3 else {}
    check("Attention", qkv(rank, hkv=hkv), {**attrs, **heads}, opset=23, oracle="reference", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask", [
    _rand(3, 5),  # float (q, kv)
    RNG.random((2, 1, 3, 5)) > 0.3,  # bool, per batch
    _rand(4, 3, 5),  # rank 3: (heads, q, kv)
    _rand(2, 4, 3, 2),  # shorter than the keys: padded with -inf
    RNG.random(5) > 0.5,  # rank 1
], ids=["float2d", "bool4d", "float3d_heads", "short", "bool1d"])
@pytest.mark.parametrize("causal", [0, 1])
def test_masks(mask: np.ndarray, causal: int) -> None:
    if mask.ndim == 1 and causal:
        pytest.skip("onnx.reference takes rank-1 masks with is_causal only with a window (opset 25)")
    check("Attention", [*qkv(), mask], {"is_causal": causal}, opset=23, oracle="reference", rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("causal", [0, 1])
def test_past_cache_and_score_outputs(mode: int, causal: int) -> None:
    """present_key/value are past + new; qk_matmul_output in each of its four modes; causal is bottom-right."""
    q, k, v = qkv(skv=2)
    past_k, past_v = _rand(2, 2, 4, 8), _rand(2, 2, 4, 6)
    check("Attention", [q, k, v, _rand(3, 6), past_k, past_v],
          {"qk_matmul_output_mode": mode, "softcap": 3.0, "is_causal": causal}, opset=23, oracle="reference",
          rtol=1e-5, atol=1e-6, n_outputs=4)


def test_3d_with_past() -> None:
    check("Attention", [*qkv(3, skv=2), NONE, _rand(2, 2, 4, 8), _rand(2, 2, 4, 6)], HEADS_3D, opset=23,
          oracle="reference", rtol=1e-5, atol=1e-6, n_outputs=3)


@pytest.mark.parametrize("causal", [0, 1])
def test_external_cache_nonpad_kv_seqlen(causal: int) -> None:
    """Opset 24: keys past nonpad_kv_seqlen[b] are padding; causal offset nonpad - q_len (here -1 for batch 1:
    its first query row sees no key and is zero)."""
    lengths = np.array([5, 2], np.int64)
    check("Attention", [*qkv(), NONE, NONE, NONE, lengths], {"is_causal": causal}, opset=24, oracle="reference",
          rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("window", [(2, -1), (1, 1), (0, 0), (-1, 1)])
def test_sliding_window(window: tuple[int, int]) -> None:
    left, right = window
    attrs = {"left_window_size": left, "right_window_size": right, "is_causal": int(right < 0)}
    check("Attention", qkv(), attrs, opset=25, oracle="reference", rtol=1e-5, atol=1e-6)
    check("Attention", [*qkv(skv=2), NONE, _rand(2, 2, 4, 8), _rand(2, 2, 4, 6)], attrs, opset=25,
          oracle="reference", rtol=1e-5, atol=1e-6)


def test_fully_masked_rows_are_zero() -> None:
    mask = np.ones((3, 5), bool)
    mask[1] = False
    for mode in (0, 3):
        y, *_, qk = run_ge("Attention", [*qkv(), mask], {"qk_matmul_output_mode": mode}, opset=23, n_outputs=4)
        assert not np.isnan(y).any() and (y[:, :, 1] == 0).all()
        if mode == 3:
            assert (qk[:, :, 1] == 0).all()
    check("Attention", [*qkv(), mask], {}, opset=23, oracle="reference")


def test_matches_onnxruntime() -> None:
    """ONNX Runtime's CPU Attention-23 on the common forms: GQA, causal, a float mask, 3-D with past."""
    check("Attention", qkv(), {"is_causal": 1}, opset=23, oracle="onnxruntime", rtol=1e-5, atol=1e-5)
    check("Attention", [*qkv(), _rand(3, 5)], {"scale": 0.2}, opset=23, oracle="onnxruntime", rtol=1e-5, atol=1e-5)
    check("Attention", [*qkv(3, skv=2), _rand(3, 6), _rand(2, 2, 4, 8), _rand(2, 2, 4, 6)], HEADS_3D, opset=23,
          oracle="onnxruntime", rtol=1e-5, atol=1e-5, n_outputs=3)


def test_float16_and_bfloat16() -> None:
    """Computed in the inputs' dtype, as the reference computes (float16 softmax included)."""
    check("Attention", qkv(dtype=np.float16), {"is_causal": 1}, opset=23, oracle="reference", rtol=2e-3, atol=2e-3)
    check("Attention", [*qkv(dtype=np.float16), RNG.random((3, 5)) > 0.2], {"softmax_precision": 1}, opset=24,
          oracle="reference", rtol=2e-3, atol=2e-3)
    bf16 = [x.astype("bfloat16") for x in qkv()]
    (got,) = run_ge("Attention", bf16, {"is_causal": 1}, opset=23)
    (want,) = reference("Attention", bf16, {"is_causal": 1}, opset=23)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-2, atol=2e-2)


# ---- inference -------------------------------------------------------------------------------------------

def test_infer_shapes() -> None:
    y, pk, pv, qk = infer("Attention", [((2, 4, 3, 8), F32), ((2, 2, 5, 8), F32), ((2, 2, 5, 6), F32), None,
                                        ((2, 2, 7, 8), F32), ((2, 2, 7, 6), F32)], opset=23, n_outputs=4)
    assert (y.shape, pk.shape, pv.shape, qk.shape) == ((2, 4, 3, 6), (2, 2, 12, 8), (2, 2, 12, 6), (2, 4, 3, 12))
    y, *_ = infer("Attention", [((2, 3, 32), F32), ((2, 5, 16), F32), ((2, 5, 12), F32)], HEADS_3D, opset=23)
    assert y.shape == (2, 3, 24)  # 4 heads x v_head 6
    y, pk, _, qk = infer("Attention", [((-1, 4, -1, 8), F32), ((-1, 2, -1, 8), F32), ((-1, 2, -1, 6), F32)],
                         opset=23, n_outputs=4)
    assert (y.shape, pk.shape, qk.shape) == ((-1, 4, -1, 6), (-1, 2, -1, 8), (-1, 4, -1, -1))
    assert infer("Attention", [((1, 2, 3, 8), "float16")] * 3, opset=23)[0].dtype == "float16"


Q4, K4, V4 = ((2, 4, 3, 8), F32), ((2, 2, 5, 8), F32), ((2, 2, 5, 6), F32)


@pytest.mark.parametrize(("descs", "attrs", "opset", "match"), [
    ([((2, 4, 3, 8), F32), ((2, 5, 16), F32), V4], {}, 23, "all 3-D or all 4-D"),
    ([((2, 3, 32), F32), ((2, 5, 16), F32), ((2, 5, 12), F32)], {}, 23, "need the q_num_heads and kv_num_heads"),
    ([((2, 3, 30), F32), ((2, 5, 16), F32), ((2, 5, 12), F32)], HEADS_3D, 23, "not a multiple of 4 heads"),
    ([((2, 3, 3, 8), F32), K4, V4], {}, 23, "3 query heads are not a multiple of 2"),
    ([Q4, ((2, 2, 5, 4), F32), V4], {}, 23, "head sizes must agree"),
    ([Q4, K4, ((2, 2, 4, 6), F32)], {}, 23, "sequence lengths must agree"),
    ([Q4, ((3, 2, 5, 8), F32), V4], {}, 23, "batch sizes must agree"),
    ([Q4, ((2, 2, 5, 8), "float16"), V4], {}, 23, "Q and K must share one dtype"),
    ([((2, 4, 3, 8), "int32"), K4, V4], {}, 23, "Q must be one of"),
    ([Q4, K4, V4], {"q_num_heads": 4, "kv_num_heads": 2}, 25, "must not be given with 4-D inputs"),
    ([Q4, K4, V4, None, ((2, 2, 7, 8), F32)], {}, 23, "past_key and past_value must be given together"),
    ([Q4, K4, V4, None, ((2, 2, 7, 8), F32), ((2, 2, 7, 5), F32)], {}, 23, "past_value must be float32 of shape"),
    ([Q4, K4, V4, None, ((2, 2, 7, 8), F32), ((2, 2, 7, 6), F32), ((2,), "int64")], {}, 24,
     "cannot be combined with past_key"),
    ([Q4, K4, V4, None, None, None, ((3,), "int64")], {}, 24, "nonpad_kv_seqlen must be int64 of shape"),
    ([Q4, K4, V4, ((3, 6), F32)], {}, 23, "exceeds the total sequence length 5"),
    ([Q4, K4, V4, ((2, 3, 3, 5), F32)], {}, 23, "does not broadcast"),
    ([Q4, K4, V4, ((3, 5), "int64")], {}, 23, "attn_mask must be bool or float32"),
    ([Q4, K4, V4], {"qk_matmul_output_mode": 4}, 23, "qk_matmul_output_mode must be"),
    ([Q4, K4, V4], {"softmax_precision": 7}, 23, "softmax_precision must be one of"),
    ([Q4, K4, V4], {"softcap": -1.0}, 23, "softcap must be >= 0"),
    ([Q4, K4, V4], {"left_window_size": -2}, 25, "left_window_size must be -1"),
])
def test_infer_errors_name_the_node(descs: list[Any], attrs: dict[str, Any], opset: int, match: str) -> None:
    infer_error("Attention", descs, attrs, opset=opset, match=match)


# ---- cost and the kernel body ------------------------------------------------------------------------------

def _node(op_type: str, n_inputs: int, attrs: dict[str, Any], domain: str = "") -> Node:
    inputs = tuple(f"x{i}" for i in range(n_inputs))
    return Node("n0", op_type, inputs, ("y",), attrs, domain=domain, opset=24 if not domain else 1)


@pytest.mark.parametrize("attrs", [{}, {"is_causal": 1}, {"softcap": 2.0, "scale": 0.1}])
@pytest.mark.parametrize("past", [False, True])
def test_cost_is_the_kernel_bodys(attrs: dict[str, Any], past: bool) -> None:
    """The op's FLOPs are the sum of its kernel body's (what the simulator prices), and the body's products
    are (group * q_len) x head x total and (group * q_len) x total x v_head per kv head."""
    op = REGISTRY.get("Attention")
    assert op is not None and op.kernel_body is not None and op.category == Category.CUBE and op.unit == Unit.CUBE
    ins = [make_desc(*d) for d in (Q4, K4, V4)] + ([None, make_desc((2, 2, 7, 8), F32), make_desc((2, 2, 7, 6), F32)]
                                                  if past else [])
    node = _node("Attention", len(ins), attrs)
    outs = op.infer(node, [None if d is None else _operand(d) for d in ins])
    body = op.kernel_body(node, ins, outs)
    assert body is not None
    inner = sum(REGISTRY.lookup(n).cost(n, body.input_descs(n), body.output_descs(n)).flops for n in body.nodes)
    assert op.cost(node, ins, outs).flops == inner
    matmuls = [n for n in body.nodes if n.op_type == "MatMul"]
    total = 12 if past else 5
    assert [body.desc(n.outputs[0]).shape for n in matmuls] == [(2, 2, 6, total), (2, 2, 6, 6)]
    assert op.cost(node, ins, outs).bytes_read == sum(d.nbytes or 0 for d in ins if d is not None)
    assert op.kernel_body(node, ins, outs) is body  # one shared body per geometry


def _operand(desc: Any) -> Operand:
    return Operand(desc)


def test_unknown_dims_have_no_kernel_body() -> None:
    op = REGISTRY.get("Attention")
    assert op is not None and op.kernel_body is not None
    ins = [make_desc((-1, 4, 3, 8), F32), make_desc((-1, 2, 5, 8), F32), make_desc((-1, 2, 5, 6), F32)]
    node = _node("Attention", 3, {})
    outs = op.infer(node, [_operand(d) for d in ins])
    assert op.kernel_body(node, ins, outs) is None and op.cost(node, ins, outs).flops == 0


# ---- FlexAttention ---------------------------------------------------------------------------------------

def _flex_reference(inputs: list[np.ndarray], attrs: dict[str, Any]) -> np.ndarray:
    node = helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], domain="ai.onnx.preview", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype),
                                                                          x.shape)
                                            for n, x in zip("qkv", inputs, strict=True)],
                              [helper.make_tensor_value_info("y", 0, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                    helper.make_opsetid("ai.onnx.preview", 1)])
    return np.asarray(ReferenceEvaluator(model).run(None, dict(zip("qkv", inputs, strict=True)))[0])


@pytest.mark.parametrize(("dtype", "attrs", "hkv"), [(np.float32, {}, 4), (np.float32, {"scale": 0.5}, 2),
                                                     (np.float16, {}, 1), (np.float64, {"softmax_precision": 11}, 2)])
def test_flex_attention_matches_reference(dtype: Any, attrs: dict[str, Any], hkv: int) -> None:
    inputs = qkv(hkv=hkv, dtype=dtype)
    op = REGISTRY.get("FlexAttention", "ai.onnx.preview")
    assert op is not None
    node = _node("FlexAttention", 3, attrs, domain="ai.onnx.preview")
    (got,) = op.kernel(node, list(inputs))
    want = _flex_reference(inputs, attrs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-3 if dtype == np.float16 else 1e-6, atol=1e-6)


def test_flex_attention_modifiers_are_subgraphs() -> None:
    """score_mod/prob_mod arrive as node subgraphs the interpreter runs; a plain attribute is refused, and so
    is the plain kernel of a node that has them."""
    op = REGISTRY.get("FlexAttention", "ai.onnx.preview")
    assert op is not None and op.run_subgraphs is not None and op.infer_subgraphs is not None
    node = _node("FlexAttention", 3, {"score_mod": object()}, domain="ai.onnx.preview")
    with pytest.raises(GEError, match=r"node 'n0' \(FlexAttention\).*score_mod must be a graph attribute"):
        op.infer(node, [_operand(make_desc(*d)) for d in (Q4, K4, V4)])
    case = next(c for c in FLEX if c.name == "test_flexattention_soft_cap")
    graph = ge_core.load_onnx(case.model)
    (flex,) = graph.nodes
    assert set(flex.subgraphs) == {"score_mod"}
    with pytest.raises(GEError, match="runs its score_mod subgraph through the interpreter"):
        op.kernel(flex, qkv(hkv=4))


# ---- ONNX's conformance cases ------------------------------------------------------------------------------

@pytest.mark.parametrize("case", cases_for({"Attention"}), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)




@pytest.mark.parametrize("case", FLEX, ids=lambda c: c.name)
def test_flex_conformance(case: Any) -> None:
    """Modifier subgraphs included (score_mod: a bias, a causal mask, a soft cap, relative positions)."""
    run_case(case)
