"""The CLI's dynamic shapes: gears, ranges and online fusion on run, compile and profile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ge_core.runtime.npz import write_npz
from tests.cli.test_cli import run_cli

MODEL = "sample:transformer_encoder"
UNKNOWN = "hidden:1,-1,64;mask:1,-1"
RANGE = "hidden:1,1~512,64;mask:1,1~512"


def encoder_inputs(path: Path, length: int) -> str:
    rng = np.random.default_rng(length)
    write_npz(path, {"hidden": rng.standard_normal((1, length, 64)).astype(np.float32),
                     "mask": np.ones((1, length), np.float32)})
    return str(path)


def test_compile_builds_one_model_per_gear(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["compile", MODEL, "--input-shape", UNKNOWN, "--dynamic-dims", "16,16;64,64",
                              "--no-cache"], capsys)
    assert code == 0, err
    assert "compiled hidden:1,16,64;mask:1,16:" in out and "compiled hidden:1,64,64;mask:1,64:" in out
    assert "session: 2 compile(s)" in out


def test_run_picks_the_gear_of_its_inputs_and_refuses_others(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    gears = ["--input-shape", UNKNOWN, "--dynamic-dims", "16,16;64,64", "--opt-level", "O3"]
    code, out, err = run_cli(["run", MODEL, *gears, "--inputs", encoder_inputs(tmp_path / "a.npz", 64),
                              "--outputs", str(tmp_path / "gear.npz")], capsys)
    assert code == 0, err
    assert "on the model for hidden:1,64,64;mask:1,64" in out
    code, _, err = run_cli(["run", MODEL, "--input-shape", "hidden:1,64,64;mask:1,64", "--opt-level", "O3",
                            "--inputs", str(tmp_path / "a.npz"), "--outputs", str(tmp_path / "static.npz")], capsys)
    assert code == 0, err
    with np.load(tmp_path / "gear.npz") as a, np.load(tmp_path / "static.npz") as b:
        assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)
    code, _, err = run_cli(["run", MODEL, *gears, "--inputs", encoder_inputs(tmp_path / "b.npz", 33)], capsys)
    assert code == 2 and "match no gear" in err and "hidden:1,16,64;mask:1,16" in err
    assert "Traceback" not in err


def test_online_fusion_compiles_the_range_once_and_decides_the_run(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["run", MODEL, "--input-shape", RANGE, "--fusion-mode", "online", "--backend", "npu",
                              "--inputs", encoder_inputs(tmp_path / "a.npz", 100)], capsys)
    assert code == 0, err
    assert "us simulated" in out
    assert "session: 1 compile(s)" in out and "1 run-time decision(s)" in out


def test_profile_on_a_range_compiles_the_shape_it_is_given(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["profile", MODEL, "--input-shape", RANGE, "--inputs",
                              encoder_inputs(tmp_path / "a.npz", 40), "--top", "2"], capsys)
    assert code == 0, err
    assert "inputs hidden:1,40,64;mask:1,40" in out and "session: 1 compile(s)" in out


def test_files_of_one_compiled_model_are_refused_with_dynamic_shapes(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["compile", MODEL, "--input-shape", UNKNOWN, "--dynamic-dims", "16,16",
                            "--report", str(tmp_path / "r.json")], capsys)
    assert code == 2 and "--report" in err and "static --input-shape" in err


def test_a_range_has_no_offline_model_to_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--output with gears writes them all (tests/cli/test_offline.py); a range compiles per shape at run time."""
    code, out, err = run_cli(["compile", MODEL, "--input-shape", RANGE, "--output", str(tmp_path / "m.gem")], capsys)
    assert code == 2 and "--output" in err and "--dynamic-dims" in err and out == ""
    assert not (tmp_path / "m.gem").exists()
