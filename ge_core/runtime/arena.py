"""The arena executor: runs a graph with every activation living at its planned offset in ONE byte arena.

The CPU Executor lets numpy allocate each activation; this one takes a MemoryPlan (ge_core.memory) at its
word. It preallocates `np.empty(plan.arena_bytes, np.uint8)` and gives every tensor a step produces a view
`arena[offset:offset + nbytes].view(dtype).reshape(shape)`. Each kernel reads its inputs from those views
and its outputs are copied into theirs (an in-place output's view is its input's: the kernel has already
read the input when the copy happens). View ops (OpDef.view: Reshape, Squeeze...) that the plan aliases
to their base launch nothing: their tensor is just the base's bytes under another shape. Nor do no-copy
Concats (PlanStep.no_task): their inputs were written at their slices of the output, which is just read.

So a wrong plan — two live tensors sharing bytes — gives wrong numbers here instead of passing silently.
Tensors the arena cannot hold (strings, bfloat16 stand-ins) or the plan leaves out live outside it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ge_core.errors import ExecutionError, ModelError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.registry import OpDef, OpRegistry
from ge_core.runtime.executor import ExecutionResult, NodeTiming, _run_step, _shape, _Step
from ge_core.runtime.feeds import check_feeds


class AllocationLike(Protocol):
    """What the arena reads of a ge_core.memory.plan.Allocation."""

    @property
    def offset(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def shape(self) -> Sequence[int]: ...
    @property
    def dtype(self) -> str: ...


class PlanStepLike(Protocol):
    @property
    def node(self) -> str: ...
    @property
    def inputs(self) -> Sequence[str]: ...
    @property
    def outputs(self) -> Sequence[str]: ...
    @property
    def inplace(self) -> Mapping[str, str]: ...
    @property
    def no_task(self) -> bool: ...


class MemoryPlanLike(Protocol):
    """What the arena (and ge_core.viz.memory) read of a ge_core.memory.plan.MemoryPlan."""

    @property
    def arena_bytes(self) -> int: ...
    @property
    def graph_outputs(self) -> Sequence[str]: ...
    @property
    def steps(self) -> Sequence[PlanStepLike]: ...
    @property
    def allocations(self) -> Mapping[str, AllocationLike]: ...
    @property
    def aliases(self) -> Mapping[str, str]: ...


@dataclass(frozen=True, slots=True)
class _Slot:
    """Where one tensor lives in the arena."""

    offset: int
    nbytes: int
    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True, slots=True)
class _ArenaStep:
    step: _Step
    outputs: tuple[str, ...]  # the node's non-empty outputs
    zero_copy: bool  # a view the plan aliases to its base: no kernel, just a reshaped view


class ArenaExecutor:
    """Runs `graph` with the activations laid out as `plan` says; same results type as Executor."""

    def __init__(self, graph: Graph, plan: MemoryPlanLike, registry: OpRegistry = REGISTRY) -> None:
        if any(not graph.desc(t).is_static for t in graph.inputs):
            raise ModelError(f"graph '{graph.name}' has unknown input dims: a memory plan needs static shapes.",
                             hint="Compile with input_shapes (ATC's --input_shape) to fix them.")
        self.graph = graph
        self.plan = plan
        self.slots = _slots(plan)
        self.off_arena = sorted({t for s in plan.steps for t in s.outputs if t and t not in self.slots})
        self._steps = [_arena_step(graph.node(s.node), registry.lookup(graph.node(s.node)), graph, plan, self.slots,
                                   s.no_task)
                       for s in plan.steps]

    def run(self, feeds: Mapping[str, object]) -> ExecutionResult:
        checked = check_feeds(self.graph, feeds)
        arena = np.empty(self.plan.arena_bytes, np.uint8)
        env: dict[str, np.ndarray] = dict(self.graph.constants)
        env.update(checked)
        timings: list[NodeTiming] = []
        with np.errstate(all="ignore"):  # ONNX semantics give inf/nan where numpy would warn
            for step in self._steps:
                start = time.perf_counter()
                _run_arena_step(step, env, arena, self.slots)
                node = step.step.node
                timings.append(NodeTiming(node.name, node.op_type, time.perf_counter() - start))
        outputs = {t: np.array(env[t]) for t in self.graph.outputs}
        return ExecutionResult(outputs, timings, self.plan.arena_bytes)


def _slots(plan: MemoryPlanLike) -> dict[str, _Slot]:
    """Every allocation the arena can hold (numeric dtypes), checked to fit inside it."""
    slots: dict[str, _Slot] = {}
    for tensor, alloc in plan.allocations.items():
        dtype = _numpy_dtype(alloc.dtype)
        if dtype is None:
            continue
        shape = tuple(int(d) for d in alloc.shape)
        nbytes = math.prod(shape) * dtype.itemsize
        too_big = nbytes > alloc.size and tensor not in plan.aliases  # a view may record no size of its own
        if alloc.offset < 0 or alloc.offset + nbytes > plan.arena_bytes or too_big:
            raise ModelError(f"memory plan: tensor '{tensor}' ({nbytes} bytes at offset {alloc.offset}, "
                             f"size {alloc.size}) does not fit its slot or the {plan.arena_bytes}-byte arena.")
        slots[tensor] = _Slot(alloc.offset, nbytes, shape, dtype)
    return slots


def _numpy_dtype(dtype: str) -> np.dtype | None:
    if dtype in ("str", "bfloat16", "undefined"):
        return None
    try:
        result = np.dtype(dtype)
    except TypeError:
        return None
    return None if result.kind in "OUSV" else result


def _arena_step(node: Node, op: OpDef, graph: Graph, plan: MemoryPlanLike, slots: Mapping[str, _Slot],
                no_task: bool) -> _ArenaStep:
    outputs = tuple(t for t in node.outputs if t)
    single = len(outputs) == 1 and outputs[0] in slots
    zero_copy = single and ((op.view and plan.aliases.get(outputs[0]) in slots)
                            or (no_task and all(t in slots for t in node.inputs)))
    descs = tuple(graph.descs.get(t) for t in node.outputs)
    return _ArenaStep(_Step(node, op, (), descs), outputs, zero_copy)


def _view(arena: np.ndarray, slot: _Slot) -> np.ndarray:
    return arena[slot.offset: slot.offset + slot.nbytes].view(slot.dtype).reshape(slot.shape)


def _run_arena_step(step: _ArenaStep, env: dict[str, np.ndarray], arena: np.ndarray,
                    slots: Mapping[str, _Slot]) -> None:
    if step.zero_copy:
        env[step.outputs[0]] = _view(arena, slots[step.outputs[0]])
        return
    values = _run_step(step.step, env)  # ExecutionError naming node, op and input shapes on failure
    for t, value in zip(step.step.node.outputs, values, strict=False):
        if not t:
            continue
        slot = slots.get(t)
        if slot is None:
            env[t] = value
            continue
        if value.shape != slot.shape or value.dtype != slot.dtype:
            node = step.step.node
            raise ExecutionError(node.name, node.op_type, [_shape(env.get(i)) if i else None for i in node.inputs],
                                 f"output '{t}' came out {value.dtype}{list(value.shape)} but the memory plan "
                                 f"allocated {slot.dtype}{list(slot.shape)}")
        target = _view(arena, slot)
        np.copyto(target, value)  # numpy copies through a temporary when the two overlap
        env[t] = target
