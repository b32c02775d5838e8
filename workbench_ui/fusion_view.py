"""The Fusion page's sections (app_pages/fusion.py): the decisions and per-pattern counts of a compile, the
filters, a decision's graph before and after its pass, and a node's fusion history."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ge_core import CompiledModel
from ge_core.viz import (
    filter_decisions,
    fusion_decisions,
    fusion_group_overlay,
    fusion_summary,
    fusions_of_node,
    graphs_around,
    snapshot_id,
)
from workbench_ui import address
from workbench_ui.analysis import BEST_SAMPLE, memo, select_node, selected_node, table
from workbench_ui.analysis_canvas import PaneSpec, outlined, show_graphs
from workbench_ui.charts import pattern_chart
from workbench_ui.session import ConfigKey
from workbench_ui.text import code_span, md_escape

DECISION = "decision"  # the address's picked decision: its number in the log (`#`)
OUTCOMES = ("all", "applied", "rejected")
SHOWN_COLUMNS = ["#", "pass", "pattern", "accepted", "reason", "nodes", "fused_node", "stage"]


def decisions_of(key: ConfigKey, compiled: CompiledModel) -> pd.DataFrame:
    return memo((key, "fusion_decisions"), lambda: fusion_decisions(compiled.records))


def summary_of(key: ConfigKey, compiled: CompiledModel) -> pd.DataFrame:
    return memo((key, "fusion_summary"), lambda: fusion_summary(compiled.records))


def on_screen(title: str, opt: str, decisions: pd.DataFrame) -> str:
    """The intro's numbers, read from the model on screen."""
    if decisions.empty:
        return f"On **{md_escape(title)}** at {opt} no fusion pass matched anything: try O3 or {BEST_SAMPLE}."
    rejected = decisions[~decisions["accepted"]]
    text = (f"On **{md_escape(title)}** at {opt}: {len(decisions):,} candidates, "
            f"{int(decisions['accepted'].sum()):,} applied, {len(rejected):,} rejected.")
    if len(rejected):
        top = rejected["pattern"].value_counts().index[0]
        first = rejected[rejected["pattern"] == top].iloc[0]
        text += (f" The pattern refused most is {code_span(str(top))} "
                 f"({int((rejected['pattern'] == top).sum())}×); the first refusal reads: "
                 f"“{md_escape(str(first['reason']))}”")
    return text


def show_headline(decisions: pd.DataFrame) -> None:
    cols = st.columns(4)
    cols[0].metric("Candidates matched", f"{len(decisions):,}")
    cols[1].metric("Applied", f"{int(decisions['accepted'].sum()):,}")
    cols[2].metric("Rejected", f"{int((~decisions['accepted']).sum()):,}")
    cols[3].metric("Patterns", f"{decisions['pattern'].nunique():,}")


def show_summary(summary: pd.DataFrame) -> None:
    st.markdown("#### Per pattern (`fusion_result.json`: matched, applied)")
    if summary.empty:
        st.caption("No fusion pass matched a candidate.")
        return
    st.altair_chart(pattern_chart(summary))
    table(summary, "ge_fusion_summary")


def show_filters(decisions: pd.DataFrame) -> pd.DataFrame:
    cols = st.columns([2.2, 2, 2, 2])
    outcome = cols[0].segmented_control("Outcome", OUTCOMES, default="all", key="ge_fusion_outcome") or "all"
    passes = cols[1].multiselect("Pass", sorted(decisions["pass"].unique()), key="ge_fusion_passes",
                                 placeholder="every pass")
    patterns = cols[2].multiselect("Pattern", sorted(decisions["pattern"].unique()), key="ge_fusion_patterns",
                                   placeholder="every pattern")
    text = cols[3].text_input("Reason or node contains", key="ge_fusion_text", placeholder="e.g. UB, conv1")
    accepted = None if outcome == "all" else outcome == "applied"
    shown = filter_decisions(decisions, accepted=accepted, passes=passes, patterns=patterns, text=text.strip())
    st.caption(f"{len(shown):,} of {len(decisions):,} decisions shown. Pick a row to see it on the graph.")
    return shown


def pick_decision(row: pd.Series) -> None:
    address.write(DECISION, int(row["#"]), default=None)
    nodes = str(row["nodes"]).split(", ")
    select_node(str(row["fused_node"]) if row["accepted"] and row["fused_node"] else nodes[0])


def picked_decision(decisions: pd.DataFrame) -> pd.Series | None:
    """The decision the address names, else the first rejected one (the question learners ask first)."""
    if decisions.empty:
        return None
    number = address.read_int(DECISION)
    if number is not None and 0 <= number < len(decisions):
        return decisions.iloc[number]
    if number is not None:
        st.warning(f"The address picks decision {number}, but this compile made {len(decisions)} "
                   f"(0 to {len(decisions) - 1}): showing the first rejected one.", icon=":material/warning:")
    rejected = decisions[~decisions["accepted"]]
    return rejected.iloc[0] if len(rejected) else decisions.iloc[0]


def show_decision(key: ConfigKey, compiled: CompiledModel, row: pd.Series) -> None:
    verdict = ":green-badge[applied]" if row["accepted"] else ":red-badge[rejected]"
    st.markdown(f"#### Decision {int(row['#'])}: {code_span(str(row['pattern']))} by {code_span(str(row['pass']))} "
                f"{verdict}")
    st.markdown(f"**Why:** {md_escape(str(row['reason']))}")
    nodes = [n for n in str(row["nodes"]).split(", ") if n]
    made = str(row["fused_node"]) if row["accepted"] else ""
    st.caption(f"Candidate nodes: {', '.join(code_span(n) for n in nodes)}"
               + (f" → fused node {code_span(made)}" if made else ""))
    step = int(row["step"])
    before, after = graphs_around(compiled.input_graph, compiled.records, step)
    before_id = _snapshot_before(compiled, step)
    after_id = snapshot_id(compiled.records[step]) if compiled.records[step].snapshot is not None else before_id
    after_marks = [made] if made and after.has_node(made) else [n for n in nodes if after.has_node(n)]
    specs = [PaneSpec("before the pass", key, before, before_id, (outlined("candidate", nodes),)),
             PaneSpec("after the pass", key, after, after_id, (outlined("fused node" if made else "left as is",
                                                                        after_marks),))]
    node = selected_node(before, after) or (nodes[0] if nodes else "")
    show_graphs(specs, canvas_key="ge_fusion_canvas", selected=node, selected_pane=0 if before.has_node(node) else 1,
                caption=f"Before and after {row['pass']} (step {step + 1}): the candidate outlined in red")


def _snapshot_before(compiled: CompiledModel, step: int) -> str:
    """The canvas id of the graph before pass `step` (the last snapshot before it, or the input graph)."""
    for record in reversed(compiled.records[:step]):
        if record.snapshot is not None:
            return snapshot_id(record)
    return snapshot_id(None)


def show_final_graph(key: ConfigKey, compiled: CompiledModel) -> None:
    st.markdown("#### The compiled graph, coloured by fusion group")
    decisions = tuple(d for r in compiled.records for d in r.decisions)
    group = (("fusion group",), lambda: fusion_group_overlay(compiled.graph, decisions))
    show_graphs([PaneSpec("compiled", key, compiled.graph, "compiled", (group,))],
                canvas_key="ge_fusion_canvas", selected=selected_node(compiled.graph))


def show_node_fusions(compiled: CompiledModel) -> None:
    st.markdown("#### Which fusions took or refused a node")
    node = address.read(address.NODE).split(" › ")[-1]
    names = sorted({n.name for n in compiled.input_graph.nodes} | {n.name for n in compiled.graph.nodes})
    picked = st.selectbox(f"Node ({len(names):,})", names, index=names.index(node) if node in names else None,
                          key=f"ge_fusion_node:{node}", placeholder="pick a node, or click one on the graph",
                          on_change=_picked_node, args=(f"ge_fusion_node:{node}",))
    if not picked:
        return
    rows = pd.DataFrame([{"#": f.number, "pass": f.pass_name, "pattern": f.pattern, "applied": f.accepted,
                          "role": f.role, "via": f.via, "reason": f.reason, "fused node": f.fused_node}
                         for f in fusions_of_node(compiled.records, picked)])
    if rows.empty:
        st.caption(f"No fusion pass considered {code_span(picked)}.")
        return
    st.caption("role: **made** (this decision made the node), **member** (the node was a candidate's op), "
               "**inside** (it was inside `via`, a fused node that was a candidate).")
    table(rows, "ge_fusion_node_table", wide=("reason",),
          config={"applied": st.column_config.CheckboxColumn("applied")})


def _picked_node(key: str) -> None:
    select_node(st.session_state.get(key) or "")
