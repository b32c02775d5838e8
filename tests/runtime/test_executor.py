"""The CPU executor: frees tensors after their last use, times nodes, names the node when a kernel fails."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge_core
from ge_core.errors import ExecutionError, UsageError
from ge_core.ir import Graph, TensorDesc
from ge_core.runtime import Executor
from tests.bad_models import vi


def relu_chain(n: int, width: int = 1024) -> Graph:
    g = Graph("chain")
    g.add_input("x0", TensorDesc((1, width), "float32"))
    for i in range(n):
        g.add_node("Relu", [f"x{i}"], [f"x{i + 1}"], name=f"relu{i}", descs=[TensorDesc((1, width), "float32")])
    g.set_outputs([f"x{n}"])
    return g


def test_tensors_are_freed_after_their_last_use() -> None:
    graph = relu_chain(50)
    result = Executor(graph).run({"x0": np.ones((1, 1024), np.float32)})
    # At most two activations of 4 KiB are alive at once (input of a step and its output), never 50.
    assert result.peak_live_bytes <= 2 * 4096
    assert len(result.timings) == 50 and all(t.seconds >= 0 for t in result.timings)
    assert [t.node for t in result.timings[:2]] == ["relu0", "relu1"]


def test_outputs_are_owned_arrays_even_when_a_kernel_returns_a_view_of_a_constant() -> None:
    g = Graph("const_out")
    g.add_input("x", TensorDesc((2,), "float32"))
    g.add_constant("c", np.array([1.0, 2.0], np.float32))
    g.add_node("Identity", ["c"], ["y"], name="id", descs=[TensorDesc((2,), "float32")])
    g.set_outputs(["y"])
    out = ge_core.execute(g, {"x": np.zeros(2, np.float32)})["y"]
    out[0] = 9.0  # must not write into the graph's constant
    assert g.constants["c"][0] == 1.0


def test_a_failing_kernel_is_an_execution_error_naming_node_op_and_shapes() -> None:
    table = numpy_helper.from_array(np.ones((4, 3), np.float32), "table")
    node = helper.make_node("Gather", ["table", "ids"], ["y"], name="embedding_lookup")
    model = helper.make_model(helper.make_graph([node], "g", [vi("ids", [2], TensorProto.INT64)], [vi("y", [2, 3])],
                                                [table]), opset_imports=[helper.make_opsetid("", 17)])
    graph = ge_core.load_onnx(model.SerializeToString())
    with pytest.raises(ExecutionError) as info:
        ge_core.execute(graph, {"ids": np.array([1, 7], np.int64)})  # 7 is out of range for 4 rows
    message = str(info.value)
    assert "'embedding_lookup' (Gather)" in message and "[4,3]" in message and "[2]" in message


def test_dynamic_graph_is_specialised_to_the_fed_shapes() -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu")
    model = helper.make_model(helper.make_graph([node], "g", [vi("x", ["batch", 4])], [vi("y", ["batch", 4])]),
                              opset_imports=[helper.make_opsetid("", 17)])
    graph = ge_core.load_onnx(model.SerializeToString())
    assert graph.desc("x").shape == (-1, 4)
    executor = Executor(graph)
    for batch in (1, 3, 1):
        x = np.full((batch, 4), -1.0, np.float32)
        assert executor.run({"x": x}).outputs["y"].shape == (batch, 4)
    with pytest.raises(UsageError, match=r"fed shape \[2, 5\]"):
        executor.run({"x": np.zeros((2, 5), np.float32)})


def test_missing_and_unknown_feeds_are_named() -> None:
    graph = relu_chain(1)
    with pytest.raises(UsageError, match=r"needs inputs \['x0'\]"):
        ge_core.execute(graph, {})
    with pytest.raises(UsageError, match=r"feeds \['bogus'\] are not inputs"):
        ge_core.execute(graph, {"x0": np.zeros((1, 1024), np.float32), "bogus": np.zeros(1)})


def test_random_feeds_need_concrete_shapes_and_say_how() -> None:
    g = Graph("dyn")
    g.add_input("x", TensorDesc((-1, 4), "float32"), dim_params=["batch", 4])
    g.set_outputs(["x"])
    with pytest.raises(UsageError, match=r'--input-shape "x:1,4"'):
        ge_core.random_feeds(g)
