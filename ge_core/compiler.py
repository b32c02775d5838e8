"""`ge_core.compile`: a GE Graph through the pass pipeline into a CompiledModel.

The CompiledModel holds the final graph, the ordered execution plan, one record per pass (with a snapshot
of the graph after it) and the compile report of DESIGN.md's contract; `.run(feeds)` runs the plan.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ge_core.config import CompileConfig, MemoryConfig
from ge_core.errors import UsageError, quote
from ge_core.frontend import load_onnx
from ge_core.frontend.input_shapes import format_input_shapes
from ge_core.hardware import load_profile
from ge_core.ir.graph import Graph
from ge_core.memory import MemoryPlan, plan_memory, static_problem, validate_plan
from ge_core.memory.order import order_choice
from ge_core.offline.cache import CompileCache, Lookup
from ge_core.offline.gears import GearSet
from ge_core.offline.gem import Contents, write_gem
from ge_core.offline.gem_gears import read_gem_gears, write_gem_gears
from ge_core.ops import REGISTRY
from ge_core.passes.infra.instruments import (
    Instrument,
    NumericsInstrument,
    PassRecord,
    ProgressInstrument,
    SnapshotInstrument,
    VerifyInstrument,
)
from ge_core.passes.infra.manager import PassManager, PipelineStep
from ge_core.passes.infra.pipeline import default_pipeline, named_steps, without
from ge_core.runtime import Executor
from ge_core.runtime.arena import ArenaExecutor


@dataclass(frozen=True)
class PlanStep:
    node: str
    op_type: str
    launches_kernel: bool  # False for views (Reshape, Squeeze...) and no-copy Concats: GE's no-task nodes


@dataclass
class ExecutionPlan:
    steps: list[PlanStep]

    @property
    def kernels(self) -> int:
        return sum(s.launches_kernel for s in self.steps)

    @classmethod
    def of(cls, graph: Graph, no_task: set[str] | frozenset[str] = frozenset()) -> ExecutionPlan:
        """`no_task`: nodes the memory plan made free (no-copy Concats)."""
        steps = []
        for node in graph.nodes:
            op = REGISTRY.for_node(node)
            launches = not (op is not None and op.view) and node.name not in no_task
            steps.append(PlanStep(node.name, node.op_type, launches))
        return cls(steps)


@dataclass
class CompiledModel:
    graph: Graph
    input_graph: Graph  # as imported, before any pass (the "before" of the first pass)
    config: CompileConfig
    records: list[PassRecord]
    plan: ExecutionPlan
    compile_seconds: float
    extra_report: dict[str, Any] = field(default_factory=dict)
    memory: MemoryPlan | None = None  # None when an activation has a dynamic shape (reason in the report)
    cache: dict[str, Any] = field(default_factory=lambda: {"hit": False, "key": None, "load_seconds": 0.0})

    @cached_property
    def executor(self) -> Executor:
        return Executor(self.graph)

    @cached_property
    def runner(self) -> Executor | ArenaExecutor:
        """What runs the compiled plan: one preallocated arena with every activation at its planned offset
        (so a wrong plan gives wrong numbers), or the plain executor when there is no plan (dynamic dims)."""
        return ArenaExecutor(self.graph, self.memory) if self.memory is not None else self.executor

    def run(self, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
        return self.runner.run(feeds).outputs

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write this model as an offline model (`.gem`, ge_core/offline/gem.py): `load_compiled` reads it back
        and runs it without compiling again."""
        return write_gem(_contents(self), path)

    def run_on_arena(self, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Run with every activation at its planned offset in one arena (needs `self.memory`)."""
        if self.memory is None:
            raise UsageError(f"this model has no memory plan to run on: {self.memory_skipped}",
                             hint="Compile it with static input shapes (input_shapes).")
        return self.runner.run(feeds).outputs  # the cached arena executor

    @property
    def memory_skipped(self) -> str:
        return static_problem(self.graph) or "no memory plan was made"

    @property
    def report(self) -> dict[str, Any]:
        """The compile report (DESIGN.md contract): timing, passes, kernel count."""
        return {
            "config": self.config.to_json(),
            "compile_seconds": round(self.compile_seconds, 6),
            "cache": dict(self.cache),
            "opt_level": str(self.config.opt_level),
            "passes": [r.to_json() for r in self.records],
            "kernels": self.plan.kernels,
            "nodes": len(self.graph),
            "nodes_before": len(self.input_graph),
            "fusion": {"decisions": [d.to_json() for r in self.records for d in r.decisions]},
            "memory": self.memory.to_json() if self.memory is not None else {"skipped": self.memory_skipped},
            **pass_sections(self.records),
            **self.extra_report,
        }


def pass_sections(records: Iterable[PassRecord]) -> dict[str, list[dict[str, Any]]]:
    """The report sections passes added (PassResult.report: the NPU lowering's `formats` and `tiling`)."""
    sections: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        for key, items in record.report.items():
            sections.setdefault(key, []).extend(items)
    return sections


@dataclass
class GearedModel:
    """A model compiled ahead for several input shapes, ATC's gears (--dynamic_dims, --dynamic_batch_size; a
    Session with ge.dynamicDims builds one): a CompiledModel per gear, saved together as one offline model as
    ATC's .om holds every gear. A run uses the gear its inputs equal; other shapes are refused, listing the
    gears (as ACL refuses a gear that was not compiled)."""

    gears: GearSet
    models: list[CompiledModel]  # models[i] was compiled for gears.shapes[i]

    def model_for(self, shapes: Mapping[str, Sequence[int]]) -> CompiledModel:
        return self.models[self.gears.pick(shapes)]

    def gear(self, value: str) -> CompiledModel:
        """The gear written as its option writes it: "16,16" (--dynamic-dims), "4" (--dynamic-batch-size)."""
        return self.models[self.gears.find(value)]

    def run(self, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
        return self.model_for({n: np.asarray(v).shape for n, v in feeds.items()}).run(feeds)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write every gear into one offline model (`.gem`); the weights are stored once."""
        return write_gem_gears(self.gears, [_contents(m) for m in self.models], path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> GearedModel:
        """Every gear of the offline model at `path` (refused as load_compiled refuses; and when it holds one
        model, not gears)."""
        gears, stored = read_gem_gears(path)
        if gears is None:
            raise UsageError(f"{quote(os.fspath(path))} holds one model, not gears.",
                             hint="Load it with ge_core.load_compiled(path).")
        return cls(gears, [_from_contents(stored[i]) for i in range(len(stored))])


def load_compiled(path: str | os.PathLike[str], *, shapes: Mapping[str, Sequence[int]] | None = None,
                  gear: int | str | None = None) -> CompiledModel:
    """The offline model at `path` (written by CompiledModel.save or GearedModel.save), ready to run; a file
    from another version, truncated or corrupted is refused with a ModelError. Its pass records keep no graph
    snapshots. From a file with gears, one gear, as ACL's aclmdlSetInputDynamicDims names it before an
    execute: the one `shapes` (the inputs' shapes) equal, or `gear` (its index, or its sizes as its option
    writes them: "16,16", "4"), else the first; a shape outside the gears is refused listing them. Only
    that gear's graphs are built. `load_gear` also says which gear it is."""
    return load_gear(path, shapes=shapes, gear=gear)[0]


def load_gear(path: str | os.PathLike[str], *, shapes: Mapping[str, Sequence[int]] | None = None,
              gear: int | str | None = None) -> tuple[CompiledModel, GearSet | None, int]:
    """load_compiled's model, the file's gears (None: it holds one model) and the index of the gear loaded."""
    where = quote(os.fspath(path))
    gears, stored = read_gem_gears(path, lambda found: _pick_gear(found, shapes, gear, where))
    if gears is None and gear is not None:
        raise UsageError(f"{where} holds one model, not gears: there is no gear {quote(gear)} to pick.",
                         hint="Leave the gear out.")
    index, contents = next(iter(stored.items()))
    return _from_contents(contents), gears, index


def _pick_gear(gears: GearSet, shapes: Mapping[str, Sequence[int]] | None, gear: int | str | None,
               where: str) -> int:
    if gear is None:
        return 0 if shapes is None else gears.pick(shapes, where)
    if isinstance(gear, int):
        if not 0 <= gear < len(gears.shapes):
            raise UsageError(f"{where} has no gear {gear}: it holds {gears.listing()}.",
                             hint=f"Give an index from 0 to {len(gears.shapes) - 1}.")
        index = gear
    else:
        index = gears.find(gear, where)
    if shapes is not None and gears.index(shapes) != index:
        raise UsageError(f"gear {gears.value_text(index)} of {where} is {format_input_shapes(gears.shapes[index])}; "
                         f"the inputs are {format_input_shapes(shapes)}.",
                         hint="Give inputs of that gear's shapes, or leave the gear out to pick it by the inputs.")
    return index


def _contents(compiled: CompiledModel) -> Contents:
    return Contents(compiled.config, compiled.graph, compiled.input_graph, compiled.memory, compiled.records,
                    compiled.compile_seconds, compiled.extra_report)


def _from_contents(stored: Contents, cache: dict[str, Any] | None = None) -> CompiledModel:
    plan = ExecutionPlan.of(stored.graph,
                            no_task=set(stored.memory.no_copy_concats) if stored.memory is not None else set())
    compiled = CompiledModel(stored.graph, stored.input_graph, stored.config, stored.records, plan,
                             stored.compile_seconds, extra_report=stored.extra_report, memory=stored.memory)
    if cache is not None:
        compiled.cache = cache
    return compiled


def compile(  # shadows the builtin on purpose: the public contract is ge_core.compile
    source: Graph | str | os.PathLike[str] | bytes,
    config: CompileConfig | None = None,
    *,
    pipeline: Sequence[PipelineStep] | None = None,
    numeric_feeds: Mapping[str, np.ndarray] | None = None,
    numeric_tolerance: float | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    cache: CompileCache | None = None,
    **options: Any,
) -> CompiledModel:
    """Compile a graph (or an ONNX path/bytes) as `config` says; the caller's Graph is never modified.

    Without a config, keyword `options` build one (`CompileConfig.build`: opt_level, input_shapes,
    disabled, switch_file, hardware, verify, memory_reuse ...); giving both is refused. A Graph source is
    taken as it is (its input shapes were fixed when it was loaded); a path or bytes is loaded with the
    config's input_shapes. What the config cannot hold because it is code or data, not configuration:
    `pipeline` (pass objects) replaces the default steps; `numeric_feeds` runs every pass for numbers and
    records its max error per output, failing one that moves them more than `numeric_tolerance`;
    `progress(done, total, pass name)` is called before each pass (the web page's progress bar).
    With a `cache` (ge_core/offline/cache.py) a compile done before with the same model content, config,
    hardware profile and version is loaded instead (report["cache"]: hit, key, load_seconds; kept, and why
    not: an entry is kept only where hashing the model and loading it cost less than compiling); compiles
    given pass objects or numeric feeds are not cached (neither is in the key).
    Graphs with dynamic activation shapes get no memory plan (report["memory"]["skipped"] says why).
    """
    if config is None:
        config = CompileConfig.build(**options)
    elif options:
        raise UsageError(f"compile() got a config and keyword options too ({', '.join(sorted(options))}).",
                         hint="Put every option in the config, e.g. dataclasses.replace(config, opt_level='O1').")
    start = time.perf_counter()
    with gc_paused():
        cached = cache if pipeline is None and numeric_feeds is None else None
        found = cached.lookup(source, config) if cached is not None and isinstance(source, bytes) else None
        if found is not None and found.contents is not None:  # ONNX bytes: looked up before their import
            return _hit(found, start)
        compiling = time.thread_time()  # what a hit saves: for bytes, their import too
        graph = source.copy() if isinstance(source, Graph) else load_onnx(source, config.input_shapes or None)
        if cached is not None and found is None:  # a Graph, or a file (whose external data its bytes miss)
            found = cached.lookup(graph, config)  # the entry names graph's constants
            if found.contents is not None:
                return _hit(found, start)
            compiling = time.thread_time()
        steps = compile_steps(config, pipeline)
        snapshots = SnapshotInstrument()
        instruments: list[Instrument] = [snapshots]
        if config.verify:
            instruments.append(VerifyInstrument())
        if numeric_feeds is not None:
            instruments.append(NumericsInstrument(numeric_feeds, numeric_tolerance))
        if progress is not None:
            instruments.append(ProgressInstrument(progress, len(steps)))
        input_graph = graph.copy()
        snapshots.last = input_graph
        records = PassManager(steps, instruments).run(graph)
        memory = _memory_plan(graph, config.memory)
        plan = ExecutionPlan.of(graph, no_task=set(memory.no_copy_concats) if memory is not None else set())
    extra = {"hardware": load_profile(config.hardware).name} if config.hardware is not None else {}
    compiled = CompiledModel(graph, input_graph, config, records, plan, time.perf_counter() - start,
                             extra_report=extra, memory=memory)
    if cached is not None and found is not None:
        known = None if isinstance(source, bytes) else input_graph
        compiled.cache = _stored(cached, found, compiled, known, time.thread_time() - compiling)
    return compiled


def _hit(found: Lookup, start: float) -> CompiledModel:
    assert found.contents is not None
    return _from_contents(found.contents, {"hit": True, "key": found.key, "kept": True,
                                           "load_seconds": time.perf_counter() - start})


def _stored(cache: CompileCache, found: Lookup, compiled: CompiledModel, known: Graph | None,
            compile_seconds: float) -> dict[str, Any]:
    """The report's cache section of a compile that missed: its entry kept, or why not."""
    if found.key is None:  # its costs said a hit would not pay: nothing was looked up
        return {"hit": False, "key": None, "load_seconds": 0.0, "kept": False, "why": found.why}
    with gc_paused():  # the entry is timed loading back as a hit loads it
        kept = cache.store(found, _contents(compiled), known, compile_seconds)
    return {"hit": False, "key": found.key, "load_seconds": 0.0, **kept}


def compile_steps(config: CompileConfig, pipeline: Sequence[PipelineStep] | None = None) -> list[PipelineStep]:
    """The steps a compile runs: `pipeline`, else the config's named pipeline, else the opt level's
    default (with the NPU lowering when the config has a hardware target); passes switched off dropped."""
    if pipeline is not None and config.pipeline is not None:
        raise UsageError("compile() got pass objects (pipeline=) and a config naming a pipeline.",
                         hint="Give one of them.")
    if pipeline is not None:
        steps = list(pipeline)
    elif config.pipeline is not None:
        steps = named_steps(config.pipeline, config.hardware)
    else:
        steps = default_pipeline(config.opt_level, config.hardware)
    return without(steps, config.disabled_passes)


def plan_for(compiled: CompiledModel, memory: MemoryConfig) -> MemoryPlan:
    """The memory plan `compiled` would have under other memory switches, without running the passes again
    (the UI's switches). Planned on a copy of the graph the passes left, so a memory-aware order reorders
    the copy and never the compiled graph; the compile's own plan when the switches are its own. (A loaded
    offline model keeps no snapshots: its final graph, in the order it runs, is planned instead.)"""
    if memory == compiled.config.memory and compiled.memory is not None:
        return compiled.memory
    last = compiled.records[-1].snapshot if compiled.records else None  # before any memory-aware reorder
    plan = _memory_plan((last if last is not None else compiled.graph).copy(), memory)
    if plan is None:
        raise UsageError(f"this model has no memory plan: {compiled.memory_skipped}",
                         hint="Compile it with static input shapes (input_shapes).")
    return plan


def _memory_plan(graph: Graph, memory: MemoryConfig) -> MemoryPlan | None:
    """The validated memory plan of the final graph, or None while an activation's size is unknown.
    The best memory-aware order is always looked for and reported; with order="memory_aware" the graph
    adopts it (it runs in that order)."""
    if static_problem(graph) is not None:
        return None
    better, better_peak, graph_peak = order_choice(graph, memory.alignment)
    if memory.order == "memory_aware" and better_peak < graph_peak:
        graph.reorder(better)
    plan = plan_memory(graph, alignment=memory.alignment, strategy=memory.strategy, reuse=memory.reuse,
                       no_copy_concat=memory.no_copy_concat)
    validate_plan(plan, graph)
    plan.execution_order = memory.order
    plan.graph_order_min_bytes, plan.memory_aware_min_bytes = graph_peak, better_peak
    return plan


_gc_lock = threading.Lock()
_gc_depth = 0  # compiles running now (the app compiles from several threads)
_gc_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause CPython's cyclic garbage collector while compiling; restore it when the last compile ends.

    A compile allocates hundreds of thousands of long-lived objects (nodes, descs, one graph snapshot per
    pass) and no reference cycles, so every full collection walks the whole growing heap and finds nothing:
    on a 10k-node graph that was a third of the compile time and made it grow faster than the graph.
    Reference counting still frees everything; cycles made meanwhile are collected once it is back on.
    """
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()
