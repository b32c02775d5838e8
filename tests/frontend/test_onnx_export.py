"""GE Graph -> ONNX: every runnable sample survives load -> to_onnx -> ONNX Runtime, as imported and after O3.

ONNX Runtime running the exported graph is an oracle independent of our executor and our passes: after
O3 it must still compute what our executor computes on the graph as imported. Re-importing the export
gives the same text form (node names, constants, attributes, descs), so nothing is lost on the way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.errors import GEError
from ge_core.frontend import ExportError, is_standard, to_onnx
from ge_core.ir.graph import Graph
from ge_core.samples.registry import Sample, list_samples

RELATIVE_TOLERANCE = 1e-4
RUNNABLE = [s for s in list_samples() if s.kind in ("sample", "light", "exported")]
# the built samples are quick; real models take seconds each (vgg19 about ten)
CASES = [s if s.kind == "sample" else pytest.param(s, marks=pytest.mark.slow) for s in RUNNABLE]


@dataclass
class Case:
    sample: Sample
    graph: Graph
    feeds: dict[str, np.ndarray]
    want: dict[str, np.ndarray]  # our executor on the graph as imported


@pytest.fixture(scope="module", params=CASES, ids=lambda s: s.name)
def case(request: pytest.FixtureRequest) -> Case:
    """Module-scoped, so pytest runs both tests of one sample back to back and loads it once."""
    sample: Sample = request.param
    graph = ge_core.load_onnx(sample.read_bytes(), sample.input_shapes or None)
    feeds = ge_core.random_feeds(graph, seed=0)
    return Case(sample, graph, feeds, ge_core.execute(graph, feeds))


def ort_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # run the graph as written
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    if want.size == 0:
        return 0.0
    scale = float(np.max(np.abs(want.astype(np.float64))))
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / max(scale, 1e-12)


def assert_exports_and_matches(graph: Graph, case: Case) -> None:
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=False)
    got = ort_run(model, case.feeds)
    assert sorted(got) == sorted(case.want)
    for name, ref in case.want.items():
        assert got[name].shape == ref.shape and got[name].dtype == ref.dtype, name
        err = relative_error(got[name], ref)
        assert err <= RELATIVE_TOLERANCE, f"{case.sample.name}: output '{name}' relative error {err:.2e}"
    again = ge_core.load_onnx(model.SerializeToString())
    if not any(n.body is not None for n in graph.nodes):  # fused nodes come back as their bodies
        assert again.to_text() == graph.to_text()


def test_imported_graph_round_trips_through_onnxruntime(case: Case) -> None:
    assert is_standard(case.graph)
    assert_exports_and_matches(case.graph, case)


def test_o3_graph_exported_runs_in_onnxruntime_like_the_original(case: Case) -> None:
    compiled = ge_core.compile(case.graph, opt_level="O3", verify=True)
    assert is_standard(compiled.graph)
    assert_exports_and_matches(compiled.graph, case)


def test_every_runnable_sample_is_covered() -> None:
    kinds = {s.kind for s in RUNNABLE}
    assert "sample" in kinds and "light" in kinds


# ---- details, on small hand-made models ------------------------------------------------------------
def model_of(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[str],
             initializers: tuple[TensorProto, ...] = (), opset: int = 17,
             extra_opsets: tuple[tuple[str, int], ...] = ()) -> bytes:
    graph = helper.make_graph(nodes, "m", inputs, [helper.make_empty_tensor_value_info(t) for t in outputs],
                              list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


def dims_of(info: onnx.ValueInfoProto) -> list[int | str | None]:
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in info.type.tensor_type.shape.dim]


def test_unknown_dims_keep_their_symbolic_names_and_known_dims_are_numbers() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", None, 4])
    data = model_of([helper.make_node("Relu", ["x"], ["y"])], [x], ["y"])
    symbolic = to_onnx(ge_core.load_onnx(data))
    assert dims_of(symbolic.graph.input[0]) == ["batch", None, 4]
    assert dims_of(symbolic.graph.output[0]) == [None, None, 4]
    fixed = to_onnx(ge_core.load_onnx(data, "x:2,3,4"))
    assert dims_of(fixed.graph.input[0]) == [2, 3, 4]
    assert dims_of(fixed.graph.output[0]) == [2, 3, 4]


def test_intermediate_tensors_get_value_info_with_their_descs() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    data = model_of([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Cast", ["h"], ["y"], to=7)], [x], ["y"])
    model = to_onnx(ge_core.load_onnx(data))
    (info,) = model.graph.value_info
    assert info.name == "h" and dims_of(info) == [2, 3]
    assert info.type.tensor_type.elem_type == TensorProto.FLOAT
    assert model.graph.output[0].type.tensor_type.elem_type == TensorProto.INT64


def test_attributes_are_typed_by_the_schema() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    graph = ge_core.load_onnx(model_of([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.5)], [x], ["y"]))
    node = graph.nodes[0]
    node.attrs["alpha"] = 2  # an int where ONNX wants a float
    (attr,) = to_onnx(graph).graph.node[0].attribute
    assert attr.type == onnx.AttributeProto.FLOAT and attr.f == 2.0


def test_tensor_attributes_and_constant_nodes_survive() -> None:
    shape = numpy_helper.from_array(np.array([2, 3], np.int64), "shape")
    nodes = [helper.make_node("Constant", [], ["s"], value=shape),
             helper.make_node("ConstantOfShape", ["s"], ["y"],
                              value=numpy_helper.from_array(np.array([1.5], np.float32)))]
    graph = ge_core.load_onnx(model_of(nodes, [], ["y"]))
    model = to_onnx(graph)
    onnx.checker.check_model(model)
    assert [i.name for i in model.graph.initializer] == ["s"]  # the Constant node became a graph constant
    assert model.graph.node[0].attribute[0].type == onnx.AttributeProto.TENSOR
    assert ge_core.load_onnx(model.SerializeToString()).to_text() == graph.to_text()


def test_an_unused_optional_output_is_written_empty_again() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    scale = numpy_helper.from_array(np.ones(4, np.float32), "s")
    norm = helper.make_node("LayerNormalization", ["x", "s"], ["y", "", "inv"], name="ln")  # no Mean output
    graph = ge_core.load_onnx(model_of([norm], [x], ["y", "inv"], (scale,)))
    assert graph.nodes[0].outputs == ("y", "ln:unused1", "inv")
    model = to_onnx(graph)
    assert list(model.graph.node[0].output) == ["y", "", "inv"]
    assert "ln:unused1" not in {v.name for v in model.graph.value_info}
    assert ge_core.load_onnx(model.SerializeToString()).to_text() == graph.to_text()
    feeds = {"x": np.arange(8, dtype=np.float32).reshape(2, 4)}
    case = Case(RUNNABLE[0], graph, feeds, ge_core.execute(graph, feeds))
    assert_exports_and_matches(graph, case)


def test_custom_domain_nodes_keep_their_domain_but_are_not_standard() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    data = model_of([helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Fancy", ["h"], ["y"], domain="com.ex")],
                    [x], ["y"], extra_opsets=(("com.ex", 1),))
    graph = ge_core.import_onnx(data).graph  # lenient import: Fancy is unsupported but still in the graph
    graph.set_desc("y", graph.desc("h"))  # its output type, which a graph output needs in ONNX
    assert not is_standard(graph)
    model = to_onnx(graph)
    onnx.checker.check_model(model)
    assert model.graph.node[1].domain == "com.ex"
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 17), ("com.ex", 1)}


def test_a_fused_op_in_the_default_domain_is_refused_naming_the_node() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = ge_core.load_onnx(model_of([helper.make_node("Relu", ["x"], ["y"])], [x], ["y"]))
    assert is_standard(graph)
    graph.add_node("FusedReluRelu", ["y"], ["z"], name="fused_1")
    graph.set_outputs(["z"])
    assert not is_standard(graph)
    with pytest.raises(ExportError, match=r"fused_1.*FusedReluRelu") as info:
        to_onnx(graph)
    assert isinstance(info.value, GEError)


def test_an_attribute_onnx_cannot_hold_is_refused_naming_node_and_attribute() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    graph = ge_core.load_onnx(model_of([helper.make_node("Relu", ["x"], ["y"], name="r")], [x], ["y"]))
    graph.nodes[0].attrs["body"] = graph.copy()  # e.g. a fused op's body
    with pytest.raises(ExportError, match=r"node 'r' .*attribute 'body'"):
        to_onnx(graph)


def test_an_older_opset_gets_an_ir_version_onnxruntime_reads() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    w = numpy_helper.from_array(np.ones(2, np.float32), "w")
    data = model_of([helper.make_node("Add", ["x", "w"], ["y"])], [x], ["y"], (w,), opset=9)
    model = to_onnx(ge_core.load_onnx(data))
    assert model.ir_version >= 4  # initializers need not be graph inputs
    onnx.checker.check_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": np.zeros(2, np.float32)})[0].tolist() == [1.0, 1.0]
