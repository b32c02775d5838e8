"""The two kernels docs/simulator.md works through by hand, cycle for cycle (Ascend 910 profile, fp16)."""

from __future__ import annotations

import pytest

from ge_core.hardware import load_profile
from ge_core.ir import Graph
from ge_core.sim import KernelCost, kernel_cost, parse_precision
from tests.hardware.graphs import conv_example, matmul_example

CLOCK_MHZ = 976.5625  # Ascend 910: 256 TFLOPS / (32 cores x 4096 MACs x 2)


def _cost(graph: Graph) -> KernelCost:
    cost = kernel_cost(graph.node("op"), graph, load_profile("ascend910"), parse_precision("force_fp32"))
    assert cost is not None
    return cost


def test_matmul_by_hand() -> None:
    c = _cost(matmul_example())
    assert c.busy["cube"] == 1024  # ceil(64/16) * ceil(1024/16) * ceil(64/16) on each of 32 cores
    assert c.busy["mte1"] == 768  # 131072 B / 512 + 131072 B / 256
    assert c.busy["mte2"] == pytest.approx(2944)  # 49152 B / 38.4 + 212992 B / 128
    assert c.busy["mte3"] == 128  # 8192 B / 64
    assert c.busy["fixpipe"] == 64  # 64 * 64 * 4 B / 256
    assert c.busy["vector"] == 0
    assert c.busy["scalar"] == 1200  # 1000 per kernel + 50 x 4 tiles
    assert c.pipeline_cycles == pytest.approx(3490)  # 2944 + (5128 - 2944) / 4
    assert c.ddr_cycles == pytest.approx(1835008 / 1228.8)
    assert c.latency_us == pytest.approx((3490 + 1000) / CLOCK_MHZ + 2.0)  # 6.598 us
    assert c.floor_us == pytest.approx(1835008 / 1.2e12 * 1e6)  # memory floor 1.529 us > 1.049 us compute
    assert c.flops == 2 * 256 * 1024 * 512 and c.ddr_bytes == 1835008
    assert c.bound == "overhead"  # 1200 scalar + 1953 launch cycles > 2944 mte2


def test_conv_by_hand() -> None:
    c = _cost(conv_example())
    assert c.busy["cube"] == 1008  # ceil(112/16) * ceil(576/16) * ceil(64/16)
    assert c.busy["mte1"] == 540  # im2col 112 x 576 x 2 B / 512 + 576 x 64 x 2 B / 256
    assert c.busy["mte2"] == pytest.approx(14848 / 38.4 + 73216 / 128)  # 958.67
    assert c.busy["mte3"] == 196  # 401408 B / 32 cores / 64
    assert c.busy["fixpipe"] == 112  # 112 * 64 * 4 B / 256
    assert c.pipeline_cycles == pytest.approx(1008 + (3014 + 2 / 3 - 1008) / 4)
    assert c.latency_us == pytest.approx((c.pipeline_cycles + 1000) / CLOCK_MHZ + 2.0)  # 4.570 us
    assert c.flops == 2 * 576 * 64 * 56 * 56
