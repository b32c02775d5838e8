"""An offline model's arrays: written 64-byte aligned, read back in one pass as aligned, writable views."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import ml_dtypes
import numpy as np

import ge_core
from ge_core.offline.stored_npz import aligned_npz_bytes, npz_arrays, read_member
from ge_core.samples import sample_bytes

ARRAYS = {"scalar": np.array(3.0, np.float32), "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
          "flags": np.array([True, False]), "empty": np.zeros((0, 3), np.int8), "odd": np.arange(7, dtype=np.int16),
          "strided": np.arange(20, dtype=np.int64)[::3], "bf16": np.arange(5).astype(ml_dtypes.bfloat16)}


def _read_back(tmp_path: Path, data: bytes) -> tuple[dict[str, np.ndarray], str]:
    path = tmp_path / "outer.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("zz" * 3 + ".npz", data)  # an odd offset inside the outer file
    digest = hashlib.sha256()
    with open(path, "rb") as file, zipfile.ZipFile(file) as archive:
        arrays = npz_arrays(read_member(file, archive.infolist()[0], digest))
    return arrays, digest.hexdigest()


def test_arrays_round_trip_as_aligned_writable_views(tmp_path: Path) -> None:
    data = aligned_npz_bytes(ARRAYS)
    arrays, digest = _read_back(tmp_path, data)
    assert digest == hashlib.sha256(data).hexdigest()  # every byte hashed as read
    assert arrays.keys() == ARRAYS.keys()
    for name, want in ARRAYS.items():
        got = arrays[name]
        assert got.shape == want.shape
        assert got.tobytes() == np.ascontiguousarray(want).tobytes(), name
        assert got.flags.writeable and got.flags.aligned and got.base is not None  # a view, not a copy
        if got.size:
            assert got.ctypes.data % 64 == 0, name
    assert arrays["bf16"].dtype == np.dtype("V2")  # raw bytes, as ge_core.runtime.npz stores ml_dtypes


def test_the_npz_is_an_ordinary_one() -> None:
    with np.load(io.BytesIO(aligned_npz_bytes(ARRAYS))) as loaded:
        assert np.array_equal(loaded["fortran"], ARRAYS["fortran"]) and loaded["scalar"].shape == ()


def test_an_unaligned_npz_is_copied_out(tmp_path: Path) -> None:
    """One numpy itself wrote (arrays at any offset), as in offline models written before alignment."""
    buffer = io.BytesIO()
    np.savez(buffer, odd=np.arange(7, dtype=np.int16), wide=np.arange(5, dtype=np.float64))
    arrays, _ = _read_back(tmp_path, buffer.getvalue())
    assert np.array_equal(arrays["wide"], np.arange(5, dtype=np.float64)) and arrays["wide"].flags.aligned


def test_a_loaded_models_weights_are_views_of_one_read(tmp_path: Path) -> None:
    compiled = ge_core.compile(sample_bytes("residual_block"))
    loaded = ge_core.load_compiled(compiled.save(tmp_path / "m.gem"))
    assert loaded.graph.constants.keys() == compiled.graph.constants.keys()
    for name, value in loaded.graph.constants.items():
        want = compiled.graph.constants[name]
        assert np.array_equal(value, want) and value.dtype == want.dtype and value.flags.aligned
        assert value.flags.writeable is want.flags.writeable is False  # a graph's constants are read-only
