"""External data and hostile model text (issue 12): sizes before bytes, one open per file without following
links, every TensorProto location walked for uploads, text that is not UTF-8 or opsets that are missing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.errors import GEError, ModelError
from tests.bad_models import external_initializer, external_tensor, good_relu, vi

REPO = Path(__file__).resolve().parents[2]
SECRET = b"TOP-SECRET-BYTES"  # 16 bytes: exactly what the 2x2 float32 external tensor asks for


def _model_with_initializer(tensor: TensorProto) -> bytes:
    nodes = [helper.make_node("Identity", [tensor.name], ["y"], name="id")]
    graph = helper.make_graph(nodes, "g", [], [vi("y", None, tensor.data_type)], [tensor])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_a_symlink_swapped_in_while_models_load_never_yields_the_secret(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    secret = tmp_path / "secret.bin"
    secret.write_bytes(SECRET)
    data, link = folder / "data.bin", folder / "data.link"
    data.write_bytes(np.zeros(4, np.float32).tobytes())
    os.symlink(secret, link)
    model = folder / "model.onnx"
    model.write_bytes(external_initializer("data.bin"))
    stop = threading.Event()

    def flip() -> None:  # data.bin is a regular file, then a symlink to the secret, then a file again...
        regular = folder / "regular.bin"
        regular.write_bytes(np.zeros(4, np.float32).tobytes())
        while not stop.is_set():
            os.replace(link if data.is_file() and not data.is_symlink() else regular, data)
            if not link.exists() and not link.is_symlink():
                os.symlink(secret, link)
            if not regular.exists():
                regular.write_bytes(np.zeros(4, np.float32).tobytes())

    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    loads = refused = 0
    deadline = time.monotonic() + 2.0
    try:
        while time.monotonic() < deadline:
            try:
                graph = ge_core.load_onnx(str(model))
            except GEError:
                refused += 1
                continue
            loads += 1
            assert graph.constants["w_ext"].tobytes() != SECRET
    finally:
        stop.set()
        flipper.join()
    assert loads + refused > 50 and loads > 0


@pytest.mark.parametrize("data_type", [TensorProto.STRING, TensorProto.UNDEFINED], ids=["string", "undefined"])
def test_an_external_tensor_whose_size_is_unknown_is_refused_before_a_byte_is_read(tmp_path: Path,
                                                                                  data_type: int) -> None:
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:  # 256 MiB, sparse: costs no disk, but reading it would cost the memory
        f.truncate(256 << 20)
    model = tmp_path / "model.onnx"
    model.write_bytes(_model_with_initializer(external_tensor("s", data_type, [4], "big.bin")))
    code = ("import resource, sys, ge_core\n"
            "from ge_core.errors import GEError\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n    ge_core.load_onnx(sys.argv[1])\nexcept GEError as err:\n    print('REFUSED', err)\n"
            "print('GROWTH_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    env = {**os.environ, "GE_MAX_TENSOR_BYTES": str(1 << 20), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code, str(model)], capture_output=True, text=True, env=env,
                          timeout=120, check=True)
    assert "REFUSED" in proc.stdout and "'s'" in proc.stdout, proc.stdout + proc.stderr
    growth_kb = int(proc.stdout.split("GROWTH_KB")[1])
    assert growth_kb < 64 << 10, f"the refusal read the file: grew {growth_kb} KiB"


def test_a_huge_external_tensor_is_refused_by_the_budget_before_reading(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with open(tmp_path / "big.bin", "wb") as f:
        f.truncate(64 << 20)
    (tmp_path / "model.onnx").write_bytes(_model_with_initializer(
        external_tensor("w", TensorProto.FLOAT, [16 << 20], "big.bin")))
    monkeypatch.setenv("GE_MAX_TENSOR_BYTES", str(1 << 20))
    reads: list[int] = []
    real_pread = os.pread
    monkeypatch.setattr(os, "pread", lambda fd, n, off: reads.append(n) or real_pread(fd, n, off))
    with pytest.raises(GEError, match="'w'"):
        ge_core.load_onnx(str(tmp_path / "model.onnx"))
    assert reads == []


def test_a_fifo_as_external_data_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "weights.bin")
    (tmp_path / "model.onnx").write_bytes(external_initializer("weights.bin"))
    with pytest.raises(ModelError, match="not a regular file"):
        ge_core.load_onnx(str(tmp_path / "model.onnx"))


@pytest.mark.parametrize("location", ["weights\x00.bin", "/proc/self/environ", "../../proc/self/environ",
                                      "C:weights.bin", "sub\\..\\x.bin", ""])
def test_hostile_locations_are_refused_as_model_errors(tmp_path: Path, location: str) -> None:
    (tmp_path / "model.onnx").write_bytes(external_initializer(location))
    with pytest.raises(ModelError, match="'w_ext'"):
        ge_core.load_onnx(str(tmp_path / "model.onnx"))


def test_a_symlinked_folder_on_the_way_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "weights.bin").write_bytes(SECRET)
    folder = tmp_path / "m"
    folder.mkdir()
    os.symlink(real, folder / "sub")
    (folder / "model.onnx").write_bytes(external_initializer("sub/weights.bin"))
    with pytest.raises(ModelError, match="symbolic link"):
        ge_core.load_onnx(str(folder / "model.onnx"))


def test_external_data_in_a_subfolder_is_read(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "weights.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    (tmp_path / "model.onnx").write_bytes(external_initializer("./sub/weights.bin"))
    graph = ge_core.load_onnx(str(tmp_path / "model.onnx"))
    np.testing.assert_array_equal(graph.constants["w_ext"].ravel(), np.arange(4, dtype=np.float32))


def test_an_upload_with_an_external_tensor_in_sparse_tensors_is_refused() -> None:
    values = external_tensor("sparse_ext", TensorProto.FLOAT, [1], "/etc/passwd")
    indices = numpy_helper.from_array(np.array([0], np.int64), "idx")
    sparse = helper.make_sparse_tensor(values, indices, [4])
    model = onnx.load_from_string(good_relu())
    attr = model.graph.node[0].attribute.add()
    attr.name, attr.type = "hidden", onnx.AttributeProto.SPARSE_TENSORS
    attr.sparse_tensors.append(sparse)
    with pytest.raises(ModelError, match="sparse_ext"):
        ge_core.load_onnx(model.SerializeToString())


def test_an_upload_with_an_external_tensor_in_a_function_is_refused() -> None:
    ext = external_tensor("func_ext", TensorProto.FLOAT, [1], "w.bin")
    body = helper.make_node("Constant", [], ["c"], value=ext)
    function = helper.make_function("local", "F", [], ["c"], [body], [helper.make_opsetid("", 17)])
    model = onnx.load_from_string(good_relu())
    model.functions.append(function)
    with pytest.raises(ModelError, match="func_ext"):
        ge_core.load_onnx(model.SerializeToString())


def test_a_model_without_opset_import_is_refused() -> None:
    model = onnx.load_from_string(good_relu())
    del model.opset_import[:]
    with pytest.raises(ModelError, match="no opset_import"):
        ge_core.load_onnx(model.SerializeToString())


def test_a_node_of_a_domain_without_an_opset_is_a_problem() -> None:
    model = onnx.load_from_string(good_relu())
    model.opset_import[0].domain = "com.example"
    with pytest.raises(ModelError, match=r"domain 'ai.onnx', for which the model imports no opset"):
        ge_core.load_onnx(model.SerializeToString())


def test_names_that_are_not_utf8_are_refused_naming_the_field() -> None:
    data = good_relu()
    name = onnx.load_from_string(data).graph.node[0].name.encode()
    assert name and data.count(name) == 1
    with pytest.raises(ModelError, match=r"(?s)not valid UTF-8.*graph\.node\[0\]\.name") as info:
        ge_core.load_onnx(data.replace(name, b"\xff" * len(name)))
    assert "Traceback" not in str(info.value)
