"""The Profile page's sections (app_pages/profile.py): the compiled model simulated on a hardware profile.
Total latency and per-unit utilisation, the per-op table and the slowest ops, a Gantt chart per unit, the
roofline, latency as a heat overlay on the graph, the NPU's outputs against the CPU's, and downloads (Chrome
trace, every table) with the profile's JSON editor."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from ge_core import PRECISION_MODES, CompiledModel, HardwareProfile, SimResult, load_profile, simulate
from ge_core.viz import (
    compile_tables,
    cpu_reference,
    latency_overlay,
    output_comparison,
    profile_summary,
    profile_table,
    roofline_lines,
    roofline_points,
    top_ops,
    trust_line,
    unit_order,
    unit_timeline,
)
from workbench_ui import hardware_picker
from workbench_ui.analysis import (
    address_option,
    chart_pick,
    memo,
    select_node,
    table,
)
from workbench_ui.analysis_canvas import PaneSpec, show_graphs
from workbench_ui.charts import PICK, gantt_chart, roofline_chart, utilisation_chart
from workbench_ui.hardware_picker import HardwareChoice
from workbench_ui.session import ConfigKey, WorkbenchConfig
from workbench_ui.text import code_span, md_escape

FALLBACK_HARDWARE = "ascend910"  # the library's default profile: simulated on when the sidebar names none
PRECISION = "precision"  # ?precision=force_fp16
EDIT_KEY = "ge_profile_edit"
EDIT_PROBLEMS = "ge_profile_edit_problems"
WIDE = ("tiling",)
MODELLED = (
    "**Modelled:** every kernel tiled for the profile's cores (the cube's 16x16x16 GEMM tiles through L1 and L0, "
    "vector work in UB tiles), its cycles per unit (cube, vector, MTE1/2/3, FixPipe, scalar) with double "
    "buffering, the chip's off-chip bandwidth as a floor, a setup and a launch per kernel; fused kernels keep "
    "their intermediates on chip; tensors as wide as the precision mode stores them (ATC's default: fp16); "
    "no-copy Concats launch nothing.\n\n"
    "**Not modelled:** parallel streams (one kernel after another), the L2 cache between kernels, AIPP and "
    "small-channel first convs, the 310P's extra vector-only cores, bank conflicts, clock changes, host copies. "
    "Per-core data rates of the 310P and 910 parts are the 310's (assumed; see each profile's sources).\n\n"
    "**Checked against:** published ATC-compiled fp16 latencies of 18 models on the 310P3 and the 310 "
    "(`bench/bench_fidelity.py`, docs/fidelity.md). A measured op_summary of your own (the *Measured vs "
    "simulated* tab) shows how far off it is on your model, and calibrates the profile on it."
)


def profile_target(config: WorkbenchConfig) -> WorkbenchConfig:
    """The sidebar's settings, for its hardware target or the library's default one."""
    if config.settings.hardware is not None:
        return config
    return config.with_hardware(HardwareChoice(FALLBACK_HARDWARE, FALLBACK_HARDWARE, FALLBACK_HARDWARE))


def simulated(key: ConfigKey, compiled: CompiledModel, precision: str) -> tuple[SimResult, pd.DataFrame,
                                                                            dict[str, Any]]:
    """The timing (no run: the numbers are asked for separately, they cost a run of the model), its per-op
    table and its summary."""
    result = memo((key, "sim", precision), lambda: simulate(compiled, precision=precision, run=False))
    ops = memo((key, "ops", precision), lambda: profile_table(result))
    return result, ops, profile_summary(result)


def default_precision(compiled: CompiledModel) -> str:
    """The compile's precision mode, else its target profile's default (ATC's force_fp16)."""
    profile = load_profile(compiled.config.hardware or FALLBACK_HARDWARE)
    return compiled.config.precision_mode or profile.default_precision_mode


def fallback_note() -> str:
    return (f"The sidebar names no hardware target: simulating on {code_span(FALLBACK_HARDWARE)}, the library's "
            "default. Pick another (or upload a profile) in the sidebar's **Hardware**.")


def on_screen(title: str, summary: dict[str, Any], ops: pd.DataFrame) -> str:
    slowest = summary["slowest"]
    if not isinstance(slowest, dict):
        return f"**{md_escape(title)}** launches no kernel: there is nothing to time."
    utilisation = summary["utilisation"]
    assert isinstance(utilisation, dict)
    busiest = max(utilisation, key=utilisation.__getitem__)
    bounds = summary["bounds"]
    assert isinstance(bounds, dict)
    share = float(ops.loc[ops["node"] == slowest["node"], "share"].iloc[0])
    return (f"On **{md_escape(title)}** ({md_escape(str(summary['hardware']))}, {summary['precision']}): "
            f"{summary['kernels']} kernels take {float(summary['total_us']):,.1f} µs (the roofline floor of the "
            f"whole model is {float(summary['floor_us']):,.1f} µs). The slowest op is "
            f"{code_span(str(slowest['node']))} ({slowest['op_type']}, {float(slowest['latency_us']):.2f} µs, "
            f"{share:.1%} of the total), **{slowest['bound']}-bound**. Kernels by bound: "
            + ", ".join(f"{n} {b}" for b, n in sorted(bounds.items(), key=lambda kv: -kv[1]))
            + f"; the busiest unit is {busiest} ({utilisation[busiest]:.0%} of the time).")


def show_operators(result: SimResult, ops: pd.DataFrame) -> None:
    st.markdown("#### Slowest operators")
    table(top_ops(result, 10), "ge_profile_top", on_pick=_pick_node, config=_columns())
    st.markdown("#### Every kernel")
    table(ops, "ge_profile_ops", wide=WIDE, on_pick=_pick_node, config=_columns())


def pick_precision(default: str) -> str:
    modes = list(PRECISION_MODES)
    wanted = address_option(PRECISION, modes, default, "precision mode")
    if "ge_profile_precision" not in st.session_state:
        st.session_state["ge_profile_precision"] = wanted
    picked = st.columns([1, 2])[0].selectbox(
        "Precision mode (ATC's --precision_mode)", modes, key="ge_profile_precision",
        help="How the NPU rounds: fp16 modes run the cube in fp16 (faster, less exact).")
    if picked == default:
        st.query_params.pop(PRECISION, None)
    else:
        st.query_params[PRECISION] = str(picked)
    return str(picked)


def show_trust(profile: HardwareProfile) -> None:
    """The "how far to trust this" line: calibration state and error on the published figures."""
    st.caption(f"**How far to trust this:** {md_escape(trust_line(profile))}")
    with st.expander("What the simulator models, and what it does not"):
        st.markdown(MODELLED)


def show_headline(summary: dict[str, Any]) -> None:
    slowest = summary["slowest"]
    cols = st.columns(4)
    cols[0].metric("Total latency", f"{float(summary['total_us']):,.1f} µs")
    cols[1].metric("Roofline floor", f"{float(summary['floor_us']):,.1f} µs",
                   help="All FLOPs at peak, or all bytes at full bandwidth, whichever is longer")
    cols[2].metric("Kernels", f"{summary['kernels']}")
    if isinstance(slowest, dict):
        cols[3].metric("Slowest op", str(slowest["node"]), help=f"{slowest['op_type']}, {slowest['bound']}-bound")


def _columns() -> dict[str, object]:
    return {"node": st.column_config.TextColumn("node", width="medium"),
            "share": st.column_config.ProgressColumn("share", format="percent", min_value=0.0, max_value=1.0),
            "cumulative_share": st.column_config.NumberColumn("cumulative", format="percent"),
            "attained_flops": st.column_config.NumberColumn("attained FLOP/s", format="%.3e"),
            "intensity": st.column_config.NumberColumn("FLOP/byte", format="%.3g"),
            "latency_us": st.column_config.NumberColumn("µs", format="%.3f")}


def _pick_node(row: pd.Series) -> None:
    select_node(str(row["node"]))


def show_timeline(result: SimResult, node: str, summary: dict[str, Any]) -> None:
    utilisation = summary["utilisation"]
    assert isinstance(utilisation, dict)
    st.markdown("#### Utilisation per unit (busy time over the total)")
    st.altair_chart(utilisation_chart(utilisation))
    st.markdown("#### Timeline per unit")
    st.caption("One row per unit; each bar is a kernel keeping it busy. The mouse wheel zooms the time axis, "
               "dragging pans it, a double click resets it; click a bar to select its node.")
    st.altair_chart(gantt_chart(unit_timeline(result), unit_order(), node), key="ge_profile_gantt",
                    on_select=chart_pick("ge_profile_gantt", PICK, "node"), selection_mode=PICK)


def show_roofline(result: SimResult, node: str) -> None:
    p = result.profile
    st.markdown("#### Roofline")
    st.caption(f"{md_escape(p.title)}: peak {p.peak_flops:.3g} FLOP/s, DDR {p.memory_bandwidth:.3g} B/s, ridge at "
               f"{p.peak_flops / p.memory_bandwidth:.1f} FLOP/byte. Point size: latency.")
    st.altair_chart(roofline_chart(roofline_points(result), roofline_lines(result), node), key="ge_profile_roof",
                    on_select=chart_pick("ge_profile_roof", PICK, "node"), selection_mode=PICK)


def show_graph(key: ConfigKey, compiled: CompiledModel, result: SimResult, precision: str, node: str) -> None:
    st.markdown("#### Latency on the graph")
    overlay = (("latency", precision), lambda: latency_overlay(result))
    show_graphs([PaneSpec("compiled", key, compiled.graph, "compiled", (overlay,))], canvas_key="ge_profile_canvas",
                selected=node, caption="Each kernel coloured by its simulated µs; click one to select it")
    st.caption(heat_legend([row.latency_us for row in result.ops]))


def heat_legend(latencies: list[float]) -> str:
    """The overlay's colour scale in words (the canvas draws none): its light and strong ends."""
    if not latencies:
        return "No kernel has a simulated latency."
    return (f"Colour scale: :orange-background[light] = {min(latencies):.3g} µs (the fastest kernel) to "
            f":orange-badge[strong orange] = {max(latencies):.3g} µs (the slowest); a node without a kernel "
            "(a view) has no colour. The latency is also in each node's attributes (click it).")


def show_numbers(key: ConfigKey, compiled: CompiledModel, result: SimResult, precision: str) -> None:
    st.markdown("#### The NPU's outputs against the CPU's")
    if not st.toggle("Run the model on both and compare each output", key="ge_profile_numbers",
                     help="Runs the compiled model twice on seeded inputs: the CPU executor in fp32 and the "
                          "simulator in this precision mode (fp16 modes round as the NPU would)."):
        st.caption("Off: only the timing is simulated (running costs about a second on a big model).")
        return
    frame = memo((key, "numbers", precision), lambda: _numbers(compiled, precision))
    table(frame, "ge_profile_outputs", config={"rel_error": st.column_config.NumberColumn(format="%.3e")})


def _numbers(compiled: CompiledModel, precision: str) -> pd.DataFrame:
    ran = simulate(compiled, precision=precision, run=True)
    return output_comparison(ran, cpu_reference(compiled))


def show_files(compiled: CompiledModel, result: SimResult, target: WorkbenchConfig) -> None:
    show_downloads(compiled, result)
    show_profile_editor(target)


def show_downloads(compiled: CompiledModel, result: SimResult) -> None:
    left, right, _ = st.columns([2, 2, 3])
    left.download_button("Download the Chrome trace",
                         on_click="ignore", data=lambda: json.dumps(result.trace()),
                         file_name="trace.json", mime="application/json", icon=":material/download:",
                         help="Open it in https://ui.perfetto.dev or chrome://tracing.")
    right.download_button("Download every table (CSV, zip)",
                          on_click="ignore", data=lambda: tables_zip(compiled, result),
                          file_name="tables.zip", mime="application/zip", icon=":material/download:",
                          help="The tables of the Passes, Fusion, Memory and Profile pages, as "
                               "`python -m ge_core compile MODEL --tables DIR` writes them.")


def tables_zip(compiled: CompiledModel, result: SimResult) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, frame in compile_tables(compiled, result).items():
            archive.writestr(f"tables/{name}.csv", frame.to_csv(index=False))
    return buffer.getvalue()


def show_profile_editor(target: WorkbenchConfig) -> None:
    """Edit the profile's JSON here; a profile that passes every check becomes the sidebar's target."""
    with st.expander("Edit the hardware profile (JSON)"):
        profile = load_profile(str(target.settings.hardware))
        path = Path(profile.path)
        text_key = f"{EDIT_KEY}:{profile.path}"
        st.text_area("Profile", value=path.read_text(encoding="utf-8") if path.is_file()
                     else json.dumps(profile.to_json(), indent=2), height=320, key=text_key)
        st.button("Check it and simulate with it", key="ge_profile_use", on_click=_use_edited, args=(text_key,))
        problems = st.session_state.pop(EDIT_PROBLEMS, None)
        if problems:
            st.error("This profile cannot be used:\n" + "\n".join(f"- {md_escape(p)}" for p in problems)
                     + "\n\nFix these fields and check it again.", icon=":material/error:")


def _use_edited(text_key: str) -> None:
    """Button callback (before the sidebar is drawn, so it may set the sidebar's choice)."""
    data = str(st.session_state.get(text_key, "")).encode()
    problems = hardware_picker.upload_problems("edited.json", data)
    if problems:
        st.session_state[EDIT_PROBLEMS] = problems
    else:
        hardware_picker.use_profile("edited.json", data)
