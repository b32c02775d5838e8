"""The Compare page's "Sweep results" tab: a sweep's results file (uploaded, or one of the server's sweep
folder: workbench_ui.sweep_files) as a heat map model x config of any metric, latency against arena bytes
with the Pareto front, a filtered table with a CSV download, and every row that did not finish with its
error in full. A click on a cell or a row opens that model and configuration on the Graph page: the
sidebar's sample, opt level, passes switched off and hardware are set, then the page is switched.
The server file and the metric live in the address (`?sweep=NAME&sweep_metric=kernels`)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import streamlit as st

from ge_core import profile_names
from ge_core.errors import GEError, quote
from ge_core.samples import list_samples
from ge_core.sweep import (
    STATUSES,
    GraphTarget,
    filter_results,
    graph_target,
    grid_cells,
    pareto_points,
)
from workbench_ui import address
from workbench_ui.analysis import address_option, memo, table
from workbench_ui.hardware_picker import HARDWARE_KEY, HARDWARE_PARAM, NONE
from workbench_ui.model_picker import SAMPLE_KEY, SOURCE_KEY
from workbench_ui.navigation import GRAPH_PAGE
from workbench_ui.persist import keep
from workbench_ui.session import DISABLED_KEY, OPT_KEY
from workbench_ui.sweep_charts import PICK, heat_map, pareto_chart
from workbench_ui.sweep_files import parse_upload, read_server_file, server_files, sweep_dir
from workbench_ui.text import code_span, md_escape

SWEEP_PARAM = "sweep"  # ?sweep=NAME: a results file of the server's sweep folder
METRIC_PARAM = "sweep_metric"
FROM_KEY = "ge_sweep_from"
FILE_KEY = "ge_sweep_file"
UPLOAD_KEY = "ge_sweep_upload"
UPLOADED_KEY = "ge_sweep_uploaded"  # (name, bytes) of the last upload: the way back from the Graph page keeps it
OPEN_KEY = "ge_sweep_open"  # the GraphTarget a click asked for, opened at the start of the next run
PROBLEM_KEY = "ge_sweep_open_problem"
HEAT_KEY = "ge_sweep_heat"
UPLOAD, SERVER = "Upload a file", "The server's sweep folder"
AGGREGATE = "all models (geometric mean)"
MAX_ERROR_GROUPS = 40  # distinct (status, error) texts written out below the table
METRIC_TITLES = {"simulated_us": "simulated µs", "arena_bytes": "arena bytes", "kernels": "kernels",
                 "nodes": "nodes", "theory_min_bytes": "lower bound bytes", "compile_seconds": "compile s",
                 "max_rel_error": "max rel. error vs O0"}
TABLE_COLUMNS = ["model", "config_name", "hardware", "status", *METRIC_TITLES, "error", "config_key", "key"]
SWEEP_INTRO = (
    "**What am I looking at?** The rows of a sweep (`python -m ge_core sweep MODEL... --configs O1,O3 "
    "--hardware ascend910 --out results.csv`, see docs/sweeps.md): one per model, configuration and "
    "hardware. The heat map shows one metric for every model and configuration (grey: no `ok` row, its "
    "status written in); the Pareto chart shows which configurations no other beats on both latency and "
    "arena bytes. Click a cell or a table row to open that model and configuration on the Graph page."
)


def sweep_loaded() -> bool:
    """A sweep is picked (the address names a server file, or one was uploaded): the page opens on its tab."""
    return bool(address.read(SWEEP_PARAM)) or UPLOADED_KEY in st.session_state


def show_sweep_results() -> None:
    open_requested_graph()
    st.markdown(SWEEP_INTRO)
    loaded = load_sweep()
    if loaded is None:
        return
    name, results = loaded
    st.caption(f"{code_span(name)}: {len(results):,} rows, {results['model'].nunique()} models, "
               f"{results['config_name'].nunique()} configurations, statuses "
               + ", ".join(f"{s} {n}" for s, n in results["status"].value_counts().items()) + ".")
    shown = show_filters(results)
    if shown.empty:
        st.info("No row passes these filters: clear one of them.")
        return
    show_heat_map(results, shown)
    show_pareto(shown)
    show_table(results, shown, name)
    show_unfinished(shown)


def load_sweep() -> tuple[str, pd.DataFrame] | None:
    """The results picked (upload or server file), parsed once per content; problems said in words."""
    keep(FROM_KEY, SERVER if address.read(SWEEP_PARAM) else UPLOAD)
    source = st.radio("Sweep results from", (UPLOAD, SERVER), key=FROM_KEY, horizontal=True)
    try:
        picked = _uploaded() if source == UPLOAD else _server_file()
        if picked is None:
            return None
        name, data = picked
        digest = hashlib.sha256(data).hexdigest()
        return name, memo(("sweep results", name, digest), lambda: parse_upload(name, data))
    except GEError as err:
        st.error(f"That sweep cannot be shown: {md_escape(str(err))}", icon=":material/error:")
        return None


def _uploaded() -> tuple[str, bytes] | None:
    address.write(SWEEP_PARAM, "")
    st.file_uploader("Sweep results (.csv or .parquet, as `--out` wrote them)", type=["csv", "parquet"],
                     key=UPLOAD_KEY, on_change=_remember_upload)
    kept: tuple[str, bytes] | None = st.session_state.get(UPLOADED_KEY)
    if kept is None:
        st.caption("Upload a results file, or pick one from the server's sweep folder above.")
    return kept


def _remember_upload() -> None:
    file = st.session_state.get(UPLOAD_KEY)
    if file is None:
        st.session_state.pop(UPLOADED_KEY, None)
    else:
        st.session_state[UPLOADED_KEY] = (file.name, file.getvalue())


def _server_file() -> tuple[str, bytes] | None:
    folder = sweep_dir()
    names = server_files(folder)
    wanted = address.read(SWEEP_PARAM)
    if not names:
        st.info(f"The server's sweep folder {code_span(str(folder))} holds no .csv or .parquet file. Write one "
                f"there (`--out {folder.name}/results.csv`; the folder is `GE_SWEEP_DIR`), or upload a file.")
        return None
    if wanted and wanted not in names:
        st.warning(f"The address names {code_span(wanted)}, which is not a results file of the server's sweep "
                   f"folder: showing {code_span(names[0])}.", icon=":material/warning:")
    keep(FILE_KEY, wanted if wanted in names else names[0])
    if st.session_state[FILE_KEY] not in names:  # a file that went away since
        st.session_state[FILE_KEY] = names[0]
    name = str(st.selectbox(f"Results file in {code_span(str(folder))}", names, key=FILE_KEY))
    address.write(SWEEP_PARAM, name)
    data, _ = read_server_file(name, folder)
    return name, data


def show_filters(results: pd.DataFrame) -> pd.DataFrame:
    """Four multiselects (empty: every value); the rows they keep, for every view below."""
    columns = st.columns(4)
    picked: dict[str, list[str] | None] = {}
    for column, (what, field) in zip(columns, (("statuses", "status"), ("models", "model"),
                                               ("configs", "config_name"), ("hardware", "hardware")), strict=True):
        values = list(dict.fromkeys(results[field])) if field != "status" else \
            [s for s in STATUSES if s in set(results["status"])]
        chosen = column.multiselect(f"Filter: {field.replace('_name', '')}", values, key=f"ge_sweep_filter_{field}",
                                    placeholder=f"every {field.replace('_name', '')}",
                                    format_func=lambda v: v or "(no hardware)")
        picked[what] = chosen or None
    return filter_results(results, **picked)


def show_heat_map(results: pd.DataFrame, shown: pd.DataFrame) -> None:
    st.markdown("#### Heat map: model × configuration")
    metric = address_option(METRIC_PARAM, list(METRIC_TITLES), "simulated_us", "the sweep metric")
    picked = st.selectbox("Metric", list(METRIC_TITLES), index=list(METRIC_TITLES).index(metric),
                          format_func=METRIC_TITLES.__getitem__, key=f"ge_sweep_metric:{metric}")
    address.write(METRIC_PARAM, picked, default="simulated_us")
    cells = grid_cells(shown, str(picked))
    st.altair_chart(heat_map(cells, METRIC_TITLES[str(picked)]), key=HEAT_KEY, selection_mode=PICK,
                    on_select=lambda: _heat_map_clicked(results))
    st.caption("Click a cell to open that model and configuration on the Graph page.")


def _heat_map_clicked(results: pd.DataFrame) -> None:
    selection = getattr(st.session_state.get(HEAT_KEY), "selection", None) or {}
    points = selection.get(PICK) if isinstance(selection, Mapping) else None
    if isinstance(points, list) and points and isinstance(points[0], Mapping) and points[0].get("model"):
        point = points[0]
        request_open(results, str(point["model"]), str(point.get("config_name", "")), str(point.get("hardware", "")))


def show_pareto(shown: pd.DataFrame) -> None:
    st.markdown("#### Simulated latency against arena bytes")
    which = st.selectbox("Points of", [AGGREGATE, *dict.fromkeys(shown["model"])], key="ge_sweep_pareto_model")
    points = pareto_points(shown, None if which == AGGREGATE else str(which))
    if points.empty:
        st.caption("No row here has both a simulated latency and an arena (only `ok` rows on a hardware target "
                   "do): pick another model or widen the filters.")
        return
    st.altair_chart(pareto_chart(points))
    if which == AGGREGATE:
        st.caption(f"Each point: the geometric mean over the {int(points['models'].max())} model(s) that have a "
                   "result for every configuration shown. On the front: no other point is both faster and smaller.")


def show_table(results: pd.DataFrame, shown: pd.DataFrame, name: str) -> None:
    st.markdown("#### The rows")
    frame = shown[[c for c in TABLE_COLUMNS if c in shown]]
    table(frame, "ge_sweep_table", wide=("error",),
          on_pick=lambda row: request_open(results, str(row["model"]), str(row["config_name"]), str(row["hardware"])))
    st.download_button("Download these rows (CSV)", data=shown.to_csv(index=False),
                       file_name=f"{Path(name).stem}_filtered.csv", mime="text/csv", icon=":material/download:")


def show_unfinished(shown: pd.DataFrame) -> None:
    """Every refused, failed or timed-out row with its error text in full (rows with the same text together)."""
    bad = shown[shown["status"] != "ok"]
    if bad.empty:
        return
    st.markdown(f"#### {len(bad)} row(s) that did not finish `ok`")
    groups = list(bad.groupby(["status", "error"], sort=False))
    for (status, error), group in groups[:MAX_ERROR_GROUPS]:
        where = ", ".join(f"{code_span(str(r.model))} {code_span(str(r.config_name))} on "
                          f"{code_span(str(r.hardware) or 'no hardware')}" for r in group.itertuples())
        st.markdown(f"**{md_escape(str(status))}**: {where}")
        st.code(str(error) or "(no error text)", language=None, wrap_lines=True)
    if len(groups) > MAX_ERROR_GROUPS:
        st.caption(f"… and {len(groups) - MAX_ERROR_GROUPS} more distinct errors: filter by status or model to "
                   "see them.")


def request_open(results: pd.DataFrame, model: str, config_name: str, hardware: str) -> None:
    """A click's callback: set the sidebar to the row's model and settings, and ask the next run to switch
    to the Graph page (a callback cannot switch pages). What cannot be opened is said in words instead."""
    try:
        target = graph_target(results, model, config_name, hardware)
    except GEError as err:
        st.session_state[PROBLEM_KEY] = str(err)
        return
    problem = open_problem(target)
    if problem:
        st.session_state[PROBLEM_KEY] = problem
        return
    assert target.sample is not None
    st.session_state[SOURCE_KEY] = "Sample"
    st.session_state[SAMPLE_KEY] = target.sample
    st.session_state[OPT_KEY] = target.opt_level
    st.session_state[DISABLED_KEY] = list(target.disabled_passes)
    st.session_state[HARDWARE_KEY] = target.hardware or NONE
    for key, value in graph_address(target).items():
        st.query_params[key] = value
    st.session_state[OPEN_KEY] = target


def open_problem(target: GraphTarget) -> str:
    """Why the Graph page cannot open `target` ("" when it can)."""
    settings = f"opt level {quote(target.opt_level)} and hardware {quote(target.hardware or 'none')}"
    if target.sample is None:
        return (f"{quote(target.model)} is a model file, not a bundled sample: the Graph page can show it only "
                f"once it is uploaded. Upload it in the sidebar (Source: Upload), then pick {settings}.")
    if target.sample not in {s.name for s in list_samples()}:
        return f"This server has no sample {quote(target.sample)} (the sweep ran elsewhere): pick another row."
    if target.hardware and target.hardware not in profile_names():
        return (f"{quote(target.hardware)} is not a built-in hardware profile: upload that profile in the sidebar's "
                f"Hardware box, then pick sample {quote(target.sample)} at opt level {quote(target.opt_level)}.")
    return ""


def graph_address(target: GraphTarget) -> dict[str, str]:
    """The Graph page's address for `target`: its sample and hardware (the opt level is the sidebar's state)."""
    found = {SAMPLE_KEY: target.sample or "", HARDWARE_PARAM: target.hardware}
    return {key: value for key, value in found.items() if value}


def open_requested_graph() -> None:
    """At the start of a run: say why a click opened nothing, or open what it asked for."""
    problem = st.session_state.pop(PROBLEM_KEY, None)
    if problem:
        st.error(md_escape(problem), icon=":material/error:")
    target: GraphTarget | None = st.session_state.pop(OPEN_KEY, None)
    if target is None:
        return
    if target.not_applied:
        st.warning(f"The sidebar now holds {code_span(target.model)} at opt level {code_span(target.opt_level)}"
                   f" on {code_span(target.hardware or 'no hardware')}; the Graph page cannot apply the rest of "
                   f"that configuration: {md_escape('; '.join(target.not_applied))}.", icon=":material/warning:")
        st.page_link(GRAPH_PAGE, label="Open it on the Graph page anyway", icon=":material/account_tree:")
        return
    st.switch_page(GRAPH_PAGE, query_params=graph_address(target))
