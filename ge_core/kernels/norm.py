"""LayerNormalization over contiguous rows as one compiled loop per row (numba).

numpy normalises a row in about seven passes (the mean, x - mean, its square, their mean, the scale by
1/std, then Scale and B), each a fresh array; a transformer's LayerNorms over (128, 256..768) were 35-70 us
each here, more than the GEMMs around them on the small models. One loop per row reads it twice for the
statistics (summed in float64) and once more to write the result. The sums are reassociated so that they
vectorise (the only change fastmath brings here: NaN and inf still propagate), so results differ from
numpy's pairwise float32 sums in the last bits, not beyond the op's tolerance.
"""

from __future__ import annotations

import math

import numpy as np

from ge_core.ir.node import Node
from ge_core.kernels.jit import compiled, frozen
from ge_core.kernels.registry import FastPath
from ge_core.ops.norm import layer_norm_geometry


def _layer_norm_rows(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, epsilon: float, y: np.ndarray,
                     mean: np.ndarray, inv_std: np.ndarray) -> None:
    """x, y (R, L); scale, bias (L,) (bias empty: none); mean and inv_std (R,) per row."""
    rows, length = x.shape
    has_bias = bias.size > 0
    for r in range(rows):  # rows
        row, out = x[r], y[r]
        total = 0.0
        for i in range(length):
            total += row[i]
        m = total / length
        spread = 0.0
        for i in range(length):
            d = row[i] - m
            spread += d * d
        inv = 1.0 / math.sqrt(spread / length + epsilon)
        mean[r], inv_std[r] = m, inv
        m_t, inv_t = mean[r], inv_std[r]  # rounded to y's dtype by the store, as numpy keeps them
        if has_bias:
            for i in range(length):
                out[i] = (row[i] - m_t) * inv_t * scale[i] + bias[i]
        else:
            for i in range(length):
                out[i] = (row[i] - m_t) * inv_t * scale[i]


layer_norm_rows = compiled(_layer_norm_rows, reassociate=True)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def supports(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None, axis: int, dtype: np.dtype) -> bool:
    """Statistics in x's own float32/float64 dtype, Scale (and B) one value per element of a row."""
    length = math.prod(x.shape[axis:])
    return layer_norm_rows is not None and x.dtype in DTYPES and dtype == x.dtype and length > 0 \
        and scale.size == length and scale.dtype == x.dtype \
        and (bias is None or (bias.size == length and bias.dtype == x.dtype))


def layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray | None, axis: int, epsilon: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Y, Mean and InvStdDev (keepdims over the normalised axes) of LayerNormalization at `axis`."""
    assert layer_norm_rows is not None
    length = math.prod(x.shape[axis:])
    rows = x.size // length
    flat = np.ascontiguousarray(x).reshape(rows, length)
    y = np.empty_like(flat)
    mean = np.empty(rows, dtype=x.dtype)
    inv_std = np.empty(rows, dtype=x.dtype)
    b = np.empty(0, dtype=x.dtype) if bias is None else np.ascontiguousarray(bias).reshape(length)
    layer_norm_rows(frozen(flat), frozen(np.ascontiguousarray(scale).reshape(length)), frozen(b), epsilon, y, mean,
                    inv_std)
    stats = (*x.shape[:axis], *(1,) * (x.ndim - axis))
    return y.reshape(x.shape), mean.reshape(stats), inv_std.reshape(stats)


def _layer_norm(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    x, scale = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    assert x is not None and scale is not None
    axis, stash = layer_norm_geometry(node, inputs)
    # Statistics in x's own dtype only: a float32 input with float64 statistics is the reference's.
    if not supports(x, scale, bias, axis, np.dtype(stash)):
        return None
    y, mean, inv_std = layer_norm(x, scale, bias, axis, float(node.attr("epsilon", 1e-5)))
    return [y, mean, inv_std]


PATHS = [FastPath("LayerNormalization.rows", "LayerNormalization", _layer_norm,
                  "each row's mean, variance and affine map in one compiled loop")]
