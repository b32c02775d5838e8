"""RMSNormalization, RotaryEmbedding, SwiGLU, TensorScatter, LinearAttention and CausalConvWithState: kernels
against onnx.reference (and ONNX Runtime where it runs the op), inference and its errors naming the node,
their facts, and ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.errors import ExecutionError
from ge_core.ops import REGISTRY, Category, Unit, VectorClass
from tests.ops.conformance import cases_for, run_case
from tests.ops.elementwise_oracle import check, infer, infer_error, run_ge

RNG = np.random.default_rng(0)
F32 = "float32"
NONE: Any = None


def _rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def test_facts() -> None:
    facts = {op: (REGISTRY.get(op).category, REGISTRY.get(op).unit)  # type: ignore[union-attr]
             for op in ("RMSNormalization", "RotaryEmbedding", "SwiGLU", "TensorScatter", "LinearAttention",
                        "CausalConvWithState")}
    assert facts == {"RMSNormalization": (Category.REDUCE, Unit.VECTOR),
                     "RotaryEmbedding": (Category.OPAQUE, Unit.VECTOR), "SwiGLU": (Category.ELEMENTWISE, Unit.VECTOR),
                     "TensorScatter": (Category.INJECTIVE, Unit.MTE),
                     "LinearAttention": (Category.OPAQUE, Unit.VECTOR),
                     "CausalConvWithState": (Category.OPAQUE, Unit.VECTOR)}
    swiglu = REGISTRY.get("SwiGLU")
    assert swiglu is not None and swiglu.vector_class == VectorClass.TRANSCENDENTAL


# ---- RMSNormalization ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "axis", "scale"), [((2, 3, 8), -1, (8,)), ((2, 3, 4, 5), 1, (3, 4, 5)),
                                                      ((2, 6), 0, (2, 6)), ((2, 3, 4), -2, (1, 4))])
def test_rms_norm(shape: tuple[int, ...], axis: int, scale: tuple[int, ...]) -> None:
    check("RMSNormalization", [_rand(*shape), _rand(*scale)], {"axis": axis, "epsilon": 1e-3}, opset=23,
          rtol=1e-5, atol=1e-6)  # onnx.reference and ONNX Runtime


def test_rms_norm_float16_in_float32() -> None:
    """stash_type float32: the statistics of float16 X in float32 (as ONNX Runtime), the result float16."""
    x, scale = _rand(2, 16, dtype=np.float16), _rand(16, dtype=np.float16)
    check("RMSNormalization", [x, scale], {}, opset=23, oracle="onnxruntime", rtol=2e-3, atol=2e-3)


def test_rms_norm_infer_and_errors() -> None:
    assert infer("RMSNormalization", [((-1, 3, 8), F32), ((8,), F32)], opset=23)[0].shape == (-1, 3, 8)
    infer_error("RMSNormalization", [((2, 3, 8), F32), ((3,), F32)], opset=23, match="does not broadcast")
    infer_error("RMSNormalization", [((2, 3), F32), ((3,), F32)], {"axis": 2}, opset=23, match="out of range")
    infer_error("RMSNormalization", [((2, 3), "int32"), ((3,), "int32")], opset=23, match="X must be one of")
    infer_error("RMSNormalization", [((2, 3), F32), ((3,), F32)], {"stash_type": 10}, opset=23,
                match="stash_type float16 is unsupported")


# ---- SwiGLU ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("alpha", [None, 1.702])
def test_swiglu(dtype: Any, alpha: float | None) -> None:
    attrs = {} if alpha is None else {"alpha": alpha}
    tol = 2e-3 if dtype == np.float16 else 1e-6
    check("SwiGLU", [_rand(3, 8, dtype=dtype), _rand(3, 8, dtype=dtype)], attrs, opset=28, oracle="reference",
          rtol=tol, atol=tol)


def test_swiglu_refuses_broadcasting() -> None:
    infer_error("SwiGLU", [((3, 8), F32), ((1, 8), F32)], opset=28, match="no broadcasting")
    infer_error("SwiGLU", [((3, 8), F32), ((3, 8), "float16")], opset=28, match="one shape and dtype")


# ---- RotaryEmbedding ---------------------------------------------------------------------------------------

def _caches(positions: int, half: int) -> list[np.ndarray]:
    angles = RNG.random((positions, half)).astype(np.float32) * 6
    return [np.cos(angles), np.sin(angles)]


@pytest.mark.parametrize("interleaved", [0, 1])
@pytest.mark.parametrize("rotary_dim", [0, 4])
def test_rotary_4d_with_positions(interleaved: int, rotary_dim: int) -> None:
    cos, sin = _caches(16, (rotary_dim or 8) // 2)
    positions = RNG.integers(0, 16, (2, 3)).astype(np.int64)
    check("RotaryEmbedding", [_rand(2, 4, 3, 8), cos, sin, positions],
          {"interleaved": interleaved, "rotary_embedding_dim": rotary_dim}, opset=23, rtol=1e-6, atol=1e-6)


def test_rotary_3d_and_without_positions() -> None:
    cos, sin = _caches(16, 4)
    check("RotaryEmbedding", [_rand(2, 3, 32), cos, sin, RNG.integers(0, 16, (2, 3)).astype(np.int64)],
          {"num_heads": 4}, opset=23, rtol=1e-6, atol=1e-6)
    check("RotaryEmbedding", [_rand(2, 4, 3, 8), _rand(2, 3, 4), _rand(2, 3, 4)], {"interleaved": 1}, opset=23,
          oracle="reference", rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("descs", "attrs", "match"), [
    ([((2, 3, 32), F32), ((16, 4), F32), ((16, 4), F32), ((2, 3), "int64")], {}, "needs the num_heads attribute"),
    ([((2, 3, 30), F32), ((16, 4), F32), ((16, 4), F32), ((2, 3), "int64")], {"num_heads": 4}, "not a multiple"),
    ([((2, 4, 3, 8), F32), ((16, 3), F32), ((16, 3), F32), ((2, 3), "int64")], {}, "cos_cache must be float32"),
    ([((2, 4, 3, 8), F32), ((16, 4), F32), ((16, 4), F32), ((2, 5), "int64")], {}, "position_ids must be int64"),
    ([((2, 4, 3, 8), F32), ((16, 4), F32), ((16, 4), F32)], {}, r"cos_cache must be float32 of shape \[2, 3, 4\]"),
    ([((2, 4, 3, 8), F32), ((16, 5), F32), ((16, 5), F32), ((2, 3), "int64")], {"rotary_embedding_dim": 10},
     "at most the head size"),
    ([((2, 3), F32), ((16, 4), F32), ((16, 4), F32)], {}, "must be 3-D or 4-D"),
])
def test_rotary_errors(descs: list[Any], attrs: dict[str, Any], match: str) -> None:
    infer_error("RotaryEmbedding", descs, attrs, opset=23, match=match)


# ---- TensorScatter -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "indices"), [("linear", [0, 2]), ("circular", [3, 1]), ("linear", None)])
def test_tensor_scatter(mode: str, indices: list[int] | None) -> None:
    write = None if indices is None else np.array(indices, np.int64)
    check("TensorScatter", [_rand(2, 3, 5, 4), _rand(2, 3, 2, 4), write], {"mode": mode}, opset=24,
          oracle="reference")
    check("TensorScatter", [_rand(2, 5, 4), _rand(2, 2, 4), write], {"mode": mode, "axis": 1}, opset=24,
          oracle="reference")


def test_tensor_scatter_errors() -> None:
    infer_error("TensorScatter", [((2, 5, 4), F32), ((2, 6, 4), F32)], opset=24, match="may be shorter")
    infer_error("TensorScatter", [((2, 5, 4), F32), ((2, 2, 3), F32)], opset=24, match="must match past_cache")
    infer_error("TensorScatter", [((2, 5, 4), F32), ((2, 5, 4), F32)], {"axis": 0}, opset=24, match="batch axis")
    infer_error("TensorScatter", [((2, 5, 4), F32), ((2, 1, 4), F32), ((3,), "int64")], opset=24,
                match="write_indices must be int64")
    infer_error("TensorScatter", [((2, 5, 4), F32), ((2, 1, 4), F32)], {"mode": "ring"}, opset=24,
                match="mode must be")
    with pytest.raises(ExecutionError, match="linear mode needs write_indices"):
        run_ge("TensorScatter", [_rand(2, 5, 4), _rand(2, 2, 4), np.array([0, 4], np.int64)], {"axis": 1}, opset=24)


# ---- LinearAttention -----------------------------------------------------------------------------------------

def _linear_inputs(rule: str, hq: int = 4, hkv: int = 2, dk: int = 8, dv: int = 6, t: int = 5,
                   past: bool = False) -> list[np.ndarray | None]:
    decay = -RNG.random((2, t, hkv * dk)).astype(np.float32) if rule in ("gated", "gated_delta") else None
    beta = RNG.random((2, t, hkv)).astype(np.float32) if rule in ("delta", "gated_delta") else None
    state = _rand(2, hkv, dk, dv) if past else None
    return [_rand(2, t, hq * dk) * 0.3, _rand(2, t, hkv * dk) * 0.3, _rand(2, t, hkv * dv), state, decay, beta]


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
@pytest.mark.parametrize("past", [False, True])
def test_linear_attention(rule: str, past: bool) -> None:
    attrs = {"q_num_heads": 4, "kv_num_heads": 2, "update_rule": rule}
    check("LinearAttention", _linear_inputs(rule, past=past), attrs, opset=27, oracle="reference", rtol=1e-5,
          atol=1e-5, n_outputs=2)


def test_linear_attention_errors() -> None:
    attrs = {"q_num_heads": 4, "kv_num_heads": 2, "update_rule": "gated"}
    qkv = [((2, 5, 32), F32), ((2, 5, 16), F32), ((2, 5, 12), F32)]
    infer_error("LinearAttention", qkv, attrs, opset=27, match="'gated' needs the decay input")
    infer_error("LinearAttention", [*qkv, None, None, ((2, 5, 2), F32)], {**attrs, "update_rule": "linear"},
                opset=27, match="'linear' forbids the beta input")
    infer_error("LinearAttention", qkv, {**attrs, "q_num_heads": 3}, opset=27, match="positive multiple")
    infer_error("LinearAttention", [*qkv, ((2, 2, 8, 5), F32), ((2, 5, 2), F32)], attrs, opset=27,
                match=r"past_state must have shape \[2, 2, 8, 6\]")
    infer_error("LinearAttention", [((2, 5, 32), F32), ((2, 5, 12), F32), ((2, 5, 12), F32)], attrs, opset=27,
                match="key's last dim must be")


# ---- CausalConvWithState ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("activation", ["none", "silu"])
@pytest.mark.parametrize(("bias", "past"), [(False, False), (True, True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_causal_conv(activation: str, bias: bool, past: bool, dtype: Any) -> None:
    inputs = [_rand(2, 4, 7, dtype=dtype), _rand(4, 1, 3, dtype=dtype), _rand(4, dtype=dtype) if bias else None,
              _rand(2, 4, 2, dtype=dtype) if past else None]
    tol = 2e-3 if dtype == np.float16 else 1e-6
    check("CausalConvWithState", inputs, {"activation": activation}, opset=27, oracle="reference", rtol=tol,
          atol=tol, n_outputs=2)


def test_causal_conv_errors() -> None:
    infer_error("CausalConvWithState", [((2, 4, 7), F32), ((4, 2, 3), F32)], opset=27, match="weight must be")
    infer_error("CausalConvWithState", [((2, 4, 7), F32), ((4, 1, 3), F32), None, ((2, 4, 3), F32)], opset=27,
                match=r"past_state must have shape \[2, 4, 2\]")
    infer_error("CausalConvWithState", [((2, 4, 7), F32), ((4, 1, 3), F32)], {"activation": "gelu"}, opset=27,
                match="activation must be one of")


# ---- ONNX's conformance cases ----------------------------------------------------------------------------------

OPS = {"RMSNormalization", "RotaryEmbedding", "SwiGLU", "TensorScatter", "LinearAttention", "CausalConvWithState"}


@pytest.mark.parametrize("case", cases_for(OPS), ids=lambda c: c.name)
def test_conformance(case: Any) -> None:
    run_case(case)
