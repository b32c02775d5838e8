"""The Passes page's sections: headline numbers, the pipeline table, the dump download, each pass explained."""

from __future__ import annotations

import functools

import streamlit as st

from ge_core import CompiledModel, PassRecord, pass_names
from ge_core.debugging import dump_zip
from ge_core.viz import decision_table, format_bytes, pass_table
from workbench_ui.session import DISABLED_KEY, WorkbenchConfig
from workbench_ui.text import code_span, md_escape

PASS_KEY_PREFIX = "ge_pass_on:"
ONNX_DUMP_LIMIT = 32 << 20  # weights above this: the dump zip leaves out the per-pass .onnx files


def show_headline(compiled: CompiledModel, disabled: tuple[str, ...] = ()) -> None:
    records = compiled.records
    cols = st.columns(5)
    off = f"{len(disabled)} switched off" if disabled else None
    cols[0].metric("Passes run", len(records), delta=off, delta_color="off", delta_arrow="off",
                   help="Records of the compile (a pass can run more than once)"
                        + (": switched off " + ", ".join(disabled) if disabled else ""))
    cols[1].metric("Changed the graph", sum(r.changed for r in records))
    cols[2].metric("Nodes", f"{len(compiled.input_graph):,} → {len(compiled.graph):,}",
                   help="Nodes as imported → nodes after the last pass")
    cols[3].metric("Kernels", compiled.plan.kernels, help="Nodes that launch a kernel (views such as Reshape "
                                                          "launch none)")
    cols[4].metric("Compile time", f"{compiled.compile_seconds * 1e3:,.0f} ms",
                   help="Wall time from the imported graph to the memory plan, with graph.verify() after "
                        "every pass")


def show_pipeline_table(compiled: CompiledModel) -> None:
    if not compiled.records:
        st.info("Opt level O0 runs no pass: the graph stays as imported. Pick O1 or O3 in the sidebar.")
        return
    st.dataframe(pass_table(compiled.records), hide_index=True, height="content", column_config={
        "changed": st.column_config.CheckboxColumn(help="Did the pass change the graph?"),
        "ms": st.column_config.NumberColumn(format="%.2f", help="Wall time of the pass"),
        "fusions": st.column_config.TextColumn(help="Fusion passes: candidates fused of those considered"),
    })


def show_dump_download(compiled: CompiledModel, config: WorkbenchConfig, weights: int) -> None:
    """The per-pass dumps (GE's DUMP_GE_GRAPH) as a zip, built only when the button is pressed."""
    with_onnx = weights <= ONNX_DUMP_LIMIT
    st.download_button(
        "Download the dumps (zip)", on_click="ignore", data=functools.partial(dump_zip, compiled, onnx=with_onnx),
        file_name=f"{_stem(config)}_dumps.zip", mime="application/zip", icon=":material/download:",
        help="The graph after every pass as text, JSON" + (" and ONNX" if with_onnx else "")
             + ", numbered in pass order, plus the compile report: what `python -m ge_core compile "
               "--dump-dir` writes.")
    if not with_onnx:
        st.caption(f"The model's weights take {format_bytes(weights)}: the zip leaves out the per-pass .onnx "
                   "files (`python -m ge_core compile --dump-dir` writes them).")


def show_pass_details(compiled: CompiledModel, config: WorkbenchConfig) -> None:
    """One expander per pass: its explanation, what it did, and a switch feeding the sidebar's list."""
    st.markdown("#### What each pass does")
    for record in compiled.records:
        done = "changed the graph" if record.changed else "no change"
        label = f"{record.index}. {record.name} · {record.stage} · {done}"
        with st.expander(label):
            _pass_switch(record, config)
            st.markdown(md_escape_paragraphs(record.description) or "_(no description)_")
            for note in record.notes:
                st.markdown(f"- {md_escape(note)}")
            if record.decisions:
                fused = sum(d.accepted for d in record.decisions)
                st.caption(f"{fused} of {len(record.decisions)} fusion candidates fused:")
                st.dataframe(decision_table(record.decisions), hide_index=True,
                             column_config={"fused": st.column_config.CheckboxColumn()})
    off = [n for n in config.disabled if n not in {r.name for r in compiled.records}]
    if off:
        st.caption("Switched off (not run): " + ", ".join(code_span(n) for n in off)
                   + ". Remove them from *Passes switched off* in the sidebar to run them again.")


def _pass_switch(record: PassRecord, config: WorkbenchConfig) -> None:
    key = f"{PASS_KEY_PREFIX}{record.index}"
    st.session_state[key] = record.name not in config.disabled  # always mirrors the sidebar's list
    st.toggle("Run this pass", key=key, on_change=_flip_pass, args=(record.name, key),
              help="Switching it off recompiles without it (the sidebar's *Passes switched off* lists it). "
                   "A fusion pass switched off still logs what it would have fused.")


def _flip_pass(name: str, key: str) -> None:
    """Toggle callback (runs before the rerun): edit the sidebar multiselect's value, the one source."""
    off = set(st.session_state.get(DISABLED_KEY) or [])
    if st.session_state[key]:
        off.discard(name)
    else:
        off.add(name)
    st.session_state[DISABLED_KEY] = [n for n in pass_names() if n in off]


def md_escape_paragraphs(text: str) -> str:
    """A docstring as markdown paragraphs, every character shown as written."""
    return "\n\n".join(md_escape(p) for p in text.split("\n\n") if p.strip())


def _stem(config: WorkbenchConfig) -> str:
    title = config.choice.title if config.choice is not None else "model"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in title.removesuffix(".onnx"))[:40]
    return f"{safe or 'model'}_{config.opt_level}"
