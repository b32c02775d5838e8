"""`compile --tables DIR`: the UI's tables as CSV files, under the names docs/cli.md lists, with the numbers of
the compile report; the rest of compile's output is unchanged."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ge_core.viz import TABLE_FILES
from tests.cli.test_cli import run_cli

CLI_DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
COMPILE_TABLES = [n for n in TABLE_FILES if not n.startswith("profile_")]
PROFILE_TABLES = [n for n in TABLE_FILES if n.startswith("profile_") and n != "profile_outputs"]


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_tables_without_hardware_agree_with_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    code, plain, _ = run_cli(["compile", "sample:residual_block", "--report", str(report), "--no-cache"], capsys)
    code2, out, _ = run_cli(["compile", "sample:residual_block", "--report", str(report), "--no-cache", "--tables",
                             str(tmp_path / "t")], capsys)
    assert code == code2 == 0
    assert _without_times(out).startswith(_without_times(plain))  # one line added at the end
    assert out.rstrip().splitlines()[-1].startswith(f"wrote {len(COMPILE_TABLES)} tables to")
    assert sorted(p.stem for p in (tmp_path / "t").glob("*.csv")) == sorted(COMPILE_TABLES)
    memory = json.loads(report.read_text())["memory"]
    timeline = rows(tmp_path / "t" / "memory_timeline.csv")
    assert max(int(r["live_bytes"]) for r in timeline) == memory["theory_min_bytes"]
    assert max(int(r["top_bytes"]) for r in timeline) == memory["arena_bytes"]
    assert len(rows(tmp_path / "t" / "memory_rectangles.csv")) == len(memory["allocations"])
    passes = rows(tmp_path / "t" / "passes.csv")
    assert [r["pass"] for r in passes] == [p["name"] for p in json.loads(report.read_text())["passes"]]


def test_tables_with_hardware_add_the_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.json"
    code, _, _ = run_cli(["compile", "sample:conv_bn_relu", "--hardware", "ascend910", "--report", str(report),
                          "--tables", str(tmp_path)], capsys)
    assert code == 0
    assert sorted(p.stem for p in tmp_path.glob("*.csv")) == sorted(COMPILE_TABLES + PROFILE_TABLES)
    decisions = json.loads(report.read_text())["fusion"]["decisions"]
    assert [r["reason"] for r in rows(tmp_path / "fusion_decisions.csv")] == [d["reason"] for d in decisions]
    summary = rows(tmp_path / "fusion_summary.csv")
    assert sum(int(r["matched"]) for r in summary) == len(decisions)
    ops = rows(tmp_path / "profile_ops.csv")
    assert ops and sum(float(r["share"]) for r in ops) == pytest.approx(1.0)
    assert {r["format"] for r in rows(tmp_path / "memory_rectangles.csv")} & {"NC1HWC0"}  # device formats


def test_the_cli_page_lists_every_table_name() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    assert all(re.search(rf"\b{name}\b", text) for name in TABLE_FILES), "list them in docs/cli.md"


def _without_times(text: str) -> str:
    """compile's output with the timings (which differ between runs, and so do their columns' widths) blanked."""
    return re.sub(r" +", " ", re.sub(r"\d+\.\d+", "#", text))
