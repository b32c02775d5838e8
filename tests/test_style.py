"""The code-style rules CI enforces: ruff and mypy clean, ge_core free of streamlit, pages free of numpy."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.prefix) / "bin" / "ruff").exists(),
                    reason="ruff not installed")
def test_ruff_is_clean() -> None:
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy")
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ge_core_never_imports_streamlit() -> None:
    offenders = [p.relative_to(REPO).as_posix() for p in (REPO / "ge_core").rglob("*.py")
                 if re.search(r"^\s*(import|from)\s+streamlit", p.read_text(), re.MULTILINE)]
    assert offenders == []


def test_pages_do_no_numpy_work() -> None:
    ui = [*(REPO / "app_pages").glob("*.py"), REPO / "app.py", *(REPO / "workbench_ui").glob("*.py")]
    offenders = [p.name for p in ui if re.search(r"^\s*import numpy|\bnp\.", p.read_text(), re.MULTILINE)]
    assert offenders == []
