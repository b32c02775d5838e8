"""The Compare page's "Sweep results" tab through AppTest, on a real sweep's CSV (bundled samples, run in this
process by ge_core.sweep.run_task): the heat map's data is metric_grid's, the filters keep what they say,
refused rows show their error whole, a click on a cell or a row opens that sample and configuration on the
Graph page (sidebar and address), a model file says it must be uploaded first, and the server's sweep folder
offers only its own regular files (never a symlink, never a path outside it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from ge_core.errors import UsageError
from ge_core.sweep import ResultsStore, load_results, metric_grid, plan_tasks, run_task
from tests.app.apptest import open_page
from workbench_ui.hardware_picker import HARDWARE_KEY, HARDWARE_PARAM
from workbench_ui.model_picker import SAMPLE_KEY
from workbench_ui.session import OPT_KEY
from workbench_ui.sweep_files import SWEEP_DIR_ENV, read_server_file, server_file, server_files
from workbench_ui.sweep_view import FILE_KEY, FROM_KEY, HEAT_KEY, METRIC_PARAM, SERVER, UPLOAD_KEY

COMPARE = "app_pages/compare.py"
MODELS = ["sample:mlp", "sample:conv_bn_relu", "sample:unsupported_op"]


@pytest.fixture(scope="module")
def sweep_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real sweep: 3 samples x O1,O3 on ascend910 and ascend310 (the unsupported one refused), ~1 s."""
    out = tmp_path_factory.mktemp("sweep") / "results.csv"
    store = ResultsStore(out)
    for task in plan_tasks(MODELS, "O1,O3", ["ascend910", "ascend310"]):
        store.add(run_task(task))
    store.close()
    return out


def uploaded(csv: Path, name: str = "results.csv") -> AppTest:
    at = open_page(COMPARE)
    (uploader,) = [u for u in at.file_uploader if u.key == UPLOAD_KEY]
    uploader.set_value((name, csv.read_bytes(), "text/csv")).run()
    assert not at.exception and not at.error
    return at


def table(at: AppTest, key: str = "ge_sweep_table") -> Any:
    """The st.dataframe drawn with `key` (its element: .value is the frame, .proto.id the widget's id)."""
    (found,) = [d for d in at.dataframe if d.proto.id.endswith(f"-{key}")]
    return found


def chart_data(at: AppTest, key: str) -> pd.DataFrame:
    (chart,) = [c.proto for c in at.get("vega_lite_chart") if c.proto.id.endswith(f"-{key}")]
    return pa.ipc.open_stream(chart.datasets[0].data.data).read_all().to_pandas()


def select(at: AppTest, element_id: str, value: dict[str, object]) -> AppTest:
    """The browser's report of a selection on a chart or a table (their widget state is JSON text)."""
    states = at._tree.get_widget_states()
    state = WidgetState(id=element_id)
    state.string_value = json.dumps({"selection": value})
    states.widgets.append(state)
    return at._run(states)


def test_the_heat_map_is_metric_grid_of_the_uploaded_sweep(sweep_csv: Path) -> None:
    at = uploaded(sweep_csv)
    rows = load_results(sweep_csv)
    for metric in ("simulated_us", "kernels"):
        if metric != "simulated_us":
            (picker,) = [s for s in at.selectbox if s.label == "Metric"]
            picker.set_value(metric).run()
            assert at.query_params[METRIC_PARAM] == metric
        cells = chart_data(at, HEAT_KEY)
        shown = cells.pivot(index="model", columns="column", values="value")
        grid = metric_grid(rows, metric)
        assert list(grid.columns) == ["O1 @ ascend910", "O1 @ ascend310", "O3 @ ascend910", "O3 @ ascend310"]
        pd.testing.assert_frame_equal(shown.reindex(index=grid.index, columns=grid.columns).astype("Float64"), grid,
                                      check_names=False)
    assert set(cells.loc[cells["model"] == "sample:unsupported_op", "label"]) == {"refused"}


def test_filters_keep_their_rows_and_refused_rows_show_their_error_whole(sweep_csv: Path) -> None:
    at = uploaded(sweep_csv)
    rows = load_results(sweep_csv)
    at.multiselect(key="ge_sweep_filter_hardware").set_value(["ascend310"]).run()
    at.multiselect(key="ge_sweep_filter_config_name").set_value(["O3"]).run()
    frame = table(at).value
    want = rows[(rows["hardware"] == "ascend310") & (rows["config_name"] == "O3")]
    assert list(frame["model"]) == list(want["model"]) and list(frame["simulated_us"].isna()) == [False, False, True]
    assert set(chart_data(at, HEAT_KEY)["column"]) == {"O3"}  # one hardware left: columns are config names
    at.multiselect(key="ge_sweep_filter_status").set_value(["refused"]).run()
    frame = table(at).value
    (error,) = set(want.loc[want["status"] == "refused", "error"])
    assert list(frame["status"]) == ["refused"] and "unsupported operator" in error
    assert [c.value for c in at.code] == [error]  # the whole text, multi-line as written


def test_a_click_on_a_cell_opens_that_sample_and_configuration_on_the_graph_page(sweep_csv: Path) -> None:
    at = uploaded(sweep_csv)
    (chart,) = [c.proto for c in at.get("vega_lite_chart") if c.proto.id.endswith(f"-{HEAT_KEY}")]
    select(at, chart.id, {"pick": [{"model": "sample:mlp", "config_name": "O1", "hardware": "ascend310"}]})
    assert not at.exception
    assert at.title[0].value == "Graph"
    assert at.session_state[SAMPLE_KEY] == "mlp" and at.session_state[OPT_KEY] == "O1"
    assert at.session_state[HARDWARE_KEY] == "ascend310"
    assert at.query_params[SAMPLE_KEY] == "mlp" and at.query_params[HARDWARE_PARAM] == "ascend310"


def test_a_row_of_a_model_file_says_it_must_be_uploaded_first(sweep_csv: Path, tmp_path: Path) -> None:
    rows = load_results(sweep_csv)
    rows["model"] = rows["model"].str.replace("sample:mlp", "models/mlp.onnx")
    moved = tmp_path / "moved.csv"
    rows.to_csv(moved, index=False)
    at = uploaded(moved, "moved.csv")
    rows_id = table(at).proto.id
    select(at, rows_id, {"rows": [0], "columns": [], "cells": []})
    assert at.title[0].value == "Compare"
    shown = [e.value.replace("\\", "") for e in at.error]  # markdown-escaped on the page
    assert any("'models/mlp.onnx' is a model file, not a bundled sample" in e and "Upload it in the sidebar" in e
               for e in shown)
    select(at, rows_id, {"rows": [4], "columns": [], "cells": []})  # conv_bn_relu's first row: a sample
    assert at.title[0].value == "Graph" and at.session_state[SAMPLE_KEY] == "conv_bn_relu"


def test_the_server_folder_offers_its_own_files_only(sweep_csv: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    folder, outside = tmp_path / "sweeps", tmp_path / "outside"
    folder.mkdir(), outside.mkdir()
    (folder / "a.csv").write_bytes(sweep_csv.read_bytes())
    (folder / "notes.txt").write_text("not a sweep")
    (outside / "secret.csv").write_bytes(sweep_csv.read_bytes())
    os.symlink(outside / "secret.csv", folder / "link.csv")
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.csv").write_bytes(sweep_csv.read_bytes())
    assert server_files(folder) == ["a.csv"]
    for name in ("link.csv", "../outside/secret.csv", str(outside / "secret.csv"), "sub/deep.csv", "notes.txt"):
        with pytest.raises(UsageError, match="is not a results file in the server's sweep folder"):
            server_file(name, folder)
    data, suffix = read_server_file("a.csv", folder)
    assert data == sweep_csv.read_bytes() and suffix == ".csv"

    monkeypatch.setenv(SWEEP_DIR_ENV, str(folder))
    at = AppTest.from_file(str(Path(__file__).parents[2] / "app.py"), default_timeout=60)
    at.query_params["sweep"] = "../outside/secret.csv"
    at.run().switch_page(COMPARE).run()
    assert at.radio(key=FROM_KEY).value == SERVER and at.selectbox(key=FILE_KEY).options == ["a.csv"]
    assert any("not a results file of the server's sweep folder" in w.value for w in at.warning)
    assert at.query_params["sweep"] == "a.csv" and not at.exception
    assert len(table(at).value) == len(load_results(sweep_csv))
