"""Sliding-window arithmetic shared by Conv, ConvTranspose and the pools: attributes, pads, output sizes.

ONNX spells pads as [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; here a Window keeps begin and end
apart. Unknown input dims (-1) give unknown output dims; the kernel always sees concrete shapes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ge_core.ir.node import Node
from ge_core.ir.tensor import desc_of
from ge_core.ops.common import UNK, choice_attr, shape_error
from ge_core.ops.registry import Operand

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


@dataclass(frozen=True, slots=True)
class Window:
    """A resolved sliding window over the spatial axes of an N-C-spatial tensor."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    pads_end: tuple[int, ...]
    out: tuple[int, ...]  # output spatial dims; -1 when unknown

    @property
    def spans(self) -> tuple[int, ...]:
        """Extent of the dilated kernel along each axis."""
        return tuple(dilated_span(k, d) for k, d in zip(self.kernel, self.dilations, strict=True))

    def positions(self) -> Iterator[tuple[int, ...]]:
        """Every kernel offset, row-major (the scan order ties are broken in)."""
        return itertools.product(*(range(k) for k in self.kernel))

    def taps(self, offset: Sequence[int], start: Sequence[int] = ()) -> tuple[slice, ...]:
        """Slices of a padded input that kernel `offset` reads for every output position."""
        start = tuple(start) or (0,) * len(offset)
        taps = (slice(s + i * d, s + i * d + (o - 1) * st + 1, st)
                for s, i, d, o, st in zip(start, offset, self.dilations, self.out, self.strides, strict=True))
        return (slice(None), slice(None), *taps)


def dilated_span(kernel: int, dilation: int) -> int:
    return (kernel - 1) * dilation + 1


def operands_of(inputs: Sequence[np.ndarray | None]) -> list[Operand | None]:
    """Operands for concrete arrays, so that kernels can reuse inference's checks and messages."""
    return [None if a is None else Operand(desc_of(a)) for a in inputs]


def auto_pad_of(node: Node, operands: Sequence[Operand | None]) -> str:
    return choice_attr(node, operands, "auto_pad", AUTO_PADS, "NOTSET")


def int_list(node: Node, operands: Sequence[Operand | None], name: str, length: int,
             default: int | None, *, minimum: int = 1) -> tuple[int, ...]:
    """An int-list attribute of exactly `length` values, each >= minimum (strides, dilations...)."""
    raw = node.attr(name)
    if raw is None:
        if default is None:
            raise shape_error(node, operands, f"attribute '{name}' is required")
        return (default,) * length
    values = tuple(int(v) for v in (raw if isinstance(raw, list | tuple | np.ndarray) else [raw]))
    if len(values) != length:
        raise shape_error(node, operands, f"'{name}' has {len(values)} values {list(values)}, expected "
                                          f"{length} (one per spatial axis)")
    bad = [v for v in values if v < minimum]
    if bad:
        raise shape_error(node, operands, f"'{name}' values {list(values)} must all be >= {minimum}")
    return values


def explicit_pads(node: Node, operands: Sequence[Operand | None], rank: int) -> tuple[tuple[int, ...], ...]:
    """The `pads` attribute split into (begin, end); zeros when absent."""
    raw = node.attr("pads")
    if raw is None:
        return (0,) * rank, (0,) * rank
    pads = [int(p) for p in raw]
    if len(pads) != 2 * rank:
        raise shape_error(node, operands, f"pads has {len(pads)} values {pads}, expected {2 * rank} "
                                          f"(begin and end for each of {rank} spatial axes)")
    if any(p < 0 for p in pads):
        raise shape_error(node, operands, f"pads {pads} must be non-negative")
    return tuple(pads[:rank]), tuple(pads[rank:])


def same_pads(total: int, auto_pad: str) -> tuple[int, int]:
    """Split SAME padding: SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the beginning."""
    small, large = total // 2, total - total // 2
    return (small, large) if auto_pad == "SAME_UPPER" else (large, small)


def sliding_window(node: Node, operands: Sequence[Operand | None], spatial: Sequence[int],
                   kernel: Sequence[int], *, ceil_mode: bool = False,
                   dilations: bool = True) -> Window:
    """Resolve strides, dilations, pads and auto_pad into a Window (Conv and the pools).

    Output size per ONNX: floor((in + pads - span) / stride) + 1, or ceil with ceil_mode (dropping a last
    window that would start in the end padding); SAME_* gives ceil(in / stride); VALID uses no pads.
    """
    rank = len(spatial)
    strides = int_list(node, operands, "strides", rank, 1)
    dils = int_list(node, operands, "dilations", rank, 1) if dilations else (1,) * rank
    auto_pad = auto_pad_of(node, operands)
    begin, end = explicit_pads(node, operands, rank)
    if auto_pad != "NOTSET":
        begin, end = (0,) * rank, (0,) * rank
    out: list[int] = []
    pb: list[int] = list(begin)
    pe: list[int] = list(end)
    for axis, (size, k, s, d) in enumerate(zip(spatial, kernel, strides, dils, strict=True)):
        span = dilated_span(k, d)
        if size < 0:
            out.append(UNK)
            continue
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-size // s)
            pb[axis], pe[axis] = same_pads(max(0, (o - 1) * s + span - size), auto_pad)
            out.append(o)
            continue
        padded = size + pb[axis] + pe[axis]
        if padded < span:
            raise shape_error(node, operands, f"kernel extent {span} (kernel {k}, dilation {d}) is larger "
                                              f"than the padded input {padded} on spatial axis {axis}")
        o = (padded - span) // s + 1
        if ceil_mode and (padded - span) % s:
            o += 1
            if (o - 1) * s >= size + pb[axis]:  # the last window would start in the end padding
                o -= 1
        out.append(o)
    return Window(tuple(kernel), strides, dils, tuple(pb), tuple(pe), tuple(out))


def pad_input(x: np.ndarray, win: Window, value: float | int) -> np.ndarray:
    """x padded so that every tap of `win` is in range (a ceil_mode window may need more than pads_end)."""
    widths = [(0, 0), (0, 0)]
    for size, b, o, s, span in zip(x.shape[2:], win.pads_begin, win.out, win.strides, win.spans, strict=True):
        need = (o - 1) * s + span - size - b  # end padding the last window reaches into
        widths.append((b, max(need, 0)))
    if not any(w for pair in widths for w in pair):
        return x
    # A filled buffer and one slice assignment: np.pad does the same copy with ~35 us more of Python per call,
    # as much as a small conv's arithmetic.
    shape = tuple(size + b + e for size, (b, e) in zip(x.shape, widths, strict=True))
    out = np.zeros(shape, dtype=x.dtype) if value == 0 else np.full(shape, value, dtype=x.dtype)
    out[tuple(slice(b, b + size) for size, (b, _) in zip(x.shape, widths, strict=True))] = x
    return out


def spatial_numel(shape: Sequence[int]) -> int:
    """Product of known dims (unknown ones count as 1 for cost estimates)."""
    return math.prod(d for d in shape if d >= 0)
