"""`python -m ge_core sweep`: rows, progress and resume through the CLI; bad usage exits 2 with a message."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import LocalCluster

import ge_core.sweep.runner as runner
from ge_core.cli.main import main
from ge_core.sweep import load_results


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    # Threads in this process: no memory limit, which would count the whole test process and pause the workers.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                      memory_limit=0) as cluster:
        yield cluster.scheduler_address


def test_a_sweep_from_a_configs_file_writes_rows_and_a_rerun_resumes(
        scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configs = tmp_path / "configs.json"
    configs.write_text(json.dumps([{"name": "base", "opt_level": "O1"},
                                   {"name": "no-reuse", "opt_level": "O3", "memory": {"reuse": False}}]))
    out = tmp_path / "results.csv"
    args = ["sweep", "sample:mlp", "sample:shape_mismatch", "--configs", str(configs), "--hardware", "ascend910",
            "--scheduler", scheduler, "--out", str(out)]
    assert main(args) == 0
    printed, progress = capsys.readouterr()
    assert "4 task(s): 2 ok, 2 refused, 0 failed, 0 timeout; ran 4, 0 already in" in printed
    assert "sweep: 4 task(s) to run, 0 already done; Dask scheduler" in progress and "4/4" in progress
    rows = load_results(out)
    assert sorted(rows["config_name"]) == ["base", "base", "no-reuse", "no-reuse"]
    no_reuse = rows[(rows["config_name"] == "no-reuse") & (rows["status"] == "ok")].iloc[0]
    assert no_reuse["arena_bytes"] > rows[(rows["config_name"] == "base") & (rows["status"] == "ok")].iloc[0][
        "arena_bytes"]
    assert main(args) == 0
    printed, progress = capsys.readouterr()
    assert "ran 0, 4 already in" in printed and "0 task(s) to run, 4 already done" in progress


@pytest.mark.parametrize(("extra", "message"), [
    (["sample:nope", "--configs", "O1"], "unknown sample 'nope'"),
    (["sample:mlp", "--configs", "O9"], "unknown opt level 'O9'"),
    (["sample:mlp", "--configs", "O1", "--timeout", "0"], "timeout must be a positive number"),
])
def test_bad_usage_exits_2_with_a_message_and_no_traceback(extra: list[str], message: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", *extra, "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_an_unknown_results_suffix_and_both_workers_and_a_scheduler_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "sample:mlp", "--configs", "O1", "--out", str(tmp_path / "r.xlsx")]) == 2
    assert "must end in .parquet or .csv" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", "sample:mlp", "--configs", "O1", "--workers", "2", "--scheduler", "tcp://h:1", "--out", "r.csv"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", "1s")
    code = main(["sweep", "sample:mlp", "--configs", "O1", "--scheduler", "tcp://127.0.0.1:9", "--out",
                 str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot reach the Dask scheduler 'tcp://127.0.0.1:9'" in err and "dask scheduler" in err
    assert not (tmp_path / "r.csv").exists()  # no task ran: no results file is made


def test_the_command_starts_a_local_cluster_with_its_dashboard(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "results.parquet"
    assert main(["sweep", "sample:mlp", "--configs", "O3", "--hardware", "ascend310", "--workers", "1",
                 "--out", str(out)]) == 0
    progress = capsys.readouterr().err
    assert "local Dask cluster, 1 worker(s), dashboard http://" in progress and "1/1" in progress
    rows = load_results(out)
    assert list(rows["status"]) == ["ok"] and list(rows["hardware"]) == ["ascend310"]
    assert rows.loc[0, "worker"].rpartition(":")[2] != str(os.getpid())  # run by the cluster's worker process
