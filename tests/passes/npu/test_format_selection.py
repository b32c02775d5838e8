"""FormatSelectionPass and the TransData passes on small hand-built graphs: which ops go to NC1HWC0, the
TransData it puts at each op's boundary, and the inverse pairs and duplicates the next passes remove."""

from __future__ import annotations

import numpy as np

from ge_core.ir import Graph
from ge_core.ir.formats import FRACTAL_Z, NC1HWC0
from ge_core.ops import REGISTRY
from ge_core.passes.infra.base import GraphPass, PassResult
from ge_core.passes.npu import FormatSelectionPass, TransDataBreadthFusionPass, TransDataSymmetryEliminationPass
from ge_core.passes.npu.check import format_problems
from tests.passes.npu.helpers import build, node, same_outputs, transdata, weight

LOWERING: list[GraphPass] = [FormatSelectionPass(), TransDataSymmetryEliminationPass(), TransDataBreadthFusionPass()]


def run_checked(pass_: GraphPass, graph: Graph) -> PassResult:
    """Run a pass; check verify(), formats on every edge, the interface, numbers, and honest `changed`."""
    before = graph.copy()
    result = pass_.run(graph)
    graph.verify(REGISTRY)
    assert format_problems(graph) == []
    assert (graph.inputs, graph.outputs) == (before.inputs, before.outputs)
    assert (graph.to_text() != before.to_text()) == result.changed
    same_outputs(before, graph)
    return result


def lower(graph: Graph) -> list[PassResult]:
    return [run_checked(p, graph) for p in LOWERING]


def cnn() -> Graph:
    """Conv -> Relu -> Conv -> Flatten -> Gemm: a CNN body and its classifier head."""
    return build([node("Conv", ["x", "w1"], "c1", pads=[1, 1, 1, 1]), node("Relu", ["c1"], "r1"),
                  node("Conv", ["r1", "w2"], "c2"), node("Flatten", ["c2"], "f"),
                  node("Gemm", ["f", "wf"], "y", transB=1)],
                 {"x": [1, 8, 6, 6]}, ["y"], {"w1": weight(16, 8, 3, 3), "w2": weight(4, 16, 1, 1),
                                              "wf": weight(10, 144)})


def test_insertion_makes_inverse_pairs_that_elimination_removes() -> None:
    g = cnn()
    selected = run_checked(FormatSelectionPass(), g)
    assert selected.notes[0] == "3 op(s) work in NC1HWC0 (2 Conv, 1 Relu); 2 keep their origin format"
    assert transdata(g) == [("x", "NCHW", NC1HWC0), ("c1_nc1hwc0", NC1HWC0, "NCHW"), ("c1", "NCHW", NC1HWC0),
                            ("r1_nc1hwc0", NC1HWC0, "NCHW"), ("r1", "NCHW", NC1HWC0),
                            ("c2_nc1hwc0", NC1HWC0, "NCHW")]  # every op wrapped: two back-to-back pairs
    removed = run_checked(TransDataSymmetryEliminationPass(), g)
    assert removed.notes == ("removed 2 inverse TransData pair(s) (4 TransData erased; a first half that "
                             "another reader needs stays)",)
    assert g.to_text() == (
        "graph g (%x: f32[1,8,6,6]) {\n"
        "  const %w1: f32[16,8,3,3]@FRACTAL_Z\n"
        "  const %w2: f32[4,16,1,1]@FRACTAL_Z\n"
        "  const %wf: f32[10,144]\n"
        "  %x_nc1hwc0 = ge.TransData(%x) {dst_format='NC1HWC0', src_format='NCHW'} : f32[1,8,6,6]@NC1HWC0\n"
        "  %c1_nc1hwc0 = Conv(%x_nc1hwc0, %w1) {pads=[1, 1, 1, 1]} : f32[1,16,6,6]@NC1HWC0  # c1\n"
        "  %r1_nc1hwc0 = Relu(%c1_nc1hwc0) : f32[1,16,6,6]@NC1HWC0  # r1\n"
        "  %c2_nc1hwc0 = Conv(%r1_nc1hwc0, %w2) : f32[1,4,6,6]@NC1HWC0  # c2\n"
        "  %c2 = ge.TransData(%c2_nc1hwc0) {dst_format='NCHW', src_format='NC1HWC0'} : f32[1,4,6,6]  # c2_1\n"
        "  %f = Flatten(%c2) : f32[1,144]\n"
        "  %y = Gemm(%f, %wf) {transB=1} : f32[1,10]\n"
        "  return %y\n"
        "}")
    assert not run_checked(TransDataBreadthFusionPass(), g).changed


def test_a_first_half_another_reader_needs_stays() -> None:
    """c1 feeds a Conv (NC1HWC0) and a Softmax (NCHW): the NCHW copy stays for the Softmax only."""
    g = build([node("Conv", ["x", "w1"], "c1"), node("Conv", ["c1", "w2"], "c2"), node("Softmax", ["c1"], "s", axis=1)],
              {"x": [1, 4, 5, 5]}, ["c2", "s"], {"w1": weight(8, 4, 1, 1), "w2": weight(8, 8, 1, 1)})
    lower(g)
    assert transdata(g) == [("x", "NCHW", NC1HWC0), ("c1_nc1hwc0", NC1HWC0, "NCHW"), ("c2_nc1hwc0", NC1HWC0, "NCHW")]
    assert [u.op_type for u in g.users("c1")] == ["Softmax"]
    assert g.desc("c2").format == "NCHW" and g.is_output("c2")  # graph outputs keep their names and layout


def test_breadth_merges_conversions_of_one_input() -> None:
    """x feeds two convolutions: one TransData each at first, one shared after the breadth merge."""
    g = build([node("Conv", ["x", "w1"], "a"), node("Conv", ["x", "w2"], "b"), node("Add", ["a", "b"], "y")],
              {"x": [1, 4, 5, 5]}, ["y"], {"w1": weight(8, 4, 1, 1), "w2": weight(8, 4, 1, 1)})
    selected, _, merged = lower(g)
    assert selected.notes[2] == "7 TransData inserted at the ops' format boundaries"  # 2 in, 2 out, Add 2 in 1 out
    assert merged.notes == ("merged 1 duplicate TransData into the first converting the same tensor",)
    assert transdata(g) == [("x", "NCHW", NC1HWC0), ("y_nc1hwc0", NC1HWC0, "NCHW")]


def test_agnostic_ops_follow_and_broadcast_along_c_refuses() -> None:
    """The residual Add follows its NC1HWC0 input; a Mul by a [1,1,H,W] map would broadcast across C0 lanes."""
    g = build([node("Conv", ["x", "w"], "c"), node("Add", ["c", "x"], "res"), node("Mul", ["res", "m"], "y")],
              {"x": [1, 8, 4, 4], "m": [1, 1, 4, 4]}, ["y"], {"w": weight(8, 8, 1, 1)})
    selected = run_checked(FormatSelectionPass(), g)
    reasons = {f["node"]: (f["format"], f["reason"]) for f in selected.report["formats"]}
    assert reasons["res"] == (NC1HWC0, "elementwise: the same in any layout, follows its inputs: 'c' comes in NC1HWC0")
    assert reasons["y"][0] == "origin" and "broadcasts along C" in reasons["y"][1]
    run_checked(TransDataSymmetryEliminationPass(), g)
    run_checked(TransDataBreadthFusionPass(), g)
    assert transdata(g) == [("x", "NCHW", NC1HWC0), ("res_nc1hwc0", NC1HWC0, "NCHW")]


def test_constants_are_converted_at_compile_time() -> None:
    """Weights become FRACTAL_Z, a per-channel [C,1,1] constant NC1HWC0; one also read as is is copied."""
    w = weight(8, 8, 1, 1)
    g = build([node("Conv", ["x", "w"], "c"), node("Add", ["c", "bias"], "b"), node("Conv", ["b", "w"], "c2"),
               node("Reshape", ["w", "shape"], "wflat")],
              {"x": [1, 8, 4, 4]}, ["c2", "wflat"], {"w": w, "bias": weight(8, 1, 1),
                                                     "shape": np.array([8, 8], np.int64)})
    lower(g)
    assert g.desc("bias").format == NC1HWC0 and g.desc("bias").device_shape == (1, 1, 1, 1, 16)
    assert g.desc("w").format == "NCHW"  # the Reshape reads the weight as it is
    assert [g.desc(t).format for t in ("w_fractal_z",)] == [FRACTAL_Z]
    assert [n.input(1) for n in g.nodes if n.op_type == "Conv"] == ["w_fractal_z", "w_fractal_z"]
    assert transdata(g) == [("x", "NCHW", NC1HWC0), ("c2_nc1hwc0", NC1HWC0, "NCHW")]  # no runtime weight conversion


def test_graphs_without_feature_maps_are_left_alone() -> None:
    g = build([node("MatMul", ["x", "w"], "m"), node("Relu", ["m"], "y")], {"x": [2, 8]}, ["y"], {"w": weight(8, 4)})
    assert [r.changed for r in lower(g)] == [False, False, False]


def test_lowering_twice_changes_nothing() -> None:
    g = cnn()
    lower(g)
    text = g.to_text()
    assert [r.changed for r in lower(g)] == [False, False, False]
    assert g.to_text() == text
