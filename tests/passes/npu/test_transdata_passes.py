"""TransDataSymmetryEliminationPass and TransDataBreadthFusionPass on graphs holding TransData already."""

from __future__ import annotations

from ge_core.ir import Graph, TensorDesc
from ge_core.passes.npu import TransDataBreadthFusionPass, TransDataSymmetryEliminationPass
from tests.passes.npu.helpers import transdata
from tests.passes.npu.test_format_selection import run_checked
from tests.passes.pass_helpers import NodeSpec, build

X = TensorDesc((1, 16, 4, 4), "float32", "NCHW")
GE = {"domain": "ge", "opset": 1}


def to_5hd(src: str, out: str) -> NodeSpec:
    return ("TransData", [src], [out], {"src_format": "NCHW", "dst_format": "NC1HWC0"})


def to_nchw(src: str, out: str) -> NodeSpec:
    return ("TransData", [src], [out], {"src_format": "NC1HWC0", "dst_format": "NCHW"})


def graph(nodes: list[NodeSpec], outputs: list[str]) -> Graph:
    return build({"x": X}, {}, nodes, outputs, **{n[2][0]: GE for n in nodes if n[0] == "TransData"})


def test_pair_into_and_out_of_5hd_disappears() -> None:
    g = graph([("Relu", ["x"], ["r"], {}), to_5hd("r", "a"), to_nchw("a", "b"), ("Sigmoid", ["b"], ["y"], {})], ["y"])
    assert run_checked(TransDataSymmetryEliminationPass(), g).changed
    assert transdata(g) == [] and g.node("y").inputs == ("r",)


def test_pair_writing_a_graph_output_keeps_the_name() -> None:
    g = graph([("Relu", ["x"], ["r"], {}), to_5hd("r", "a"), to_nchw("a", "y")], ["y"])
    run_checked(TransDataSymmetryEliminationPass(), g)
    assert transdata(g) == [] and g.node("r").outputs == ("y",)  # r renamed to the output's name


def test_pair_between_graph_input_and_output_stays() -> None:
    """Bypassing would make the graph output the graph input itself: the interface wins, the pair stays."""
    g = graph([to_5hd("x", "a"), to_nchw("a", "y")], ["y"])
    assert not run_checked(TransDataSymmetryEliminationPass(), g).changed


def test_same_direction_twice_is_no_pair() -> None:
    g = graph([to_5hd("x", "a"), ("TransData", ["a"], ["b"], {"src_format": "NC1HWC0", "dst_format": "NC1HWC0"}),
               to_nchw("b", "y")], ["y"])
    assert not run_checked(TransDataSymmetryEliminationPass(), g).changed


def test_chain_of_round_trips_collapses() -> None:
    g = graph([("Relu", ["x"], ["r"], {}), to_5hd("r", "a"), to_nchw("a", "b"), to_5hd("b", "c"),
               to_nchw("c", "d"), ("Sigmoid", ["d"], ["y"], {})], ["y"])
    result = run_checked(TransDataSymmetryEliminationPass(), g)
    assert result.notes == ("removed 2 inverse TransData pair(s) (4 TransData erased; a first half that another "
                            "reader needs stays)",)
    assert transdata(g) == []


def test_breadth_merges_identical_conversions() -> None:
    g = graph([to_5hd("x", "a"), to_5hd("x", "b"), to_nchw("a", "a2"), to_nchw("b", "b2"),
               ("Add", ["a2", "b2"], ["y"], {})], ["y"])
    result = run_checked(TransDataBreadthFusionPass(), g)
    assert result.notes == ("merged 2 duplicate TransData into the first converting the same tensor",)
    assert transdata(g) == [("x", "NCHW", "NC1HWC0"), ("a", "NC1HWC0", "NCHW")]
    assert g.node("y").inputs == ("a2", "a2")


def test_breadth_keeps_a_conversion_writing_a_graph_output() -> None:
    g = graph([to_5hd("x", "a"), to_nchw("a", "z"), to_nchw("a", "y"), ("Relu", ["z"], ["r"], {})], ["y", "r"])
    assert not run_checked(TransDataBreadthFusionPass(), g).changed  # y must stay a tensor of its own
    g = graph([to_5hd("x", "a"), to_nchw("a", "y"), to_nchw("a", "z"), ("Relu", ["z"], ["r"], {})], ["y", "r"])
    assert run_checked(TransDataBreadthFusionPass(), g).changed  # the first may write one: z's reader reads y
    assert g.node("r").inputs == ("y",)
