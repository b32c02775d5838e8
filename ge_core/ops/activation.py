"""Activations: elementwise, one output element from one input element (PRelu broadcasts its slope).

Float activations compute float16/bfloat16 in float32 (`math.float_kernel`), as ONNX Runtime does.
Costs count arithmetic operations per element, a transcendental (exp, tanh, erf) as one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops.common import (
    broadcast,
    elementwise_cost,
    like,
    make_desc,
    operand,
    optional,
    require_inputs,
    same_dtype,
    shape_error,
)
from ge_core.ops.epilogue import Act, Epilogue
from ge_core.ops.erf32 import erfc_float32
from ge_core.ops.math import FLOATS, NUMERIC, SIGNED_NUMERIC, check_dtype, float_kernel, unary_infer
from ge_core.ops.registry import Category, KernelFn, OpDef, Operand, VectorClass

# ---- erf: no scipy, so a vectorised float64 implementation ------------------------------------------
# Maclaurin series erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)); 40 terms reach double
# precision below |x| = 2.5 (the largest term there is ~16, so cancellation costs about one digit).
_SERIES_LIMIT = 2.5
_SERIES = [(-1) ** n * 2.0 / math.sqrt(math.pi) / (math.factorial(n) * (2 * n + 1)) for n in range(40)]
# Above it, Laplace's continued fraction for erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + ...))),
# whose 30 terms converge to double precision for x >= 2.5. erf is 1.0 in double from x ~ 6 on.
_FRACTION_TERMS = 30


def erf(x: np.ndarray) -> np.ndarray:
    """The error function in float64 (relative error ~1e-14); NaN stays NaN, erf(+-inf) = +-1."""
    x64 = np.asarray(x, dtype=np.float64)
    a = np.abs(x64)
    out = np.empty_like(a)
    small = a < _SERIES_LIMIT  # NaN goes to the fraction branch and stays NaN
    s = a[small]
    z2 = s * s
    acc = np.full_like(s, _SERIES[-1])
    for c in reversed(_SERIES[:-1]):  # Horner in x^2, in place (a loop over terms, not elements)
        acc *= z2
        acc += c
    out[small] = s * acc
    big = np.minimum(a[~small], 10.0)  # erfc(10) ~ 2e-45: erf is exactly 1 beyond; avoids inf/inf
    t = big.copy()
    for k in range(_FRACTION_TERMS, 0, -1):
        np.divide(k / 2.0, t, out=t)
        t += big
    out[~small] = 1.0 - np.exp(-big * big) / (math.sqrt(math.pi) * t)
    return np.copysign(out, x64)


# ---- kernels --------------------------------------------------------------------------------------
def _relu(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    (x,) = inputs
    assert x is not None
    return [np.maximum(x, x.dtype.type(0))]


def _attr(node: Node, name: str, default: float) -> float:
    """A float attribute; ONNX stores them as float32, so defaults are rounded the same way (as ORT)."""
    return float(np.float32(node.attr(name, default)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)). float32/float64: four in-place passes (np.where's select in the form below cost 4x
    the rest: 1.3 ms on a 320x320 map), and where exp(-x) would overflow (x below -80, or -700 in float64)
    sigmoid(x) is exp(x) to the last bit, so those few elements take that. Narrower floats keep the form in
    which exp only ever sees -|x|."""
    if x.dtype in (np.float32, np.float64):
        y = np.negative(x)
        low = -80.0 if x.dtype == np.float32 else -700.0
        overflows = x.size > 0 and not np.min(x) >= low  # NaN compares False: checked below, element-wise
        with np.errstate(over="ignore"):  # inf where x < low: replaced below
            np.exp(y, out=y)
        y += 1
        np.reciprocal(y, out=y)
        if overflows:
            far = x < low
            y[far] = np.exp(x[far])
        return y
    e = np.exp(-np.abs(x))
    r = 1.0 / (1.0 + e)
    return np.where(x >= 0, r, e * r)


def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(x.dtype.type(0), x)  # log(1 + exp(x)) without overflow


def _gelu(node: Node, x: np.ndarray) -> np.ndarray:
    if node.attr("approximate", "none") == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + np.tanh(inner))
    if x.dtype == np.float32:  # 1 + erf(u) = erfc(-u) in float32 (erf32.py): 20x faster, no cancellation
        return np.float32(0.5) * x * erfc_float32(x * np.float32(-1.0 / math.sqrt(2.0)))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _leaky_relu(x: np.ndarray, alpha: float) -> np.ndarray:
    """x if x >= 0 else alpha * x, as max(x, 0) + alpha * min(x, 0): the same values (adding a zero is
    exact) without np.where's select, which mispredicts on mixed signs (4x slower, measured)."""
    y = np.minimum(x, 0)
    y *= alpha
    y += np.maximum(x, 0)
    return y


def _elu(node: Node, x: np.ndarray) -> np.ndarray:
    alpha = _attr(node, "alpha", 1.0)
    return np.where(x < 0, alpha * np.expm1(np.minimum(x, 0)), x)


def _selu(node: Node, x: np.ndarray) -> np.ndarray:
    alpha = _attr(node, "alpha", 1.67326319217681884765625)
    gamma = _attr(node, "gamma", 1.05070102214813232421875)
    return gamma * np.where(x <= 0, alpha * np.expm1(np.minimum(x, 0)), x)


def _celu(node: Node, x: np.ndarray) -> np.ndarray:
    alpha = _attr(node, "alpha", 1.0)
    return np.maximum(x, 0) + np.minimum(0, alpha * np.expm1(np.minimum(x, 0) / alpha))


def _hard_sigmoid(node: Node, x: np.ndarray) -> np.ndarray:
    y = _attr(node, "alpha", 0.2) * x  # then in place: one allocation instead of three
    y += _attr(node, "beta", 0.5)
    return np.clip(y, 0, 1, out=y)


def _hard_swish(x: np.ndarray) -> np.ndarray:
    y = x / 6  # then in place: one allocation instead of four
    y += 0.5
    np.clip(y, 0, 1, out=y)
    y *= x
    return y


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> KernelFn:
    return float_kernel(lambda node, x: fn(x))


# ---- Clip -----------------------------------------------------------------------------------------
def _clip_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    """Bounds are attributes before opset 11, optional scalar inputs of the input's dtype since."""
    require_inputs(node, operands, 1, 3 if node.opset >= 11 else 1)
    desc = operand(node, operands, 0).desc
    check_dtype(node, operands, desc.dtype, NUMERIC)
    for index, name in ((1, "min"), (2, "max")):
        bound = optional(operands, index)
        if bound is None:
            continue
        if bound.desc.dtype != desc.dtype:
            raise shape_error(node, operands, f"{name} must have the input's dtype {desc.dtype}, "
                                              f"got {bound.desc.dtype}")
        shape = bound.desc.shape
        if len(shape) > 1 or (len(shape) == 1 and shape[0] not in (1, -1)):
            raise shape_error(node, operands, f"{name} must be a scalar, got shape {list(shape)}")
    return [like(desc)]


def _clip(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """max(x, min) then min(., max): when min > max every element becomes max, as ONNX specifies."""
    x = inputs[0]
    assert x is not None
    if node.opset < 11:
        lo, hi = node.attr("min"), node.attr("max")
    else:
        lo = inputs[1] if len(inputs) > 1 else None
        hi = inputs[2] if len(inputs) > 2 else None
    out = x
    if lo is not None:
        out = np.maximum(out, np.asarray(lo).reshape(()).astype(x.dtype))
    if hi is not None:
        out = np.minimum(out, np.asarray(hi).reshape(()).astype(x.dtype))
    return [np.array(out, dtype=x.dtype)]


def _clip_epilogue(node: Node, values: list[np.ndarray | None]) -> Epilogue | None:
    """Clip's bounds as an epilogue's (attributes before opset 11, else constant inputs); None when a bound
    input is there but not a known value."""
    if node.opset < 11:
        lo, hi = node.attr("min"), node.attr("max")
    else:
        if any(t and (i >= len(values) or values[i] is None) for i, t in enumerate(node.inputs[1:3], start=1)):
            return None
        lo = values[1] if len(values) > 1 and node.input(1) else None
        hi = values[2] if len(values) > 2 and node.input(2) else None
    bound = [-np.inf if lo is None else float(np.asarray(lo).reshape(())),
             np.inf if hi is None else float(np.asarray(hi).reshape(()))]
    return Epilogue(Act.CLIP, bound[0], bound[1])


# ---- PRelu ----------------------------------------------------------------------------------------
def _prelu_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    """The slope broadcasts unidirectionally to x: the output keeps x's shape."""
    require_inputs(node, operands, 2, 2)
    dtype = same_dtype(node, operands, [0, 1])
    check_dtype(node, operands, dtype, NUMERIC)
    x, slope = operand(node, operands, 0).desc.shape, operand(node, operands, 1).desc.shape
    out = broadcast(node, operands, [x, slope])
    grows_x = any(xd >= 0 and od >= 0 and xd != od for xd, od in zip(x, out, strict=False))
    if len(slope) > len(x) or grows_x:
        raise shape_error(node, operands, f"slope {list(slope)} must broadcast to the input's shape "
                                          f"{list(x)} without changing it")
    return [make_desc(out, dtype)]


def _prelu(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x, slope = inputs
    assert x is not None and slope is not None
    slope = np.broadcast_to(slope, x.shape)  # refuses a slope that would grow x
    return [np.where(x < 0, x * slope, x).astype(x.dtype)]


def _gelu_infer(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    approximate = node.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise shape_error(node, operands, f"approximate must be 'none' or 'tanh', got {approximate!r}")
    return unary_infer(FLOATS)(node, operands)


_FLOAT = unary_infer(FLOATS)

OPS: list[OpDef] = [
    # max(x, 0)
    OpDef("Relu", Category.ELEMENTWISE, unary_infer(SIGNED_NUMERIC), _relu, elementwise_cost(1), activation=True,
          epilogue=lambda node, values: Epilogue(Act.RELU)),
    # 1 / (1 + exp(-x))
    OpDef("Sigmoid", Category.ELEMENTWISE, _FLOAT, _unary(_sigmoid), elementwise_cost(3),
          activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # tanh(x)
    OpDef("Tanh", Category.ELEMENTWISE, _FLOAT, _unary(np.tanh), elementwise_cost(1),
          activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # clamp(alpha * x + beta, 0, 1)
    OpDef("HardSigmoid", Category.ELEMENTWISE, _FLOAT, float_kernel(_hard_sigmoid), elementwise_cost(4),
          activation=True, epilogue=lambda node, values: Epilogue(Act.HARD_SIGMOID, _attr(node, "alpha", 0.2),
                                                                   _attr(node, "beta", 0.5))),
    # x * clamp(x / 6 + 1/2, 0, 1)
    OpDef("HardSwish", Category.ELEMENTWISE, _FLOAT, _unary(_hard_swish),
          elementwise_cost(5), activation=True, vector_class=VectorClass.TRANSCENDENTAL,
          epilogue=lambda node, values: Epilogue(Act.HARD_SWISH)),
    # clamp(x, min, max); bounds are attributes before opset 11, optional inputs since
    OpDef("Clip", Category.ELEMENTWISE, _clip_infer, _clip, elementwise_cost(2), activation=True,
          epilogue=_clip_epilogue),
    # x if x >= 0 else alpha * x
    OpDef("LeakyRelu", Category.ELEMENTWISE, _FLOAT,
          float_kernel(lambda node, x: _leaky_relu(x, _attr(node, "alpha", 0.01))),
          elementwise_cost(2), activation=True,
          epilogue=lambda node, values: Epilogue(Act.LEAKY_RELU, _attr(node, "alpha", 0.01))),
    # x if x >= 0 else alpha * (exp(x) - 1)
    OpDef("Elu", Category.ELEMENTWISE, _FLOAT, float_kernel(_elu), elementwise_cost(3),
          activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # gamma * (x if x > 0 else alpha * (exp(x) - 1))
    OpDef("Selu", Category.ELEMENTWISE, _FLOAT, float_kernel(_selu), elementwise_cost(4),
          activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    OpDef("Celu", Category.ELEMENTWISE, _FLOAT, float_kernel(_celu), elementwise_cost(6),
          activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # log(1 + exp(x))
    OpDef("Softplus", Category.ELEMENTWISE, _FLOAT, _unary(_softplus), elementwise_cost(3),
          activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # x / (1 + |x|)
    OpDef("Softsign", Category.ELEMENTWISE, _FLOAT, _unary(lambda x: x / (1 + np.abs(x))),
          elementwise_cost(3), activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # 0.5 * x * (1 + erf(x / sqrt(2))), or the tanh approximation
    OpDef("Gelu", Category.ELEMENTWISE, _gelu_infer, float_kernel(_gelu), elementwise_cost(8),
          activation=True, vector_class=VectorClass.TRANSCENDENTAL, ge_types=("FastGelu",)),
    # x * tanh(softplus(x))
    OpDef("Mish", Category.ELEMENTWISE, _FLOAT, _unary(lambda x: x * np.tanh(_softplus(x))),
          elementwise_cost(5), activation=True, vector_class=VectorClass.TRANSCENDENTAL),
    # x if x > alpha else 0
    OpDef("ThresholdedRelu", Category.ELEMENTWISE, _FLOAT,
          float_kernel(lambda node, x: np.where(x > _attr(node, "alpha", 1.0), x, 0)), elementwise_cost(1),
          activation=True),
    # x if x >= 0 else slope * x, slope broadcast to x
    OpDef("PRelu", Category.BROADCAST, _prelu_infer, _prelu, elementwise_cost(2), activation=True),
    # the Gauss error function
    OpDef("Erf", Category.ELEMENTWISE, unary_infer(NUMERIC), _unary(erf), elementwise_cost(1),
          vector_class=VectorClass.TRANSCENDENTAL),
]
