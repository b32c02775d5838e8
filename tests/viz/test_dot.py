"""graph_to_dot: labels, escaping of awkward names, truncation, colours, determinism, stable ids."""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ge_core.ir.graph import Graph
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, Category
from ge_core.viz import category_legend, graph_to_dot
from ge_core.viz.dot import CATEGORY_COLOURS, UNDEFINED_TEXT, UNSUPPORTED_FILL, shorten
from tests.viz.graphs import chain

F32 = "float32"
NODE_LINE = re.compile(r"^  ((?:op|in|out)_[0-9a-f]{12}(?:_\d+)?) \[label=<(.*)>, (.*)\]$")
AWKWARD = ['gpu_0/conv1_w_0', 'onnx::Reshape_123', 'q"uote', 'back\\slash', 'a<b>&c', '{br}ace', 'end\\']


def desc(*shape: int) -> TensorDesc:
    return TensorDesc(tuple(shape), F32)


def conv_graph() -> Graph:
    g = Graph("conv")
    g.add_input("x", desc(-1, 3, 8, 8), ["batch", 3, 8, 8])
    g.add_constant("w", np.zeros((4, 3, 3, 3), np.float32))
    g.add_constant("b", np.zeros((4,), np.float32))
    g.add_node("Conv", ["x", "w", "b"], ["y"], {"pads": [1, 1, 1, 1]}, name="conv1", descs=[desc(1, 4, 8, 8)])
    g.add_node("Relu", ["y"], ["z"], name="relu1", descs=[desc(1, 4, 8, 8)])
    g.set_outputs(["z"])
    return g


def node_lines(source: str) -> dict[str, tuple[str, str]]:
    """node id -> (label inner HTML, other attributes)."""
    return {m[1]: (m[2], m[3]) for m in map(NODE_LINE.match, source.splitlines()) if m}


def label_text(inner: str) -> list[str]:
    """The label's text lines, parsed as XML: proves the HTML-like label is well formed."""
    lines = [""]

    def walk(el: ET.Element) -> None:
        if el.tag == "br":
            lines.append("")
        lines[-1] += el.text or ""
        for child in el:
            walk(child)
            lines[-1] += child.tail or ""

    walk(ET.fromstring(f"<r>{inner}</r>"))
    return lines


def unquote(dot_string: str) -> str:
    """Undo DOT quoting then escString backslash escapes (what Graphviz shows as the tooltip)."""
    assert dot_string.startswith('"') and dot_string.endswith('"')
    return re.sub(r'\\(["\\])', r"\1", dot_string[1:-1])


def test_op_label_has_type_name_weights_and_shape() -> None:
    view = graph_to_dot(conv_graph())
    labels = [label_text(inner) for inner, _ in node_lines(view.source).values()]
    assert ["Conv", "conv1", "W: f32[4,3,3,3]", "B: f32[4]", "f32[1,4,8,8]"] in labels
    assert ["Relu", "relu1", "f32[1,4,8,8]"] in labels
    assert ["x", "f32[batch,3,8,8]"] in labels  # inputs keep their symbolic dim names
    assert ["z", "f32[1,4,8,8]"] in labels
    assert "<b>Conv</b>" in view.source


def test_constants_are_not_drawn_as_nodes() -> None:
    view = graph_to_dot(conv_graph())
    assert len(node_lines(view.source)) == 4  # x, conv1, relu1, z: no node for w or b
    assert view.source.count("->") == 3
    assert (view.shown, view.total, view.truncated, view.note) == (2, 2, False, "")


def test_scalar_constant_shows_its_value() -> None:
    g = Graph("pow")
    g.add_input("x", desc(2))
    g.add_constant("two", np.array(2.0, np.float32))
    g.add_node("Pow", ["x", "two"], ["y"], name="pow", descs=[desc(2)])
    g.set_outputs(["y"])
    assert "Y: f32[] = 2" in graph_to_dot(g).source


@pytest.mark.parametrize("name", AWKWARD)
def test_awkward_names_are_escaped(name: str) -> None:
    g = Graph("awkward")
    g.add_input(name + "_in", desc(1))
    g.add_node("Relu", [name + "_in"], [name], name=name, descs=[desc(1)])
    g.set_outputs([name])
    source = graph_to_dot(g).source
    lines = node_lines(source)
    assert len(lines) == 3, source  # every node statement still parses as one line
    texts = [label_text(inner) for inner, _ in lines.values()]
    assert ["Relu", name, "f32[1]"] in texts
    tooltips = [unquote(m) for _, attrs in lines.values() for m in re.findall(r'tooltip=("(?:[^"\\]|\\.)*")', attrs)]
    assert f"{name} (Relu, {REGISTRY.get('Relu').category.value})" in tooltips  # type: ignore[union-attr]


def test_shorten_keeps_head_and_tail() -> None:
    name = "gpu_0/res4_22_branch2a_bn_scale_sum_relu_w_0"
    short = shorten(name, 30)
    assert len(short) == 30 and short.startswith("gpu_0/") and short.endswith("relu_w_0") and "…" in short
    assert shorten("conv1") == "conv1"


def test_truncation_note_and_more_box() -> None:
    view = graph_to_dot(chain(30), max_nodes=10)
    assert (view.shown, view.total, view.truncated) == (10, 30, True)
    assert "first 10 of 30 nodes" in view.note and "20 later nodes" in view.note
    assert "1 graph output" in view.note
    assert "20 more nodes not drawn" in view.source
    assert len(node_lines(view.source)) == 11  # the input and ten ops; the output is left out
    assert view.source.count("-> more") == 1  # only relu9 feeds an undrawn node


def test_unsupported_op_is_red_and_dashed() -> None:
    g = Graph("custom")
    g.add_input("x", desc(1))
    g.add_node("FancyOp", ["x"], ["y"], name="fancy", domain="com.example")
    g.set_outputs(["y"])
    inner, attrs = next(v for v in node_lines(graph_to_dot(g).source).values() if "FancyOp" in v[0])
    assert f'fillcolor="{UNSUPPORTED_FILL}"' in attrs and "dashed" in attrs
    assert label_text(inner) == ["com.example::FancyOp", "fancy", UNDEFINED_TEXT]


def test_supported_op_takes_its_category_colour() -> None:
    relu = REGISTRY.get("Relu")
    assert relu is not None
    _, attrs = next(v for v in node_lines(graph_to_dot(chain(1)).source).values() if "Relu" in v[0])
    assert f'fillcolor="{CATEGORY_COLOURS[relu.category]}"' in attrs


def test_highlight_thickens_the_border() -> None:
    source = graph_to_dot(chain(3), highlight=["relu1"]).source
    assert source.count("penwidth=3") == 1
    assert "penwidth=3" in next(line for line in source.splitlines() if ">relu1<" in line)


def test_output_is_deterministic_and_ids_are_stable() -> None:
    assert graph_to_dot(conv_graph()).source == graph_to_dot(conv_graph()).source
    ids = set(node_lines(graph_to_dot(chain(5)).source))
    longer = set(node_lines(graph_to_dot(chain(8), max_nodes=5).source))
    assert ids - {i for i in ids if i.startswith("out_")} <= longer  # same node, same id


def test_rankdir_and_limits_are_checked() -> None:
    assert "rankdir=LR" in graph_to_dot(chain(2), rankdir="LR").source
    with pytest.raises(ValueError, match="rankdir"):
        graph_to_dot(chain(2), rankdir="XX")
    with pytest.raises(ValueError, match="max_nodes"):
        graph_to_dot(chain(2), max_nodes=-1)


def test_legend_lists_every_category() -> None:
    legend = category_legend()
    assert [name for name, _ in legend] == [c.value for c in Category] + ["unsupported"]
    assert all(colour in CATEGORY_COLOURS.values() or colour == UNSUPPORTED_FILL for _, colour in legend)


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz binary is not installed")
def test_graphviz_accepts_awkward_source() -> None:
    g = Graph("awkward")
    previous = "x"
    g.add_input("x", desc(1))
    for name in AWKWARD:
        g.add_node("Relu", [previous], [name], name=name, descs=[desc(1)])
        previous = name
    g.set_outputs([previous])
    done = subprocess.run(["dot", "-Tsvg"], input=graph_to_dot(g).source, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert "a&lt;b&gt;&amp;c" in done.stdout and "onnx::Reshape_123" in done.stdout


def test_control_characters_never_break_a_line() -> None:
    g = Graph("ctrl")
    g.add_input("x", desc(1))
    g.add_node("Relu", ["x"], ["line\nbreak"], name="line\nbreak\t", descs=[desc(1)])
    g.set_outputs(["line\nbreak"])
    lines = node_lines(graph_to_dot(g).source)
    assert len(lines) == 3
    assert ["Relu", "line break ", "f32[1]"] in [label_text(inner) for inner, _ in lines.values()]
