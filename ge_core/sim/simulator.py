"""`simulate(compiled, profile)`: how long a compiled model takes on a simulated Ascend NPU, and what it computes.

The simulator walks the compiled plan in order on one stream (GE's default: one kernel after another),
prices every kernel with the cost model (cost.py) and runs the real kernels for the outputs (precision.py).
Each op gets a row: start, latency, busy time per unit, DDR bytes, FLOPs, attained FLOP/s, arithmetic
intensity, its roofline floor and what bounds it. The schedule depends only on the graph, the profile and
the precision mode, so it is computed once per compiled model and reused for every feed.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ge_core.compiler import gc_paused
from ge_core.errors import UsageError
from ge_core.hardware import DEFAULT_PROFILE, HardwareProfile, load_profile, tile_node
from ge_core.hardware.tiling import fused_body
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.runtime.feeds import check_feeds, random_feeds
from ge_core.sim.control import priced_runs, totals
from ge_core.sim.cost import UNITS, KernelCost, Precision, kernel_cost
from ge_core.sim.precision import exact, parse_precision, relative_errors, run_outputs
from ge_core.sim.signature import signature
from ge_core.sim.trace import chrome_trace

if TYPE_CHECKING:
    from ge_core.compiler import CompiledModel


@dataclass(frozen=True)
class OpRow:
    """One kernel in the simulated timeline (the profile report's `ops` rows)."""

    node: str
    op_type: str
    unit: str  # the unit doing the kernel's main work: cube, vector, mte (DMA) or scalar
    start_us: float
    latency_us: float
    flops: int
    bytes: int  # off-chip (DDR/HBM) bytes
    bound: str  # compute, memory or overhead
    floor_us: float
    busy_us: dict[str, float]
    block_dim: int
    tiles: int
    tiling: str
    stream: int = 0  # GE's default runs one stream; a measured profile (op_summary) says which

    @property
    def end_us(self) -> float:
        return self.start_us + self.latency_us

    @property
    def attained_flops(self) -> float:
        return self.flops / (self.latency_us * 1e-6) if self.latency_us > 0 else 0.0

    @property
    def intensity(self) -> float:
        """FLOPs per off-chip byte."""
        return self.flops / self.bytes if self.bytes else float("inf") if self.flops else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "op_type": self.op_type, "unit": self.unit, "start_us": _r(self.start_us),
                "latency_us": _r(self.latency_us), "flops": self.flops, "bytes": self.bytes, "bound": self.bound,
                "floor_us": _r(self.floor_us), "attained_flops": _r(self.attained_flops),
                "intensity": _r(self.intensity) if np.isfinite(self.intensity) else None,
                "block_dim": self.block_dim, "tiles": self.tiles, "stream": self.stream,
                "busy_us": {u: _r(v) for u, v in self.busy_us.items()}, "tiling": self.tiling}


@dataclass(frozen=True)
class Schedule:
    ops: tuple[OpRow, ...]
    views: tuple[str, ...]  # nodes launching no kernel

    @property
    def total_us(self) -> float:
        return self.ops[-1].end_us if self.ops else 0.0


@dataclass
class SimResult:
    profile: HardwareProfile
    precision: str
    ops: list[OpRow]
    views: list[str]
    outputs: dict[str, np.ndarray]
    precision_errors: dict[str, float] = field(default_factory=dict)  # vs fp32, when the mode rounds
    opt_level: str = ""
    source: str = ""  # "": simulated; else the measured profile it was read from (an op_summary CSV)

    @property
    def total_us(self) -> float:
        if not self.ops:
            return 0.0
        return max(r.end_us for r in self.ops) if self.source else self.ops[-1].end_us  # measured: several streams

    @property
    def measured(self) -> bool:
        return bool(self.source)

    @property
    def flops(self) -> int:
        return sum(r.flops for r in self.ops)

    @property
    def bytes(self) -> int:
        return sum(r.bytes for r in self.ops)

    @property
    def floor_us(self) -> float:
        """The whole model's roofline floor: all its FLOPs at peak, or all its bytes at full bandwidth."""
        return max(self.flops / self.profile.peak_flops, self.bytes / self.profile.memory_bandwidth) * 1e6

    def busy_us(self) -> dict[str, float]:
        return {u: sum(r.busy_us[u] for r in self.ops) for u in UNITS}

    def report(self) -> dict[str, Any]:
        """The profile report (DESIGN.md contract: hardware, ops, total_us; plus totals and errors)."""
        return {"hardware": self.profile.to_json(), "precision_mode": self.precision, "opt_level": self.opt_level,
                "total_us": _r(self.total_us), "floor_us": _r(self.floor_us), "kernels": len(self.ops),
                "flops": self.flops, "bytes": self.bytes, "busy_us": {u: _r(v) for u, v in self.busy_us().items()},
                "precision_errors": self.precision_errors, "views": self.views, "measured_from": self.source,
                "ops": [r.to_json() for r in self.ops]}

    def trace(self) -> dict[str, Any]:
        return chrome_trace(self)


def simulate(compiled: CompiledModel, profile: HardwareProfile | str | None = None,
             feeds: Mapping[str, object] | None = None, *, precision: str | Precision | None = None, seed: int = 0,
             run: bool = True, reuse_schedule: bool = True) -> SimResult:
    """Simulate `compiled` on `profile` (a name, a .json path or a HardwareProfile; default: the compile's
    hardware target, else ascend910) in `precision` mode (default: the compile's precision_mode, else the
    profile's default, ATC's force_fp16: a model compiled with no mode is simulated as ATC compiles it).

    Runs the real kernels on `feeds` (seeded random inputs when None) for the outputs; in a rounding
    precision mode also runs fp32 and reports each output's relative error. `run=False` skips the numbers
    (timing only); `reuse_schedule=False` prices every kernel again (the benchmark's cold path)."""
    hw = load_profile(profile if profile is not None else compiled.config.hardware or DEFAULT_PROFILE)
    mode = parse_precision(precision if precision is not None else precision_of(compiled, hw))
    no_task = frozenset(s.node for s in compiled.plan.steps if not s.launches_kernel)  # no-copy Concats, views
    schedule = (schedule_of(compiled.graph, hw, mode, no_task) if reuse_schedule
                else build_schedule(compiled.graph, hw, mode, no_task))
    outputs: dict[str, np.ndarray] = {}
    errors: dict[str, float] = {}
    if run:
        inputs = dict(feeds) if feeds is not None else random_feeds(compiled.graph, seed)
        reference = compiled.run(inputs)
        outputs = reference if exact(mode) else run_outputs(compiled.graph, reference_feeds(compiled, inputs), mode)
        errors = {} if exact(mode) else relative_errors(outputs, reference)
    return SimResult(hw, mode.name, list(schedule.ops), list(schedule.views), outputs, errors,
                     str(compiled.config.opt_level))


def precision_of(compiled: CompiledModel, profile: HardwareProfile) -> str:
    """The precision mode `compiled` runs in on `profile`: its own, else the profile's (ATC's) default."""
    return compiled.config.precision_mode or profile.default_precision_mode


def reference_feeds(compiled: CompiledModel, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
    return check_feeds(compiled.graph, feeds)


_SCHEDULES: weakref.WeakKeyDictionary[Graph, dict[tuple[HardwareProfile, str, frozenset[str]], Schedule]] = \
    weakref.WeakKeyDictionary()


def schedule_of(graph: Graph, profile: HardwareProfile, precision: Precision,
                no_task: frozenset[str] = frozenset()) -> Schedule:
    """The simulated timeline of `graph` (cached per graph, profile and precision mode); `no_task`: nodes the
    compile made free (its memory plan writes a no-copy Concat's inputs in place: GE launches no task)."""
    per_graph = _SCHEDULES.setdefault(graph, {})
    key = (profile, precision.name, no_task)
    if key not in per_graph:
        per_graph[key] = build_schedule(graph, profile, precision, no_task)
    return per_graph[key]


def build_schedule(graph: Graph, profile: HardwareProfile, precision: Precision,
                   no_task: frozenset[str] = frozenset()) -> Schedule:
    unknown = next((t for t in graph.inputs if not graph.desc(t).is_static), None)
    if unknown is not None:
        raise UsageError(f"cannot simulate: input '{unknown}' has unknown dims {graph.desc(unknown).text()}.",
                         hint="Compile with static input shapes (--input-shape \"x:1,3,224,224\").")
    with gc_paused():  # pricing makes many small objects and no cycles: spare the collector's heap walks
        return _price_all(graph, profile, precision, no_task)


def _price_all(graph: Graph, profile: HardwareProfile, precision: Precision,
               no_task: frozenset[str] = frozenset()) -> Schedule:
    rows: list[OpRow] = []
    views: list[str] = []
    nodes = graph.nodes
    # Twins (repeated layers) are priced once. A twin shares its op type and the shapes of its tensors with
    # another node, so a node alone with its (op type, shapes) cannot have one: skip its full signature.
    descs = graph.descs
    shapes = [(n.op_type, tuple([descs[t].shape if t else None for t in (*n.inputs, *n.outputs)])) for n in nodes]
    seen = Counter(shapes)
    priced: dict[int, tuple[Hashable, tuple[KernelCost, dict[str, float]] | None]] = {}
    to_us = profile.clock_ghz * 1e3  # HardwareProfile.cycles_to_us's divisor
    clock = 0.0
    for node, shape_key in zip(nodes, shapes, strict=True):
        if not node.subgraphs and REGISTRY.for_node(node) is None:  # a GE dump's type with no op of ours:
            views.append(node.name)  # no cost model to price it by, so no kernel timed (the pages say unpriced)
            continue
        op = REGISTRY.get(node.op_type, node.domain)
        if (op is not None and op.view) or node.name in no_task:  # no kernel (kernel_cost says None for a view)
            views.append(node.name)
            continue
        # control flow: priced from its subgraphs' kernels (sim/control.py); an op with a kernel body of its
        # own (FlexAttention, its modifier subgraphs nested in that body) is a kernel like any other
        if node.subgraphs and (op is None or op.kernel_body is None):
            rows.append(_control_row(node, graph, profile, precision, clock))
            clock += rows[-1].latency_us
            continue
        key = signature(node, graph) if seen[shape_key] > 1 else None
        # by the key's hash, so that a big key (a fused body) is hashed once, not on lookup and on store
        h = hash(key) if key is not None else None
        known = priced.get(h) if h is not None else None
        if known is not None and known[0] == key:
            hit = known[1]
        else:
            cost = kernel_cost(node, graph, profile, precision)
            hit = (cost, {u: v / to_us for u, v in cost.busy.items()}) if cost is not None else None
            if h is not None and known is None:  # (a different key of the same hash: priced alone)
                priced[h] = (key, hit)
        if hit is None:
            views.append(node.name)
            continue
        c, busy = hit
        t = c.tiling
        if t.node != node.name and t.unit == "cube" and fused_body(node) is not None:  # a twin's: the reason
            t = tile_node(node, graph, profile, cube_dtype_bytes=precision.cube_bytes)  # names its own anchor op
        rows.append(OpRow(node.name, c.op_type, c.unit, clock, c.latency_us, c.flops, c.ddr_bytes, c.bound,
                          c.floor_us, dict(busy), t.block_dim, t.tiles, t.reason))
        clock += c.latency_us
    return Schedule(tuple(rows), tuple(views))


def _control_row(node: Node, graph: Graph, profile: HardwareProfile, precision: Precision, start: float) -> OpRow:
    """One row for an If/Loop/Scan: the kernels of its priced subgraph run, times its iteration count."""
    def price(sub: Graph) -> tuple[OpRow, ...]:
        return _price_all(sub, profile, precision).ops

    rows, times, note = priced_runs(node, graph, price)
    latency, flops, nbytes, floor, bound, busy = totals(rows, times)
    return OpRow(node.name, node.op_type, "scalar", start, latency, flops, nbytes, bound, floor, busy,
                 max((r.block_dim for r in rows), default=1), sum(r.tiles for r in rows) * times, note)


def _r(value: float) -> float:
    return float(f"{value:.6g}")
