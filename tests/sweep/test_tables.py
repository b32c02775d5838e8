"""The Compare page's sweep views as data: filters, the heat map's cells (metric_grid in long form), the
Pareto front and its geometric-mean aggregate, what a click opens on the Graph page, and reading an upload's
bytes (pandas and pyarrow only; a pickle is refused)."""

from __future__ import annotations

import io
import math
import pickle
from pathlib import Path

import pandas as pd
import pytest

from ge_core.errors import UsageError
from ge_core.sweep import (
    filter_results,
    graph_target,
    grid_cells,
    load_results,
    metric_grid,
    pareto_points,
    read_results,
)
from ge_core.sweep.results import ResultsStore, to_frame
from tests.sweep.test_results import rows


def results() -> pd.DataFrame:
    return to_frame(rows())


def test_filters_keep_the_rows_among_the_values_given() -> None:
    every = results()
    assert filter_results(every).equals(every)
    kept = filter_results(every, statuses=["ok"], models=["sample:mlp"])
    assert list(zip(kept["model"], kept["status"], strict=True)) == [("sample:mlp", "ok")]
    assert len(filter_results(every, configs=["O3"], hardware=["ascend910"])) == 2
    assert filter_results(every, hardware=["ascend310"]).empty


@pytest.mark.parametrize("metric", ["simulated_us", "kernels", "max_rel_error"])
def test_grid_cells_pivot_back_to_metric_grid_and_carry_what_a_click_opens(metric: str) -> None:
    every = results()
    cells = grid_cells(every, metric)
    back = cells.pivot(index="model", columns="column", values="value")
    grid = metric_grid(every, metric)
    pd.testing.assert_frame_equal(back.reindex(index=grid.index, columns=grid.columns), grid, check_names=False)
    refused = cells[(cells["model"] == "sample:mlp") & (cells["column"] == "O3")].iloc[0]
    assert refused["status"] == "refused" and refused["error"] == rows()[1]["error"] and pd.isna(refused["value"])
    assert set(cells["config_name"]) == {"O1", "O3"} and set(cells["hardware"]) == {"ascend910"}


def test_with_two_hardware_profiles_a_cell_names_its_config_and_hardware() -> None:
    made = rows()
    other = [dict(r, hardware="ascend310", key=r["key"] + "-310") for r in made]
    cells = grid_cells(to_frame(made + other), "kernels")
    cell = cells[cells["column"] == "O1 @ ascend310"].iloc[0]
    assert (cell["config_name"], cell["hardware"]) == ("O1", "ascend310")


def test_the_pareto_front_holds_the_points_no_other_beats_on_both() -> None:
    made = rows()
    for row, (us, arena) in zip(made, [(10.0, 400), (5.0, 900), (20.0, 100), (12.0, 500)], strict=True):
        row.update(status="ok", simulated_us=us, arena_bytes=arena)
    mlp = pareto_points(to_frame(made), "sample:mlp")
    assert list(zip(mlp["config_name"], mlp["on_front"], strict=True)) == [("O1", True), ("O3", True)]
    made[1].update(simulated_us=11.0, arena_bytes=400)  # now O1 beats it on latency, ties on arena
    mlp = pareto_points(to_frame(made), "sample:mlp")
    assert list(mlp["on_front"]) == [True, False]


def test_the_aggregate_is_the_geometric_mean_over_models_with_every_point() -> None:
    made = rows()
    for row, (us, arena) in zip(made, [(10.0, 400), (40.0, 100), (20.0, 100), (10.0, 400)], strict=True):
        row.update(status="ok", simulated_us=us, arena_bytes=arena)
    points = pareto_points(to_frame(made))
    o1 = points[points["config_name"] == "O1"].iloc[0]
    assert o1["simulated_us"] == pytest.approx(math.sqrt(10.0 * 20.0)) and o1["models"] == 2
    assert o1["arena_bytes"] == pytest.approx(math.sqrt(400 * 100))
    made[3].update(status="refused")  # conv_bn_relu lacks O3: only mlp is averaged
    points = pareto_points(to_frame(made))
    assert list(points["models"]) == [1, 1] and list(points["simulated_us"]) == pytest.approx([10.0, 40.0])
    for row in made:
        row.update(status="refused")
    assert pareto_points(to_frame(made)).empty and pareto_points(to_frame(made), "sample:mlp").empty


def test_graph_target_reads_the_rows_config() -> None:
    made = rows()
    made[0]["config"] = made[0]["config"].replace('"disabled_passes": []', '"disabled_passes": ["CsePass"]')
    target = graph_target(to_frame(made), "sample:mlp", "O1", "ascend910")
    assert (target.sample, target.opt_level, target.disabled_passes, target.hardware, target.not_applied) == \
        ("mlp", "O1", ("CsePass",), "ascend910", ())
    fp16 = made[2]["config"].replace('"precision_mode": null', '"precision_mode": "allow_fp32_to_fp16"')
    made[2].update(model="models/resnet.onnx", config=fp16)
    path = graph_target(to_frame(made), "models/resnet.onnx", "O1", "ascend910")
    assert path.sample is None and path.not_applied == ("precision mode 'allow_fp32_to_fp16'",)
    with pytest.raises(UsageError, match="no row for model 'sample:mlp', config 'O9'"):
        graph_target(to_frame(made), "sample:mlp", "O9", "ascend910")


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_read_results_of_a_files_bytes_equals_load_results(tmp_path: Path, suffix: str) -> None:
    store = ResultsStore(tmp_path / f"r{suffix}")
    for row in rows():
        store.add(row)
    store.close()
    data = (tmp_path / f"r{suffix}").read_bytes()
    pd.testing.assert_frame_equal(read_results(data, suffix, "up"), load_results(tmp_path / f"r{suffix}"))
    with pytest.raises(UsageError, match=r"(has \d+ rows, )?more than the 3"):
        read_results(data, suffix, "up", max_rows=3)


def test_bytes_that_are_no_results_file_are_refused_in_words_and_never_unpickled() -> None:
    with pytest.raises(UsageError, match=r"'junk\.parquet' is not a Parquet file"):
        read_results(pickle.dumps(results()), ".parquet", "junk.parquet", max_rows=10)
    with pytest.raises(UsageError, match=r"cannot be read as a sweep results \.parquet file"):
        read_results(pickle.dumps(results()), ".parquet", "junk.parquet")
    with pytest.raises(UsageError, match="is not a sweep results file: it has no key"):
        read_results(b"a,b\n1,2\n", ".csv", "other.csv")
    buffer = io.BytesIO()
    results().assign(nodes="many").to_csv(buffer, index=False)
    with pytest.raises(UsageError, match=r"cannot be read as a sweep results \.csv file"):
        read_results(buffer.getvalue(), ".csv", "bad.csv")
