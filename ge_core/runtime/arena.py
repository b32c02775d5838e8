"""The arena executor: runs a graph with every activation living at its planned offset in ONE byte arena.

The CPU Executor lets numpy allocate each activation; this one takes a MemoryPlan (ge_core.memory) at its
word. It preallocates `np.empty(plan.arena_bytes, np.uint8)` and gives every tensor a step produces a view
`arena[offset:offset + nbytes].view(dtype).reshape(shape)`. Each kernel reads its inputs from those views
and its outputs are copied into theirs (an in-place output's view is its input's: the kernel has already
read the input when the copy happens). View ops (OpDef.view: Reshape, Squeeze...) that the plan aliases
to their base launch nothing: their tensor is just the base's bytes under another shape. Nor do no-copy
Concats (PlanStep.no_task): their inputs were written at their slices of the output, which is just read.

So a wrong plan — two live tensors sharing bytes — gives wrong numbers here instead of passing silently.
Sub-byte tensors (int4, int2, float4...) are held packed, as the plan sizes them (ge_core/ir/dtypes.py):
their outputs are packed into the slot, and every read (a consumer's input, a graph output) unpacks the
slot's bytes again, so those too come from the arena. Tensors the arena cannot hold (strings) or the plan
leaves out live outside it.
It runs through the interpreter (kernel calls, error wrapping, desc checks, fused bodies): only where
outputs are stored, and which nodes launch nothing, are its own.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ge_core.errors import ExecutionError, ModelError
from ge_core.ir.dtypes import dtype_bits, numpy_dtype, pack, packed_nbytes, unpack
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ops import REGISTRY
from ge_core.ops.registry import OpRegistry
from ge_core.runtime.feeds import check_feeds
from ge_core.runtime.interpreter import Env, ExecutionResult, Interpreter, Step, plan_steps
from ge_core.runtime.specialise import is_dynamic


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
    packed: bool = False  # a sub-byte dtype, held packed (read through unpack, not a view)


class ArenaExecutor:
    """Runs `graph` with the activations laid out as `plan` says; same results type as Executor."""

    def __init__(self, graph: Graph, plan: MemoryPlanLike, registry: OpRegistry = REGISTRY) -> None:
        if is_dynamic(graph):
            raise ModelError(f"graph '{graph.name}' has unknown input dims: a memory plan needs static shapes.",
                             hint="Compile with input_shapes (ATC's --input_shape) to fix them.")
        self.graph = graph
        self.plan = plan
        self.registry = registry
        self.slots = _slots(plan)
        self.off_arena = sorted({t for s in plan.steps for t in s.outputs if t and t not in self.slots})
        # in the plan's order; nothing to free: the plan says when an activation's bytes are reused
        self.steps = plan_steps(graph, registry, [graph.node(s.node) for s in plan.steps], free=False)
        self.zero_copy = {step.node: slot for step, s in zip(self.steps, plan.steps, strict=True)
                          if (slot := _zero_copy_slot(step, plan, self.slots, s.no_task)) is not None}
        self.packed = {t for t, slot in self.slots.items() if slot.packed}

    def run(self, feeds: Mapping[str, object]) -> ExecutionResult:
        checked = check_feeds(self.graph, feeds)
        arena = np.empty(self.plan.arena_bytes, np.uint8)
        result = _ArenaRun(self, arena).run(checked)
        for t in self.packed & set(result.outputs):  # read back from the arena, as unpacked outputs
            result.outputs[t] = _view(arena, self.slots[t])
        result.peak_live_bytes = self.plan.arena_bytes
        return result


class _ArenaRun(Interpreter):
    """One run of an ArenaExecutor: the interpreter, with every output stored at its planned bytes."""

    def __init__(self, layout: ArenaExecutor, arena: np.ndarray) -> None:
        super().__init__(layout.graph, layout.registry, layout.steps)
        self.layout = layout
        self.arena = arena

    def run_node(self, step: Step, env: Env) -> list[np.ndarray]:
        slot = self.layout.zero_copy.get(step.node)
        if slot is not None:  # launches nothing: the tensor is bytes already written, under its own shape
            return [_view(self.arena, slot)]
        for t in self.layout.packed.intersection(step.node.inputs):  # packed inputs: read from their bytes
            env[t] = _view(self.arena, self.layout.slots[t])
        return super().run_node(step, env)  # ExecutionError naming node, op and input shapes on failure

    def store_outputs(self, node: Node, values: list[np.ndarray], env: Env) -> None:
        if node in self.layout.zero_copy:
            env[next(t for t in node.outputs if t)] = values[0]
            return
        for t, value in zip(node.outputs, values, strict=False):
            slot = self.layout.slots.get(t) if t else None
            if slot is None:
                if t:
                    env[t] = value  # a tensor the arena cannot hold lives outside it
                continue
            if value.shape != slot.shape or value.dtype != slot.dtype:
                raise ExecutionError(node.name, node.op_type, [_shape(env.get(i)) if i else None for i in node.inputs],
                                     f"output '{t}' came out {value.dtype}{list(value.shape)} but the memory plan "
                                     f"allocated {slot.dtype}{list(slot.shape)}")
            if slot.packed:
                self.arena[slot.offset: slot.offset + slot.nbytes] = pack(value)
                env[t] = _view(self.arena, slot)
                continue
            target = _view(self.arena, slot)
            np.copyto(target, value)  # numpy copies through a temporary when the two overlap
            env[t] = target


def _slots(plan: MemoryPlanLike) -> dict[str, _Slot]:
    """Every allocation the arena can hold (all but strings), checked to fit inside it."""
    slots: dict[str, _Slot] = {}
    for tensor, alloc in plan.allocations.items():
        dtype = numpy_dtype(alloc.dtype)
        if dtype is None:
            continue
        shape = tuple(int(d) for d in alloc.shape)
        nbytes = packed_nbytes(math.prod(shape), alloc.dtype)
        too_big = nbytes > alloc.size and tensor not in plan.aliases  # a view may record no size of its own
        if alloc.offset < 0 or alloc.offset + nbytes > plan.arena_bytes or too_big:
            raise ModelError(f"memory plan: tensor '{tensor}' ({nbytes} bytes at offset {alloc.offset}, "
                             f"size {alloc.size}) does not fit its slot or the {plan.arena_bytes}-byte arena.")
        slots[tensor] = _Slot(alloc.offset, nbytes, shape, dtype, dtype_bits(alloc.dtype) < 8)
    return slots


def _zero_copy_slot(step: Step, plan: MemoryPlanLike, slots: Mapping[str, _Slot], no_task: bool) -> _Slot | None:
    """The slot of a node that launches nothing: a view the plan aliases to its base, or a no-copy Concat
    whose inputs were written at their slices of its output."""
    outputs = [t for t in step.node.outputs if t]
    if len(outputs) != 1 or outputs[0] not in slots:
        return None
    aliased = step.op.view and plan.aliases.get(outputs[0]) in slots
    if aliased or (no_task and all(t in slots for t in step.node.inputs)):
        return slots[outputs[0]]
    return None


def _view(arena: np.ndarray, slot: _Slot) -> np.ndarray:
    """The tensor in its slot: a view of the bytes, or for a packed slot its bytes unpacked (a copy)."""
    data = arena[slot.offset: slot.offset + slot.nbytes]
    if slot.packed:
        return unpack(data, slot.dtype.name, slot.shape)
    return data.view(slot.dtype).reshape(slot.shape)


def _shape(value: np.ndarray | None) -> tuple[int, ...] | None:
    return None if value is None else tuple(value.shape)
