"""No-op moves (Identity, Dropout, Cast, neutral arithmetic, full Slice/Pad/Expand/Resize...) and near misses
that look like no-ops but are not (a Pad that pads, a Dropout whose mask is read)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tests.passes.random_graphs.builder import F32, INT64_MAX, Builder
from tests.passes.random_graphs.shapes import broadcast_shape, reshape


def _dropout(b: Builder, x: str) -> str:
    n_out = b.choice((1, 1, 2))  # 2: a mask nobody reads
    if b.opset < 12:  # the ratio was an attribute
        return b.ops("Dropout", [x], {"ratio": 0.3} if b.chance(0.5) else {}, n_out=n_out)[0]
    inputs = b.choice(([x], [x, b.const(b.choice((0.0, 0.3, 0.5)))],
                       [x, b.const(0.5), b.const(False, np.bool_)]))
    return b.ops("Dropout", inputs, n_out=n_out)[0]


def _dropout_mask_read(b: Builder, x: str) -> str:
    """Near miss: the mask is read, so the Dropout node must stay (its data output may still bypass)."""
    out, mask = b.ops("Dropout", [x], n_out=2)
    return b.op("Mul", [out, b.op("Cast", [mask], {"to": 1})])


def _pad(b: Builder, x: str) -> str:
    pads = [0] * (2 * len(b.shape(x)))
    if pads and b.chance(0.25):  # near miss: it does pad
        pads[int(b.rng.integers(len(pads)))] = 1
    mode = {"mode": b.choice(("reflect", "edge"))} if b.chance(0.2) else {}
    return b.op("Pad", [x, b.ints(pads)] + ([b.const(0.0)] if b.chance(0.4) and not mode else []), mode)


def _expand(b: Builder, x: str) -> str:
    """Expand to x's own shape; now and then to a bigger one (no no-op)."""
    shape = list(b.shape(x))
    grow = [i for i, d in enumerate(shape) if d == 1]
    if grow and b.chance(0.3):
        shape[b.choice(grow)] = 2
    return b.op("Expand", [x, b.ints(shape)])


def _single_piece(b: Builder, x: str) -> str:
    """Variadic ops of one input, Split into one piece, CastLike a tensor of the same dtype."""
    kind = b.choice(("Sum", "Max", "Min", "Mean", "Split", "CastLike"))
    if kind == "Split":
        axis = int(b.rng.integers(len(b.shape(x))))
        if b.opset >= 18:
            return b.op("Split", [x], {"axis": axis, "num_outputs": 1})
        return b.op("Split", [x], {"axis": axis})
    return b.op(kind, [x, b.choice(b.pool)] if kind == "CastLike" else [x])


def _resize(b: Builder, x: str) -> str:
    """Resize by scale 1; or by 1.1 on short axes, which keeps the size but moves every sample (near miss)."""
    shape = b.shape(x)
    scales = [1.0] * len(shape)
    if b.chance(0.3):
        scales[-1] = 1.1 if shape[-1] < 10 else 1.0
    attrs = {"mode": b.choice(("nearest", "linear"))}
    return b.op("Resize", [x, b.const(np.zeros(0, F32)), b.const(scales)], attrs)


def _neutral(b: Builder, x: str) -> str:
    """Mul/Div by ones, Add/Sub zeros; now and then broadcasting grows the rank (then it is no no-op)."""
    kind = b.choice(("Mul", "Div", "Add", "Sub"))
    shape = (1, *b.shape(x)) if b.chance(0.15) else broadcast_shape(b, b.shape(x))
    c = b.const(np.ones(shape, F32) if kind in ("Mul", "Div") else np.zeros(shape, F32))
    return b.op(kind, [c, x] if kind in ("Mul", "Add") and b.chance(0.3) else [x, c])


def _full_slice(b: Builder, x: str) -> str:
    shape = b.shape(x)
    axes = [i for i in range(len(shape)) if b.chance(0.6)] or [0]
    starts = [b.choice((0, -shape[a])) for a in axes]
    ends = [b.choice((shape[a], INT64_MAX, 1000)) for a in axes]
    steps = [b.ints([1] * len(axes))] if b.chance(0.3) else []
    return b.op("Slice", [x, b.ints(starts), b.ints(ends), b.ints(axes), *steps])


NOOPS: dict[str, Callable[[Builder, str], str]] = {
    "Identity": lambda b, x: b.op("Identity", [x]),
    "Dropout": _dropout,
    "DropoutMaskRead": _dropout_mask_read,
    "Cast": lambda b, x: b.op("Cast", [x], {"to": 1}),
    "CastRoundTrip": lambda b, x: b.op("Cast", [b.op("Cast", [x], {"to": 11})], {"to": 1}),  # exact via f64
    "Reshape": lambda b, x: reshape(b, x, b.shape(x)),
    "Transpose": lambda b, x: b.op("Transpose", [x], {"perm": list(range(len(b.shape(x))))}),
    "Pad": _pad,
    "Neutral": _neutral,
    "Slice": _full_slice,
    "Concat": lambda b, x: b.op("Concat", [x], {"axis": int(b.rng.integers(-len(b.shape(x)), len(b.shape(x))))}),
    "Expand": _expand,
    "SinglePiece": _single_piece,
    "Resize": _resize,
}
OUTPUT_NOOPS = ("Identity", "Dropout", "Cast", "Reshape", "Transpose", "Slice", "Concat")


def noop(b: Builder, x: str) -> list[str]:
    return [NOOPS[b.choice(tuple(NOOPS))](b, x)]
