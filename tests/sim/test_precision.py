"""Precision modes run the real kernels through the interpreter, with fp16 rounding inside fused bodies too."""

from __future__ import annotations

import numpy as np
import pytest

import ge_core
from ge_core.ir import Graph, TensorDesc
from ge_core.ir.fusion import fuse
from ge_core.ops import REGISTRY
from ge_core.sim.precision import PRECISION_MODES, relative_errors, run_outputs


def matmul_relu(fused: bool) -> Graph:
    g = Graph("mm")
    g.add_input("x", TensorDesc((4, 8), "float32"))
    g.add_constant("w", np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32))
    g.add_node("MatMul", ["x", "w"], ["m"], name="mm", descs=[TensorDesc((4, 3), "float32")])
    g.add_node("Relu", ["m"], ["y"], name="relu", descs=[TensorDesc((4, 3), "float32")])
    g.set_outputs(["y"])
    if fused:
        node = fuse(g, [g.node("mm"), g.node("relu")], "UbFused", name="group")
        assert REGISTRY.runs_body(node)
    return g


FEEDS = {"x": np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32) / 3}


@pytest.mark.parametrize("mode", ["allow_fp32_to_fp16", "force_fp16"])
def test_a_fused_body_rounds_as_its_nodes_do_unfused(mode: str) -> None:
    fused = run_outputs(matmul_relu(True), FEEDS, PRECISION_MODES[mode])["y"]
    unfused = run_outputs(matmul_relu(False), FEEDS, PRECISION_MODES[mode])["y"]
    np.testing.assert_array_equal(fused, unfused)
    exact = ge_core.execute(matmul_relu(False), FEEDS)["y"]
    assert 0 < relative_errors({"y": fused}, {"y": exact})["y"] < 1e-2


@pytest.mark.parametrize("mode", ["force_fp32", "must_keep_origin_dtype"])
def test_exact_modes_give_the_cpu_executors_outputs_bit_for_bit(mode: str) -> None:
    got = run_outputs(matmul_relu(True), FEEDS, PRECISION_MODES[mode])["y"]
    np.testing.assert_array_equal(got, ge_core.execute(matmul_relu(False), FEEDS)["y"])
