"""The interpreter: the one node loop every runtime in ge_core goes through (torch.fx's Interpreter is the model).

An Interpreter plans a graph once (each node's op, the activations whose last use it is, the descs inference
promised) and runs it on feeds: under np.errstate(all="ignore") (ONNX semantics give inf/nan where numpy
would warn), timing every node (a nested run — a fused body, a subgraph — is under its caller's errstate
and keeps no timings of its own: ~2 µs saved per body call), freeing each activation after its last use,
turning any failure inside a kernel into an ExecutionError naming the node, its op and its input shapes,
and checking every output against its desc (memory plans and later passes rely on the descs).

Users differ in a hook, overridden in a subclass:
- `call_kernel(node, op, args)`: what a kernel call computes (precision modes round to fp16 here);
- `store_outputs(node, values, env)`: where a node's outputs live (the arena copies them to planned bytes);
- `before_node(node, env)`: a look before a node runs (calibration sets a BatchNorm's statistics here).

A fused node (a body and no registered op of its own) is not a kernel call: the interpreter runs its body
with a body interpreter that forwards `call_kernel` to the enclosing one, so an override applies inside
bodies too. A body is planned once per body graph (bodies are shared and never edited once built); one
with unknown dims has its inputs checked and is specialised to their shapes, as Executor does for graphs.

A control-flow node (If, Loop, Scan: OpDef.run_subgraphs) is not a kernel call either: its op decides which
subgraph runs how often (ops/control_kernels.py), and each run interprets the subgraph with a subgraph
interpreter that forwards `call_kernel` the same way, the node's captured values visible by name. A
failure inside names the node, the subgraph and the iteration. Subgraphs run outside any memory plan: their
activations live in their own environment, and only the node's outputs are stored by `store_outputs`.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ge_core.errors import ExecutionError, GEError
from ge_core.ir.dtypes import name_of, numpy_dtype
from ge_core.ir.graph import Graph
from ge_core.ir.node import Node
from ge_core.ir.tensor import TensorDesc
from ge_core.kernels import FAST_PATHS
from ge_core.ops import REGISTRY
from ge_core.ops.registry import OpDef, OpRegistry
from ge_core.runtime.body_chain import plan_body_chain
from ge_core.runtime.feeds import check_feeds
from ge_core.runtime.specialise import Specialisations, is_dynamic

Env = dict[str, np.ndarray]  # tensor name -> value while a graph runs


class NodeTiming(NamedTuple):  # a tuple: made once per node per run, 2.5x cheaper than a frozen dataclass
    node: str
    op_type: str
    seconds: float


@dataclass
class ExecutionResult:
    outputs: dict[str, np.ndarray]
    timings: list[NodeTiming] = field(default_factory=list)
    peak_live_bytes: int = 0  # activations alive at once (constants and feeds excluded)


@dataclass(frozen=True, slots=True)
class Step:
    """One node as planned."""

    node: Node
    op: OpDef
    body: Graph | None  # a fused node's body: interpreted, never a kernel call
    frees: tuple[str, ...]  # activations whose last use is this step
    descs: tuple[TensorDesc | None, ...]  # what inference promised for each output
    dtypes: tuple[np.dtype | None, ...]  # each desc's dtype as numpy's, when it has one (a fast check)
    # A view op (OpDef.view: Reshape, Squeeze, Flatten...) whose output shape inference fixed from constant
    # operands: its result is input 0 reshaped to this, without the kernel's argument handling (5-9 us a
    # node on the CRNN's and BERT's reshapes, more than the rest of their work).
    view_shape: tuple[int, ...] | None = None


def plan_steps(graph: Graph, registry: OpRegistry = REGISTRY, order: Sequence[Node] | None = None, *,
               free: bool = True) -> tuple[Step, ...]:
    """Every node of `graph` (in `order`, default the graph's), its op looked up once; with `free`, each
    activation is freed after its last use."""
    nodes = graph.nodes if order is None else order
    frees = _last_uses(graph, nodes) if free else {}
    steps = []
    for i, node in enumerate(nodes):
        descs = tuple(graph.descs.get(t) for t in node.outputs)
        op = registry.lookup(node)
        steps.append(Step(node, op, node.body if registry.runs_body(node) else None,
                          tuple(frees.get(i, ())), descs, tuple(_numpy_dtype(d) for d in descs),
                          _view_shape(graph, node, op, descs)))
    return tuple(steps)


def _view_shape(graph: Graph, node: Node, op: OpDef, descs: tuple[TensorDesc | None, ...]) -> tuple[int, ...] | None:
    """The output shape of a view op fixed at planning: known dims, every operand after the data a constant."""
    if not op.view or len(descs) != 1 or descs[0] is None or not descs[0].is_static or not node.inputs \
            or not node.inputs[0] or node.body is not None:
        return None
    source = graph.descs.get(node.inputs[0])
    if source is None or source.dtype != descs[0].dtype or any(t and t not in graph.constants for t in node.inputs[1:]):
        return None
    return tuple(descs[0].shape)


class Interpreter:
    """Runs one planned graph on many feeds; subclasses override the hooks (see the module's docstring)."""

    copies_outputs = True  # outputs never alias constants or feeds (a subgraph's may: its caller copies)
    nested = False  # runs inside a node of another interpreter: under its errstate, no timings kept

    def __init__(self, graph: Graph, registry: OpRegistry = REGISTRY, steps: Sequence[Step] | None = None) -> None:
        self.graph = graph
        self.registry = registry
        self.steps = tuple(steps) if steps is not None else plan_steps(graph, registry)
        self.subgraph_plans: dict[int, tuple[Graph, tuple[Step, ...]]] = {}  # id(subgraph) -> its plan
        self.body_interpreters: dict[int, _BodyInterpreter] = {}  # id(body) -> the interpreter running it
        self.borrowed = frozenset(graph.constants) | frozenset(graph.inputs) | frozenset(graph.captures)
        # Kernels run as registered (no subclass overrides call_kernel): fused bodies may take fast paths.
        self.registered_kernels = type(self).call_kernel is Interpreter.call_kernel

    def run(self, feeds: Mapping[str, np.ndarray]) -> ExecutionResult:
        """Run on feeds already checked against the graph's inputs (Executor.run checks them)."""
        env: Env = dict(self.graph.constants)
        env.update(feeds)
        if self.nested:
            self._run_untimed(env)
            return self._result(env, [], 0)
        with np.errstate(all="ignore"):  # ONNX semantics give inf/nan where numpy would warn
            timings, peak = self._run_timed(env)
        return self._result(env, timings, peak)

    def _run_timed(self, env: Env) -> tuple[list[NodeTiming], int]:
        """Every step, timed, freeing activations after their last use; the timings and the peak live bytes."""
        timings: list[NodeTiming] = []
        live = peak = 0
        clock, before, run_node, store = time.perf_counter, self.before_node, self.run_node, self.store_outputs
        for step in self.steps:
            node = step.node
            before(node, env)
            start = clock()
            values = run_node(step, env)
            store(node, values, env)
            timings.append(NodeTiming(node.name, node.op_type, clock() - start))
            for value in values:
                live += value.nbytes
            peak = max(peak, live)
            for t in step.frees:
                live -= env.pop(t).nbytes
        return timings, peak

    def _run_untimed(self, env: Env) -> None:
        before, run_node, store = self.before_node, self.run_node, self.store_outputs
        for step in self.steps:
            before(step.node, env)
            store(step.node, run_node(step, env), env)
            for t in step.frees:
                del env[t]

    def _result(self, env: Env, timings: list[NodeTiming], peak: int) -> ExecutionResult:
        if not self.copies_outputs:
            return ExecutionResult({t: env[t] for t in self.graph.outputs}, timings, peak)
        outputs = {t: _owned(env[t], t in self.borrowed) for t in self.graph.outputs}
        return ExecutionResult(outputs, timings, peak)

    def run_node(self, step: Step, env: Env) -> list[np.ndarray]:
        """One node's outputs: its body interpreted, or its kernel called, then checked against its descs."""
        node = step.node
        if step.view_shape is not None and self.registered_kernels:
            data = env[node.inputs[0]]
            if isinstance(data, np.ndarray):  # not a sequence or optional (Identity passes those too)
                return [data.reshape(step.view_shape)]
        args = [env[t] if t else None for t in node.inputs]
        try:
            if step.op.run_subgraphs is not None:
                outputs = self.run_control(step, args)
            elif step.body is not None:
                outputs = self.run_body(step.body, args)
            else:
                outputs = self.call_kernel(node, step.op, args)
        except GEError:
            raise
        except Exception as exc:
            raise ExecutionError(node.name, node.op_type, _shapes(args), f"{type(exc).__name__}: {exc}") from exc
        if len(outputs) < len(node.outputs):
            raise ExecutionError(node.name, node.op_type, _shapes(args),
                                 f"the kernel returned {len(outputs)} outputs, the node declares {len(node.outputs)}")
        values = [np.asarray(v) for v in outputs[: len(node.outputs)]]
        _check_against_descs(step, values, args)
        return values

    # ---- hooks -----------------------------------------------------------------------------------
    def before_node(self, node: Node, env: Env) -> None:
        """Called before `node` reads its inputs from `env`; may replace values in it."""

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        """What running `node`'s kernel on `args` gives (fused nodes' body nodes come here too): a fast path
        where one takes these inputs (ge_core/kernels), else the op's reference kernel."""
        return FAST_PATHS.call(node, op, args)

    def store_outputs(self, node: Node, values: list[np.ndarray], env: Env) -> None:
        """Make `node`'s outputs visible to later nodes."""
        for t, value in zip(node.outputs, values, strict=False):
            env[t] = value

    # ---- fused bodies ----------------------------------------------------------------------------
    def run_body(self, body: Graph, args: list[np.ndarray | None]) -> list[np.ndarray]:
        """A fused node's outputs: its body interpreted with this interpreter's kernel calls (a Conv, MatMul
        or BatchNormalization body as one kernel and one compiled epilogue pass, a squeeze-and-excitation
        tail as its gate's plan and one multiply, any other body of plain ops as a list of kernel calls,
        when kernels are called as registered: kernels/body_epilogue.py, kernels/body_gate.py, body_chain.py)."""
        plans = _body_plans(body, self.registry)
        if plans.fast_path is not None and self.registered_kernels:
            fused = plans.fast_path.run(body, args)
            if fused is not None:
                return fused
        feeds = dict(zip(body.inputs, [x for x in args if x is not None], strict=True))  # all present
        graph, steps, feeds = plans.for_feeds(body, feeds)
        outputs = self._body_interpreter(graph, steps).run(feeds).outputs
        return [outputs[t] for t in body.outputs]

    def _body_interpreter(self, body: Graph, steps: tuple[Step, ...]) -> _BodyInterpreter:
        """The interpreter of one body plan, made on its first run and kept (a fused node runs its body on
        every run: making one each time cost ~5 us a fused node, 10% of a small BERT run)."""
        known = self.body_interpreters.get(id(body))
        if known is None or known.graph is not body or known.steps is not steps:
            known = self.body_interpreters[id(body)] = _BodyInterpreter(self, body, steps)
        return known


    # ---- control flow --------------------------------------------------------------------------
    def run_control(self, step: Step, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        """A control-flow node's outputs: its op runs its subgraphs through `run_subgraph`."""
        node, run_subgraphs = step.node, step.op.run_subgraphs
        assert run_subgraphs is not None
        explicit = len(node.inputs) - node.num_captures
        captured = {t: v for t, v in zip(node.captures, args[explicit:], strict=True) if v is not None}

        def run(attr: str, formal: list[np.ndarray], where: str) -> list[np.ndarray]:
            return self.run_subgraph(node, attr, formal, captured, where)

        return run_subgraphs(node, args[:explicit], run, step.descs)

    def run_subgraph(self, node: Node, attr: str, formal: Sequence[np.ndarray], captured: Mapping[str, np.ndarray],
                     where: str) -> list[np.ndarray]:
        """One run of subgraph `attr` of `node` on its formal inputs, the captured values visible."""
        sub = node.subgraphs[attr]
        context = f"in {attr}" + (f", {where}" if where else "")
        if len(formal) != len(sub.inputs):
            raise ExecutionError(node.name, node.op_type, _shapes(list(formal)), f"{context}: {len(formal)} values "
                                 f"for the subgraph's {len(sub.inputs)} inputs")
        feeds = dict(zip(sub.inputs, formal, strict=True))
        feeds.update((t, captured[t]) for t in sub.captures)
        try:
            result = _SubgraphInterpreter(self, sub, self._subgraph_steps(sub)).run(feeds)
        except GEError as err:
            raise ExecutionError(node.name, node.op_type, _shapes(list(formal)), f"{context}: {err.message}") from err
        return [result.outputs[t] for t in sub.outputs]

    def _subgraph_steps(self, sub: Graph) -> tuple[Step, ...]:
        """A subgraph's plan, made on its first run by this interpreter (subgraphs may be edited between
        compiles, so plans are not kept beyond the interpreter that made them)."""
        known = self.subgraph_plans.get(id(sub))
        if known is None or known[0] is not sub:
            known = self.subgraph_plans[id(sub)] = (sub, plan_steps(sub, self.registry))
        return known[1]


class _SubgraphInterpreter(Interpreter):
    """A control-flow subgraph run inside `parent`: the parent's kernel calls and subgraph plans."""

    copies_outputs = False
    nested = True

    def __init__(self, parent: Interpreter, sub: Graph, steps: Sequence[Step]) -> None:
        super().__init__(sub, parent.registry, steps)
        self.parent = parent
        self.subgraph_plans = parent.subgraph_plans
        self.registered_kernels = parent.registered_kernels

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        return self.parent.call_kernel(node, op, args)


class _BodyInterpreter(Interpreter):
    """A fused body run inside `parent`: the parent's kernel calls (storage and looks are the parent's own)."""

    nested = True

    def __init__(self, parent: Interpreter, body: Graph, steps: Sequence[Step]) -> None:
        super().__init__(body, parent.registry, steps)
        self.parent = parent
        self.registered_kernels = parent.registered_kernels

    def call_kernel(self, node: Node, op: OpDef, args: list[np.ndarray | None]) -> Sequence[np.ndarray]:
        return self.parent.call_kernel(node, op, args)


class _BodyPlans:
    """A fused body's plan, made once: one when its dims are known, else one per recent fed shapes."""

    def __init__(self, body: Graph, registry: OpRegistry) -> None:
        self.registry = registry
        self.unknown_dims = any(not body.desc(t).is_static for t in (*body.inputs, *body.outputs))
        self.dynamic = is_dynamic(body)
        self.steps = () if self.dynamic else plan_steps(body, registry)
        # The first fast path that fits (only with known dims): a compiled one (kernels/: a head and its
        # epilogue pass, a gate), or a plain kernel list.
        self.fast_path = None if self.unknown_dims else \
            FAST_PATHS.plan_body(body, registry) or plan_body_chain(body, registry, _owned)
        self.shapes: Specialisations[tuple[Graph, tuple[Step, ...]]] = Specialisations(registry)

    def for_feeds(self, body: Graph, feeds: dict[str, np.ndarray]) -> tuple[Graph, tuple[Step, ...], Env]:
        if not self.unknown_dims:  # checked by the enclosing graph: nothing to check again
            return body, self.steps, feeds
        feeds = check_feeds(body, feeds)  # unknown dims: the body's inputs are checked as a graph's are
        if not self.dynamic:
            return body, self.steps, feeds
        graph, steps = self.shapes.get(body, feeds, lambda fixed: (fixed, plan_steps(fixed, self.registry)))
        return graph, steps, feeds


_BODIES: weakref.WeakKeyDictionary[Graph, _BodyPlans] = weakref.WeakKeyDictionary()


def _body_plans(body: Graph, registry: OpRegistry) -> _BodyPlans:
    plans = _BODIES.get(body)
    if plans is None or plans.registry is not registry:
        plans = _BODIES[body] = _BodyPlans(body, registry)
    return plans


def _last_uses(graph: Graph, nodes: Sequence[Node]) -> dict[int, list[str]]:
    """Step index -> activations nobody reads after it (graph inputs, constants and outputs are kept)."""
    last_use: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for t in node.inputs:
            if t:
                last_use[t] = i
        for t in node.outputs:
            last_use.setdefault(t, i)  # an output nobody reads is freed right away
    keep = set(graph.outputs) | set(graph.constants) | set(graph.inputs) | set(graph.captures)
    frees: dict[int, list[str]] = {}
    for t, i in last_use.items():
        if t not in keep:
            frees.setdefault(i, []).append(t)
    return frees


def _check_against_descs(step: Step, values: list[np.ndarray], args: list[np.ndarray | None]) -> None:
    """A kernel must produce what inference promised: memory plans and later passes rely on the descs."""
    for t, value, desc, want in zip(step.node.outputs, values, step.descs, step.dtypes, strict=True):
        if desc is None or (value.shape == desc.shape and value.dtype == want):
            continue  # the common case, decided without Python-level dtype names
        dtype = name_of(value.dtype)
        same_dtype = desc.dtype in (dtype, "undefined")
        same_shape = value.ndim == desc.rank and all(
            d < 0 or d == v for d, v in zip(desc.shape, value.shape, strict=True))
        if not (same_dtype and same_shape):
            raise ExecutionError(step.node.name, step.node.op_type, _shapes(args),
                                 f"output '{t}' came out {dtype}{list(value.shape)} but shape inference "
                                 f"promised {desc.text()} (a kernel/inference mismatch: please report it)")


def _numpy_dtype(desc: TensorDesc | None) -> np.dtype | None:
    """numpy's (or ml_dtypes') dtype of the desc's (None when there is none: str, undefined)."""
    return None if desc is None else numpy_dtype(desc.dtype)


def _shapes(values: Sequence[np.ndarray | None]) -> list[tuple[int, ...] | None]:
    return [None if v is None else tuple(v.shape) for v in values]


def _owned(value: np.ndarray, borrowed: bool) -> np.ndarray:
    """Outputs handed to the caller are writable arrays of their own, never views into (or the arrays of)
    the graph's constants or the caller's feeds."""
    return value if value.flags.writeable and value.base is None and not borrowed else np.array(value)
