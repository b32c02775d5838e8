"""Hardware profiles: the built-in ones carry DESIGN.md's figures and their sources; bad files are refused
naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ge_core.hardware import ProfileError, load_profile, profile_names
from ge_core.hardware.loader import PROFILE_DIR, profile_problems
from ge_core.hardware.ub_limits import UB_BYTES, ub_bytes


def test_builtin_profiles_and_their_peaks() -> None:
    assert profile_names() == ["ascend310", "ascend310p", "ascend910", "ascend910b"]
    peaks = {name: load_profile(name).peak_flops / 1e12 for name in profile_names()}
    assert peaks["ascend310"] == pytest.approx(8.0)
    assert peaks["ascend310p"] == pytest.approx(70.0)  # the Atlas 300I Pro's 140 TOPS int8 = 70 TFLOPS fp16
    assert peaks["ascend910"] == pytest.approx(256.0)
    assert peaks["ascend910b"] == pytest.approx(353.9, abs=0.1)  # 24 x 4096 x 2 x 1.8 GHz (~350 public)


def test_910b_is_separated_with_smaller_buffers() -> None:
    p = load_profile("Ascend910B")  # names are case-insensitive
    assert (p.ai_cores, p.vector_cores, p.separated_vector_cores) == (24, 48, True)
    assert (p.buffers.l0c, p.buffers.l1, p.buffers.ub) == (128 << 10, 512 << 10, 192 << 10)
    assert p.cores_for("cube") == 24 and p.cores_for("vector") == 48


def test_design_md_figures() -> None:
    p = load_profile("ascend310")
    assert (p.buffers.l0a, p.buffers.l0b, p.buffers.l0c, p.buffers.l1, p.buffers.ub) == (
        64 << 10, 64 << 10, 256 << 10, 1 << 20, 256 << 10)
    assert p.cube_macs_per_cycle == 4096
    b = p.bandwidth
    assert (b.l1_to_l0a, b.l1_to_l0b, b.l1_to_ub, b.ub_to_l1, b.l2_read, b.l2_write, b.ddr_read) == (
        512, 256, 128, 512, 128, 64, 67)
    assert (p.alignment.ub, p.alignment.l1, p.alignment.l0a, p.alignment.l0c) == (32, 32, 512, 64)


@pytest.mark.parametrize("name", ["ascend310", "ascend310p", "ascend910", "ascend910b"])
def test_every_figure_group_has_a_source(name: str) -> None:
    p = load_profile(name)
    for group in ("cores", "clock_ghz", "cube", "buffers_bytes", "bandwidth_bytes_per_cycle", "memory_bandwidth_gbps",
                  "default_precision_mode"):
        assert p.sources.get(group), f"{name}: no source for {group}"


def test_310p_is_the_atlas_300i_pro_part_and_the_910b_says_which() -> None:
    p = load_profile("ascend310p")
    assert (p.ai_cores, p.vector_cores, p.separated_vector_cores) == (8, 8, False)
    assert p.memory_bandwidth_gbps == 204.8 and p.buffers.l2 == 16 << 20
    assert "910B1" in load_profile("ascend910b").title


@pytest.mark.parametrize("name", profile_names())
def test_atc_compiles_fp16_by_default_on_every_part(name: str) -> None:
    assert load_profile(name).default_precision_mode == "force_fp16"


def test_a_profile_may_name_its_own_default_precision(tmp_path: Path) -> None:
    path = _write(tmp_path, {"extends": "ascend310p", "name": "exact", "default_precision_mode": "force_fp32"})
    assert load_profile(path).default_precision_mode == "force_fp32"
    bad = _write(tmp_path, {"extends": "ascend310p", "name": "bad", "default_precision_mode": "fp8"}, "bad.json")
    with pytest.raises(ProfileError, match="field 'default_precision_mode' must be one of force_fp32"):
        load_profile(bad)


def test_hardware_limits_is_a_view_of_the_profiles() -> None:
    assert UB_BYTES == {"ascend310": 256 << 10, "ascend310p": 256 << 10, "ascend910": 256 << 10,
                        "ascend910b": 192 << 10}
    assert ub_bytes() == 256 << 10


def _write(tmp_path: Path, data: dict[str, object], name: str = "x.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _base() -> dict[str, object]:
    return dict(json.loads((PROFILE_DIR / "ascend910.json").read_text()))


def test_a_user_profile_loads_from_a_path(tmp_path: Path) -> None:
    data = _base() | {"name": "mine", "title": "My part"}
    p = load_profile(_write(tmp_path, data))
    assert p.name == "mine" and p.path.endswith("x.json")


def test_extends_a_builtin_and_overrides_one_field(tmp_path: Path) -> None:
    path = _write(tmp_path, {"extends": "ascend910", "name": "fat_ub", "buffers_bytes": {"ub": 512 << 10}})
    p = load_profile(path)
    assert p.buffers.ub == 512 << 10 and p.buffers.l1 == 1 << 20 and p.ai_cores == 32


@pytest.mark.parametrize(("edit", "message"), [
    ({"buffers_bytes": {"l0a": -1}}, "field 'buffers_bytes.l0a' must be a positive integer, got -1"),
    ({"cores": {"clock_ghz": "fast"}}, "field 'cores.clock_ghz' must be a positive number, got 'fast'"),
    ({"cube": {"fp32_ratio": 2}}, "field 'cube.fp32_ratio' must be a number in (0, 1], got 2"),
    ({"alignment_bytes": {"ub": 24}}, "field 'alignment_bytes.ub' must be a power of two, got 24"),
    ({"buffers_bytes": {"l0d": 1}}, "unknown field 'buffers_bytes.l0d'"),
    ({"vector": {"class_cycles": {"elementwise": 0}}}, "field 'vector.class_cycles.elementwise' must be a positive"),
    ({"buffers_bytes": {"l0c": 1024}}, "field 'buffers_bytes.l0c' must hold at least one double-buffered block"),
])
def test_a_bad_profile_is_refused_naming_the_field(tmp_path: Path, edit: dict[str, object], message: str) -> None:
    path = _write(tmp_path, {"extends": "ascend910", "name": "bad", **edit})
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    assert f"hardware profile 'x.json': {message}" in str(info.value)


def test_missing_field_and_bad_json_and_yaml(tmp_path: Path) -> None:
    data = _base()
    del data["memory_bandwidth_gbps"]
    with pytest.raises(ProfileError, match="field 'memory_bandwidth_gbps' is missing"):
        load_profile(_write(tmp_path, data))
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ProfileError, match="not readable JSON"):
        load_profile(tmp_path / "broken.json")
    with pytest.raises(ProfileError, match="YAML profiles need pyyaml"):
        load_profile("part.yaml")


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ProfileError, match="Known profiles: ascend310, ascend310p, ascend910, ascend910b") as info:
        load_profile("gpu")
    assert info.value.exit_code == 2


def test_efficiency_calibration_and_fidelity_are_optional_sections(tmp_path: Path) -> None:
    path = _write(tmp_path, {"extends": "ascend310p", "name": "fitted", "efficiency": {"cube": 0.7},
                             "calibration": {"fitted_on": "op_summary.csv"}})
    p = load_profile(path)
    assert (p.efficiency.cube, p.efficiency.vector, p.efficiency.memory) == (0.7, 1.0, 1.0)
    assert p.calibration["fitted_on"] == "op_summary.csv"
    bad = _write(tmp_path, {"extends": "ascend310p", "name": "bad", "efficiency": {"cube": 0, "fast": 1}}, "b.json")
    problems = profile_problems(json.loads(bad.read_text()), "b.json")
    assert any("unknown field 'efficiency.fast'" in m for m in problems)
    assert any("field 'efficiency.cube' must be a positive number, got 0" in m for m in problems)
