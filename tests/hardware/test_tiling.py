"""tile_node: cube ops into L0/L1 blocks, vector ops into UB tiles, split over the cores; within every buffer."""

from __future__ import annotations

import numpy as np
import pytest

import ge_core
from ge_core.hardware import HardwareProfile, Tiling, forget_tilings, load_profile, tile_node
from ge_core.samples.registry import get_sample, sample_bytes
from tests.hardware.graphs import conv_example, matmul_example, one_op


def _tile(graph: ge_core.Graph, profile: str = "ascend910") -> Tiling:
    return tile_node(graph.node("op"), graph, load_profile(profile))


def test_matmul_split_and_blocks() -> None:
    t = _tile(matmul_example())
    assert t.unit == "cube" and t.cube is not None
    assert t.cube.split == (1, 4, 8) and t.block_dim == 32  # 4 x 8 cores, each a 64 x 64 block of C
    assert t.cube.core == (1, 64, 1024, 64)
    assert t.tile_shape == (64, 256, 64) and t.tiles_per_core == 4  # K in 4 steps of 256
    assert t.cube.fractals == 4 * 64 * 4  # ceil(64/16) * ceil(1024/16) * ceil(64/16)
    assert t.buffer_bytes == {"l0a": 65536, "l0b": 65536, "l0c": 32768, "l1": 524288}
    assert t.describe().startswith("op (MatMul): cube: GEMM batch 1 x M 256 x K 1024 x N 512 on 32 core(s)")


def test_conv_is_an_implicit_gemm() -> None:
    t = _tile(conv_example())
    assert t.gemm is not None and (t.gemm.m, t.gemm.k, t.gemm.n) == (56 * 56, 64 * 9, 64)
    assert t.cube is not None and t.cube.split == (1, 32, 1) and t.cube.core == (1, 112, 576, 64)
    assert t.tile_shape == (112, 144, 64) and t.cube.fractals == 7 * 36 * 4


def test_depthwise_conv_packs_16_channels_on_a_block_diagonal() -> None:
    g = one_op("Conv", (1, 32, 28, 28), {"w": np.ones((32, 1, 3, 3), np.float16)},
               {"pads": [1, 1, 1, 1], "group": 32})
    t = _tile(g)
    assert t.gemm is not None and t.gemm.groups_packed == 16
    assert (t.gemm.batch, t.gemm.k, t.gemm.n) == (2, 9 * 16, 16)


@pytest.mark.parametrize("profile", ["ascend310", "ascend910", "ascend910b"])
def test_cube_blocks_fit_every_buffer(profile: str) -> None:
    p = load_profile(profile)
    for graph in (matmul_example(), conv_example()):
        t = _tile(graph, profile)
        _fits(t, p)
        assert t.block_dim <= p.ai_cores


def test_views_and_shape_arithmetic_launch_no_vector_work() -> None:
    g = one_op("Reshape", (4, 8), {"s": np.array([8, 4], np.int64)}, dtype="float32")
    assert _tile(g).unit == "none" and _tile(g).block_dim == 0
    shape = one_op("Shape", (4, 8), {}, dtype="float32")
    assert _tile(shape).unit == "scalar"
    concat = one_op("Concat", (4, 8), {"c": np.ones((4, 8), np.float32)}, {"axis": 0}, dtype="float32")
    assert _tile(concat).unit == "mte"


def test_vector_op_tiles_fit_the_ub() -> None:
    g = one_op("Relu", (1, 256, 112, 112), {}, dtype="float32")
    p = load_profile("ascend910b")
    t = _tile(g, "ascend910b")
    assert t.unit == "vector" and t.vector is not None
    assert t.block_dim == 48  # vector kernels spread over the 910B's 48 vector cores
    assert t.buffer_bytes["ub"] <= p.buffers.ub
    # 2 buffers (x, y) of 4 bytes, double-buffered: about UB / 16 elements per tile
    assert p.buffers.ub // 16 - 64 <= t.tile_shape[0] <= p.buffers.ub // 16
    assert t.vector.tiles_per_core == -(-t.vector.elements_per_core // t.tile_shape[0])


def test_reduce_tiles_hold_whole_slabs() -> None:
    g = one_op("Softmax", (8, 1000), {}, {"axis": -1}, dtype="float32")
    t = _tile(g)
    assert t.vector is not None and t.vector.slab == 1000
    assert t.block_dim == 8 and t.tile_shape[0] % 1000 == 0


def test_tilings_are_remembered_until_the_node_changes() -> None:
    """The compile's TilingPass tiles every kernel and the simulator asks again: the same node on the same
    profile gets the same Tiling back, until one of its tensors or attributes changes."""
    g = matmul_example()
    node, p = g.node("op"), load_profile("ascend910")
    first = tile_node(node, g, p)
    assert tile_node(node, g, p) is first
    assert tile_node(node, g, p, cube_dtype_bytes=4) is not first  # another operand width: tiled for it
    assert tile_node(node, g, load_profile("ascend310")) is not first
    assert tile_node(node, g, p) is first  # each remembered apart
    g.set_desc("x", ge_core.TensorDesc((128, 1024), "float16"))  # a new desc: tiled again
    g.set_desc("y", ge_core.TensorDesc((128, 512), "float16"))
    smaller = tile_node(node, g, p)
    assert smaller.gemm is not None and smaller.gemm.m == 128
    assert tile_node(node, g.copy(), p).gemm == smaller.gemm  # a copy's nodes: tiled apart, alike
    forget_tilings()
    again = tile_node(node, g, p)
    assert again is not smaller and again == smaller

    softmax = one_op("Softmax", (8, 1000), {}, {"axis": -1}, dtype="float32")
    t = _tile(softmax)
    assert t.vector is not None and t.vector.slab == 1000
    softmax.node("op").attrs["axis"] = 0  # an attribute replaced: tiled again
    t = _tile(softmax)
    assert t.vector is not None and t.vector.slab == 8


def _fits(t: Tiling, p: HardwareProfile) -> None:
    sizes = {"l0a": p.buffers.l0a, "l0b": p.buffers.l0b, "l0c": p.buffers.l0c, "l1": p.buffers.l1, "ub": p.buffers.ub}
    for buffer, used in t.buffer_bytes.items():
        assert used <= sizes[buffer], f"{t.describe()}: {buffer} {used} > {sizes[buffer]}"


@pytest.mark.parametrize("name", ["squeezenet", "bert_encoder_torch", "ocr_det_db_paddle"])
def test_every_kernel_of_a_model_fits(name: str) -> None:
    compiled = ge_core.compile(sample_bytes(name), input_shapes=get_sample(name).input_shapes or None, opt_level="O3",
                               hardware="ascend910b")
    p = load_profile("ascend910b")
    for node in compiled.graph.nodes:
        t = tile_node(node, compiled.graph, p)
        _fits(t, p)
        assert t.block_dim <= max(p.ai_cores, p.vector_cores)
        assert "\n" not in t.describe() and t.reason
