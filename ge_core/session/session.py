"""ge_core.Session: GE's Session API over compile, the compile cache, dynamic shapes and the simulator.

    session = ge_core.Session({"ge.oo.level": "O3", "ge.socVersion": "Ascend910",
                               "ge.inputShape": "hidden:1,1~512,64;mask:1,1~512", "ge.fusionMode": "online"})
    session.add_graph(1, graph)
    session.build_graph(1)                      # compiles what can be compiled ahead (a gear each, a range)
    outputs = session.run_graph(1, feeds)       # picks, compiles or decides the model for the feeds' shapes
    session.warm_up(1, shapes=[{"hidden": (1, 128, 64), "mask": (1, 128)}])   # dummy runs before traffic
    session.stats(1)    # {"compiles", "compile_seconds", "cache_hits", "runs", "run_seconds", "decisions", ...}
    session.save(1, "m.gem")                    # every gear in one offline model (ge_core.GearedModel.load)

With ge.socVersion a run goes through the NPU simulator (its outputs are the real kernels' outputs) and its
simulated latency is kept in `last_run(graph_id)`; without one it runs on the CPU executor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ge_core.compiler import CompiledModel
from ge_core.config import CompileConfig
from ge_core.errors import UsageError, quote
from ge_core.frontend.input_shapes import DimRange, InputShapes, ShapeSpec
from ge_core.ir.graph import Graph
from ge_core.offline.cache import CompileCache
from ge_core.offline.gears import GearSet
from ge_core.runtime import random_feeds
from ge_core.session.options import SessionOptions
from ge_core.session.plans import Compiler, GearPlan, GraphStats, OnlinePlan, Plan, RangePlan, StaticPlan
from ge_core.session.shapes import feed_shapes, is_static, reshape_inputs
from ge_core.sim import simulate

GraphId = int


@dataclass(frozen=True)
class RunRecord:
    """One run_graph: the shapes fed, the shapes of the model that ran (a gear, or the same), what the
    request cost end to end and what of that was compiling or deciding, and the simulated NPU time."""

    shapes: InputShapes
    model_shapes: InputShapes
    seconds: float
    compile_seconds: float
    decision_seconds: float
    simulated_us: float | None  # None without ge.socVersion
    kernels: int


@dataclass
class _Entry:
    graph: Graph
    options: SessionOptions
    plan: Plan
    stats: GraphStats
    last: RunRecord | None = None


class Session:
    def __init__(self, options: Mapping[str, object] | None = None, *, config: CompileConfig | None = None,
                 cache: CompileCache | None = None) -> None:
        """`options`: GE option names (ge_core/session/options.py lists them), overriding `config` (default:
        CompileConfig's defaults) where they name the same thing; `cache`: a CompileCache to use instead of
        ge.graph_compiler_cache_dir's."""
        self._options = dict(options or {})
        self._config = config
        SessionOptions.parse(self._options, config)  # refused now, not at the first graph
        self._cache = cache
        self._graphs: dict[GraphId, _Entry] = {}

    def add_graph(self, graph_id: GraphId, graph: Graph, options: Mapping[str, object] | None = None) -> None:
        """Add `graph` under `graph_id`; `options` override the session's for this graph (as GE's AddGraph)."""
        if graph_id in self._graphs:
            raise UsageError(f"graph {graph_id} is in the session already.", hint="remove_graph it first.")
        parsed = SessionOptions.parse({**self._options, **(options or {})}, self._config)
        given = parsed.input_shape or {}
        unknown = sorted(set(given) - set(graph.inputs))
        if unknown:
            raise UsageError(f"ge.inputShape names {', '.join(quote(u) for u in unknown)}, not inputs of the graph.",
                             hint=f"The graph's inputs are: {', '.join(graph.inputs) or '(none)'}.")
        spec = {**given, **{n: d for n, d in _spec_of(graph).items() if n not in given}}
        parsed = parsed.with_spec(spec)
        cache = self._cache
        if cache is None and parsed.cache_dir is not None:
            cache = CompileCache(parsed.cache_dir, snapshots=False)  # runs read no pass snapshots
        stats = GraphStats()
        compiler = Compiler(graph, parsed.config, cache, stats)
        self._graphs[graph_id] = _Entry(graph, parsed, _plan(compiler, parsed, spec), stats)

    def build_graph(self, graph_id: GraphId) -> float:
        """Compile what this graph's strategy compiles ahead; the seconds it took."""
        return self._entry(graph_id).plan.build()

    def run_graph(self, graph_id: GraphId, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Run on `feeds` (input name -> array), compiling or deciding first when the strategy needs to."""
        entry = self._entry(graph_id)
        start = time.perf_counter()
        shapes = {n: s for n, s in feed_shapes(feeds).items() if n in entry.graph.inputs}
        served = entry.plan.model_for(shapes)
        simulated_us: float | None = None
        if served.model.config.hardware is not None:
            result = simulate(served.model, feeds=feeds)
            outputs, simulated_us = result.outputs, result.total_us
        else:
            outputs = served.model.run(feeds)
        seconds = time.perf_counter() - start
        entry.stats.runs += 1
        entry.stats.run_seconds += seconds
        entry.last = RunRecord(shapes, served.shapes, seconds, served.compile_seconds, served.decision_seconds,
                               simulated_us, served.model.plan.kernels)
        return outputs

    def warm_up(self, graph_id: GraphId, shapes: Sequence[Mapping[str, Sequence[int]]] | None = None,
                seed: int = 0) -> list[InputShapes]:
        """Build, then run seeded dummy inputs of each shape (default: every gear, the static shape, or a
        bounded range's two ends) so real requests find their models ready. Returns the shapes warmed."""
        entry = self._entry(graph_id)
        entry.plan.build()
        wanted = entry.plan.warm_shapes() if shapes is None else [{k: tuple(v) for k, v in s.items()} for s in shapes]
        for shape in wanted:
            self.run_graph(graph_id, self.dummy_feeds(graph_id, shape, seed))
        return wanted

    def dummy_feeds(self, graph_id: GraphId, shapes: Mapping[str, Sequence[int]] | None = None,
                    seed: int = 0) -> dict[str, np.ndarray]:
        """Seeded random inputs of `shapes` (default: the first shape warm_up would run)."""
        entry = self._entry(graph_id)
        wanted = entry.plan.warm_shapes()[0] if shapes is None else shapes
        return random_feeds(reshape_inputs(entry.graph, wanted), seed)

    def model_for(self, graph_id: GraphId, shapes: Mapping[str, Sequence[int]]) -> CompiledModel:
        """The compiled model a run of `shapes` uses (compiled or decided now if needed, and counted)."""
        return self._entry(graph_id).plan.model_for({k: tuple(v) for k, v in shapes.items()}).model

    def models(self, graph_id: GraphId) -> list[CompiledModel]:
        """Every model this graph has compiled or decided so far (online: the range compile first)."""
        return self._entry(graph_id).plan.models_so_far()

    def save(self, graph_id: GraphId, path: str | os.PathLike[str]) -> Path:
        """Build this graph and write it as one offline model (`.gem`), as GE's aclgrphSaveModel writes an .om:
        every gear (ge.dynamicDims / ge.dynamicBatchSize) in one file, read back by ge_core.GearedModel.load
        or load_compiled(path, shapes=...), or the one model of static shapes. A range compiles per shape at
        run time: it has nothing to save ahead."""
        plan = self._entry(graph_id).plan
        if isinstance(plan, GearPlan):
            return plan.geared().save(path)
        if isinstance(plan, StaticPlan):
            plan.build()
            assert plan.model is not None
            return plan.model.save(path)
        raise UsageError(f"graph {graph_id} has input shape ranges: each shape compiles at run time, so there is "
                         "no model to save ahead.", hint="Give gears (ge.dynamicDims or ge.dynamicBatchSize) to "
                         "compile every shape ahead, or static ge.inputShape.")

    def remove_graph(self, graph_id: GraphId) -> None:
        self._entry(graph_id)
        del self._graphs[graph_id]

    def stats(self, graph_id: GraphId) -> dict[str, float | int]:
        return self._entry(graph_id).stats.to_json()

    def last_run(self, graph_id: GraphId) -> RunRecord | None:
        return self._entry(graph_id).last

    def options_of(self, graph_id: GraphId) -> SessionOptions:
        return self._entry(graph_id).options

    @property
    def graph_ids(self) -> list[GraphId]:
        return list(self._graphs)

    def _entry(self, graph_id: GraphId) -> _Entry:
        if graph_id not in self._graphs:
            raise UsageError(f"graph {graph_id} is not in the session.",
                             hint=f"Graphs added: {', '.join(map(str, self._graphs)) or '(none)'}; use add_graph.")
        return self._graphs[graph_id]


def _spec_of(graph: Graph) -> ShapeSpec:
    """The graph's own input shapes, its unknown dims as -1 (any size)."""
    return {n: tuple(DimRange() if d < 0 else d for d in graph.desc(n).shape) for n in graph.inputs}


def _plan(compiler: Compiler, options: SessionOptions, spec: ShapeSpec) -> Plan:
    if options.gears:
        rest = {n: d for n, d in spec.items() if n not in options.gears[0]}
        if not is_static(rest):
            raise UsageError(f"inputs {', '.join(quote(n) for n in rest)} have unknown dims no gear sets.",
                             hint="Name every input with unknown dims in ge.inputShape.")
        shapes = tuple({**gear, **_static(rest)} for gear in options.gears)
        return GearPlan(compiler, GearSet(options.input_shape or {}, options.gear_option, shapes))
    if is_static(spec):
        return StaticPlan(compiler, _static(spec))
    if options.fusion_mode == "online":
        return OnlinePlan(compiler, spec)
    return RangePlan(compiler, spec)


def _static(spec: ShapeSpec) -> InputShapes:
    return {n: tuple(d for d in dims if isinstance(d, int)) for n, dims in spec.items()}  # all ints: is_static
