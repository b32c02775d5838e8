"""The web page with PyTorch samples: offered in the picker, and the Model page says where each node came
from in the module tree."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch")  # CI installs it (scripts/install_test_deps.sh); without it none is offered

from streamlit.testing.v1 import AppTest

import ge_core
from ge_core.samples import get_sample, sample_bytes
from ge_core.samples.torch_samples import available_torch_samples
from ge_core.viz import module_table, node_origins
from tests.app.apptest import REPO, open_app
from workbench_ui.model_picker import SAMPLE_KEY
from workbench_ui.text import md_escape
from workbench_ui.torch_origins import EXPANDER_TITLE


def origin_tables(at: AppTest) -> list[list[dict[str, object]]]:
    (expander,) = [e for e in at.expander if e.label == EXPANDER_TITLE]
    return [frame.value.to_dict("records") for frame in expander.dataframe]


def test_the_picker_offers_the_torch_samples_next_to_the_onnx_ones() -> None:
    at = open_app()
    assert not at.exception
    options = at.selectbox(key=SAMPLE_KEY).options
    torch_labels = [o for o in options if o.startswith("PyTorch · ")]
    assert len(torch_labels) == len(available_torch_samples()) >= 2
    assert any(o.startswith("Sample · ") for o in options)
    assert not [e for e in at.expander if e.label == EXPANDER_TITLE]  # an ONNX sample: no module tree


def test_the_model_page_says_where_each_node_came_from() -> None:
    at = open_app("torch_resnet")
    assert not at.exception
    assert at.subheader[0].value == md_escape(get_sample("torch_resnet").title)
    nodes, modules = origin_tables(at)
    graph = ge_core.load_onnx(sample_bytes("torch_resnet"))
    want_nodes, want_modules = node_origins(graph), module_table(graph)
    assert want_nodes is not None and want_modules is not None
    assert nodes == want_nodes.to_dict("records") and len(nodes) == len(graph.nodes)
    assert modules == want_modules.to_dict("records")
    projection = next(r for r in nodes if str(r["node"]).startswith("/layer2.0/downsample.0/"))
    assert (projection["op"], projection["module"], projection["class"]) == ("Conv", "layer2.0.downsample.0",
                                                                             "Conv2d")
    assert {m["module"]: m["class"] for m in modules}["layer2.0"] == "BasicBlock"


def test_starting_the_app_on_an_onnx_sample_does_not_import_torch() -> None:
    code = ("import sys; from tests.app.apptest import open_app; at = open_app(); "
            "assert not at.exception; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
