"""Check an exported model with onnxruntime against the framework's own outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .config import ATOL, RTOL


def ort_run(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def compare(name: str, shape_desc: str, ref: list[np.ndarray], got: list[np.ndarray]) -> dict[str, Any]:
    """Print and return per-output errors; raise AssertionError when an output is off by more than ATOL/RTOL."""
    assert len(ref) == len(got), f"{name}: {len(ref)} reference outputs vs {len(got)} ORT outputs"
    rows = []
    for i, (r, g) in enumerate(zip(ref, got, strict=True)):
        assert r.shape == g.shape, f"{name} out{i}: shape {r.shape} vs ORT {g.shape}"
        err = float(np.max(np.abs(r.astype(np.float64) - g.astype(np.float64)))) if r.size else 0.0
        ok = bool(np.allclose(g, r, atol=ATOL, rtol=RTOL))
        rows.append(
            {
                "output": i,
                "shape": list(g.shape),
                "max_abs_err": err,
                "ok": ok,
                "ref_std": float(np.std(r)) if r.size else 0.0,
            }
        )
        status = "OK " if ok else "BAD"
        print(
            f"  [{status}] {name} {shape_desc} out{i} shape={tuple(g.shape)} "
            f"max|diff|={err:.2e} std(ref)={rows[-1]['ref_std']:.3g}"
        )
        if not ok:
            raise AssertionError(f"{name} {shape_desc}: ORT output {i} differs from framework by {err}")
    return {"case": shape_desc, "outputs": rows}
