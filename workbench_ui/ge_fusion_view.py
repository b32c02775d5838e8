"""The Fusion page's section for GE's fusion_result.json: upload the file real GE wrote and see its per-pass
counts beside ours (our compile writes the same file, in GE's layout: the download here)."""

from __future__ import annotations

import streamlit as st

from ge_core import CompiledModel
from ge_core.debugging import (
    FusionResult,
    GraphFusion,
    compare_fusion_results,
    fusion_result,
    fusion_result_from_dict,
    fusion_result_text,
    read_fusion_result,
)
from ge_core.errors import GEError
from workbench_ui.analysis import memo, table
from workbench_ui.session import ConfigKey
from workbench_ui.text import code_span, md_escape

UPLOAD_KEY = "ge_fusion_result_upload"
GRAPH_KEY = "ge_fusion_result_graph"
MAX_BYTES = 32 * 2**20  # GE's files are kilobytes


def show_ge_fusion_result(key: ConfigKey, compiled: CompiledModel) -> None:
    st.markdown("#### GE's `fusion_result.json` beside ours")
    st.caption("On an Ascend machine, `atc --export_compile_stat=1 ...` (or the session option "
               "`export_compile_stat`) writes `fusion_result.json` in the working directory, or in "
               "`$ASCEND_WORK_PATH/FE/<pid>/`: per graph and fusion pass, how often its pattern matched and how "
               "often the fusion took effect. Our compile writes the same file, in GE's layout.")
    left, right = st.columns([3, 2])
    right.download_button("Our fusion_result.json (GE's layout)", memo((key, "fusion_result.json"),
                                                                      lambda: fusion_result_text(compiled.records)),
                          file_name="fusion_result.json", mime="application/json", key="ge_fusion_result_ours")
    file = left.file_uploader("GE's fusion_result.json", type=["json"], key=UPLOAD_KEY)
    if file is None:
        return
    try:
        if file.size > MAX_BYTES:
            raise GEError(f"{code_span(file.name)} is {file.size / 2**20:,.1f} MB: GE's fusion_result.json is a "
                          f"few kilobytes, and more than {MAX_BYTES // 2**20} MB is not read.")
        ge = memo(("ge fusion_result", getattr(file, "file_id", file.name), file.size),
                  lambda: read_fusion_result(file.getvalue(), file.name))
    except GEError as err:
        st.error(f"That file cannot be read: {md_escape(str(err))}", icon=":material/error:")
        return
    graph = _pick_graph(ge)
    ours = fusion_result_from_dict(fusion_result(compiled.records)).graphs
    frame = compare_fusion_results(graph, ours[0] if ours else None)
    counts = frame["present"].value_counts()
    cols = st.columns(3)
    for col, label in zip(cols, ("both", "GE only", "ours only"), strict=True):
        col.metric(f"Passes: {label}", f"{int(counts.get(label, 0)):,}")
    table(frame, "ge_fusion_result_table")
    st.caption("GE's passes carry the names of its fusion-pass library, ours the workbench's: a pass both "
               "report is compared number for number; the others show what one compiler tried that the other "
               "did not. `match`: candidates its pattern matched; `effect`: fusions it made.")


def _pick_graph(ge: FusionResult) -> GraphFusion:
    """The graph to compare: the one with the most passes, or the one picked when the file holds several."""
    if len(ge.graphs) == 1:
        st.caption(f"{md_escape(ge.name)}: session and graph {code_span(ge.graphs[0].session_and_graph_id)}, "
                   f"{len(ge.graphs[0].passes)} passes.")
        return ge.graphs[0]
    labels = [f"{i}: session_and_graph_id {g.session_and_graph_id} ({len(g.passes)} passes)"
              for i, g in enumerate(ge.graphs)]
    busiest = max(range(len(ge.graphs)), key=lambda i: len(ge.graphs[i].passes))
    picked = st.selectbox(f"{md_escape(ge.name)} holds {len(ge.graphs)} graphs; compare", labels, index=busiest,
                          key=f"{GRAPH_KEY}:{ge.name}:{len(ge.graphs)}")
    return ge.graphs[labels.index(picked) if picked in labels else busiest]
