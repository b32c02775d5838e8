"""What the pages show of a GE graph dump (a sample of kind ge_dump, or an uploaded ge_proto / ge_onnx file or
zipped dump folder), which the session hands them as a CompiledModel read from the dump (nothing compiles):
what the dump is, a plain word where a page or section cannot apply to it, the copy the Profile page prices
(GE's types mapped to ours, the rest unpriced), and on the Debug page the ops a GE log names marked on it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable

import streamlit as st

from ge_core import CompiledModel
from ge_core.debugging import GELog, ge_dump_facts, names_on_graph, priced_dump, unpriced_nodes
from workbench_ui.analysis import memo
from workbench_ui.ge_log_view import show_ge_log_section
from workbench_ui.model_canvas import show_graph_canvas
from workbench_ui.model_picker import ModelChoice
from workbench_ui.session import WorkbenchConfig
from workbench_ui.text import code_span, md_escape

DOCS = "docs/ge_dumps.md"
LOG_MARK = "named in the log"


def heading(choice: ModelChoice, config: WorkbenchConfig) -> str:
    """A page's subheader: the model at its opt level, or the dump as GE compiled it."""
    if choice.is_ge_dump:
        return f"{md_escape(choice.title)} (as GE compiled it)"
    return f"{md_escape(choice.title)} at {config.opt_level}"


def not_for_dumps(choice: ModelChoice, why: str) -> None:
    """On a dump, say plainly why this page (or tab) does not apply, and stop there."""
    if choice.is_ge_dump:
        st.info(f"**{md_escape(choice.title)}** is a GE graph dump: {why}", icon=":material/info:")
        st.stop()


def show_dump_facts(key: Hashable, compiled: CompiledModel) -> None:
    """The Model page's word on a dump, where a model's legality check goes: its stages, form, weights, the
    GE types without an op of ours and the problems met reading it."""
    facts = ge_dump_facts(compiled) or {}
    stages = list(facts.get("stages", []))
    weights = ("with weights (DUMP_GE_GRAPH=1)" if facts.get("weights") == "present"
               else "without weights (DUMP_GE_GRAPH=2 or 3: constants are shown as shapes)")
    steps = (f"{len(stages)} stages ({', '.join(code_span(s) for s in stages[:8])}"
             f"{' …' if len(stages) > 8 else ''}): the Graph page steps through them"
             if len(stages) > 1 else f"one stage ({code_span(stages[0] if stages else '?')})")
    st.success(f"A GE graph dump, {md_escape(str(facts.get('form', 'ge_proto')))} form, {weights}; {steps}. "
               "Shown as GE compiled it: GE's op types and TensorDescs (format, origin format and shape) as the "
               "file has them.", icon=":material/description:")
    unpriced = set(unpriced_nodes(costed(key, compiled).graph))
    unmapped = sorted({n.op_type for n in compiled.graph.nodes if n.name in unpriced})
    if unmapped:
        st.info(f"GE types with no op of ours: {', '.join(code_span(t) for t in unmapped)}. They are shown with "
                "their attributes (red on the canvas) and left unpriced on the Profile page.", icon=":material/info:")
    problems = list(facts.get("problems", []))
    if problems:
        with st.expander(f"{len(problems)} thing(s) the reader noticed"):
            st.markdown("\n".join(f"- {md_escape(p)}" for p in problems[:50]))


def no_stages_note(choice: ModelChoice) -> str | None:
    """What the Graph page's stepper says when a dump has a single stage (None for a model)."""
    if not choice.is_ge_dump:
        return None
    return ("This dump holds one stage: there is nothing to step through. A dump folder of several stages "
            "(DUMP_GRAPH_LEVEL=1 or 2), zipped and uploaded in the sidebar, steps here stage by stage with the "
            "diff.")


def costed(key: Hashable, compiled: CompiledModel) -> CompiledModel:
    """What the Profile page simulates: a dump's copy with GE's types mapped to ours (the rest unpriced);
    a compile of ours as it is."""
    if ge_dump_facts(compiled) is None:
        return compiled
    return memo((key, "priced dump"), lambda: priced_dump(compiled))


def show_unpriced(key: Hashable, compiled: CompiledModel) -> None:
    """On a dump: the nodes the simulator could not price (GE types with no op of ours), by type."""
    if ge_dump_facts(compiled) is None:
        return
    unpriced = set(unpriced_nodes(costed(key, compiled).graph))
    if not unpriced:
        st.caption("Every op of this dump maps to an op of ours: all of it is priced.")
        return
    types = Counter(n.op_type for n in compiled.graph.nodes if n.name in unpriced)
    shown = ", ".join(f"{code_span(t)} ×{c}" for t, c in types.most_common(12))
    st.info(f"{len(unpriced)} op(s) of GE types with no op of ours are **unpriced** (not in the timings below, "
            f"shown on the graph): {shown}. Mapped types are priced as our equivalent (Conv2D as Conv, "
            "FullyConnection as Gemm …).", icon=":material/help:")


def show_dump_debug(key: Hashable, compiled: CompiledModel, title: str) -> None:
    """The Debug page on a dump: nothing runs, so a GE log is what there is to read; the ops and kernels it
    names are marked on the dumped graph (as the page marks a failing pass's nodes) and named."""
    st.info("A GE dump is not run here (its GE ops have no CPU kernel of ours), so there is no numeric bisection "
            "or reproducer: read GE's own log below, and the ops and kernels it names are marked on the dumped "
            "graph.", icon=":material/info:")
    graph = compiled.graph
    log = show_ge_log_section({n.name for n in graph.nodes}, title)
    marked = show_log_matches(log, compiled)
    st.markdown("#### The dumped graph" + (f" ({LOG_MARK} in red)" if marked else ""))
    show_graph_canvas(key, graph, "ge_dump_log", canvas_key="ge_debug_dump_canvas", label="dump",
                      marked=marked, marked_name=LOG_MARK)


def show_log_matches(log: GELog | None, compiled: CompiledModel) -> list[str]:
    """Which names of the log are on the dumped graph (and which are not); the nodes to mark."""
    if log is None or not log.errors:
        return []
    found = names_on_graph(log.names, compiled.graph)
    if found.marked:
        parts = [f"{code_span(name)} → {', '.join(code_span(n) for n in nodes[:6])}"
                 f"{' …' if len(nodes) > 6 else ''}" for name, nodes in found.marked.items()]
        st.success("Found on the dumped graph (marked red below): " + "; ".join(parts), icon=":material/my_location:")
    if found.unmatched:
        st.caption("Named in the log, not on this graph: " + ", ".join(code_span(n) for n in found.unmatched[:20]))
    return found.nodes


NO_RUN = ("its GE ops have no CPU kernel of ours and its weights are not run here, so there are no outputs to "
          "compare. The timings above are the simulator's, on the ops it can price.")


def for_models_only(choice: ModelChoice, why: str, section: Callable[[], None]) -> Callable[[], None]:
    """A page section that runs on a model, and on a dump says why it does not apply."""
    def shown() -> None:
        if choice.is_ge_dump:
            st.info(f"**{md_escape(choice.title)}** is a GE graph dump: {why}", icon=":material/info:")
            return
        section()
    return shown


def show_dump_stages(choice: ModelChoice, compiled: CompiledModel) -> None:
    """The Passes page on a dump: GE's stages as the dump has them (no pass of ours ran, none can be switched
    off: GE's own fusion switches live in its fusion_switch.cfg), then the page stops."""
    if not choice.is_ge_dump:
        return
    facts = ge_dump_facts(compiled) or {}
    st.info("This is a GE graph dump: GE ran its own passes, so none can be switched off or explained here. "
            "Below are the stages the dump holds, in GE's order; the Graph page steps through them with the "
            "diff, the Fusion page lists the ops GE fused.", icon=":material/info:")
    stages = list(facts.get("stages", []))
    files = list(facts.get("files", []))
    nodes = [len(compiled.input_graph), *(r.nodes_after for r in compiled.records)]
    changed = [False, *(r.changed for r in compiled.records)]
    st.dataframe({"stage": stages, "file": files, "nodes": nodes[:len(stages)], "changed": changed[:len(stages)]},
                 hide_index=True)
    st.stop()
