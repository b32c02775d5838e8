"""Model page (also the landing page, at `/`): the imported model's legality report, summary and GE Graph."""

from __future__ import annotations

import streamlit as st

from workbench_ui.ge_dump_view import show_dump_facts
from workbench_ui.router import page_start
from workbench_ui.sections import show_counts, show_graph, show_legality, show_load_error, show_tensors_and_ops
from workbench_ui.session import load_outcome
from workbench_ui.status import failure_link
from workbench_ui.text import md_escape
from workbench_ui.torch_origins import show_torch_origins

INTRO = (
    "**What am I looking at?** GE Workbench imports an ONNX model into a **GE Graph**, the graph IR of "
    "Ascend CANN's Graph Engine: operator nodes joined by tensors, each tensor with a shape and dtype "
    "worked out by shape inference. The import runs a **legality check** that lists, all at once, "
    "everything the compiler could not handle (operators without a kernel, shape errors) before any "
    "compile pass runs. Pick a sample or upload a model in the sidebar. A **GE dump** (a graph as real GE "
    "compiled it: a sample, or an uploaded `ge_proto_*.txt`, `ge_onnx_*.pbtxt` or zipped dump folder) opens "
    "here too, with GE's op types and TensorDescs."
)

config, choice = page_start("GE Workbench", INTRO)
outcome = load_outcome(config)
st.subheader(md_escape(choice.title))
if outcome.result is None or outcome.summary is None:
    show_load_error(outcome)
else:
    if outcome.dump is not None:
        show_dump_facts(choice.key, outcome.dump)
    else:
        show_legality(outcome.summary)
    show_counts(outcome.summary)
    # the canvas in the first screen (issue 40: it sat below the tables and chart), then the text form
    show_graph((choice.key, config.input_shapes), outcome.result.graph)
    show_tensors_and_ops(outcome.summary)
show_torch_origins(outcome)  # a model captured from PyTorch: where each node came from
failure_link(outcome)
