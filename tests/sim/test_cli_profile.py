"""`python -m ge_core profile` and `run --backend npu`: report, trace, outputs, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ge_core.cli.main import main


def test_profile_writes_report_and_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, trace = tmp_path / "r.json", tmp_path / "t.json"
    code = main(["profile", "sample:conv_bn_relu", "--hardware", "ascend310", "--opt-level", "O3",
                 "--report", str(report), "--trace", str(trace)])
    out = capsys.readouterr().out
    assert code == 0 and "Ascend 310" in out and "busy per unit" in out
    data = json.loads(report.read_text())
    assert data["hardware"]["name"] == "ascend310" and data["ops"] and data["total_us"] > 0
    assert any(r["op_type"] == "TransData" for r in data["ops"])  # compiled for the target: formats lowered
    assert json.loads(trace.read_text())["traceEvents"]


def test_run_backend_npu_outputs_match_cpu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cpu, npu = tmp_path / "cpu.npz", tmp_path / "npu.npz"
    assert main(["run", "sample:residual_block", "--opt-level", "O3", "--outputs", str(cpu)]) == 0
    assert main(["run", "sample:residual_block", "--opt-level", "O3", "--backend", "npu", "--precision-mode",
                 "force_fp32", "--outputs", str(npu)]) == 0  # ATC's default is force_fp16: ask for exact numbers
    assert "simulated" in capsys.readouterr().out
    with np.load(cpu) as a, np.load(npu) as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            np.testing.assert_allclose(b[name], a[name], rtol=1e-5, atol=1e-6)


def test_with_no_precision_mode_the_npu_runs_as_atc_compiles_force_fp16(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "sample:mlp", "--backend", "npu"]) == 0
    assert "force_fp16: output" in capsys.readouterr().out


def test_precision_mode_prints_the_error_per_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "sample:mlp", "--backend", "npu", "--precision-mode", "allow_fp32_to_fp16"]) == 0
    out = capsys.readouterr().out
    assert "allow_fp32_to_fp16: output" in out and "max relative error vs fp32" in out


def test_bad_profile_is_refused_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"extends": "ascend910", "buffers_bytes": {"l0a": -1}}), encoding="utf-8")
    assert main(["profile", "sample:conv_bn_relu", "--hardware", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "field 'buffers_bytes.l0a' must be a positive integer, got -1" in err and "Traceback" not in err
    assert main(["profile", "sample:conv_bn_relu", "--hardware", "gpu"]) == 2
    assert "Known profiles" in capsys.readouterr().err
