"""The sweep's plan: models, named configs and hardware crossed into tasks, every bad input refused up front."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ge_core.config import CompileConfig
from ge_core.errors import UsageError
from ge_core.samples import get_sample
from ge_core.sweep.plan import named_configs, plan_tasks, read_configs


def test_models_configs_and_hardware_cross_into_distinct_tasks() -> None:
    tasks = plan_tasks(["sample:mlp", "sample:conv_bn_relu"], "O1,O3", ["ascend910", "ascend310"])
    cells = [(t.model.name, t.config.name, t.hardware) for t in tasks]
    assert cells == [(m, c, h) for m in ("sample:mlp", "sample:conv_bn_relu") for c in ("O1", "O3")
                     for h in ("ascend910", "ascend310")]
    assert len({t.key for t in tasks}) == 8


def test_a_task_compiles_for_its_hardware_with_the_samples_shapes_and_keeps_the_given_configs_key() -> None:
    task = plan_tasks("sample:mlp", "O3", "ascend310")[0]
    compiled_with = task.compile_config()
    assert compiled_with.hardware == "ascend310"
    assert compiled_with.input_shapes == get_sample("mlp").input_shapes
    assert task.key.split(":")[1] == CompileConfig(opt_level="O3").key()


def test_without_a_hardware_axis_each_config_keeps_its_own_target() -> None:
    configs = [("cpu", CompileConfig(opt_level="O1")), ("npu", CompileConfig(opt_level="O1", hardware="ascend910"))]
    assert [t.hardware for t in plan_tasks("sample:mlp", configs)] == ["", "ascend910"]


def test_a_folder_gives_each_onnx_file_and_the_key_follows_the_content(tmp_path: Path) -> None:
    for name in ("mlp", "conv_bn_relu"):
        (tmp_path / f"{name}.onnx").write_bytes(get_sample(name).path.read_bytes())
    (tmp_path / "notes.txt").write_text("not a model")
    tasks = plan_tasks([tmp_path], "O1")
    assert [Path(t.model.name).name for t in tasks] == ["conv_bn_relu.onnx", "mlp.onnx"]
    before = {t.model.name: t.key for t in tasks}
    (tmp_path / "mlp.onnx").write_bytes(get_sample("residual_block").path.read_bytes())
    after = {t.model.name: t.key for t in plan_tasks([tmp_path], "O1")}
    changed = [name for name in before if before[name] != after[name]]
    assert [Path(n).name for n in changed] == ["mlp.onnx"]


def test_a_configs_file_names_its_entries_and_refuses_a_bad_one(tmp_path: Path) -> None:
    good = tmp_path / "configs.json"
    good.write_text(json.dumps([{"name": "no-reuse", "opt_level": "O3", "memory": {"reuse": False}},
                                {"opt_level": "O1"}, {"opt_level": "O3", "disabled_passes": ["CsePass"]}]))
    named = read_configs(str(good))
    assert [c.name for c in named][:2] == ["no-reuse", "O1"]
    assert named[2].name.startswith("O3-") and named[0].config.memory.reuse is False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"opt_level": "O1"}, {"opt_level": "O1", "colour": "red"}]))
    with pytest.raises(UsageError, match=r"entry 2: .*'colour'"):
        read_configs(str(bad))


@pytest.mark.parametrize(("models", "configs", "hardware", "message"), [
    (["sample:nope"], "O1", (), "unknown sample 'nope'"),
    (["missing.onnx"], "O1", (), "model 'missing.onnx' not found"),
    (["sample:mlp"], "O7", (), "unknown opt level 'O7'"),
    (["sample:mlp"], "O1", ["ascend999"], "ascend999"),
    (["sample:mlp"], "missing.json", (), "configs file 'missing.json' not found"),
    (["sample:mlp"], "", (), "at least one configuration"),
])
def test_bad_inputs_are_refused_before_any_task_runs(models: list[str], configs: str, hardware: list[str],
                                                     message: str) -> None:
    with pytest.raises(UsageError, match=message):
        plan_tasks(models, configs, hardware)


def test_an_empty_folder_and_duplicate_config_names_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"holds no \.onnx files"):
        plan_tasks([tmp_path], "O1")
    with pytest.raises(UsageError, match="'O1' is used twice"):
        named_configs(["O1", CompileConfig(opt_level="O1")])
