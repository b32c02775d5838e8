"""The Profile page's "Measured vs simulated" tab: msprof's op_summary of a real run beside the simulation.

The upload is kept for the session (switching tabs or pages keeps it). The file is read and matched to the
kernels of the model on screen (ge_core.viz.measured_against); shown are the totals, the time per op type
and the kernels where the simulator is most wrong, every task; then the measured profile as the simulated
one is shown (slowest ops, a Gantt chart per stream, every task, the heat overlay on our graph); then a
calibration of the profile on the file, its error before and after, the calibrated profile to download or
to simulate with (it becomes the sidebar's target, as an uploaded profile does).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import pandas as pd
import streamlit as st

from ge_core import CompiledModel, SimResult
from ge_core.errors import GEError
from ge_core.viz import (
    Measured,
    calibrated,
    calibration_table,
    measured_against,
    measured_overlay,
    profile_table,
    stream_order,
    stream_timeline,
    top_ops,
)
from workbench_ui import hardware_picker
from workbench_ui.analysis import chart_pick, memo, select_node, table
from workbench_ui.analysis_canvas import PaneSpec, show_graphs
from workbench_ui.charts import PICK, gantt_chart
from workbench_ui.session import ConfigKey
from workbench_ui.text import code_span, md_escape

MEASURED_KEY = "ge_measured"  # (file name, bytes) of the op_summary uploaded in this session
UPLOAD_KEY = "ge_measured_upload"
CALIBRATE_KEY = "ge_measured_calibrate"  # the (compile, file) a calibration was asked for
UNMEASURED = ["flops", "bytes", "attained_flops", "intensity", "floor_us", "tiles"]  # an op_summary has none
HOW_TO = ("Profile the model on a device with msprof (`msprof --output=DIR --application=\"...\"`, or "
          "`--model-execution`), then upload `op_summary_*.csv` from `DIR/.../mindstudio_profiler_output` (older "
          "CANN: `summary/op_summary_*.csv`). Both of msprof's layouts are read. Tasks are matched to this "
          "page's kernels by name, then by GE type and order: profile the model shown here, with its input "
          "shapes. The test fixtures in `tests/sim/fixtures/` are two such files for the sample `squeezenet` "
          "on ascend310p (synthetic times, msprof's columns).")


def show_measured(key: ConfigKey, compiled: CompiledModel, sim: SimResult, node: str, model: str) -> None:
    st.markdown("#### A measured profile beside the simulation")
    st.file_uploader("msprof's op_summary CSV", type=["csv"], key=UPLOAD_KEY, on_change=_remember,
                     help="One row per task the device ran: Op Name, OP Type, Task Start Time, Task Duration...")
    uploaded = st.session_state.get(MEASURED_KEY)
    if uploaded is None:
        st.caption(HOW_TO)
        return
    name, data = uploaded
    digest = hashlib.sha256(data).hexdigest()[:16]
    try:
        measured = memo((key, "measured", sim.precision, digest), lambda: measured_against(data, name, compiled, sim))
    except GEError as err:
        st.error(f"{md_escape(str(err))}", icon=":material/error:")
        return
    show_headline(measured)
    show_comparison(measured)
    show_measured_profile(key, compiled, measured, node, digest)
    show_calibration(key, compiled, sim, measured, digest, model)


def _remember() -> None:
    file = st.session_state.get(UPLOAD_KEY)
    if file is not None:
        st.session_state[MEASURED_KEY] = (file.name, file.getvalue())


def show_headline(measured: Measured) -> None:
    t, s = measured.totals, measured.summary
    which = f", Infer ID {s.infer_id} (the last of {len(s.infer_ids)})" if s.infer_ids else ""
    st.caption(f"{code_span(s.file)}: msprof's {s.layout} layout{which}, {int(t['tasks'])} tasks. Ratios are "
               "simulated / measured: above 1 the simulator is slower than the chip.")
    cols = st.columns(4)
    cols[0].metric("Measured", f"{t['measured_us']:,.1f} µs", help="From the first task's start to the last's end")
    cols[1].metric(f"Simulated ({t['ratio']:.2f}x)", f"{t['simulated_us']:,.1f} µs",
                   help="The simulation of the model on screen; in brackets, simulated / measured")
    cols[2].metric("Tasks matched", f"{int(t['matched_tasks'])} of {int(t['tasks'])}",
                   help=f"to the {int(t['kernels'])} kernels of the compile on screen, by name then by type")
    cols[3].metric("Per-kernel error", f"x{_exp(t['per_op_error']):.2f}",
                   help="Geometric mean over the matched kernels of max(simulated/measured, measured/simulated)")


def show_comparison(measured: Measured) -> None:
    st.markdown("##### Per op type (matched kernels)")
    table(measured.types, "ge_measured_types", config=_columns())
    st.markdown("##### Where the simulator is most wrong")
    st.caption("The matched kernels with the largest |simulated − measured| µs: what moves the total most.")
    table(measured.wrong, "ge_measured_wrong", config=_columns(), on_pick=_pick)
    st.markdown("##### Every task, and every kernel no task matched")
    table(measured.ops, "ge_measured_ops", config=_columns(), on_pick=_pick)


def show_measured_profile(key: ConfigKey, compiled: CompiledModel, measured: Measured, node: str,
                          digest: str) -> None:
    real = measured.result
    st.markdown("#### The measured profile")
    st.markdown("##### Slowest tasks")
    table(top_ops(real, 10).drop(columns=UNMEASURED, errors="ignore"), "ge_measured_top", config=_columns(),
          on_pick=_pick)
    st.markdown("##### Timeline per stream")
    st.altair_chart(gantt_chart(stream_timeline(real), stream_order(real), node), key="ge_measured_gantt",
                    on_select=chart_pick("ge_measured_gantt", PICK, "node"), selection_mode=PICK)
    with st.expander("Every measured task (the per-op table of a simulation, from the file's columns)"):
        table(profile_table(real).drop(columns=UNMEASURED, errors="ignore"), "ge_measured_table", wide=("tiling",),
              config=_columns(), on_pick=_pick)
    st.markdown("##### Measured latency on the graph")
    overlay = (("measured", digest), lambda: measured_overlay(measured))
    show_graphs([PaneSpec("compiled", key, compiled.graph, "compiled", (overlay,))], canvas_key="ge_measured_canvas",
                selected=node, caption="Each kernel of ours coloured by its matched task's measured µs")


def show_calibration(key: ConfigKey, compiled: CompiledModel, sim: SimResult, measured: Measured,
                     digest: str, model: str) -> None:
    profile = sim.profile
    st.markdown(f"#### Calibrate {code_span(profile.name)} on this file")
    st.caption("Fits the profile's efficiency (cube, vector, memory) and per-kernel launch overhead to the "
               "matched kernels by least squares on log time (ge_core.sim.calibrate), and writes them into a "
               "profile of its own, with the fit's record.")
    wanted = (key, digest)
    if st.button("Calibrate", key="ge_measured_calibrate_button", icon=":material/tune:"):
        st.session_state[CALIBRATE_KEY] = wanted
    if st.session_state.get(CALIBRATE_KEY) != wanted:
        return
    try:
        fit = memo((key, "calibrated", digest), lambda: calibrated(compiled, profile, measured.summary, model))
    except GEError as err:
        st.error(md_escape(str(err)), icon=":material/error:")
        return
    cols = st.columns(3)
    cols[0].metric("Per-kernel error before", f"x{_exp(fit.error_before):.2f}")
    cols[1].metric("After", f"x{_exp(fit.error_after):.2f}")
    cols[2].metric("Kernels fitted", f"{len(fit.kernels)}")
    st.dataframe(pd.DataFrame({"parameter": list(fit.parameters(fit.before)),
                               "before": list(fit.parameters(fit.before).values()),
                               "after": list(fit.parameters().values())}), hide_index=True)
    table(calibration_table(fit), "ge_measured_calibration", config=_columns())
    data = json.dumps(fit.profile_json(), indent=2).encode()
    name = f"{profile.name}_calibrated.json"
    left, right, _ = st.columns([2, 2, 3])
    left.download_button("Download the calibrated profile", data=data, file_name=name, mime="application/json",
                         icon=":material/download:", on_click="ignore")
    right.button("Simulate with it", key="ge_measured_use", on_click=hardware_picker.use_profile, args=(name, data),
                 icon=":material/play_arrow:", help="Makes it the sidebar's hardware target, as an upload does")


def _columns() -> dict[str, Any]:
    number = {c: st.column_config.NumberColumn(c, format="%.2f") for c in (
        "measured_us", "simulated_us", "error_us", "before_us", "after_us", "latency_us")}
    ratio = {c: st.column_config.NumberColumn(c, format="%.2fx") for c in ("ratio", "ratio_before", "ratio_after")}
    return {**number, **ratio}


def _pick(row: pd.Series) -> None:
    if row.get("node"):
        select_node(str(row["node"]))


def _exp(value: float) -> float:
    return math.nan if math.isnan(value) else math.exp(value)
