"""The Compare page's "Ours beside GE's" tab: our compile of a model beside GE's Build graph of the same
architecture (the GE dump open in the sidebar, a dump sample, or a dump uploaded here): kernels by op type,
the TransData nodes and where they sit, the formats the tensors are in, the fused groups.

Our side is the sidebar's model compiled at its settings, lowered for the Ascend 310 when the sidebar names
no target (TransData and NC1HWC0 appear only for a target); with a dump in the sidebar, a sample picked here
(the one the dump was made from, when it is a dump sample). `?ge_dump=NAME` opens the tab on a dump sample.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pandas as pd
import streamlit as st

from ge_core import CompiledModel
from ge_core.samples import dump_source, ge_dump_samples, get_sample, list_samples
from ge_core.viz import BesideGE, beside_ge
from workbench_ui import address
from workbench_ui.analysis import memo, table
from workbench_ui.hardware_picker import HardwareChoice
from workbench_ui.loading import load_model
from workbench_ui.model_picker import DUMP_TYPES, GE_DUMP, ModelChoice, sample_choice
from workbench_ui.session import WorkbenchConfig, compile_outcome, load_outcome
from workbench_ui.status import show_compile_failure
from workbench_ui.text import code_span, md_escape

GE_TAB = "Ours beside GE's"
GE_PARAM = "ge_dump"  # ?ge_dump=ge_resnet50_build: the GE side, and this tab open
GE_SIDE_KEY = "ge_beside_dump"
GE_UPLOAD_KEY = "ge_beside_upload"
OURS_KEY = "ge_beside_model"
UPLOAD = "Upload a dump…"
TARGET = "ascend310"  # the dump samples' target: ours is lowered for it when the sidebar names none
DEFAULT_MODEL = "resnet50"


def wants_ge_tab() -> bool:
    return bool(address.read(GE_PARAM))


def show_beside_ge(config: WorkbenchConfig) -> None:
    st.markdown("Our compile beside GE's **Build** graph of the same architecture: the kernels each launches by "
                "op type (ours named as GE names them: Conv as Conv2D, Gemm as FullyConnection), the **TransData** "
                "nodes (layout conversions: how many and between which ops), the **formats** the tensors are in "
                "(NC1HWC0, FRACTAL_Z …) and the **fused groups** (the ops one kernel holds).")
    ge = _ge_side(config)
    if ge is None:
        return
    ge_title, ge_key, ge_model = ge
    ours = _our_side(config)
    if ours is None:
        return
    our_title, our_key, our_model = ours
    st.caption(f"**Ours**: {md_escape(our_title)} · **GE's**: {md_escape(ge_title)}")
    show_beside(memo((our_key, ge_key, "beside ge"), lambda: beside_ge(our_model, ge_model)))


def _ge_side(config: WorkbenchConfig) -> tuple[str, str, CompiledModel] | None:
    """(title, key, the dump read) of GE's side, or None (said why) while there is none."""
    choice = config.choice
    if choice is not None and choice.is_ge_dump:
        dump = load_outcome(config).dump
        if dump is None:
            st.info("The GE dump in the sidebar could not be read (the Model page says why).")
            return None
        return choice.title, choice.key, dump
    picked = _pick_dump()
    if picked is None:
        return None
    outcome = load_model(picked, "")
    if outcome.dump is None:
        st.error(f"That dump cannot be read: {md_escape(outcome.error)}", icon=":material/error:")
        return None
    return picked.title, picked.key, outcome.dump


def _pick_dump() -> ModelChoice | None:
    samples = {s.name: s for s in ge_dump_samples()}
    options = [*samples, UPLOAD]
    wanted = address.read(GE_PARAM, options[0], options)
    if GE_SIDE_KEY not in st.session_state:
        st.session_state[GE_SIDE_KEY] = wanted
    picked = st.selectbox("GE's side", options, key=GE_SIDE_KEY,
                          format_func=lambda n: samples[n].title if n in samples else n,
                          help="A GE Build-stage dump (DUMP_GE_GRAPH=2, DUMP_GRAPH_LEVEL=3 writes only it): a sample "
                               "shipped here, or a ge_proto / ge_onnx file (or a zipped dump folder) of yours.")
    # The first dump, never chosen, stays out of the address: else a reload opened this tab by itself.
    address.write(GE_PARAM, picked if picked in samples else "", None if address.read(GE_PARAM) else options[0])
    if picked in samples:
        return sample_choice(samples[picked])
    file = st.file_uploader("GE's Build dump", type=DUMP_TYPES, key=GE_UPLOAD_KEY,
                            help="ge_proto_*_Build.txt, ge_onnx_*_Build.pbtxt, or the dump folder zipped "
                                 "(its main graph's last stage is compared).")
    if file is None:
        return None
    data = file.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    return ModelChoice(f"upload:{digest}", file.name, "Uploaded GE dump", GE_DUMP, "", lambda: data, file.name)


def _our_side(config: WorkbenchConfig) -> tuple[str, tuple[object, ...], CompiledModel] | None:
    """(title, key, our compile) of our side, or None (said why) when it did not compile."""
    ours = config if config.choice is not None and not config.choice.is_ge_dump else _sample_config(config)
    if ours.settings.hardware is None:
        ours = ours.with_hardware(HardwareChoice(TARGET, TARGET, TARGET))
    outcome = compile_outcome(ours)
    if outcome.compiled is None:
        show_compile_failure(outcome)
        return None
    assert ours.choice is not None
    title = f"{ours.choice.title} at {ours.opt_level} for {ours.hardware.label}"
    return title, ours.cache_key, outcome.compiled


def _sample_config(config: WorkbenchConfig) -> WorkbenchConfig:
    """With a dump in the sidebar: a model sample picked here, compiled at O3 for the Ascend 310."""
    samples = {s.name: s for s in list_samples()}
    default = DEFAULT_MODEL
    if config.choice is not None and config.choice.key.startswith("sample:"):
        name = config.choice.key.split(":")[1]
        default = dump_source(name) if get_sample(name).kind == GE_DUMP else default
    names = list(samples)
    picked = st.selectbox("Our side: the model compiled here", names, index=names.index(default) if default in names
                          else 0, key=OURS_KEY, format_func=lambda n: samples[n].title,
                          help="Compiled at O3 for the Ascend 310 (GE's Build graph is the one for its target).")
    settings = replace(config.settings, opt_level="O3", disabled_passes=frozenset(), hardware=TARGET)
    return WorkbenchConfig(sample_choice(samples[str(picked)]), samples[str(picked)].input_shapes, settings,
                           HardwareChoice(TARGET, TARGET, TARGET))


def show_beside(beside: BesideGE) -> None:
    cols = st.columns(3)
    for col, (label, (ours, ge)) in zip(cols, beside.headline().items(), strict=True):
        col.metric(f"{label}: ours | GE's", f"{ours:,} | {ge:,}",
                   delta=f"{ours - ge:+,} ours" if ours != ge else "the same", delta_color="off")
    st.markdown("##### Kernels by op type")
    table(beside.kernels, "ge_beside_kernels")
    st.markdown("##### TransData: how many, and where")
    _sides(beside.transdata, "ge_beside_transdata", "No TransData on either side: both graphs stay in one layout.")
    st.markdown("##### Formats (tensors in each)")
    table(beside.formats, "ge_beside_formats")
    st.markdown("##### Fused groups (ops one kernel holds)")
    _sides(beside.fused, "ge_beside_fused", "No fused group on either side.")


def _sides(frame: pd.DataFrame, key: str, empty: str) -> None:
    if frame.empty:
        st.caption(empty)
        return
    counts = frame["side"].value_counts()
    st.caption(" · ".join(f"{code_span(side)}: {int(counts.get(side, 0)):,}" for side in ("ours", "GE")))
    table(frame, key, wide=("originals", "to"))
