"""`python -m ge_core warmup` compiles every fast CPU kernel real models meet, so that a later run compiles
none (a fresh numba cache stands for a fresh install); and a run that does compile some says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ge_core.kernels import jit

REPO = Path(__file__).resolve().parents[2]
NOTE = "compiled"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not jit.ENABLED, reason="numba is off: nothing to compile")]


def _ge_core(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "ge_core", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=1200)


def test_after_warmup_real_models_compile_no_kernel(tmp_path: Path) -> None:
    warm = _ge_core(tmp_path, "warmup")
    assert warm.returncode == 0, warm.stderr
    assert "Conv.depthwise" in warm.stdout and "kernel signatures" in warm.stdout
    for args in (("sample:squeezenet", "--opt-level", "O3"),
                 ("sample:ocr_det_db_paddle", "--opt-level", "O3", "--input-shape", "x:1,3,96,96")):
        done = _ge_core(tmp_path, "run", *args)
        assert done.returncode == 0, done.stderr
        assert "note: this run compiled" not in done.stderr, (args, done.stderr)


def test_a_run_that_compiles_kernels_says_so(tmp_path: Path) -> None:
    done = _ge_core(tmp_path, "run", "sample:squeezenet")
    assert done.returncode == 0, done.stderr
    assert "note: this run compiled" in done.stderr and "python -m ge_core warmup" in done.stderr
