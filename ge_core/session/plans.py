"""How a Session gets a compiled model for a run's input shapes: one plan per dynamic-shape strategy.

    StaticPlan   static shapes: one compile at build; a run of another shape is refused
    GearPlan     ATC gears (ge.dynamicDims / ge.dynamicBatchSize): one compile per gear at build; a run picks
                 the gear its shapes equal, a shape outside every gear is refused listing the gears; all the
                 gears make one GearedModel (Session.save writes it as one offline model)
    RangePlan    -1 or LOW~HIGH dims: a compile on first use of each distinct shape (through the cache)
    OnlinePlan   ranges with ge.fusionMode online: one compile for the range at build, then UB fusion and
                 tiling decided per new shape at run time (ge_core/session/online.py), kept per shape

Every compile, cache hit and decision is counted in the graph's GraphStats.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from ge_core.compiler import CompiledModel, GearedModel
from ge_core.compiler import compile as ge_compile
from ge_core.config import CompileConfig
from ge_core.errors import UsageError, quote
from ge_core.frontend.input_shapes import InputShapes, ShapeSpec, format_input_shapes
from ge_core.ir.graph import Graph
from ge_core.offline.cache import CompileCache
from ge_core.offline.gears import GearSet
from ge_core.session.online import decide, range_config
from ge_core.session.shapes import outside, reshape_inputs, shapes_text

ShapeKey = tuple[tuple[str, tuple[int, ...]], ...]


def shape_key(shapes: InputShapes) -> ShapeKey:
    return tuple(sorted(shapes.items()))


@dataclass
class GraphStats:
    compiles: int = 0  # pass pipelines run (cache hits not included)
    compile_seconds: float = 0.0  # compiles and cache loads
    cache_hits: int = 0  # compiles answered by the compile cache
    runs: int = 0
    run_seconds: float = 0.0
    decisions: int = 0  # online mode: shapes decided at run time
    decision_seconds: float = 0.0

    def to_json(self) -> dict[str, float | int]:
        return {"compiles": self.compiles, "compile_seconds": self.compile_seconds, "cache_hits": self.cache_hits,
                "runs": self.runs, "run_seconds": self.run_seconds, "decisions": self.decisions,
                "decision_seconds": self.decision_seconds}


@dataclass(frozen=True)
class Served:
    """The model a run used, and what getting it cost (zero when it was ready)."""

    model: CompiledModel
    shapes: InputShapes  # the shapes it was compiled (or decided) for
    compile_seconds: float = 0.0
    decision_seconds: float = 0.0


class Plan(Protocol):
    def build(self) -> float: ...  # compile what is known ahead; returns the seconds it took

    def model_for(self, shapes: InputShapes) -> Served: ...

    def warm_shapes(self) -> list[InputShapes]: ...  # what warm_up runs when given no shapes

    def models_so_far(self) -> list[CompiledModel]: ...


@dataclass
class Compiler:
    """Compiles for a plan through the cache, counting."""

    graph: Graph
    config: CompileConfig
    cache: CompileCache | None
    stats: GraphStats

    def compile(self, shapes: InputShapes) -> tuple[CompiledModel, float]:
        """A static compile at `shapes`."""
        return self._counted(lambda: ge_compile(reshape_inputs(self.graph, shapes),
                                                replace(self.config, input_shapes=shapes_text(shapes)),
                                                cache=self.cache))

    def compile_range(self, spec: ShapeSpec) -> tuple[CompiledModel, float]:
        """The one compile for a range (online mode): unknown dims, the shape-dependent passes left out."""
        return self._counted(lambda: ge_compile(reshape_inputs(self.graph, spec), range_config(self.config),
                                                cache=self.cache))

    def _counted(self, run: Callable[[], CompiledModel]) -> tuple[CompiledModel, float]:
        start = time.perf_counter()
        compiled = run()
        seconds = time.perf_counter() - start
        self.stats.compile_seconds += seconds
        if compiled.cache.get("hit"):
            self.stats.cache_hits += 1
        else:
            self.stats.compiles += 1
        return compiled, seconds


@dataclass
class StaticPlan:
    compiler: Compiler
    shapes: InputShapes
    model: CompiledModel | None = None

    def build(self) -> float:
        if self.model is not None:
            return 0.0
        self.model, seconds = self.compiler.compile(self.shapes)
        return seconds

    def model_for(self, shapes: InputShapes) -> Served:
        seconds = self.build()
        if shape_key(shapes) != shape_key(self.shapes):
            raise UsageError(f"the graph was built for static shapes {shapes_text(self.shapes)}; this run feeds "
                             f"{shapes_text(shapes)}.", hint="Give ge.inputShape with -1 or LOW~HIGH dims (and "
                             "ge.dynamicDims for gears) to run other shapes.")
        assert self.model is not None
        return Served(self.model, self.shapes, compile_seconds=seconds)

    def warm_shapes(self) -> list[InputShapes]:
        return [self.shapes]

    def models_so_far(self) -> list[CompiledModel]:
        return [self.model] if self.model is not None else []


@dataclass
class GearPlan:
    compiler: Compiler
    gears: GearSet
    models: dict[ShapeKey, CompiledModel] = field(default_factory=dict)

    def build(self) -> float:
        seconds = 0.0
        for gear in self.gears.shapes:
            if shape_key(gear) not in self.models:
                self.models[shape_key(gear)], spent = self.compiler.compile(gear)
                seconds += spent
        return seconds

    def model_for(self, shapes: InputShapes) -> Served:
        seconds = self.build()
        gear = self.gears.shapes[self.gears.pick(shapes, f"graph {quote(self.compiler.graph.name)}")]
        return Served(self.models[shape_key(gear)], shapes, compile_seconds=seconds)

    def warm_shapes(self) -> list[InputShapes]:
        return list(self.gears.shapes)

    def models_so_far(self) -> list[CompiledModel]:
        return list(self.models.values())

    def geared(self) -> GearedModel:
        """Every gear, built now if need be, as one model (what an offline model with gears holds)."""
        self.build()
        return GearedModel(self.gears, [self.models[shape_key(gear)] for gear in self.gears.shapes])


@dataclass
class RangePlan:
    compiler: Compiler
    spec: ShapeSpec
    models: dict[ShapeKey, CompiledModel] = field(default_factory=dict)

    def build(self) -> float:
        return 0.0  # nothing is known ahead: each shape compiles on first use

    def model_for(self, shapes: InputShapes) -> Served:
        _check_within(self.spec, shapes)
        key = shape_key(shapes)
        if key in self.models:
            return Served(self.models[key], shapes)
        self.models[key], seconds = self.compiler.compile(shapes)
        return Served(self.models[key], shapes, compile_seconds=seconds)

    def warm_shapes(self) -> list[InputShapes]:
        return _range_ends(self.spec)

    def models_so_far(self) -> list[CompiledModel]:
        return list(self.models.values())


@dataclass
class OnlinePlan:
    compiler: Compiler
    spec: ShapeSpec
    range_model: CompiledModel | None = None
    models: dict[ShapeKey, CompiledModel] = field(default_factory=dict)

    def build(self) -> float:
        if self.range_model is not None:
            return 0.0
        self.range_model, seconds = self.compiler.compile_range(self.spec)
        return seconds

    def model_for(self, shapes: InputShapes) -> Served:
        seconds = self.build()
        _check_within(self.spec, shapes)
        key = shape_key(shapes)
        if key in self.models:
            return Served(self.models[key], shapes, compile_seconds=seconds)
        assert self.range_model is not None
        start = time.perf_counter()
        self.models[key] = decide(self.range_model, shapes, self.compiler.config)
        spent = time.perf_counter() - start
        stats = self.compiler.stats
        stats.decisions, stats.decision_seconds = stats.decisions + 1, stats.decision_seconds + spent
        return Served(self.models[key], shapes, compile_seconds=seconds, decision_seconds=spent)

    def warm_shapes(self) -> list[InputShapes]:
        return _range_ends(self.spec)

    def models_so_far(self) -> list[CompiledModel]:
        return ([self.range_model] if self.range_model is not None else []) + list(self.models.values())


def _check_within(spec: ShapeSpec, shapes: InputShapes) -> None:
    problem = outside(spec, shapes)
    if problem is not None:
        raise UsageError(f"this run does not fit ge.inputShape {quote(format_input_shapes(spec))}: {problem}.",
                         hint="Feed shapes inside the ranges, or widen ge.inputShape.")


def _range_ends(spec: ShapeSpec) -> list[InputShapes]:
    """The smallest and the largest shapes of a bounded range (warm_up's default)."""
    ends: list[InputShapes] = []
    for pick in ("low", "high"):
        shape: InputShapes = {}
        for name, dims in spec.items():
            sizes = []
            for d in dims:
                size = d if isinstance(d, int) else getattr(d, pick)
                if size is None:
                    raise UsageError(f"warm_up needs shapes: ge.inputShape {quote(format_input_shapes(spec))} has "
                                     "an unbounded dim.", hint="Pass shapes=[...] to warm_up, or bound the range.")
                sizes.append(size)
            shape[name] = tuple(sizes)
        if shape not in ends:
            ends.append(shape)
    return ends
