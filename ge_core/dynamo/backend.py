"""`ge_core.torch_backend()`: a torch.compile backend that runs each Dynamo graph through ge_core.

    model = torch.compile(model, backend=ge_core.torch_backend())

Dynamo hands over one FX graph per captured region (a graph break starts a new one); the backend returns a
callable that, on a call with input shapes it has not compiled yet, exports the graph with those inputs
(the same capture and ATen table as `from_torch`), compiles it with ge_core.compile (the CompileConfig,
the compile cache when given) and then runs it on the CPU executor, or on the NPU simulator, which reports
the simulated latency of every call. When Dynamo hands over a graph with symbolic dims (its automatic
dynamic shapes after a size change), the backend compiles it once with those dims symbolic and runs every
size with it; a graph that cannot stay symbolic compiles once per shape instead. Inference only: the
outputs carry no autograd history. Everything seen is recorded in stats.py (`ge_core.torch_stats()`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch.utils import _pytree as pytree

from ge_core.compiler import CompiledModel, compile
from ge_core.config import CompileConfig
from ge_core.dynamo.dynamo_events import EVENTS, merge
from ge_core.dynamo.stats import LOCK, CallRecord, CompileEvent, current_stats
from ge_core.errors import GEError
from ge_core.frontend.torch.capture import capture
from ge_core.frontend.torch.convert import convert
from ge_core.offline.cache import CompileCache
from ge_core.sim import simulate

Shapes = tuple[tuple[int | str, ...], ...]
GRAPH_NAME = "torch_compile_graph"  # one name for every graph: the compile cache keys on content alone


@dataclass(frozen=True)
class TorchBackend:
    """The backend object torch.compile calls with (graph module, example inputs)."""

    config: CompileConfig
    simulate: bool = False  # run on the NPU simulator (config.hardware, else the default profile)
    cache: CompileCache | None = None

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        with LOCK:
            stats = current_stats()
            index = stats.graphs
            stats.graphs += 1
            events = EVENTS.read()
        merge(events, stats)
        trigger = ("Dynamo recompiled: " + "; ".join(events.guard_failures)) if events.guard_failures else "first call"
        return _GraphRunner(self, gm, index, trigger)


def torch_backend(config: CompileConfig | None = None, *, simulate: bool = False,
                  cache: CompileCache | None = None) -> TorchBackend:
    """A backend for torch.compile(model, backend=...): ge_core compiles each graph Dynamo captures."""
    return TorchBackend(config or CompileConfig(), simulate, cache)


class _GraphRunner:
    """One Dynamo graph: its compiled models by input shapes (one entry when compiled with symbolic dims)."""

    def __init__(self, backend: TorchBackend, gm: torch.fx.GraphModule, index: int, trigger: str) -> None:
        self.backend = backend
        self.gm = gm
        self.index = index
        self.trigger = trigger
        self.slots = _slots(gm)
        self.inputs = [i for i, slot in enumerate(self.slots) if slot.kind == "input"]
        self.symbolic = _symbolic_dims(gm, self.inputs)  # input number -> {axis: Dynamo's symbol}
        self.compiled: dict[Shapes, _Compiled] = {}
        self.dynamic: _Compiled | None = None
        self.weights_seen: list[tuple[int, int]] = []  # (id, version) of each weight when compiled
        self.eager = False  # set when the graph could not be taken: it then runs as Dynamo captured it

    def __call__(self, *args: Any) -> Any:
        start = time.perf_counter()
        inputs = [args[i] for i in self.inputs]
        shapes: Shapes = tuple(tuple(t.shape) for t in inputs)
        trigger = self._weights_changed(args)
        entry = None if trigger or self.eager else self.dynamic or self.compiled.get(shapes)
        compiled_now = entry is None and not self.eager
        if compiled_now:
            entry = self._compile_or_fall_back(args, shapes, trigger)
        if entry is None:  # eager: PyTorch runs the graph, the model never breaks for a graph we cannot take
            outputs, simulated = self.gm(*args), None
        else:
            outputs, simulated = entry.run(inputs, self.backend.simulate)
        with LOCK:
            current_stats().calls.append(CallRecord(self.index, time.perf_counter() - start, compiled_now, simulated))
        return outputs

    def _compile_or_fall_back(self, args: Sequence[Any], shapes: Shapes, trigger: str) -> _Compiled | None:
        """The compiled graph, or None after recording why it could not be taken (torch.export refusing it,
        an operator GE has no row for ...): the graph then runs eagerly, as TorchAir falls back."""
        try:
            return self._compile(args, shapes, trigger)
        except Exception as exc:  # whatever refuses the graph (export, conversion, GE), the model must still run
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            reason = f"graph {self.index} ({_text(shapes)}) runs eagerly: {type(exc).__name__}: {first}"
            self.eager = True
            with LOCK:
                current_stats().fallbacks.append(reason)
            return None

    def _weights_changed(self, args: Sequence[Any]) -> str:
        """Weights are constants of the compiled graph (TorchAir's frozen parameters): one replaced or
        changed in place since the compile means compiling again."""
        seen = [(id(args[i]), args[i]._version) for i, slot in enumerate(self.slots) if slot.kind == "weight"]
        if not self.compiled or seen == self.weights_seen:
            return ""
        self.compiled, self.dynamic = {}, None
        return "a weight changed since the last compile (weights are constants of the compiled graph)"

    def _compile(self, args: Sequence[Any], shapes: Shapes, trigger: str) -> _Compiled:
        start = time.perf_counter()
        if not trigger:
            trigger = self.trigger if not self.compiled else (
                f"new input shapes {_text(shapes)} (compiled before for {', '.join(map(_text, self.compiled))})")
        module = _Bound(self.gm, self.slots, args)
        inputs = [args[i] for i in self.inputs]
        entry = self._try_dynamic(module, inputs) if self.symbolic and not self.compiled else None
        dynamic = entry is not None
        if entry is None:
            entry = _Compiled.build(module, inputs, None, self.backend)
        if dynamic:
            self.dynamic = entry
            shapes = tuple(tuple(self.symbolic.get(i, {}).get(a, d) for a, d in enumerate(s))
                           for i, s in enumerate(shapes))
        self.compiled[shapes] = entry
        self.weights_seen = [(id(args[i]), args[i]._version) for i, s in enumerate(self.slots) if s.kind == "weight"]
        event = CompileEvent(self.index, trigger, shapes, time.perf_counter() - start, entry.model.plan.kernels,
                             dynamic, bool(entry.model.cache and entry.model.cache.get("hit")))
        with LOCK:
            current_stats().compiles.append(event)
        return entry

    def _try_dynamic(self, module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> _Compiled | None:
        """Compile once with Dynamo's symbolic dims kept symbolic; None when export or GE cannot."""
        dims = tuple({axis: torch.export.Dim.DYNAMIC for axis in self.symbolic.get(i, {})} or None
                     for i in range(len(inputs)))
        try:
            entry = _Compiled.build(module, inputs, (dims,), self.backend)
        except (GEError, RuntimeError, ValueError):
            return None  # e.g. a reshape GE cannot keep symbolic: compile per shape instead
        graph = entry.model.input_graph
        kept = all(graph.desc(graph.inputs[i]).shape[axis] == -1 for i, axes in self.symbolic.items() for axis in axes)
        return entry if kept else None  # torch.export specialized a dim: not a dynamic compile


@dataclass
class _Compiled:
    model: CompiledModel
    out_spec: Any  # the pytree spec of the graph's outputs (Dynamo's graphs return a tuple)

    @classmethod
    def build(cls, module: torch.nn.Module, tensors: Sequence[torch.Tensor], dynamic_shapes: Any,
              backend: TorchBackend) -> _Compiled:
        program = capture(module, tensors, dynamic_shapes)
        graph = convert(program, GRAPH_NAME)
        return cls(compile(graph, backend.config, cache=backend.cache), program.call_spec.out_spec)

    def run(self, tensors: Sequence[torch.Tensor], on_npu: bool) -> tuple[Any, float | None]:
        feeds = {name: t.detach().cpu().numpy() for name, t in zip(self.model.graph.inputs, tensors, strict=True)}
        simulated = None
        if on_npu:
            result = simulate(self.model, feeds=feeds)
            outputs, simulated = result.outputs, result.total_us
        else:
            outputs = self.model.run(feeds)
        results = [torch.from_numpy(np.ascontiguousarray(outputs[name])) for name in self.model.graph.outputs]
        return pytree.tree_unflatten(results, self.out_spec), simulated


@dataclass(frozen=True)
class _Slot:
    """What one argument of the Dynamo graph is: an input fed at every call, a weight (a parameter or
    buffer Dynamo passes as an argument: a constant of the compiled graph), a size read from an input's
    dim (a SymInt: (input number, axis)), or another value bound at compile."""

    kind: str  # "input", "weight", "size" or "value"
    source: tuple[int, int] | None = None


class _Bound(torch.nn.Module):
    """The Dynamo graph with the inputs as its only arguments, so export sees activations only and lifts
    the weights as buffers (constants of the GE graph, which GE folds: BatchNorm into the convolution)."""

    def __init__(self, gm: torch.fx.GraphModule, slots: Sequence[_Slot], args: Sequence[Any]) -> None:
        super().__init__()
        self.gm = gm
        self.slots = list(slots)
        self.values = {i: a for i, (slot, a) in enumerate(zip(slots, args, strict=True)) if slot.kind == "value"}
        for i, (slot, a) in enumerate(zip(slots, args, strict=True)):
            if slot.kind == "weight":
                self.register_buffer(f"weight_{i}", a.detach())

    def forward(self, *inputs: torch.Tensor) -> Any:
        given = iter(inputs)
        args: list[Any] = []
        for i, slot in enumerate(self.slots):
            if slot.kind == "input":
                args.append(next(given))
            elif slot.kind == "weight":
                args.append(getattr(self, f"weight_{i}"))
            elif slot.kind == "size" and slot.source is not None:
                args.append(inputs[slot.source[0]].shape[slot.source[1]])
            else:
                args.append(self.values[i])
        return self.gm(*args)


def _slots(gm: torch.fx.GraphModule) -> list[_Slot]:
    """One slot per placeholder of the Dynamo graph (Dynamo names weights `..._parameters_...`/`_buffers_`)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    carriers: dict[str, tuple[int, int]] = {}  # symbol -> (input number, axis) of the first dim holding it
    slots: list[_Slot] = []
    for n in placeholders:
        value = n.meta.get("example_value")
        if isinstance(value, torch.Tensor) and ("_parameters_" in n.name or "_buffers_" in n.name):
            slots.append(_Slot("weight"))
        elif isinstance(value, torch.Tensor):
            number = sum(s.kind == "input" for s in slots)
            for axis, d in enumerate(value.shape):
                carriers.setdefault(str(d), (number, axis))
            slots.append(_Slot("input"))
        else:
            slots.append(_Slot("value"))
    for i, n in enumerate(placeholders):
        value = n.meta.get("example_value")
        if isinstance(value, torch.SymInt) and str(value) in carriers:
            slots[i] = _Slot("size", carriers[str(value)])
    return slots


def _symbolic_dims(gm: torch.fx.GraphModule, inputs: Sequence[int]) -> dict[int, dict[int, str]]:
    """Input number -> {axis: symbol} for the dims Dynamo traced symbolically."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    found: dict[int, dict[int, str]] = {}
    for number, position in enumerate(inputs):
        value = placeholders[position].meta.get("example_value")
        axes = {axis: str(d) for axis, d in enumerate(value.shape) if not isinstance(d, int)}
        if axes:
            found[number] = axes
    return found


def _text(shapes: Shapes) -> str:
    return ", ".join("[" + ",".join(map(str, s)) + "]" for s in shapes)
