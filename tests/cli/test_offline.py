"""The CLI's offline models (compile --output M.gem, run/profile M.gem) and its compile cache."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ge_core.offline import cache as cache_module
from tests.cli.test_cli import run_cli
from tests.cli.test_dynamic import MODEL, UNKNOWN, encoder_inputs


def test_a_saved_model_runs_like_compiling_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gem, saved_out, fresh_out = tmp_path / "m.gem", tmp_path / "a.npz", tmp_path / "b.npz"
    code, out, err = run_cli(["compile", "sample:residual_block", "--opt-level", "O3", "--memory-strategy",
                              "best_fit", "--output", str(gem)], capsys)
    assert code == 0, err
    assert "wrote the offline model" in out
    code, _, err = run_cli(["run", str(gem), "--seed", "4", "--outputs", str(saved_out)], capsys)
    assert code == 0, err
    code, _, err = run_cli(["run", "sample:residual_block", "--opt-level", "O3", "--memory-strategy", "best_fit",
                            "--no-cache", "--seed", "4", "--outputs", str(fresh_out)], capsys)
    assert code == 0, err
    with np.load(saved_out) as a, np.load(fresh_out) as b:
        assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)
    code, out, err = run_cli(["profile", str(gem)], capsys)
    assert code == 0 and "kernels in" in out, err


def test_compile_options_cannot_change_a_saved_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gem = tmp_path / "m.gem"
    assert run_cli(["compile", "sample:conv_bn_relu", "--output", str(gem)], capsys)[0] == 0
    code, _, err = run_cli(["run", str(gem), "--opt-level", "O1"], capsys)
    assert code == 2 and "--opt-level cannot change it" in err


def test_a_damaged_saved_model_is_refused_with_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gem = tmp_path / "m.gem"
    assert run_cli(["compile", "sample:conv_bn_relu", "--output", str(gem)], capsys)[0] == 0
    gem.write_bytes(gem.read_bytes()[:-100])
    code, _, err = run_cli(["run", str(gem)], capsys)
    assert code == 3 and "Traceback" not in err and "m.gem" in err


def test_the_second_compile_hits_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache, report = tmp_path / "cache", tmp_path / "r.json"
    args = ["compile", "sample:mlp", "--cache-dir", str(cache), "--report", str(report)]
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and "cache: miss, stored as" in out
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and "cache: hit" in out
    assert json.loads(report.read_text())["cache"]["hit"] is True
    code, out, _ = run_cli([*args[:2], "--no-cache"], capsys)
    assert code == 0 and "cache: not used" in out


def test_gears_compile_into_one_offline_model_that_picks_the_gear_of_its_inputs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gem, gear_out, fresh_out = tmp_path / "m.gem", tmp_path / "a.npz", tmp_path / "b.npz"
    gears = ["--input-shape", UNKNOWN, "--dynamic-dims", "16,16;64,64", "--opt-level", "O3"]
    code, out, err = run_cli(["compile", MODEL, *gears, "--no-cache", "--output", str(gem)], capsys)
    assert code == 0, err
    assert "wrote the offline model with every gear" in out and "session: 2 compile(s)" in out
    inputs = encoder_inputs(tmp_path / "in.npz", 64)
    code, out, err = run_cli(["run", str(gem), "--inputs", inputs, "--outputs", str(gear_out)], capsys)
    assert code == 0, err
    assert "gear 64,64 (hidden:1,64,64;mask:1,64)" in out
    code, _, err = run_cli(["run", MODEL, "--input-shape", "hidden:1,64,64;mask:1,64", "--opt-level", "O3",
                            "--no-cache", "--inputs", inputs, "--outputs", str(fresh_out)], capsys)
    assert code == 0, err
    with np.load(gear_out) as a, np.load(fresh_out) as b:
        assert a.files == b.files and all(np.array_equal(a[k], b[k]) for k in a.files)


def test_a_saved_model_refuses_a_shape_outside_its_gears_listing_them(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    gem = tmp_path / "m.gem"
    assert run_cli(["compile", MODEL, "--input-shape", UNKNOWN, "--dynamic-dims", "16,16;64,64", "--no-cache",
                    "--output", str(gem)], capsys)[0] == 0
    code, _, err = run_cli(["run", str(gem), "--inputs", encoder_inputs(tmp_path / "in.npz", 33)], capsys)
    assert code == 2 and "Traceback" not in err
    assert "hidden:1,33,64;mask:1,33 match no gear" in err
    assert '--input_shape="hidden:1,-1,64;mask:1,-1" --dynamic_dims="16,16;64,64"' in err
    code, out, err = run_cli(["profile", str(gem), "--gear", "64,64", "--top", "1"], capsys)
    assert code == 0 and "gear 64,64" in out and "kernels in" in out, err
    code, out, err = run_cli(["run", str(gem)], capsys)
    assert code == 0 and "gear 16,16" in out and "the first gear" in err
    code, _, err = run_cli(["run", str(gem), "--gear", "32,32"], capsys)
    assert code == 2 and "no gear '32,32'" in err
    code, _, err = run_cli(["run", str(gem), "--dynamic-dims", "32,32"], capsys)
    assert code == 2 and "is an offline model" in err
    code, _, err = run_cli(["run", MODEL, "--gear", "16,16"], capsys)
    assert code == 2 and "--gear picks a gear of an offline model" in err


def test_a_compile_whose_entry_does_not_pay_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GE_CACHE_KEEP", raising=False)  # judged, as outside the test suite
    monkeypatch.setattr(cache_module, "PAYS_BELOW", 0.0)  # no load is cheap enough
    args = ["compile", "sample:mlp", "--cache-dir", str(tmp_path)]
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and "cache: miss, not kept: hashing the model and loading its entry" in out
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and "cache: skipped: hashing the model" in out and "to compile it" in out
