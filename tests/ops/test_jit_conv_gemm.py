"""The slab conv (ops/conv_gemm_jit.py) against conv.py's im2col path, on seeded random shapes, strides,
dilations, asymmetric pads, batch sizes and both float widths, with slabs of one row to the whole map; and
a model's Conv taking it through the Executor."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ge_core
from ge_core.ops import conv, conv_gemm_jit, conv_im2col_jit, jit
from ge_core.ops.spatial import Window
from tests.ops.test_fast_depthwise import _window

pytestmark = pytest.mark.skipif(
    os.environ.get("GE_NO_JIT") == "1" or jit.thread_count() < 2,
    reason="the slab conv runs only on numba's threads (GE_NO_JIT=1 or one thread: the im2col path, tested there)")


def _im2col_conv(x: np.ndarray, w: np.ndarray, win: Window) -> np.ndarray:
    cols = conv_im2col_jit.im2col(x, win)
    return np.matmul(w.reshape(w.shape[0], -1), cols.reshape(x.shape[0], -1, int(np.prod(win.out)))).reshape(
        x.shape[0], w.shape[0], *win.out)


@pytest.fixture
def slab_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The input shapes of every slab conv."""
    calls: list[tuple[int, ...]] = []
    real = conv_gemm_jit.conv

    def spy(x: np.ndarray, w: np.ndarray, win: Window) -> np.ndarray:
        calls.append(x.shape)
        return real(x, w, win)

    monkeypatch.setattr(conv_gemm_jit, "conv", spy)
    return calls


@pytest.mark.parametrize("slab_bytes", [1, 4096, conv_gemm_jit.SLAB_BYTES])  # one row a slab .. the default
@pytest.mark.parametrize("seed", range(16))
def test_matches_the_im2col_conv(seed: int, slab_bytes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conv_gemm_jit, "SLAB_BYTES", slab_bytes)
    rng = np.random.default_rng(seed)
    dtype = np.float64 if seed % 4 == 0 else np.float32
    spatial = (int(rng.integers(9, 24)), int(rng.integers(9, 24)))  # >= the widest dilated kernel drawn (9)
    win = _window(rng, spatial)
    x = rng.standard_normal((int(rng.integers(1, 3)), int(rng.integers(1, 12)), *spatial)).astype(dtype)
    w = rng.standard_normal((int(rng.integers(1, 40)), x.shape[1], *win.kernel)).astype(dtype)
    assert conv_gemm_jit.supports(x, w, 1)
    got = conv_gemm_jit.conv(x, w, win)
    assert got.dtype == x.dtype and got.shape == (x.shape[0], w.shape[0], *win.out)
    # whole rows of the same products per GEMM call: equal up to how OpenBLAS blocks one large call
    np.testing.assert_allclose(got, _im2col_conv(x, w, win), rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("case", ["grouped", "3-D input", "mixed dtypes"])
def test_what_it_does_not_take(case: str) -> None:
    x, w, group = np.ones((1, 4, 8, 8), np.float32), np.ones((4, 4, 3, 3), np.float32), 1
    if case == "grouped":
        w, group = np.ones((4, 2, 3, 3), np.float32), 2
    elif case == "3-D input":
        x, w = np.ones((1, 4, 8), np.float32), np.ones((4, 4, 3), np.float32)
    else:
        w = w.astype(np.float64)
    assert not conv_gemm_jit.supports(x, w, group)


def test_a_models_3x3_conv_runs_as_slabs_and_matches_onnx_runtime(slab_calls: list[tuple[int, ...]]) -> None:
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], strides=[2, 1], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 30, 40])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32, 15, 40])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    x = rng.standard_normal((2, 16, 30, 40)).astype(np.float32)
    want = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for level in ("O0", "O3"):  # the Conv alone, and fused with its bias and Relu (conv_with_epilogue)
        compiled = ge_core.compile(ge_core.load_onnx(data), opt_level=level).graph
        got = ge_core.Executor(compiled).run({"x": x}).outputs["y"]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert slab_calls == [(2, 16, 30, 40)] * 2


def test_conv_forward_takes_it_only_where_no_cheaper_path_applies(slab_calls: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 8, 12, 12)).astype(np.float32)
    pointwise = Window((1, 1), (1, 1), (1, 1), (0, 0), (0, 0), (12, 12))  # a plain GEMM, no columns
    conv.conv_forward(x, rng.standard_normal((16, 8, 1, 1)).astype(np.float32), 1, pointwise)
    assert slab_calls == []
    win = Window((3, 3), (1, 1), (1, 1), (1, 1), (1, 1), (12, 12))
    conv.conv_forward(x, rng.standard_normal((16, 8, 3, 3)).astype(np.float32), 1, win)
    assert slab_calls == [(1, 8, 12, 12)]
