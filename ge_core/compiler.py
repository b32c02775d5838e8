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

from ge_core.errors import UsageError
from ge_core.frontend import load_onnx
from ge_core.ir.graph import Graph
from ge_core.memory import MemoryPlan, check_strategy, plan_memory, static_problem, validate_plan
from ge_core.memory.order import MEMORY_ORDERS, memory_aware_order, order_peak_bytes
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
from ge_core.passes.infra.pipeline import all_passes, default_pipeline, without
from ge_core.passes.infra.switches import CompileConfig, OptLevel, apply_switches, read_switch_file
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
            "compile_seconds": round(self.compile_seconds, 6),
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


def compile(  # shadows the builtin on purpose: the public contract is ge_core.compile
    source: Graph | str | os.PathLike[str] | bytes,
    *,
    opt_level: OptLevel | str = OptLevel.O3,
    input_shapes: str | Mapping[str, Sequence[int]] | None = None,
    disabled: Iterable[str] = (),
    switch_file: str | Path | None = None,
    pipeline: Sequence[PipelineStep] | None = None,
    verify: bool = False,
    numeric_feeds: Mapping[str, np.ndarray] | None = None,
    numeric_tolerance: float | None = None,
    memory_reuse: bool = True,
    memory_strategy: str = "auto",
    memory_alignment: int = 512,
    memory_no_copy_concat: bool = True,
    memory_order: str = "graph",
    hardware: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> CompiledModel:
    """Compile a graph (or an ONNX path/bytes) at `opt_level`; the caller's Graph is never modified.

    `pipeline` replaces the default steps (reorder or pick passes in the API); `disabled` and
    `switch_file` turn passes off by name; `verify` runs graph.verify() after every pass; with
    `numeric_feeds` every pass is also run for numbers and its max error per output recorded.
    `memory_*` drive the memory plan (GE's ge.exec.disableReuseMemory is memory_reuse=False;
    memory_no_copy_concat=False makes every Concat copy its inputs; memory_order="memory_aware" reorders
    the final graph when another topological order lowers the peak); graphs with
    dynamic activation shapes get none (report["memory"]["skipped"] says why).
    `hardware` (a profile name such as "ascend910", or a profile .json path) lowers the graph for that NPU
    after the default steps (formats, TransData, tiling: ge_core/passes/npu); None keeps the compile
    target-independent. A custom `pipeline` runs as given (add `lowering_steps(hardware)` to it yourself).
    `progress(done, total, pass name)` is called before each pass (the web page's progress bar).
    """
    check_strategy(memory_strategy)
    if memory_order not in MEMORY_ORDERS:
        raise UsageError(f"unknown memory order '{memory_order}'.", hint=f"Known orders: {', '.join(MEMORY_ORDERS)}.")
    start = time.perf_counter()
    with gc_paused():
        graph = source.copy() if isinstance(source, Graph) else load_onnx(source, input_shapes)
        config = _config(opt_level, disabled, switch_file, verify, numeric_tolerance, hardware)
        default = default_pipeline(config.opt_level, config.hardware)
        steps = without(pipeline if pipeline is not None else default, config.disabled)
        snapshots = SnapshotInstrument()
        instruments: list[Instrument] = [snapshots]
        if verify:
            instruments.append(VerifyInstrument())
        if numeric_feeds is not None:
            instruments.append(NumericsInstrument(numeric_feeds, numeric_tolerance))
        if progress is not None:
            instruments.append(ProgressInstrument(progress, len(steps)))
        input_graph = graph.copy()
        snapshots.last = input_graph
        records = PassManager(steps, instruments).run(graph)
        memory = _memory_plan(graph, memory_reuse, memory_strategy, memory_alignment, memory_no_copy_concat,
                              memory_order)
        plan = ExecutionPlan.of(graph, no_task=set(memory.no_copy_concats) if memory is not None else set())
    extra = {"hardware": _hardware_name(config.hardware)} if config.hardware is not None else {}
    return CompiledModel(graph, input_graph, config, records, plan, time.perf_counter() - start,
                         extra_report=extra, memory=memory)


def _memory_plan(graph: Graph, reuse: bool, strategy: str, alignment: int, no_copy_concat: bool,
                 order: str) -> MemoryPlan | None:
    """The validated memory plan of the final graph, or None while an activation's size is unknown.
    The best memory-aware order is always looked for and reported; with order="memory_aware" the graph
    adopts it (it runs in that order)."""
    if static_problem(graph) is not None:
        return None
    better, better_peak = memory_aware_order(graph, alignment)
    graph_peak = order_peak_bytes(graph, list(graph.nodes), alignment)
    if order == "memory_aware" and better_peak < graph_peak:
        graph.reorder(better)
    memory = plan_memory(graph, alignment=alignment, strategy=strategy, reuse=reuse, no_copy_concat=no_copy_concat)
    validate_plan(memory, graph)
    memory.execution_order = order
    memory.graph_order_min_bytes, memory.memory_aware_min_bytes = graph_peak, better_peak
    return memory


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


def _config(opt_level: OptLevel | str, disabled: Iterable[str], switch_file: str | Path | None,
            verify: bool, numeric_tolerance: float | None, hardware: str | os.PathLike[str] | None) -> CompileConfig:
    switches = {name: False for name in disabled}
    if switch_file is not None:
        switches.update(read_switch_file(switch_file))
    off = apply_switches(switches, [p.name for p in all_passes()]) if switches else frozenset()
    target = None if hardware is None else str(hardware)
    if target is not None:
        _hardware_name(target)  # an unknown name is refused now, listing the known ones
    return CompileConfig(OptLevel.parse(opt_level), off, verify, numeric_tolerance, target)


def _hardware_name(hardware: str) -> str:
    from ge_core.hardware import load_profile

    return load_profile(hardware).name
