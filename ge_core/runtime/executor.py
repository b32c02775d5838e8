"""The CPU executor: runs a GE Graph node by node with the registry's numpy kernels.

It frees each activation right after its last use, times every node, and turns any failure inside a
kernel into an ExecutionError naming the node, its op and its input shapes. A graph with unknown dims
is specialised to the fed shapes first (shapes re-inferred, sizes checked) before anything runs.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ge_core.errors import ExecutionError, GEError, ModelError
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.ops import REGISTRY, infer_graph
from ge_core.ops.registry import OpDef, OpRegistry
from ge_core.runtime.feeds import check_feeds


@dataclass(frozen=True, slots=True)
class NodeTiming:
    node: str
    op_type: str
    seconds: float


@dataclass
class ExecutionResult:
    outputs: dict[str, np.ndarray]
    timings: list[NodeTiming] = field(default_factory=list)
    peak_live_bytes: int = 0  # activations alive at once (constants and feeds excluded)


@dataclass(frozen=True, slots=True)
class _Step:
    node: Node
    op: OpDef
    frees: tuple[str, ...]  # activations whose last use is this step
    descs: tuple[TensorDesc | None, ...]  # what inference promised for each output


class Executor:
    """Plans a graph once (kernel lookup, last uses) and runs it on many feeds."""

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY) -> None:
        self.graph = graph
        self.registry = registry
        self._dynamic = any(not graph.desc(t).is_static for t in graph.inputs)
        self._steps = _plan(graph, registry)
        self._specialised: dict[tuple[tuple[int, ...], ...], Executor] = {}

    def run(self, feeds: Mapping[str, object]) -> ExecutionResult:
        checked = check_feeds(self.graph, feeds)
        if self._dynamic:
            return self._for_shapes(checked).run(checked)
        return self._run(checked)

    def run_body(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Run a fused node's body: inputs were checked by the enclosing graph, so no feed checks here."""
        if self._dynamic or any(not self.graph.desc(t).is_static for t in self.graph.outputs):
            return self.run(feeds).outputs
        return self._run(feeds).outputs

    def _for_shapes(self, feeds: dict[str, np.ndarray]) -> Executor:
        key = tuple(feeds[t].shape for t in self.graph.inputs)
        if key not in self._specialised:
            graph = self.graph.copy()
            for t in graph.inputs:
                graph.set_desc(t, graph.desc(t).with_shape(feeds[t].shape))
            result = infer_graph(graph, self.registry)
            if result.problems:
                shapes = ", ".join(f"{t}:{list(feeds[t].shape)}" for t in graph.inputs)
                raise ModelError(f"graph '{graph.name}' cannot run with input shapes {shapes}:",
                                 problems=result.problems, hint="Feed shapes the model accepts.")
            if len(self._specialised) >= 8:  # keep a few recent shapes, like a small gear set
                self._specialised.pop(next(iter(self._specialised)))
            self._specialised[key] = Executor(graph, self.registry)
        return self._specialised[key]

    def _run(self, feeds: dict[str, np.ndarray]) -> ExecutionResult:
        env: dict[str, np.ndarray] = dict(self.graph.constants)
        env.update(feeds)
        timings: list[NodeTiming] = []
        live = peak = 0
        with np.errstate(all="ignore"):  # ONNX semantics give inf/nan where numpy would warn
            for step in self._steps:
                start = time.perf_counter()
                outputs = _run_step(step, env)
                timings.append(NodeTiming(step.node.name, step.node.op_type, time.perf_counter() - start))
                for t, value in zip(step.node.outputs, outputs, strict=False):
                    env[t] = value
                    live += value.nbytes
                peak = max(peak, live)
                for t in step.frees:
                    live -= env.pop(t).nbytes
        result = {t: _owned(env[t]) for t in self.graph.outputs}
        return ExecutionResult(result, timings, peak)


_BODY_EXECUTORS: weakref.WeakKeyDictionary[Graph, Executor] = weakref.WeakKeyDictionary()


def body_executor(body: Graph) -> Executor:
    """One planned executor per fused body (bodies are shared and never edited once built)."""
    executor = _BODY_EXECUTORS.get(body)
    if executor is None:
        executor = _BODY_EXECUTORS[body] = Executor(body)
    return executor


def execute(graph: Graph, feeds: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Run `graph` on the CPU; outputs keyed by graph output names."""
    return Executor(graph).run(feeds).outputs


def _plan(graph: Graph, registry: OpRegistry) -> list[_Step]:
    last_use: dict[str, int] = {}
    nodes = graph.nodes
    for i, node in enumerate(nodes):
        for t in node.inputs:
            if t:
                last_use[t] = i
        for t in node.outputs:
            last_use.setdefault(t, i)  # an output nobody reads is freed right away
    keep = set(graph.outputs) | set(graph.constants) | set(graph.inputs)
    frees: dict[int, list[str]] = {}
    for t, i in last_use.items():
        if t not in keep:
            frees.setdefault(i, []).append(t)
    return [_Step(n, registry.lookup(n), tuple(frees.get(i, ())), tuple(graph.descs.get(t) for t in n.outputs))
            for i, n in enumerate(nodes)]


def _run_step(step: _Step, env: dict[str, np.ndarray]) -> list[np.ndarray]:
    node = step.node
    args = [env[t] if t else None for t in node.inputs]
    try:
        outputs = step.op.kernel(node, args)
    except GEError:
        raise
    except Exception as exc:
        raise ExecutionError(node.name, node.op_type, [_shape(a) for a in args],
                             f"{type(exc).__name__}: {exc}") from exc
    if len(outputs) < len(node.outputs):
        raise ExecutionError(node.name, node.op_type, [_shape(a) for a in args],
                             f"the kernel returned {len(outputs)} outputs, the node declares {len(node.outputs)}")
    results = [np.asarray(v) for v in outputs[: len(node.outputs)]]
    _check_against_descs(step, results, args)
    return results


def _check_against_descs(step: _Step, results: list[np.ndarray], args: list[np.ndarray | None]) -> None:
    """A kernel must produce what inference promised: memory plans and later passes rely on the descs."""
    for t, value, desc in zip(step.node.outputs, results, step.descs, strict=True):
        dtype = "str" if value.dtype.kind in "OUS" else value.dtype.name
        same_dtype = desc is None or desc.dtype in (dtype, "bfloat16", "undefined")
        same_shape = desc is None or (value.ndim == desc.rank and all(
            d < 0 or d == v for d, v in zip(desc.shape, value.shape, strict=True)))
        if not (same_dtype and same_shape):
            raise ExecutionError(step.node.name, step.node.op_type, [_shape(a) for a in args],
                                 f"output '{t}' came out {dtype}{list(value.shape)} but shape inference "
                                 f"promised {desc.text() if desc else '?'} (a kernel/inference mismatch: "
                                 "please report it)")


def _shape(value: np.ndarray | None) -> tuple[int, ...] | None:
    return None if value is None else tuple(value.shape)


def _owned(value: np.ndarray) -> np.ndarray:
    """Outputs handed to the caller must be writable arrays of their own, not views into constants."""
    return value if value.flags.writeable and value.base is None else np.array(value)
