"""Offline models (.gem): save -> load -> run gives the same outputs; bad files are refused, never unpickled."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ge_core
from ge_core.errors import ModelError
from ge_core.samples import get_sample, sample_bytes

CASES = [("conv_bn_relu", {}), ("residual_block", {"hardware": "ascend910"}),
         ("bert_encoder_torch", {}), ("mlp", {"opt_level": "O1", "memory_reuse": False})]


@pytest.mark.parametrize(("name", "options"), CASES, ids=[c[0] for c in CASES])
def test_a_saved_model_loads_and_runs_exactly_like_the_compiled_one(tmp_path: Path, name: str,
                                                                     options: dict[str, object]) -> None:
    compiled = ge_core.compile(sample_bytes(name), input_shapes=get_sample(name).input_shapes, **options)
    path = compiled.save(tmp_path / f"{name}.gem")
    loaded = ge_core.load_compiled(path)
    feeds = ge_core.random_feeds(compiled.input_graph, seed=3)
    want, got = compiled.run(feeds), loaded.run(feeds)
    assert want.keys() == got.keys() and all(np.array_equal(want[k], got[k]) for k in want)
    assert loaded.report == compiled.report
    assert loaded.graph.to_text() == compiled.graph.to_text()
    assert loaded.input_graph.to_text() == compiled.input_graph.to_text()


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    return ge_core.compile(sample_bytes("conv_bn_relu")).save(tmp_path / "m.gem")


def _rewrite(path: Path, change: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    members.update(change)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def test_a_truncated_file_is_refused(saved: Path) -> None:
    saved.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    with pytest.raises(ModelError, match="not a readable offline model"):
        ge_core.load_compiled(saved)


def test_a_corrupted_member_is_refused_by_its_hash(saved: Path) -> None:
    with zipfile.ZipFile(saved) as archive:
        model = bytearray(archive.read("model.json"))
    model[len(model) // 2] ^= 0x01
    _rewrite(saved, {"model.json": bytes(model)})
    with pytest.raises(ModelError, match="does not match the hash"):
        ge_core.load_compiled(saved)


def test_a_file_from_another_format_version_is_refused_naming_both(saved: Path) -> None:
    with zipfile.ZipFile(saved) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    manifest["format_version"], manifest["ge_core_version"] = 99, "9.9"
    _rewrite(saved, {"manifest.json": json.dumps(manifest).encode()})
    with pytest.raises(ModelError, match=r"ge_core 9\.9 in offline-model format 99; this version reads format 1"):
        ge_core.load_compiled(saved)


def test_a_pickled_array_is_never_loaded(saved: Path) -> None:
    """An arrays.npz holding an object array (which only unpickling could read) is refused."""
    buffer = io.BytesIO()
    np.savez(buffer, evil=np.array([{"a": 1}], dtype=object))  # a pickle inside a .npy member
    with zipfile.ZipFile(saved) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        model = archive.read("model.json")
    manifest["content_sha256"] = hashlib.sha256(model + b"\0" + buffer.getvalue()).hexdigest()  # a consistent forgery
    _rewrite(saved, {"arrays.npz": buffer.getvalue(), "manifest.json": json.dumps(manifest).encode()})
    with pytest.raises(ModelError, match="arrays cannot be read"):
        ge_core.load_compiled(saved)


@pytest.mark.parametrize("content", [b"", b"PK\x05\x06" + bytes(18), b"not a zip at all"])
def test_other_files_are_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "x.gem"
    path.write_bytes(content)
    with pytest.raises(ModelError):
        ge_core.load_compiled(path)
