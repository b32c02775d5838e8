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
from ge_core.dynamo.dynamo_events import DynamoEvents
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
            events = _EVENTS.read()
            stats.graph_breaks += events.graph_breaks
        trigger = ("Dynamo recompiled: " + "; ".join(events.guard_failures)) if events.guard_failures else "first call"
        return _GraphRunner(self, gm, index, trigger, _symbolic_dims(gm))


def torch_backend(config: CompileConfig | None = None, *, simulate: bool = False,
                  cache: CompileCache | None = None) -> TorchBackend:
    """A backend for torch.compile(model, backend=...): ge_core compiles each graph Dynamo captures."""
    return TorchBackend(config or CompileConfig(), simulate, cache)


_EVENTS = DynamoEvents()


class _GraphRunner:
    """One Dynamo graph: its compiled models by input shapes (one entry when compiled with symbolic dims)."""

    def __init__(self, backend: TorchBackend, gm: torch.fx.GraphModule, index: int, trigger: str,
                 symbolic: dict[int, dict[int, str]]) -> None:
        self.backend = backend
        self.gm = gm
        self.index = index
        self.trigger = trigger
        self.symbolic = symbolic  # tensor argument position -> {axis: Dynamo's symbol}
        self.compiled: dict[Shapes, _Compiled] = {}
        self.dynamic: _Compiled | None = None

    def __call__(self, *args: Any) -> Any:
        start = time.perf_counter()
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        shapes: Shapes = tuple(tuple(t.shape) for t in tensors)
        entry = self.dynamic or self.compiled.get(shapes)
        compiled_now = entry is None
        if entry is None:
            entry = self._compile(args, shapes)
        outputs, simulated = entry.run(tensors, self.backend.simulate)
        with LOCK:
            current_stats().calls.append(CallRecord(self.index, time.perf_counter() - start, compiled_now, simulated))
        return outputs

    def _compile(self, args: Sequence[Any], shapes: Shapes) -> _Compiled:
        start = time.perf_counter()
        trigger = self.trigger if not self.compiled else (
            f"new input shapes {_text(shapes)} (compiled before for {', '.join(_text(s) for s in self.compiled)})")
        entry, dynamic = None, False
        if self.symbolic and not self.compiled:
            entry = self._try_dynamic(args)
            dynamic = entry is not None
        if entry is None:
            entry = _Compiled.build(_Bound(self.gm, args), [a for a in args if isinstance(a, torch.Tensor)],
                                    None, self.backend, GRAPH_NAME)
        if dynamic:
            self.dynamic = entry
            shapes = tuple(tuple(self.symbolic.get(i, {}).get(a, d) for a, d in enumerate(s))
                           for i, s in enumerate(shapes))
        self.compiled[shapes] = entry
        event = CompileEvent(self.index, trigger, shapes, time.perf_counter() - start, entry.model.plan.kernels,
                             dynamic, bool(entry.model.cache and entry.model.cache.get("hit")))
        with LOCK:
            current_stats().compiles.append(event)
        return entry

    def _try_dynamic(self, args: Sequence[Any]) -> _Compiled | None:
        """Compile once with Dynamo's symbolic dims kept symbolic; None when export or GE cannot."""
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        dims = tuple({axis: torch.export.Dim.DYNAMIC for axis in self.symbolic.get(i, {})} or None
                     for i in range(len(tensors)))
        try:
            entry = _Compiled.build(_Bound(self.gm, args), tensors, (dims,), self.backend,
                                    GRAPH_NAME)
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
              backend: TorchBackend, name: str) -> _Compiled:
        program = capture(module, tensors, dynamic_shapes)
        graph = convert(program, name)
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


class _Bound(torch.nn.Module):
    """The Dynamo graph with only its tensors as arguments, so export sees tensors only: a SymInt argument
    (a size Dynamo passes along) is read from the tensor dim carrying the same symbol, other non-tensor
    arguments are bound to their values at the call that compiled."""

    def __init__(self, gm: torch.fx.GraphModule, args: Sequence[Any]) -> None:
        super().__init__()
        self.gm = gm
        sizes = _size_sources(gm)
        self.slots: list[tuple[str, Any]] = []
        for position, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                self.slots.append(("tensor", None))
            elif position in sizes:
                self.slots.append(("size", sizes[position]))
            else:
                self.slots.append(("value", a))

    def forward(self, *tensors: torch.Tensor) -> Any:
        given = iter(tensors)
        args = [next(given) if kind == "tensor" else tensors[ref[0]].shape[ref[1]] if kind == "size" else ref
                for kind, ref in self.slots]
        return self.gm(*args)


def _size_sources(gm: torch.fx.GraphModule) -> dict[int, tuple[int, int]]:
    """Argument position of a SymInt placeholder -> (tensor argument position, axis) that carries it."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    carriers: dict[str, tuple[int, int]] = {}
    tensor_position = 0
    for n in placeholders:
        value = n.meta.get("example_value")
        if isinstance(value, torch.Tensor):
            for axis, d in enumerate(value.shape):
                carriers.setdefault(str(d), (tensor_position, axis))
            tensor_position += 1
    sources = {}
    for position, n in enumerate(placeholders):
        value = n.meta.get("example_value")
        if isinstance(value, torch.SymInt) and str(value) in carriers:
            sources[position] = carriers[str(value)]
    return sources


def _symbolic_dims(gm: torch.fx.GraphModule) -> dict[int, dict[int, str]]:
    """Tensor argument position -> {axis: symbol} for the dims Dynamo traced symbolically."""
    found: dict[int, dict[int, str]] = {}
    position = 0
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        value = n.meta.get("example_value")
        if isinstance(value, torch.Tensor):
            axes = {axis: str(d) for axis, d in enumerate(value.shape) if not isinstance(d, int)}
            if axes:
                found[position] = axes
            position += 1
    return found


def _text(shapes: Shapes) -> str:
    return ", ".join("[" + ",".join(map(str, s)) + "]" for s in shapes)
