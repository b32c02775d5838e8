"""CompileConfig: one frozen, hashable, serializable description of a compile."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ge_core
from ge_core.config import CompileConfig, MemoryConfig
from ge_core.errors import UsageError
from ge_core.samples import sample_bytes
from tests.cli.test_cli import run_cli

REPO = Path(__file__).resolve().parents[1]
FULL = CompileConfig(opt_level="O1", input_shapes="y:2;x:1,3", disabled_passes=frozenset({"CsePass"}),
                     pipeline=("InferShapePass", "ConstantFoldingPass"), hardware="ascend310",
                     precision_mode="allow_fp32_to_fp16", verify=True,
                     memory=MemoryConfig(reuse=False, strategy="best_fit", alignment=64, no_copy_concat=False,
                                         order="memory_aware"))


def _without_timings(report: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(report, sort_keys=True)
    data = json.loads(text)
    data.pop("compile_seconds")
    for p in data["passes"]:
        p.pop("seconds")
    return data


@pytest.mark.parametrize("config", [CompileConfig(), FULL], ids=["defaults", "every-field"])
def test_to_json_round_trips(config: CompileConfig) -> None:
    text = json.dumps(config.to_json())
    again = CompileConfig.from_json(text)
    assert again == config and hash(again) == hash(config) and again.key() == config.key()


def test_fields_are_normalised_so_equal_meanings_are_equal() -> None:
    assert FULL.input_shapes == "x:1,3;y:2"  # sorted by input name
    assert CompileConfig(opt_level="3") == CompileConfig(opt_level=ge_core.OptLevel.O3)
    assert CompileConfig(disabled_passes=frozenset({"CsePass", "PrunePass"})).to_json()["disabled_passes"] == [
        "CsePass", "PrunePass"]


def test_key_is_stable_across_processes_and_changes_with_every_field() -> None:
    code = "from ge_core.config import CompileConfig; print(CompileConfig(opt_level='O1').key())"
    other = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == CompileConfig(opt_level="O1").key()
    base = CompileConfig()
    changed = [dataclasses.replace(base, opt_level="O1"), dataclasses.replace(base, input_shapes="x:1"),
               dataclasses.replace(base, disabled_passes=frozenset({"CsePass"})),
               dataclasses.replace(base, pipeline=("CsePass",)), dataclasses.replace(base, hardware="ascend910"),
               dataclasses.replace(base, precision_mode="force_fp16"), dataclasses.replace(base, verify=True),
               dataclasses.replace(base, memory=MemoryConfig(alignment=32))]
    keys = {c.key() for c in changed} | {base.key()}
    assert len(keys) == len(changed) + 1


@pytest.mark.parametrize(("data", "words"), [
    ({"opt_levle": "O1"}, ["'opt_levle'", "opt_level", "memory"]),
    ({"memory": {"resue": False}}, ["'resue'", "reuse", "alignment"]),
    ({"disabled_passes": ["NoSuchPass"]}, ["NoSuchPass", "CsePass"]),
    ({"disabled_passes": "CsePass"}, ["list of pass names"]),
    ({"precision_mode": "fp8"}, ["fp8", "allow_fp32_to_fp16"]),
    ({"hardware": "ascend999"}, ["ascend999", "ascend910"]),
    ({"memory": {"strategy": "first_fit"}}, ["first_fit", "best_fit"]),
    ({"memory": {"order": "random"}}, ["random", "memory_aware"]),
    ({"memory": {"alignment": 0}}, ["positive"]),
    ({"opt_level": "O9"}, ["O9", "O0, O1 or O3"]),
    ([1, 2], ["JSON object"]),
])
def test_bad_configs_are_refused_naming_the_option_and_the_known_values(data: Any, words: list[str]) -> None:
    with pytest.raises(UsageError) as info:
        CompileConfig.from_json(data)
    text = str(info.value)
    assert all(w in text for w in words), text


def test_compile_with_a_config_gives_the_report_of_the_keyword_form() -> None:
    model = sample_bytes("mlp")
    config = CompileConfig(opt_level="O3", input_shapes="x:2,64", disabled_passes=frozenset({"CsePass"}),
                           memory=MemoryConfig(strategy="best_fit"))
    by_config = ge_core.compile(model, config)
    by_keywords = ge_core.compile(model, opt_level="O3", input_shapes="x:2,64", disabled=["CsePass"],
                                  memory_strategy="best_fit")
    assert by_config.config == by_keywords.config == config
    assert _without_timings(by_config.report) == _without_timings(by_keywords.report)
    assert by_config.report["config"] == config.to_json()


@pytest.mark.parametrize("options", [{}, {"opt_level": "O0"}, {"hardware": "ascend910"}])
def test_every_compile_report_carries_its_config(options: dict[str, str]) -> None:
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), **options)
    assert CompileConfig.from_json(compiled.report["config"]) == compiled.config


def test_a_config_and_keyword_options_together_are_refused() -> None:
    with pytest.raises(UsageError, match="opt_level"):
        ge_core.compile(sample_bytes("conv_bn_relu"), CompileConfig(), opt_level="O1")
    with pytest.raises(UsageError, match=r"unknown compile option.*'opt_lvl'"):
        ge_core.compile(sample_bytes("conv_bn_relu"), opt_lvl="O1")


def test_a_named_pipeline_runs_those_passes_in_that_order() -> None:
    config = CompileConfig(pipeline=("InferShapePass", "PrunePass", "ConstantFoldingPass"))
    compiled = ge_core.compile(sample_bytes("conv_bn_relu"), config)
    assert [r.name for r in compiled.records] == list(config.pipeline or ())


def test_a_switch_file_switches_passes_off(tmp_path: Path) -> None:
    path = tmp_path / "switches.txt"
    path.write_text("CsePass:off\nPrunePass:off\n")
    config = CompileConfig.from_switch_file(path, CompileConfig(opt_level="O1"))
    assert config.disabled_passes == {"CsePass", "PrunePass"} and config.opt_level == "O1"


def test_the_cli_reads_a_config_file_and_flags_override_it(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    config_file, report = tmp_path / "config.json", tmp_path / "report.json"
    config_file.write_text(json.dumps(CompileConfig(opt_level="O1", memory=MemoryConfig(alignment=64)).to_json()))
    code, _, err = run_cli(["compile", "sample:conv_bn_relu", "--config", str(config_file),
                            "--memory-strategy", "best_fit", "--report", str(report)], capsys)
    assert code == 0, err
    written = json.loads(report.read_text())["config"]
    assert (written["opt_level"], written["memory"]["alignment"], written["memory"]["strategy"]) == (
        "O1", 64, "best_fit")
    config_file.write_text('{"opt_level": "O1", "colour": "red"}')
    code, _, err = run_cli(["compile", "sample:conv_bn_relu", "--config", str(config_file)], capsys)
    assert code == 2 and "'colour'" in err and "opt_level" in err and "Traceback" not in err
