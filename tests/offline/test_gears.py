"""Offline models with gears (.gem format 2): every gear in one file, its weights stored once; a run picks
its gear and a shape outside them is refused listing them in ATC's syntax; bad files are refused."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ge_core
from ge_core.errors import ModelError, UsageError
from ge_core.frontend.input_shapes import parse_shape_spec
from ge_core.offline import GearSet, read_gem
from ge_core.offline import gem as gem_module
from ge_core.samples import sample_bytes

UNKNOWN = "hidden:1,-1,64;mask:1,-1"
GEARS = "16,16;64,64;128,128"


def encoder_feeds(length: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"hidden": rng.standard_normal((1, length, 64)).astype(np.float32),
            "mask": (rng.random((1, length)) > 0.2).astype(np.float32)}


@pytest.fixture(scope="module")
def encoder() -> ge_core.Graph:
    return ge_core.load_onnx(sample_bytes("transformer_encoder"))


@pytest.fixture(scope="module")
def session(encoder: ge_core.Graph) -> ge_core.Session:
    built = ge_core.Session({"ge.inputShape": UNKNOWN, "ge.dynamicDims": GEARS, "ge.oo.level": "O3"})
    built.add_graph(1, encoder)
    built.build_graph(1)
    return built


@pytest.fixture
def saved(session: ge_core.Session, tmp_path: Path) -> Path:
    return session.save(1, tmp_path / "gears.gem")


def test_every_gear_loads_and_runs_exactly_like_the_session(session: ge_core.Session, saved: Path) -> None:
    loaded = ge_core.GearedModel.load(saved)
    assert loaded.gears.atc_flags() == f'--input_shape="{UNKNOWN}" --dynamic_dims="{GEARS}"'
    for length in (16, 64, 128):
        feeds = encoder_feeds(length, seed=length)
        want, got = session.run_graph(1, feeds), loaded.run(feeds)
        assert want.keys() == got.keys() and all(np.array_equal(want[k], got[k]) for k in want)
        single = ge_core.load_compiled(saved, shapes={k: v.shape for k, v in feeds.items()})
        assert single.config.input_shapes == f"hidden:1,{length},64;mask:1,{length}"
        assert single.report == session.model_for(1, {k: v.shape for k, v in feeds.items()}).report


def test_the_weights_are_stored_once_not_once_per_gear(session: ge_core.Session, saved: Path,
                                                       tmp_path: Path) -> None:
    one = session.models(1)[0].save(tmp_path / "one.gem")
    with zipfile.ZipFile(saved) as gears, zipfile.ZipFile(one) as single:
        arrays, one_arrays = gears.getinfo("arrays.npz").file_size, single.getinfo("arrays.npz").file_size
    assert arrays < 1.05 * one_arrays  # three gears, one set of weights (a few bytes of headers more)
    assert saved.stat().st_size < 1.5 * one.stat().st_size


def test_a_shape_outside_the_gears_is_refused_listing_them_in_atc_syntax(saved: Path) -> None:
    with pytest.raises(UsageError) as err:
        ge_core.load_compiled(saved, shapes={"hidden": (1, 33, 64), "mask": (1, 33)})
    text = str(err.value)
    assert "hidden:1,33,64;mask:1,33 match no gear" in text and "gears.gem" in text
    assert f'--input_shape="{UNKNOWN}" --dynamic_dims="{GEARS}"' in text
    with pytest.raises(UsageError, match="match no gear"):
        ge_core.GearedModel.load(saved).run(encoder_feeds(33))


def test_a_gear_is_picked_by_its_sizes_or_index_else_the_first(saved: Path) -> None:
    assert ge_core.load_compiled(saved, gear="64,64").config.input_shapes == "hidden:1,64,64;mask:1,64"
    assert ge_core.load_compiled(saved, gear=2).config.input_shapes == "hidden:1,128,64;mask:1,128"
    assert ge_core.load_compiled(saved).config.input_shapes == "hidden:1,16,64;mask:1,16"
    with pytest.raises(UsageError, match=r'no gear .32,32.*dynamic_dims="16,16;64,64;128,128"'):
        ge_core.load_compiled(saved, gear="32,32")
    with pytest.raises(UsageError, match="has no gear 3"):
        ge_core.load_compiled(saved, gear=3)
    with pytest.raises(UsageError, match="the inputs are hidden:1,16,64"):
        ge_core.load_compiled(saved, gear="64,64", shapes={"hidden": (1, 16, 64), "mask": (1, 16)})


def test_a_file_of_one_model_stays_readable_and_has_no_gears(session: ge_core.Session, tmp_path: Path) -> None:
    one = session.models(1)[0].save(tmp_path / "one.gem")
    with zipfile.ZipFile(one) as archive:
        assert json.loads(archive.read("manifest.json"))["format_version"] == 1  # what older versions read
    assert ge_core.load_compiled(one).config.input_shapes == "hidden:1,16,64;mask:1,16"
    with pytest.raises(UsageError, match="holds one model, not gears"):
        ge_core.GearedModel.load(one)
    with pytest.raises(UsageError, match="no gear '16,16' to pick"):
        ge_core.load_compiled(one, gear="16,16")


def test_the_compile_cache_never_takes_a_file_with_gears_for_one_model(saved: Path) -> None:
    with pytest.raises(ModelError, match="holds a model with gears"):
        read_gem(saved)


def test_batch_gears_are_listed_as_dynamic_batch_size(tmp_path: Path) -> None:
    mlp = ge_core.load_onnx(sample_bytes("mlp"))
    session = ge_core.Session({"ge.inputShape": "x:-1,64", "ge.dynamicBatchSize": "1,4"})
    session.add_graph(1, mlp)
    loaded = ge_core.GearedModel.load(session.save(1, tmp_path / "mlp.gem"))
    assert loaded.gears.atc_flags() == '--input_shape="x:-1,64" --dynamic_batch_size="1,4"'
    assert loaded.gear("4").config.input_shapes == "x:4,64"
    assert loaded.run({"x": np.ones((4, 64), np.float32)})[mlp.outputs[0]].shape[0] == 4


# -- bad files -----------------------------------------------------------------------------------------

def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n) for n in archive.namelist()}


def _forge(path: Path, edit_model: object) -> None:
    """Rewrite model.json with `edit_model(model)` and a manifest hash to match: a consistent forgery."""
    members = _members(path)
    model = json.loads(members["model.json"])
    edit_model(model)  # type: ignore[operator]
    members["model.json"] = json.dumps(model).encode()
    manifest = json.loads(members["manifest.json"])
    manifest["content_sha256"] = hashlib.sha256(members["model.json"] + b"\0" + members["arrays.npz"]).hexdigest()
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def test_a_corrupted_file_with_gears_is_refused_by_its_hash(saved: Path) -> None:
    members = _members(saved)
    members["model.json"] = members["model.json"].replace(b"128", b"256", 1)
    with zipfile.ZipFile(saved, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ModelError, match="does not match the hash"):
        ge_core.load_compiled(saved)


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda m: m["models"].pop(), "3 gears but 2 models"),
    (lambda m: m["gears"].update(option="dynamic_image_size"), "unknown gear option"),
    (lambda m: m["gears"]["shapes"][0].update(hidden=[2, 16, 64]), "does not fit --input_shape"),
    (lambda m: m["gears"]["shapes"][0].update(mask=[1, -16]), "is not a dim size"),
    (lambda m: m["aliases"].update({"0.graph.c0": "nowhere"}), "name no stored array"),
], ids=["models", "option", "fixed dim", "negative", "alias"])
def test_a_forged_gear_table_is_refused(saved: Path, edit: object, problem: str) -> None:
    _forge(saved, edit)
    with pytest.raises(ModelError, match=problem):
        ge_core.GearedModel.load(saved)


def test_sizes_are_checked_before_anything_is_read(saved: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gem_module, "MAX_MODEL_BYTES", 1000)
    with pytest.raises(ModelError, match="over the 1000-byte limit"):
        ge_core.load_compiled(saved)


def test_a_gear_set_round_trips_and_finds_its_gears() -> None:
    gears = GearSet(parse_shape_spec("a:1,-1;b:-1,4"), "dynamic_dims",
                    ({"a": (1, 16), "b": (2, 4), "c": (3,)}, {"a": (1, 64), "b": (8, 4), "c": (3,)}))
    assert GearSet.from_json(json.loads(json.dumps(gears.to_json()))) == gears
    assert gears.atc_flags() == '--input_shape="a:1,-1;b:-1,4" --dynamic_dims="16,2;64,8"'
    assert gears.find("64, 8") == 1 and gears.index({"a": (1, 16), "b": (2, 4), "c": (3,)}) == 0
    assert gears.index({"a": (1, 16), "b": (2, 4), "c": (4,)}) is None  # an input outside the spec counts too
