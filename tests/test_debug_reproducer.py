"""Reproducer and dump zips: built in memory, and the reproducer replays with the existing CLI."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ge_core
from ge_core.debugging import bisect_numerics, import_failure, replay_commands, reproducer_zip
from ge_core.debugging.dump import dump_zip
from ge_core.samples.registry import get_sample, sample_bytes

REPO = Path(__file__).resolve().parents[1]


def unzip(data: bytes, folder: Path) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(folder)
        return sorted(archive.namelist())


def replay(folder: Path) -> list[tuple[str, int, int, str]]:
    """Run every command README.txt lists, as written there; (command, expected, got, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    readme = (folder / "README.txt").read_text()
    config = json.loads((folder / "config.json").read_text())
    results = []
    for entry in config["commands"]:
        assert entry["command"] in readme
        argv = shlex.split(entry["command"])
        assert argv[:3] == ["python3", "-m", "ge_core"]
        proc = subprocess.run([sys.executable, *argv[1:]], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=300)
        results.append((entry["command"], entry["expected_exit"], proc.returncode, proc.stderr))
    return results


def test_a_working_model_replays_with_exit_zero(tmp_path: Path) -> None:
    sample = get_sample("mlp")
    graph = ge_core.load_onnx(sample_bytes("mlp"), sample.input_shapes)
    feeds = ge_core.random_feeds(graph, 3)
    data = reproducer_zip(sample_bytes("mlp"), input_shapes=sample.input_shapes, opt_level="O3",
                          disabled=["CsePass", "GeluFusionPass"], feeds=feeds, seed=3)
    assert unzip(data, tmp_path) == ["README.txt", "config.json", "inputs.npz", "model.onnx", "switches.txt"]
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["disabled_passes"] == ["CsePass", "GeluFusionPass"] and config["outcome"] == {"ok": True}
    assert "CsePass:off" in (tmp_path / "switches.txt").read_text()
    for command, expected, got, stderr in replay(tmp_path):
        assert (got, expected) == (0, 0), f"{command}: {stderr}"
    report = json.loads((tmp_path / "report.json").read_text())
    assert "CsePass" not in {p["name"] for p in report["passes"]}
    with np.load(tmp_path / "outputs.npz") as out:
        want = ge_core.compile(graph, opt_level="O3").run(feeds)
        assert np.allclose(out[next(iter(want))], next(iter(want.values())), rtol=1e-5, atol=1e-6)


def test_a_numeric_drift_is_carried_and_the_bisect_verb_replays_it_from_any_folder(tmp_path: Path) -> None:
    """Issue 40: a bisection's finding goes into the zip (its README said "Everything worked"); `bisect`
    replays it at its tolerance. The commands run from a temporary folder, ge_core importable as the README's
    `pip install -e .` makes it (PYTHONPATH here: the tests never install the project)."""
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"))
    feeds = ge_core.random_feeds(compiled.input_graph, 0)
    drift = bisect_numerics(compiled, feeds, 1e-12)  # BatchNorm folding moves float32 outputs by ~1e-7
    assert drift.first_bad is not None and drift.first_bad.name == "BatchNormFoldPass"
    unzip(reproducer_zip(sample_bytes("conv_bn_relu"), opt_level="O3", feeds=feeds, bisection=drift), tmp_path)
    readme = (tmp_path / "README.txt").read_text()
    assert "Everything worked" not in readme and "first drift after BatchNormFoldPass" in readme
    assert "pip install -e ." in readme and "PYTHONPATH" not in readme
    kept = json.loads((tmp_path / "config.json").read_text())["bisection"]
    assert kept["tolerance"] == 1e-12 and kept["first_bad"]["pass"] == "BatchNormFoldPass"
    results = replay(tmp_path)
    assert [r[1] for r in results] == [0, 0, 0, 3]  # inspect, compile, run agree; bisect finds the drift
    for command, expected, got, stderr in results:
        assert got == expected, f"{command}: {stderr}"
    assert "--tolerance 1e-12" in results[-1][0] and "first drift after BatchNormFoldPass" in results[-1][3]
    within = bisect_numerics(compiled, feeds, 1e-4)
    unzip(reproducer_zip(sample_bytes("conv_bn_relu"), opt_level="O3", feeds=feeds, bisection=within), tmp_path)
    assert "within its tolerance 1.0e-04" in (tmp_path / "README.txt").read_text()
    bisect_run = replay(tmp_path)[-1]
    assert bisect_run[1] == bisect_run[2] == 0, bisect_run


def test_a_broken_model_replays_with_the_refusal(tmp_path: Path) -> None:
    result = ge_core.import_onnx(sample_bytes("shape_mismatch"))
    failure = import_failure(result)
    data = reproducer_zip(sample_bytes("shape_mismatch"), feeds=ge_core.random_feeds(result.graph, 0),
                          failure=failure)
    unzip(data, tmp_path)
    assert json.loads((tmp_path / "config.json").read_text())["outcome"]["nodes"] == ["y", "z"]
    assert "'y'" in (tmp_path / "README.txt").read_text()
    for command, expected, got, stderr in replay(tmp_path):
        assert expected == got == 3, f"{command}: {stderr}"
        assert "node 'y' (MatMul)" in stderr and "Traceback" not in stderr


def test_replay_commands_without_inputs_or_shapes() -> None:
    commands = replay_commands(ge_core.CompileConfig(opt_level="O1"), has_inputs=False)
    assert [c.argv[0] for c in commands] == ["inspect", "compile", "run"]
    assert "--inputs" not in commands[2].argv and "--input-shape" not in commands[1].argv
    assert commands[1].shell.startswith("python3 -m ge_core compile model.onnx --opt-level O1")
    quoted = replay_commands(ge_core.CompileConfig(input_shapes="x:1,3;y:2"), has_inputs=True)[2].shell
    assert "'x:1,3;y:2'" in quoted  # the ';' survives a shell


@pytest.mark.parametrize("onnx", [True, False])
def test_dump_zip_holds_every_step_and_the_report(onnx: bool) -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"))
    with zipfile.ZipFile(io.BytesIO(dump_zip(compiled, onnx=onnx))) as archive:
        names = archive.namelist()
        report = json.loads(archive.read("dumps/report.json"))
    assert all(n.startswith("dumps/") for n in names)
    texts = [n for n in names if n.endswith(".txt")]
    assert len(texts) == len(compiled.records) + 1
    assert any(n.endswith(".onnx") for n in names) == onnx
    assert len(report["passes"]) == len(compiled.records)
