"""Comparing outputs: the one relative error every numeric check in ge_core reports."""

from __future__ import annotations

import numpy as np

from ge_core.ir.dtypes import is_extension

_NUMBER_KINDS = "biufc"  # bool, signed, unsigned, float, complex: compared by value
_SCALE_FLOOR = 1e-30  # a reference of all zeros: any difference is (nearly) infinitely relative


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want|: how far `got` moved, relative to the reference's magnitude.

    Written for numeric debugging (which pass, which precision mode, which plan broke the numbers), so
    nothing that changed may read as "no error":
    - a different shape is inf (nothing to compare element by element), an empty reference is 0;
    - non-numbers (strings, objects) must match exactly: 0 or inf;
    - numbers of any kind, ints and bools included, compare by value (an int output that moved is a real
      difference: an ArgMax flipped by fp16 rounding must show, not read 0);
    - equal values, equal infinities and NaN where the reference is NaN too count as equal; NaN or inf on
      one side only (or opposite infinities) is inf, where a NaN-ignoring max would hide it;
    - the scale is the largest finite |want| (an inf in the reference does not make every error 0).
    """
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return float("inf")
    if want.size == 0:
        return 0.0
    if not (_numeric(got.dtype) and _numeric(want.dtype)):
        return 0.0 if np.array_equal(got, want) else float("inf")
    wide = np.complex128 if "c" in (got.dtype.kind, want.dtype.kind) else np.float64
    a, b = got.astype(wide), want.astype(wide)
    differs = (a != b) & ~(np.isnan(a) & np.isnan(b))
    if not differs.any():
        return 0.0
    diff = np.abs(a[differs] - b[differs])
    if not np.isfinite(diff).all():
        return float("inf")
    finite = np.abs(b[np.isfinite(b)])
    scale = float(finite.max()) if finite.size else 0.0
    return float(diff.max()) / max(scale, _SCALE_FLOOR)


def _numeric(dtype: np.dtype) -> bool:
    return dtype.kind in _NUMBER_KINDS or is_extension(dtype)  # ml_dtypes' (bfloat16, float8, int4) are numbers
