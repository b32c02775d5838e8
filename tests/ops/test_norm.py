"""BatchNormalization, InstanceNormalization, LayerNormalization, GroupNormalization, LRN: inference
(shapes, unknown dims, parameter and attribute errors, training mode refused), kernels against ONNX
Runtime / onnx.reference across opsets and dtypes, and ONNX's conformance cases."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ge_core.errors import ShapeError
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, norm
from ge_core.ops.common import make_desc
from ge_core.ops.registry import Category, Operand
from tests.ops.conformance import cases_for, run_case, with_xfails
from tests.ops.elementwise_oracle import check, infer, infer_error, make_node, reference, run_ge

RNG = np.random.default_rng(0)
F32 = "float32"

# Training-mode BatchNormalization (batch statistics, running mean/var outputs) is deliberately refused:
# the workbench compiles and runs inference graphs.
XFAIL = {
    "test_batchnorm_example_training_mode": "training-mode BatchNormalization is unsupported by design",
    "test_batchnorm_epsilon_training_mode": "training-mode BatchNormalization is unsupported by design",
}


def _rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _bn_inputs(x: np.ndarray, dtype: Any = np.float32) -> list[np.ndarray]:
    c = x.shape[1]
    return [x, _rand(c, dtype=dtype), _rand(c, dtype=dtype), _rand(c, dtype=dtype),
            np.asarray(RNG.uniform(0.5, 2.0, c)).astype(dtype)]


# ---- BatchNormalization ------------------------------------------------------------------------------

@pytest.mark.parametrize("opset", [7, 9, 14, 15])
@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (2, 3, 4, 5), (1, 3, 2, 3, 4)])
def test_batch_norm_matches_onnxruntime(opset: int, shape: tuple[int, ...]) -> None:
    check("BatchNormalization", _bn_inputs(_rand(*shape)), {"epsilon": 1e-3}, opset=opset,
          oracle="onnxruntime", rtol=1e-5, atol=1e-5)


def test_batch_norm_dtypes() -> None:
    x = _rand(2, 3, 4, 5)
    check("BatchNormalization", _bn_inputs(x.astype(np.float64), np.float64), opset=15, oracle="onnxruntime",
          rtol=1e-12, atol=1e-12)
    # opset 15: float16 X with float32 parameters
    inputs = _bn_inputs(x.astype(np.float16))
    (got,) = run_ge("BatchNormalization", inputs, opset=15)
    (want,) = reference("BatchNormalization", [inputs[0].astype(np.float32), *inputs[1:]], opset=15)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_batch_norm_per_activation_before_opset_9() -> None:
    """spatial=0 (opset < 9): one statistic per (C, D1 ... Dn) activation."""
    x = _rand(2, 3, 4)
    scale, bias, mean = _rand(3, 4), _rand(3, 4), _rand(3, 4)
    var = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    (got,) = run_ge("BatchNormalization", [x, scale, bias, mean, var], {"spatial": 0, "epsilon": 1e-4},
                    opset=7)
    want = scale * (x - mean) / np.sqrt(var + 1e-4) + bias
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert infer("BatchNormalization", [((-1, 3, 4), F32)] + [((3, 4), F32)] * 4, {"spatial": 0},
                 opset=7)[0].shape == (-1, 3, 4)


def test_batch_norm_infer() -> None:
    params = [((3,), F32)] * 4
    assert infer("BatchNormalization", [((-1, 3, -1, -1), F32), *params])[0].shape == (-1, 3, -1, -1)
    assert infer("BatchNormalization", [((2, -1, 4), F32), *params])[0].shape == (2, -1, 4)
    assert infer("BatchNormalization", [((2, 3, 4), F32), *params], {"training_mode": 0},
                 opset=15)[0].shape == (2, 3, 4)


def test_batch_norm_infer_errors() -> None:
    x = ((2, 3, 4, 5), F32)
    params = [((3,), F32)] * 4
    infer_error("BatchNormalization", [x, ((4,), F32), *params[1:]], match="scale must have shape \\[3\\]")
    infer_error("BatchNormalization", [x, *params[:3], ((3, 1), F32)], match="var must have shape \\[3\\]")
    infer_error("BatchNormalization", [x, *params], {"training_mode": 1}, opset=14,
                match="training mode .* is unsupported")
    infer_error("BatchNormalization", [((2, 3, 4), "int32"), *params], match="got int32")
    infer_error("BatchNormalization", [x, *params[:3]], match="expects 5 inputs")
    # extra outputs exist only in training mode (opset 9: mean, var, saved_mean, saved_var)
    node = make_node("BatchNormalization", [True] * 5, {}, opset=9, n_outputs=3)
    op = REGISTRY.get("BatchNormalization")
    assert op is not None
    with pytest.raises(ShapeError, match=r"node 'n0' .* training mode"):
        op.infer(node, [Operand(make_desc(*d)) for d in [x, *params]])


# ---- InstanceNormalization ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("opset", [6, 22])
def test_instance_norm_matches_onnxruntime(shape: tuple[int, ...], opset: int) -> None:
    x = _rand(*shape) * 3 + 1
    inputs = [x, _rand(shape[1]), _rand(shape[1])]
    check("InstanceNormalization", inputs, {"epsilon": 1e-4}, opset=opset, oracle="onnxruntime",
          rtol=1e-4, atol=1e-5)


def test_instance_norm_float16_and_errors() -> None:
    x = _rand(2, 3, 4, 5)
    (got,) = run_ge("InstanceNormalization", [x.astype(np.float16), *(_rand(3, dtype=np.float16),) * 2])
    assert got.dtype == np.float16
    assert infer("InstanceNormalization", [((-1, 3, -1), F32), ((3,), F32), ((3,), F32)])[0].shape == (-1, 3, -1)
    infer_error("InstanceNormalization", [((2, 3, 4), F32), ((4,), F32), ((3,), F32)],
                match="scale must have shape \\[3\\]")
    infer_error("InstanceNormalization", [((2, 3), F32), ((3,), F32), ((3,), F32)], match="rank >= 3")


# ---- LayerNormalization ------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("with_bias", [False, True])
def test_layer_norm_matches_oracles(axis: int, with_bias: bool) -> None:
    x = _rand(2, 3, 4) * 2 + 0.5
    normalized = x.shape[axis:]
    inputs = [x, _rand(*normalized)] + ([_rand(*normalized)] if with_bias else [])
    attrs = {"axis": axis, "epsilon": 1e-3}
    check("LayerNormalization", inputs, attrs, opset=17, rtol=1e-4, atol=1e-5, n_outputs=3)


def test_layer_norm_broadcast_scale_float16_and_float64() -> None:
    x = _rand(2, 3, 8)
    check("LayerNormalization", [x, _rand(8), _rand(1)], {"axis": -1}, opset=17, oracle="onnxruntime",
          rtol=1e-4, atol=1e-5)
    check("LayerNormalization", [x.astype(np.float64), _rand(3, 8, dtype=np.float64)], {"axis": 1},
          opset=17, oracle="reference", rtol=1e-12, atol=1e-12)
    y, mean, inv_std = run_ge("LayerNormalization", [x.astype(np.float16), _rand(8, dtype=np.float16)],
                              opset=17, n_outputs=3)
    # stash_type=1: statistics are float32 whatever X is (as ONNX's shape inference says)
    assert y.dtype == np.float16 and mean.dtype == np.float32 and inv_std.dtype == np.float32
    assert mean.shape == (2, 3, 1)


def test_layer_norm_infer() -> None:
    y, mean, inv_std = infer("LayerNormalization", [((-1, 5, 8), "float16"), ((8,), "float16")],
                             {"axis": -1}, n_outputs=3)
    assert y.shape == (-1, 5, 8) and y.dtype == "float16"
    assert mean.shape == inv_std.shape == (-1, 5, 1) and mean.dtype == "float32"
    (_, mean64, _) = infer("LayerNormalization", [((2, 8), F32), ((8,), F32)], {"stash_type": 11},
                           n_outputs=3)
    assert mean64.dtype == "float64"
    infer_error("LayerNormalization", [((2, 8), F32), ((8,), F32)], {"axis": 2}, match="axis=2 is out of range")
    infer_error("LayerNormalization", [((2, 8), F32), ((7,), F32)], match="Scale \\[7\\] does not broadcast")
    infer_error("LayerNormalization", [((2, 8), F32), ((8,), F32), ((2, 8), F32)], {"axis": 1},
                match="B \\[2, 8\\] does not broadcast")
    infer_error("LayerNormalization", [((2, 8), F32), ((8,), F32)], {"stash_type": 7},
                match="stash_type int64 is unsupported")


# ---- GroupNormalization ------------------------------------------------------------------------------

def _group_norm_numpy(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, groups: int, eps: float
                      ) -> np.ndarray:
    g = x.reshape(x.shape[0], groups, -1).astype(np.float64)
    g = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + eps)
    shape = (-1,) + (1,) * (x.ndim - 2)
    return g.reshape(x.shape) * scale.reshape(shape) + bias.reshape(shape)


@pytest.mark.parametrize("groups", [1, 2, 6])
@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 6, 4, 3)])
def test_group_norm_opset_21(groups: int, shape: tuple[int, ...]) -> None:
    x = _rand(*shape) * 2 + 1
    inputs = [x, _rand(6), _rand(6)]
    check("GroupNormalization", inputs, {"num_groups": groups, "epsilon": 1e-3}, opset=21, oracle="reference",
          rtol=1e-4, atol=1e-5)
    (got,) = run_ge("GroupNormalization", inputs, {"num_groups": groups, "epsilon": 1e-3}, opset=21)
    np.testing.assert_allclose(got, _group_norm_numpy(x, inputs[1], inputs[2], groups, 1e-3), rtol=1e-4,
                               atol=1e-5)


def test_group_norm_opset_18_has_one_parameter_per_group() -> None:
    x, scale, bias = _rand(2, 6, 4, 3), _rand(3), _rand(3)
    (got,) = run_ge("GroupNormalization", [x, scale, bias], {"num_groups": 3}, opset=18)
    want = _group_norm_numpy(x, np.repeat(scale, 2), np.repeat(bias, 2), 3, 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    infer_error("GroupNormalization", [((2, 6, 4), F32), ((6,), F32), ((6,), F32)], {"num_groups": 3},
                opset=18, match="scale must have shape \\[3\\]")


def test_group_norm_infer_errors() -> None:
    x, p = ((2, 6, 4), F32), ((6,), F32)
    assert infer("GroupNormalization", [((-1, 6, -1), F32), p, p], {"num_groups": 2})[0].shape == (-1, 6, -1)
    infer_error("GroupNormalization", [x, p, p], {"num_groups": 4}, match="num_groups=4 does not divide")
    infer_error("GroupNormalization", [x, p, p], {}, match="num_groups must be given")
    infer_error("GroupNormalization", [x, ((3,), F32), p], {"num_groups": 3}, match="scale must have shape")


# ---- LRN ---------------------------------------------------------------------------------------------

def _lrn_spec(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """The ONNX formula, one channel at a time."""
    sq = np.zeros_like(x, dtype=np.float64)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - (size - 1) // 2), min(x.shape[1] - 1, c + -(-(size - 1) // 2))
        sq[:, c] = (x[:, lo:hi + 1].astype(np.float64) ** 2).sum(axis=1)
    return x / (bias + alpha / size * sq) ** beta


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
def test_lrn_matches_spec_and_onnxruntime(size: int) -> None:
    x = _rand(2, 7, 3, 4)
    attrs = {"size": size, "alpha": 0.01, "beta": 0.6, "bias": 1.5}
    (got,) = run_ge("LRN", [x], attrs, opset=13)
    np.testing.assert_allclose(got, _lrn_spec(x, size, 0.01, 0.6, 1.5), rtol=1e-5, atol=1e-6)
    # onnx.reference's LRN loops over the batch axis instead of the channels, and ONNX Runtime accepts
    # only odd sizes: it is the oracle for those.
    if size % 2:
        check("LRN", [x], attrs, opset=13, oracle="onnxruntime", rtol=1e-5, atol=1e-6)
        check("LRN", [x], {"size": size}, opset=1, oracle="onnxruntime", rtol=1e-5, atol=1e-6)


def test_lrn_other_ranks_dtypes_and_errors() -> None:
    x = _rand(2, 7, 5)
    (got,) = run_ge("LRN", [x.astype(np.float64)], {"size": 3, "alpha": 0.1})
    sq = np.pad(x.astype(np.float64) ** 2, ((0, 0), (1, 1), (0, 0)))
    want = x / (1.0 + 0.1 / 3 * (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:])) ** 0.75
    np.testing.assert_allclose(got, want, rtol=1e-12)
    (half,) = run_ge("LRN", [x.astype(np.float16)], {"size": 3})
    assert half.dtype == np.float16
    infer_error("LRN", [((2, 7, 5), F32)], {}, match="size must be given")
    infer_error("LRN", [((2, 7), F32)], {"size": 3}, match="rank >= 3")


# ---- registry facts ----------------------------------------------------------------------------------

def test_categories_and_costs() -> None:
    cats = {op.op_type: op.category for op in norm.OPS}
    assert cats == {"BatchNormalization": Category.BROADCAST, "InstanceNormalization": Category.REDUCE,
                    "LayerNormalization": Category.REDUCE, "GroupNormalization": Category.REDUCE,
                    "LRN": Category.OPAQUE}
    op = REGISTRY.get("BatchNormalization")
    assert op is not None
    x = make_desc((2, 3, 4, 5), F32)
    ins: list[TensorDesc | None] = [x, *[make_desc((3,), F32)] * 4]
    cost = op.cost(make_node("BatchNormalization", [True] * 5), ins, [x])
    assert cost.flops == 2 * 120 and cost.bytes_written == 480 and cost.bytes_read == 480 + 4 * 12


# ---- conformance -------------------------------------------------------------------------------------

NORM_OPS = {"BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization", "LRN"}


@pytest.mark.parametrize("case", with_xfails(cases_for(NORM_OPS), XFAIL))
def test_conformance(case: Any) -> None:
    run_case(case)
