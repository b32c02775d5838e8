"""Fast paths: optional compiled kernels registered by op type, beside the op registry's reference kernels.

An OpDef's kernel is the reference: numpy and numpy's BLAS, correct for every input the op accepts. A
FastPath computes the same outputs faster for the inputs it takes and declines the others (returns None),
and the interpreter then calls the reference kernel. Which paths exist is decided once, when this package
loads: a path is taken only when numba is there, GE_NO_JIT is not set, the CPU has the features its
compiled code is written for, and GE_FAST_PATHS does not switch it off (`GE_FAST_PATHS=off` switches all of
them off; `GE_FAST_PATHS=-Conv.depthwise,-Softmax.rows` the ones named). `python -m ge_core kernels` lists
them, and bench/bench_kernels.py measures each against the reference kernel it replaces.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.kernels import cpu, jit
from ge_core.ops.registry import OpDef, OpRegistry

# (node, inputs) -> the node's outputs, or None when the path does not take these inputs.
FastFn = Callable[[Node, list[np.ndarray | None]], list[np.ndarray] | None]
SWITCH = "GE_FAST_PATHS"


@dataclass(frozen=True)
class FastPath:
    name: str  # "<op type>.<what>", e.g. "Conv.depthwise": what GE_FAST_PATHS and the benchmarks name
    op_type: str  # the ONNX op type (default domain) whose nodes it may run
    run: FastFn
    doc: str  # what it does differently from the reference kernel, in one line
    compiled: bool = True  # needs numba's compiled kernels (all of today's do)
    needs: tuple[str, ...] = ()  # CPU features (LLVM's names, e.g. "avx512f") its compiled code is written for


class BodyPlan(Protocol):
    """How a fused body runs as one kernel: its outputs, or None when it cannot on these values."""

    def run(self, body: Graph, args: Sequence[np.ndarray | None]) -> list[np.ndarray] | None: ...


@dataclass(frozen=True)
class BodyPath:
    """A fast path for fused nodes' bodies (which have no op type of their own): a planner that returns how it
    runs a body, or None for bodies it does not take."""

    name: str
    plan: Callable[[Graph, OpRegistry], BodyPlan | None]
    doc: str
    compiled: bool = True
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    """Whether a registered path is taken in this process, and why not when it is not."""

    path: FastPath | BodyPath
    taken: bool
    reason: str


class FastPaths:
    """The registered paths, by op type; `for_op` gives those taken in this process, in registration order."""

    def __init__(self) -> None:
        self._decisions: dict[str, Decision] = {}
        self._by_op: dict[str, tuple[FastPath, ...]] = {}
        self._bodies: tuple[BodyPath, ...] = ()

    def register_all(self, paths: Iterable[FastPath | BodyPath]) -> None:
        switch = os.environ.get(SWITCH, "")
        for path in paths:
            if path.name in self._decisions:
                raise ValueError(f"fast path {path.name} registered twice")
            decision = _decide(path, switch)
            self._decisions[path.name] = decision
            if not decision.taken:
                continue
            if isinstance(path, BodyPath):
                self._bodies = (*self._bodies, path)
            else:
                self._by_op[path.op_type] = (*self._by_op.get(path.op_type, ()), path)

    def plan_body(self, body: Graph, registry: OpRegistry) -> BodyPlan | None:
        """How the first body path taken that takes `body` runs it, or None."""
        for path in self._bodies:
            plan = path.plan(body, registry)
            if plan is not None:
                return plan
        return None

    def for_op(self, op_type: str) -> tuple[FastPath, ...]:
        return self._by_op.get(op_type, ())

    def call(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> list[np.ndarray]:
        """The node's outputs from the first path taken that takes these inputs, else its reference kernel."""
        if not op.domain:  # fast paths are registered for the default domain's ops
            for path in self._by_op.get(op.op_type, ()):
                outputs = path.run(node, args)
                if outputs is not None:
                    return outputs
        return op.kernel(node, args)

    def taken(self, name: str) -> bool:
        decision = self._decisions.get(name)
        return decision is not None and decision.taken

    def decisions(self) -> list[Decision]:
        return list(self._decisions.values())

    def __iter__(self) -> Iterator[FastPath | BodyPath]:
        return (d.path for d in self._decisions.values())


def _decide(path: FastPath | BodyPath, switch: str) -> Decision:
    names = {part.strip() for part in switch.split(",") if part.strip()}
    if switch.strip().lower() in ("off", "0", "none", "false"):
        return Decision(path, False, f"{SWITCH}={switch}")
    if f"-{path.name}" in names or f"-{path.name.partition('.')[0]}" in names:
        return Decision(path, False, f"switched off by {SWITCH}={switch}")
    if path.compiled and not jit.ENABLED:
        return Decision(path, False, "numba is not installed" if jit.numba is None else "GE_NO_JIT is set")
    missing = [f for f in path.needs if not cpu.has(f)]
    if missing:
        return Decision(path, False, f"the CPU lacks {', '.join(missing)}")
    return Decision(path, True, "taken")


FAST_PATHS = FastPaths()  # filled by ge_core/kernels/__init__.py, one family module at a time
