"""The fast paths compiled for a CPU without AVX-512 (AVX2 only, as many cloud EPYCs and older Xeons are):
every kernel test of this folder run again in a child process whose numba target has no AVX-512 feature
(ge_core.kernels.cpu.avx2_environment), with a cache of its own, and the machine code checked for 512-bit
registers. On an AVX-512 machine this is how CI proves the kernels correct on the CPUs most users have."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ge_core.kernels import cpu, jit

REPO = Path(__file__).resolve().parents[2]
CHILD = "GE_AVX2_CHILD"

pytestmark = pytest.mark.skipif(not jit.ENABLED or os.environ.get(CHILD) == "1",
                                reason="numba is off, or this is the child run itself")

PROBE = """
import numpy as np
from ge_core.kernels import FAST_PATHS, cpu, epilogue
from ge_core.ops.epilogue import NO_ACTIVATION
assert not cpu.has("avx512f"), cpu.features()
y = np.ones((1, 4, 64), np.float32)
epilogue.apply(y, np.ones(4, np.float32), None, NO_ACTIVATION)
(signature,) = epilogue.apply_kernel.signatures
asm = epilogue.apply_kernel.inspect_asm(signature)
print("zmm" in asm, "ymm" in asm, y[0, 0, 0])
"""


def _child_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, **cpu.avx2_environment(), "NUMBA_CACHE_DIR": str(tmp_path / "numba"), CHILD: "1",
            "PYTHONPATH": str(REPO)}


@pytest.mark.slow
def test_the_kernels_compile_to_avx2_code_without_512_bit_registers(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], env=_child_env(tmp_path), cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    uses_zmm, uses_ymm, value = done.stdout.split()
    assert (uses_zmm, uses_ymm, value) == ("False", "True", "2.0")


@pytest.mark.slow
def test_every_kernel_test_passes_on_an_avx2_target(tmp_path: Path) -> None:
    tests = [str(p) for p in sorted((REPO / "tests" / "kernels").glob("test_*.py")) if p.name != Path(__file__).name]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *tests,
                           "tests/ops/test_conv.py", "tests/ops/test_resize.py"],
                          env=_child_env(tmp_path), cwd=REPO, capture_output=True, text=True, timeout=1800)
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, tail
    assert " passed" in tail and " failed" not in tail
