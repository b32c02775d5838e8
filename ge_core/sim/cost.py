"""The cost model of one kernel on one AI Core profile: cycles per unit, then a double-buffered pipeline.

Per kernel, on its busiest core (the tiling says which share of the work that is):

    mte2    = first-touch bytes / DDR rate + re-loaded bytes / L2 rate   global memory -> L1/UB
    mte1    = L1->L0A bytes / l1_to_l0a + L1->L0B bytes / l1_to_l0b      (cube kernels)
    cube    = 16x16x16 fractal steps / (1, or cube_fp32_ratio for fp32 operands)
    fixpipe = fp32 accumulator bytes / l0c_to_ub                          L0C -> UB (cube kernels)
    vector  = per vector op: ceil(elements x bytes / 256) repeats x passes x class cycles
    mte3    = output bytes / l2_write                                     UB -> global memory
    scalar  = scalar_cycles_per_tile x tiles (loop control, issued alongside the pipes)

With double buffering the stages of consecutive tiles overlap: the slowest stage sets the pace and the
others show only while the pipeline fills and drains,

    pipeline = max(stages) + (sum(stages) - max(stages)) / tiles

and the whole chip shares one off-chip interface, so a kernel never beats its DDR time:

    cycles  = max(pipeline, ddr_bytes / chip bytes per cycle) + scalar_cycles_per_kernel
    latency = cycles / clock + kernel_launch_us

A UB-fused kernel's DDR bytes are its external inputs and outputs only: its intermediates stay in UB.
Views cost nothing (no kernel). docs/simulator.md works two kernels through by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ge_core.hardware.cube_tiling import CubeTiling, tile_cube
from ge_core.hardware.gemm import Gemm
from ge_core.hardware.profile import HardwareProfile
from ge_core.hardware.sizes import device_bytes, nbytes, stored_bytes
from ge_core.hardware.tiling import Tiling, kernel_body, main_cube_index, tile_node
from ge_core.ir.formats import DEVICE_FORMATS
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY
from ge_core.ops.common import zero_flop_cost
from ge_core.ops.registry import Category
from ge_core.sim.instructions import vector_cycles_of

UNITS = ("cube", "vector", "scalar", "mte1", "mte2", "mte3", "fixpipe")
ACC_BYTES = 4


@dataclass(frozen=True)
class Precision:
    """What a precision mode changes in the cost: the bytes of cube operands and of vector floats."""

    name: str
    cube_bytes: int | None  # None: the tensors' own dtype
    vector_bytes: int | None


@dataclass(slots=True)
class KernelCost:
    node: str
    op_type: str
    unit: str
    flops: int
    ddr_bytes: int  # off-chip traffic: external inputs read and outputs written
    busy: dict[str, float]  # cycles per unit on the busiest core
    pipeline_cycles: float
    ddr_cycles: float
    setup_cycles: float
    launch_us: float
    latency_us: float
    floor_us: float  # the roofline floor: max(FLOPs / peak, bytes / off-chip bandwidth)
    bound: str  # compute, memory or overhead
    tiling: Tiling


def kernel_cost(node: Node, graph: Graph, p: HardwareProfile, precision: Precision) -> KernelCost | None:
    """The cost of `node`'s kernel, or None for a view (no kernel)."""
    tiling = tile_node(node, graph, p, cube_dtype_bytes=precision.cube_bytes)  # the compile's, when known
    unit = tiling.unit
    if unit == "none":
        return None
    body = kernel_body(node, graph)  # a fused kernel's body, or the body an op is priced by (Attention)
    v = tiling.vector  # the busiest core's share of the kernel's elements
    share = v.elements_per_core / max(v.elements, 1) if v is not None else 1.0 / max(tiling.block_dim, 1)
    vector = 0.0
    cubes: list[tuple[Node, Graph]] = []
    # Widths on the device: force_fp16 stores every float tensor in fp16; allow_fp32_to_fp16 feeds the cube fp16
    # operands (ATC converts the weights and casts the activations) and keeps fp32 elsewhere.
    in_width = precision.cube_bytes if unit == "cube" else precision.vector_bytes
    out_width = precision.vector_bytes
    if body is not None:  # one walk of the body: its FLOPs, its ops' vector work and its cube ops
        flops, vector = _body_work(body, p, precision.vector_bytes, share, cubes)
        descs = graph.descs
        read = sum(device_bytes(descs[t], in_width) for t in node.inputs if t)
        written = sum(device_bytes(descs[t], out_width) for t in node.outputs if t)
    else:
        op = REGISTRY.lookup(node)
        ins, outs = graph.input_descs(node), graph.output_descs(node)
        c = op.cost(node, ins, outs)
        flops = c.flops
        read = _on_device(c.bytes_read, ins, in_width, op.device_bytes)
        written = _on_device(c.bytes_written, outs, out_width, op.device_bytes)
        if unit == "vector":
            walked = ins if op.indexed_input is None else [d for i, d in enumerate(ins) if i != op.indexed_input]
            vector = vector_cycles_of(op, walked, outs, flops, share, p, precision.vector_bytes)
        elif unit == "cube":  # a plain cube op's epilogue (a Gemm's bias add) walks the output alone
            epilogue = max(flops - 2 * tiling.gemm.macs, 0) if tiling.gemm is not None else 0
            if epilogue > 0:
                vector = vector_cycles_of(op, [], outs[:1], epilogue, share, p, precision.vector_bytes)
    cube = mte1 = fixpipe = mte2 = mte3 = 0.0
    if unit == "cube":
        cube, mte1, fixpipe, mte2 = _cube_work(node, graph, cubes, tiling, p, precision, read)
    if unit != "scalar":  # MTE2/MTE3 of the busiest core: first touches at its share of DDR, re-loads from L2
        bw = p.bandwidth
        ddr_rate = min(bw.ddr_read, p.chip_bytes_per_cycle * share)  # the core's share of the chip's DDR
        loads = mte2 if unit == "cube" else read * share  # a cube kernel's operand loads, re-loads included
        first = min(loads, read * share)
        mte2 = first / ddr_rate + (loads - first) / bw.l2_read if loads else 0.0
        mte3 = written * share / bw.l2_write
    return _assemble(node, tiling, flops, read + written, (cube, vector, mte1, mte2, mte3, fixpipe), p)


def _on_device(registry_bytes: int, descs: Sequence[TensorDesc | None], width: int | None, padded: bool) -> int:
    """The registry's byte count of tensors with `descs` as the device moves them: NC1HWC0's channel padding
    added (unless the registry counted device bytes already, `padded`), floats `width` bytes wide."""
    logical = stored = narrowed = 0
    for d in descs:
        if d is not None:
            logical += nbytes(d)
            stored += stored_bytes(d) if d.format in DEVICE_FORMATS else nbytes(d)
            narrowed += device_bytes(d, width)
    total = registry_bytes if padded else registry_bytes + max(stored - logical, 0)
    return total * narrowed // stored if stored and narrowed != stored else total


def _cube_work(node: Node, graph: Graph, cubes: list[tuple[Node, Graph]], tiling: Tiling, p: HardwareProfile,
               precision: Precision, read: int) -> tuple[float, float, float, float]:
    """(cube, MTE1, FixPipe cycles, operand bytes loaded) of a cube kernel on its busiest core: `node` itself,
    or the cube ops of its fused body (`cubes`: the main one shapes the tiling, the others add their work)."""
    t, gemm = tiling.cube, tiling.gemm
    assert t is not None and gemm is not None
    main, main_graph = node, graph
    others: tuple[tuple[Node, Graph, Gemm | None], ...] = ()
    if cubes:
        index, gemms = main_cube_index(cubes)
        main, main_graph = cubes[index]
        if gemms is not None:
            others = tuple((*ng, g) for i, (ng, g) in enumerate(zip(cubes, gemms, strict=True)) if i != index)
    in_bytes = precision.cube_bytes or main_graph.descs[main.inputs[0]].itemsize
    rate = 1.0 if in_bytes <= 2 else p.cube_fp32_ratio
    fractals, mte1 = t.fractals, _mte1(t, p)
    for inner, inner_graph, other in others:
        if other is not None:  # a second cube op in the kernel (attention's P @ V): same cores
            extra = tile_cube(other, p, in_bytes, inner_graph.descs[inner.outputs[0]].itemsize)
            fractals += extra.fractals
            mte1 += _mte1(extra, p)
    batch_c, m_c, _, n_c = t.core
    fixpipe = batch_c * m_c * n_c * ACC_BYTES / p.bandwidth.l0c_to_ub
    # operand loads with re-loads; the kernel's other inputs (bias, a residual) once per core's share
    operands = (gemm.a_bytes + gemm.b_bytes) * in_bytes // max(main_graph.descs[main.inputs[0]].itemsize, in_bytes)
    extra_inputs = max(read - operands, 0) / max(tiling.block_dim, 1)
    return fractals / rate, mte1, fixpipe, t.mte2_bytes + extra_inputs


def _mte1(t: CubeTiling, p: HardwareProfile) -> float:
    return t.mte1_a_bytes / p.bandwidth.l1_to_l0a + t.mte1_b_bytes / p.bandwidth.l1_to_l0b


def _body_work(body: Graph, p: HardwareProfile, vector_bytes: int | None, share: float,
               cubes: list[tuple[Node, Graph]]) -> tuple[int, float]:
    """(FLOPs of every op in a fused body, vector cycles of its vector ops); its cube ops (priced by the cube
    model, in cube_ops order) are appended to `cubes`. Views (no work) add no vector cycles either; nested
    bodies are walked too."""
    flops, cycles = 0, 0.0
    descs = body.descs
    for inner in body.nodes:
        nested = kernel_body(inner, body)
        if nested is not None:  # a nested fused kernel (or an op priced as its kernel body): walk its body
            f, c = _body_work(nested, p, vector_bytes, share, cubes)
            flops, cycles = flops + f, cycles + c
            continue
        op = REGISTRY.lookup(inner)  # raises when the op is not supported
        ins = [descs.get(t) if t else None for t in inner.inputs]
        outs = [descs[t] for t in inner.outputs]
        f = 0 if op.cost is zero_flop_cost else op.cost(inner, ins, outs).flops  # (bytes: the kernel's own)
        flops += f
        if op.category == Category.CUBE:
            cubes.append((inner, body))
            continue
        if op.view:
            continue
        cycles += vector_cycles_of(op, ins, outs, f, share, p, vector_bytes)
    return flops, cycles


def _assemble(node: Node, tiling: Tiling, flops: int, ddr_bytes: int,
              units: tuple[float, float, float, float, float, float], p: HardwareProfile) -> KernelCost:
    """The kernel's cost from its units' cycles (cube, vector, mte1, mte2, mte3, fixpipe; scalar added here):
    the double-buffered pipeline, the chip's DDR floor, setup and launch."""
    eff = p.efficiency  # 1 unless a calibration fitted the profile to a measured one
    cube, vector = units[0] / eff.cube, units[1] / eff.vector
    mte1, mte2, mte3, fixpipe = (u / eff.memory for u in units[2:])
    ov = p.overheads
    tiles = max(tiling.tiles_per_core, 1)
    scalar = ov.scalar_cycles_per_tile * tiles
    stages = [cube, vector, scalar, mte1, mte2, mte3, fixpipe]  # in UNITS order
    slowest = max(stages)
    pipeline = slowest + (sum(stages) - slowest) / tiles
    ddr_cycles = ddr_bytes / p.chip_bytes_per_cycle / eff.memory
    setup = float(ov.scalar_cycles_per_kernel)
    clock_ghz = p.clock_ghz
    latency = (max(pipeline, ddr_cycles) + setup) / (clock_ghz * 1e3) + ov.kernel_launch_us  # cycles_to_us
    floor = max(flops / p.peak_flops, ddr_bytes / p.memory_bandwidth) * 1e6
    compute = max(cube, vector)
    memory = max(mte1, mte2, mte3, fixpipe, ddr_cycles)
    overhead = scalar + setup + ov.kernel_launch_us * clock_ghz * 1e3
    bound = max((compute, "compute"), (memory, "memory"), (overhead, "overhead"))[1]
    busy = {"cube": cube, "vector": vector, "scalar": scalar + setup, "mte1": mte1, "mte2": mte2, "mte3": mte3,
            "fixpipe": fixpipe}  # UNITS
    return KernelCost(node.name, node.op_type, tiling.unit, flops, ddr_bytes, busy, pipeline, ddr_cycles, setup,
                      ov.kernel_launch_us, latency, floor, bound, tiling)
