"""Signal processing: DFT and STFT over real or complex signals, the window generators (Blackman, Hamming,
Hann) and MelWeightMatrix.

ONNX holds a complex tensor as a real one with a last dim of 2 (real, imaginary); a real signal has a last
dim of 1. DFT's axis is an attribute (default 1) before opset 20 and an input (default -2) from it on;
`onesided` gives the non-redundant half of a real signal's spectrum (RFFT), or with `inverse` rebuilds a
real signal from such a half (IRFFT). numpy's pocketfft computes each transform.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc, desc_of
from ge_core.ops.common import (
    UNK,
    dtype_from_onnx,
    elementwise_cost,
    io_bytes,
    known_ints,
    make_desc,
    normalize_axis,
    operand,
    optional,
    require_inputs,
    shape_error,
    widened,
)
from ge_core.ops.math import FLOATS, NUMERIC, check_dtype
from ge_core.ops.registry import Category, Cost, CostFn, KernelFn, OpDef, Operand, VectorClass

INDEX_TYPES = frozenset({"int32", "int64"})


def _scalar_int(node: Node, operands: Sequence[Operand | None], index: int, what: str) -> int | None:
    """A scalar int input's value when known before running; None when absent or not known yet."""
    op = optional(operands, index)
    if op is None:
        return None
    check_dtype(node, operands, op.desc.dtype, INDEX_TYPES, what)
    if op.desc.rank > 1 or (op.desc.rank == 1 and op.desc.shape[0] not in (1, UNK)):
        raise shape_error(node, operands, f"{what} must be a scalar, got shape {list(op.desc.shape)}")
    values = known_ints(op)
    return None if values is None else values[0]


def _known(inputs: Sequence[np.ndarray | None]) -> list[Operand | None]:
    """Operands with their values, so that a kernel reuses inference's checks (dft_length, axis, sizes)."""
    return [None if a is None else Operand(desc_of(a), a) for a in inputs]


def _complex(x: np.ndarray) -> np.ndarray:
    """The signal as numpy values: real (last dim 1) or complex (last dim 2); bfloat16 widened to float32."""
    x = widened(x) if x.dtype.kind == "V" else x
    return x[..., 0] if x.shape[-1] == 1 else x[..., 0] + 1j * x[..., 1]


def _interleaved(y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Complex values back as [..., 2] (real, imaginary) in the input's dtype."""
    return np.stack([y.real, y.imag], axis=-1).astype(dtype, copy=False)


def _transform_cost(axis_of: Callable[[Node], int]) -> CostFn:
    """~5 n log2 n FLOPs per complex transform of length n (the radix-2 count), for every transform."""
    def cost(node: Node, inputs: list[TensorDesc | None], outputs: list[TensorDesc]) -> Cost:
        y = outputs[0]
        n = max(y.shape[axis_of(node)], 1) if y.rank > 1 else 1
        values = math.prod(max(d, 1) for d in y.shape[:-1])  # complex values out = transforms * n
        read, written = io_bytes(inputs, outputs)
        return Cost(int(5 * values * max(math.log2(n), 1)), read, written)

    return cost


def _dft_axis_attr(node: Node) -> int:
    """The axis for pricing: the attribute, or the axis input's default (its value is not known here)."""
    return int(node.attr("axis", 1)) if node.opset < 20 else -2


# ---- DFT ------------------------------------------------------------------------------------------
def _dft_axis(node: Node, operands: Sequence[Operand | None], rank: int) -> int | None:
    """The transformed axis (never the last, complex one); None while an axis input is not known."""
    if node.opset >= 20:
        given = optional(operands, 2)
        axis = -2 if given is None else _scalar_int(node, operands, 2, "the axis")
        if axis is None:
            return None
    else:
        axis = int(node.attr("axis", 1))
    normalized = normalize_axis(node, operands, axis, rank)
    if normalized == rank - 1:
        raise shape_error(node, operands, f"axis={axis} is the last (real/imaginary) dim, which is not a "
                                          "signal axis")
    return normalized


def _dft_plan(node: Node, operands: Sequence[Operand | None]) -> tuple[int | None, int, int]:
    """(axis, dft_length, output length on the axis); lengths -1 while unknown."""
    x = operand(node, operands, 0).desc
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    if x.rank < 2 or x.shape[-1] not in (1, 2, UNK):
        raise shape_error(node, operands, "the input must be [..., 1] (real) or [..., 2] (complex), got "
                                          f"{list(x.shape)}")
    if inverse and onesided and x.shape[-1] == 1:
        raise shape_error(node, operands, "an inverse onesided DFT (IRFFT) needs a complex input [..., 2]")
    axis = _dft_axis(node, operands, x.rank)
    length = _scalar_int(node, operands, 1, "dft_length")
    size = x.shape[axis] if axis is not None else UNK
    if length is None and optional(operands, 1) is None and size >= 0:
        length = 2 * (size - 1) if inverse and onesided else size  # IRFFT: the even length of its half
    if length is not None and length < 1:
        raise shape_error(node, operands, f"dft_length={length} must be >= 1 (the axis has {size} values)")
    n = UNK if length is None else length
    out = n // 2 + 1 if onesided and not inverse and n >= 0 else n
    return axis, n, out


def _infer_dft(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 3 if node.opset >= 20 else 2)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, FLOATS, "the input")
    axis, _, out = _dft_plan(node, operands)
    last = 1 if node.attr("inverse", 0) and node.attr("onesided", 0) else 2
    if axis is None:  # the axis input is not known: every signal dim may change
        return [make_desc((*(UNK,) * (x.rank - 1), last), x.dtype)]
    shape = list(x.shape)
    shape[axis], shape[-1] = out, last
    return [make_desc(shape, x.dtype)]


def _dft(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    x = inputs[0]
    assert x is not None
    axis, n, _ = _dft_plan(node, _known(inputs))
    assert axis is not None and n >= 1
    signal = _complex(x)
    if node.attr("inverse", 0):
        if node.attr("onesided", 0):
            return [np.fft.irfft(signal, n=n, axis=axis)[..., None].astype(x.dtype, copy=False)]
        return [_interleaved(np.fft.ifft(signal, n=n, axis=axis), x.dtype)]
    if node.attr("onesided", 0):
        half = np.fft.rfft(signal, n=n, axis=axis) if signal.dtype.kind == "f" else \
            np.fft.fft(signal, n=n, axis=axis)[(slice(None),) * axis + (slice(0, n // 2 + 1),)]
        return [_interleaved(half, x.dtype)]
    return [_interleaved(np.fft.fft(signal, n=n, axis=axis), x.dtype)]


# ---- STFT -----------------------------------------------------------------------------------------
def _stft_plan(node: Node, operands: Sequence[Operand | None]) -> tuple[int, int, int]:
    """(frames, frame_length, step); -1 while unknown."""
    x = operand(node, operands, 0).desc
    if x.rank != 3 or x.shape[-1] not in (1, 2, UNK):
        raise shape_error(node, operands, "the signal must be [batch, length, 1] (real) or [batch, length, 2] "
                                          f"(complex), got {list(x.shape)}")
    step = _scalar_int(node, operands, 1, "frame_step")
    window = optional(operands, 2)
    if window is not None and (window.desc.rank != 1 or window.desc.dtype != x.dtype):
        raise shape_error(node, operands, f"the window must be 1-D {x.dtype}, got {window.desc.text()}")
    length = _scalar_int(node, operands, 3, "frame_length")
    from_window = window.desc.shape[0] if window is not None else x.shape[1]
    if length is None and optional(operands, 3) is None:
        length = from_window
    elif length is not None and window is not None and from_window >= 0 and from_window != length:
        raise shape_error(node, operands, f"the window has {from_window} values but frame_length is {length}")
    if (step is not None and step < 1) or (length is not None and length < 1):
        raise shape_error(node, operands, f"frame_step ({step}) and frame_length ({length}) must be >= 1")
    if step is None or length is None or length < 0 or x.shape[1] < 0:
        return UNK, UNK if length is None else length, UNK if step is None else step
    frames = (x.shape[1] - length) // step + 1
    if frames < 1:
        raise shape_error(node, operands, f"frame_length {length} is longer than the signal ({x.shape[1]})")
    return frames, length, step


def _infer_stft(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 2, 4)
    x = operand(node, operands, 0).desc
    check_dtype(node, operands, x.dtype, FLOATS, "the signal")
    frames, length, _ = _stft_plan(node, operands)
    bins = length // 2 + 1 if node.attr("onesided", 1) and length >= 0 else length
    return [make_desc((x.shape[0], frames, bins, 2), x.dtype)]


def _stft(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Frames are strided views of the signal (no copy) until the window multiplies them."""
    x = inputs[0]
    assert x is not None
    frames, length, step = _stft_plan(node, _known(inputs))
    window = inputs[2] if len(inputs) > 2 else None
    signal = _complex(x)
    framed = np.lib.stride_tricks.sliding_window_view(signal, length, axis=1)[:, ::step][:, :frames]
    if window is not None:
        framed = framed * window
    if not node.attr("onesided", 1):
        return [_interleaved(np.fft.fft(framed, n=length, axis=-1), x.dtype)]
    if framed.dtype.kind == "f":
        return [_interleaved(np.fft.rfft(framed, n=length, axis=-1), x.dtype)]
    return [_interleaved(np.fft.fft(framed, n=length, axis=-1)[..., : length // 2 + 1], x.dtype)]


# ---- windows and MelWeightMatrix ------------------------------------------------------------------
def _output_dtype(node: Node, operands: Sequence[Operand | None]) -> str:
    dtype = dtype_from_onnx(node, int(node.attr("output_datatype", 1)))
    check_dtype(node, operands, dtype, NUMERIC, "output_datatype")
    return dtype


def _cast(y: np.ndarray, dtype: str) -> np.ndarray:
    """float64 values in the output type (float to int truncates, as the reference's astype)."""
    return y.astype(dtype)


def _infer_window(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 1, 1)
    size = _scalar_int(node, operands, 0, "size")
    if size is not None and size < 0:
        raise shape_error(node, operands, f"size={size} must be >= 0")
    return [make_desc((UNK if size is None else size,), _output_dtype(node, operands))]


def _window(formula: Callable[[np.ndarray, int], np.ndarray]) -> KernelFn:
    """formula(n, N) over n = 0..size-1, N = size (periodic, the default) or size - 1 (symmetric), computed in
    float64 and rounded once to the output type (onnx.reference computes a float16 window in float16)."""
    def kernel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        (size,) = _infer_window(node, _known(inputs))[0].shape
        period = size if node.attr("periodic", 1) else size - 1
        with np.errstate(all="ignore"):  # a symmetric window of size 1 divides by 0 (NaN, as the reference)
            return [_cast(formula(np.arange(size, dtype=np.float64), period), _output_dtype(node, []))]

    return kernel


# The formulas keep onnx.reference's order of operations: an integer output type truncates, so a peak of
# 0.9999999999999999 instead of 1.0 would show.
def _blackman(n: np.ndarray, period: int) -> np.ndarray:
    return np.cos(n * (np.pi * 2) / period) * -0.5 + np.cos(n * (np.pi * 4) / period) * 0.08 + 0.42


def _hamming(n: np.ndarray, period: int) -> np.ndarray:
    alpha = 25.0 / 46.0
    return alpha - np.cos(n * np.pi * 2 / period) * (1 - alpha)


def _hann(n: np.ndarray, period: int) -> np.ndarray:
    return np.sin(np.pi * n / period) ** 2


_MEL_INTS = ((0, "num_mel_bins"), (1, "dft_length"), (2, "sample_rate"))


def _infer_mel(node: Node, operands: list[Operand | None]) -> list[TensorDesc]:
    require_inputs(node, operands, 5, 5)
    mel, dft_length, rate = (_scalar_int(node, operands, i, what) for i, what in _MEL_INTS)
    for i in (3, 4):
        check_dtype(node, operands, operand(node, operands, i).desc.dtype, FLOATS, f"input {i}")
    if any(v is not None and v < 1 for v in (mel, dft_length, rate)):
        raise shape_error(node, operands, "num_mel_bins, dft_length and sample_rate must be >= 1")
    bins = UNK if dft_length is None else dft_length // 2 + 1
    return [make_desc((bins, UNK if mel is None else mel), _output_dtype(node, operands))]


def _mel_edges(mel: int, dft_length: int, rate: int, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """The num_mel_bins + 2 triangle edges as spectrogram bins, with onnx.reference's arithmetic."""
    low_mel = 2595 * np.log1p(low / 700) / np.log(10)
    high_mel = 2595 * np.log1p(high / 700) / np.log(10)
    step = (high_mel - low_mel) / (mel + 2)  # ONNX divides by the number of edges, not of gaps
    hz = 700 * np.expm1((np.arange(mel + 2) * step + low_mel) / 2595 * np.log(10))
    return (((dft_length + 1) * hz) // rate).astype(np.int64)


def _mel(node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
    """Triangle i rises from edge i to edge i+1 (value 1) and falls to 0 at edge i+2."""
    mel, dft_length, rate = (int(np.asarray(inputs[i]).reshape(-1)[0]) for i, _ in _MEL_INTS)
    low, high = (np.asarray(inputs[i]).reshape(()) for i in (3, 4))
    edges = _mel_edges(mel, dft_length, rate, low, high)
    left, center, right = edges[:-2], edges[1:-1], edges[2:]
    j = np.arange(dft_length // 2 + 1)[:, None]
    rise = np.where(center > left, (j - left) / np.maximum(center - left, 1), 1.0)
    out = np.where((j >= left) & (j <= center), rise, 0.0)
    fall = (right - j) / np.maximum(right - center, 1)
    out = np.where((j >= center) & (j < right), fall, out)
    return [_cast(out, _output_dtype(node, []))]


OPS: list[OpDef] = [
    # discrete Fourier transform along one axis (forward/inverse, onesided RFFT/IRFFT, dft_length)
    OpDef("DFT", Category.OPAQUE, _infer_dft, _dft, _transform_cost(_dft_axis_attr)),
    # short-time Fourier transform: a (windowed) DFT of every frame of the signal
    OpDef("STFT", Category.OPAQUE, _infer_stft, _stft, _transform_cost(lambda node: -2)),
    # 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
    OpDef("BlackmanWindow", Category.OPAQUE, _infer_window, _window(_blackman), elementwise_cost(6),
          vector_class=VectorClass.TRANSCENDENTAL),
    # 25/46 - 21/46 cos(2 pi n / N)
    OpDef("HammingWindow", Category.OPAQUE, _infer_window, _window(_hamming), elementwise_cost(4),
          vector_class=VectorClass.TRANSCENDENTAL),
    # sin^2(pi n / N)
    OpDef("HannWindow", Category.OPAQUE, _infer_window, _window(_hann), elementwise_cost(4),
          vector_class=VectorClass.TRANSCENDENTAL),
    # triangular mel filterbank [dft_length // 2 + 1, num_mel_bins] between the two edge frequencies
    OpDef("MelWeightMatrix", Category.OPAQUE, _infer_mel, _mel, elementwise_cost(4)),
]
