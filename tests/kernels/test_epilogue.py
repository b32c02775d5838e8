"""The Conv epilogue's compiled pass (kernels/epilogue.py) against the numpy kernels it stands in for: bias,
residual and each activation, bit for bit, NaN and infinities included, float32 and float64; and the
activation ops' epilogue facts."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ge_core.ir.node import Node
from ge_core.kernels import epilogue
from ge_core.ops import REGISTRY
from ge_core.ops.epilogue import Act, Epilogue

pytestmark = pytest.mark.skipif(os.environ.get("GE_NO_JIT") == "1", reason="GE_NO_JIT=1 turns the kernel off")


def _numpy(y: np.ndarray, bias: np.ndarray | None, residual: np.ndarray | None, op: str,
           attrs: dict[str, float], extra: list[np.ndarray]) -> np.ndarray:
    """The body ops one by one through their registered kernels."""
    if bias is not None:
        y = y + bias.reshape(-1, 1, 1)
    if residual is not None:
        y = y + residual
    if not op:
        return y
    node = Node("act", op, ("v", *(f"c{i}" for i in range(len(extra)))), ("out",), attrs=dict(attrs), opset=17)
    return REGISTRY.get(op).kernel(node, [y, *extra])[0]  # type: ignore[union-attr]


CASES = [("", {}, []), ("Relu", {}, []), ("LeakyRelu", {"alpha": 0.07}, []),
         ("HardSigmoid", {"alpha": 0.3, "beta": 0.6}, []), ("HardSwish", {}, []),
         ("Clip", {}, [np.array(-0.3), np.array(0.5)]), ("Clip", {}, [np.array(0.5), np.array(-0.3)])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("op", "attrs", "extra"), CASES)
def test_bit_for_bit_the_numpy_kernels(op: str, attrs: dict[str, float], extra: list[np.ndarray],
                                       dtype: type[np.floating]) -> None:
    rng = np.random.default_rng(len(op))
    y: np.ndarray = rng.standard_normal((2, 5, 7, 3)).astype(dtype)
    y.flat[::11], y.flat[5::13], y.flat[7::17] = np.nan, np.inf, -np.inf
    bias: np.ndarray = rng.standard_normal(5).astype(dtype)
    residual: np.ndarray = rng.standard_normal(y.shape).astype(dtype)
    extra = [e.astype(dtype) for e in extra]
    if op:
        node = Node("act", op, ("v", *(f"c{i}" for i in range(len(extra)))), ("out",), attrs=dict(attrs), opset=17)
        ending = REGISTRY.get(op).epilogue(node, [None, *extra])  # type: ignore[union-attr, misc]
        assert ending is not None
    else:
        ending = Epilogue()
    for b, r in ((bias, None), (None, residual), (bias, residual)):
        got = y.copy()
        epilogue.apply(got, b, r, ending)
        want = _numpy(y, b, r, op, attrs, extra)
        np.testing.assert_array_equal(got, want.astype(dtype))


def test_clip_with_a_bound_that_is_not_known_has_no_epilogue() -> None:
    node = Node("act", "Clip", ("v", "lo"), ("out",), opset=17)
    assert REGISTRY.get("Clip").epilogue(node, [None, None]) is None  # type: ignore[union-attr, misc]
    node = Node("act", "Clip", ("v",), ("out",), attrs={"min": -1.0, "max": 2.0}, opset=6)
    assert REGISTRY.get("Clip").epilogue(node, [None]) == Epilogue(Act.CLIP, -1.0, 2.0)  # type: ignore[union-attr, misc]


def test_only_cheap_activations_have_one() -> None:
    """Transcendental activations stay with numpy's vectorised exp/erf: no epilogue fact. Add and Sum add
    an operand."""
    forms = {op.op_type for op in REGISTRY if op.epilogue is not None}
    assert forms == {"Relu", "LeakyRelu", "HardSigmoid", "HardSwish", "Clip", "Add", "Sum"}
