"""The Model page's "where each node came from" for a PyTorch model: GE nodes -> modules -> classes."""

from __future__ import annotations

import streamlit as st

from ge_core.viz import module_table, node_origins
from workbench_ui.loading import LoadOutcome

EXPANDER_TITLE = "Where each node came from (PyTorch module tree)"


def show_torch_origins(outcome: LoadOutcome) -> None:
    """For a graph from ge_core.from_torch: each GE node's module and class, and each module's nodes.
    Draws nothing for any other model."""
    graph = outcome.result.graph if outcome.result is not None else None
    origins = node_origins(graph) if graph is not None else None
    modules = module_table(graph) if graph is not None else None
    if origins is None or modules is None:
        return
    with st.expander(EXPANDER_TITLE, icon=":material/account_tree:"):
        st.markdown("This model was captured from PyTorch by `torch.export` (`ge_core.from_torch`), not read "
                    "from an ONNX file. Each GE node is named after the module whose `forward` produced it "
                    "(`/layer2.0/downsample.0/…` is `model.layer2[0].downsample[0]`), so the canvas folds by "
                    "module. A module with no nodes of its own is a container, or its work was folded into "
                    "constants at import (an embedding table's lookup of fixed positions).")
        st.dataframe(origins, hide_index=True)
        st.markdown(f"**{len(modules)} modules**, with the GE nodes each produced directly:")
        st.dataframe(modules, hide_index=True)
