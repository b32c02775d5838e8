"""Bad input gets a clear refusal naming what is wrong; nothing is read that should not be."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.errors import GEError, ModelError, UsageError
from tests.bad_models import BadModel, bad_models, external_initializer, external_tensor, good_relu, vi


@pytest.mark.parametrize("bad", bad_models(), ids=lambda b: b.name)
def test_bad_model_is_refused_with_names(bad: BadModel) -> None:
    with pytest.raises(GEError) as info:
        ge_core.load_onnx(bad.data)
    message = str(info.value)
    for words in bad.expect:
        assert words in message, f"{bad.name}: {words!r} missing from: {message}"
    assert "Traceback" not in message


def test_every_unsupported_op_and_shape_error_is_listed_at_once() -> None:
    nodes = [helper.make_node("FancyA", ["x"], ["a"], name="fa", domain="x.y"),
             helper.make_node("FancyB", ["x"], ["b"], name="fb", domain="x.y"),
             helper.make_node("MatMul", ["x", "w"], ["c"], name="mm_bad"),
             helper.make_node("Softmax", ["x"], ["d"], name="sm_bad", axis=7)]
    w = numpy_helper.from_array(np.ones((5, 6), np.float32), "w")
    graph = helper.make_graph(nodes, "many", [vi("x", [3, 4])], [vi(t, None) for t in "abcd"], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("x.y", 1)])
    result = ge_core.import_onnx(model.SerializeToString())
    assert {op for _, op in result.unsupported} == {"x.y::FancyA", "x.y::FancyB"}
    assert any("mm_bad" in p for p in result.problems) and any("sm_bad" in p for p in result.problems)
    message = str(result.error())
    for name in ("fa", "fb", "mm_bad", "sm_bad"):
        assert f"'{name}'" in message


def test_random_bytes_of_many_seeds_never_crash() -> None:
    rng = np.random.default_rng(1)
    for size in (1, 2, 7, 64, 1000):
        for _ in range(20):
            with pytest.raises(GEError):
                ge_core.load_onnx(rng.bytes(size))


def test_opset_out_of_range_is_refused_with_advice() -> None:
    """A future opset is refused with advice (old opsets 1-8 are converted: tests/frontend/test_opsets_and_dims.py)."""
    model = onnx.load_from_string(good_relu())
    model.opset_import[0].version = 99
    with pytest.raises(ModelError, match=r"opset 99.*version_converter"):
        ge_core.load_onnx(model.SerializeToString())


def test_input_shape_for_an_unknown_input_lists_the_real_ones() -> None:
    with pytest.raises(UsageError, match=r"not inputs of the model.*inputs are: x"):
        ge_core.load_onnx(good_relu(), "nope:1,4")


def test_input_shape_may_not_override_a_static_dim() -> None:
    with pytest.raises(UsageError, match="fixes it to 4"):
        ge_core.load_onnx(good_relu(), "x:1,5")


@pytest.mark.parametrize("spec", ["x:1,a", "x:1,-3", "x", "x:1;x:2"])
def test_malformed_input_shape_specs(spec: str) -> None:
    with pytest.raises(UsageError):
        ge_core.load_onnx(good_relu(), spec)


# ---- external data from a path: only regular files inside the model's own folder --------------------

def _write_external_model(folder: Path, location: str) -> Path:
    path = folder / "model.onnx"
    path.write_bytes(external_initializer(location))
    return path


def test_external_data_inside_the_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    graph = ge_core.load_onnx(str(_write_external_model(tmp_path, "weights.bin")))
    np.testing.assert_array_equal(graph.constants["w_ext"], np.arange(4, dtype=np.float32).reshape(2, 2))


@pytest.mark.parametrize("location", ["/etc/passwd", "../secret.bin", "sub/../../secret.bin"])
def test_external_data_outside_the_folder_is_refused(tmp_path: Path, location: str) -> None:
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\x00" * 16)
    with pytest.raises(ModelError, match="w_ext") as info:
        ge_core.load_onnx(str(_write_external_model(model_dir, location)))
    assert "relative file name inside" in str(info.value) or "leaves the model's folder" in str(info.value)


def test_external_data_through_a_symlink_is_refused(tmp_path: Path) -> None:
    model_dir = tmp_path / "m"
    model_dir.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\x00" * 16)
    os.symlink(tmp_path / "secret.bin", model_dir / "weights.bin")
    with pytest.raises(ModelError, match="symbolic link"):
        ge_core.load_onnx(str(_write_external_model(model_dir, "weights.bin")))


def test_external_data_of_the_wrong_length_is_refused(tmp_path: Path) -> None:
    (tmp_path / "weights.bin").write_bytes(b"\x00" * 8)  # 16 needed
    with pytest.raises(ModelError, match=r"outside 'weights\.bin'"):
        ge_core.load_onnx(str(_write_external_model(tmp_path, "weights.bin")))


def test_external_data_in_a_subgraph_upload_is_refused() -> None:
    ext = external_tensor("deep_ext", TensorProto.FLOAT, [1], "w.bin")
    branch = helper.make_graph([helper.make_node("Constant", [], ["c"], value=ext)], "branch", [], [vi("c", [1])])
    node = helper.make_node("If", ["cond"], ["y"], name="if_node", then_branch=branch, else_branch=branch)
    graph = helper.make_graph([node], "g", [vi("cond", [], TensorProto.BOOL)], [vi("y", [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ModelError, match="deep_ext"):
        ge_core.load_onnx(model.SerializeToString())


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="does not exist"):
        ge_core.load_onnx(str(tmp_path / "nope.onnx"))
