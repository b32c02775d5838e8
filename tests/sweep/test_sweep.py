"""Sweeps on a LocalCluster of 2 workers (threads in this process, so a fault can be planted in a task):
rows equal single-process compile/simulate, every outcome is a row, rerunning resumes, CSV = parquet."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from distributed import LocalCluster

import ge_core
import ge_core.sweep.task as sweep_task
from ge_core.runtime import execute, random_feeds, relative_error
from ge_core.samples import sample_bytes
from ge_core.sweep import load_results, plan_tasks, sweep

REPO = Path(__file__).resolve().parents[2]
MODELS = ["sample:mlp", "sample:conv_bn_relu", "sample:unsupported_op"]
NUMBERS = ["nodes", "kernels", "arena_bytes", "theory_min_bytes", "simulated_us", "max_rel_error"]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    # Threads in this process: no memory limit, which would count the whole test process and pause the workers.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                      memory_limit=0) as cluster:
        yield cluster.scheduler_address


class Recorder:
    """The progress a sweep reports; `stop_after` rows raises KeyboardInterrupt (a user's Ctrl-C)."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.started: tuple[int, int] | None = None
        self.rows: list[Mapping[str, Any]] = []
        self.stop_after = stop_after

    def start(self, total: int, skipped: int, cluster: str) -> None:
        self.started = (total, skipped)

    def row(self, row: Mapping[str, Any]) -> None:
        self.rows.append(row)
        if self.stop_after is not None and len(self.rows) >= self.stop_after:
            raise KeyboardInterrupt


def single_process(model: str, task_config: ge_core.CompileConfig, hardware: str) -> dict[str, Any]:
    """The same measurements with the public API in this process, no sweep involved."""
    compiled = ge_core.compile(sample_bytes(model.removeprefix("sample:")), task_config)
    feeds = random_feeds(compiled.input_graph, 0)
    want = execute(compiled.input_graph, feeds)
    result = ge_core.simulate(compiled, hardware, feeds)
    assert compiled.memory is not None
    return {"nodes": len(compiled.graph), "kernels": compiled.plan.kernels, "arena_bytes": compiled.memory.arena_bytes,
            "theory_min_bytes": compiled.memory.theory_min_bytes, "simulated_us": result.total_us,
            "max_rel_error": max(relative_error(result.outputs[k], v) for k, v in want.items())}


def test_rows_equal_single_process_results_and_refusals_are_rows(scheduler: str, tmp_path: Path) -> None:
    rows = sweep(MODELS, "O1,O3", ["ascend910", "ascend310"], scheduler=scheduler, out=tmp_path / "r.parquet")
    assert len(rows) == 12 and rows["key"].is_unique
    refused = rows[rows["model"] == "sample:unsupported_op"]
    assert set(refused["status"]) == {"refused"} and refused["error"].str.contains("unsupported").all()
    ok = rows[rows["model"] != "sample:unsupported_op"]
    assert set(ok["status"]) == {"ok"} and set(ok["worker"].str.rpartition(":")[2]) == {str(os.getpid())}
    for task in plan_tasks(MODELS[:2], "O1,O3", ["ascend910", "ascend310"]):
        row = rows.set_index("key").loc[task.key]
        want = single_process(task.model.name, task.compile_config(), task.hardware)
        assert {n: row[n] for n in NUMBERS} == want, task.key
    pd.testing.assert_frame_equal(load_results(tmp_path / "r.parquet").set_index("key").loc[rows["key"]],
                                  rows.set_index("key"))


def test_a_task_that_raises_or_kills_its_process_is_a_failed_row_and_the_sweep_goes_on(
        scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real_compile = sweep_task.ge_compile

    def faulty_compile(source: Any, config: ge_core.CompileConfig) -> Any:  # planted in the task's process
        if config.opt_level == "O1":
            raise RuntimeError("planted fault")
        if config.hardware == "ascend310":
            os.kill(os.getpid(), signal.SIGKILL)
        return real_compile(source, config)

    monkeypatch.setattr(sweep_task, "ge_compile", faulty_compile)
    rows = sweep(["sample:mlp"], "O1,O3", ["ascend910", "ascend310"], scheduler=scheduler).set_index("config_name")
    raised = rows.loc["O1"]
    assert list(raised["status"]) == ["failed"] * 2
    where = r"internal error RuntimeError: planted fault \(at .*tests/sweep/test_sweep.py:\d+ in faulty_compile\)"
    assert raised["error"].str.contains(where).all()
    o3 = rows.loc["O3"].set_index("hardware")
    assert o3.loc["ascend910", "status"] == "ok"
    assert o3.loc["ascend310", "status"] == "failed" and "died (signal SIGKILL)" in o3.loc["ascend310", "error"]


def test_outputs_that_moved_from_o0_fail_in_an_exact_precision_mode_only(
        scheduler: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real_execute = sweep_task.execute

    def doubled_reference(graph: Any, feeds: Any) -> dict[str, Any]:  # planted: O0's outputs read twice as big
        return {name: value * 2 for name, value in real_execute(graph, feeds).items()}

    monkeypatch.setattr(sweep_task, "execute", doubled_reference)
    configs = {"exact": ge_core.CompileConfig(opt_level="O3", precision_mode="force_fp32"),
               "fp16": ge_core.CompileConfig(opt_level="O3", precision_mode="allow_fp32_to_fp16")}
    rows = sweep(["sample:mlp"], configs, "ascend910", scheduler=scheduler).set_index("config_name")
    assert rows.loc["exact", "status"] == "failed" and rows.loc["exact", "max_rel_error"] > 0.4
    assert "differs from the O0 graph's by a relative 0.5" in rows.loc["exact", "error"]
    assert rows.loc["fp16", "status"] == "ok" and rows.loc["fp16", "max_rel_error"] > 0.4  # rounding: recorded


def test_a_task_past_its_timeout_is_a_timeout_row(scheduler: str) -> None:
    rows = sweep(["sample:synthetic_10k", "sample:mlp"], "O3", scheduler=scheduler, timeout=1.0).set_index("model")
    assert rows.loc["sample:synthetic_10k", "status"] == "timeout"
    assert "1 s timeout" in rows.loc["sample:synthetic_10k", "error"]
    assert rows.loc["sample:synthetic_10k", "seconds"] < 10
    assert rows.loc["sample:mlp", "status"] == "ok"


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_rerunning_skips_finished_tasks_and_an_interrupted_sweep_resumes(scheduler: str, tmp_path: Path,
                                                                         suffix: str) -> None:
    out = tmp_path / f"results{suffix}"
    interrupted = Recorder(stop_after=2)
    with pytest.raises(KeyboardInterrupt):
        sweep(MODELS[:2], "O0,O1,O3", "ascend910", scheduler=scheduler, out=out, progress=interrupted)
    kept = load_results(out)
    assert 2 <= len(kept) < 6 and kept["key"].is_unique  # written as rows came, not at the end
    resumed = Recorder()
    rows = sweep(MODELS[:2], "O0,O1,O3", "ascend910", scheduler=scheduler, out=out, progress=resumed)
    assert resumed.started == (6 - len(kept), len(kept))
    assert len(rows) == 6 and set(rows["status"]) == {"ok"}
    again = Recorder()
    rerun = sweep(MODELS[:2], "O0,O1,O3", "ascend910", scheduler=scheduler, out=out, progress=again)
    assert again.started == (0, 6) and again.rows == []
    pd.testing.assert_frame_equal(rerun, rows)  # the same rows, not measured again (seconds, worker)
    assert sorted(load_results(out)["key"]) == sorted(rows["key"])


def test_ge_core_is_callable_as_sweep_and_importing_ge_core_leaves_dask_out(scheduler: str) -> None:
    rows = ge_core.sweep(["sample:mlp"], "O3", scheduler=scheduler)
    assert list(rows["status"]) == ["ok"] and rows.loc[0, "hardware"] == "" and pd.isna(rows.loc[0, "simulated_us"])
    probe = "import sys, ge_core; print(any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules))"
    imported = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "False"
