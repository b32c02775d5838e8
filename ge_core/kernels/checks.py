"""Checks made in Python before compiled code indexes arrays.

The compiled kernels run with bounds checks off (a check per access would stop them vectorising) and index
with unsigned integers, so an array of the wrong shape would read or write past its buffer: a crashed
server, not an error. Every fast path therefore checks the arrays it was handed against the geometry the
node's attributes give (the window, the group, the bias and residual shapes) before its first compiled
call, and a mismatch is an ExecutionError naming the node, what was expected and what came. Inference
promises these shapes, so a mismatch means a caller fed the kernel directly (or a bug): either way it is
refused, never run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ge_core.errors import ExecutionError
from ge_core.ir.node import Node
from ge_core.ops.spatial import Window


def require(node: Node, arrays: Sequence[np.ndarray | None], ok: bool, expected: str) -> None:
    """Refuse the call unless `ok`: an ExecutionError naming the node and what its kernel expected."""
    if not ok:
        shapes = [None if a is None else tuple(a.shape) for a in arrays]
        raise ExecutionError(node.name, node.op_type, shapes,
                             f"the compiled kernel was handed arrays that do not fit the node: {expected}")


def check_conv(node: Node, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, win: Window, group: int,
               residual: np.ndarray | None = None) -> None:
    """x (N, C, *spatial), w (Cout, C/group, *kernel), bias (Cout,), residual (N, Cout, *out)."""
    cout = w.shape[0]
    spatial = len(win.out)
    ok = x.ndim == spatial + 2 and w.ndim == x.ndim and group >= 1 and x.shape[1] % group == 0 \
        and cout % group == 0 and w.shape[1] * group == x.shape[1] and tuple(w.shape[2:]) == tuple(win.kernel)
    ok = ok and all(o >= 1 for o in win.out) and _window_fits(x.shape[2:], win, whole=True)
    ok = ok and (bias is None or bias.size == cout)
    ok = ok and (residual is None or tuple(residual.shape) == (x.shape[0], cout, *win.out))
    require(node, [x, w, bias, residual], ok,
            f"X (N, C, {spatial} spatial dims), W (Cout, C/{group}, {list(win.kernel)}), B ({cout},), "
            f"output spatial dims {list(win.out)}")


def check_conv_transpose(node: Node, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, win: Window,
                         group: int, residual: np.ndarray | None = None) -> None:
    """x (N, Cin, *spatial), w (Cin, Cout/group, *kernel), bias (Cout,), residual (N, Cout, *out)."""
    cout = w.shape[1] * group if w.ndim >= 2 else -1
    ok = x.ndim == len(win.out) + 2 and w.ndim == x.ndim and w.shape[0] == x.shape[1] and group >= 1 \
        and x.shape[1] % group == 0 and tuple(w.shape[2:]) == tuple(win.kernel)
    ok = ok and (bias is None or bias.size == cout)
    ok = ok and (residual is None or tuple(residual.shape) == (x.shape[0], cout, *win.out))
    require(node, [x, w, bias, residual], ok,
            f"X (N, Cin, ...), W (Cin, Cout/{group}, {list(win.kernel)}), B ({cout},), output {list(win.out)}")


def check_window(node: Node, x: np.ndarray, win: Window) -> None:
    """A pool's input (N, C, *spatial) against its window."""
    ok = x.ndim == len(win.out) + 2 and all(o >= 1 for o in win.out) and _window_fits(x.shape[2:], win, whole=False)
    require(node, [x], ok, f"X (N, C, {len(win.out)} spatial dims) giving outputs {list(win.out)}")


def _window_fits(spatial: Sequence[int], win: Window, *, whole: bool) -> bool:
    """With `whole`, every output position's window lies inside the padded input (a conv's); else only its
    first tap (a pool's ceil_mode windows may reach past the end, and the pool kernels skip those taps)."""
    if len(spatial) != len(win.out):
        return False
    return all((o - 1) * s + (span if whole else 1) <= size + b + e for size, o, s, span, b, e in
               zip(spatial, win.out, win.strides, win.spans, win.pads_begin, win.pads_end, strict=True))
