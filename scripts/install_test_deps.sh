#!/usr/bin/env bash
# Everything the test suite needs: the project with its Python packages (pyproject.toml's "dev" extra),
# Debian's chromium for the browser tests (Playwright drives it; Playwright's own browser download is never
# used) and Debian's graphviz, whose `dot` must render the DOT we write (tests/viz), and libgomp, the OpenMP
# runtime numba's threaded kernels run on (ge_core/ops/jit.py; without it they run serially and
# tests/ops/test_jit_threads.py fails).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
python3 -c "import ctypes.util, sys; sys.exit(ctypes.util.find_library('gomp') is None)" || missing+=(libgomp1)
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi
# The project itself (editable) with its test and check tools: pyproject.toml's "dev" extra.
python3 -m pip install -q -e ".[dev]"
# PyTorch for tests/torch (the CPU build; this exact pin is a local wheel here, other versions are CUDA builds).
python3 -m pip install -q "torch==2.13.0"
