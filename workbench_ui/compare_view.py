"""The Compare page's sections (app_pages/compare.py): the sidebar's model under two to four CompileConfigs
side by side. The metrics with deltas against the first, the graphs side by side (a node's place in each),
the node alignment by original names and the per-op latency deltas. The comparison lives in the address
(`?cmp=<token>`) and saves and loads as JSON."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace

import pandas as pd
import streamlit as st

from ge_core import PRECISION_MODES, CompileConfig, fusion_pass_names, pass_names, profile_names
from ge_core.errors import GEError
from ge_core.viz import (
    STRATEGY_CHOICES,
    Comparison,
    ComparisonSpec,
    format_bytes,
    fusion_group_overlay,
    run_spec,
)
from workbench_ui import address
from workbench_ui.analysis import memo, select_node, table
from workbench_ui.analysis_canvas import PaneSpec, show_graphs
from workbench_ui.charts import delta_chart
from workbench_ui.model_picker import ModelChoice
from workbench_ui.profile_view import FALLBACK_HARDWARE
from workbench_ui.session import OPT_LEVELS, WorkbenchConfig
from workbench_ui.text import code_span, md_escape

COMPARISON = "cmp"  # ?cmp=<ComparisonSpec.to_address()>
NO_TARGET = "none"
MAX_CONFIGS = 4
PROFILE_PRECISION = "profile default"  # no --precision_mode: the profile's (ATC's force_fp16)
SPEC_UPLOAD_KEY = "ge_compare_upload"
SIDE_BY_SIDE_TAB, SWEEP_TAB = "Configurations side by side", "Sweep results"
METRIC_COLUMNS = ["config", "status", "opt_level", "hardware", "precision_mode", "memory_strategy", "nodes",
                  "nodes_delta", "kernels", "kernels_delta", "arena_bytes", "arena_bytes_delta", "theory_min_bytes",
                  "simulated_us", "simulated_us_delta", "compile_seconds", "max_rel_error", "max_rel_error_delta",
                  "error"]

GLANCE = {"nodes": "nodes", "kernels": "kernels", "arena_bytes": "arena bytes", "theory_min_bytes": "lower bound bytes",
          "simulated_us": "simulated µs", "compile_seconds": "compile s", "max_rel_error": "max rel. error vs O0"}


def model_reference(choice: ModelChoice) -> str:
    """How a comparison names the model: sample:NAME, or upload:<sha256> (ModelChoice.key without its stamp)."""
    return choice.key if choice.kind == "upload" else choice.key.rsplit(":", 1)[0]


def default_spec(config: WorkbenchConfig, reference: str) -> ComparisonSpec:
    """O1 against O3, at the sidebar's settings and target (the library's default one when it names none)."""
    base = replace(config.compile_config(), hardware=config.settings.hardware or FALLBACK_HARDWARE)
    return ComparisonSpec.of(reference, [(level, replace(base, opt_level=level)) for level in ("O1", "O3")])


def spec_from_address(config: WorkbenchConfig, reference: str) -> ComparisonSpec:
    token = address.read(COMPARISON)
    if token:
        try:
            spec = ComparisonSpec.from_address(token)
        except GEError as err:
            st.error(f"The comparison in the address cannot be read: {md_escape(str(err))} Showing O1 against O3; "
                     "choose the configurations below.", icon=":material/error:")
            return default_spec(config, reference)
        if spec.model != reference:
            st.warning(f"This comparison was made for {code_span(spec.model)}: running it on the sidebar's model "
                       f"({code_span(reference)}).", icon=":material/warning:")
            spec = replace(spec, model=reference)
        return spec
    return default_spec(config, reference)


def run_comparison(choice: ModelChoice, spec: ComparisonSpec, numerics: bool) -> Comparison:
    def make() -> Comparison:
        return run_spec(spec, choice.fetch(), numerics=numerics)
    with st.spinner(f"Compiling {len(spec.configs)} configurations…"):
        return memo((choice.key, spec.to_address(), numerics, "comparison"), make)


def on_screen(title: str, metrics: pd.DataFrame) -> str:
    """The best configuration against the worst: by simulated latency when every one has it, else by kernels."""
    ok = metrics[metrics["status"] == "ok"]
    if len(ok) < 2:
        return f"On **{md_escape(title)}** fewer than two configurations compiled: see the errors below."
    by = "simulated_us" if ok["simulated_us"].notna().all() else "kernels"
    ranked = ok.sort_values(by, kind="stable")
    best, worst = ranked.iloc[0], ranked.iloc[-1]
    parts = [f"{int(best['kernels'])} kernels against {int(worst['kernels'])}"]
    if pd.notna(best["arena_bytes"]) and pd.notna(worst["arena_bytes"]):
        arena, bound = (format_bytes(int(best[c])) for c in ("arena_bytes", "theory_min_bytes"))
        parts.append(f"an arena of {arena} against {format_bytes(int(worst['arena_bytes']))} (lower bound {bound} "
                     f"against {format_bytes(int(worst['theory_min_bytes']))})")
    if by == "simulated_us":
        parts.insert(0, f"{float(best['simulated_us']):,.1f} µs against {float(worst['simulated_us']):,.1f} µs "
                        f"({(float(best['simulated_us']) / float(worst['simulated_us']) - 1):+.0%})")
    rank = "fastest" if by == "simulated_us" else "fewest kernels"
    other = "slowest" if by == "simulated_us" else "most"
    return (f"On **{md_escape(title)}**, the {rank}, {code_span(str(best['config']))}, against the {other}, "
            f"{code_span(str(worst['config']))}: " + "; ".join(parts) + ".")


def show_editor(config: WorkbenchConfig, spec: ComparisonSpec) -> ComparisonSpec:
    """The configurations as widgets (a form: nothing recompiles until "Compare")."""
    tag = hashlib.sha1(spec.to_address().encode()).hexdigest()[:12]  # new widgets for each spec: they open on it
    targets = [NO_TARGET, *profile_names()]
    for _, c in spec.configs:
        if c.hardware and c.hardware not in targets:
            targets.append(c.hardware)
    count = st.slider("Configurations", 2, MAX_CONFIGS, value=min(max(len(spec.configs), 2), MAX_CONFIGS),
                      key=f"ge_compare_count:{tag}")
    with st.form(f"ge_compare_form:{tag}"):
        columns = st.columns(count)
        chosen: list[tuple[str, CompileConfig]] = []
        for i, column in enumerate(columns):
            name, base = spec.configs[i] if i < len(spec.configs) else (f"config {i + 1}", spec.configs[-1][1])
            with column:
                chosen.append(_config_widgets(f"{i}:{tag}", name, base, targets))
        pressed = st.form_submit_button("Compare", type="primary")
    if not pressed:
        return spec
    picked = chosen
    names = [n for n, _ in picked]
    if len(set(names)) != len(names) or not all(n.strip() for n in names):
        st.error("Give each configuration a name of its own.", icon=":material/error:")
        return spec
    try:
        new = ComparisonSpec.of(spec.model, picked, spec.seed)
    except GEError as err:
        st.error(md_escape(str(err)), icon=":material/error:")
        return spec
    address.write(COMPARISON, new.to_address())
    return new


def _config_widgets(i: str, name: str, base: CompileConfig, targets: list[str]) -> tuple[str, CompileConfig]:
    label = st.text_input("Name", value=name, key=f"ge_cmp_name_{i}")
    opt = st.selectbox("Opt level", OPT_LEVELS, index=OPT_LEVELS.index(str(base.opt_level))
                       if str(base.opt_level) in OPT_LEVELS else 0, key=f"ge_cmp_opt_{i}")
    hardware = st.selectbox("Hardware", targets, index=targets.index(base.hardware or NO_TARGET),
                            key=f"ge_cmp_hw_{i}", format_func=lambda t: t if len(t) < 24 else "uploaded profile")
    strategies = list(STRATEGY_CHOICES)
    strategy = st.selectbox("Memory strategy", strategies, index=strategies.index(base.memory.strategy)
                            if base.memory.strategy in strategies else 0, key=f"ge_cmp_strategy_{i}")
    precisions = [PROFILE_PRECISION, *PRECISION_MODES]  # the first: the profile's default, ATC's own
    precision = st.selectbox("Precision", precisions, index=precisions.index(base.precision_mode or PROFILE_PRECISION),
                             key=f"ge_cmp_precision_{i}")
    fusion = set(fusion_pass_names())
    no_fusion = st.checkbox("All fusion off", value=fusion <= base.disabled_passes, key=f"ge_cmp_nofusion_{i}",
                            help=f"Switch off the {len(fusion)} fusion passes at once: {', '.join(sorted(fusion))}.")
    others = base.disabled_passes - fusion if fusion <= base.disabled_passes else base.disabled_passes
    off = st.multiselect("Other passes switched off" if no_fusion else "Passes switched off", pass_names(),
                         default=sorted(others), key=f"ge_cmp_off_{i}", placeholder="none")
    config = replace(base, opt_level=str(opt), hardware=None if hardware == NO_TARGET else str(hardware),
                     precision_mode=None if precision == PROFILE_PRECISION else str(precision),
                     disabled_passes=frozenset(off) | (fusion if no_fusion else set()),
                     memory=replace(base.memory, strategy=str(strategy)))
    return label.strip(), config


def show_metrics(metrics: pd.DataFrame) -> None:
    st.markdown("#### Side by side (deltas against the first configuration)")
    for _, row in metrics[metrics["status"] != "ok"].iterrows():
        st.error(f"{code_span(str(row['config']))} did not compile: {md_escape(str(row['error']))}",
                 icon=":material/error:")
    table(at_a_glance(metrics), "ge_compare_glance")
    shown = [c for c in METRIC_COLUMNS if c in metrics]
    st.caption("Every column, one row per configuration:")
    table(metrics[shown], "ge_compare_metrics", wide=("error",),
          config={c: st.column_config.NumberColumn(format="%+.6g") for c in shown if c.endswith("_delta")})
    cols = st.columns(3)
    for column, (metric, title) in zip(cols, (("kernels", "kernels"), ("arena_bytes", "arena bytes"),
                                              ("simulated_us", "simulated µs")), strict=True):
        if metrics[metric].notna().any():
            column.altair_chart(delta_chart(metrics, metric, title))  # bars in the table's order


def at_a_glance(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per metric, a column per configuration and one per delta against the first."""
    rows = []
    for metric, title in GLANCE.items():
        row: dict[str, object] = {"metric": title}
        for i, entry in metrics.iterrows():
            row[str(entry["config"])] = _text(entry[metric])
            if i != metrics.index[0]:
                row[f"{entry['config']} Δ"] = _text(entry[f"{metric}_delta"], signed=True)
        rows.append(row)
    return pd.DataFrame(rows)


def _text(value: object, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    number = float(value)  # type: ignore[arg-type]
    sign = "+" if signed else ""
    if number.is_integer():
        return f"{number:{sign},.0f}"
    if abs(number) < 0.01:
        return f"{number:{sign}.3e}"
    return f"{number:{sign},.3f}"


def show_graphs_side_by_side(choice: ModelChoice, comparison: Comparison) -> None:
    compiled = [e for e in comparison.entries if e.compiled is not None]
    if len(compiled) < 2:
        return
    st.markdown("#### The graphs side by side")
    names = [e.name for e in compiled]
    cols = st.columns(2)
    left = cols[0].selectbox("Left", names, index=0, key="ge_compare_left")
    right = cols[1].selectbox("Right", names, index=len(names) - 1, key="ge_compare_right")
    entries = {e.name: e for e in compiled}
    node = address.read(address.NODE).split(" › ")[0]
    specs = []
    for name in dict.fromkeys((left, right)):  # the same configuration twice: one pane
        entry = entries[str(name)]
        assert entry.compiled is not None
        graph = entry.compiled.graph
        records = tuple(d for r in entry.compiled.records for d in r.decisions)
        group = (("fusion group",), lambda g=graph, d=records: fusion_group_overlay(g, d))
        graph_id = "compiled_" + re.sub(r"[^A-Za-z0-9_]", "_", str(name))  # one id per pane: Model Explorer
        specs.append(PaneSpec(str(name), (choice.key, entry.config.key()), graph, graph_id, (group,)))  # keys by id
    holder = entries[str(left)].fates.get(node)
    selected = holder.holder if holder is not None else (node if specs[0].graph.has_node(node) else "")
    show_graphs(specs, canvas_key="ge_compare_canvas", selected=selected, sync=False,
                caption="Coloured by fusion group; click a node to see where it went in each configuration")
    if node:
        show_node_places(comparison, node)


def show_node_places(comparison: Comparison, node: str) -> None:
    rows = [{"configuration": e.name, "held by": e.fates[node].holder or "(removed)", "status": e.fates[node].status,
             "by pass": e.fates[node].pass_name} for e in comparison.entries if node in e.fates]
    if rows:
        st.markdown(f"**{code_span(node)} in each configuration**")
        st.dataframe(pd.DataFrame(rows), hide_index=True)


def show_alignment(comparison: Comparison) -> None:
    st.markdown("#### Where each original node went")
    frame = comparison.node_alignment()
    table(frame, "ge_compare_alignment", on_pick=lambda row: select_node(str(row["node"])))


def show_latency(comparison: Comparison) -> None:
    st.markdown("#### Latency per original op")
    frame = comparison.latency_delta()
    if frame.empty:
        st.caption("No configuration has a hardware target: nothing was simulated.")
        return
    deltas = [c for c in frame if c.endswith("delta_us")]
    if deltas:
        frame = frame.reindex(frame[deltas[-1]].abs().sort_values(ascending=False, kind="stable").index)
    st.caption("Nodes sharing a kernel in any configuration form one row, so each configuration's rows sum to its "
               "total; sorted by the largest change.")
    table(frame.reset_index(drop=True), "ge_compare_latency", wide=("nodes",))


def show_save_load(spec: ComparisonSpec) -> None:
    left, right = st.columns(2)
    left.download_button("Save the comparison (JSON)", data=json.dumps(spec.to_json(), indent=2),
                         file_name="comparison.json", mime="application/json", icon=":material/download:")
    right.file_uploader("Load a comparison (JSON)", type=["json"], key=SPEC_UPLOAD_KEY, on_change=_load_spec)
    problem = st.session_state.pop("ge_compare_load_problem", None)
    if problem:
        st.error(f"That comparison cannot be loaded: {md_escape(problem)}", icon=":material/error:")


def _load_spec() -> None:
    file = st.session_state.get(SPEC_UPLOAD_KEY)
    if file is None:
        return
    try:
        spec = ComparisonSpec.from_json(file.getvalue().decode("utf-8", "replace"))
    except GEError as err:
        st.session_state["ge_compare_load_problem"] = str(err)
        return
    address.write(COMPARISON, spec.to_address())
