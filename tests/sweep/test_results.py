"""Results files: rows kept once by key, a journal that survives a kill, atomic rewrites, CSV = parquet,
and the Compare page's tables built from them."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from ge_core.errors import UsageError
from ge_core.sweep.plan import plan_tasks
from ge_core.sweep.results import COLUMNS, ResultsStore, Row, empty_row, load_results, to_frame
from ge_core.sweep.tables import metric_grid, metrics_table
from ge_core.viz.compare import METRICS


def rows() -> list[Row]:
    """Rows as tasks write them: ok ones with numbers, a refusal with a multi-line error, an inf error."""
    made = []
    for i, task in enumerate(plan_tasks(["sample:mlp", "sample:conv_bn_relu"], "O1,O3", ["ascend910"])):
        row = empty_row(task)
        row.update(status="ok", nodes=10 - i, kernels=9 - i, arena_bytes=1024 * (i + 1), theory_min_bytes=1024,
                   simulated_us=20.5 - i, compile_seconds=0.01 * i, max_rel_error=1e-7 * i, seconds=0.1,
                   worker="host:1")
        made.append(row)
    made[1].update(status="refused", error='node "a,b" (Foo):\n  - unsupported, quoted "x"', nodes=None,
                   kernels=None, arena_bytes=None, theory_min_bytes=None, simulated_us=None, max_rel_error=None)
    made[3].update(status="failed", error="output 'y' differs", max_rel_error=math.inf)
    return made


def test_csv_and_parquet_hold_the_same_typed_rows(tmp_path: Path) -> None:
    frames = []
    for suffix in (".csv", ".parquet"):
        store = ResultsStore(tmp_path / f"results{suffix}")
        for row in rows():
            store.add(row)
        store.close()
        frames.append(load_results(tmp_path / f"results{suffix}"))
    csv, parquet = frames
    pd.testing.assert_frame_equal(csv, parquet)
    assert list(csv.columns) == list(COLUMNS) and dict(csv.dtypes.astype(str)) == COLUMNS
    assert csv.loc[1, "error"] == rows()[1]["error"] and pd.isna(csv.loc[1, "kernels"])
    assert csv.loc[3, "max_rel_error"] == math.inf and csv.loc[0, "error"] == ""


def test_a_killed_sweep_leaves_a_journal_the_next_store_reads(tmp_path: Path) -> None:
    out = tmp_path / "results.parquet"
    first = ResultsStore(out)
    for row in rows()[:3]:
        first.add(row)  # no close(): the process is gone, the journal holds the rows
    with first.journal.open("a") as journal:
        journal.write('{"key": "torn-by-the-kill", "mod')
    second = ResultsStore(out)
    assert second.keys == {r["key"] for r in rows()[:3]}
    second.add(rows()[3])
    second.close()
    assert not second.journal.exists() and [p.name for p in tmp_path.iterdir()] == ["results.parquet"]
    assert sorted(load_results(out)["key"]) == sorted(r["key"] for r in rows())


def test_a_row_added_twice_is_kept_once_with_its_latest_values(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "r.csv")
    row = rows()[0]
    store.add(row)
    store.add(row | {"status": "timeout"})
    store.close()
    frame = load_results(tmp_path / "r.csv")
    assert list(frame["status"]) == ["timeout"]


def test_only_parquet_and_csv_files_of_sweep_rows_are_read(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"must end in .parquet or .csv"):
        ResultsStore(tmp_path / "r.xlsx")
    other = tmp_path / "other.csv"
    pd.DataFrame({"model": ["a"]}).to_csv(other, index=False)
    with pytest.raises(UsageError, match=r"not a sweep results file: .*model_hash"):
        load_results(other)


def test_the_metrics_table_matches_the_compare_pages_columns_with_deltas_per_hardware() -> None:
    frame = to_frame(rows())
    table = metrics_table(frame, "sample:mlp")
    assert list(table.columns) == ["config", "key", "hardware", "status", "error", *METRICS,
                                   *[f"{m}_delta" for m in METRICS]]
    assert list(table["config"]) == ["O1", "O3"]
    assert table.loc[0, "kernels_delta"] == 0 and pd.isna(table.loc[1, "kernels_delta"])  # O3 was refused
    with pytest.raises(UsageError, match="no rows for model 'sample:nope'"):
        metrics_table(frame, "sample:nope")


def test_the_grid_is_model_by_config_with_empty_cells_where_no_ok_row_is() -> None:
    grid = metric_grid(to_frame(rows()), "simulated_us")
    assert list(grid.index) == ["sample:mlp", "sample:conv_bn_relu"] and list(grid.columns) == ["O1", "O3"]
    assert grid.loc["sample:mlp", "O1"] == 20.5 and pd.isna(grid.loc["sample:mlp", "O3"])
    assert pd.isna(grid.loc["sample:conv_bn_relu", "O3"])  # failed: no number to show
    with pytest.raises(UsageError, match="unknown sweep metric"):
        metric_grid(to_frame(rows()), "colour")
