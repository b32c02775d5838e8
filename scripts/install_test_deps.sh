#!/usr/bin/env bash
# Everything the test suite needs: the Python packages, and Debian's chromium for the browser tests
# (Playwright drives it; Playwright's own browser download is never used).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
python3 -m pip install -q -r requirements-dev.txt
