#!/usr/bin/env bash
# Everything the test suite needs: the project with its Python packages (pyproject.toml's "dev" extra),
# Debian's chromium for the browser tests (Playwright drives it; Playwright's own browser download is never
# used) and Debian's graphviz, whose `dot` must render the DOT we write (tests/viz); then the fast CPU kernels
# compiled once (`python -m ge_core warmup`), so that test workers do not each compile them.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v dot >/dev/null 2>&1 || missing+=(graphviz)
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
# The fast CPU kernels compiled into numba's cache once, as the README's start command does.
python3 -m ge_core warmup
