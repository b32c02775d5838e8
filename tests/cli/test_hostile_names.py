"""Tensor names that collide with numpy.savez's own parameters (`file`, `allow_pickle`) round-trip through
`run --inputs/--outputs` and the reproducer's inputs.npz (issue 12)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from ge_core.debugging import reproducer_zip
from ge_core.runtime.npz import write_npz
from tests.cli.test_cli import run_cli

NAMES = ("file", "allow_pickle")


def _named_model() -> bytes:
    """Inputs literally named `file` and `allow_pickle`."""
    nodes = [helper.make_node("Relu", ["file"], ["y"], name="relu"),
             helper.make_node("Neg", ["allow_pickle"], ["z"], name="neg")]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in NAMES]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "yz"]
    graph = helper.make_graph(nodes, "named", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _savez_colliding_model() -> bytes:
    """Outputs literally named `file` and `allow_pickle`."""
    nodes = [helper.make_node("Relu", ["x"], ["file"], name="relu"),
             helper.make_node("Neg", ["x"], ["allow_pickle"], name="neg")]
    graph = helper.make_graph(nodes, "named", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in NAMES])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_run_writes_outputs_named_file_and_allow_pickle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, inputs, outputs = tmp_path / "m.onnx", tmp_path / "in.npz", tmp_path / "out.npz"
    model.write_bytes(_savez_colliding_model())
    write_npz(inputs, {"x": np.array([1.0, -2.0], np.float32)})
    code, out, err = run_cli(["run", str(model), "--inputs", str(inputs), "--outputs", str(outputs)], capsys)
    assert code == 0, err
    assert "wrote 2 output(s)" in out
    with np.load(outputs, allow_pickle=False) as data:
        assert sorted(data.files) == sorted(NAMES)
        np.testing.assert_array_equal(data["file"], [1.0, 0.0])
        np.testing.assert_array_equal(data["allow_pickle"], [-1.0, 2.0])


def test_run_reads_inputs_named_file_and_allow_pickle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, inputs = tmp_path / "m.onnx", tmp_path / "in.npz"
    model.write_bytes(_named_model())
    write_npz(inputs, {n: np.ones(2, np.float32) for n in NAMES})
    code, _, err = run_cli(["run", str(model), "--inputs", str(inputs)], capsys)
    assert code == 0, err


def test_the_reproducer_keeps_inputs_named_file_and_allow_pickle() -> None:
    feeds = {"file": np.ones(2, np.float32), "allow_pickle": np.full(2, 3.0, np.float32)}
    data = reproducer_zip(_named_model(), feeds=feeds)
    with zipfile.ZipFile(io.BytesIO(data)) as archive, np.load(io.BytesIO(archive.read("inputs.npz"))) as saved:
        assert sorted(saved.files) == sorted(NAMES)
        np.testing.assert_array_equal(saved["allow_pickle"], feeds["allow_pickle"])
