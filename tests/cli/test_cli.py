"""The CLI's exit codes and messages: 0 success, 2 bad usage, 3 refused; never a traceback without --debug."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ge_core.cli.main import main
from tests.bad_models import BadModel, bad_models, good_relu

REPO = Path(__file__).resolve().parents[2]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def relu_path(tmp_path: Path) -> Path:
    path = tmp_path / "relu.onnx"
    path.write_bytes(good_relu())
    return path


@pytest.mark.parametrize("verb", ["inspect", "run"])
@pytest.mark.parametrize("bad", bad_models(), ids=lambda b: b.name)
def test_bad_models_exit_3_with_a_message_and_no_traceback(
        verb: str, bad: BadModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{bad.name}.onnx"
    path.write_bytes(bad.data)
    code, _, err = run_cli([verb, str(path)], capsys)
    assert code == 3, err
    assert "Traceback" not in err
    assert err.startswith(f"ge_core {verb}: ")
    if not bad.name.startswith("external"):  # from a path, the external file is simply missing
        for words in bad.expect:
            assert words in err, f"{words!r} not in {err}"


def test_inspect_prints_a_summary(relu_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["inspect", str(relu_path)], capsys)
    assert code == 0
    assert "input    x: float32[1, 4]" in out
    assert "Relu x1" in out


def test_inspect_json_lists_everything(relu_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["inspect", str(relu_path), "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["ok"] is True
    assert data["op_histogram"] == {"Relu": 1}
    assert "Conv" in data["supported_ops"]


def test_run_writes_outputs_keyed_by_graph_output_names(
        relu_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = np.array([[-1, 2, -3, 4]], np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    code, out, _ = run_cli(["run", str(relu_path), "--inputs", str(tmp_path / "in.npz"),
                            "--outputs", str(tmp_path / "out.npz"), "--timings"], capsys)
    assert code == 0
    with np.load(tmp_path / "out.npz") as data:
        np.testing.assert_array_equal(data["y"], np.maximum(x, 0))
    assert "relu" in out and "share" in out


def test_run_with_random_inputs_is_seeded(relu_path: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for i in range(2):
        code, _, _ = run_cli(["run", str(relu_path), "--seed", "7", "--outputs", str(tmp_path / f"{i}.npz")], capsys)
        assert code == 0
        with np.load(tmp_path / f"{i}.npz") as data:
            outs.append(data["y"])
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize(("args", "words"), [
    (["run", "missing.onnx"], "not found"),
    (["run", "{relu}", "--inputs", "missing.npz"], "not found"),
    (["run", "{relu}", "--input-shape", "x:1,a"], "not an integer"),
    (["inspect", "{relu}", "--input-shape", "zz:1"], "not inputs of the model"),
])
def test_bad_usage_exits_2(args: list[str], words: str, relu_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli([a.replace("{relu}", str(relu_path)) for a in args], capsys)
    assert code == 2
    assert words in err and "Traceback" not in err


def test_wrong_feed_dtype_and_shape_exit_2(relu_path: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "f64.npz", x=np.zeros((1, 4)))
    code, _, err = run_cli(["run", str(relu_path), "--inputs", str(tmp_path / "f64.npz")], capsys)
    assert code == 2 and "fed float64 but the model expects float32" in err
    np.savez(tmp_path / "shape.npz", x=np.zeros((2, 4), np.float32))
    code, _, err = run_cli(["run", str(relu_path), "--inputs", str(tmp_path / "shape.npz")], capsys)
    assert code == 2 and "fed shape [2, 4]" in err


def test_unknown_verb_is_usage_error() -> None:
    with pytest.raises(SystemExit) as info:
        main(["frobnicate", "x.onnx"])
    assert info.value.code == 2


def _limit_memory() -> None:
    limit = 1536 << 20  # 1.5 GiB of address space: a 2.5 TB allocation attempt would die, not swap
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize("name", ["huge_constant_of_shape", "huge_initializer_dims"])
def test_huge_tensors_are_refused_in_bounded_memory(name: str, tmp_path: Path) -> None:
    bad = next(b for b in bad_models() if b.name == name)
    path = tmp_path / "huge.onnx"
    path.write_bytes(bad.data)
    for verb in ("inspect", "run"):
        proc = subprocess.run([sys.executable, "-m", "ge_core", verb, str(path)], cwd=REPO, capture_output=True,
                              text=True, timeout=120, preexec_fn=_limit_memory,
                              env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"})
        assert proc.returncode == 3, proc.stderr
        assert "limit" in proc.stderr and "Traceback" not in proc.stderr


def test_debug_flag_shows_the_traceback(tmp_path: Path) -> None:
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    proc = subprocess.run([sys.executable, "-m", "ge_core", "inspect", str(path), "--debug"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "Traceback" in proc.stderr


@pytest.mark.parametrize(("sample", "words"), [
    ("unsupported_op", ("'SplitToSequence'", "TfIdfVectorizer", "com.example::FancyOp")),
    ("shape_mismatch", ("MatMul", "Add", "[1,3,4]", "[5,6]", "[1,8]", "[1,3]")),
])
def test_broken_samples_are_refused_listing_every_problem(
        sample: str, words: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    for verb in ("inspect", "run"):
        code, _, err = run_cli([verb, f"sample:{sample}"], capsys)
        assert code == 3
        for w in words:
            assert w in err, f"{w!r} not in {err}"


def test_unknown_sample_lists_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["inspect", "sample:nope"], capsys)
    assert code == 2 and "conv_bn_relu" in err


def test_compile_prints_the_pipeline_and_run_accepts_opt_levels(
        relu_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["compile", str(relu_path), "--opt-level", "O1"], capsys)
    assert code == 0 and "InferShapePass" in out and "AfterInfershape" in out
    code, out, _ = run_cli(["run", str(relu_path), "--opt-level", "O1"], capsys)
    assert code == 0 and "O1" in out


@pytest.mark.parametrize(("args", "words"), [
    (["compile", "{relu}", "--opt-level", "O7"], "unknown opt level"),
    (["run", "{relu}", "--opt-level", "fast"], "unknown opt level"),
    (["compile", "{relu}", "--fusion-switch-file", "missing.cfg"], "not found"),
    (["compile", "{relu}", "--fusion-switch-file", "{bad_switch}"], "unknown passes"),
])
def test_compile_usage_errors_exit_2(args: list[str], words: str, relu_path: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    bad_switch = tmp_path / "switch.cfg"
    bad_switch.write_text("NoSuchPass:off\n")
    argv = [a.replace("{relu}", str(relu_path)).replace("{bad_switch}", str(bad_switch)) for a in args]
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and words in err and "Traceback" not in err


def test_switch_file_turns_passes_off(relu_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    switch = tmp_path / "switch.cfg"
    switch.write_text("ConstantFoldingPass:off\nCsePass:off\n")
    report = tmp_path / "r.json"
    code, _, _ = run_cli(["compile", str(relu_path), "--fusion-switch-file", str(switch), "--report", str(report)],
                         capsys)
    names = [p["name"] for p in json.loads(report.read_text())["passes"]]
    assert code == 0 and "ConstantFoldingPass" not in names and "CsePass" not in names and "PrunePass" in names
